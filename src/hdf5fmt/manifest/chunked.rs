//! Chunked datasets: every stored chunk from the chunk index (any index
//! type) as a byte range, refusing what one codec list cannot describe
//! (chunks that skipped a filter, unfiltered partial edge chunks).

use super::codecs::{self, Codec};
use super::{refuse, ChunkEntry, ChunkLocation};
use crate::dataset::Dataset;
use crate::error::Result;
use crate::messages::layout::Layout;

/// Chunk shape, stored chunks (grid order) and codecs of a chunked dataset.
pub(crate) fn entries(ds: &Dataset) -> Result<(Vec<u64>, Vec<ChunkEntry>, Vec<Codec>)> {
    let dims = ds
        .chunk_dims()
        .ok_or_else(|| refuse(ds, "chunked layout without chunk dimensions"))?
        .to_vec();
    let esize = u32::try_from(ds.dtype().size()).map_err(|_| refuse(ds, "element size"))?;
    let chunk_bytes = dims
        .iter()
        .try_fold(u64::from(esize), |a, &d| a.checked_mul(d))
        .ok_or_else(|| refuse(ds, "chunk size overflows"))?;
    let codecs = codecs::of(ds.filters(), ds.dtype(), chunk_bytes).map_err(|w| refuse(ds, w))?;
    let unfiltered_edges = !codecs.is_empty()
        && matches!(ds.layout(), Layout::Chunked { flags, .. } if flags & 1 != 0);
    let shape = ds.shape();
    let base = ds.file().superblock().base_address;
    let mut out = Vec::new();
    for c in ds.chunks()? {
        if c.filter_mask != 0 && !codecs.is_empty() {
            return Err(refuse(
                ds,
                format!(
                    "chunk {:?} skipped filters (mask {:#x}); one codec list cannot decode it",
                    c.coords, c.filter_mask
                ),
            ));
        }
        let partial = c
            .offset
            .iter()
            .zip(&dims)
            .zip(shape)
            .any(|((&o, &cd), &d)| o.saturating_add(cd) > d);
        if unfiltered_edges && partial {
            return Err(refuse(
                ds,
                format!("partial edge chunk {:?} is stored unfiltered", c.coords),
            ));
        }
        out.push(ChunkEntry {
            coords: c.coords,
            location: ChunkLocation::Range {
                offset: c
                    .address
                    .checked_add(base)
                    .ok_or_else(|| refuse(ds, "chunk address overflows"))?,
                length: c.size,
            },
        });
    }
    out.sort_by(|a, b| a.coords.cmp(&b.coords));
    out.dedup_by(|a, b| a.coords == b.coords);
    Ok((dims, out, codecs))
}
