//! Chunk-by-chunk re-encoding for `h5 copy` (HDF5 File Format Specification
//! IV.A.2.i, chunked "Data Layout Message", and IV.A.2.l, "Filter Pipeline
//! Message"). A dataset keeping its chunk shape is copied one *stored* chunk
//! at a time: each is read (its own filter mask and unfiltered edge chunks
//! honoured by the reader), padded to a whole chunk with the fill value,
//! encoded with the new pipeline and handed to the writer as a raw chunk, so
//! unstored chunks stay unstored and memory holds one batch of chunks. A
//! dataset that becomes chunked (contiguous or compact before) is read one row
//! of chunks (a hyperslab spanning every dimension but the first) at a time,
//! and one that stays contiguous one slab of whole rows at a time.

use crate::chunk_index::{self, ChunkRecord};
use crate::cursor::bounded;
use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::limits;
use crate::selection::Selection;
use crate::write::chunks::{extract_chunk, run_pipeline};
use crate::write::set_local::set_local;
use crate::write::{DatasetId, FileWriter};
use purehdf_filters::{decode_pipeline, ChunkContext, FilterSpec};

use super::digest::{chunk_sha, DatasetDigest};

/// Bytes of decoded chunks one batch holds (at least one chunk per batch).
const BATCH_BYTES: u64 = 64 << 20;
/// Most chunks in one batch.
const BATCH_CHUNKS: usize = 256;

/// The copy's chunk shape and pipeline.
pub(super) struct Target {
    pub chunk: Vec<u64>,
    /// The pipeline as the writer stores it (set-local parameters filled in).
    pub filters: Vec<FilterSpec>,
    pub elem: usize,
    /// One element of fill value (empty: zeros).
    pub fill: Vec<u8>,
}

/// What a chunk-wise copy did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Done {
    pub chunks: usize,
    /// Stored chunks beyond the (shrunken) extent, left out.
    pub outside: usize,
}

impl Target {
    /// `filters` as given by the user or the source; completed as the writer
    /// does, or with `as_stored` (the source's own pipeline, stored
    /// unchanged) used as the filter plugins read it.
    pub(super) fn new(
        ds: &Dataset,
        chunk: &[u64],
        filters: &[FilterSpec],
        fill: Option<&[u8]>,
        as_stored: bool,
    ) -> Self {
        let dtype = ds.dtype();
        let filters = if as_stored {
            chunk_index::read::as_plugins_read(filters).into_owned()
        } else {
            filters.iter().map(|f| set_local(f, dtype, chunk)).collect()
        };
        Target {
            chunk: chunk.to_vec(),
            filters,
            elem: usize::try_from(dtype.size()).unwrap_or(0),
            fill: fill.map(<[u8]>::to_vec).unwrap_or_default(),
        }
    }

    fn chunk_bytes(&self) -> Result<usize> {
        let n = self
            .chunk
            .iter()
            .try_fold(self.elem as u64, |a, &c| a.checked_mul(c))
            .ok_or_else(|| Error::InvalidArgument("chunk too large".into()))?;
        bounded(n, limits::MAX_DECODED, "h5 copy", 0, "chunk size")
    }

    fn batch_len(&self) -> Result<usize> {
        let per = self.chunk_bytes()?.max(1) as u64;
        Ok(((BATCH_BYTES / per) as usize).clamp(1, BATCH_CHUNKS))
    }

    /// Encode one whole chunk. With `digest`, the encoded chunk is decoded
    /// at once and must equal `raw` (else an error), and the SHA-256 of its
    /// encoded bytes is returned with it (see [`super::digest`]).
    fn encode(&self, raw: Vec<u8>, coords: &[u64], digest: bool) -> Result<Encoded> {
        let ctx = ChunkContext::new(self.elem, raw.len());
        let failed = |e: Error| Error::Chunk {
            dataset: String::new(),
            coords: coords.to_vec(),
            source: Box::new(e),
        };
        if !digest {
            let (bytes, mask) = run_pipeline(&self.filters, &ctx, raw).map_err(failed)?;
            return Ok((bytes, mask, None));
        }
        let (bytes, mask) = run_pipeline(&self.filters, &ctx, raw.clone()).map_err(failed)?;
        let back = decode_pipeline(&self.filters, mask, &ctx, &bytes)
            .map_err(|e| failed(Error::from(e)))?;
        if back != raw {
            return Err(failed(Error::InvalidArgument(
                "the re-encoded chunk does not decode to the source bytes".into(),
            )));
        }
        let sha = chunk_sha(&bytes);
        Ok((bytes, mask, Some(sha)))
    }
}

/// An encoded chunk, its filter mask and (when asked) the SHA-256 of its
/// encoded bytes, taken once it was checked to decode to the source.
type Encoded = (Vec<u8>, u32, Option<[u8; 32]>);

/// Write one encoded chunk and record its digest.
fn put(
    w: &mut FileWriter,
    d: DatasetId,
    coords: &[u64],
    enc: Encoded,
    dig: &mut Option<&mut DatasetDigest>,
) -> Result<()> {
    let (bytes, mask, sha) = enc;
    w.write_raw_chunk(d, coords, bytes, mask)?;
    if let (Some(g), Some(sha)) = (dig.as_deref_mut(), sha) {
        g.push(coords.to_vec(), mask, sha);
    }
    Ok(())
}

/// Bind `dig` (when there is one) to the target's decoding; whether digests
/// are wanted.
fn bind(dig: &mut Option<&mut DatasetDigest>, t: &Target) -> bool {
    if let Some(g) = dig.as_deref_mut() {
        g.bind(&t.filters, &t.chunk, t.elem);
    }
    dig.is_some()
}

/// Elements of the box `count` (checked).
fn elements(count: &[u64]) -> Option<u64> {
    count.iter().try_fold(1u64, |a, &c| a.checked_mul(c))
}

/// Read the box at `start` of extent `count` into a fresh buffer.
fn read_box(ds: &Dataset, start: &[u64], count: &[u64], elem: usize) -> Result<Vec<u8>> {
    let n = elements(count)
        .and_then(|n| n.checked_mul(elem as u64))
        .ok_or_else(|| Error::InvalidArgument("selection too large".into()))?;
    let n = bounded(n, limits::MAX_DECODED, "h5 copy", ds.address(), "slab size")?;
    let mut buf = vec![0u8; n];
    let sel = Selection::Hyperslab {
        start: start.to_vec(),
        count: count.to_vec(),
    };
    ds.read_raw_uncached(&sel, &mut buf)?;
    Ok(buf)
}

/// Scaled chunk coordinates of a stored chunk, or `None` when it lies beyond
/// the dataset's extent (left by a shrink, unreadable).
fn inside(r: &ChunkRecord, dims: &[u64], chunk: &[u64]) -> Option<Vec<u64>> {
    if r.offset.len() < dims.len() {
        return None;
    }
    let mut coords = Vec::with_capacity(dims.len());
    for ((&o, &d), &c) in r.offset.iter().zip(dims).zip(chunk) {
        if o >= d {
            return None;
        }
        coords.push(o / c.max(1));
    }
    Some(coords)
}

/// Re-encode every stored chunk of `ds` (whose chunk shape is `t.chunk`) into
/// `d`; `dig` collects the chunk digests.
pub(super) fn stored_chunks(
    ds: &Dataset,
    w: &mut FileWriter,
    d: DatasetId,
    t: &Target,
    mut dig: Option<&mut DatasetDigest>,
) -> Result<Done> {
    let want = bind(&mut dig, t);
    let Some(params) = ds.chunk_params() else {
        return Err(Error::InvalidArgument("dataset is not chunked".into()));
    };
    let file = ds.file();
    let recs = chunk_index::chunks(file.source(), file.sizes(), &params)?;
    let dims = ds.shape();
    let mut done = Done::default();
    let mut todo = Vec::with_capacity(recs.len());
    for r in &recs {
        match inside(r, dims, &t.chunk) {
            Some(c) => todo.push((r.offset.clone(), c)),
            None => done.outside += 1,
        }
    }
    for batch in todo.chunks(t.batch_len()?) {
        let encoded = purehdf_filters::threads::try_map(batch, |(start, coords)| {
            let count: Vec<u64> = start
                .iter()
                .zip(dims)
                .zip(&t.chunk)
                .map(|((&s, &d), &c)| c.min(d - s))
                .collect();
            let part = read_box(ds, start, &count, t.elem)?;
            // a whole chunk is already the chunk: no padded copy
            let whole = if count == t.chunk {
                part
            } else {
                let zero = vec![0; count.len()];
                extract_chunk(&part, &count, &t.chunk, &zero, t.elem, &t.fill)
            };
            t.encode(whole, coords, want)
        })?;
        for ((_, coords), enc) in batch.iter().zip(encoded) {
            put(w, d, coords, enc, &mut dig)?;
            done.chunks += 1;
        }
    }
    Ok(done)
}

/// Write every chunk of `d` from `ds` (whose layout differs from the copy's)
/// read as slabs of whole rows of chunks (a hyperslab spanning every
/// dimension but the first), as many rows per slab as fit in one batch, so
/// the chunks of a slab are encoded in parallel; `dig` collects the chunk
/// digests.
pub(super) fn by_rows(
    ds: &Dataset,
    w: &mut FileWriter,
    d: DatasetId,
    t: &Target,
    mut dig: Option<&mut DatasetDigest>,
) -> Result<Done> {
    // Visits every row: held to the data budget (issue 16).
    ds.check_budget()?;
    let want = bind(&mut dig, t);
    let dims = ds.shape().to_vec();
    let rank = dims.len();
    if rank == 0 || t.chunk.len() != rank || t.chunk.contains(&0) {
        return Err(Error::InvalidArgument(
            "chunk shape does not match the dataset".into(),
        ));
    }
    let mut done = Done::default();
    let batch_len = t.batch_len()?;
    let (d0, c0) = (dims.first().copied(), t.chunk.first().copied());
    let (Some(d0), Some(c0)) = (d0, c0) else {
        return Ok(done);
    };
    // chunk grid across one row (1 along the first dimension)
    let across: Vec<u64> = dims
        .iter()
        .zip(&t.chunk)
        .skip(1)
        .map(|(&d, &c)| d.div_ceil(c))
        .collect();
    // bytes of one row of chunks (c0 indices of the first dimension)
    let row_bytes = elements(dims.get(1..).unwrap_or_default())
        .and_then(|n| n.checked_mul(c0))
        .and_then(|n| n.checked_mul(t.elem as u64))
        .ok_or_else(|| Error::InvalidArgument("dataset too large".into()))?;
    let rows_per_slab = (BATCH_BYTES / row_bytes.max(1)).max(1);
    let rows = d0.div_ceil(c0);
    let mut row = 0u64;
    while row < rows {
        let k = rows_per_slab.min(rows - row);
        let mut start = vec![0u64; rank];
        let mut count = dims.clone();
        if let (Some(s), Some(c)) = (start.first_mut(), count.first_mut()) {
            *s = row * c0;
            *c = (k * c0).min(d0 - row * c0);
        }
        let slab = read_box(ds, &start, &count, t.elem)?;
        let grid: Vec<u64> = std::iter::once(k).chain(across.iter().copied()).collect();
        let cells: Vec<Vec<u64>> = (0..elements(&grid).unwrap_or(0))
            .map(|n| unravel(n, &grid))
            .collect();
        for batch in cells.chunks(batch_len) {
            let encoded = purehdf_filters::threads::try_map(batch, |local| {
                let raw = extract_chunk(&slab, &count, &t.chunk, local, t.elem, &t.fill);
                t.encode(raw, local, want)
            })?;
            for (local, enc) in batch.iter().zip(encoded) {
                let mut coords = local.clone();
                if let Some(c) = coords.first_mut() {
                    *c += row;
                }
                put(w, d, &coords, enc, &mut dig)?;
                done.chunks += 1;
            }
        }
        row += k;
    }
    Ok(done)
}

/// Copy a dataset that stays contiguous (simple dataspace, rank >= 1) one slab
/// of whole rows along the first dimension at a time; returns the slabs read.
pub(super) fn contiguous_by_slabs(
    ds: &Dataset,
    w: &mut FileWriter,
    d: DatasetId,
    elem: usize,
) -> Result<usize> {
    ds.check_budget()?;
    let dims = ds.shape().to_vec();
    let Some((&d0, rest)) = dims.split_first() else {
        return Err(Error::InvalidArgument("scalar dataset".into()));
    };
    let row_bytes = elements(rest)
        .and_then(|n| n.checked_mul(elem as u64))
        .ok_or_else(|| Error::InvalidArgument("dataset too large".into()))?;
    let rows_per = (BATCH_BYTES / row_bytes.max(1)).max(1);
    let mut slabs = 0;
    let mut row = 0u64;
    while row < d0 {
        let n = rows_per.min(d0 - row);
        let mut start = vec![0u64; dims.len()];
        let mut count = dims.clone();
        if let (Some(s), Some(c)) = (start.first_mut(), count.first_mut()) {
            *s = row;
            *c = n;
        }
        let slab = read_box(ds, &start, &count, elem)?;
        w.write_contiguous_part(d, &slab)?;
        slabs += 1;
        row += n;
    }
    Ok(slabs)
}

/// C-order coordinates of cell `k` of `grid`.
fn unravel(mut k: u64, grid: &[u64]) -> Vec<u64> {
    let mut out = vec![0u64; grid.len()];
    for (o, &g) in out.iter_mut().zip(grid).rev() {
        let g = g.max(1);
        *o = k % g;
        k /= g;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unravel_is_c_order() {
        assert_eq!(unravel(0, &[1, 2, 3]), vec![0, 0, 0]);
        assert_eq!(unravel(4, &[1, 2, 3]), vec![0, 1, 1]);
        assert_eq!(unravel(5, &[2, 3]), vec![1, 2]);
    }

    #[test]
    fn chunks_beyond_the_extent_are_left_out() {
        let rec = |offset: Vec<u64>| ChunkRecord {
            offset,
            address: 0,
            size: 1,
            filter_mask: 0,
        };
        assert_eq!(
            inside(&rec(vec![8, 4]), &[10, 5], &[4, 4]),
            Some(vec![2, 1])
        );
        assert_eq!(inside(&rec(vec![12, 0]), &[10, 5], &[4, 4]), None);
        assert_eq!(inside(&rec(vec![0]), &[10, 5], &[4, 4]), None);
    }
}
