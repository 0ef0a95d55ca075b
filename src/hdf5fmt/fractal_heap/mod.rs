//! Fractal heap (HDF5 File Format Specification III.G): header, direct and
//! indirect blocks, managed / tiny / huge objects, filtered blocks.
//!
//! A heap ID's first byte says how to find the object: managed objects live in
//! direct blocks reached through the doubling table of indirect blocks, tiny
//! objects sit in the ID itself, huge objects are stored apart and found either
//! from the address in the ID or through a v2 B-tree (record types 1–4).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

use crate::btree_v2::{self, BTreeV2};
use crate::cursor::{bounded, Cursor};
use crate::error::{Error, Result};
use crate::limits;
use crate::source::Source;
use crate::Sizes;
use purehdf_filters::{decode_pipeline, ChunkContext};

pub mod blocks;
pub mod doubling_table;
pub mod header;

use blocks::{DirectRef, IndirectBlock};
use btree_v2::records::HugeObjectRecord;
pub use header::{HeapHeader, HeapStats};

const HEAP_ID: &str = "fractal heap ID";
const HUGE: &str = "fractal heap huge object";
/// Entries kept in each per-heap cache before it is emptied.
const CACHE_ENTRIES: usize = 1024;

/// An opened fractal heap (its header parsed).
#[derive(Clone, Debug)]
pub struct FractalHeap {
    /// Address of the heap header.
    pub address: u64,
    /// Length in bytes of heap IDs.
    pub id_len: u16,
    /// The parsed header.
    pub header: HeapHeader,
    cache: Arc<RwLock<Cache>>,
}

#[derive(Debug, Default)]
struct Cache {
    indirect: HashMap<u64, Arc<IndirectBlock>>,
    /// Unfiltered direct blocks whose header and checksum were verified.
    verified: HashSet<u64>,
    /// Decoded filtered direct blocks.
    decoded: HashMap<u64, Arc<Vec<u8>>>,
    /// Huge-object records by ID key, read once from the huge-object B-tree.
    huge: Option<Arc<HashMap<u64, HugeObjectRecord>>>,
}

/// How a heap ID locates its object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeapIdKind {
    /// Managed object (ID type 0): stored in a direct block of the heap.
    Managed {
        /// Offset of the object in the heap's address space (doubling-table offset, in bytes).
        offset: u64,
        /// Length of the object in bytes.
        length: u64,
    },
    /// Tiny object (ID type 2): the object's bytes are inside the heap ID itself.
    Tiny {
        /// Index in the heap ID of the object's first byte (1, or 2 for the extended form used when
        /// IDs are longer than 18 bytes).
        data_at: usize,
        /// Length of the object in bytes (1–16, or up to 4096 in the extended form).
        length: usize,
    },
    /// Huge object (ID type 1) whose address and lengths are in the heap ID itself (IDs large
    /// enough to hold them).
    HugeDirect {
        /// Address of the object's bytes in the file.
        address: u64,
        /// Stored length of the object in bytes (after filtering, for a filtered heap).
        stored_len: u64,
        /// Filter mask of the stored object (bit `i` set: filter `i` skipped); 0 for an unfiltered
        /// heap.
        filter_mask: u32,
        /// Length of the object in bytes once unfiltered (equal to the stored length for an
        /// unfiltered heap).
        object_len: u64,
    },
    /// Huge object (ID type 1) found through the huge-object v2 B-tree.
    HugeIndirect {
        /// Key of the object in the huge-object B-tree: its ID as stored in the heap ID (up to 8
        /// bytes).
        key: u64,
    },
}

impl FractalHeap {
    /// Parse the heap header at `address`.
    pub fn open(src: &dyn Source, sizes: Sizes, address: u64) -> Result<Self> {
        let header = header::parse(src, sizes, address)?;
        Ok(FractalHeap {
            address,
            id_len: header.id_len,
            header,
            cache: Arc::default(),
        })
    }

    fn filtered(&self) -> bool {
        self.header.filter_len > 0
    }

    /// Bytes of a managed ID's length field.
    fn managed_len_size(&self) -> usize {
        let t = &self.header.table;
        let max_direct_bits = 63 - t.max_direct_size.leading_zeros() as usize;
        let by_block = max_direct_bits.div_ceil(8);
        let by_object = usize::from(btree_v2::limit_enc_size(u64::from(
            self.header.max_managed_size,
        )));
        by_block.min(by_object)
    }

    /// Decode what a heap ID says (no I/O).
    pub fn parse_id(&self, sizes: Sizes, heap_id: &[u8]) -> Result<HeapIdKind> {
        let mut c = Cursor::new(heap_id, 0, HEAP_ID);
        let flags = c.u8()?;
        if flags & 0xc0 != 0 {
            return Err(c.unsupported(format!("heap ID version {}", flags >> 6)));
        }
        let id_len = usize::from(self.id_len);
        match flags & 0x30 {
            0x00 => {
                let offset = c.uint(self.header.table.offset_size())?;
                let length = c.uint(self.managed_len_size())?;
                Ok(HeapIdKind::Managed { offset, length })
            }
            0x20 => {
                let extended = id_len.saturating_sub(1) > 17;
                let (data_at, length) = if extended {
                    let second = c.u8()?;
                    (
                        2,
                        ((usize::from(flags & 0x0f) << 8) | usize::from(second)) + 1,
                    )
                } else {
                    (1, usize::from(flags & 0x0f) + 1)
                };
                if data_at + length > heap_id.len() {
                    return Err(Error::malformed(
                        HEAP_ID,
                        0,
                        format!(
                            "tiny object of {length} bytes in a {}-byte ID",
                            heap_id.len()
                        ),
                    ));
                }
                Ok(HeapIdKind::Tiny { data_at, length })
            }
            0x10 => {
                let (o, l) = (usize::from(sizes.offset), usize::from(sizes.length));
                let room = id_len.saturating_sub(1);
                let direct = if self.filtered() {
                    room >= o + l + 4 + l
                } else {
                    room >= o + l
                };
                if direct {
                    let address = c.uint(o)?;
                    let stored_len = c.uint(l)?;
                    let (filter_mask, object_len) = if self.filtered() {
                        (c.u32()?, c.uint(l)?)
                    } else {
                        (0, stored_len)
                    };
                    Ok(HeapIdKind::HugeDirect {
                        address,
                        stored_len,
                        filter_mask,
                        object_len,
                    })
                } else {
                    let key = c.uint(room.min(8))?;
                    Ok(HeapIdKind::HugeIndirect { key })
                }
            }
            _ => Err(c.unsupported("reserved heap ID type")),
        }
    }

    /// The bytes of the object named by `heap_id`.
    pub fn object(&self, src: &dyn Source, sizes: Sizes, heap_id: &[u8]) -> Result<Vec<u8>> {
        match self.parse_id(sizes, heap_id)? {
            HeapIdKind::Tiny { data_at, length } => heap_id
                .get(data_at..data_at + length)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| Error::malformed(HEAP_ID, 0, "tiny object outside its ID")),
            HeapIdKind::Managed { offset, length } => self.managed(src, sizes, offset, length),
            HeapIdKind::HugeDirect {
                address,
                stored_len,
                filter_mask,
                object_len,
            } => self.huge_bytes(src, address, stored_len, filter_mask, object_len),
            HeapIdKind::HugeIndirect { key } => {
                let rec = self.huge_record(src, sizes, key)?;
                self.huge_bytes(
                    src,
                    rec.address,
                    rec.stored_len,
                    rec.filter_mask,
                    rec.object_len,
                )
            }
        }
    }

    fn huge_record(&self, src: &dyn Source, sizes: Sizes, key: u64) -> Result<HugeObjectRecord> {
        let cached = self.cache.read().ok().and_then(|c| c.huge.clone());
        let map = match cached {
            Some(m) => m,
            None => {
                let m = Arc::new(self.huge_records(src, sizes)?);
                if let Ok(mut c) = self.cache.write() {
                    c.huge = Some(m.clone());
                }
                m
            }
        };
        map.get(&key).cloned().ok_or_else(|| {
            Error::NotFound(format!(
                "huge heap object {key} in heap {:#x}",
                self.address
            ))
        })
    }

    /// Every record of the huge-object B-tree, by ID key.
    fn huge_records(
        &self,
        src: &dyn Source,
        sizes: Sizes,
    ) -> Result<HashMap<u64, HugeObjectRecord>> {
        let bt_addr = self.header.huge_btree.ok_or_else(|| {
            Error::malformed(HUGE, self.address, "huge object but no huge B-tree")
        })?;
        let tree = BTreeV2::open(src, sizes, bt_addr)?;
        if !matches!(tree.record_type, 1 | 2) {
            return Err(Error::malformed(
                HUGE,
                bt_addr,
                format!("huge-object B-tree of record type {}", tree.record_type),
            ));
        }
        let mut map = HashMap::new();
        tree.for_each_record(src, sizes, &mut |r| {
            let rec = btree_v2::records::huge_object(tree.record_type, r, sizes)?;
            if let Some(id) = rec.id {
                map.insert(id, rec);
            }
            Ok(())
        })?;
        Ok(map)
    }

    fn huge_bytes(
        &self,
        src: &dyn Source,
        address: u64,
        stored_len: u64,
        mask: u32,
        object_len: u64,
    ) -> Result<Vec<u8>> {
        bounded(stored_len, limits::MAX_READ, HUGE, address, "object length")?;
        let raw = src.read(HUGE, address, stored_len)?;
        if !self.filtered() {
            return Ok(raw.into_owned());
        }
        let n = bounded(
            object_len,
            limits::MAX_DECODED,
            HUGE,
            address,
            "object length",
        )?;
        let out = decode_pipeline(&self.header.pipeline, mask, &ChunkContext::new(1, n), &raw)?;
        if out.len() != n {
            return Err(Error::malformed(
                HUGE,
                address,
                format!("decodes to {} bytes, expected {n}", out.len()),
            ));
        }
        Ok(out)
    }

    fn managed(&self, src: &dyn Source, sizes: Sizes, offset: u64, length: u64) -> Result<Vec<u8>> {
        if length == 0 {
            return Err(Error::malformed(HEAP_ID, 0, "managed object of length 0"));
        }
        let block = self.locate(src, sizes, offset)?;
        let rel = offset - block.block_offset;
        let end = rel
            .checked_add(length)
            .filter(|&e| e <= block.size)
            .ok_or_else(|| {
                Error::malformed(
                    blocks::DIRECT,
                    block.address,
                    format!("object {offset}+{length} runs past its block"),
                )
            })?;
        if rel < blocks::direct_overhead(&self.header, sizes) {
            return Err(Error::malformed(
                blocks::DIRECT,
                block.address,
                format!("object offset {offset} inside the block header"),
            ));
        }
        let (s, e) = (rel as usize, end as usize);
        if block.filtered.is_some() {
            let data = self.decoded_block(src, sizes, block)?;
            return data.get(s..e).map(<[u8]>::to_vec).ok_or_else(|| {
                Error::malformed(blocks::DIRECT, block.address, "object outside block")
            });
        }
        let verified = self
            .cache
            .read()
            .map(|c| c.verified.contains(&block.address))
            .unwrap_or(false);
        if verified {
            let at = block.address.checked_add(rel).ok_or(Error::Overflow {
                structure: blocks::DIRECT,
                offset: block.address,
                what: "object address",
            })?;
            return Ok(src.read(blocks::DIRECT, at, length)?.into_owned());
        }
        let data = blocks::read_direct(src, sizes, &self.header, self.address, block)?;
        if let Ok(mut c) = self.cache.write() {
            if c.verified.len() >= CACHE_ENTRIES {
                c.verified.clear();
            }
            c.verified.insert(block.address);
        }
        data.get(s..e)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Error::malformed(blocks::DIRECT, block.address, "object outside block"))
    }

    fn decoded_block(
        &self,
        src: &dyn Source,
        sizes: Sizes,
        block: DirectRef,
    ) -> Result<Arc<Vec<u8>>> {
        if let Some(b) = self
            .cache
            .read()
            .ok()
            .and_then(|c| c.decoded.get(&block.address).cloned())
        {
            return Ok(b);
        }
        let data = Arc::new(
            blocks::read_direct(src, sizes, &self.header, self.address, block)?.into_owned(),
        );
        if let Ok(mut c) = self.cache.write() {
            if c.decoded.len() >= 16 {
                c.decoded.clear();
            }
            c.decoded.insert(block.address, data.clone());
        }
        Ok(data)
    }

    fn indirect(
        &self,
        src: &dyn Source,
        sizes: Sizes,
        address: u64,
        nrows: usize,
    ) -> Result<Arc<IndirectBlock>> {
        if let Some(b) = self
            .cache
            .read()
            .ok()
            .and_then(|c| c.indirect.get(&address).cloned())
        {
            if b.nrows == nrows {
                return Ok(b);
            }
        }
        let b = Arc::new(blocks::parse_indirect(
            src,
            sizes,
            &self.header,
            self.address,
            address,
            nrows,
        )?);
        if let Ok(mut c) = self.cache.write() {
            if c.indirect.len() >= CACHE_ENTRIES {
                c.indirect.clear();
            }
            c.indirect.insert(address, b.clone());
        }
        Ok(b)
    }

    /// Find the direct block holding heap offset `offset`.
    pub fn locate(&self, src: &dyn Source, sizes: Sizes, offset: u64) -> Result<DirectRef> {
        let h = &self.header;
        let t = &h.table;
        let root = h
            .root
            .ok_or_else(|| Error::malformed(header::HEADER, self.address, "empty heap"))?;
        if t.max_heap_bits < 64 && offset >> t.max_heap_bits != 0 {
            return Err(Error::malformed(
                HEAP_ID,
                0,
                format!("offset {offset} outside the heap"),
            ));
        }
        if h.root_rows == 0 {
            if offset >= t.start_block_size {
                return Err(Error::malformed(
                    HEAP_ID,
                    0,
                    format!("offset {offset} past the root direct block"),
                ));
            }
            return Ok(DirectRef {
                address: root,
                size: t.start_block_size,
                block_offset: 0,
                filtered: h.root_filtered,
            });
        }
        let mut addr = root;
        let mut nrows = usize::from(h.root_rows);
        let mut expect_offset = 0u64;
        let mut seen = HashSet::new();
        for _ in 0..limits::MAX_TREE_DEPTH {
            if !seen.insert(addr) {
                return Err(Error::Cycle {
                    structure: blocks::INDIRECT,
                    offset: addr,
                });
            }
            let ib = self.indirect(src, sizes, addr, nrows)?;
            if ib.block_offset != expect_offset {
                return Err(Error::malformed(
                    blocks::INDIRECT,
                    addr,
                    format!("block offset {}, expected {expect_offset}", ib.block_offset),
                ));
            }
            let bad = |what: String| Error::malformed(blocks::INDIRECT, addr, what);
            let rel = offset
                .checked_sub(ib.block_offset)
                .ok_or_else(|| bad(format!("offset {offset} before the block")))?;
            let (row, col) = t
                .lookup(rel)
                .filter(|&(r, c)| r < nrows && c < t.width)
                .ok_or_else(|| bad(format!("offset {offset} outside the block's {nrows} rows")))?;
            let size = t
                .row_block_size(row)
                .ok_or_else(|| bad("row size".into()))?;
            let block_offset = t
                .row_offset(row)
                .and_then(|r| col.checked_mul(size).and_then(|c| c.checked_add(r)))
                .and_then(|v| v.checked_add(ib.block_offset))
                .ok_or_else(|| bad("block offset overflow".into()))?;
            if row < t.max_direct_rows() {
                let idx = row as u64 * t.width + col;
                let e = ib
                    .direct
                    .get(idx as usize)
                    .ok_or_else(|| bad("direct entry missing".into()))?;
                let address = e
                    .address
                    .ok_or_else(|| bad(format!("offset {offset} in an unallocated block")))?;
                return Ok(DirectRef {
                    address,
                    size,
                    block_offset,
                    filtered: e.filtered,
                });
            }
            let idx = (row - t.max_direct_rows()) as u64 * t.width + col;
            let child = ib
                .indirect
                .get(idx as usize)
                .copied()
                .flatten()
                .ok_or_else(|| bad(format!("offset {offset} in an unallocated block")))?;
            let child_rows = t
                .rows_for_size(size)
                .filter(|&r| r < nrows)
                .ok_or_else(|| bad(format!("child of {size} bytes")))?;
            addr = child;
            nrows = child_rows;
            expect_offset = block_offset;
        }
        Err(Error::Limit {
            structure: blocks::INDIRECT,
            offset: addr,
            what: "indirect block depth",
            value: limits::MAX_TREE_DEPTH as u64,
            limit: limits::MAX_TREE_DEPTH as u64,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests;
