//! Chunk index of layout versions 1–3: a v1 B-tree of raw-data chunk nodes
//! (HDF5 File Format Specification III.A.1, node type 1). Keys carry element
//! offsets (plus a trailing element-size dimension), stored size and mask.

use crate::btree_v1::chunk_entries;
use crate::error::{Error, Result};
use crate::source::Source;
use crate::Sizes;

use super::grid::Grid;
use super::{ChunkIndexParams, ChunkRecord};

pub(super) fn chunks(
    src: &dyn Source,
    sizes: Sizes,
    _params: &ChunkIndexParams,
    grid: &Grid,
    address: u64,
    push: &mut dyn FnMut(ChunkRecord) -> Result<()>,
) -> Result<()> {
    let rank = grid.rank();
    chunk_entries(src, sizes, address, rank + 1, &mut |key, child| {
        let offs = key.offsets.get(..rank).unwrap_or(&[]);
        let mut scaled = Vec::with_capacity(rank);
        for (&o, &c) in offs.iter().zip(&grid.chunk_dims) {
            if o % c != 0 {
                return Err(Error::malformed(
                    "v1 B-tree node",
                    address,
                    format!("chunk offset {offs:?} not on the chunk grid"),
                ));
            }
            scaled.push(o / c);
        }
        push(grid.record(&scaled, child, u64::from(key.size), key.filter_mask)?)
    })
}
