//! The chunked read path: map a hyperslab onto the chunks it touches, decode
//! each touched chunk through the filter pipeline (in parallel with the
//! `parallel` feature) and copy the intersecting boxes into the caller's buffer
//! in C order. Missing chunks read as the fill value.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::filters::{decode_pipeline, ChunkContext, FilterSpec};
use crate::hdf5fmt::selection::{copy_box, fill_box, for_each_in_box, intersect, touched_chunks};
use crate::hdf5fmt::selection::{Placement, Selection};
use crate::hdf5fmt::source::Source;
use crate::hdf5fmt::Sizes;

use super::cache::ChunkCache;
use super::grid::Grid;
use super::{chunks, implicit, ChunkIndexKind, ChunkIndexParams, ChunkRecord};

/// Bytes of decoded chunks held at once by one batch of parallel decodes.
const BATCH_BYTES: u64 = 256 << 20;

/// A chunk lookup built once per dataset: chunk coordinates (in chunk units) →
/// stored chunk. Implicit indexes are computed on demand.
#[derive(Clone, Debug)]
pub struct ChunkMap {
    grid: Grid,
    /// Identity of the dataset for [`ChunkCache`] keys (its index address).
    key: u64,
    lookup: Lookup,
}

#[derive(Clone, Debug)]
enum Lookup {
    Records(HashMap<Vec<u64>, ChunkRecord>),
    Implicit(u64),
    Empty,
}

impl ChunkMap {
    /// Walk the index of `params` once.
    pub fn build(src: &dyn Source, sizes: Sizes, params: &ChunkIndexParams) -> Result<Self> {
        let grid = Grid::new(params)?;
        let key = params.address.unwrap_or(u64::MAX);
        let lookup = match (&params.kind, params.address) {
            (_, None) => Lookup::Empty,
            (ChunkIndexKind::Implicit, Some(a)) if !params.filtered => Lookup::Implicit(a),
            _ => {
                let mut map = HashMap::new();
                for r in chunks(src, sizes, params)? {
                    let scaled: Vec<u64> = r
                        .offset
                        .iter()
                        .zip(&grid.chunk_dims)
                        .map(|(&o, &c)| o / c)
                        .collect();
                    map.insert(scaled, r);
                }
                Lookup::Records(map)
            }
        };
        Ok(ChunkMap { grid, key, lookup })
    }

    /// The validated chunk grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The stored chunk at `scaled` (chunk units), if written.
    pub fn get(&self, scaled: &[u64]) -> Option<Cow<'_, ChunkRecord>> {
        match &self.lookup {
            Lookup::Records(m) => m.get(scaled).map(Cow::Borrowed),
            Lookup::Implicit(base) => {
                let a = implicit::address_of(&self.grid, *base, scaled)?;
                self.grid
                    .record(scaled, a, self.grid.chunk_bytes, 0)
                    .ok()
                    .map(Cow::Owned)
            }
            Lookup::Empty => None,
        }
    }
}

/// Decoded bytes of one chunk: borrowed from the source, or owned.
enum Decoded<'s> {
    Stored(Cow<'s, [u8]>),
    Shared(Arc<Vec<u8>>),
}

impl Decoded<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Decoded::Stored(c) => c,
            Decoded::Shared(a) => a,
        }
    }
}

struct Job<'m> {
    record: Cow<'m, ChunkRecord>,
}

fn chunk_error(key: u64, rec: &ChunkRecord, e: Error) -> Error {
    Error::Chunk {
        dataset: format!("chunk index {key:#x}"),
        coords: rec.offset.clone(),
        source: Box::new(e),
    }
}

fn decode_one<'s>(
    src: &'s dyn Source,
    map: &ChunkMap,
    pipeline: &[FilterSpec],
    rec: &ChunkRecord,
    cache: Option<&ChunkCache>,
) -> Result<Decoded<'s>> {
    let g = &map.grid;
    let want = g.chunk_bytes as usize;
    let active = pipeline
        .iter()
        .enumerate()
        .any(|(i, _)| i >= 32 || rec.filter_mask & (1 << i) == 0);
    if !active {
        let stored = super::stored_bytes(src, rec).map_err(|e| chunk_error(map.key, rec, e))?;
        if stored.len() < want {
            let e = Error::malformed(
                "chunk",
                rec.address,
                format!("{} bytes stored, chunk needs {want}", stored.len()),
            );
            return Err(chunk_error(map.key, rec, e));
        }
        return Ok(Decoded::Stored(stored));
    }
    if let Some(hit) = cache.and_then(|c| c.get(map.key, &rec.offset)) {
        return Ok(Decoded::Shared(hit));
    }
    let stored = super::stored_bytes(src, rec).map_err(|e| chunk_error(map.key, rec, e))?;
    let ctx = ChunkContext::new(g.element_size as usize, want);
    let out = decode_pipeline(pipeline, rec.filter_mask, &ctx, &stored)
        .map_err(|e| chunk_error(map.key, rec, e))?;
    if out.len() < want {
        let e = Error::malformed(
            "chunk",
            rec.address,
            format!("decodes to {} bytes, chunk needs {want}", out.len()),
        );
        return Err(chunk_error(map.key, rec, e));
    }
    let out = Arc::new(out);
    if let Some(c) = cache {
        c.insert(map.key, &rec.offset, out.clone());
    }
    Ok(Decoded::Shared(out))
}

#[cfg(feature = "parallel")]
fn decode_batch<'s>(
    src: &'s dyn Source,
    map: &ChunkMap,
    pipeline: &[FilterSpec],
    jobs: &[Job<'_>],
    cache: Option<&ChunkCache>,
) -> Vec<Result<Decoded<'s>>> {
    use rayon::prelude::*;
    if pipeline.is_empty() || jobs.len() < 2 {
        return jobs
            .iter()
            .map(|j| decode_one(src, map, pipeline, &j.record, cache))
            .collect();
    }
    jobs.par_iter()
        .map(|j| decode_one(src, map, pipeline, &j.record, cache))
        .collect()
}

#[cfg(not(feature = "parallel"))]
fn decode_batch<'s>(
    src: &'s dyn Source,
    map: &ChunkMap,
    pipeline: &[FilterSpec],
    jobs: &[Job<'_>],
    cache: Option<&ChunkCache>,
) -> Vec<Result<Decoded<'s>>> {
    jobs.iter()
        .map(|j| decode_one(src, map, pipeline, &j.record, cache))
        .collect()
}

/// Read `selection` through a prebuilt [`ChunkMap`] (see [`super::read_chunked`]),
/// optionally through a decoded-chunk cache.
pub fn read_chunked_with(
    src: &dyn Source,
    map: &ChunkMap,
    pipeline: &[FilterSpec],
    fill_value: Option<&[u8]>,
    selection: &Selection,
    out: &mut [u8],
    cache: Option<&ChunkCache>,
) -> Result<()> {
    let g = &map.grid;
    let elem = g.element_size as usize;
    let (start, count) = selection.resolve(&g.dims).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "selection {selection:?} outside dataspace {:?}",
            g.dims
        ))
    })?;
    let n = count.iter().try_fold(1u64, |a, &c| a.checked_mul(c));
    let want = n.and_then(|n| n.checked_mul(g.element_size));
    if want != Some(out.len() as u64) {
        return Err(Error::InvalidArgument(format!(
            "output buffer of {} bytes for {n:?} elements of {elem} bytes",
            out.len()
        )));
    }
    if out.is_empty() {
        return Ok(());
    }
    let zero = vec![0u8; elem];
    let fill = match fill_value {
        Some(f) if f.len() == elem => f,
        Some(f) => {
            return Err(Error::InvalidArgument(format!(
                "fill value of {} bytes for {elem}-byte elements",
                f.len()
            )))
        }
        None => &zero,
    };
    let dst = Placement {
        origin: &start,
        shape: &count,
    };
    let (lo, hi) = touched_chunks(&start, &count, &g.chunk_dims)
        .ok_or_else(|| Error::InvalidArgument("empty selection".into()))?;
    let mut jobs = Vec::new();
    let mut missing = Vec::new();
    for_each_in_box::<Error>(&lo, &hi, |scaled| {
        match map.get(scaled) {
            Some(record) => jobs.push(Job { record }),
            None => missing.push(scaled.to_vec()),
        }
        Ok(())
    })?;
    let bad_box = || Error::malformed("chunked read", 0, "chunk box outside its buffers");
    for scaled in &missing {
        let origin: Vec<u64> = scaled
            .iter()
            .zip(&g.chunk_dims)
            .map(|(&s, &c)| s * c)
            .collect();
        let cp = Placement {
            origin: &origin,
            shape: &g.chunk_dims,
        };
        if let Some((blo, bhi)) = intersect(cp, dst) {
            fill_box(out, dst, &blo, &bhi, fill).ok_or_else(bad_box)?;
        }
    }
    let per_batch = (BATCH_BYTES / g.chunk_bytes.max(1)).clamp(1, 4096) as usize;
    for batch in jobs.chunks(per_batch) {
        let decoded = decode_batch(src, map, pipeline, batch, cache);
        for (job, d) in batch.iter().zip(decoded) {
            let d = d?;
            let cp = Placement {
                origin: &job.record.offset,
                shape: &g.chunk_dims,
            };
            if let Some((blo, bhi)) = intersect(cp, dst) {
                copy_box(d.bytes(), cp, out, dst, &blo, &bhi, elem).ok_or_else(bad_box)?;
            }
        }
    }
    Ok(())
}
