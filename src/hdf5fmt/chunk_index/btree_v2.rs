//! Chunk index of layout v4+ with a v2 B-tree (HDF5 File Format Specification
//! III.A.2, record types 10 and 11): records carry scaled chunk coordinates.

use crate::btree_v2::{records, BTreeV2};
use crate::error::{Error, Result};
use crate::source::Source;
use crate::Sizes;

use super::grid::Grid;
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
    if tree.total_records > grid.max_chunks {
        return Err(Error::Limit {
            structure: "v2 B-tree header",
            offset: address,
            what: "chunk records",
            value: tree.total_records,
            limit: grid.max_chunks,
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
