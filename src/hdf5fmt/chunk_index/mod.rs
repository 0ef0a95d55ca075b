//! Chunk indexes (HDF5 File Format Specification IV.A.2.i, "Data Layout Message",
//! and the index structures of section III): v1 B-tree, single chunk, implicit,
//! fixed array, extensible array and v2 B-tree. Each maps chunk coordinates to
//! the address, stored size and filter mask of the chunk's bytes.
//!
//! Callers:
//! - [`chunks`] / [`list_chunks`] list the stored chunks (element offsets,
//!   address, stored size, mask); [`stored_bytes`] borrows one chunk's bytes.
//! - [`read_chunked`] reads a selection, walking the index each call. For
//!   repeated reads build a [`ChunkMap`] once and call [`read_chunked_with`],
//!   optionally with a [`ChunkCache`] of decoded chunks. A layout message v4
//!   with flags bit 0 ("partial edge chunks are not filtered") needs
//!   `ChunkMap::with_unfiltered_edges(true)`.

use crate::error::Result;
use crate::source::Source;
use crate::Sizes;

mod b2nd_window;
mod btree_v1;
mod btree_v2;
pub mod cache;
pub(crate) mod extensible_array;
pub(crate) mod fixed_array;
pub mod grid;
mod implicit;
mod index;
mod out_buf;
pub mod read;
mod record;
mod single;
mod strided;

pub use cache::ChunkCache;
pub use index::{chunks, list_chunks, stored_bytes};
pub use read::{read_chunked_with, ChunkMap};
use record::array_block_prefix;
pub use record::{ChunkIndexKind, ChunkIndexParams, ChunkRecord};

/// Read the `selection` of a chunked dataset into `out` (C order, `element_size`
/// bytes per element, exactly `selection.num_elements() * element_size` bytes):
/// only the chunks the selection touches are decoded, through `pipeline`;
/// unwritten chunks read as `fill_value` (zeros when `None`).
pub fn read_chunked(
    src: &dyn Source,
    sizes: Sizes,
    params: &ChunkIndexParams,
    pipeline: &[purehdf_filters::FilterSpec],
    fill_value: Option<&[u8]>,
    selection: &crate::selection::Selection,
    out: &mut [u8],
) -> Result<()> {
    let map = ChunkMap::build(src, sizes, params)?;
    read_chunked_with(src, &map, pipeline, fill_value, selection, out, None)
}

#[cfg(test)]
mod tests;
