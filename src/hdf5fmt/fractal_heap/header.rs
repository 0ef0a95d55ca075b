//! Fractal heap header (`FRHP`, HDF5 File Format Specification III.G,
//! "Fractal Heap Header"): [`HeapHeader`], parsed by [`parse`] and encoded by
//! [`HeapHeader::encode`] (what the writer emits).

use crate::btree_v2::verify_checksum;
use crate::checksum::metadata_checksum;
use crate::cursor::Cursor;
use crate::encode::{put_u16, put_u32, put_var, UNDEF};
use crate::error::{Error, Result};
use crate::signature;
use crate::source::Source;
use crate::Sizes;
use purehdf_filters::FilterSpec;

use super::doubling_table::DoublingTable;
use crate::messages::filter_pipeline;

pub(crate) const HEADER: &str = "fractal heap header";

/// Every field of the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeapHeader {
    /// Heap ID length in bytes: the size of every heap ID into this heap (never 0).
    pub id_len: u16,
    /// I/O filters' encoded length: size in bytes of the filter pipeline stored in the header (0:
    /// the heap is not filtered).
    pub filter_len: u16,
    /// Bit 0: huge object IDs wrapped; bit 1: direct blocks carry checksums.
    pub flags: u8,
    /// Maximum size of a managed object in bytes: larger objects are stored as huge objects.
    pub max_managed_size: u32,
    /// Address of the v2 B-tree that indexes huge objects; `None` when undefined (no huge objects).
    pub huge_btree: Option<u64>,
    /// Number of managed objects in the heap.
    pub managed_objects: u64,
    /// The doubling table: width, starting and maximum direct block sizes and maximum heap size.
    pub table: DoublingTable,
    /// Address of the root block (direct when `root_rows` is 0, indirect otherwise); `None` when
    /// undefined (an empty heap).
    pub root: Option<u64>,
    /// Rows in the root indirect block (0: the root is a direct block).
    pub root_rows: u16,
    /// Stored size and mask of a filtered root direct block.
    pub root_filtered: Option<(u64, u32)>,
    /// The filter pipeline applied to direct blocks (empty for an unfiltered heap).
    pub pipeline: Vec<FilterSpec>,
    /// The space and object counters the reader does not need.
    pub stats: HeapStats,
}

/// The header's bookkeeping fields: free space, managed, huge and tiny object
/// totals, kept so that a header decodes and encodes to the same bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapStats {
    /// Next huge object ID.
    pub next_huge_id: u64,
    /// Free space in managed blocks.
    pub free_space: u64,
    /// Address of the free-space manager (`None`: undefined).
    pub free_space_manager: Option<u64>,
    /// Managed space in the heap.
    pub managed_space: u64,
    /// Allocated managed space in the heap.
    pub allocated_space: u64,
    /// Offset of the direct block allocation iterator.
    pub iterator_offset: u64,
    /// Total size of huge objects.
    pub huge_size: u64,
    /// Number of huge objects.
    pub huge_count: u64,
    /// Total size of tiny objects.
    pub tiny_size: u64,
    /// Number of tiny objects.
    pub tiny_count: u64,
    /// Starting rows in the root indirect block.
    pub start_rows: u16,
}

impl HeapHeader {
    /// True when flags bit 1 is set: every direct block ends its header with a checksum.
    pub fn checksum_direct_blocks(&self) -> bool {
        self.flags & 2 != 0
    }

    /// Encode the header (checksum included), the inverse of [`parse`]; the
    /// filter information is written when [`HeapHeader::filter_len`] is not 0.
    pub fn encode(&self, sizes: Sizes) -> Result<Vec<u8>> {
        let (o, l) = (usize::from(sizes.offset), usize::from(sizes.length));
        let st = &self.stats;
        let mut h = Vec::with_capacity(160);
        h.extend_from_slice(signature::FRHP);
        h.push(0);
        put_u16(&mut h, self.id_len);
        put_u16(&mut h, self.filter_len);
        h.push(self.flags);
        put_u32(&mut h, self.max_managed_size);
        put_var(&mut h, st.next_huge_id, l);
        put_var(&mut h, self.huge_btree.unwrap_or(UNDEF), o);
        put_var(&mut h, st.free_space, l);
        put_var(&mut h, st.free_space_manager.unwrap_or(UNDEF), o);
        put_var(&mut h, st.managed_space, l);
        put_var(&mut h, st.allocated_space, l);
        put_var(&mut h, st.iterator_offset, l);
        put_var(&mut h, self.managed_objects, l);
        put_var(&mut h, st.huge_size, l);
        put_var(&mut h, st.huge_count, l);
        put_var(&mut h, st.tiny_size, l);
        put_var(&mut h, st.tiny_count, l);
        let width = u16::try_from(self.table.width)
            .map_err(|_| Error::InvalidArgument(format!("table width {}", self.table.width)))?;
        put_u16(&mut h, width);
        put_var(&mut h, self.table.start_block_size, l);
        put_var(&mut h, self.table.max_direct_size, l);
        put_u16(&mut h, self.table.max_heap_bits);
        put_u16(&mut h, st.start_rows);
        put_var(&mut h, self.root.unwrap_or(UNDEF), o);
        put_u16(&mut h, self.root_rows);
        if self.filter_len > 0 {
            let (size, mask) = self.root_filtered.unwrap_or((0, 0));
            put_var(&mut h, size, l);
            put_u32(&mut h, mask);
            let info = filter_pipeline::encode(&self.pipeline)?;
            if info.len() != usize::from(self.filter_len) {
                return Err(Error::InvalidArgument(format!(
                    "filter information of {} bytes, header says {}",
                    info.len(),
                    self.filter_len
                )));
            }
            h.extend_from_slice(&info);
        }
        let sum = metadata_checksum(&h);
        put_u32(&mut h, sum);
        Ok(h)
    }
}

/// Bytes of the fixed part: everything up to (and including) the current-rows field.
fn fixed_len(sizes: Sizes) -> u64 {
    let (o, l) = (u64::from(sizes.offset), u64::from(sizes.length));
    4 + 1 + 2 + 2 + 1 + 4 + l + o + l + o + 8 * l + 2 + l + l + 2 + 2 + o + 2
}

impl HeapHeader {
    /// Encoded size of a header whose filter information is `filter_len`
    /// bytes (0: unfiltered), checksum included.
    pub fn encoded_len(sizes: Sizes, filter_len: u16) -> u64 {
        let extra = if filter_len > 0 {
            u64::from(sizes.length) + 4 + u64::from(filter_len)
        } else {
            0
        };
        fixed_len(sizes) + extra + 4
    }
}

/// Parse the header at `address`.
pub fn parse(src: &dyn Source, sizes: Sizes, address: u64) -> Result<HeapHeader> {
    let l = u64::from(sizes.length);
    let fixed = fixed_len(sizes);
    let head = src.read(HEADER, address, fixed)?;
    let mut c = Cursor::new(&head, address, HEADER);
    c.signature(signature::FRHP)?;
    let version = c.u8()?;
    if version != 0 {
        return Err(c.unsupported(format!("version {version}")));
    }
    let id_len = c.u16()?;
    let filter_len = c.u16()?;
    let flags = c.u8()?;
    let max_managed_size = c.u32()?;
    let next_huge_id = c.length(sizes.length)?;
    let huge_btree = c.addr(sizes.offset)?;
    let free_space = c.length(sizes.length)?;
    let free_space_manager = c.addr(sizes.offset)?;
    let managed_space = c.length(sizes.length)?;
    let allocated_space = c.length(sizes.length)?;
    let iterator_offset = c.length(sizes.length)?;
    let managed_objects = c.length(sizes.length)?;
    let huge_size = c.length(sizes.length)?;
    let huge_count = c.length(sizes.length)?;
    let tiny_size = c.length(sizes.length)?;
    let tiny_count = c.length(sizes.length)?;
    let width = c.u16()?;
    let start_block_size = c.length(sizes.length)?;
    let max_direct_size = c.length(sizes.length)?;
    let max_heap_bits = c.u16()?;
    let start_rows = c.u16()?;
    let root = c.addr(sizes.offset)?;
    let root_rows = c.u16()?;
    let extra = if filter_len > 0 {
        l + 4 + u64::from(filter_len)
    } else {
        0
    };
    let total = fixed + extra + 4;
    let all = src.read(HEADER, address, total)?;
    verify_checksum(&all, address, HEADER)?;
    let mut c = Cursor::new(&all, address, HEADER);
    c.seek(fixed as usize)?;
    let (root_filtered, pipeline) = if filter_len > 0 {
        let size = c.length(sizes.length)?;
        let mask = c.u32()?;
        // The heap embeds an encoded filter pipeline message: one decoder serves both.
        let mut info = c.sub(usize::from(filter_len))?;
        (Some((size, mask)), filter_pipeline::decode(&mut info)?)
    } else {
        (None, Vec::new())
    };
    let table = DoublingTable::new(width, start_block_size, max_direct_size, max_heap_bits)
        .map_err(|reason| Error::malformed(HEADER, address, reason))?;
    if id_len == 0 {
        return Err(Error::malformed(HEADER, address, "heap ID length 0"));
    }
    if usize::from(root_rows) > table.max_root_rows() {
        return Err(Error::malformed(
            HEADER,
            address,
            format!("{root_rows} root rows, at most {}", table.max_root_rows()),
        ));
    }
    Ok(HeapHeader {
        id_len,
        filter_len,
        flags,
        max_managed_size,
        huge_btree,
        managed_objects,
        table,
        root,
        root_rows,
        root_filtered,
        pipeline,
        stats: HeapStats {
            next_huge_id,
            free_space,
            free_space_manager,
            managed_space,
            allocated_space,
            iterator_offset,
            huge_size,
            huge_count,
            tiny_size,
            tiny_count,
            start_rows,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemSource;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn header_round_trips(
            id_len in 1u16..64,
            flags in 0u8..4,
            max_managed_size: u32,
            huge_btree in prop::option::of(0u64..u64::MAX),
            managed_objects: u64,
            root in prop::option::of(0u64..u64::MAX),
            counters in prop::collection::vec(any::<u64>(), 9),
            start_rows: u16,
            start_bits in 9u32..14,
        ) {
            let start = 1u64 << start_bits;
            let table = DoublingTable::new(4, start, start << 4, 32).unwrap();
            let h = HeapHeader {
                id_len,
                filter_len: 0,
                flags,
                max_managed_size,
                huge_btree,
                managed_objects,
                table,
                root,
                root_rows: 0,
                root_filtered: None,
                pipeline: Vec::new(),
                stats: HeapStats {
                    next_huge_id: counters[0],
                    free_space: counters[1],
                    free_space_manager: None,
                    managed_space: counters[2],
                    allocated_space: counters[3],
                    iterator_offset: counters[4],
                    huge_size: counters[5],
                    huge_count: counters[6],
                    tiny_size: counters[7],
                    tiny_count: counters[8],
                    start_rows,
                },
            };
            let b = h.encode(Sizes::default()).unwrap();
            prop_assert_eq!(b.len() as u64, HeapHeader::encoded_len(Sizes::default(), 0));
            let got = parse(&MemSource::new(b), Sizes::default(), 0).unwrap();
            prop_assert_eq!(got, h);
        }
    }
}
