//! Fractal heap writer (HDF5 File Format Specification III.G, "Fractal Heap"):
//! objects up to [`MAX_MANAGED`] bytes are "managed" and live in one root
//! direct block, so the heap has no indirect blocks (current root rows = 0,
//! starting block size = maximum direct block size = the root block's size).
//! Larger objects are "huge", as libhdf5 stores them (its link and attribute
//! heaps cap managed objects at 64 KiB): each is written apart and found
//! through a version 2 B-tree of type 1 (address, length, ID key), the heap ID
//! holding only the key. Heap IDs are version 0, with offset and length widths
//! derived as libhdf5 derives them.

use super::btree_v2::{self, BTreeParams};
use super::sink::Sink;
use crate::btree_v2::records::HugeObjectRecord;
use crate::encode::{limit_enc_size, log2_floor, put_var, UNDEF};
use crate::error::{Error, Result};
use crate::fractal_heap::doubling_table::DoublingTable;
use crate::fractal_heap::{HeapHeader, HeapStats};
use crate::signature;

/// Heap address space bits ("Maximum Heap Size").
const MAX_HEAP_BITS: u16 = 32;
const OFF_SIZE: usize = (MAX_HEAP_BITS as usize).div_ceil(8);
/// Direct block prefix: signature, version, heap address, block offset (no checksum).
const DBLOCK_OVERHEAD: u64 = 4 + 1 + 8 + OFF_SIZE as u64;
/// Largest root block this writer makes.
const MAX_BLOCK: u64 = 1 << 28;
const TABLE_WIDTH: u16 = 4;
/// Smallest "maximum direct block size" written (libhdf5's own for link and
/// attribute heaps).
const MIN_MAX_DIRECT: u64 = 1 << 16;
/// Largest managed object (libhdf5's limit for link and attribute heaps, less
/// one so that two length bytes always suffice); larger objects are huge.
pub const MAX_MANAGED: u64 = 0xFFFF;
/// Heap ID type bits of a huge object (version 0).
const ID_HUGE: u8 = 0x10;
/// Huge-object B-tree record type: indirectly accessed, unfiltered.
const HUGE_RECORD_TYPE: u8 = 1;

/// Huge objects written apart: their total size, count and B-tree address.
struct Huge {
    size: u64,
    count: u64,
    btree: u64,
}

/// Write each huge object, then the type 1 B-tree indexing them by key
/// (keys 1, 2, ... in the order given); returns the B-tree and each key.
fn write_huge(sink: &mut Sink, objects: &[&Vec<u8>]) -> Result<(Huge, Vec<u64>)> {
    let mut records = Vec::with_capacity(objects.len());
    let mut keys = Vec::with_capacity(objects.len());
    let mut size = 0u64;
    for (i, o) in objects.iter().enumerate() {
        let key = i as u64 + 1;
        let addr = sink.append(o)?;
        let mut r = Vec::with_capacity(24);
        HugeObjectRecord {
            address: addr,
            stored_len: o.len() as u64,
            filter_mask: 0,
            object_len: o.len() as u64,
            id: Some(key),
        }
        .encode(HUGE_RECORD_TYPE, super::WRITER_SIZES, &mut r);
        records.push(r);
        keys.push(key);
        size += o.len() as u64;
    }
    let params = BTreeParams {
        record_type: HUGE_RECORD_TYPE,
        record_size: 24,
        node_size: 512,
        split: 100,
        merge: 40,
    };
    let btree = btree_v2::write(sink, &params, &records)?;
    Ok((
        Huge {
            size,
            count: objects.len() as u64,
            btree,
        },
        keys,
    ))
}

/// Result of writing a heap: header address and one heap ID per object.
pub struct WrittenHeap {
    /// Address of the heap header (`FRHP`) in the file.
    pub address: u64,
    /// One heap ID per object, in the order of the objects given, each `id_len` bytes.
    pub ids: Vec<Vec<u8>>,
}

/// Write a heap holding `objects`, with heap IDs of `id_len` bytes; objects over
/// [`MAX_MANAGED`] bytes are stored as huge objects.
pub fn write(sink: &mut Sink, objects: &[Vec<u8>], id_len: u16) -> Result<WrittenHeap> {
    let budget = usize::from(id_len)
        .checked_sub(1 + OFF_SIZE)
        .filter(|&b| b > 0)
        .ok_or_else(|| Error::InvalidArgument("heap ID length too small".into()))?;
    // huge IDs hold a key (the v2 B-tree gives address and length); libhdf5
    // puts address and length in IDs of 17 bytes or more, which this writer
    // does not make
    let huge_key_len = usize::from(id_len) - 1;
    if huge_key_len >= 16 {
        return Err(Error::InvalidArgument(format!(
            "heap IDs of {id_len} bytes are not written"
        )));
    }
    let limit = MAX_MANAGED.min((1u64 << (8 * budget.min(7))) - 1);
    let is_huge = |o: &Vec<u8>| o.len() as u64 > limit;
    let huge_objects: Vec<&Vec<u8>> = objects.iter().filter(|o| is_huge(o)).collect();
    let (huge, mut huge_keys) = if huge_objects.is_empty() {
        (
            Huge {
                size: 0,
                count: 0,
                btree: UNDEF,
            },
            Vec::new(),
        )
    } else {
        write_huge(sink, &huge_objects)?
    };
    huge_keys.reverse();

    let payload: u64 = objects
        .iter()
        .filter(|o| !is_huge(o))
        .map(|o| o.len() as u64)
        .sum();
    let used = DBLOCK_OVERHEAD + payload;
    let block = used.max(512).next_power_of_two();
    if block > MAX_BLOCK {
        return Err(Error::InvalidArgument(format!(
            "fractal heap of {used} bytes exceeds the writer's single-block limit"
        )));
    }
    let max_man: u64 = block.min(limit);
    let dblk_off_size = (log2_floor(block) as usize).div_ceil(8);
    let len_size = dblk_off_size.min(limit_enc_size(max_man));

    let header_len = HeapHeader::encoded_len(super::WRITER_SIZES, 0);
    let header_addr = sink.pos();
    let block_addr = header_addr + header_len;

    let mut ids = Vec::with_capacity(objects.len());
    let mut dblock = Vec::with_capacity(block as usize);
    dblock.extend_from_slice(signature::FHDB);
    dblock.push(0);
    dblock.extend_from_slice(&header_addr.to_le_bytes());
    put_var(&mut dblock, 0, OFF_SIZE);
    let mut managed = 0u64;
    for o in objects {
        if is_huge(o) {
            let key = huge_keys
                .pop()
                .ok_or_else(|| Error::InvalidArgument("huge object without a key".into()))?;
            let mut id = vec![ID_HUGE];
            put_var(&mut id, key, huge_key_len.min(8));
            id.resize(usize::from(id_len), 0);
            ids.push(id);
            continue;
        }
        let mut id = vec![0u8];
        put_var(&mut id, dblock.len() as u64, OFF_SIZE);
        put_var(&mut id, o.len() as u64, len_size);
        id.resize(usize::from(id_len), 0);
        ids.push(id);
        dblock.extend_from_slice(o);
        managed += 1;
    }
    let free = block - dblock.len() as u64;
    dblock.resize(block as usize, 0);

    let header = header(
        id_len,
        max_man as u32,
        block_addr,
        block,
        free,
        managed,
        &huge,
    )?
    .encode(super::WRITER_SIZES)?;
    let a = sink.append(&header)?;
    debug_assert_eq!(a, header_addr);
    sink.append(&dblock)?;
    Ok(WrittenHeap {
        address: header_addr,
        ids,
    })
}

/// The heap header for the writer's single-block heaps: no filters, no
/// wrapped IDs or direct block checksums, the root a direct block of `block`
/// bytes at `root` with `nobjs` objects and `free` bytes left.
fn header(
    id_len: u16,
    max_man: u32,
    root: u64,
    block: u64,
    free: u64,
    nobjs: u64,
    huge: &Huge,
) -> Result<HeapHeader> {
    // libhdf5 grows the heap (root direct block -> root indirect block) only
    // when direct blocks may be larger than the starting size: equal sizes make
    // it corrupt memory on the next insert once the root block is full
    let table = DoublingTable::new(TABLE_WIDTH, block, block.max(MIN_MAX_DIRECT), MAX_HEAP_BITS)
        .map_err(Error::InvalidArgument)?;
    Ok(HeapHeader {
        id_len,
        filter_len: 0,
        flags: 0,
        max_managed_size: max_man,
        huge_btree: (huge.btree != UNDEF).then_some(huge.btree),
        managed_objects: nobjs,
        table,
        root: Some(root),
        root_rows: 0,
        root_filtered: None,
        pipeline: Vec::new(),
        stats: HeapStats {
            // next huge ID: the last key handed out
            next_huge_id: huge.count,
            free_space: free,
            free_space_manager: None,
            managed_space: block,
            allocated_space: block,
            iterator_offset: block,
            huge_size: huge.size,
            huge_count: huge.count,
            tiny_size: 0,
            tiny_count: 0,
            start_rows: 1,
        },
    })
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
        let hdr_len = HeapHeader::encoded_len(crate::write::WRITER_SIZES, 0) as usize;
        let block = &b[hdr_len..];
        assert_eq!(&block[..4], b"FHDB");
        assert_eq!(&block[17..20], b"abc");
        assert_eq!(&block[20..25], b"defgh");
        assert_eq!(block.len(), 512);
    }

    /// Read every object back through the crate's reader.
    fn read_back(objs: &[Vec<u8>], id_len: u16) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        use crate::fractal_heap::FractalHeap;
        use crate::source::MemSource;
        use crate::Sizes;
        let mut sink = Sink::memory();
        sink.append(&[0xEE; 48]).unwrap(); // something before the heap
        let h = write(&mut sink, objs, id_len).unwrap();
        let src = MemSource::new(sink.into_bytes().unwrap());
        let sizes = Sizes {
            offset: 8,
            length: 8,
        };
        let heap = FractalHeap::open(&src, sizes, h.address).unwrap();
        let got = h
            .ids
            .iter()
            .map(|id| heap.object(&src, sizes, id).unwrap())
            .collect();
        (got, h.ids)
    }

    #[test]
    fn objects_over_64k_become_huge() {
        let objs = vec![
            b"small".to_vec(),
            (0..70_000u32).map(|i| (i % 251) as u8).collect(),
            vec![7u8; MAX_MANAGED as usize],
            vec![9u8; MAX_MANAGED as usize + 1],
        ];
        for id_len in [7u16, 8] {
            let (got, ids) = read_back(&objs, id_len);
            assert_eq!(got, objs);
            // managed, huge (key 1), managed, huge (key 2)
            assert_eq!(ids[0][0], 0);
            assert_eq!(&ids[1][..3], &[0x10, 1, 0]);
            assert_eq!(ids[2][0], 0);
            assert_eq!(&ids[3][..3], &[0x10, 2, 0]);
            assert!(ids.iter().all(|i| i.len() == usize::from(id_len)));
        }
    }

    #[test]
    fn only_huge_objects_and_header_counts() {
        let objs = vec![vec![1u8; 100_000], vec![2u8; 200_000]];
        let (got, _) = read_back(&objs, 7);
        assert_eq!(got, objs);
        let mut sink = Sink::memory();
        let h = write(&mut sink, &objs, 7).unwrap();
        let b = sink.into_bytes().unwrap();
        let at = h.address as usize;
        let u64_at = |o: usize| u64::from_le_bytes(b[at + o..at + o + 8].try_into().unwrap());
        // max managed size, next huge ID, managed objects, huge size and count
        assert_eq!(
            u32::from_le_bytes(b[at + 10..at + 14].try_into().unwrap()),
            512
        );
        assert_eq!(u64_at(14), 2);
        assert_eq!(u64_at(70), 0);
        assert_eq!(u64_at(78), 300_000);
        assert_eq!(u64_at(86), 2);
    }

    #[test]
    fn long_ids_are_refused() {
        let mut sink = Sink::memory();
        assert!(write(&mut sink, &[vec![0u8; 70_000]], 17).is_err());
        assert!(write(&mut sink, &[vec![0u8; 7]], 5).is_err());
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
            let hdr_len = HeapHeader::encoded_len(crate::write::WRITER_SIZES, 0) as usize;
            let block = u64::from_le_bytes(b[hdr_len - 14..hdr_len - 6].try_into().unwrap()) as usize;
            proptest::prop_assert_eq!(&b[block..block + 4], b"FHDB");
            let start = u64::from_le_bytes(b[hdr_len - 34..hdr_len - 26].try_into().unwrap()) as usize;
            proptest::prop_assert!(start.is_power_of_two());
            for (o, id) in objs.iter().zip(&h.ids) {
                proptest::prop_assert_eq!(id.len(), usize::from(id_len));
                proptest::prop_assert_eq!(id[0], 0);
                let off = u32::from_le_bytes(id[1..5].try_into().unwrap()) as usize;
                let mut len = 0usize;
                for k in 0..2 {
                    len |= usize::from(id[5 + k]) << (8 * k);
                }
                proptest::prop_assert_eq!(&b[block + off..block + off + len], &o[..]);
            }
        }
    }
}
