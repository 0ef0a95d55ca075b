//! The bit transpose of bitunshuffle in 128-bit WebAssembly SIMD: bit rows
//! to byte planes, and for 2-byte elements straight to the interleaved
//! elements (transpose and byte unshuffle in one pass, no scratch).
//!
//! Per 16 columns (128 elements) of one byte plane: the 8 bit rows are
//! loaded as 8 vectors, byte-transposed (three rounds of unpacks) into 8
//! vectors of two columns each (one `u64` per column, byte `k` from row
//! `k`), and each `u64` is bit-transposed in place (the masked-swap rounds
//! of [`super::transpose8`], two lanes at a time). Lane `c` then holds the
//! plane bytes of elements `8c..8c + 8` of that column pair.

use core::arch::wasm32::*;

/// The plane bytes of elements `8g..8g + 128` of plane `j` (rows `8j..8j +
/// 8` of `nb` bytes each), as 8 vectors of 16 consecutive elements.
///
/// # Safety
/// `rows` must hold `8·(j + 1)·nb` bytes and `g + 16 <= nb`.
#[inline(always)]
unsafe fn plane16(rows: *const u8, nb: usize, j: usize, g: usize) -> [v128; 8] {
    // SAFETY: row 8j + k spans bytes (8j + k)·nb .. (8j + k + 1)·nb of
    // `rows` (in bounds by the contract) and columns g..g + 16 lie inside
    // it; v128 loads need no alignment.
    let r = |k: usize| unsafe { v128_load(rows.add((8 * j + k) * nb + g) as *const v128) };
    let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3));
    let (r4, r5, r6, r7) = (r(4), r(5), r(6), r(7));
    // Bytes of row pairs interleaved: lo = columns 0..8, hi = 8..16.
    let lo8 = |a, b| i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(a, b);
    let hi8 =
        |a, b| i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(a, b);
    let lo16 = |a, b| i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(a, b);
    let hi16 = |a, b| i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(a, b);
    let lo32 = |a, b| i32x4_shuffle::<0, 4, 1, 5>(a, b);
    let hi32 = |a, b| i32x4_shuffle::<2, 6, 3, 7>(a, b);
    let (a01l, a01h, a23l, a23h) = (lo8(r0, r1), hi8(r0, r1), lo8(r2, r3), hi8(r2, r3));
    let (a45l, a45h, a67l, a67h) = (lo8(r4, r5), hi8(r4, r5), lo8(r6, r7), hi8(r6, r7));
    // Four bytes (rows 0..4 or 4..8) per column: columns 0..4, 4..8, 8..12, 12..16.
    let b03 = [
        lo16(a01l, a23l),
        hi16(a01l, a23l),
        lo16(a01h, a23h),
        hi16(a01h, a23h),
    ];
    let b47 = [
        lo16(a45l, a67l),
        hi16(a45l, a67l),
        lo16(a45h, a67h),
        hi16(a45h, a67h),
    ];
    let mut out = [i64x2_splat(0); 8];
    for q in 0..4 {
        out[2 * q] = transpose8x2(lo32(b03[q], b47[q]));
        out[2 * q + 1] = transpose8x2(hi32(b03[q], b47[q]));
    }
    out
}

/// [`super::transpose8`] on both 64-bit lanes.
#[inline(always)]
fn transpose8x2(mut x: v128) -> v128 {
    let round = |x: v128, s: u32, m: u64| {
        let t = v128_and(v128_xor(x, u64x2_shr(x, s)), u64x2_splat(m));
        v128_xor(x, v128_xor(t, i64x2_shl(t, s)))
    };
    x = round(x, 7, 0x00AA_00AA_00AA_00AA);
    x = round(x, 14, 0x0000_CCCC_0000_CCCC);
    round(x, 28, 0x0000_0000_F0F0_F0F0)
}

/// Bit rows of 2-byte elements (16 rows of `nb` bytes) to the elements
/// (`16·nb` bytes); false, writing nothing, unless `nb` is a multiple of 16
/// and both buffers hold exactly `16·nb` bytes.
pub(super) fn rows_to_elems2(rows: &[u8], elems: &mut [u8], nb: usize) -> bool {
    if !nb.is_multiple_of(16) || rows.len() != 16 * nb || elems.len() != 16 * nb {
        return false;
    }
    let out = elems.as_mut_ptr();
    let mut g = 0;
    while g < nb {
        // SAFETY: rows holds 16·nb = 8·2·nb bytes and g + 16 <= nb (nb a
        // multiple of 16); the stores cover bytes 16g .. 16g + 256 of
        // `elems` (8g + 128 elements of 2 bytes), inside its 16·nb.
        unsafe {
            let p0 = plane16(rows.as_ptr(), nb, 0, g);
            let p1 = plane16(rows.as_ptr(), nb, 1, g);
            let o = out.add(16 * g) as *mut v128;
            for m in 0..8 {
                let lo = i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(
                    p0[m], p1[m],
                );
                let hi =
                    i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(
                        p0[m], p1[m],
                    );
                v128_store(o.add(2 * m), lo);
                v128_store(o.add(2 * m + 1), hi);
            }
        }
        g += 16;
    }
    true
}

/// Bit rows to byte planes (as [`super::rows_to_planes`]) for columns `0..k`,
/// `k` the largest multiple of 16 not above `nb`: returns `k` (the scalar
/// code does the rest).
pub(super) fn rows_to_planes(rows: &[u8], planes: &mut [u8], ts: usize, nb: usize) -> usize {
    let size = ts.checked_mul(8).and_then(|b| b.checked_mul(nb));
    if size.is_none_or(|s| rows.len() < s || planes.len() < s) {
        return 0;
    }
    let k = nb & !15;
    let n = 8 * nb;
    let out = planes.as_mut_ptr();
    for j in 0..ts {
        let mut g = 0;
        while g < k {
            // SAFETY: rows holds 8·ts·nb >= 8·(j + 1)·nb bytes and g + 16
            // <= k <= nb; the stores cover plane bytes j·n + 8g .. j·n +
            // 8g + 128 <= (j + 1)·n <= planes.len().
            unsafe {
                let p = plane16(rows.as_ptr(), nb, j, g);
                let o = out.add(j * n + 8 * g) as *mut v128;
                for (m, v) in p.iter().enumerate() {
                    v128_store(o.add(m), *v);
                }
            }
            g += 16;
        }
    }
    k
}
