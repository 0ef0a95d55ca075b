//! Single-chunk index (HDF5 File Format Specification IV.A.2.i, layout v4 index
//! type 1): the dataset is one chunk stored at the index address; a filtered
//! chunk's stored size and filter mask sit in the layout message.

use super::grid::Grid;
use super::{ChunkIndexParams, ChunkRecord};

/// The one chunk.
pub(super) fn chunk(
    params: &ChunkIndexParams,
    grid: &Grid,
    address: u64,
    filtered_size: u64,
    filter_mask: u32,
) -> ChunkRecord {
    let (size, mask) = if params.filtered {
        (filtered_size, filter_mask)
    } else {
        (grid.chunk_bytes, 0)
    };
    ChunkRecord {
        offset: vec![0; grid.rank()],
        address,
        size,
        filter_mask: mask,
    }
}
