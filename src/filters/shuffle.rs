//! Byte shuffle: the HDF5 shuffle filter (id 2, `docs/filters-format.md` §2.2)
//! and the byte-transpose kernels that Blosc1/Blosc2 use (§3.9.1).
//!
//! Forward, `n = len / s` elements of `s` bytes: output byte `j·n + i` = input
//! byte `i·s + j`; the `len mod s` trailing bytes are copied unchanged.
//! Each kernel has a portable scalar version and, on x86-64, SSE2/AVX2
//! versions chosen at run time; all produce identical bytes.

use std::mem::MaybeUninit;

use crate::error::{Error, Result};
use crate::ChunkContext;

/// Undo the HDF5 shuffle filter; `cd_values[0]` is the element size.
pub fn decode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let ts = element_size(cd_values, ctx)?;
    let mut out = vec![0u8; input.len()];
    unshuffle(input, &mut out, ts);
    Ok(out)
}

/// Apply the HDF5 shuffle filter.
pub fn encode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let ts = element_size(cd_values, ctx)?;
    let mut out = vec![0u8; input.len()];
    shuffle(input, &mut out, ts);
    Ok(out)
}

fn element_size(cd_values: &[u32], ctx: &ChunkContext) -> Result<usize> {
    match cd_values.first() {
        Some(&v) => {
            usize::try_from(v).map_err(|_| Error::filter(0, "shuffle", "element size does not fit"))
        }
        None if ctx.element_size > 0 => Ok(ctx.element_size),
        None => Err(Error::filter(0, "shuffle", "missing element size")),
    }
}

/// Byte-shuffle `src` into `dst` with element size `ts` (`dst` gets
/// `min(src.len(), dst.len())` bytes; callers pass equal lengths).
pub fn shuffle(src: &[u8], dst: &mut [u8], ts: usize) {
    let len = src.len().min(dst.len());
    let (src, dst) = (&src[..len], &mut dst[..len]);
    let n = len.checked_div(ts).unwrap_or(0);
    if ts <= 1 || n <= 1 {
        dst.copy_from_slice(src);
        return;
    }
    let body = n * ts;
    #[cfg(target_arch = "x86_64")]
    {
        if ts == 2 {
            let (p0, p1) = dst[..body].split_at_mut(n);
            shuffle2(&src[..body], p0, p1);
            dst[body..].copy_from_slice(&src[body..]);
            return;
        }
        if ts == 4 && crate::cpu::ssse3() {
            // SAFETY: SSSE3 is available (checked above); the kernel bounds every access.
            let done = unsafe { x86::shuffle4_ssse3(&src[..body], &mut dst[..body], n) };
            for (j, plane) in dst[..body].chunks_exact_mut(n).enumerate() {
                for (d, s) in plane[done..]
                    .iter_mut()
                    .zip(src[4 * done..body].iter().skip(j).step_by(4))
                {
                    *d = *s;
                }
            }
            dst[body..].copy_from_slice(&src[body..]);
            return;
        }
    }
    shuffle_scalar_body(&src[..body], &mut dst[..body], ts, n);
    dst[body..].copy_from_slice(&src[body..]);
}

/// Byte shuffle of 2-byte elements: even bytes to `p0`, odd bytes to `p1`
/// (`min(p0.len(), p1.len(), src.len() / 2)` elements).
fn shuffle2(src: &[u8], p0: &mut [u8], p1: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::cpu::avx2() {
            // SAFETY: AVX2 is available (checked above); the kernel bounds every access.
            unsafe { x86::shuffle2_avx2(src, p0, p1) };
            return;
        }
        // SAFETY: SSE2 is part of x86-64; the kernel bounds every access.
        unsafe { x86::shuffle2_sse2(src, p0, p1) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let n = p0.len().min(p1.len()).min(src.len() / 2);
        for (i, pair) in src[..2 * n].chunks_exact(2).enumerate() {
            p0[i] = pair[0];
            p1[i] = pair[1];
        }
    }
}

/// Shuffle a run of `src.len() / ts` whole elements into byte planes
/// `planes` (`ts` planes of `n` bytes each, plane `j` at `j·n`), at element
/// `at` of every plane: the piece of a block shuffle that `src` contributes
/// when it is elements `at..` of the block.
pub fn shuffle_into_planes(src: &[u8], planes: &mut [u8], n: usize, at: usize, ts: usize) {
    let m = src.len() / ts.max(1);
    if m == 0 {
        return;
    }
    if ts <= 1 {
        planes[at..at + m].copy_from_slice(&src[..m]);
        return;
    }
    if ts == 2 {
        let (p0, p1) = planes[..2 * n].split_at_mut(n);
        shuffle2(&src[..2 * m], &mut p0[at..at + m], &mut p1[at..at + m]);
        return;
    }
    for j in 0..ts {
        let plane = &mut planes[j * n + at..j * n + at + m];
        for (d, s) in plane.iter_mut().zip(src[j..].iter().step_by(ts)) {
            *d = *s;
        }
    }
}

/// Shuffle a block made of whole rows of `row` elements of `ts` bytes, row
/// `r` being `src[offs[r]..offs[r] + row·ts]`, into the byte planes `planes`
/// (`ts` planes of `offs.len()·row` bytes): [`shuffle_into_planes`] for
/// every row, in one call. False (nothing written) if a row is outside `src`
/// or `planes` has another size.
pub fn shuffle_rows_into_planes(
    src: &[u8],
    offs: &[usize],
    row: usize,
    planes: &mut [u8],
    ts: usize,
) -> bool {
    let n = offs.len() * row;
    let rowb = row * ts;
    if ts == 0 || planes.len() != n * ts || offs.iter().any(|&o| o + rowb > src.len()) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if ts == 2 && crate::cpu::avx2() {
            let (p0, p1) = planes.split_at_mut(n);
            // SAFETY: AVX2 is available (checked above); every row lies in
            // `src` and the planes hold n bytes each (checked above).
            unsafe { x86::shuffle2_rows_avx2(src, offs, row, p0, p1) };
            return true;
        }
    }
    for (r, &o) in offs.iter().enumerate() {
        shuffle_into_planes(&src[o..o + rowb], planes, n, r * row, ts);
    }
    true
}

/// Portable byte shuffle (reference for the SIMD versions).
pub fn shuffle_scalar(src: &[u8], dst: &mut [u8], ts: usize) {
    let len = src.len().min(dst.len());
    let (src, dst) = (&src[..len], &mut dst[..len]);
    let n = len.checked_div(ts).unwrap_or(0);
    if ts <= 1 || n <= 1 {
        dst.copy_from_slice(src);
        return;
    }
    let body = n * ts;
    shuffle_scalar_body(&src[..body], &mut dst[..body], ts, n);
    dst[body..].copy_from_slice(&src[body..]);
}

fn shuffle_scalar_body(src: &[u8], dst: &mut [u8], ts: usize, n: usize) {
    for (j, plane) in dst.chunks_exact_mut(n).enumerate() {
        for (d, s) in plane.iter_mut().zip(src.iter().skip(j).step_by(ts)) {
            *d = *s;
        }
    }
}

/// Undo a byte shuffle of element size `ts` from `src` into `dst`.
pub fn unshuffle(src: &[u8], dst: &mut [u8], ts: usize) {
    let len = src.len().min(dst.len());
    let (src, dst) = (&src[..len], &mut dst[..len]);
    let n = len.checked_div(ts).unwrap_or(0);
    if ts <= 1 || n <= 1 {
        dst.copy_from_slice(src);
        return;
    }
    let body = n * ts;
    with_planes(&src[..body], n, |planes| {
        unshuffle_planes(planes, &mut dst[..body])
    });
    dst[body..].copy_from_slice(&src[body..]);
}

/// Portable unshuffle (reference for the SIMD versions).
pub fn unshuffle_scalar(src: &[u8], dst: &mut [u8], ts: usize) {
    let len = src.len().min(dst.len());
    let (src, dst) = (&src[..len], &mut dst[..len]);
    let n = len.checked_div(ts).unwrap_or(0);
    if ts <= 1 || n <= 1 {
        dst.copy_from_slice(src);
        return;
    }
    let body = n * ts;
    with_planes(&src[..body], n, |planes| {
        unshuffle_planes_scalar(planes, &mut dst[..body])
    });
    dst[body..].copy_from_slice(&src[body..]);
}

/// Split `src` into `src.len() / n` planes of `n` bytes and hand them to `f`
/// (no allocation for up to 16 planes).
fn with_planes<R>(src: &[u8], n: usize, f: impl FnOnce(&[&[u8]]) -> R) -> R {
    let count = src.len().checked_div(n).unwrap_or(0);
    if count <= 16 {
        let mut arr: [&[u8]; 16] = [&[]; 16];
        for (slot, p) in arr.iter_mut().zip(src.chunks_exact(n)) {
            *slot = p;
        }
        f(&arr[..count])
    } else {
        let v: Vec<&[u8]> = src.chunks_exact(n).collect();
        f(&v)
    }
}

/// Interleave byte planes: `dst[i·T + j] = planes[j][i]` with `T = planes.len()`.
/// All planes must have the same length `n` and `dst.len() == n·T`;
/// otherwise only the common prefix is written.
pub fn unshuffle_planes(planes: &[&[u8]], dst: &mut [u8]) {
    // SAFETY: `[u8]` and `[MaybeUninit<u8>]` have the same layout, and the
    // callee only ever stores initialised bytes, so `dst` stays initialised.
    let dst = unsafe { &mut *(dst as *mut [u8] as *mut [MaybeUninit<u8>]) };
    unshuffle_planes_uninit(planes, dst);
}

/// [`unshuffle_planes`] into memory that need not be initialised; writes
/// `dst[..n·T]` (`n` the shortest plane, capped by `dst.len() / T`).
pub fn unshuffle_planes_uninit(planes: &[&[u8]], dst: &mut [MaybeUninit<u8>]) {
    let t = planes.len();
    let n = planes.iter().map(|p| p.len()).min().unwrap_or(0);
    if t == 0 || n == 0 {
        return;
    }
    let n = n.min(dst.len() / t);
    #[cfg(target_arch = "x86_64")]
    {
        let done = x86::unshuffle_planes_simd(planes, n, dst);
        if done == n {
            return;
        }
        unshuffle_planes_from(planes, dst, done, n);
        return;
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        let done = wasm::unshuffle_planes_simd(planes, n, dst);
        unshuffle_planes_from(planes, dst, done, n);
        return;
    }
    #[allow(unreachable_code)]
    unshuffle_planes_from(planes, dst, 0, n)
}

/// The plane interleave in 128-bit WebAssembly SIMD (2- and 4-byte
/// elements, 16 at a time); the scalar loop does the rest.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm {
    use core::arch::wasm32::*;
    use std::mem::MaybeUninit;

    /// Interleave elements `0..k` of `planes` into `dst` (`n` elements fit
    /// in every plane and in `dst`): the `k` done, a multiple of 16 or 0.
    pub(super) fn unshuffle_planes_simd(
        planes: &[&[u8]],
        n: usize,
        dst: &mut [MaybeUninit<u8>],
    ) -> usize {
        let t = planes.len();
        if !(t == 2 || t == 4) || planes.iter().any(|p| p.len() < n) || dst.len() < n * t {
            return 0;
        }
        let k = n & !15;
        let out = dst.as_mut_ptr() as *mut u8;
        let mut i = 0;
        while i < k {
            // SAFETY: i + 16 <= k <= n <= every plane's length, and
            // (i + 16)·t <= n·t <= dst.len(); v128 loads and stores need no
            // alignment; only initialised bytes are written.
            unsafe {
                let load = |p: &[u8]| v128_load(p.as_ptr().add(i) as *const v128);
                let (a, b) = (load(planes[0]), load(planes[1]));
                let ab_lo =
                    i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(a, b);
                let ab_hi =
                    i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(
                        a, b,
                    );
                let o = out.add(i * t) as *mut v128;
                if t == 2 {
                    v128_store(o, ab_lo);
                    v128_store(o.add(1), ab_hi);
                } else {
                    let (c, d) = (load(planes[2]), load(planes[3]));
                    let cd_lo =
                        i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(
                            c, d,
                        );
                    let cd_hi = i8x16_shuffle::<
                        8,
                        24,
                        9,
                        25,
                        10,
                        26,
                        11,
                        27,
                        12,
                        28,
                        13,
                        29,
                        14,
                        30,
                        15,
                        31,
                    >(c, d);
                    v128_store(o, i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(ab_lo, cd_lo));
                    v128_store(
                        o.add(1),
                        i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(ab_lo, cd_lo),
                    );
                    v128_store(
                        o.add(2),
                        i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(ab_hi, cd_hi),
                    );
                    v128_store(
                        o.add(3),
                        i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(ab_hi, cd_hi),
                    );
                }
            }
            i += 16;
        }
        k
    }
}

/// Portable plane interleave (reference for the SIMD versions).
#[inline]
pub fn unshuffle_planes_scalar(planes: &[&[u8]], dst: &mut [u8]) {
    let t = planes.len();
    let n = planes.iter().map(|p| p.len()).min().unwrap_or(0);
    if t == 0 || n == 0 {
        return;
    }
    let n = n.min(dst.len() / t);
    // SAFETY: same layout; only initialised bytes are stored (as above).
    let dst = unsafe { &mut *(dst as *mut [u8] as *mut [MaybeUninit<u8>]) };
    unshuffle_planes_from(planes, dst, 0, n)
}

/// Scalar interleave of elements `start..n`.
#[inline]
fn unshuffle_planes_from(planes: &[&[u8]], dst: &mut [MaybeUninit<u8>], start: usize, n: usize) {
    let t = planes.len();
    let dst = &mut dst[start * t..n * t];
    match planes {
        [p0] => {
            for (d, s) in dst.iter_mut().zip(&p0[start..n]) {
                d.write(*s);
            }
        }
        [p0, p1] => {
            for (d, (a, b)) in dst
                .chunks_exact_mut(2)
                .zip(p0[start..n].iter().zip(&p1[start..n]))
            {
                d[0].write(*a);
                d[1].write(*b);
            }
        }
        [p0, p1, p2, p3] => {
            let it = p0[start..n]
                .iter()
                .zip(&p1[start..n])
                .zip(p2[start..n].iter().zip(&p3[start..n]));
            for (d, ((a, b), (c, e))) in dst.chunks_exact_mut(4).zip(it) {
                for (slot, v) in d.iter_mut().zip([*a, *b, *c, *e]) {
                    slot.write(v);
                }
            }
        }
        _ => {
            for (j, p) in planes.iter().enumerate() {
                for (d, s) in dst.iter_mut().skip(j).step_by(t).zip(&p[start..n]) {
                    d.write(*s);
                }
            }
        }
    }
}

/// The rows of a rank-3 box copy: `outer × inner` rows of `n` elements; row
/// `(a, b)` starts at element `src0 + a·ss[0] + b·ss[1]` of the source and at
/// element `dst0 + a·ds[0] + b·ds[1]` of the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows3 {
    /// Elements per row.
    pub n: usize,
    /// Row count along the outer (slower) box dimension, index `a`.
    pub outer: usize,
    /// Row count along the inner box dimension, index `b`: rows per outer step.
    pub inner: usize,
    /// Source element where row `(0, 0)` starts.
    pub src0: usize,
    /// Source strides in elements: `[per outer step a, per inner step b]`.
    pub ss: [usize; 2],
    /// Destination element where row `(0, 0)` starts.
    pub dst0: usize,
    /// Destination strides in elements: `[per outer step a, per inner step b]`.
    pub ds: [usize; 2],
}

impl Rows3 {
    fn end(&self, start: usize, strides: [usize; 2]) -> Option<usize> {
        if self.n == 0 || self.outer == 0 || self.inner == 0 {
            return Some(0);
        }
        start
            .checked_add((self.outer - 1).checked_mul(strides[0])?)?
            .checked_add((self.inner - 1).checked_mul(strides[1])?)?
            .checked_add(self.n)
    }

    /// One past the last source element read (`None` on overflow).
    pub fn src_end(&self) -> Option<usize> {
        self.end(self.src0, self.ss)
    }

    /// One past the last destination element written (`None` on overflow).
    pub fn dst_end(&self) -> Option<usize> {
        self.end(self.dst0, self.ds)
    }

    /// Whether both planes hold every source element and the destination
    /// end does not overflow: what the rows kernels check before writing.
    fn planes_fit(&self, p0: &[u8], p1: &[u8]) -> bool {
        self.src_end()
            .is_some_and(|end| p0.len() >= end && p1.len() >= end)
            && self.dst_end().is_some()
    }

    /// Whether every row of 2-byte elements written at `dst` is one whole,
    /// 64-byte aligned cache line (32 elements at an aligned start, aligned
    /// strides): what the streaming-store kernels need.
    #[cfg(target_arch = "x86_64")]
    fn whole_lines(&self, dst: *mut u8) -> bool {
        self.n == 32 && self.whole_line_rows(dst, 2)
    }

    /// Whether every row of `esize`-byte elements written at `dst` is a run
    /// of whole, 64-byte aligned cache lines (row bytes a multiple of 64 at
    /// an aligned start, aligned strides): what streaming stores of whole
    /// rows need.
    pub fn whole_line_rows(&self, dst: *mut u8, esize: usize) -> bool {
        self.n > 0
            && self.n.wrapping_mul(esize).is_multiple_of(64)
            && (dst as usize)
                .wrapping_add(self.dst0.wrapping_mul(esize))
                .is_multiple_of(64)
            && self.ds[0].wrapping_mul(esize).is_multiple_of(64)
            && self.ds[1].wrapping_mul(esize).is_multiple_of(64)
    }

    /// Elements written.
    pub fn elements(&self) -> usize {
        self.n.saturating_mul(self.outer).saturating_mul(self.inner)
    }
}

/// [`unshuffle2_rows`] for outputs too large to stay in cache: when every
/// row is one whole, line-aligned 64-byte cache line (32 elements at a
/// 64-byte aligned address and strides), the rows are written with
/// streaming stores, which fill each line without first reading it from
/// memory; any other geometry takes [`unshuffle2_rows`]. Same bytes, same
/// result, same contract.
///
/// # Safety
/// As [`unshuffle2_rows`].
pub unsafe fn unshuffle2_rows_streamed(p0: &[u8], p1: &[u8], g: &Rows3, dst: *mut u8) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if g.whole_lines(dst) && crate::cpu::avx2() {
            if !g.planes_fit(p0, p1) {
                return false;
            }
            // SAFETY: AVX2 detected; the planes hold `src_end` bytes (checked
            // above); the caller vouches for `dst`; every row start is 64-byte
            // aligned (checked above), as the streaming stores require.
            unsafe { x86::unshuffle2_group32_stream_avx2(&[[p0, p1]], g, dst) };
            return true;
        }
    }
    // SAFETY: `unshuffle2_rows` has this function's contract (`dst` valid
    // for writes of `2 · g.dst_end()` bytes, the rows written not accessed
    // elsewhere), which the caller upholds.
    unsafe { unshuffle2_rows(p0, p1, g, dst) }
}

/// [`unshuffle2_rows_streamed`] for `planes.len()` blocks that sit side by
/// side along the last dimension: block `k` has the geometry `g` with its
/// destination start moved `k · g.n` elements on, so row `(a, b)` of every
/// block lands in one contiguous run. The streaming kernel writes each run
/// whole (block 0's line, then block 1's, …), which stores to memory at a
/// higher rate than lines scattered one row stride apart. Same bytes as one
/// [`unshuffle2_rows_streamed`] call per block; returns `false`, writing
/// nothing, when a plane is shorter than [`Rows3::src_end`] or the
/// geometry overflows.
///
/// # Safety
/// `dst` must be valid for writes of `2 · (g.dst_end() + (planes.len() - 1) · g.n)`
/// bytes, and no other reference may access the rows written while this runs.
pub unsafe fn unshuffle2_rows_streamed_group(
    planes: &[[&[u8]; 2]],
    g: &Rows3,
    dst: *mut u8,
) -> bool {
    let fit = planes.iter().all(|[p0, p1]| g.planes_fit(p0, p1))
        && g.dst_end()
            .and_then(|e| e.checked_add(planes.len().checked_sub(1)?.checked_mul(g.n)?))
            .is_some();
    if !fit {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if g.whole_lines(dst) && crate::cpu::avx2() {
            // SAFETY: AVX2 detected; every block's planes hold `src_end` bytes
            // (checked above); the caller vouches for `dst` up to the last
            // block's rows; every run start is 64-byte aligned (checked above)
            // and each block's row is one whole line, as streaming stores need.
            unsafe { x86::unshuffle2_group32_stream_avx2(planes, g, dst) };
            return true;
        }
    }
    for (k, [p0, p1]) in planes.iter().enumerate() {
        let gk = Rows3 {
            dst0: g.dst0 + k * g.n,
            ..*g
        };
        // SAFETY: block `k`'s rows end at `dst_end + k · n`, inside what the
        // caller vouches for (the sum was checked above); planes fit (checked).
        unsafe { unshuffle2_rows_streamed(p0, p1, &gk, dst) };
    }
    true
}

/// Interleave two byte planes (2-byte elements) row by row into `dst`, as
/// [`Rows3`] places them. Returns `false`, writing nothing, when a plane is
/// shorter than [`Rows3::src_end`] or the geometry overflows.
///
/// # Safety
/// `dst` must be valid for writes of `2 · g.dst_end()` bytes, and no other
/// reference may access the bytes of the rows written while this runs.
pub unsafe fn unshuffle2_rows(p0: &[u8], p1: &[u8], g: &Rows3, dst: *mut u8) -> bool {
    if !g.planes_fit(p0, p1) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if crate::cpu::avx2() {
            // SAFETY: AVX2 detected; the planes hold `src_end` bytes (checked
            // above) and the caller vouches for `dst`.
            unsafe { x86::unshuffle2_rows_avx2(p0, p1, g, dst) };
            return true;
        }
    }
    for a in 0..g.outer {
        for b in 0..g.inner {
            let s = g.src0 + a * g.ss[0] + b * g.ss[1];
            let d = 2 * (g.dst0 + a * g.ds[0] + b * g.ds[1]);
            for (i, (x, y)) in p0[s..s + g.n].iter().zip(&p1[s..s + g.n]).enumerate() {
                // SAFETY: `d + 2i + 1 < 2 · dst_end`, inside what the caller vouches for.
                unsafe {
                    dst.add(d + 2 * i).write(*x);
                    dst.add(d + 2 * i + 1).write(*y);
                }
            }
        }
    }
    true
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::transpose_8x16 as transpose_8x16_sse2;

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! SSE2/AVX2 byte-transpose kernels. Each returns how many elements it
    //! handled; the caller finishes the tail with the scalar code.
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// Interleave as many elements as the SIMD kernels can; returns the count done.
    /// Every plane must hold at least `n` bytes and `dst` at least `n·T`.
    pub(super) fn unshuffle_planes_simd(
        planes: &[&[u8]],
        n: usize,
        dst: &mut [MaybeUninit<u8>],
    ) -> usize {
        let t = planes.len();
        if planes.iter().any(|p| p.len() < n) || n.checked_mul(t).is_none_or(|b| b > dst.len()) {
            return 0;
        }
        let d = dst.as_mut_ptr().cast::<u8>();
        match planes {
            [p0, p1] => {
                if crate::cpu::avx2() {
                    // SAFETY: AVX2 detected; planes hold ≥ n and dst ≥ 2n bytes (checked above).
                    unsafe { unshuffle2_avx2(p0, p1, n, d) }
                } else {
                    // SAFETY: SSE2 is part of x86-64; lengths as above.
                    unsafe { unshuffle2_sse2(p0, p1, n, d) }
                }
            }
            [p0, p1, p2, p3] => {
                // SAFETY: SSE2 is part of x86-64; planes ≥ n, dst ≥ 4n bytes (checked above).
                unsafe { unshuffle4_sse2([p0, p1, p2, p3], n, d) }
            }
            [a, b, c, e, f, g, h, k] => {
                // SAFETY: SSE2 is part of x86-64; planes ≥ n, dst ≥ 8n bytes (checked above).
                unsafe { unshuffle8_sse2([a, b, c, e, f, g, h, k], n, d) }
            }
            _ => 0,
        }
    }

    /// Store 16 bytes at `p + i` (the caller owns `p .. p + i + 16`).
    ///
    /// # Safety
    /// `p + i` must be valid for writes of 16 bytes.
    #[inline]
    unsafe fn stp(p: *mut u8, i: usize, v: __m128i) {
        // SAFETY: the 16 bytes at `p + i` are writable by this function's
        // contract; SSE2 is part of x86-64.
        unsafe { _mm_storeu_si128(p.add(i) as *mut __m128i, v) }
    }

    /// Load the 16 bytes `p[i..i + 16]` without a bounds check.
    ///
    /// # Safety
    /// `i + 16 <= p.len()`.
    #[inline]
    unsafe fn ld(p: &[u8], i: usize) -> __m128i {
        // SAFETY: `i + 16 <= p.len()` by this function's contract (asserted
        // in debug builds), so the load stays in `p`; SSE2 is part of x86-64.
        unsafe {
            debug_assert!(i + 16 <= p.len());
            _mm_loadu_si128(p.as_ptr().add(i) as *const __m128i)
        }
    }

    /// Store `v` to the 16 bytes `p[i..i + 16]` without a bounds check.
    ///
    /// # Safety
    /// `i + 16 <= p.len()`.
    #[inline]
    unsafe fn st(p: &mut [u8], i: usize, v: __m128i) {
        // SAFETY: `i + 16 <= p.len()` by this function's contract (asserted
        // in debug builds), so the store stays in `p`; SSE2 is part of x86-64.
        unsafe {
            debug_assert!(i + 16 <= p.len());
            _mm_storeu_si128(p.as_mut_ptr().add(i) as *mut __m128i, v)
        }
    }

    /// Interleave two byte planes into 2-byte elements, 16 elements a step;
    /// returns the count done (`n` rounded down to a multiple of 16).
    ///
    /// # Safety
    /// `p0` and `p1` must hold at least `n` bytes and `dst` must be valid
    /// for writes of `2n` bytes.
    #[target_feature(enable = "sse2")]
    unsafe fn unshuffle2_sse2(p0: &[u8], p1: &[u8], n: usize, dst: *mut u8) -> usize {
        // SAFETY: SSE2 is enabled here. Each step has `i + 16 <= n`: the
        // loads read `p0[i..i + 16]` and `p1[i..i + 16]` (planes hold `n`)
        // and the stores write `dst[2i..2i + 32]` (below the `2n` writable
        // bytes), per this function's contract.
        unsafe {
            let mut i = 0;
            while i + 16 <= n {
                let a = ld(p0, i);
                let b = ld(p1, i);
                stp(dst, 2 * i, _mm_unpacklo_epi8(a, b));
                stp(dst, 2 * i + 16, _mm_unpackhi_epi8(a, b));
                i += 16;
            }
            i
        }
    }

    /// [`unshuffle2_sse2`] with 64, then 32, elements a step, the SSE2
    /// kernel finishing; returns the count done.
    ///
    /// # Safety
    /// `p0` and `p1` must hold at least `n` bytes, `dst` must be valid for
    /// writes of `2n` bytes, and the CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn unshuffle2_avx2(p0: &[u8], p1: &[u8], n: usize, dst: *mut u8) -> usize {
        // SAFETY: AVX2 is this function's contract. The loops keep
        // `i + 64 <= n` (then `i + 32 <= n`), so the loads read
        // `p0`/`p1[i..i + 64]` inside the `n` bytes of each plane and the
        // stores write `dst[2i..2i + 128]` inside the `2n` writable bytes;
        // the SSE2 tail gets the remaining `n - i` elements at `dst + 2i`,
        // which meets its contract.
        unsafe {
            let mut i = 0;
            let (s0, s1, d) = (p0.as_ptr(), p1.as_ptr(), dst);
            while i + 64 <= n {
                let a0 = _mm256_loadu_si256(s0.add(i) as *const __m256i);
                let b0 = _mm256_loadu_si256(s1.add(i) as *const __m256i);
                let a1 = _mm256_loadu_si256(s0.add(i + 32) as *const __m256i);
                let b1 = _mm256_loadu_si256(s1.add(i + 32) as *const __m256i);
                let lo0 = _mm256_unpacklo_epi8(a0, b0);
                let hi0 = _mm256_unpackhi_epi8(a0, b0);
                let lo1 = _mm256_unpacklo_epi8(a1, b1);
                let hi1 = _mm256_unpackhi_epi8(a1, b1);
                let o = d.add(2 * i) as *mut __m256i;
                _mm256_storeu_si256(o, _mm256_permute2x128_si256(lo0, hi0, 0x20));
                _mm256_storeu_si256(o.add(1), _mm256_permute2x128_si256(lo0, hi0, 0x31));
                _mm256_storeu_si256(o.add(2), _mm256_permute2x128_si256(lo1, hi1, 0x20));
                _mm256_storeu_si256(o.add(3), _mm256_permute2x128_si256(lo1, hi1, 0x31));
                i += 64;
            }
            while i + 32 <= n {
                let a = _mm256_loadu_si256(s0.add(i) as *const __m256i);
                let b = _mm256_loadu_si256(s1.add(i) as *const __m256i);
                let lo = _mm256_unpacklo_epi8(a, b);
                let hi = _mm256_unpackhi_epi8(a, b);
                let o = d.add(2 * i) as *mut __m256i;
                _mm256_storeu_si256(o, _mm256_permute2x128_si256(lo, hi, 0x20));
                _mm256_storeu_si256(o.add(1), _mm256_permute2x128_si256(lo, hi, 0x31));
                i += 32;
            }
            i + unshuffle2_sse2(&p0[i..], &p1[i..], n - i, dst.add(2 * i))
        }
    }

    /// Bytes of output the rows kernel asks for ahead of its stores.
    const PREFETCH_AHEAD: usize = 8192;

    /// [`super::unshuffle2_rows`] with AVX2: `p0`/`p1` hold `g.src_end()`
    /// bytes, `dst` has room for `2 · g.dst_end()`.
    ///
    /// The rows of a B2ND block are short (64 bytes for 32 int16) and
    /// scattered over the output (one per output row, one plane apart every
    /// `inner` rows), so the hardware prefetchers do not follow them and each
    /// store would wait for its cache line from memory. The destination lines
    /// of the row about 8 KiB of output ahead are requested into L2 first
    /// (`prefetcht1`; measured best against `prefetchw` into L1 and against
    /// the next plane only), which keeps many line fills in flight.
    ///
    /// # Safety
    /// `p0` and `p1` must hold at least `g.src_end()` bytes (which must not
    /// overflow), `dst` must be valid for writes of `2 · g.dst_end()` bytes
    /// with no other access to the rows written during the call, and the
    /// CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn unshuffle2_rows_avx2(
        p0: &[u8],
        p1: &[u8],
        g: &super::Rows3,
        dst: *mut u8,
    ) {
        // SAFETY: AVX2 is this function's contract. Row `(a, b)` reads the
        // `g.n` bytes at `s = src0 + a·ss[0] + b·ss[1]` of each plane, below
        // `src_end`, and writes the `2·g.n` bytes at
        // `2·(dst0 + a·ds[0] + b·ds[1])` of `dst`, below `2·dst_end`: the
        // ranges the contract makes readable and writable. The SIMD loop
        // keeps `i + 32 <= g.n`, the scalar tail `i < g.n`.
        unsafe {
            if g.n == 0 || g.outer == 0 || g.inner == 0 {
                return;
            }
            let row_bytes = 2 * g.n;
            // Rows ahead (at least one) of the prefetch cursor.
            let ahead = (PREFETCH_AHEAD / row_bytes).clamp(1, 256);
            let mut pf = PrefetchCursor::new(g, dst);
            for _ in 0..ahead {
                pf.next(row_bytes);
            }
            // Byte strides of the destination rows, and of the source rows.
            let (d0, d1) = (2 * g.ds[0], 2 * g.ds[1]);
            for a in 0..g.outer {
                let mut s = g.src0 + a * g.ss[0];
                // SAFETY: every row start is inside the rows the caller vouches for.
                let mut d = dst.add(2 * g.dst0 + a * d0);
                if g.n == 32 {
                    // 64-byte rows (a 32-element B2ND block row of int16): one
                    // load per plane, two stores, no inner loop.
                    for _ in 0..g.inner {
                        pf.next(row_bytes);
                        let (a, b) = interleave32(p0.as_ptr().add(s), p1.as_ptr().add(s));
                        let o = d as *mut __m256i;
                        _mm256_storeu_si256(o, a);
                        _mm256_storeu_si256(o.add(1), b);
                        s += g.ss[1];
                        d = d.wrapping_add(d1);
                    }
                    continue;
                }
                for _ in 0..g.inner {
                    pf.next(row_bytes);
                    let (r0, r1) = (p0.as_ptr().add(s), p1.as_ptr().add(s));
                    let mut i = 0;
                    while i + 32 <= g.n {
                        let x = _mm256_loadu_si256(r0.add(i) as *const __m256i);
                        let y = _mm256_loadu_si256(r1.add(i) as *const __m256i);
                        let lo = _mm256_unpacklo_epi8(x, y);
                        let hi = _mm256_unpackhi_epi8(x, y);
                        let o = d.add(2 * i) as *mut __m256i;
                        _mm256_storeu_si256(o, _mm256_permute2x128_si256(lo, hi, 0x20));
                        _mm256_storeu_si256(o.add(1), _mm256_permute2x128_si256(lo, hi, 0x31));
                        i += 32;
                    }
                    while i < g.n {
                        d.add(2 * i).write(*r0.add(i));
                        d.add(2 * i + 1).write(*r1.add(i));
                        i += 1;
                    }
                    s += g.ss[1];
                    d = d.wrapping_add(d1);
                }
            }
        }
    }

    /// 32 elements of 2 bytes from their two byte planes at `x` and `y`:
    /// the first and the second 32 bytes of the interleaved row.
    ///
    /// # Safety
    /// AVX2 available; 32 bytes readable at `x` and at `y`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn interleave32(x: *const u8, y: *const u8) -> (__m256i, __m256i) {
        // SAFETY: the two 32-byte loads are what the caller promises.
        unsafe {
            let x = _mm256_loadu_si256(x as *const __m256i);
            let y = _mm256_loadu_si256(y as *const __m256i);
            let lo = _mm256_unpacklo_epi8(x, y);
            let hi = _mm256_unpackhi_epi8(x, y);
            (
                _mm256_permute2x128_si256(lo, hi, 0x20),
                _mm256_permute2x128_si256(lo, hi, 0x31),
            )
        }
    }

    /// [`super::unshuffle2_rows_streamed_group`]'s kernel (and, with one
    /// block, [`super::unshuffle2_rows_streamed`]'s): for every row
    /// `(a, b)`, the rows of all blocks back to back (one 64-byte line per
    /// block, two streaming stores each), then one store fence. Every
    /// block's planes hold `g.src_end()` bytes; `dst` has room for the last
    /// block's rows; row starts and strides are 64-byte aligned.
    ///
    /// # Safety
    /// `g.n` must be 32; every block's planes must hold at least
    /// `g.src_end()` bytes; `dst` must be valid for writes of
    /// `2 · (g.dst_end() + (planes.len() - 1) · g.n)` bytes with no other
    /// access to them during the call; `dst + 2·g.dst0` and both
    /// destination strides (in bytes) must be multiples of 64; and the CPU
    /// must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn unshuffle2_group32_stream_avx2(
        planes: &[[&[u8]; 2]],
        g: &super::Rows3,
        dst: *mut u8,
    ) {
        // SAFETY: AVX2 is this function's contract. With `g.n == 32`, row
        // `(a, b)` of block `k` reads 32 bytes of each of its planes at
        // `src0 + a·ss[0] + b·ss[1]` (below `src_end`) and streams the 64
        // bytes at `2·(dst0 + a·ds[0] + b·ds[1]) + 64·k`, below the
        // contract's writable end and 64-byte aligned as the streaming
        // stores need (aligned start and strides, by the contract).
        unsafe {
            let (d0, d1) = (2 * g.ds[0], 2 * g.ds[1]);
            for a in 0..g.outer {
                let mut s = g.src0 + a * g.ss[0];
                // SAFETY: every row start is inside the rows the caller vouches for.
                let mut d = dst.add(2 * g.dst0 + a * d0);
                for _ in 0..g.inner {
                    let mut o = d as *mut __m256i;
                    for [p0, p1] in planes {
                        let (x, y) = interleave32(p0.as_ptr().add(s), p1.as_ptr().add(s));
                        _mm256_stream_si256(o, x);
                        _mm256_stream_si256(o.add(1), y);
                        o = o.add(2);
                    }
                    s += g.ss[1];
                    d = d.wrapping_add(d1);
                }
            }
            _mm_sfence();
        }
    }

    /// The destination row the rows kernel prefetches next, walked in the
    /// kernel's row order with increments (no multiplications per row).
    struct PrefetchCursor {
        /// Rows left to prefetch.
        left: usize,
        /// Rows left in the current outer step.
        in_outer: usize,
        inner: usize,
        /// Byte address of the next row (wrapping arithmetic: a hint only).
        p: *const i8,
        d1: usize,
        /// From one past the last row of an outer step to the first of the next.
        wrap: usize,
    }

    impl PrefetchCursor {
        fn new(g: &super::Rows3, dst: *mut u8) -> Self {
            let (d0, d1) = (2 * g.ds[0], 2 * g.ds[1]);
            Self {
                left: g.outer * g.inner,
                in_outer: g.inner,
                inner: g.inner,
                p: dst.wrapping_add(2 * g.dst0) as *const i8,
                d1,
                wrap: d0.wrapping_sub(g.inner.wrapping_mul(d1)),
            }
        }

        /// Request the next row's lines (`row_bytes` > 0) into L2, then step on.
        #[inline(always)]
        fn next(&mut self, row_bytes: usize) {
            if self.left == 0 {
                return;
            }
            // SAFETY: (of the hint) a prefetch never faults and changes no
            // memory, so any address is sound, and SSE is part of x86-64;
            // the addresses are rows the caller vouches for anyway.
            unsafe {
                if row_bytes <= 64 {
                    _mm_prefetch::<_MM_HINT_T1>(self.p);
                } else {
                    let mut k = 0;
                    while k < row_bytes {
                        _mm_prefetch::<_MM_HINT_T1>(self.p.wrapping_add(k));
                        k += 64;
                    }
                }
                _mm_prefetch::<_MM_HINT_T1>(self.p.wrapping_add(row_bytes - 1));
            }
            self.left -= 1;
            self.p = self.p.wrapping_add(self.d1);
            self.in_outer -= 1;
            if self.in_outer == 0 {
                self.in_outer = self.inner;
                self.p = self.p.wrapping_add(self.wrap);
            }
        }
    }

    /// Interleave four byte planes into 4-byte elements, 16 elements a
    /// step; returns the count done (`n` rounded down to a multiple of 16).
    ///
    /// # Safety
    /// Every plane must hold at least `n` bytes and `dst` must be valid for
    /// writes of `4n` bytes.
    #[target_feature(enable = "sse2")]
    unsafe fn unshuffle4_sse2(p: [&[u8]; 4], n: usize, dst: *mut u8) -> usize {
        // SAFETY: SSE2 is enabled here. Each step has `i + 16 <= n`: `ld`
        // reads `p[j][i..i + 16]` inside each plane's `n` bytes, and the
        // stores write `dst[4i..4i + 64]` inside the `4n` writable bytes,
        // per this function's contract.
        unsafe {
            let mut i = 0;
            while i + 16 <= n {
                let (a, b, c, d) = (ld(p[0], i), ld(p[1], i), ld(p[2], i), ld(p[3], i));
                let abl = _mm_unpacklo_epi8(a, b);
                let abh = _mm_unpackhi_epi8(a, b);
                let cdl = _mm_unpacklo_epi8(c, d);
                let cdh = _mm_unpackhi_epi8(c, d);
                stp(dst, 4 * i, _mm_unpacklo_epi16(abl, cdl));
                stp(dst, 4 * i + 16, _mm_unpackhi_epi16(abl, cdl));
                stp(dst, 4 * i + 32, _mm_unpacklo_epi16(abh, cdh));
                stp(dst, 4 * i + 48, _mm_unpackhi_epi16(abh, cdh));
                i += 16;
            }
            i
        }
    }

    /// Interleave eight byte planes into 8-byte elements, 16 elements a
    /// step; returns the count done (`n` rounded down to a multiple of 16).
    ///
    /// # Safety
    /// Every plane must hold at least `n` bytes and `dst` must be valid for
    /// writes of `8n` bytes.
    #[target_feature(enable = "sse2")]
    unsafe fn unshuffle8_sse2(p: [&[u8]; 8], n: usize, dst: *mut u8) -> usize {
        // SAFETY: SSE2 is enabled here. Each step has `i + 16 <= n`: `ld`
        // reads `p[j][i..i + 16]` inside each plane's `n` bytes, and the 8
        // stores write `dst[8i..8i + 128]` inside the `8n` writable bytes,
        // per this function's contract.
        unsafe {
            let mut i = 0;
            while i + 16 <= n {
                let r: [__m128i; 8] = [
                    ld(p[0], i),
                    ld(p[1], i),
                    ld(p[2], i),
                    ld(p[3], i),
                    ld(p[4], i),
                    ld(p[5], i),
                    ld(p[6], i),
                    ld(p[7], i),
                ];
                let o = transpose_8x16(r);
                for (k, v) in o.iter().enumerate() {
                    stp(dst, 8 * i + 16 * k, *v);
                }
                i += 16;
            }
            i
        }
    }

    /// Transpose 8 rows of 16 bytes: output `k` holds columns `2k` and `2k+1`,
    /// each as the 8 row bytes in row order.
    ///
    /// # Safety
    /// The CPU must support SSE2 (every x86-64 CPU does); no memory access.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(crate) unsafe fn transpose_8x16(r: [__m128i; 8]) -> [__m128i; 8] {
        let t01l = _mm_unpacklo_epi8(r[0], r[1]);
        let t01h = _mm_unpackhi_epi8(r[0], r[1]);
        let t23l = _mm_unpacklo_epi8(r[2], r[3]);
        let t23h = _mm_unpackhi_epi8(r[2], r[3]);
        let t45l = _mm_unpacklo_epi8(r[4], r[5]);
        let t45h = _mm_unpackhi_epi8(r[4], r[5]);
        let t67l = _mm_unpacklo_epi8(r[6], r[7]);
        let t67h = _mm_unpackhi_epi8(r[6], r[7]);
        let a0 = _mm_unpacklo_epi16(t01l, t23l);
        let a1 = _mm_unpackhi_epi16(t01l, t23l);
        let a2 = _mm_unpacklo_epi16(t01h, t23h);
        let a3 = _mm_unpackhi_epi16(t01h, t23h);
        let b0 = _mm_unpacklo_epi16(t45l, t67l);
        let b1 = _mm_unpackhi_epi16(t45l, t67l);
        let b2 = _mm_unpacklo_epi16(t45h, t67h);
        let b3 = _mm_unpackhi_epi16(t45h, t67h);
        [
            _mm_unpacklo_epi32(a0, b0),
            _mm_unpackhi_epi32(a0, b0),
            _mm_unpacklo_epi32(a1, b1),
            _mm_unpackhi_epi32(a1, b1),
            _mm_unpacklo_epi32(a2, b2),
            _mm_unpackhi_epi32(a2, b2),
            _mm_unpacklo_epi32(a3, b3),
            _mm_unpackhi_epi32(a3, b3),
        ]
    }

    /// Byte shuffle of 4-byte elements, 16 at a time; returns the count done.
    ///
    /// # Safety
    /// `src` and `dst` must each hold at least `4n` bytes, and the CPU must
    /// support SSSE3.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn shuffle4_ssse3(src: &[u8], dst: &mut [u8], n: usize) -> usize {
        // SAFETY: SSSE3 is this function's contract. Each step has
        // `i + 16 <= n`: the loads read `src[4i..4i + 64]` and the stores
        // write 16 bytes at `i`, `n + i`, `2n + i` and `3n + i` of `dst`,
        // all inside the `4n` bytes the contract guarantees (the `ld`/`st`
        // bounds).
        unsafe {
            debug_assert!(src.len() >= 4 * n && dst.len() >= 4 * n);
            // Within each 16-byte register (4 elements): gather byte j of every element into dword j.
            let mask = _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
            let mut i = 0;
            while i + 16 <= n {
                let x0 = _mm_shuffle_epi8(ld(src, 4 * i), mask);
                let x1 = _mm_shuffle_epi8(ld(src, 4 * i + 16), mask);
                let x2 = _mm_shuffle_epi8(ld(src, 4 * i + 32), mask);
                let x3 = _mm_shuffle_epi8(ld(src, 4 * i + 48), mask);
                let t0 = _mm_unpacklo_epi32(x0, x1);
                let t1 = _mm_unpackhi_epi32(x0, x1);
                let t2 = _mm_unpacklo_epi32(x2, x3);
                let t3 = _mm_unpackhi_epi32(x2, x3);
                st(dst, i, _mm_unpacklo_epi64(t0, t2));
                st(dst, n + i, _mm_unpackhi_epi64(t0, t2));
                st(dst, 2 * n + i, _mm_unpacklo_epi64(t1, t3));
                st(dst, 3 * n + i, _mm_unpackhi_epi64(t1, t3));
                i += 16;
            }
            i
        }
    }

    /// [`shuffle2_sse2`] with 32 elements a step.
    ///
    /// # Safety
    /// The CPU must support AVX2 (every access is bounded by the slices).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn shuffle2_avx2(src: &[u8], p0: &mut [u8], p1: &mut [u8]) {
        // SAFETY: AVX2 is this function's contract. `n` is at most each
        // plane's length and half of `src`'s, and each step has
        // `i + 32 <= n`: the loads read `src[2i..2i + 64]` and the stores
        // write `p0[i..i + 32]` and `p1[i..i + 32]`; the SSE2 tail gets
        // in-bounds subslices.
        unsafe {
            let n = p0.len().min(p1.len()).min(src.len() / 2);
            let mask = _mm256_set1_epi16(0x00ff);
            let mut i = 0;
            while i + 32 <= n {
                let x0 = _mm256_loadu_si256(src.as_ptr().add(2 * i) as *const __m256i);
                let x1 = _mm256_loadu_si256(src.as_ptr().add(2 * i + 32) as *const __m256i);
                // packus works per 128-bit lane: lanes come out as x0lo x1lo x0hi x1hi.
                let even =
                    _mm256_packus_epi16(_mm256_and_si256(x0, mask), _mm256_and_si256(x1, mask));
                let odd = _mm256_packus_epi16(_mm256_srli_epi16(x0, 8), _mm256_srli_epi16(x1, 8));
                let even = _mm256_permute4x64_epi64(even, 0b11_01_10_00);
                let odd = _mm256_permute4x64_epi64(odd, 0b11_01_10_00);
                _mm256_storeu_si256(p0.as_mut_ptr().add(i) as *mut __m256i, even);
                _mm256_storeu_si256(p1.as_mut_ptr().add(i) as *mut __m256i, odd);
                i += 32;
            }
            shuffle2_sse2(&src[2 * i..2 * n], &mut p0[i..n], &mut p1[i..n]);
        }
    }

    /// Rows of `row` 2-byte elements at byte offsets `offs` of `src`, row
    /// `r` to `p0`/`p1[r·row..]`. Every row must lie in `src` and the planes
    /// hold `offs.len()·row` bytes each.
    ///
    /// # Safety
    /// The CPU must support AVX2. (A row outside `src` or planes too short
    /// panic in the slicing here; they are not unsound.)
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn shuffle2_rows_avx2(
        src: &[u8],
        offs: &[usize],
        row: usize,
        p0: &mut [u8],
        p1: &mut [u8],
    ) {
        // SAFETY: `shuffle2_avx2` needs only AVX2, which is this function's
        // contract; its slices are made with checked indexing.
        unsafe {
            for (r, &o) in offs.iter().enumerate() {
                let s = &src[o..o + 2 * row];
                let d = r * row;
                shuffle2_avx2(s, &mut p0[d..d + row], &mut p1[d..d + row]);
            }
        }
    }

    /// Byte shuffle of 2-byte elements: even bytes to `p0`, odd bytes to `p1`
    /// (`min(p0.len(), p1.len(), src.len() / 2)` elements).
    ///
    /// # Safety
    /// None beyond SSE2, which every x86-64 CPU has: every access is bounded
    /// by the slices.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn shuffle2_sse2(src: &[u8], p0: &mut [u8], p1: &mut [u8]) {
        // SAFETY: SSE2 is enabled here. `n` is at most each plane's length
        // and half of `src`'s, and each step has `i + 16 <= n`, so `ld`
        // reads `src[2i..2i + 32]` and `st` writes `p0`/`p1[i..i + 16]`,
        // inside the slices as their contracts require.
        unsafe {
            let n = p0.len().min(p1.len()).min(src.len() / 2);
            let mask = _mm_set1_epi16(0x00ff);
            let mut i = 0;
            while i + 16 <= n {
                let x0 = ld(src, 2 * i);
                let x1 = ld(src, 2 * i + 16);
                let even = _mm_packus_epi16(_mm_and_si128(x0, mask), _mm_and_si128(x1, mask));
                let odd = _mm_packus_epi16(_mm_srli_epi16(x0, 8), _mm_srli_epi16(x1, 8));
                st(p0, i, even);
                st(p1, i, odd);
                i += 16;
            }
            for (k, pair) in src[2 * i..2 * n].chunks_exact(2).enumerate() {
                p0[i + k] = pair[0];
                p1[i + k] = pair[1];
            }
        }
    }
}

#[cfg(test)]
mod tests;
