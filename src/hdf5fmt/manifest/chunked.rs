//! Chunked datasets: every stored chunk from the chunk index (any index
//! type) as a byte range; chunks one codec list cannot decode as stored
//! (an optional filter skipped, an unfiltered partial edge chunk) are
//! re-encoded through the whole pipeline and inlined.

use super::codecs::{self, Codec};
use super::{refuse, ChunkEntry, ChunkLocation};
use crate::dataset::Dataset;
use crate::error::Result;
use crate::messages::layout::Layout;
use purehdf_filters::{self as filters, ChunkContext};

/// Most bytes of re-encoded chunks inlined per dataset.
const MAX_INLINED: u64 = 64 << 20;

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
    let specs = ds.filters();
    let ctx = ChunkContext::new(
        usize::try_from(esize).map_err(|_| refuse(ds, "element size"))?,
        usize::try_from(chunk_bytes).map_err(|_| refuse(ds, "chunk size"))?,
    );
    let mut inlined = 0u64;
    for c in ds.chunks()? {
        let partial = c
            .offset
            .iter()
            .zip(&dims)
            .zip(shape)
            .any(|((&o, &cd), &d)| o.saturating_add(cd) > d);
        let odd = !codecs.is_empty() && (c.filter_mask != 0 || (unfiltered_edges && partial));
        let location = if odd {
            // skipped stages (an optional filter that failed) or an unfiltered
            // edge chunk: re-encoded through the whole pipeline and inlined,
            // every stage applied even where the filter would decline again
            // (LZF on incompressible bytes), since Zarr cannot skip a stage
            let stored = ds.file().source().read("chunk", c.address, c.size)?;
            let mask = if unfiltered_edges && partial {
                u32::MAX
            } else {
                c.filter_mask
            };
            let plain = filters::decode_pipeline(specs, mask, &ctx, &stored)?;
            let bytes = filters::encode_pipeline_unskipped(specs, &ctx, &plain).map_err(|e| {
                refuse(
                    ds,
                    format!(
                        "chunk {:?} skipped filters and cannot be re-encoded: {e}",
                        c.coords
                    ),
                )
            })?;
            inlined = inlined.saturating_add(bytes.len() as u64);
            if inlined > MAX_INLINED {
                return Err(refuse(ds, "too many chunks that skipped filters to inline"));
            }
            ChunkLocation::Inline(bytes)
        } else {
            ChunkLocation::Range {
                offset: c
                    .address
                    .checked_add(base)
                    .ok_or_else(|| refuse(ds, "chunk address overflows"))?,
                length: c.size,
            }
        };
        out.push(ChunkEntry {
            coords: c.coords,
            location,
        });
    }
    out.sort_by(|a, b| a.coords.cmp(&b.coords));
    out.dedup_by(|a, b| a.coords == b.coords);
    Ok((dims, out, codecs))
}
