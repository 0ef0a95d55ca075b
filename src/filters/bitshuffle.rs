//! Bitshuffle: the bit-transpose transform (`docs/filters-format.md` §3.9.2)
//! and the HDF5 bitshuffle filter 32008 with its LZ4/Zstd framing (§5.1).
//!
//! The transform of `n` elements of `s` bytes (`n` a multiple of 8) writes
//! `8·s` bit-planes of `n/8` bytes: plane `8·j + k` holds bit `k` of byte `j`
//! of every element, element `i` at bit `i mod 8` of byte `i / 8`. Elements
//! past the last multiple of 8 (and bytes past the last whole element) are
//! copied unchanged. Kernels: portable scalar plus SSE2/AVX2 on x86-64 and
//! 128-bit SIMD on wasm32 (`bitshuffle/wasm.rs`).

use crate::blosc2::codec;
use crate::error::{Error, Result};
use crate::shuffle;
use crate::ChunkContext;

const NAME: &str = "bitshuffle";

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm;

/// 8×8 bit-matrix transpose: bit `8r + c` of the result is bit `8c + r` of `x`.
#[inline]
pub fn transpose8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// True when the bit-transpose kernels may take their GFNI form (one
/// `gf2p8affineqb` per 8×8 bit matrix instead of three shift-and-mask
/// rounds).
#[cfg(target_arch = "x86_64")]
fn use_gfni() -> bool {
    crate::cpu::gfni()
}

/// Number of elements the transform covers: the largest multiple of 8.
fn core_len(len: usize, ts: usize) -> usize {
    len.checked_div(ts).unwrap_or(0) & !7
}

/// Bitshuffle `src` into `dst` (equal lengths; extra bytes copied unchanged).
/// `scratch` is reused between calls to avoid allocation.
pub fn bitshuffle(src: &[u8], dst: &mut [u8], ts: usize, scratch: &mut Vec<u8>) {
    let len = src.len().min(dst.len());
    let n = core_len(len, ts);
    let body = n * ts;
    if n > 0 {
        let nb = n / 8;
        if ts == 1 {
            planes_to_rows(&src[..body], &mut dst[..body], 1, nb);
        } else {
            scratch.resize(body, 0);
            shuffle::shuffle(&src[..body], scratch, ts);
            planes_to_rows(scratch, &mut dst[..body], ts, nb);
        }
    }
    dst[body..len].copy_from_slice(&src[body..len]);
}

/// Undo [`bitshuffle`].
pub fn bitunshuffle(src: &[u8], dst: &mut [u8], ts: usize, scratch: &mut Vec<u8>) {
    let len = src.len().min(dst.len());
    let n = core_len(len, ts);
    let body = n * ts;
    if n > 0 {
        let nb = n / 8;
        if ts == 1 {
            rows_to_planes(&src[..body], &mut dst[..body], 1, nb);
        } else if !(ts == 2 && rows_to_elems2(&src[..body], &mut dst[..body], nb)) {
            scratch.resize(body, 0);
            rows_to_planes(&src[..body], scratch, ts, nb);
            shuffle::unshuffle(scratch, &mut dst[..body], ts);
        }
    }
    dst[body..len].copy_from_slice(&src[body..len]);
}

/// Bit rows of 2-byte elements straight to interleaved elements (the bit
/// transpose and the byte unshuffle in one pass) when a fused kernel fits;
/// false when the caller must take the two-pass path.
fn rows_to_elems2(rows: &[u8], elems: &mut [u8], nb: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if nb.is_multiple_of(32)
            && rows.len() == 16 * nb
            && elems.len() == 16 * nb
            && crate::cpu::avx2()
        {
            // SAFETY: AVX2 (and GFNI for its form) detected; both buffers
            // hold exactly 16·nb bytes, nb a multiple of 32, which is all
            // the kernel touches.
            unsafe {
                if use_gfni() {
                    x86::rows_to_elems2_gfni(rows, elems, nb);
                } else {
                    x86::rows_to_elems2_avx2(rows, elems, nb);
                }
            }
            return true;
        }
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        return wasm::rows_to_elems2(rows, elems, nb);
    }
    #[allow(unreachable_code)]
    {
        let _ = (rows, elems, nb);
        false
    }
}

/// Whether [`bitunshuffle_rows`] takes a block of `len` bytes of `ts`-byte
/// elements (1 or 2) into the rows `g` (the geometry it needs, on a CPU with
/// its kernel), so a caller can ask before decoding the block.
pub fn bitunshuffle_rows_fits(len: usize, ts: usize, g: &shuffle::Rows3) -> bool {
    if ts != 1 && ts != 2 {
        return false;
    }
    // Elements per 32-byte store of the kernel.
    let per = 32 / ts;
    let box_elems = g.outer.checked_mul(g.ss[0]);
    let whole = len.is_multiple_of(256 * ts)
        && g.n > 0
        && g.n.is_multiple_of(per)
        && g.inner > 0
        && g.src0 == 0
        && g.ss[1] == g.n
        && g.inner.checked_mul(g.n) == Some(g.ss[0])
        && box_elems.is_some_and(|e| e > 0 && e % 256 == 0 && e <= len / ts)
        && g.dst_end().is_some();
    #[cfg(target_arch = "x86_64")]
    {
        whole && crate::cpu::avx2()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = whole;
        false
    }
}

/// Undo the bit transpose of one whole block of `ts`-byte elements (1 or 2)
/// straight into the rows of a box (as [`shuffle::Rows3`] places them),
/// without an intermediate copy of the elements. `rows` is the bitshuffled
/// block (a multiple of 256 elements); the box must take its first elements
/// in order (source rows contiguous from element 0, e.g. the block's first
/// planes), a multiple of 256 of them, and each row a multiple of `32 / ts`
/// elements. Returns `false`, writing nothing, for any other geometry or
/// without AVX2: the caller then unshuffles into scratch and copies.
///
/// # Safety
/// `dst` must be valid for writes of `ts · g.dst_end()` bytes, and no other
/// reference may access the bytes of the rows written while this runs.
pub unsafe fn bitunshuffle_rows(rows: &[u8], ts: usize, g: &shuffle::Rows3, dst: *mut u8) -> bool {
    // SAFETY: `bitunshuffle_rows_with` has this function's contract (`dst`
    // valid for writes of `ts · g.dst_end()` bytes, the rows written not
    // accessed elsewhere), which the caller upholds.
    unsafe { bitunshuffle_rows_with(rows, ts, g, dst, false) }
}

/// [`bitunshuffle_rows`] for outputs too large to stay in cache: when every
/// row is a run of whole, 64-byte aligned cache lines, the rows are written
/// with streaming stores, which fill each line without first reading it
/// from memory; other geometries take the plain stores. Same bytes, same
/// result, same contract.
///
/// # Safety
/// As [`bitunshuffle_rows`].
pub unsafe fn bitunshuffle_rows_streamed(
    rows: &[u8],
    ts: usize,
    g: &shuffle::Rows3,
    dst: *mut u8,
) -> bool {
    // SAFETY: `bitunshuffle_rows_with` has this function's contract (that
    // of `bitunshuffle_rows`: `dst` valid for writes of `ts · g.dst_end()`
    // bytes, the rows written not accessed elsewhere), which the caller
    // upholds.
    unsafe { bitunshuffle_rows_with(rows, ts, g, dst, true) }
}

/// [`bitunshuffle_rows`], with streaming stores when `streamed` and the rows
/// are whole lines.
///
/// # Safety
/// As [`bitunshuffle_rows`].
unsafe fn bitunshuffle_rows_with(
    rows: &[u8],
    ts: usize,
    g: &shuffle::Rows3,
    dst: *mut u8,
    streamed: bool,
) -> bool {
    if !bitunshuffle_rows_fits(rows.len(), ts, g) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let (nb, cols) = (rows.len() / (8 * ts), g.elements() / 8);
        let stream = streamed && g.whole_line_rows(dst, ts);
        // One call per (element size, streaming) pair, in the form picked.
        macro_rules! rows_kernel {
            ($one:ident, $two:ident) => {
                match (ts, stream) {
                    (1, true) => x86::$one::<true>(rows, nb, cols, g, dst),
                    (1, false) => x86::$one::<false>(rows, nb, cols, g, dst),
                    (_, true) => x86::$two::<true>(rows, nb, cols, g, dst),
                    (_, false) => x86::$two::<false>(rows, nb, cols, g, dst),
                }
            };
        }
        // SAFETY: (every call) AVX2 detected (by `bitunshuffle_rows_fits`
        // above, which also limits `ts` to 1 or 2), and GFNI for its form;
        // `rows` holds 8·ts·nb bytes with nb a multiple of 32; the stores
        // are the box rows of `g`, which the caller vouches for; streaming
        // stores only where every row is whole aligned lines (checked here).
        unsafe {
            if use_gfni() {
                rows_kernel!(rows_to_elems1_rows_gfni, rows_to_elems2_rows_gfni);
            } else {
                rows_kernel!(rows_to_elems1_rows_avx2, rows_to_elems2_rows_avx2);
            }
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (dst, streamed);
        false
    }
}

/// Portable bitshuffle (reference for the SIMD path).
pub fn bitshuffle_scalar(src: &[u8], dst: &mut [u8], ts: usize) {
    let len = src.len().min(dst.len());
    let n = core_len(len, ts);
    let body = n * ts;
    if n > 0 {
        let mut tmp = vec![0u8; body];
        shuffle::shuffle_scalar(&src[..body], &mut tmp, ts);
        planes_to_rows_scalar(&tmp, &mut dst[..body], ts, n / 8, 0);
    }
    dst[body..len].copy_from_slice(&src[body..len]);
}

/// Portable bitunshuffle (reference for the SIMD path).
pub fn bitunshuffle_scalar(src: &[u8], dst: &mut [u8], ts: usize) {
    let len = src.len().min(dst.len());
    let n = core_len(len, ts);
    let body = n * ts;
    if n > 0 {
        let mut tmp = vec![0u8; body];
        rows_to_planes_scalar(&src[..body], &mut tmp, ts, n / 8, 0);
        shuffle::unshuffle_scalar(&tmp, &mut dst[..body], ts);
    }
    dst[body..len].copy_from_slice(&src[body..len]);
}

/// Byte planes (`ts` planes of `8·nb` bytes) → bit rows (`8·ts` rows of `nb` bytes).
fn planes_to_rows(planes: &[u8], rows: &mut [u8], ts: usize, nb: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let done = if crate::cpu::avx2() {
            // SAFETY: AVX2 (and GFNI for its kernel) detected; the kernels
            // keep every access inside `planes` (ts·8·nb bytes) and `rows`
            // (the same size).
            unsafe {
                if use_gfni() {
                    x86::planes_to_rows_gfni(planes, rows, ts, nb)
                } else {
                    x86::planes_to_rows_avx2(planes, rows, ts, nb)
                }
            }
        } else {
            // SAFETY: SSE2 is part of x86-64; same bounds.
            unsafe { x86::planes_to_rows_sse2(planes, rows, ts, nb) }
        };
        planes_to_rows_scalar(planes, rows, ts, nb, done);
        return;
    }
    #[allow(unreachable_code)]
    planes_to_rows_scalar(planes, rows, ts, nb, 0)
}

/// Bit rows → byte planes (inverse of [`planes_to_rows`]).
fn rows_to_planes(rows: &[u8], planes: &mut [u8], ts: usize, nb: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let done = if crate::cpu::avx2() {
            // SAFETY: AVX2 (and GFNI for its form) detected; accesses stay
            // inside both ts·8·nb-byte buffers.
            unsafe {
                if use_gfni() {
                    x86::rows_to_planes_gfni(rows, planes, ts, nb)
                } else {
                    x86::rows_to_planes_avx2(rows, planes, ts, nb)
                }
            }
        } else {
            // SAFETY: SSE2 is part of x86-64; same bounds.
            unsafe { x86::rows_to_planes_sse2(rows, planes, ts, nb, 0) }
        };
        rows_to_planes_scalar(rows, planes, ts, nb, done);
        return;
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        let done = wasm::rows_to_planes(rows, planes, ts, nb);
        rows_to_planes_scalar(rows, planes, ts, nb, done);
        return;
    }
    #[allow(unreachable_code)]
    rows_to_planes_scalar(rows, planes, ts, nb, 0)
}

/// 8×8 byte transpose: byte `k` of `out[c]` is byte `c` of `w[k]`. Three
/// rounds of block swaps (4×4, 2×2, 1×1 bytes) of 24 masked exchanges, not
/// 64 byte moves (the scalar path runs on targets without the x86 kernels,
/// wasm32 among them).
#[inline]
fn transpose_bytes(w: &[u64; 8]) -> [u64; 8] {
    let mut x = *w;
    for (half, mask) in [
        (4usize, 0x0000_0000_FFFF_FFFFu64),
        (2, 0x0000_FFFF_0000_FFFF),
        (1, 0x00FF_00FF_00FF_00FF),
    ] {
        let shift = 8 * half as u32;
        for i in 0..8 {
            if i & half == 0 {
                let t = ((x[i] >> shift) ^ x[i + half]) & mask;
                x[i] ^= t << shift;
                x[i + half] ^= t;
            }
        }
    }
    x
}

fn load8(s: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Scalar tail of [`planes_to_rows`] for columns `start..nb`.
fn planes_to_rows_scalar(planes: &[u8], rows: &mut [u8], ts: usize, nb: usize, start: usize) {
    let n = nb * 8;
    for j in 0..ts {
        let plane = &planes[j * n..(j + 1) * n];
        let r = &mut rows[8 * j * nb..8 * (j + 1) * nb];
        let mut g = start;
        // 8 columns at a time: 8 element groups → 8 bytes of each of the 8 rows.
        while g + 8 <= nb {
            let mut y = [0u64; 8];
            for (c, v) in y.iter_mut().enumerate() {
                *v = transpose8(load8(plane, 8 * (g + c)));
            }
            for (k, w) in transpose_bytes(&y).iter().enumerate() {
                r[k * nb + g..k * nb + g + 8].copy_from_slice(&w.to_le_bytes());
            }
            g += 8;
        }
        for g in g..nb {
            let y = transpose8(load8(plane, 8 * g)).to_le_bytes();
            for (k, v) in y.iter().enumerate() {
                r[k * nb + g] = *v;
            }
        }
    }
}

/// Scalar tail of [`rows_to_planes`] for columns `start..nb`.
fn rows_to_planes_scalar(rows: &[u8], planes: &mut [u8], ts: usize, nb: usize, start: usize) {
    let n = nb * 8;
    for j in 0..ts {
        let r = &rows[8 * j * nb..8 * (j + 1) * nb];
        let plane = &mut planes[j * n..(j + 1) * n];
        let mut g = start;
        while g + 8 <= nb {
            let mut w = [0u64; 8];
            for (k, v) in w.iter_mut().enumerate() {
                *v = load8(r, k * nb + g);
            }
            for (c, x) in transpose_bytes(&w).iter().enumerate() {
                let y = transpose8(*x);
                plane[8 * (g + c)..8 * (g + c) + 8].copy_from_slice(&y.to_le_bytes());
            }
            g += 8;
        }
        for g in g..nb {
            let mut b = [0u8; 8];
            for (k, v) in b.iter_mut().enumerate() {
                *v = r[k * nb + g];
            }
            let y = transpose8(u64::from_le_bytes(b));
            plane[8 * g..8 * g + 8].copy_from_slice(&y.to_le_bytes());
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! SIMD bit-transpose kernels; each returns the number of columns (bytes
    //! per bit row) it handled, the scalar code finishes the rest.
    use crate::shuffle::Rows3;
    use std::arch::x86_64::*;

    /// One kernel body's two entry points: the first compiled for AVX2, the
    /// second for AVX2 and GFNI (the body's last const parameter, `G`,
    /// picks the bit transpose, inlined into each).
    macro_rules! two_forms {
        (
            $(#[$doc:meta])*
            $avx2:ident, $gfni:ident => $body:ident;
            [$($gen:tt)*] [$($garg:tt)*] ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?
        ) => {
            $(#[$doc])*
            #[target_feature(enable = "avx2")]
            pub(super) unsafe fn $avx2<$($gen)*>($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: AVX2 is enabled on this function, which the body's
                // intrinsics need; the bounds the body relies on are this
                // function's own `# Safety` contract, upheld by the caller.
                unsafe { $body::<$($garg)* false>($($arg),*) }
            }

            #[doc = concat!("[`", stringify!($avx2), "`] with the GFNI transpose.")]
            ///
            /// # Safety
            #[doc = concat!("As [`", stringify!($avx2), "`], and the CPU must support GFNI.")]
            #[target_feature(enable = "avx2,gfni")]
            pub(super) unsafe fn $gfni<$($gen)*>($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: AVX2 and GFNI are enabled on this function, which
                // the body's intrinsics need; the bounds the body relies on
                // are this function's own `# Safety` contract, upheld by the
                // caller.
                unsafe { $body::<$($garg)* true>($($arg),*) }
            }
        };
    }

    /// Forward: movemask collects bit 7 of 16 element bytes at a time.
    ///
    /// # Safety
    /// `planes` and `rows` must each hold at least `ts·8·nb` bytes.
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn planes_to_rows_sse2(
        planes: &[u8],
        rows: &mut [u8],
        ts: usize,
        nb: usize,
    ) -> usize {
        // SAFETY: SSE2 is enabled here. With `c + 2 <= nb`, each load reads
        // 16 bytes at `j·n + 8·c` of plane `j` and each store writes 2 bytes
        // at `c` of row `8·j + k`, all inside the `ts·8·nb` bytes of each
        // buffer that this function's contract requires.
        unsafe {
            let n = nb * 8;
            let done = nb & !1;
            debug_assert!(planes.len() >= ts * n && rows.len() >= ts * n);
            let src = planes.as_ptr();
            let dst = rows.as_mut_ptr();
            for j in 0..ts {
                let mut c = 0;
                while c < done {
                    let mut x = _mm_loadu_si128(src.add(j * n + 8 * c) as *const __m128i);
                    for k in (0..8).rev() {
                        let m = _mm_movemask_epi8(x) as u16;
                        let p = dst.add((8 * j + k) * nb + c) as *mut [u8; 2];
                        p.write_unaligned(m.to_le_bytes());
                        x = _mm_slli_epi16(x, 1);
                    }
                    c += 2;
                }
            }
            done
        }
    }

    two_forms! {
        /// Forward. AVX2: 4 columns (32 element bytes) at a time, one 32-bit
        /// mask per bit row; `slli_epi16` brings the next bit of every byte
        /// to bit 7 (the bits carried in from the lower byte never reach bit
        /// 7 in 7 shifts). GFNI: 32 columns (256 element bytes) at a time,
        /// the inverse of [`rows_to_planes_gfni`]: each 64-bit lane of 8
        /// element bytes is bit-transposed into its 8 row bytes (the
        /// transpose is its own inverse), the two columns of a 128-bit lane
        /// are interleaved into 2-byte words, one per row, and an 8×8 word
        /// transpose per lane gives each row's 32 bytes for one store, where
        /// the movemask form takes 8 mask extractions per 32 bytes.
        ///
        /// # Safety
        /// `planes` and `rows` must each hold at least `ts·8·nb` bytes, and
        /// the CPU must support AVX2.
        planes_to_rows_avx2, planes_to_rows_gfni => planes_to_rows_body;
        [] [] (planes: &[u8], rows: &mut [u8], ts: usize, nb: usize) -> usize
    }

    /// The body of [`planes_to_rows_avx2`] (`G` false) and
    /// [`planes_to_rows_gfni`] (`G` true), inlined into each.
    ///
    /// # Safety
    /// As those functions: `planes` and `rows` each hold at least `ts·8·nb`
    /// bytes, and the CPU supports AVX2, and GFNI when `G`.
    #[inline(always)]
    unsafe fn planes_to_rows_body<const G: bool>(
        planes: &[u8],
        rows: &mut [u8],
        ts: usize,
        nb: usize,
    ) -> usize {
        // SAFETY: the CPU features are this function's contract. Columns
        // stop at `done <= nb` (a multiple of 4, or of 32 with GFNI), so
        // reads of plane `j` stay below `8·(g + 4)` (or the 256 bytes
        // `rows32_gfni` reads below `8·(g + 32)`) of its `8·nb`, and writes to
        // row `8·j + k` stay within its `nb` bytes: all inside the
        // `ts·8·nb` bytes per buffer that the contract requires.
        unsafe {
            let n = nb * 8;
            let done = if G { nb & !31 } else { nb & !3 };
            debug_assert!(planes.len() >= ts * n && rows.len() >= ts * n);
            let src = planes.as_ptr();
            let dst = rows.as_mut_ptr();
            for j in 0..ts {
                let inp = src.add(j * n);
                let out = dst.add(8 * j * nb);
                let mut g = 0;
                while g < done {
                    if G {
                        rows32_gfni(inp.add(8 * g), out.add(g), nb);
                        g += 32;
                    } else {
                        let mut x = _mm256_loadu_si256(inp.add(8 * g) as *const __m256i);
                        for k in (0..8).rev() {
                            let m = _mm256_movemask_epi8(x) as u32;
                            (out.add(k * nb + g) as *mut [u8; 4]).write_unaligned(m.to_le_bytes());
                            x = _mm256_slli_epi16(x, 1);
                        }
                        g += 4;
                    }
                }
            }
            done
        }
    }

    /// 32 columns of bit rows from the 256 plane bytes at `at`: row `k`'s
    /// 32 bytes go to `out + k·nb` (see [`planes_to_rows_gfni`]).
    ///
    /// # Safety
    /// `at` must be valid for reads of 256 bytes and `out + k·nb` for writes
    /// of 32 bytes for every `k < 8`.
    #[inline]
    #[target_feature(enable = "avx2,gfni")]
    unsafe fn rows32_gfni(at: *const u8, out: *mut u8, nb: usize) {
        // SAFETY: AVX2 and GFNI are enabled here; the loads read 16 bytes
        // at `at + 16·i` and `at + 128 + 16·i` (i < 8), inside the 256
        // readable bytes, and the stores write 32 bytes at `out + k·nb`
        // (k < 8): the ranges this function's contract makes valid.
        unsafe {
            // Bytes 0..8 and 8..16 of a lane (one column each) to words k of
            // (byte k, byte 8 + k).
            let pair = _mm256_set_epi8(
                15, 7, 14, 6, 13, 5, 12, 4, 11, 3, 10, 2, 9, 1, 8, 0, 15, 7, 14, 6, 13, 5, 12, 4,
                11, 3, 10, 2, 9, 1, 8, 0,
            );
            // Vector i: lane 0 columns 2i, 2i + 1; lane 1 columns 16 + 2i,
            // 17 + 2i (as rows_to_planes_body's).
            macro_rules! col {
                ($i:expr) => {
                    _mm256_shuffle_epi8(
                        t8_gfni(_mm256_loadu2_m128i(
                            at.add(128 + 16 * $i) as *const __m128i,
                            at.add(16 * $i) as *const __m128i,
                        )),
                        pair,
                    )
                };
            }
            let (c0, c1, c2, c3) = (col!(0), col!(1), col!(2), col!(3));
            let (c4, c5, c6, c7) = (col!(4), col!(5), col!(6), col!(7));
            let s0 = _mm256_unpacklo_epi16(c0, c1);
            let s1 = _mm256_unpackhi_epi16(c0, c1);
            let s2 = _mm256_unpacklo_epi16(c2, c3);
            let s3 = _mm256_unpackhi_epi16(c2, c3);
            let s4 = _mm256_unpacklo_epi16(c4, c5);
            let s5 = _mm256_unpackhi_epi16(c4, c5);
            let s6 = _mm256_unpacklo_epi16(c6, c7);
            let s7 = _mm256_unpackhi_epi16(c6, c7);
            let u0 = _mm256_unpacklo_epi32(s0, s2);
            let u1 = _mm256_unpackhi_epi32(s0, s2);
            let u2 = _mm256_unpacklo_epi32(s1, s3);
            let u3 = _mm256_unpackhi_epi32(s1, s3);
            let u4 = _mm256_unpacklo_epi32(s4, s6);
            let u5 = _mm256_unpackhi_epi32(s4, s6);
            let u6 = _mm256_unpacklo_epi32(s5, s7);
            let u7 = _mm256_unpackhi_epi32(s5, s7);
            let r = [
                _mm256_unpacklo_epi64(u0, u4),
                _mm256_unpackhi_epi64(u0, u4),
                _mm256_unpacklo_epi64(u1, u5),
                _mm256_unpackhi_epi64(u1, u5),
                _mm256_unpacklo_epi64(u2, u6),
                _mm256_unpackhi_epi64(u2, u6),
                _mm256_unpacklo_epi64(u3, u7),
                _mm256_unpackhi_epi64(u3, u7),
            ];
            for (k, v) in r.iter().enumerate() {
                _mm256_storeu_si256(out.add(k * nb) as *mut __m256i, *v);
            }
        }
    }

    /// The 8×8 bit transpose ([`super::transpose8`]) of each 64-bit lane,
    /// with SSE2 shifts and masks.
    ///
    /// # Safety
    /// The CPU must support SSE2 (every x86-64 CPU does); no memory access.
    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn t8_sse2(mut x: __m128i) -> __m128i {
        let m1 = _mm_set1_epi64x(0x00AA_00AA_00AA_00AA);
        let m2 = _mm_set1_epi64x(0x0000_CCCC_0000_CCCC);
        let m3 = _mm_set1_epi64x(0x0000_0000_F0F0_F0F0);
        let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 7)), m1);
        x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64(t, 7)));
        let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 14)), m2);
        x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64(t, 14)));
        let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 28)), m3);
        _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64(t, 28)))
    }

    /// Inverse: gather 16 columns of 8 rows, byte-transpose, bit-transpose.
    /// Handles columns `start..` in steps of 16 and returns where it stopped.
    ///
    /// # Safety
    /// `rows` and `planes` must each hold at least `ts·8·nb` bytes.
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn rows_to_planes_sse2(
        rows: &[u8],
        planes: &mut [u8],
        ts: usize,
        nb: usize,
        start: usize,
    ) -> usize {
        // SAFETY: SSE2 is enabled here. Columns run from `start` in steps
        // of 16 up to `done <= nb`, so each load reads 16 bytes of row
        // `8·j + k` within its `nb` bytes, and each group's 8 stores write
        // the 128 plane bytes `j·n + 8·g ..` below `j·n + 8·nb`: inside
        // the `ts·8·nb` bytes per buffer that this function's contract
        // requires.
        unsafe {
            let n = nb * 8;
            let done = start + ((nb - start.min(nb)) & !15);
            debug_assert!(rows.len() >= ts * n && planes.len() >= ts * n);
            let src = rows.as_ptr();
            let dst = planes.as_mut_ptr();
            for j in 0..ts {
                let base = src.add(8 * j * nb);
                let mut g = start;
                while g < done {
                    let mut r = [_mm_setzero_si128(); 8];
                    for (k, v) in r.iter_mut().enumerate() {
                        *v = _mm_loadu_si128(base.add(k * nb + g) as *const __m128i);
                    }
                    let cols = crate::shuffle::transpose_8x16_sse2(r);
                    let out = dst.add(j * n + 8 * g) as *mut __m128i;
                    for (i, v) in cols.iter().enumerate() {
                        _mm_storeu_si128(out.add(i), t8_sse2(*v));
                    }
                    g += 16;
                }
            }
            done
        }
    }

    /// The 8×8 bit transpose ([`super::transpose8`]) of each 64-bit lane,
    /// with AVX2 shifts and masks.
    ///
    /// # Safety
    /// The CPU must support AVX2; no memory access.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn t8_avx2(mut x: __m256i) -> __m256i {
        let m1 = _mm256_set1_epi64x(0x00AA_00AA_00AA_00AA);
        let m2 = _mm256_set1_epi64x(0x0000_CCCC_0000_CCCC);
        let m3 = _mm256_set1_epi64x(0x0000_0000_F0F0_F0F0);
        let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 7)), m1);
        x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64(t, 7)));
        let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 14)), m2);
        x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64(t, 14)));
        let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 28)), m3);
        _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64(t, 28)))
    }

    /// The 8×8 bit transpose of each 64-bit lane with GFNI: the affine map
    /// whose matrix is the lane (bytes reversed, as the instruction counts
    /// matrix rows from the top) applied to the bytes 1, 2, 4, … 128 gives
    /// in byte `r` the bits `r` of the lane's bytes, as [`t8_avx2`] does.
    ///
    /// # Safety
    /// The CPU must support AVX2 and GFNI; no memory access.
    #[inline]
    #[target_feature(enable = "avx2,gfni")]
    unsafe fn t8_gfni(x: __m256i) -> __m256i {
        let rev = _mm256_set_epi8(
            8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0,
            1, 2, 3, 4, 5, 6, 7,
        );
        let unit = _mm256_set1_epi64x(0x8040_2010_0804_0201_u64 as i64);
        _mm256_gf2p8affine_epi64_epi8::<0>(unit, _mm256_shuffle_epi8(x, rev))
    }

    /// The bit transpose of the form `G` (GFNI, else AVX2 shifts and masks);
    /// inlined into the kernels compiled for that form.
    ///
    /// # Safety
    /// The CPU must support AVX2, and GFNI when `G`.
    #[inline(always)]
    unsafe fn t8<const G: bool>(x: __m256i) -> __m256i {
        // SAFETY: neither transpose touches memory; each needs only the
        // CPU features this function's contract requires (AVX2 and GFNI
        // for `t8_gfni`, taken only when `G`; AVX2 for `t8_avx2`).
        unsafe {
            if G {
                t8_gfni(x)
            } else {
                t8_avx2(x)
            }
        }
    }

    two_forms! {
        /// AVX2 inverse over 32 columns at a time (each 128-bit lane does 16).
        ///
        /// # Safety
        /// `rows` and `planes` must each hold at least `ts·8·nb` bytes, and
        /// the CPU must support AVX2.
        rows_to_planes_avx2, rows_to_planes_gfni => rows_to_planes_body;
        [] [] (rows: &[u8], planes: &mut [u8], ts: usize, nb: usize) -> usize
    }

    /// The body of [`rows_to_planes_avx2`] (`G` false) and
    /// [`rows_to_planes_gfni`] (`G` true), inlined into each; the SSE2
    /// kernel finishes the columns past the last multiple of 32.
    ///
    /// # Safety
    /// As those functions: `rows` and `planes` each hold at least `ts·8·nb`
    /// bytes, and the CPU supports AVX2, and GFNI when `G`.
    #[inline(always)]
    unsafe fn rows_to_planes_body<const G: bool>(
        rows: &[u8],
        planes: &mut [u8],
        ts: usize,
        nb: usize,
    ) -> usize {
        // SAFETY: the CPU features are this function's contract (SSE2 is
        // part of x86-64). Columns stop at `done = nb & !31`, so each load
        // reads 32 bytes of row `8·j + k` within its `nb` bytes and each
        // group's stores write the 256 plane bytes `j·n + 8·g ..` below
        // `j·n + 8·nb`: inside the `ts·8·nb` bytes per buffer that the
        // contract requires, which is also what the SSE2 tail needs.
        unsafe {
            let n = nb * 8;
            let done = nb & !31;
            debug_assert!(rows.len() >= ts * n && planes.len() >= ts * n);
            let src = rows.as_ptr();
            let dst = planes.as_mut_ptr();
            for j in 0..ts {
                let base = src.add(8 * j * nb);
                let mut g = 0;
                while g < done {
                    // A macro, not a closure: closures do not take the kernel's
                    // target features.
                    macro_rules! ld {
                        ($k:expr) => {
                            _mm256_loadu_si256(base.add($k * nb + g) as *const __m256i)
                        };
                    }
                    let (r0, r1, r2, r3) = (ld!(0), ld!(1), ld!(2), ld!(3));
                    let (r4, r5, r6, r7) = (ld!(4), ld!(5), ld!(6), ld!(7));
                    let t01l = _mm256_unpacklo_epi8(r0, r1);
                    let t01h = _mm256_unpackhi_epi8(r0, r1);
                    let t23l = _mm256_unpacklo_epi8(r2, r3);
                    let t23h = _mm256_unpackhi_epi8(r2, r3);
                    let t45l = _mm256_unpacklo_epi8(r4, r5);
                    let t45h = _mm256_unpackhi_epi8(r4, r5);
                    let t67l = _mm256_unpacklo_epi8(r6, r7);
                    let t67h = _mm256_unpackhi_epi8(r6, r7);
                    let a0 = _mm256_unpacklo_epi16(t01l, t23l);
                    let a1 = _mm256_unpackhi_epi16(t01l, t23l);
                    let a2 = _mm256_unpacklo_epi16(t01h, t23h);
                    let a3 = _mm256_unpackhi_epi16(t01h, t23h);
                    let b0 = _mm256_unpacklo_epi16(t45l, t67l);
                    let b1 = _mm256_unpackhi_epi16(t45l, t67l);
                    let b2 = _mm256_unpacklo_epi16(t45h, t67h);
                    let b3 = _mm256_unpackhi_epi16(t45h, t67h);
                    let cols = [
                        _mm256_unpacklo_epi32(a0, b0),
                        _mm256_unpackhi_epi32(a0, b0),
                        _mm256_unpacklo_epi32(a1, b1),
                        _mm256_unpackhi_epi32(a1, b1),
                        _mm256_unpacklo_epi32(a2, b2),
                        _mm256_unpackhi_epi32(a2, b2),
                        _mm256_unpacklo_epi32(a3, b3),
                        _mm256_unpackhi_epi32(a3, b3),
                    ];
                    // Lane 0 of cols[i] holds columns g+2i, g+2i+1; lane 1 holds g+16+2i, g+17+2i.
                    let out = dst.add(j * n + 8 * g);
                    for (i, v) in cols.iter().enumerate() {
                        let y = t8::<G>(*v);
                        _mm_storeu_si128(
                            out.add(16 * i) as *mut __m128i,
                            _mm256_castsi256_si128(y),
                        );
                        _mm_storeu_si128(
                            out.add(128 + 16 * i) as *mut __m128i,
                            _mm256_extracti128_si256(y, 1),
                        );
                    }
                    g += 32;
                }
            }
            rows_to_planes_sse2(rows, planes, ts, nb, done)
        }
    }

    /// The 8 column vectors of bit rows `base + k·nb + g .. + 32` (k < 8),
    /// bit-transposed: lane 0 of result `i` holds the 16 plane bytes of
    /// columns `g + 2i, g + 2i + 1`, lane 1 those of `g + 16 + 2i, g + 17 + 2i`.
    ///
    /// # Safety
    /// `base + k·nb + g` must be valid for reads of 32 bytes for every
    /// `k < 8`, and the CPU must support AVX2, and GFNI when `G`.
    #[inline(always)]
    unsafe fn plane_bytes32<const G: bool>(base: *const u8, nb: usize, g: usize) -> [__m256i; 8] {
        // SAFETY: the only loads are the 32 bytes at `base + k·nb + g`
        // (k < 8) and the rest is register work needing the CPU features:
        // both are this function's contract.
        unsafe {
            // A macro, not a closure: closures do not take the kernel's target
            // features.
            macro_rules! ld {
                ($k:expr) => {
                    _mm256_loadu_si256(base.add($k * nb + g) as *const __m256i)
                };
            }
            let (r0, r1, r2, r3) = (ld!(0), ld!(1), ld!(2), ld!(3));
            let (r4, r5, r6, r7) = (ld!(4), ld!(5), ld!(6), ld!(7));
            let t01l = _mm256_unpacklo_epi8(r0, r1);
            let t01h = _mm256_unpackhi_epi8(r0, r1);
            let t23l = _mm256_unpacklo_epi8(r2, r3);
            let t23h = _mm256_unpackhi_epi8(r2, r3);
            let t45l = _mm256_unpacklo_epi8(r4, r5);
            let t45h = _mm256_unpackhi_epi8(r4, r5);
            let t67l = _mm256_unpacklo_epi8(r6, r7);
            let t67h = _mm256_unpackhi_epi8(r6, r7);
            let a0 = _mm256_unpacklo_epi16(t01l, t23l);
            let a1 = _mm256_unpackhi_epi16(t01l, t23l);
            let a2 = _mm256_unpacklo_epi16(t01h, t23h);
            let a3 = _mm256_unpackhi_epi16(t01h, t23h);
            let b0 = _mm256_unpacklo_epi16(t45l, t67l);
            let b1 = _mm256_unpackhi_epi16(t45l, t67l);
            let b2 = _mm256_unpacklo_epi16(t45h, t67h);
            let b3 = _mm256_unpackhi_epi16(t45h, t67h);
            [
                t8::<G>(_mm256_unpacklo_epi32(a0, b0)),
                t8::<G>(_mm256_unpackhi_epi32(a0, b0)),
                t8::<G>(_mm256_unpacklo_epi32(a1, b1)),
                t8::<G>(_mm256_unpackhi_epi32(a1, b1)),
                t8::<G>(_mm256_unpacklo_epi32(a2, b2)),
                t8::<G>(_mm256_unpackhi_epi32(a2, b2)),
                t8::<G>(_mm256_unpacklo_epi32(a3, b3)),
                t8::<G>(_mm256_unpackhi_epi32(a3, b3)),
            ]
        }
    }

    two_forms! {
        /// Bit rows of 2-byte elements (16 rows of `nb` bytes) to the elements:
        /// both byte planes are made 256 elements at a time and interleaved in
        /// registers. Requires `nb % 32 == 0` and both buffers of `16·nb` bytes.
        ///
        /// # Safety
        /// `nb` must be a multiple of 32, `rows` and `elems` must each hold
        /// at least `16·nb` bytes, and the CPU must support AVX2.
        rows_to_elems2_avx2, rows_to_elems2_gfni => rows_to_elems2_body;
        [] [] (rows: &[u8], elems: &mut [u8], nb: usize)
    }

    /// The body of [`rows_to_elems2_avx2`] (`G` false) and
    /// [`rows_to_elems2_gfni`] (`G` true), inlined into each.
    ///
    /// # Safety
    /// As those functions: `nb % 32 == 0`, `rows` and `elems` each hold at
    /// least `16·nb` bytes, and the CPU supports AVX2, and GFNI when `G`.
    #[inline(always)]
    unsafe fn rows_to_elems2_body<const G: bool>(rows: &[u8], elems: &mut [u8], nb: usize) {
        // SAFETY: the CPU features are this function's contract. With `nb`
        // a multiple of 32, every step has `g + 32 <= nb`: `plane_bytes32`
        // reads 32 bytes of each of the 16 rows of `nb` bytes at column
        // `g`, and the stores write the 512 element bytes `16·g ..` below
        // `16·nb`, inside both `16·nb`-byte buffers the contract requires.
        unsafe {
            debug_assert!(nb.is_multiple_of(32) && rows.len() >= 16 * nb && elems.len() >= 16 * nb);
            let src = rows.as_ptr();
            let dst = elems.as_mut_ptr();
            let mut g = 0;
            while g < nb {
                let lo_planes = plane_bytes32::<G>(src, nb, g);
                let hi_planes = plane_bytes32::<G>(src.add(8 * nb), nb, g);
                // Elements 8g + 16i.. (lane 0) and 8g + 128 + 16i.. (lane 1).
                let out = dst.add(16 * g);
                for i in 0..8 {
                    let (a, b) = (lo_planes[i], hi_planes[i]);
                    let l = _mm256_unpacklo_epi8(a, b);
                    let h = _mm256_unpackhi_epi8(a, b);
                    _mm256_storeu_si256(
                        out.add(32 * i) as *mut __m256i,
                        _mm256_permute2x128_si256(l, h, 0x20),
                    );
                    _mm256_storeu_si256(
                        out.add(256 + 32 * i) as *mut __m256i,
                        _mm256_permute2x128_si256(l, h, 0x31),
                    );
                }
                g += 32;
            }
        }
    }
    /// Where the next 32-byte store of [`rows_to_elems2_rows_avx2`] and
    /// [`rows_to_elems1_rows_avx2`] goes:
    /// a cursor over the rows of a [`Rows3`] box, in element order, moved by
    /// additions only. Addresses use `wrapping_add` because the cursor steps
    /// one row past the last before the loop ends (never stored to).
    #[derive(Clone, Copy)]
    struct RowCursor {
        /// Next store.
        ptr: *mut u8,
        /// Start of the current row and of row 0 of the current plane.
        row: *mut u8,
        plane: *mut u8,
        /// Elements left in the row; rows left in the plane.
        left: usize,
        rows_left: usize,
        /// Elements per store.
        per: usize,
        /// Row length and row and plane strides, in bytes / elements.
        n: usize,
        inner: usize,
        row_step: usize,
        plane_step: usize,
    }

    impl RowCursor {
        /// The cursor over `g`'s rows at `dst`, for elements of `esize`
        /// bytes (1 or 2).
        fn new(g: &Rows3, dst: *mut u8, esize: usize) -> Self {
            let first = dst.wrapping_add(g.dst0.wrapping_mul(esize));
            RowCursor {
                ptr: first,
                row: first,
                plane: first,
                left: g.n,
                rows_left: g.inner,
                per: 32 / esize,
                n: g.n,
                inner: g.inner,
                row_step: g.ds[1].wrapping_mul(esize),
                plane_step: g.ds[0].wrapping_mul(esize),
            }
        }

        #[inline(always)]
        fn step(&mut self) {
            self.ptr = self.ptr.wrapping_add(32);
            self.left -= self.per;
            if self.left == 0 {
                self.left = self.n;
                self.rows_left -= 1;
                if self.rows_left == 0 {
                    self.rows_left = self.inner;
                    self.plane = self.plane.wrapping_add(self.plane_step);
                    self.row = self.plane;
                } else {
                    self.row = self.row.wrapping_add(self.row_step);
                }
                self.ptr = self.row;
            }
        }
    }

    two_forms! {
        /// [`rows_to_elems2_avx2`] with every 32-byte store sent to its row of a
        /// box: the first `cols` columns of the 16 bit rows of `nb` bytes (the
        /// block's first `8·cols` elements). Requires `cols % 32 == 0`,
        /// `cols <= nb`, `rows.len() == 16·nb`, `g.n % 16 == 0` and `g` covering
        /// exactly those elements in order; `dst` valid for the box's rows (see
        /// [`super::bitunshuffle_rows`]).
        ///
        /// With `STREAM`, every store is a streaming store followed at the end by
        /// one store fence: the caller has checked that every row is a run of
        /// whole, 64-byte aligned lines ([`Rows3::whole_line_rows`]), so the
        /// stores, which go in element order, fill each line whole.
        ///
        /// # Safety
        /// The requirements above must hold, `dst` must be valid for writes
        /// of every row of `g` (`2·g.dst_end()` bytes) with no other access
        /// to those bytes during the call, with `STREAM` every row must be
        /// whole 64-byte aligned lines, and the CPU must support AVX2.
        rows_to_elems2_rows_avx2, rows_to_elems2_rows_gfni => rows_to_elems2_rows_body;
        [const STREAM: bool] [STREAM,] (rows: &[u8], nb: usize, cols: usize, g: &Rows3, dst: *mut u8)
    }

    /// The body of [`rows_to_elems2_rows_avx2`] (`G` false) and
    /// [`rows_to_elems2_rows_gfni`] (`G` true), inlined into each.
    ///
    /// # Safety
    /// As those functions (geometry, `dst` rows, `STREAM` alignment), and
    /// the CPU supports AVX2, and GFNI when `G`.
    #[inline(always)]
    unsafe fn rows_to_elems2_rows_body<const STREAM: bool, const G: bool>(
        rows: &[u8],
        nb: usize,
        cols: usize,
        g: &Rows3,
        dst: *mut u8,
    ) {
        // SAFETY: the CPU features and the `dst` rows are this function's
        // contract. Reads: `cols <= nb` is a multiple of 32, so each
        // `plane_bytes32` call reads 32 bytes at column `g0 < cols` of the
        // 16 rows of `nb` bytes in `rows` (`16·nb` long). Stores: see the
        // comments at each `store32` below.
        unsafe {
            debug_assert!(
                cols.is_multiple_of(32)
                    && cols <= nb
                    && rows.len() == 16 * nb
                    && g.n.is_multiple_of(16)
            );
            debug_assert_eq!(g.elements(), 8 * cols);
            let src = rows.as_ptr();
            let mut at = RowCursor::new(g, dst, 2);
            let mut g0 = 0;
            while g0 < cols {
                let lo_planes = plane_bytes32::<G>(src, nb, g0);
                let hi_planes = plane_bytes32::<G>(src.add(8 * nb), nb, g0);
                // Elements 8·g0 + 16i now, 8·g0 + 128 + 16i after them: every
                // store goes to the cursor, in element order.
                let mut upper = [_mm256_setzero_si256(); 8];
                for i in 0..8 {
                    let (a, b) = (lo_planes[i], hi_planes[i]);
                    let l = _mm256_unpacklo_epi8(a, b);
                    let h = _mm256_unpackhi_epi8(a, b);
                    // SAFETY: the cursor points at 16 elements of a box row,
                    // inside what the caller vouches for (the rows cover the
                    // elements exactly, so no store goes past the last row).
                    store32::<STREAM>(at.ptr, _mm256_permute2x128_si256(l, h, 0x20));
                    at.step();
                    upper[i] = _mm256_permute2x128_si256(l, h, 0x31);
                }
                for v in upper {
                    // SAFETY: as above.
                    store32::<STREAM>(at.ptr, v);
                    at.step();
                }
                g0 += 32;
            }
            if STREAM {
                _mm_sfence();
            }
        }
    }

    two_forms! {
        /// [`rows_to_elems2_rows_avx2`] for 1-byte elements: the first `cols`
        /// columns of the 8 bit rows of `nb` bytes (the block's first `8·cols`
        /// elements) to the rows of a box, 32 elements per store. Requires
        /// `cols % 32 == 0`, `cols <= nb`, `rows.len() == 8·nb`, `g.n % 32 == 0`
        /// and `g` covering exactly those elements in order; `dst` valid for the
        /// box's rows; with `STREAM`, rows of whole aligned lines (as there).
        ///
        /// # Safety
        /// The requirements above must hold, `dst` must be valid for writes
        /// of every row of `g` (`g.dst_end()` bytes) with no other access to
        /// those bytes during the call, and the CPU must support AVX2.
        rows_to_elems1_rows_avx2, rows_to_elems1_rows_gfni => rows_to_elems1_rows_body;
        [const STREAM: bool] [STREAM,] (rows: &[u8], nb: usize, cols: usize, g: &Rows3, dst: *mut u8)
    }

    /// The body of [`rows_to_elems1_rows_avx2`] (`G` false) and
    /// [`rows_to_elems1_rows_gfni`] (`G` true), inlined into each.
    ///
    /// # Safety
    /// As those functions (geometry, `dst` rows, `STREAM` alignment), and
    /// the CPU supports AVX2, and GFNI when `G`.
    #[inline(always)]
    unsafe fn rows_to_elems1_rows_body<const STREAM: bool, const G: bool>(
        rows: &[u8],
        nb: usize,
        cols: usize,
        g: &Rows3,
        dst: *mut u8,
    ) {
        // SAFETY: the CPU features and the `dst` rows are this function's
        // contract. Reads: `cols <= nb` is a multiple of 32, so each
        // `plane_bytes32` call reads 32 bytes at column `g0 < cols` of the
        // 8 rows of `nb` bytes in `rows` (`8·nb` long). Stores: see the
        // comments at each `store32` below.
        unsafe {
            debug_assert!(
                cols.is_multiple_of(32)
                    && cols <= nb
                    && rows.len() == 8 * nb
                    && g.n.is_multiple_of(32)
            );
            debug_assert_eq!(g.elements(), 8 * cols);
            let src = rows.as_ptr();
            let mut at = RowCursor::new(g, dst, 1);
            let mut g0 = 0;
            while g0 < cols {
                // Lane 0 of result i holds elements 8·g0 + 16i .. + 16, lane 1
                // elements 8·g0 + 128 + 16i .. + 16: results 2i and 2i + 1 make
                // 32 elements in a row, lanes 0 first.
                let e = plane_bytes32::<G>(src, nb, g0);
                for i in 0..4 {
                    // SAFETY: the cursor points at 32 elements of a box row,
                    // inside what the caller vouches for (the rows cover the
                    // elements exactly, so no store goes past the last row).
                    store32::<STREAM>(
                        at.ptr,
                        _mm256_permute2x128_si256(e[2 * i], e[2 * i + 1], 0x20),
                    );
                    at.step();
                }
                for i in 0..4 {
                    // SAFETY: as above.
                    store32::<STREAM>(
                        at.ptr,
                        _mm256_permute2x128_si256(e[2 * i], e[2 * i + 1], 0x31),
                    );
                    at.step();
                }
                g0 += 32;
            }
            if STREAM {
                _mm_sfence();
            }
        }
    }

    /// One 32-byte store at `p`: a streaming store with `STREAM` (`p` then
    /// 32-byte aligned), a plain unaligned one otherwise.
    ///
    /// # Safety
    /// `p` must be valid for writes of 32 bytes, 32-byte aligned with
    /// `STREAM`, and the CPU must support AVX2.
    #[inline(always)]
    unsafe fn store32<const STREAM: bool>(p: *mut u8, v: __m256i) {
        // SAFETY: the one store writes the 32 bytes at `p`, valid (and
        // aligned for the streaming form) by this function's contract,
        // which also provides AVX2.
        unsafe {
            if STREAM {
                _mm256_stream_si256(p as *mut __m256i, v);
            } else {
                _mm256_storeu_si256(p as *mut __m256i, v);
            }
        }
    }
}

// ---------------------------------------------------------------- filter 32008

/// Default block size in elements: `max(128, floor(8192 / ts / 8) · 8)`.
pub fn default_block(ts: usize) -> usize {
    ((8192 / ts.max(1)) / 8 * 8).max(128)
}

struct Params {
    ts: usize,
    block: usize,
    comp: u32,
    level: i32,
}

fn params(cd: &[u32], ctx: &ChunkContext) -> Result<Params> {
    let ts = match cd.get(2) {
        Some(&v) if v > 0 => v as usize,
        _ if ctx.element_size > 0 => ctx.element_size,
        _ => return Err(Error::filter(0, NAME, "missing element size")),
    };
    let block = match cd.get(3) {
        Some(&v) if v > 0 => v as usize,
        _ => default_block(ts),
    };
    if block % 8 != 0 {
        return Err(Error::filter(0, NAME, "block size is not a multiple of 8"));
    }
    let comp = cd.get(4).copied().unwrap_or(0);
    let level = cd.get(5).map(|&v| v as i32).unwrap_or(3);
    Ok(Params {
        ts,
        block,
        comp,
        level,
    })
}

/// Undo filter 32008 (bitshuffle, optionally LZ4 or Zstd compressed).
pub fn decode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let p = params(cd_values, ctx)?;
    let mut scratch = Vec::new();
    if p.comp == 0 {
        let mut out = vec![0u8; input.len()];
        for (s, d) in input
            .chunks(p.block.saturating_mul(p.ts))
            .zip(out.chunks_mut(p.block.saturating_mul(p.ts)))
        {
            bitunshuffle(s, d, p.ts, &mut scratch);
        }
        return Ok(out);
    }
    if p.comp != 2 && p.comp != 3 {
        return Err(unsupported(p.comp));
    }
    let bad = |why: &str| Error::filter(0, NAME, why);
    let total = input
        .get(..8)
        .map(|b| u64::from_be_bytes(b.try_into().unwrap_or_default()))
        .ok_or_else(|| bad("truncated header"))?;
    let block_bytes = input
        .get(8..12)
        .map(|b| u32::from_be_bytes(b.try_into().unwrap_or_default()) as usize)
        .ok_or_else(|| bad("truncated header"))?;
    if total > ctx.max_output as u64 {
        return Err(bad("decoded size exceeds the chunk bound"));
    }
    let total = total as usize;
    if !total.is_multiple_of(p.ts) || block_bytes == 0 || block_bytes % (8 * p.ts) != 0 {
        return Err(bad("inconsistent sizes in header"));
    }
    let mut out = vec![0u8; total];
    let n = total / p.ts;
    let block = block_bytes / p.ts;
    let tail_elems = (n % block) & !7;
    let mut pos = 12usize;
    let mut zst = codec::ZstdDecoder::new();
    let mut raw = Vec::new();
    let mut written = 0usize;
    let nfull = n / block;
    for i in 0..=nfull {
        let elems = if i < nfull { block } else { tail_elems };
        if elems == 0 {
            continue;
        }
        let c = input
            .get(pos..pos + 4)
            .map(|b| u32::from_be_bytes(b.try_into().unwrap_or_default()) as usize)
            .ok_or_else(|| bad("truncated block header"))?;
        let payload = input
            .get(pos + 4..pos + 4 + c)
            .ok_or_else(|| bad("truncated block"))?;
        pos += 4 + c;
        let nbytes = elems * p.ts;
        raw.resize(nbytes, 0);
        if p.comp == 2 {
            codec::lz4_decode_into(payload, &mut raw, NAME)?;
        } else {
            zst.decode_into(payload, &mut raw, NAME)?;
        }
        bitunshuffle(
            &raw,
            &mut out[written..written + nbytes],
            p.ts,
            &mut scratch,
        );
        written += nbytes;
    }
    let rest = total - written;
    let tail = input
        .get(pos..pos + rest)
        .ok_or_else(|| bad("truncated trailing elements"))?;
    out[written..].copy_from_slice(tail);
    Ok(out)
}

/// Apply filter 32008.
pub fn encode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let p = params(cd_values, ctx)?;
    if !input.len().is_multiple_of(p.ts) {
        return Err(Error::filter(
            0,
            NAME,
            "chunk size is not a multiple of the element size",
        ));
    }
    let mut scratch = Vec::new();
    if p.comp == 0 {
        let mut out = vec![0u8; input.len()];
        for (s, d) in input
            .chunks(p.block.saturating_mul(p.ts))
            .zip(out.chunks_mut(p.block.saturating_mul(p.ts)))
        {
            bitshuffle(s, d, p.ts, &mut scratch);
        }
        return Ok(out);
    }
    if p.comp != 2 && p.comp != 3 {
        return Err(unsupported(p.comp));
    }
    let n = input.len() / p.ts;
    let mut out = Vec::with_capacity(input.len() / 2 + 64);
    out.extend_from_slice(&(input.len() as u64).to_be_bytes());
    out.extend_from_slice(&(p.block.saturating_mul(p.ts) as u32).to_be_bytes());
    let core = n - (n % p.block) % 8;
    let mut shuf = Vec::new();
    for blk in input[..core * p.ts].chunks(p.block.saturating_mul(p.ts)) {
        shuf.resize(blk.len(), 0);
        bitshuffle(blk, &mut shuf, p.ts, &mut scratch);
        let c = if p.comp == 2 {
            codec::lz4_compress(&shuf)
        } else {
            codec::zstd_compress(&shuf, p.level)
        };
        out.extend_from_slice(&(c.len() as u32).to_be_bytes());
        out.extend_from_slice(&c);
    }
    out.extend_from_slice(&input[core * p.ts..]);
    Ok(out)
}

fn unsupported(comp: u32) -> Error {
    Error::UnsupportedCodec {
        filter: NAME,
        codec: comp,
        name: "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_bytes_moves_each_byte() {
        let mut w = [0u64; 8];
        for (k, x) in w.iter_mut().enumerate() {
            for c in 0..8 {
                *x |= ((k * 8 + c) as u64 + 1) << (8 * c);
            }
        }
        let t = transpose_bytes(&w);
        for (c, x) in t.iter().enumerate() {
            for k in 0..8 {
                assert_eq!(
                    (x >> (8 * k)) & 0xff,
                    (k * 8 + c) as u64 + 1,
                    "byte {k} of out[{c}]"
                );
            }
        }
    }
    use proptest::prelude::*;

    /// Bit-by-bit definition of the transform.
    fn naive(src: &[u8], ts: usize) -> Vec<u8> {
        let n = src.len() / ts;
        let mut out = vec![0u8; src.len()];
        for i in 0..n {
            for j in 0..ts {
                for k in 0..8 {
                    let bit = (src[i * ts + j] >> k) & 1;
                    let row = 8 * j + k;
                    out[row * (n / 8) + i / 8] |= bit << (i % 8);
                }
            }
        }
        out
    }

    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }

    #[test]
    fn transpose8_is_transpose() {
        let x = 0x0123_4567_89ab_cdefu64;
        let y = transpose8(x);
        for r in 0..8 {
            for c in 0..8 {
                assert_eq!((y >> (8 * r + c)) & 1, (x >> (8 * c + r)) & 1);
            }
        }
    }

    /// The kernels' form for one test case: the AVX2-only one when
    /// `no_gfni`, else the best this CPU has; restored when dropped.
    struct Form;

    impl Form {
        fn new(no_gfni: bool) -> Self {
            crate::cpu::force(if no_gfni {
                crate::cpu::Force::NoGfni
            } else {
                crate::cpu::Force::Nothing
            });
            Form
        }
    }

    impl Drop for Form {
        fn drop(&mut self) {
            crate::cpu::force(crate::cpu::Force::Nothing);
        }
    }

    /// Both forms of the kernels, timed in one process, alternating:
    /// `cargo test --release --lib kernel_forms -- --ignored --nocapture`.
    #[test]
    #[ignore = "benchmark"]
    fn kernel_forms() {
        let block = crate::test_support::noise(65536, 0x9E37_79B9_7F4A_7C15);
        for ts in [1usize, 2] {
            let mut out = vec![0u8; block.len()];
            let mut scratch = Vec::new();
            // [direction][form]: bitshuffle, bitunshuffle × GFNI, AVX2.
            let mut best = [[f64::MAX; 2]; 2];
            for round in 0..40 {
                for form in [round % 2, 1 - round % 2] {
                    let _form = Form::new(form == 1);
                    for (dir, b) in best.iter_mut().enumerate() {
                        let t0 = std::time::Instant::now();
                        for _ in 0..200 {
                            if dir == 0 {
                                bitshuffle(&block, &mut out, ts, &mut scratch);
                            } else {
                                bitunshuffle(&block, &mut out, ts, &mut scratch);
                            }
                        }
                        b[form] = b[form].min(t0.elapsed().as_secs_f64());
                    }
                }
            }
            let gb = |t: f64| 200.0 * block.len() as f64 / t / 1e9;
            for (name, b) in ["bitshuffle", "bitunshuffle"].iter().zip(best) {
                println!(
                    "{name} ts {ts}: GFNI {:.1} GB/s, AVX2 {:.1} GB/s ({:.2}x)",
                    gb(b[0]),
                    gb(b[1]),
                    b[1] / b[0]
                );
            }
        }
    }

    #[test]
    fn matches_bitwise_definition() {
        let src: Vec<u8> = (0..48u32).map(|i| (i * 37 + 11) as u8).collect();
        let mut a = vec![0; 48];
        bitshuffle_scalar(&src, &mut a, 2);
        assert_eq!(a, naive(&src, 2));
    }

    proptest! {
        #[test]
        fn simd_equals_scalar_and_round_trips(ts in 1usize..=16, data in proptest::collection::vec(any::<u8>(), 0..5000), no_gfni in any::<bool>()) {
            let _form = Form::new(no_gfni);
            let mut scratch = Vec::new();
            let mut a = vec![0; data.len()];
            let mut b = vec![0; data.len()];
            bitshuffle(&data, &mut a, ts, &mut scratch);
            bitshuffle_scalar(&data, &mut b, ts);
            prop_assert_eq!(&a, &b);
            let mut c = vec![0; data.len()];
            let mut d = vec![0; data.len()];
            bitunshuffle(&a, &mut c, ts, &mut scratch);
            bitunshuffle_scalar(&a, &mut d, ts);
            prop_assert_eq!(&c, &d);
            prop_assert_eq!(&c, &data);
        }

        /// Sizes that take the fused 2-byte kernel (256-element multiples) and
        /// the ones around them: equal to the scalar path and the input.
        #[test]
        fn fused_2byte_equals_scalar(k in 1usize..40, extra in 0usize..3, data in proptest::collection::vec(any::<u8>(), 20480), no_gfni in any::<bool>()) {
            let _form = Form::new(no_gfni);
            let len = (k * 512 + extra * 2).min(data.len());
            let data = &data[..len];
            let mut scratch = Vec::new();
            let mut a = vec![0; len];
            bitshuffle_scalar(data, &mut a, 2);
            let mut c = vec![0; len];
            let mut d = vec![0; len];
            bitunshuffle(&a, &mut c, 2, &mut scratch);
            bitunshuffle_scalar(&a, &mut d, 2);
            prop_assert_eq!(&c, &d);
            prop_assert_eq!(&c[..], data);
        }

        /// The rows kernel writes exactly what the two-step definition
        /// (unshuffle the block, then copy its rows into the box) writes, and
        /// nothing outside the box, for boxes taking the whole block or its
        /// first planes; other geometries are refused, writing nothing.
        #[test]
        fn rows_kernel_equals_unshuffle_then_copy(
            ts in 1usize..=2, n16 in 1usize..6, inner in 1usize..9, k in 1usize..5,
            cut in 0usize..3, pad in 0usize..40, gap in 0usize..3, off in 0usize..17,
            seed in any::<u64>(), no_gfni in any::<bool>(),
        ) {
            let _form = Form::new(no_gfni);
            let n = 16 * n16;
            // outer · inner · n a multiple of 256 elements.
            let row_elems = inner * n;
            let outer = (256 * k / gcd(256 * k, row_elems)).max(1);
            let elems = outer * row_elems;
            prop_assume!(elems.is_multiple_of(256) && elems <= 1 << 16);
            let mut x = seed | 1;
            let block: Vec<u8> = (0..ts * elems)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let mut elemsbuf = vec![0u8; ts * elems];
            bitunshuffle_scalar(&block, &mut elemsbuf, ts);
            let ds1 = n + pad;
            let ds0 = ds1 * (inner + gap);
            let whole = shuffle::Rows3 { n, outer, inner, src0: 0, ss: [n * inner, n], dst0: off, ds: [ds0, ds1] };
            // The whole block, its first planes, rows not a multiple of 16.
            let first = shuffle::Rows3 { outer: outer.saturating_sub(cut).max(1), ..whole };
            let odd = shuffle::Rows3 { n: n - 8, ss: [(n - 8) * inner, n - 8], ..whole };
            for g in [whole, first, odd] {
                let end = g.dst_end().unwrap();
                let mut want = vec![0xA5u8; ts * end + 7];
                for a in 0..g.outer {
                    for b in 0..g.inner {
                        let s = ts * (a * g.ss[0] + b * g.ss[1]);
                        let d = ts * (off + a * ds0 + b * ds1);
                        want[d..d + ts * g.n].copy_from_slice(&elemsbuf[s..s + ts * g.n]);
                    }
                }
                let mut got = vec![0xA5u8; ts * end + 7];
                let fits = bitunshuffle_rows_fits(block.len(), ts, &g);
                // SAFETY: `got` holds more than ts · dst_end bytes and is not shared.
                let done = unsafe { bitunshuffle_rows(&block, ts, &g, got.as_mut_ptr()) };
                prop_assert_eq!(done, fits);
                let takes = g.n % (32 / ts) == 0 && g.elements() % 256 == 0;
                if crate::cpu::avx2() {
                    prop_assert_eq!(done, takes);
                }
                if done {
                    prop_assert_eq!(&got, &want);
                } else {
                    prop_assert!(got.iter().all(|&b| b == 0xA5));
                }
            }
        }

        /// The streamed rows kernel writes what the plain one writes, with
        /// rows of whole aligned lines (where it uses streaming stores) and
        /// without (where it falls back to plain stores).
        #[test]
        fn streamed_rows_kernel_equals_plain(
            ts in 1usize..=2, n32 in 1usize..4, inner in 1usize..6, k in 1usize..4, cut in 0usize..3,
            pad32 in 0usize..3, gap in 0usize..3, off32 in 0usize..3, skew in 0usize..2,
            seed in any::<u64>(), no_gfni in any::<bool>(),
        ) {
            let _form = Form::new(no_gfni);
            let n = 64 / ts * n32;
            let row_elems = inner * n;
            let outer = (256 * k / gcd(256 * k, row_elems)).max(1);
            let elems = outer * row_elems;
            prop_assume!(elems <= 1 << 16);
            let mut x = seed | 1;
            let block: Vec<u8> = (0..ts * elems)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let ds1 = 64 / ts * (n32 + pad32);
            let ds0 = ds1 * (inner + gap);
            // `skew` moves every row off its line boundary (plain stores).
            let dst0 = 64 / ts * off32 + 8 * skew;
            let whole = shuffle::Rows3 { n, outer, inner, src0: 0, ss: [n * inner, n], dst0, ds: [ds0, ds1] };
            let first = shuffle::Rows3 { outer: outer.saturating_sub(cut).max(1), ..whole };
            for g in [whole, first] {
                let len = ts * g.dst_end().unwrap() + 64;
                let mut plain = vec![0xA5u8; len];
                let mut aligned = vec![0xA5u8; len + 64];
                let at = aligned.as_ptr().align_offset(64);
                let streamed = &mut aligned[at..at + len];
                prop_assert_eq!(g.whole_line_rows(streamed.as_mut_ptr(), ts), skew == 0);
                // SAFETY: both buffers hold more than ts · dst_end bytes and are not shared.
                let a = unsafe { bitunshuffle_rows(&block, ts, &g, plain.as_mut_ptr()) };
                // SAFETY: as for `a`: `streamed` is `len` > ts · dst_end bytes
                // of `aligned`, borrowed mutably only here.
                let b = unsafe { bitunshuffle_rows_streamed(&block, ts, &g, streamed.as_mut_ptr()) };
                prop_assert_eq!(a, b);
                if crate::cpu::avx2() {
                    prop_assert_eq!(a, g.elements() % 256 == 0);
                }
                prop_assert_eq!(&plain[..], &streamed[..]);
            }
        }

        #[test]
        fn filter_round_trip(ts in 1usize..=16, comp in prop::sample::select(vec![0u32, 2, 3]), n in 0usize..3000, seed in any::<u8>()) {
            let data: Vec<u8> = (0..n * ts).map(|i| ((i / 7) as u8).wrapping_mul(seed)).collect();
            let cd = [0, 4, ts as u32, 0, comp, 3];
            let ctx = ChunkContext::new(ts, data.len());
            let enc = encode(&data, &cd, &ctx).unwrap();
            prop_assert_eq!(decode(&enc, &cd, &ctx).unwrap(), data);
        }
    }
}
