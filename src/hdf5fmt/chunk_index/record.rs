//! What a chunk index is and holds: the index kind and parameters a layout
//! message stores, the record of one stored chunk, and the block prefix the
//! fixed and extensible arrays share.

use crate::cursor::Cursor;
use crate::error::Result;
use crate::Sizes;

/// Which index a chunked dataset uses, with the parameters its layout message stores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChunkIndexKind {
    /// Layout message v1–v3: a v1 B-tree of chunk nodes (node type 1).
    BTreeV1,
    /// v4+: one chunk covers the dataset; `filtered` gives its stored size and mask.
    SingleChunk {
        /// Size of the filtered chunk in bytes, stored when layout flags bit 1 is set (a filtered
        /// single chunk); 0 when not stored.
        filtered_size: u64,
        /// Filter mask of the single chunk (bit `i` set: filter `i` skipped), stored with the size;
        /// 0 when not stored.
        filter_mask: u32,
    },
    /// v4+: chunks stored back to back at the index address, no index structure.
    Implicit,
    /// v4+: fixed array with `page_bits` (log2 of data-block page elements).
    FixedArray {
        /// Page bits: log2 of the number of elements in a data block page (data blocks
        /// with more elements are paged).
        page_bits: u8,
    },
    /// v4+: extensible array.
    ExtensibleArray {
        /// Maximum number of bits: bits needed to store the largest number of elements the
        /// extensible array may hold.
        max_bits: u8,
        /// Index elements: number of elements stored directly in the index block.
        index_elements: u8,
        /// Minimum pointers: minimum number of data block pointers in a super block.
        min_pointers: u8,
        /// Minimum elements: minimum number of elements per data block.
        min_elements: u8,
        /// Page bits: log2 of the number of elements in a data block page.
        page_bits: u8,
    },
    /// v4+: v2 B-tree with record type 10 (unfiltered) or 11 (filtered).
    BTreeV2 {
        /// Size in bytes of every B-tree node.
        node_size: u32,
        /// Split percent: how full (as a percentage of capacity) a node must become before it is
        /// split.
        split_percent: u8,
        /// Merge percent: how empty (as a percentage of capacity) a node must become before it is
        /// merged with a sibling.
        merge_percent: u8,
    },
}

/// Everything needed to walk a chunk index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkIndexParams {
    /// Index type and its stored parameters.
    pub kind: ChunkIndexKind,
    /// Address of the index (or of the single/implicit chunk data); `None` when no
    /// chunk has been written yet.
    pub address: Option<u64>,
    /// Chunk dimensions in elements, one per dataspace dimension (the trailing
    /// element-size dimension of the layout message removed).
    pub chunk_dims: Vec<u64>,
    /// Current dataspace dimensions.
    pub dataset_dims: Vec<u64>,
    /// Maximum dimensions (`None` = unlimited).
    pub max_dims: Vec<Option<u64>>,
    /// Datatype size in bytes.
    pub element_size: u32,
    /// True when the dataset has a filter pipeline.
    pub filtered: bool,
    /// Layout message version (1..=5).
    pub layout_version: u8,
}

/// One stored chunk.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChunkRecord {
    /// Element coordinates of the chunk's first element (multiples of the chunk dims).
    pub offset: Vec<u64>,
    /// File address of the stored (possibly filtered) bytes.
    pub address: u64,
    /// Stored size in bytes.
    pub size: u64,
    /// Bit `i` set: filter `i` of the pipeline was skipped for this chunk.
    pub filter_mask: u32,
}

/// Check the prefix shared by fixed- and extensible-array blocks (signature, version 0,
/// client id, owning header address); the cursor is left after the header address.
pub(super) fn array_block_prefix<'a>(
    bytes: &'a [u8],
    at: u64,
    structure: &'static str,
    sig: &[u8; 4],
    sizes: Sizes,
    header: u64,
) -> Result<Cursor<'a>> {
    let mut c = Cursor::new(bytes, at, structure);
    c.signature(sig)?;
    let version = c.u8()?;
    if version != 0 {
        return Err(c.unsupported(format!("version {version}")));
    }
    c.u8()?;
    let owner = c.uint(usize::from(sizes.offset))?;
    if owner != header {
        return Err(c.malformed(format!("belongs to array {owner:#x}, not {header:#x}")));
    }
    Ok(c)
}
