//! Fractal heap header (`FRHP`, HDF5 File Format Specification III.G,
//! "Fractal Heap Header").

use crate::btree_v2::verify_checksum;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::signature;
use crate::source::Source;
use crate::Sizes;
use purehdf_filters::FilterSpec;

use super::doubling_table::DoublingTable;
use crate::messages::filter_pipeline;

pub(crate) const HEADER: &str = "fractal heap header";

/// Every field of the header that reading needs.
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
}

impl HeapHeader {
    /// True when flags bit 1 is set: every direct block ends its header with a checksum.
    pub fn checksum_direct_blocks(&self) -> bool {
        self.flags & 2 != 0
    }
}

/// Parse the header at `address`.
pub fn parse(src: &dyn Source, sizes: Sizes, address: u64) -> Result<HeapHeader> {
    let (o, l) = (u64::from(sizes.offset), u64::from(sizes.length));
    // Fixed part: everything up to (and including) the current-rows field.
    let fixed = 4 + 1 + 2 + 2 + 1 + 4 + l + o + l + o + 8 * l + 2 + l + l + 2 + 2 + o + 2;
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
    let _next_huge_id = c.length(sizes.length)?;
    let huge_btree = c.addr(sizes.offset)?;
    let _free_space = c.length(sizes.length)?;
    let _free_manager = c.addr(sizes.offset)?;
    let _managed_space = c.length(sizes.length)?;
    let _allocated = c.length(sizes.length)?;
    let _iterator_offset = c.length(sizes.length)?;
    let managed_objects = c.length(sizes.length)?;
    let _huge_size = c.length(sizes.length)?;
    let _huge_count = c.length(sizes.length)?;
    let _tiny_size = c.length(sizes.length)?;
    let _tiny_count = c.length(sizes.length)?;
    let width = c.u16()?;
    let start_block_size = c.length(sizes.length)?;
    let max_direct_size = c.length(sizes.length)?;
    let max_heap_bits = c.u16()?;
    let _start_rows = c.u16()?;
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
    })
}
