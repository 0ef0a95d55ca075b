//! The chunked read path: map a hyperslab onto the chunks it touches, decode
//! each touched chunk through the filter pipeline (in parallel with the
//! `parallel` feature) and copy the intersecting boxes into the caller's buffer
//! in C order. Missing chunks read as the fill value.

use std::borrow::Cow;
use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::fetch::plan::windows;
use crate::fetch::ByteRange;
use crate::selection::{for_each_in_box, intersect, touched_chunks};
use crate::selection::{Placement, Selection};
use crate::source::Source;
use crate::Hyperslab;
use crate::Sizes;
use purehdf_filters::{
    decode_pipeline, decode_pipeline_reusing, ChunkContext, DecodeScratch, FilterSpec,
};

use super::b2nd_window::{read_window, Window};
use super::cache::ChunkCache;
use super::grid::Grid;
use super::out_buf::{bad_box, OutBuf};
use super::strided::{Span, Strided};
use super::{chunks, implicit, ChunkIndexKind, ChunkIndexParams, ChunkRecord};

/// A chunk lookup built once per dataset: chunk coordinates (in chunk units) →
/// stored chunk. Implicit indexes are computed on demand.
#[derive(Clone, Debug)]
pub struct ChunkMap {
    grid: Grid,
    /// Identity of the dataset for [`ChunkCache`] keys (its index address).
    key: u64,
    lookup: Lookup,
    /// Layout v4 flag bit 0: partial edge chunks are stored without filters.
    unfiltered_edges: bool,
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
        Ok(ChunkMap {
            grid,
            key,
            lookup,
            unfiltered_edges: false,
        })
    }

    /// Say whether partial edge chunks skip the filter pipeline (layout message
    /// v4, flags bit 0: "do not filter partial edge chunks").
    pub fn with_unfiltered_edges(mut self, yes: bool) -> Self {
        self.unfiltered_edges = yes;
        self
    }

    /// True when the chunk at element offset `offset` sticks out of the dataspace.
    fn is_partial_edge(&self, offset: &[u64]) -> bool {
        offset
            .iter()
            .zip(&self.grid.chunk_dims)
            .zip(&self.grid.dims)
            .any(|((&o, &c), &d)| o.saturating_add(c) > d)
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

struct Job<'m> {
    record: Cow<'m, ChunkRecord>,
    /// Element coordinates of the chunk's first element, from its grid
    /// position (never from the record, so two jobs never overlap).
    origin: Vec<u64>,
}

fn chunk_error(key: u64, rec: &ChunkRecord, e: Error) -> Error {
    Error::Chunk {
        dataset: format!("chunk index {key:#x}"),
        coords: rec.offset.clone(),
        source: Box::new(e),
    }
}

/// What a read does with decoded chunks.
struct Plan<'a> {
    map: &'a ChunkMap,
    pipeline: &'a [FilterSpec],
    cache: Option<&'a ChunkCache>,
    dst: Placement<'a>,
    /// A stepped selection: `dst` is then its dense output (origin 0, shape
    /// the counts) and chunks are gathered from, not box-copied.
    strided: Option<&'a Strided>,
    elem: usize,
}

impl Plan<'_> {
    /// True when the chunk's filters are all skipped (stored bytes are the data).
    fn unfiltered(&self, rec: &ChunkRecord) -> bool {
        let skip_all = self.map.unfiltered_edges && self.map.is_partial_edge(&rec.offset);
        skip_all
            || !self
                .pipeline
                .iter()
                .enumerate()
                .any(|(i, _)| i >= 32 || rec.filter_mask & (1 << i) == 0)
    }

    /// True when the pipeline's only active stage is Blosc2.
    fn lone_blosc2(&self, rec: &ChunkRecord) -> bool {
        let mut active = self
            .pipeline
            .iter()
            .enumerate()
            .filter(|(i, _)| *i >= 32 || rec.filter_mask & (1 << i) == 0);
        match (active.next(), active.next()) {
            (Some((_, spec)), None) => spec.id == purehdf_filters::ids::BLOSC2,
            _ => false,
        }
    }

    /// Decode the chunk of `job` and copy its intersection with the selection
    /// into `out`; `scratch` is reused between chunks.
    fn run(
        &self,
        src: &dyn Source,
        job: &Job<'_>,
        out: &OutBuf,
        scratch: &mut DecodeScratch,
    ) -> Result<()> {
        let g = &self.map.grid;
        let rec = &job.record;
        let want = g.chunk_bytes as usize;
        let err = |e: Error| chunk_error(self.map.key, rec, e);
        let cp = Placement {
            origin: &job.origin,
            shape: &g.chunk_dims,
        };
        let spans: Option<Vec<Span>> = match self.strided {
            Some(sel) => {
                let scaled = job.origin.iter().zip(&g.chunk_dims).map(|(&o, &c)| o / c);
                let spans = scaled
                    .zip(&g.chunk_dims)
                    .enumerate()
                    .map(|(d, (ci, &c))| sel.span(d, ci, c))
                    .collect::<Option<Vec<Span>>>();
                match spans {
                    Some(s) => Some(s),
                    None => return Ok(()),
                }
            }
            None => None,
        };
        let boxed = match &spans {
            Some(_) => None,
            None => match intersect(cp, self.dst) {
                Some(b) => Some(b),
                None => return Ok(()),
            },
        };
        let short = |len: usize, what: &str| {
            err(Error::malformed(
                "chunk",
                rec.address,
                format!("{what} {len} bytes, chunk needs {want}"),
            ))
        };
        let copy = |bytes: &[u8]| -> Result<()> {
            if bytes.len() < want {
                return Err(short(bytes.len(), "holds"));
            }
            match (&boxed, &spans, self.strided) {
                (Some((blo, bhi)), _, _) => out.copy_box(bytes, cp, self.dst, blo, bhi, self.elem),
                (None, Some(spans), Some(sel)) => {
                    out.gather(bytes, &g.chunk_dims, sel, spans, self.elem)
                }
                _ => Err(bad_box()),
            }
        };
        if self.unfiltered(rec) {
            let stored = super::stored_bytes(src, rec).map_err(err)?;
            return copy(&stored);
        }
        if let Some(hit) = self.cache.and_then(|c| c.get(self.map.key, &rec.offset)) {
            return copy(&hit);
        }
        let stored = super::stored_bytes(src, rec).map_err(err)?;
        let ctx = ChunkContext::new(g.element_size as usize, want);
        // Chunks the selection only partly covers are likely read again by the
        // next patch: keep them decoded when the caller gave a cache.
        // (A chunk counts as covered when the selection holds all of it that
        // lies inside the dataset: edge chunks of whole reads stay uncached.)
        // (A stepped selection never covers a chunk it meets with a step
        // above 1, and is always read from whole decoded chunks.)
        let covered = match &boxed {
            Some((blo, bhi)) => {
                *blo == cp.origin.to_vec()
                    && bhi
                        .iter()
                        .zip(cp.origin)
                        .zip(cp.shape)
                        .zip(&g.dims)
                        .all(|(((&h, &o), &c), &d)| h == o.saturating_add(c).min(d))
            }
            None => false,
        };
        let reread = !covered
            && self
                .cache
                .is_some_and(|c| c.seen(self.map.key, &rec.offset));
        if let (Some((blo, bhi)), false, true) = (&boxed, reread, self.lone_blosc2(rec)) {
            // First touch: decode only the blocks the selection meets.
            let w = Window {
                chunk: cp,
                dst: self.dst,
                lo: blo,
                hi: bhi,
                elem: self.elem,
            };
            let (dec, block) = scratch.blosc2_parts();
            if read_window(&stored, &w, dec, block, out).map_err(err)? {
                return Ok(());
            }
        }
        if let (Some(c), true) = (self.cache, reread) {
            let decoded = decode_pipeline(self.pipeline, rec.filter_mask, &ctx, &stored)
                .map_err(|e| err(e.into()))?;
            if decoded.len() < want {
                return Err(short(decoded.len(), "decodes to"));
            }
            let decoded = Arc::new(decoded);
            c.insert(self.map.key, &rec.offset, decoded.clone());
            return copy(&decoded);
        }
        decode_pipeline_reusing(self.pipeline, rec.filter_mask, &ctx, &stored, scratch)
            .map_err(|e| err(e.into()))?;
        if scratch.out.len() < want {
            return Err(short(scratch.out.len(), "decodes to"));
        }
        copy(&scratch.out)
    }
}

/// The client data each stage is decoded with, as the HDF5 filter plugins read
/// it. Bitshuffle (32008) compresses only when `cd_values[4]` is 2 (LZ4) or 3
/// (Zstd) and plain-bitshuffles otherwise; a pipeline holding bitshuffle twice
/// gets hdf5plugin's `set_local` applied to the first stage twice (its values
/// appended again, so `cd_values[4]` becomes the major version, 4), and libhdf5
/// reads such chunks as plain bitshuffle. Other stages are used as stored.
pub fn as_plugins_read(pipeline: &[FilterSpec]) -> Cow<'_, [FilterSpec]> {
    let odd = |f: &FilterSpec| {
        f.id == purehdf_filters::ids::BITSHUFFLE
            && f.cd_values
                .get(4)
                .is_some_and(|&c| c != 0 && c != 2 && c != 3)
    };
    if !pipeline.iter().any(odd) {
        return Cow::Borrowed(pipeline);
    }
    Cow::Owned(
        pipeline
            .iter()
            .map(|f| {
                let mut f = f.clone();
                if odd(&f) {
                    f.cd_values.truncate(4);
                }
                f
            })
            .collect(),
    )
}

thread_local! {
    /// Each thread's decode buffers and inflate state, kept from chunk to
    /// chunk and from read to read (see [`with_scratch`]).
    static SCRATCH: std::cell::RefCell<DecodeScratch> = std::cell::RefCell::default();
}

/// A thread keeps its decode scratch after a read only while it holds at
/// most this many bytes (a few chunks of the usual sizes).
const KEEP_SCRATCH_BYTES: usize = 16 << 20;

/// Run `f` with this thread's decode scratch: chunk buffers and the inflate
/// window are allocated (and their pages faulted in) once per thread, not once
/// per chunk or per read. The scratch is taken out of the thread-local while
/// `f` runs, so a nested use on the same thread simply starts empty.
fn with_scratch<R>(f: impl FnOnce(&mut DecodeScratch) -> R) -> R {
    let mut s = SCRATCH.try_with(|c| c.take()).unwrap_or_default();
    let r = f(&mut s);
    if s.retained_bytes() <= KEEP_SCRATCH_BYTES {
        let _ = SCRATCH.try_with(|c| c.replace(s));
    }
    r
}

#[cfg(feature = "parallel")]
fn run_jobs(src: &dyn Source, plan: &Plan<'_>, jobs: &[Job<'_>], out: &OutBuf) -> Result<()> {
    use rayon::prelude::*;
    if jobs.len() < 2 || !purehdf_filters::threads::parallel() {
        return with_scratch(|scratch| {
            jobs.iter().try_for_each(|j| plan.run(src, j, out, scratch))
        });
    }
    jobs.par_iter()
        .try_for_each(|j| with_scratch(|scratch| plan.run(src, j, out, scratch)))
}

#[cfg(not(feature = "parallel"))]
fn run_jobs(src: &dyn Source, plan: &Plan<'_>, jobs: &[Job<'_>], out: &OutBuf) -> Result<()> {
    with_scratch(|scratch| jobs.iter().try_for_each(|j| plan.run(src, j, out, scratch)))
}

/// Run `jobs`; for sources that plan their reads (remote ones), a window at a
/// time: the stored ranges of a window's chunks (at most the source's
/// [`Source::prefetch_window`] bytes, chunks the decoded-chunk cache holds left
/// out) are prefetched as one batch, the window's chunks decoded from them,
/// and the window released, so memory stays bounded by one window. Sources
/// that pipeline ([`Source::pipeline_step`]) read in steps (at most that
/// size, smaller when that keeps [`Source::pipeline_depth`] steps in flight)
/// fetched on helper threads, each decoded as soon as it has arrived. Local sources run the
/// jobs directly.
fn run_planned(src: &dyn Source, plan: &Plan<'_>, jobs: &[Job<'_>], out: &OutBuf) -> Result<()> {
    if !src.wants_prefetch() {
        return run_jobs(src, plan, jobs, out);
    }
    let ranges: Vec<Option<ByteRange>> = jobs
        .iter()
        .map(|j| {
            let rec = &j.record;
            let cached = !plan.unfiltered(rec)
                && plan
                    .cache
                    .is_some_and(|c| c.get(plan.map.key, &rec.offset).is_some());
            (rec.size > 0 && !cached).then(|| ByteRange::new(rec.address, rec.size))
        })
        .collect();
    let step = src.pipeline_step();
    let depth = if step.is_some() {
        src.pipeline_depth()
    } else {
        1
    };
    let window = match step {
        Some(step) => {
            let total = ranges
                .iter()
                .flatten()
                .fold(0u64, |a, r| a.saturating_add(r.len));
            crate::fetch::pipeline::step_bytes(total, step, depth, src.prefetch_window())
        }
        None => src.prefetch_window(),
    };
    let spans = windows(&ranges, |r| *r, window, usize::MAX);
    let steps: Vec<Vec<ByteRange>> = spans
        .iter()
        .map(|w| {
            let got = ranges.get(w.clone()).unwrap_or_default();
            got.iter().flatten().copied().collect()
        })
        .collect();
    crate::fetch::pipeline::run_steps(src, &steps, depth, |i| {
        let w = spans.get(i).cloned().unwrap_or_default();
        run_jobs(src, plan, jobs.get(w).unwrap_or_default(), out)
    })
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
    let buf = OutBuf::new(out);
    read_into(
        src,
        map,
        pipeline,
        fill_value,
        Target::Box(selection),
        &buf,
        cache,
    )
}

/// [`read_chunked_with`] into memory that need not be initialised (a new
/// buffer does not have to be zeroed first). `Ok` means every byte of `out`
/// was written: the chunk boxes are disjoint and their byte count is checked
/// against `out.len()`; on `Err` the contents are unspecified.
pub fn read_chunked_uninit(
    src: &dyn Source,
    map: &ChunkMap,
    pipeline: &[FilterSpec],
    fill_value: Option<&[u8]>,
    selection: &Selection,
    out: &mut [MaybeUninit<u8>],
    cache: Option<&ChunkCache>,
) -> Result<()> {
    let buf = OutBuf::new_uninit(out);
    read_into(
        src,
        map,
        pipeline,
        fill_value,
        Target::Box(selection),
        &buf,
        cache,
    )?;
    if buf.written() != out.len() {
        return Err(Error::malformed(
            "chunked read",
            0,
            format!("{} of {} output bytes written", buf.written(), out.len()),
        ));
    }
    Ok(())
}

/// [`read_chunked_with`] into a new zeroed buffer of `n` bytes (`n` must
/// be the selection's size, checked as there): boxes that read as zeros
/// (zero chunks, missing chunks with a zero fill value) are not written again.
#[allow(clippy::too_many_arguments)]
pub fn read_chunked_vec_zeroed(
    src: &dyn Source,
    map: &ChunkMap,
    pipeline: &[FilterSpec],
    fill_value: Option<&[u8]>,
    selection: &Selection,
    n: usize,
    cache: Option<&ChunkCache>,
) -> Result<Vec<u8>> {
    let mut out = vec![0u8; n];
    crate::alloc::advise_huge_pages(&mut out);
    let mut buf = OutBuf::new(&mut out);
    buf.zeroed = true;
    read_into(
        src,
        map,
        pipeline,
        fill_value,
        Target::Box(selection),
        &buf,
        cache,
    )?;
    Ok(out)
}

/// What a read selects: a box, or a stepped hyperslab read into its dense
/// C-order output.
#[derive(Clone, Copy)]
enum Target<'a> {
    Box(&'a Selection),
    Steps(&'a Hyperslab),
}

/// Read the stepped selection `h` (`start + k * step` along each dimension)
/// through a prebuilt [`ChunkMap`] into `out`, the dense C-order array of
/// shape `h.count`: every chunk holding a selected element is decoded once
/// (in parallel, as [`read_chunked_with`]) and its elements gathered from it;
/// chunks holding none are not read. Unit steps read as the box they are.
pub fn read_chunked_strided(
    src: &dyn Source,
    map: &ChunkMap,
    pipeline: &[FilterSpec],
    fill_value: Option<&[u8]>,
    h: &Hyperslab,
    out: &mut [u8],
    cache: Option<&ChunkCache>,
) -> Result<()> {
    let buf = OutBuf::new(out);
    if h.step.iter().all(|&s| s == 1) {
        let sel = Selection::Hyperslab {
            start: h.start.clone(),
            count: h.count.clone(),
        };
        return read_into(
            src,
            map,
            pipeline,
            fill_value,
            Target::Box(&sel),
            &buf,
            cache,
        );
    }
    read_into(
        src,
        map,
        pipeline,
        fill_value,
        Target::Steps(h),
        &buf,
        cache,
    )
}

fn read_into(
    src: &dyn Source,
    map: &ChunkMap,
    pipeline: &[FilterSpec],
    fill_value: Option<&[u8]>,
    target: Target<'_>,
    out: &OutBuf,
    cache: Option<&ChunkCache>,
) -> Result<()> {
    let pipeline = &*as_plugins_read(pipeline);
    let g = &map.grid;
    let elem = g.element_size as usize;
    let (start, count, strided) = match target {
        Target::Box(selection) => {
            let (start, count) = selection.resolve(&g.dims).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "selection {selection:?} outside dataspace {:?}",
                    g.dims
                ))
            })?;
            (start, count, None)
        }
        Target::Steps(h) => {
            if h.count.contains(&0) && h.count.len() == g.dims.len() && out.len == 0 {
                return Ok(());
            }
            let sel = Strided::new(h, &g.dims)?;
            // The output is the dense array of the counts, placed at 0.
            (vec![0; g.dims.len()], sel.count.clone(), Some(sel))
        }
    };
    let n = count.iter().try_fold(1u64, |a, &c| a.checked_mul(c));
    let want = n.and_then(|n| n.checked_mul(g.element_size));
    if want != Some(out.len as u64) {
        return Err(Error::InvalidArgument(format!(
            "output buffer of {} bytes for {n:?} elements of {elem} bytes",
            out.len
        )));
    }
    if out.len == 0 {
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
    // Unstored chunks cost O(bytes of the selection): the stored chunks of
    // the selection are found from the records when there are fewer records
    // than touched chunks (a sparse index is never enumerated chunk by
    // chunk), and when any touched chunk is missing the whole selection is
    // filled once before the stored chunks are decoded over it.
    fn job<'m>(dims: &[u64], scaled: &[u64], record: Cow<'m, ChunkRecord>) -> Result<Job<'m>> {
        let origin = scaled
            .iter()
            .zip(dims)
            .map(|(&s, &c)| s.checked_mul(c))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| Error::InvalidArgument("chunk position overflows".into()))?;
        Ok(Job { record, origin })
    }
    let (lo, hi) = touched_chunks(&start, &count, &g.chunk_dims)
        .ok_or_else(|| Error::InvalidArgument("empty selection".into()))?;
    let touched = match &strided {
        Some(sel) => sel.touched(&g.chunk_dims),
        None => lo
            .iter()
            .zip(&hi)
            .try_fold(1u64, |a, (&l, &h)| a.checked_mul(h.saturating_sub(l))),
    };
    let holds = |scaled: &[u64]| match &strided {
        Some(sel) => sel.holds(scaled, &g.chunk_dims),
        None => {
            scaled.len() == lo.len()
                && scaled
                    .iter()
                    .zip(lo.iter().zip(&hi))
                    .all(|(&s, (&l, &h))| s >= l && s < h)
        }
    };
    let mut jobs = Vec::new();
    match &map.lookup {
        Lookup::Records(records) if touched.is_none_or(|t| (records.len() as u64) < t) => {
            for (scaled, record) in records {
                if holds(scaled) {
                    jobs.push(job(&g.chunk_dims, scaled, Cow::Borrowed(record))?);
                }
            }
            jobs.sort_by(|a, b| a.origin.cmp(&b.origin));
        }
        Lookup::Empty => {}
        _ => {
            let mut visit = |scaled: &[u64]| -> Result<()> {
                if let Some(record) = map.get(scaled) {
                    jobs.push(job(&g.chunk_dims, scaled, record)?);
                }
                Ok(())
            };
            match &strided {
                Some(sel) => sel.for_each_touched(&g.chunk_dims, &mut visit)?,
                None => for_each_in_box::<Error>(&lo, &hi, &mut visit)?,
            }
        }
    }
    let prefilled = touched != Some(jobs.len() as u64);
    if prefilled {
        let end: Vec<u64> = start
            .iter()
            .zip(&count)
            .map(|(&s, &c)| s.saturating_add(c))
            .collect();
        out.fill_box(dst, &start, &end, elem, Some(fill))?;
    }
    let plan = Plan {
        map,
        pipeline,
        cache,
        dst,
        strided: strided.as_ref(),
        elem,
    };
    if !prefilled {
        return run_planned(src, &plan, &jobs, out);
    }
    // Every byte was written by the fill; the decoded chunks overwrite parts.
    let all = out.written();
    run_planned(src, &plan, &jobs, out)?;
    out.written.store(all, Ordering::Release);
    Ok(())
}
