//! Chunk index of layout v4+ with a v2 B-tree (HDF5 File Format Specification
//! III.A.2, record types 10 and 11): records carry scaled chunk coordinates.

use crate::btree_v2::{records, BTreeV2};
use crate::error::{Error, Result};
use crate::source::Source;
use crate::Sizes;

use super::grid::{Grid, MAX_CHUNK_RECORDS};
use super::{ChunkIndexParams, ChunkRecord};

pub(super) fn chunks(
    src: &dyn Source,
    sizes: Sizes,
    params: &ChunkIndexParams,
    grid: &Grid,
    address: u64,
    push: &mut dyn FnMut(ChunkRecord) -> Result<()>,
) -> Result<()> {
    let tree = BTreeV2::open(src, sizes, address)?;
    let want = if params.filtered { 11 } else { 10 };
    if tree.record_type != want {
        return Err(Error::malformed(
            "v2 B-tree header",
            address,
            format!("record type {}, expected {want}", tree.record_type),
        ));
    }
    // Along an unlimited dimension a tree may hold chunks past the extent this
    // reader saw (an SWMR writer appends them before it grows the dataspace):
    // there only the record budget bounds the walk.
    let limit = if grid.max_per_dim.iter().any(Option::is_none) {
        MAX_CHUNK_RECORDS
    } else {
        grid.max_chunks
    };
    if tree.total_records > limit {
        return Err(Error::Limit {
            structure: "v2 B-tree header",
            offset: address,
            what: "chunk records",
            value: tree.total_records,
            limit,
        });
    }
    let rank = grid.rank();
    tree.for_each_record(src, sizes, &mut |raw| {
        let r = records::chunk(raw, sizes, rank, params.filtered)?;
        let Some(a) = r.address else {
            return Ok(());
        };
        let size = r.size.unwrap_or(grid.chunk_bytes);
        push(grid.record(&r.scaled, a, size, r.filter_mask)?)
    })
}
