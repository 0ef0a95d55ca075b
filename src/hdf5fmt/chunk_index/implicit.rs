//! Implicit index (HDF5 File Format Specification IV.A.2.i, layout v4 index
//! type 2): no index structure; every chunk of the maximum extent is allocated,
//! back to back from the index address, in row-major order of the chunk grid.
//! Only unfiltered datasets use it, so every chunk has the full chunk size.

use crate::error::{Error, Result};

use super::grid::{ravel, unravel, Grid};
use super::{ChunkIndexParams, ChunkRecord};

const IMPLICIT: &str = "implicit chunk index";

/// The address of the chunk at `scaled`.
pub(super) fn address_of(grid: &Grid, base: u64, scaled: &[u64]) -> Option<u64> {
    let idx = ravel(scaled, &grid.max_extents())?;
    base.checked_add(idx.checked_mul(grid.chunk_bytes)?)
}

/// Every chunk inside the current extent.
pub(super) fn chunks(
    params: &ChunkIndexParams,
    grid: &Grid,
    address: u64,
    push: &mut dyn FnMut(ChunkRecord) -> Result<()>,
) -> Result<()> {
    if params.filtered {
        return Err(Error::malformed(
            IMPLICIT,
            address,
            "implicit index on a filtered dataset",
        ));
    }
    let n = grid
        .per_dim
        .iter()
        .try_fold(1u64, |a, &c| a.checked_mul(c))
        .unwrap_or(u64::MAX);
    if n > grid.max_chunks {
        return Err(Error::Limit {
            structure: IMPLICIT,
            offset: address,
            what: "chunks",
            value: n,
            limit: grid.max_chunks,
        });
    }
    for i in 0..n {
        let scaled = unravel(i, &grid.per_dim)
            .ok_or_else(|| Error::malformed(IMPLICIT, address, "empty chunk grid"))?;
        let a = address_of(grid, address, &scaled).ok_or(Error::Overflow {
            structure: IMPLICIT,
            offset: address,
            what: "chunk address",
        })?;
        push(grid.record(&scaled, a, grid.chunk_bytes, 0)?)?;
    }
    Ok(())
}
