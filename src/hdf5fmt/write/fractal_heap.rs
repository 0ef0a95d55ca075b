//! Fractal heap writer (HDF5 File Format Specification III.G, "Fractal Heap"):
//! all objects are "managed" and live in one root direct block, so the heap has
//! no indirect blocks (current root rows = 0, starting block size = maximum
//! direct block size = the root block's size). Heap IDs are version 0, type
//! managed, with offset and length widths derived as libhdf5 derives them.

use super::file_writer::Sink;
use super::messages::{limit_enc_size, log2_floor, put_var, UNDEF};
use crate::error::{Error, Result};
use crate::hdf5fmt::checksum::metadata_checksum;

/// Heap address space bits ("Maximum Heap Size").
const MAX_HEAP_BITS: u16 = 32;
const OFF_SIZE: usize = (MAX_HEAP_BITS as usize).div_ceil(8);
/// Direct block prefix: signature, version, heap address, block offset (no checksum).
const DBLOCK_OVERHEAD: u64 = 4 + 1 + 8 + OFF_SIZE as u64;
/// Largest root block this writer makes.
const MAX_BLOCK: u64 = 1 << 28;
const TABLE_WIDTH: u16 = 4;

/// Result of writing a heap: header address and one heap ID per object.
pub struct WrittenHeap {
    pub address: u64,
    pub ids: Vec<Vec<u8>>,
}

/// Write a heap holding `objects`, with heap IDs of `id_len` bytes.
pub fn write(sink: &mut Sink, objects: &[Vec<u8>], id_len: u16) -> Result<WrittenHeap> {
    let payload: u64 = objects.iter().map(|o| o.len() as u64).sum();
    let used = DBLOCK_OVERHEAD + payload;
    let block = used.max(512).next_power_of_two();
    if block > MAX_BLOCK {
        return Err(Error::InvalidArgument(format!(
            "fractal heap of {used} bytes exceeds the writer's single-block limit"
        )));
    }
    let budget = usize::from(id_len)
        .checked_sub(1 + OFF_SIZE)
        .filter(|&b| b > 0)
        .ok_or_else(|| Error::InvalidArgument("heap ID length too small".into()))?;
    let max_man: u64 = block.min((1u64 << (8 * budget.min(7))) - 1);
    let dblk_off_size = (log2_floor(block) as usize).div_ceil(8);
    let len_size = dblk_off_size.min(limit_enc_size(max_man));
    if let Some(big) = objects.iter().find(|o| o.len() as u64 > max_man) {
        return Err(Error::InvalidArgument(format!(
            "heap object of {} bytes exceeds the managed-object limit {max_man}",
            big.len()
        )));
    }

    let header_len = header_bytes(0, 0, 0, 0, 0, 0, id_len).len() as u64;
    let header_addr = sink.pos();
    let block_addr = header_addr + header_len;

    let mut ids = Vec::with_capacity(objects.len());
    let mut dblock = Vec::with_capacity(block as usize);
    dblock.extend_from_slice(b"FHDB");
    dblock.push(0);
    dblock.extend_from_slice(&header_addr.to_le_bytes());
    put_var(&mut dblock, 0, OFF_SIZE);
    for o in objects {
        let mut id = vec![0u8];
        put_var(&mut id, dblock.len() as u64, OFF_SIZE);
        put_var(&mut id, o.len() as u64, len_size);
        id.resize(usize::from(id_len), 0);
        ids.push(id);
        dblock.extend_from_slice(o);
    }
    let free = block - dblock.len() as u64;
    dblock.resize(block as usize, 0);

    let header = header_bytes(
        max_man as u32,
        free,
        block,
        objects.len() as u64,
        block_addr,
        block,
        id_len,
    );
    let a = sink.append(&header)?;
    debug_assert_eq!(a, header_addr);
    sink.append(&dblock)?;
    Ok(WrittenHeap {
        address: header_addr,
        ids,
    })
}

fn header_bytes(
    max_man: u32,
    free: u64,
    man_size: u64,
    nobjs: u64,
    root: u64,
    block: u64,
    id_len: u16,
) -> Vec<u8> {
    let mut h = Vec::with_capacity(160);
    h.extend_from_slice(b"FRHP");
    h.push(0);
    h.extend_from_slice(&id_len.to_le_bytes());
    h.extend_from_slice(&0u16.to_le_bytes()); // no I/O filters
    h.push(0); // flags: no wrapped IDs, no direct block checksums
    h.extend_from_slice(&max_man.to_le_bytes());
    h.extend_from_slice(&0u64.to_le_bytes()); // next huge ID
    h.extend_from_slice(&UNDEF.to_le_bytes()); // huge object B-tree
    h.extend_from_slice(&free.to_le_bytes());
    h.extend_from_slice(&UNDEF.to_le_bytes()); // free-space manager
    h.extend_from_slice(&man_size.to_le_bytes()); // managed space
    h.extend_from_slice(&man_size.to_le_bytes()); // allocated managed space
    h.extend_from_slice(&man_size.to_le_bytes()); // allocation iterator offset
    h.extend_from_slice(&nobjs.to_le_bytes());
    for _ in 0..4 {
        h.extend_from_slice(&0u64.to_le_bytes()); // huge/tiny sizes and counts
    }
    h.extend_from_slice(&TABLE_WIDTH.to_le_bytes());
    h.extend_from_slice(&block.to_le_bytes()); // starting block size
    h.extend_from_slice(&block.to_le_bytes()); // max direct block size
    h.extend_from_slice(&MAX_HEAP_BITS.to_le_bytes());
    h.extend_from_slice(&1u16.to_le_bytes()); // starting rows in root indirect block
    h.extend_from_slice(&root.to_le_bytes());
    h.extend_from_slice(&0u16.to_le_bytes()); // root is a direct block
    let sum = metadata_checksum(&h);
    h.extend_from_slice(&sum.to_le_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_point_at_objects() {
        let mut sink = Sink::memory();
        let objs = vec![b"abc".to_vec(), b"defgh".to_vec()];
        let h = write(&mut sink, &objs, 7).unwrap();
        let b = sink.into_bytes().unwrap();
        assert_eq!(&b[..4], b"FRHP");
        assert_eq!(h.ids[0], vec![0, 17, 0, 0, 0, 3, 0]);
        assert_eq!(h.ids[1], vec![0, 20, 0, 0, 0, 5, 0]);
        let hdr_len = header_bytes(0, 0, 0, 0, 0, 0, 7).len();
        let block = &b[hdr_len..];
        assert_eq!(&block[..4], b"FHDB");
        assert_eq!(&block[17..20], b"abc");
        assert_eq!(&block[20..25], b"defgh");
        assert_eq!(block.len(), 512);
    }

    #[test]
    fn oversize_object_is_rejected() {
        let mut sink = Sink::memory();
        assert!(write(&mut sink, &[vec![0u8; 70_000]], 7).is_err());
        let mut sink = Sink::memory();
        assert!(write(&mut sink, &[vec![0u8; 70_000]], 8).is_ok());
    }

    proptest::proptest! {
        #[test]
        fn every_id_resolves_to_its_object(
            objs in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..300), 1..200),
            id_len in 7u16..9,
        ) {
            let mut sink = Sink::memory();
            let h = write(&mut sink, &objs, id_len).unwrap();
            let b = sink.into_bytes().unwrap();
            let hdr_len = header_bytes(0, 0, 0, 0, 0, 0, id_len).len();
            let block = u64::from_le_bytes(b[hdr_len - 14..hdr_len - 6].try_into().unwrap()) as usize;
            proptest::prop_assert_eq!(&b[block..block + 4], b"FHDB");
            let start = u64::from_le_bytes(b[hdr_len - 34..hdr_len - 26].try_into().unwrap()) as usize;
            proptest::prop_assert!(start.is_power_of_two());
            for (o, id) in objs.iter().zip(&h.ids) {
                proptest::prop_assert_eq!(id.len(), usize::from(id_len));
                proptest::prop_assert_eq!(id[0], 0);
                let off = u32::from_le_bytes(id[1..5].try_into().unwrap()) as usize;
                let lens = if start > 65536 && id_len == 8 { 3 } else { 2 };
                let mut len = 0usize;
                for k in 0..lens {
                    len |= usize::from(id[5 + k]) << (8 * k);
                }
                proptest::prop_assert_eq!(&b[block + off..block + off + len], &o[..]);
            }
        }
    }
}
