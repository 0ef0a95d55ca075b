//! Window reads of Blosc2 B2ND chunks (filter 32026; `docs/filters-format.md`
//! Blosc2, the `b2nd` metalayer): decode only the blocks of a chunk that meet
//! the selection and write each block's part straight into the caller's
//! buffer — byte-shuffled blocks are interleaved from their byte planes in
//! place — so neither a whole decoded chunk nor a second copy is needed.
//!
//! Anything this path does not handle (plain frames, several chunks per
//! frame, delta, memcpyed blocks, mismatched geometry) answers `Ok(false)` and
//! the caller decodes the chunk whole.

use crate::error::Result;
use crate::limits;
use crate::selection::{for_each_in_box, Placement};
use purehdf_filters::bitshuffle::{
    bitunshuffle_rows, bitunshuffle_rows_fits, bitunshuffle_rows_streamed,
};
use purehdf_filters::blosc2;
use purehdf_filters::blosc2::b2nd::Meta;
use purehdf_filters::blosc2::chunk::{filter, Block, ChunkDecoder, Header};
use purehdf_filters::blosc2::frame::{self, ChunkRef, Frame};
use purehdf_filters::shuffle::{
    unshuffle2_rows, unshuffle2_rows_streamed, unshuffle2_rows_streamed_group,
    unshuffle_planes_uninit, Rows3,
};

use super::out_buf::{byte_run, OutBuf};

/// Outputs of at least this many bytes (a whole large image, far beyond the
/// caches) get their B2ND rows written with streaming stores when they are
/// line aligned ([`unshuffle2_rows_streamed`], [`bitunshuffle_rows_streamed`]);
/// smaller ones (patches) stay in cache for the caller.
const STREAM_MIN: usize = 8 << 20;

/// Blocks side by side along the last dimension that one task decodes
/// together when the rows are streamed: their rows then reach memory as
/// runs of several lines instead of single lines one row stride apart,
/// which this kind of store pattern writes markedly faster
/// (`notes/bench/bench-2026-12-06b.md`, "Grouped rows"). Each block of a group holds its own
/// decoder, so a group keeps this many blocks' planes at once.
const GROUP_MAX: u64 = 4;

/// Where one chunk's window goes.
pub(super) struct Window<'a> {
    /// The chunk's placement in dataset coordinates.
    pub chunk: Placement<'a>,
    /// The caller's buffer placement (the selection).
    pub dst: Placement<'a>,
    /// The box (absolute coordinates) where chunk and selection meet.
    pub lo: &'a [u64],
    pub hi: &'a [u64],
    pub elem: usize,
}

/// The B2ND geometry of a one-chunk frame whose blocks decode independently.
struct Blocked<'f> {
    meta: Meta,
    chunk: &'f [u8],
}

fn blocked<'f>(f: &Frame<'f>, w: &Window<'_>) -> Result<Option<Blocked<'f>>> {
    let Some(m) = f.metalayer("b2nd").or_else(|| f.metalayer("caterva")) else {
        return Ok(None);
    };
    let meta = Meta::parse(m)?;
    let rank = w.chunk.shape.len();
    let same_chunk = meta.chunkshape.len() == rank
        && meta.blockshape.len() == rank
        && meta
            .chunkshape
            .iter()
            .zip(w.chunk.shape)
            .all(|(&a, &b)| a as u64 == b)
        && meta.shape.as_slice() == w.chunk.shape;
    let ts = f.typesize;
    let padded = meta.check_one_chunk(ts).ok();
    if !same_chunk || ts != w.elem || f.nchunks() != 1 || padded.is_none() {
        return Ok(None);
    }
    let ChunkRef::Data(c) = f.chunk(0)? else {
        return Ok(None);
    };
    let h = Header::parse(c)?;
    let block_bytes = meta.block_bytes(ts);
    let special = h.extended && h.special() != 0;
    let whole_only = h.memcpyed() || special || h.filters.contains(&filter::DELTA);
    let independent = !whole_only && block_bytes == Some(h.blocksize) && Some(h.nbytes) == padded;
    Ok(independent.then_some(Blocked { meta, chunk: c }))
}

/// Decode the blocks of the Blosc2 frame `input` that meet `w` into `out`.
/// `Ok(false)`: not a block-decodable B2ND frame (nothing was written).
pub(super) fn read_window(
    input: &[u8],
    w: &Window<'_>,
    dec: &mut ChunkDecoder,
    scratch: &mut Vec<u8>,
    out: &OutBuf,
) -> Result<bool> {
    if !frame::is_frame(input) {
        return Ok(false);
    }
    let f = Frame::parse(input, limits::MAX_DECODED as usize)?;
    if let (Some(m), 1) = (f.metalayer("b2nd"), f.nchunks()) {
        // A zero chunk: fill the window, decode nothing.
        if let ChunkRef::Special { kind, len } = f.chunk(0)? {
            // Zeros (or uninitialised) in the usual geometry: the chunk's
            // block count (frame block size) matches the padded chunk's.
            let fits = |meta: Meta| {
                let padded = meta.check_one_chunk(f.typesize).unwrap_or(0);
                kind & 5 != 0
                    && meta.shape.as_slice() == w.chunk.shape
                    && meta
                        .shape
                        .iter()
                        .zip(&meta.chunkshape)
                        .all(|(&s, &c)| s == c as u64)
                    && f.typesize == w.elem
                    && padded > 0
                    && blosc2::special_blocks_fit(&f, &meta, f.typesize, padded, len)
            };
            if Meta::parse(m).is_ok_and(fits) {
                out.fill_zero(w.dst, w.lo, w.hi, w.elem)?;
                return Ok(true);
            }
        }
    }
    let Some(b) = blocked(&f, w)? else {
        return Ok(false);
    };
    let rank = w.chunk.shape.len();
    let bs: Vec<u64> = b.meta.blockshape.iter().map(|&x| x as u64).collect();
    let nb: Vec<u64> = w
        .chunk
        .shape
        .iter()
        .zip(&bs)
        .map(|(&c, &s)| c.div_ceil(s))
        .collect();
    // Blocks (in block units) the window touches.
    let mut first = Vec::with_capacity(rank);
    let mut last = Vec::with_capacity(rank);
    for d in 0..rank {
        let rel_lo = w.lo[d] - w.chunk.origin[d];
        let rel_hi = w.hi[d] - w.chunk.origin[d];
        first.push(rel_lo / bs[d]);
        last.push(rel_hi.div_ceil(bs[d]).min(nb[d]));
    }
    let Some(block_bytes) = b.meta.block_bytes(w.elem) else {
        return Ok(false);
    };
    let grid = BlockGrid {
        chunk: b.chunk,
        bs,
        nb,
        block_bytes,
    };
    let group = if rank == 3 && w.elem == 2 && out.len >= STREAM_MIN {
        GROUP_MAX
    } else {
        1
    };
    let runs = Runs::new(&first, &last, group);
    #[cfg(feature = "parallel")]
    if parallel_blocks(&grid, w, &runs, out)? {
        return Ok(true);
    }
    if group == 1 {
        for_each_in_box(&first, &last, |g| one_block(&grid, w, g, dec, scratch, out))?;
    } else {
        let mut lease = Lease::take();
        let mut g = vec![0u64; rank];
        for_each_in_box(&runs.first, &runs.last, |r| {
            let count = runs.place(r, &mut g);
            block_run(&grid, w, &g, count, lease.states(count), out)
        })?;
    }
    Ok(true)
}

/// The blocks a window touches, as runs of at most `group` blocks along the
/// last dimension: run `r` (in the box `first .. last`, the last coordinate
/// counting runs) starts at block [`Runs::place`] and covers `count` blocks.
struct Runs {
    first: Vec<u64>,
    last: Vec<u64>,
    /// The first block along the last dimension, and one past the last.
    lo: u64,
    hi: u64,
    group: u64,
}

impl Runs {
    fn new(first: &[u64], last: &[u64], group: u64) -> Self {
        let (mut f, mut l) = (first.to_vec(), last.to_vec());
        let (lo, hi) = match (first.last(), last.last()) {
            (Some(&a), Some(&b)) => (a, b.max(a)),
            _ => (0, 0),
        };
        let group = group.max(1);
        if let (Some(a), Some(b)) = (f.last_mut(), l.last_mut()) {
            *a = 0;
            *b = (hi - lo).div_ceil(group);
        }
        Runs {
            first: f,
            last: l,
            lo,
            hi,
            group,
        }
    }

    /// Write run `r`'s first block into `g` (same rank); returns its block count.
    fn place(&self, r: &[u64], g: &mut [u64]) -> usize {
        g.copy_from_slice(r);
        let Some(x) = g.last_mut() else {
            return 0;
        };
        let start = self.lo + *x * self.group;
        *x = start;
        self.hi.saturating_sub(start).min(self.group) as usize
    }

    /// How many runs there are (`None` on overflow).
    #[cfg(feature = "parallel")]
    fn count(&self) -> Option<u64> {
        self.first
            .iter()
            .zip(&self.last)
            .try_fold(1u64, |a, (&f, &l)| a.checked_mul(l.saturating_sub(f)))
    }
}

/// Decode the `count` blocks from `g` on along the last dimension and write
/// their parts of the window: together through [`group_rows`] when they can
/// be, else one by one with the first state.
fn block_run(
    grid: &BlockGrid<'_>,
    w: &Window<'_>,
    g: &[u64],
    count: usize,
    states: &mut [BlockState],
    out: &OutBuf,
) -> Result<()> {
    if count >= 2 && group_rows(grid, w, g, &mut states[..count], out)? {
        return Ok(());
    }
    let Some(st) = states.first_mut() else {
        return Ok(());
    };
    let mut gk = g.to_vec();
    let rank = gk.len();
    for k in 0..count as u64 {
        gk[rank - 1] = g[rank - 1] + k;
        one_block(grid, w, &gk, &mut st.dec, &mut st.scratch, out)?;
    }
    Ok(())
}

/// Where block `g` (block units) sits: its index in the chunk, its origin
/// in dataset coordinates and the part `lo .. hi` of the window inside it.
fn block_box(
    grid: &BlockGrid<'_>,
    w: &Window<'_>,
    g: &[u64],
) -> (usize, Vec<u64>, Vec<u64>, Vec<u64>) {
    let rank = grid.bs.len();
    let mut k = 0u64;
    let mut borigin = vec![0u64; rank];
    for d in 0..rank {
        k = k * grid.nb[d] + g[d];
        borigin[d] = w.chunk.origin[d] + g[d] * grid.bs[d];
    }
    let lo: Vec<u64> = (0..rank).map(|d| w.lo[d].max(borigin[d])).collect();
    let hi: Vec<u64> = (0..rank)
        .map(|d| w.hi[d].min(borigin[d] + grid.bs[d]))
        .collect();
    (k as usize, borigin, lo, hi)
}

/// The `states.len()` blocks from `g` on along the last dimension, each a
/// byte-shuffled block of 2-byte items whose rows in the buffer follow the
/// previous block's (the same geometry moved one block width on), decoded
/// each by its own state and written together by the grouped streaming
/// kernel. `Ok(false)`: the blocks do not fit that pattern; nothing was
/// written (some blocks may have been decoded).
fn group_rows(
    grid: &BlockGrid<'_>,
    w: &Window<'_>,
    g: &[u64],
    states: &mut [BlockState],
    out: &OutBuf,
) -> Result<bool> {
    let rank = g.len();
    let count = states.len();
    let mut gk = g.to_vec();
    let mut rows: Option<Rows3> = None;
    let mut index = Vec::with_capacity(count);
    for k in 0..count {
        gk[rank - 1] = g[rank - 1] + k as u64;
        let (idx, borigin, lo, hi) = block_box(grid, w, &gk);
        let bp = Placement {
            origin: &borigin,
            shape: &grid.bs,
        };
        let Some(r) = rows3(bp, w.dst, &lo, &hi) else {
            return Ok(false);
        };
        match rows {
            None => rows = Some(r),
            Some(r0) => {
                let Some(dst0) = r0.n.checked_mul(k).and_then(|s| s.checked_add(r0.dst0)) else {
                    return Ok(false);
                };
                if r != (Rows3 { dst0, ..r0 }) {
                    return Ok(false);
                }
            }
        }
        index.push(idx);
    }
    let Some(r0) = rows else {
        return Ok(false);
    };
    let fits = r0
        .dst_end()
        .and_then(|e| e.checked_add(r0.n.checked_mul(count - 1)?))
        .and_then(|e| e.checked_mul(2))
        .is_some_and(|e| e <= out.len);
    if !fits || out.len < STREAM_MIN {
        return Ok(false);
    }
    let mut planes: Vec<[&[u8]; 2]> = Vec::with_capacity(count);
    for (st, &idx) in states.iter_mut().zip(&index) {
        match st.dec.block_planes(grid.chunk, idx)?.as_deref() {
            Some(&[p0, p1]) if p0.len() == p1.len() => planes.push([p0, p1]),
            _ => return Ok(false),
        }
    }
    // SAFETY: the last block's rows end inside the buffer (`fits`); the
    // rows are those of these blocks' boxes within this job's chunk box,
    // which no other job writes (see `OutBuf`).
    let done = unsafe { unshuffle2_rows_streamed_group(&planes, &r0, out.ptr.cast::<u8>()) };
    if done {
        out.add_written(r0.elements() * 2 * count);
    }
    Ok(done)
}

/// The block geometry of one B2ND chunk, shared by its block decodes.
struct BlockGrid<'f> {
    /// The chunk's bytes (one Blosc2 chunk).
    chunk: &'f [u8],
    /// Block shape and blocks per dimension.
    bs: Vec<u64>,
    nb: Vec<u64>,
    /// Bytes of one whole block.
    block_bytes: usize,
}

/// Most blocks of one window decoded as separate tasks: more are decoded on
/// the calling thread, so the list of block coordinates stays small
/// whatever block shape a file declares.
#[cfg(feature = "parallel")]
const MAX_PARALLEL_BLOCKS: u64 = 1 << 14;

/// Decode the blocks `first .. last` (block units) of `grid` as separate
/// tasks on the thread pool, so that a selection meeting few chunks still
/// keeps every thread busy. `Ok(false)`: not worth it (no pool, one block,
/// or more than [`MAX_PARALLEL_BLOCKS`]); nothing was written.
#[cfg(feature = "parallel")]
fn parallel_blocks(
    grid: &BlockGrid<'_>,
    w: &Window<'_>,
    runs: &Runs,
    out: &OutBuf,
) -> Result<bool> {
    use rayon::prelude::*;
    let count = runs.count();
    let rank = runs.first.len();
    if !count.is_some_and(|c| (2..=MAX_PARALLEL_BLOCKS).contains(&c))
        || rank == 0
        || !purehdf_filters::threads::parallel()
    {
        return Ok(false);
    }
    let mut coords = Vec::with_capacity(count.unwrap_or(0) as usize * rank);
    for_each_in_box::<crate::error::Error>(&runs.first, &runs.last, |r| {
        coords.extend_from_slice(r);
        Ok(())
    })?;
    coords.par_chunks(rank).try_for_each_init(
        || (Lease::take(), vec![0u64; rank]),
        |(lease, g), r| {
            let count = runs.place(r, g);
            block_run(grid, w, g, count, lease.states(count), out)
        },
    )?;
    Ok(true)
}

/// The decoder and scratch of one block.
#[derive(Default)]
struct BlockState {
    dec: ChunkDecoder,
    scratch: Vec<u8>,
}

thread_local! {
    /// Block states left by finished tasks on this thread (a task nested in
    /// another's wait takes a second set), at most [`SPARE_DECODERS`] sets.
    static SPARE: std::cell::RefCell<Vec<Vec<BlockState>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Sets of spare block states a thread keeps.
const SPARE_DECODERS: usize = 2;

/// Block states for one task (one per block of a run), borrowed from this
/// thread's spares and given back when dropped.
struct Lease(Vec<BlockState>);

impl Lease {
    fn take() -> Self {
        let spare = SPARE.try_with(|s| s.borrow_mut().pop()).ok().flatten();
        Lease(spare.unwrap_or_default())
    }

    /// At least one state, and `n` when `n` is more.
    fn states(&mut self, n: usize) -> &mut [BlockState] {
        let n = n.max(1);
        while self.0.len() < n {
            self.0.push(BlockState::default());
        }
        &mut self.0[..n]
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let set = std::mem::take(&mut self.0);
        if set.is_empty() {
            return;
        }
        let _ = SPARE.try_with(|s| {
            let mut v = s.borrow_mut();
            if v.len() < SPARE_DECODERS {
                v.push(set);
            }
        });
    }
}

/// Decode block `g` (block units) of `grid` and write its part of the window.
fn one_block(
    grid: &BlockGrid<'_>,
    w: &Window<'_>,
    g: &[u64],
    dec: &mut ChunkDecoder,
    scratch: &mut Vec<u8>,
    out: &OutBuf,
) -> Result<()> {
    let block_bytes = grid.block_bytes;
    let (k, borigin, lo, hi) = block_box(grid, w, g);
    let bp = Placement {
        origin: &borigin,
        shape: &grid.bs,
    };
    if let Some(planes) = dec.block_planes(grid.chunk, k)? {
        if planes.len() == w.elem {
            return out.interleave_box(&planes, bp, w.dst, &lo, &hi);
        }
    }
    match dec.block_bytes(grid.chunk, k)? {
        Some(Block::Bytes(bytes)) if bytes.len() == block_bytes => {
            return out.copy_box(bytes, bp, w.dst, &lo, &hi, w.elem);
        }
        Some(Block::Byte(v)) => return out.byte_box(w.dst, &lo, &hi, w.elem, v),
        _ => {}
    }
    // The whole block in the box: undo its bit transpose straight into
    // the rows (the geometry is checked before decoding, so no block is
    // decoded twice).
    if w.elem <= 2 {
        let fits = rows3(bp, w.dst, &lo, &hi)
            .is_some_and(|g| bitunshuffle_rows_fits(block_bytes, w.elem, &g));
        if fits {
            if let Some(bits) = dec.block_bitshuffled(grid.chunk, k, w.elem)? {
                if bits.len() == block_bytes
                    && out.bitunshuffle_box(bits, w.elem, bp, w.dst, &lo, &hi)
                {
                    return Ok(());
                }
            }
        }
    }
    scratch.resize(block_bytes, 0);
    dec.decode_single_block(grid.chunk, k, scratch)?;
    out.copy_box(scratch, bp, w.dst, &lo, &hi, w.elem)
}

impl OutBuf {
    /// Whether the rows of `g`, in elements of `elem` bytes, end inside the
    /// buffer (no overflow on the way): what every row kernel needs first.
    fn holds_rows(&self, g: &Rows3, elem: usize) -> bool {
        g.dst_end()
            .and_then(|e| e.checked_mul(elem))
            .is_some_and(|e| e <= self.len)
    }

    /// Set every byte of the box `lo .. hi` of the buffer placed at `dp` to
    /// `v` (a block of one repeated byte, e.g. the background of a
    /// labelmap): in 3-D row by row with inline stores, skipped when the
    /// buffer is known to hold zeros and `v` is 0.
    fn byte_box(
        &self,
        dp: Placement<'_>,
        lo: &[u64],
        hi: &[u64],
        elem: usize,
        v: u8,
    ) -> Result<()> {
        if v == 0 && self.zeroed {
            return Ok(());
        }
        if let Some(g) = rows3(dp, dp, lo, hi) {
            let row = g.n.checked_mul(elem);
            if let (Some(row), true) = (row, self.holds_rows(&g, elem)) {
                for o in 0..g.outer {
                    for i in 0..g.inner {
                        // No overflow: `dst_end` computed the largest such
                        // offset (plus `n`) with checked arithmetic.
                        let at = (g.dst0 + o * g.ds[0] + i * g.ds[1]) * elem;
                        // SAFETY: `at + row <= dst_end * elem <= len`
                        // (`holds_rows`), so the row lies inside the buffer; it
                        // belongs to this block's box within this job's chunk
                        // box, which no other job writes (see `OutBuf`).
                        let run = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at), row) };
                        byte_run(run, v);
                    }
                }
                self.add_written(g.elements() * elem);
                return Ok(());
            }
        }
        self.fill_box(dp, lo, hi, elem, Some(&vec![v; elem]))
    }

    /// Interleave the byte planes of a block placed at `bp` (`planes[j][i]` =
    /// byte `j` of item `i`) into the box `lo .. hi` of the buffer placed at `dp`.
    fn interleave_box(
        &self,
        planes: &[&[u8]],
        bp: Placement<'_>,
        dp: Placement<'_>,
        lo: &[u64],
        hi: &[u64],
    ) -> Result<()> {
        let ts = planes.len();
        let items = planes.first().map_or(0, |p| p.len());
        if ts == 0 || planes.iter().any(|p| p.len() != items) {
            return Err(crate::error::Error::malformed(
                "Blosc2 block",
                0,
                "byte planes of different lengths",
            ));
        }
        if let ([p0, p1], Some(g)) = (planes, rows3(bp, dp, lo, hi)) {
            // int16 and friends in a 3-D box: one kernel call per block.
            let fits = self.holds_rows(&g, 2);
            let in_planes = g.src_end().is_some_and(|e| e <= items);
            if fits && in_planes {
                let dst = self.ptr.cast::<u8>();
                let done = if self.len >= STREAM_MIN {
                    // SAFETY: `dst` is valid for the `2 · g.dst_end()` bytes the kernel may
                    // write: `fits` checked that the rows end inside the buffer of `self.len`
                    // bytes. The rows are the box of this block within this job's chunk box,
                    // which no other job writes or reads (see `OutBuf`).
                    unsafe { unshuffle2_rows_streamed(p0, p1, &g, dst) }
                } else {
                    // SAFETY: as for the streamed call: `fits` keeps the rows inside the
                    // buffer, and no other job touches this job's chunk box (see `OutBuf`).
                    unsafe { unshuffle2_rows(p0, p1, &g, dst) }
                };
                if done {
                    self.add_written(g.elements() * 2);
                    return Ok(());
                }
            }
        }
        if let [p0, p1] = planes {
            // int16 and friends: the common case, without a plane vector.
            return self.for_runs(bp, dp, lo, hi, 2, items * 2, &mut |s, run| {
                if run.len() % 2 != 0 {
                    return None;
                }
                let (i, n) = (s / 2, run.len() / 2);
                let end = i.checked_add(n)?;
                unshuffle_planes_uninit(&[p0.get(i..end)?, p1.get(i..end)?], run);
                Some(())
            });
        }
        let mut sub: Vec<&[u8]> = planes.to_vec();
        self.for_runs(bp, dp, lo, hi, ts, items * ts, &mut |s, run| {
            if run.len() % ts != 0 {
                return None;
            }
            let (i, n) = (s / ts, run.len() / ts);
            for (p, full) in sub.iter_mut().zip(planes) {
                *p = full.get(i..i.checked_add(n)?)?;
            }
            unshuffle_planes_uninit(&sub, run);
            Some(())
        })
    }
}

impl OutBuf {
    /// Undo the bit transpose of a whole bitshuffled block of `ts`-byte
    /// items (1 or 2, placed at `bp`) straight into the box `lo .. hi` of
    /// the buffer placed at `dp`. `false`, writing nothing, when the box does
    /// not cover the block or the geometry does not suit the kernel: the
    /// caller decodes the block into scratch and copies instead.
    fn bitunshuffle_box(
        &self,
        bits: &[u8],
        ts: usize,
        bp: Placement<'_>,
        dp: Placement<'_>,
        lo: &[u64],
        hi: &[u64],
    ) -> bool {
        let Some(g) = rows3(bp, dp, lo, hi) else {
            return false;
        };
        let fits = self.holds_rows(&g, ts);
        let dst = self.ptr.cast::<u8>();
        let done = fits
            && if self.len >= STREAM_MIN {
                // SAFETY: reached only when `fits` holds, so `dst` is valid for the
                // `ts · g.dst_end()` bytes the kernel may write (the rows end inside the
                // buffer). The rows are the box of this block within this job's chunk box,
                // which no other job writes or reads (see `OutBuf`).
                unsafe { bitunshuffle_rows_streamed(bits, ts, &g, dst) }
            } else {
                // SAFETY: as for the streamed call: `fits` keeps the rows inside the buffer,
                // and no other job touches this job's chunk box (see `OutBuf`).
                unsafe { bitunshuffle_rows(bits, ts, &g, dst) }
            };
        if done {
            self.add_written(g.elements() * ts);
            return true;
        }
        false
    }
}

/// The rows of the box `lo .. hi` (rank 3) copied from an array placed at `sp`
/// into one placed at `dp`, in elements; `None` unless the box is rank 3 and
/// lies inside both arrays.
fn rows3(sp: Placement<'_>, dp: Placement<'_>, lo: &[u64], hi: &[u64]) -> Option<Rows3> {
    let u = |x: u64| usize::try_from(x).ok();
    let inside = |p: Placement<'_>| -> Option<([usize; 3], [usize; 3])> {
        let (mut off, mut shape) = ([0usize; 3], [0usize; 3]);
        for d in 0..3 {
            let (o, s) = (*p.origin.get(d)?, *p.shape.get(d)?);
            let (l, h) = (*lo.get(d)?, *hi.get(d)?);
            if l < o || h < l || h > o.checked_add(s)? {
                return None;
            }
            off[d] = u(l - o)?;
            shape[d] = u(s)?;
        }
        Some((off, shape))
    };
    if lo.len() != 3 || hi.len() != 3 || sp.shape.len() != 3 || dp.shape.len() != 3 {
        return None;
    }
    let (so, ss) = inside(sp)?;
    let (d_o, ds) = inside(dp)?;
    let start = |o: [usize; 3], s: [usize; 3]| -> Option<usize> {
        o[0].checked_mul(s[1])?
            .checked_add(o[1])?
            .checked_mul(s[2])?
            .checked_add(o[2])
    };
    Some(Rows3 {
        n: u(hi[2] - lo[2])?,
        outer: u(hi[0] - lo[0])?,
        inner: u(hi[1] - lo[1])?,
        src0: start(so, ss)?,
        ss: [ss[1].checked_mul(ss[2])?, ss[2]],
        dst0: start(d_o, ds)?,
        ds: [ds[1].checked_mul(ds[2])?, ds[2]],
    })
}
