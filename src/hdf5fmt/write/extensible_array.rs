//! Extensible array chunk index writer (HDF5 File Format Specification III.H,
//! "Extensible Array": header "EAHD", index block "EAIB", super blocks "EASB",
//! data blocks "EADB"), used for chunked datasets with exactly one unlimited
//! dimension. Geometry follows libhdf5's: super block `s` holds 2^(s/2) data
//! blocks of 2^((s+1)/2) x min-elements entries; the first 2·log2(min pointers)
//! super blocks' data blocks hang off the index block directly. Page bits are
//! chosen so that no data block is paged.

use super::sink::Sink;
use crate::checksum::metadata_checksum;
use crate::chunk_index::extensible_array::{self as ea, SuperInfo};
use crate::chunk_index::ChunkIndexKind;
use crate::encode::{log2_floor, UNDEF};
use crate::error::{Error, Result};
use crate::signature;

const MAX_BITS: u8 = 32;
const IDX_BLK_ELMTS: u64 = 4;
const SUP_BLK_MIN_PTRS: u64 = 4;
const DATA_BLK_MIN_ELMTS: u64 = 16;
const HEADER_SIZE: u64 = 72;
const ARR_OFF_SIZE: usize = (MAX_BITS as usize).div_ceil(8);

fn super_blocks() -> Vec<SuperInfo> {
    ea::super_blocks(MAX_BITS, DATA_BLK_MIN_ELMTS)
}

/// Which super block holds array index `idx` (at or past the index block elements).
fn sblk_of(idx: u64) -> usize {
    ea::super_block_of(idx - IDX_BLK_ELMTS, DATA_BLK_MIN_ELMTS)
}

/// Write an extensible array whose element `i` is `entries[i]` (encoded, `entry`
/// bytes each; missing = undefined). Returns the header address and layout info.
pub fn write(
    sink: &mut Sink,
    entries: &std::collections::BTreeMap<u64, Vec<u8>>,
    entry: usize,
    filtered: bool,
) -> Result<(u64, ChunkIndexKind)> {
    let info = super_blocks();
    let iblock_nsblks = ea::index_block_super_blocks(SUP_BLK_MIN_PTRS) as usize;
    let ndblk_addrs = ea::index_block_data_blocks(SUP_BLK_MIN_PTRS) as usize;
    let nsblk_addrs = info.len() - iblock_nsblks;
    let empty = {
        let mut e = UNDEF.to_le_bytes().to_vec();
        e.resize(entry, 0);
        e
    };
    let get = |i: u64| entries.get(&i).map(|v| v.as_slice()).unwrap_or(&empty);
    if let Some((&last, _)) = entries.iter().next_back() {
        if last >= (1u64 << MAX_BITS) {
            return Err(Error::InvalidArgument(
                "too many chunks for an extensible array".into(),
            ));
        }
    }
    let client = u8::from(filtered);

    // Data blocks that hold at least one entry, keyed by (super block, block in it).
    let mut dblocks: std::collections::BTreeSet<(usize, u64)> = Default::default();
    for &i in entries.keys().filter(|&&i| i >= IDX_BLK_ELMTS) {
        let s = sblk_of(i);
        let si = &info[s];
        dblocks.insert((s, (i - IDX_BLK_ELMTS - si.start_idx) / si.dblk_nelmts));
    }
    let max_dblk = dblocks
        .iter()
        .map(|(s, _)| info[*s].dblk_nelmts)
        .max()
        .unwrap_or(1);
    let page_bits = (log2_floor(max_dblk) as u8).max(10);
    let supers: std::collections::BTreeSet<usize> = dblocks
        .iter()
        .map(|(s, _)| *s)
        .filter(|&s| s >= iblock_nsblks)
        .collect();

    // Plan addresses: header, index block, super blocks, data blocks.
    let header = sink.pos();
    let iblock = header + HEADER_SIZE;
    let iblock_size =
        6 + 8 + IDX_BLK_ELMTS * entry as u64 + (ndblk_addrs as u64 + nsblk_addrs as u64) * 8 + 4;
    let mut next = iblock + iblock_size;
    let mut sblock_addr = std::collections::BTreeMap::new();
    for &s in &supers {
        sblock_addr.insert(s, next);
        next += 6 + 8 + ARR_OFF_SIZE as u64 + info[s].ndblks * 8 + 4;
    }
    let mut dblock_addr = std::collections::BTreeMap::new();
    let (mut nd, mut dsize) = (0u64, 0u64);
    for &(s, d) in &dblocks {
        dblock_addr.insert((s, d), next);
        let size = 6 + 8 + ARR_OFF_SIZE as u64 + info[s].dblk_nelmts * entry as u64 + 4;
        next += size;
        nd += 1;
        dsize += size;
    }
    let ssize: u64 = supers
        .iter()
        .map(|&s| 6 + 8 + ARR_OFF_SIZE as u64 + info[s].ndblks * 8 + 4)
        .sum();
    let realized = IDX_BLK_ELMTS
        + dblocks
            .iter()
            .map(|(s, _)| info[*s].dblk_nelmts)
            .sum::<u64>();
    let max_idx_set = entries.keys().next_back().map_or(0, |&i| i + 1);

    let prefix = |sig: &[u8; 4]| {
        let mut b = sig.to_vec();
        b.extend_from_slice(&[0, client]);
        b
    };
    let finish = |mut b: Vec<u8>| {
        let sum = metadata_checksum(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    };

    // Header.
    let mut h = prefix(signature::EAHD);
    h.extend_from_slice(&[
        entry as u8,
        MAX_BITS,
        IDX_BLK_ELMTS as u8,
        DATA_BLK_MIN_ELMTS as u8,
        SUP_BLK_MIN_PTRS as u8,
        page_bits,
    ]);
    for v in [supers.len() as u64, ssize, nd, dsize, max_idx_set, realized] {
        h.extend_from_slice(&v.to_le_bytes());
    }
    h.extend_from_slice(&iblock.to_le_bytes());
    let h = finish(h);
    debug_assert_eq!(h.len() as u64, HEADER_SIZE);
    sink.append(&h)?;

    // Index block.
    let mut b = prefix(signature::EAIB);
    b.extend_from_slice(&header.to_le_bytes());
    for i in 0..IDX_BLK_ELMTS {
        b.extend_from_slice(get(i));
    }
    for (s, si) in info.iter().enumerate().take(iblock_nsblks) {
        for d in 0..si.ndblks {
            let a = dblock_addr.get(&(s, d)).copied().unwrap_or(UNDEF);
            b.extend_from_slice(&a.to_le_bytes());
        }
    }
    for s in iblock_nsblks..info.len() {
        let a = sblock_addr.get(&s).copied().unwrap_or(UNDEF);
        b.extend_from_slice(&a.to_le_bytes());
    }
    sink.append(&finish(b))?;

    // Super blocks.
    for &s in &supers {
        let mut b = prefix(signature::EASB);
        b.extend_from_slice(&header.to_le_bytes());
        b.extend_from_slice(&info[s].start_idx.to_le_bytes()[..ARR_OFF_SIZE]);
        for d in 0..info[s].ndblks {
            let a = dblock_addr.get(&(s, d)).copied().unwrap_or(UNDEF);
            b.extend_from_slice(&a.to_le_bytes());
        }
        sink.append(&finish(b))?;
    }

    // Data blocks.
    for &(s, d) in &dblocks {
        let si = &info[s];
        let off = si.start_idx + d * si.dblk_nelmts;
        let mut b = prefix(signature::EADB);
        b.extend_from_slice(&header.to_le_bytes());
        b.extend_from_slice(&off.to_le_bytes()[..ARR_OFF_SIZE]);
        for k in 0..si.dblk_nelmts {
            b.extend_from_slice(get(IDX_BLK_ELMTS + off + k));
        }
        sink.append(&finish(b))?;
    }
    debug_assert_eq!(sink.pos(), next);
    Ok((
        header,
        ChunkIndexKind::ExtensibleArray {
            max_bits: MAX_BITS,
            index_elements: IDX_BLK_ELMTS as u8,
            min_pointers: SUP_BLK_MIN_PTRS as u8,
            min_elements: DATA_BLK_MIN_ELMTS as u8,
            page_bits,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_matches_libhdf5() {
        let info = super_blocks();
        assert_eq!(info.len(), 29);
        let shape: Vec<(u64, u64)> = info
            .iter()
            .take(5)
            .map(|s| (s.ndblks, s.dblk_nelmts))
            .collect();
        assert_eq!(shape, vec![(1, 16), (1, 32), (2, 32), (2, 64), (4, 64)]);
        assert_eq!(info[2].start_idx, 48);
        assert_eq!(sblk_of(4), 0);
        assert_eq!(sblk_of(19), 0);
        assert_eq!(sblk_of(20), 1);
        assert_eq!(sblk_of(52), 2);
    }

    #[test]
    fn blocks_are_laid_out_as_planned() {
        let mut sink = Sink::memory();
        let mut entries = std::collections::BTreeMap::new();
        for i in [0u64, 3, 4, 100, 5000] {
            entries.insert(i, (i + 1000).to_le_bytes().to_vec());
        }
        let (h, info) = write(&mut sink, &entries, 8, false).unwrap();
        let b = sink.into_bytes().unwrap();
        assert_eq!(h, 0);
        assert_eq!(&b[..4], b"EAHD");
        assert!(matches!(
            info,
            ChunkIndexKind::ExtensibleArray { page_bits: 10, .. }
        ));
        assert_eq!(&b[72..76], b"EAIB");
        // First index-block element is entry 0.
        assert_eq!(u64::from_le_bytes(b[86..94].try_into().unwrap()), 1000);
        assert_eq!(
            u64::from_le_bytes(b[12 + 32..12 + 40].try_into().unwrap()),
            5001
        );
    }
}
