//! Walking a chunk index: every stored chunk of a dataset, whichever index
//! kind holds them, and one chunk's stored bytes.

use std::borrow::Cow;

use super::record::{ChunkIndexKind, ChunkIndexParams, ChunkRecord};
use super::{btree_v1, btree_v2, extensible_array, fixed_array, grid, implicit, single};
use crate::error::{Error, Result};
use crate::source::Source;
use crate::Sizes;

/// Every stored chunk of the dataset, in index order. Unwritten chunks are absent.
pub fn chunks(
    src: &dyn Source,
    sizes: Sizes,
    params: &ChunkIndexParams,
) -> Result<Vec<ChunkRecord>> {
    let g = grid::Grid::new(params)?;
    let Some(address) = params.address else {
        return Ok(Vec::new());
    };
    // Along an unlimited dimension an index may hold chunks past the extent
    // this reader saw (an SWMR writer appends them before it grows the
    // dataspace; libhdf5 keeps some past a shrunk extent): there only the
    // record budget bounds the walk.
    let limit = if g.max_per_dim.iter().any(Option::is_none) {
        grid::MAX_CHUNK_RECORDS
    } else {
        g.max_chunks
    };
    let mut out = Vec::new();
    let mut push = |r: ChunkRecord| -> Result<()> {
        if out.len() as u64 >= limit {
            return Err(Error::Limit {
                structure: "chunk index",
                offset: address,
                what: "chunks",
                value: out.len() as u64 + 1,
                limit,
            });
        }
        out.push(r);
        Ok(())
    };
    match &params.kind {
        ChunkIndexKind::BTreeV1 => btree_v1::chunks(src, sizes, params, &g, address, &mut push)?,
        ChunkIndexKind::SingleChunk {
            filtered_size,
            filter_mask,
        } => push(single::chunk(
            params,
            &g,
            address,
            *filtered_size,
            *filter_mask,
        ))?,
        ChunkIndexKind::Implicit => implicit::chunks(params, &g, address, &mut push)?,
        ChunkIndexKind::FixedArray { .. } => {
            fixed_array::chunks(src, sizes, params, &g, address, &mut push)?
        }
        ChunkIndexKind::ExtensibleArray { .. } => {
            extensible_array::chunks(src, sizes, params, &g, address, &mut push)?
        }
        ChunkIndexKind::BTreeV2 { .. } => {
            btree_v2::chunks(src, sizes, params, &g, address, &mut push)?
        }
    }
    Ok(out)
}

/// The raw chunk list (coordinates, file offset, stored size, mask): the same as
/// [`chunks`], named for callers that copy stored chunks without decoding them.
pub fn list_chunks(
    src: &dyn Source,
    sizes: Sizes,
    params: &ChunkIndexParams,
) -> Result<Vec<ChunkRecord>> {
    chunks(src, sizes, params)
}

/// Borrow a chunk's stored (still filtered) bytes: zero-copy when the source is in memory.
pub fn stored_bytes<'s>(src: &'s dyn Source, record: &ChunkRecord) -> Result<Cow<'s, [u8]>> {
    crate::cursor::bounded(
        record.size,
        crate::limits::MAX_READ,
        "chunk",
        record.address,
        "stored chunk size",
    )?;
    src.read("chunk", record.address, record.size)
}
