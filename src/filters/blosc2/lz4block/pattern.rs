//! The first 32 bytes of an LZ4 match (`docs/filters-format.md` §3.7: byte
//! `i` of a match at distance `off` is byte `i mod off` of the `off` bytes
//! before it) built with two byte shuffles and no branch on the offset, for
//! the x86-64 fast loop.

use std::arch::x86_64::*;

/// 32 bytes, aligned so a table row is one 32-byte load.
#[repr(C, align(32))]
struct Row([u8; 32]);

/// `LO[k]`: for byte `i` of the match, `i mod k` when that is below 16 (a
/// byte of the first 16 source bytes), else 0x80 (shuffled to zero).
static LO: [Row; 33] = table(false);

/// `HI[k]`: `i mod k - 16` when `i mod k` is 16 or more (a byte of the
/// source bytes 16..32), else 0x80.
static HI: [Row; 33] = table(true);

/// `STEP[k]`: the largest multiple of `k` that is at most 32 (how far the
/// 32-byte pattern of a period-`k` match may be stored again).
pub(super) static STEP: [u8; 33] = steps();

const fn table(high: bool) -> [Row; 33] {
    let mut t = [const { Row([0x80; 32]) }; 33];
    let mut k = 1;
    while k <= 32 {
        let mut i = 0;
        while i < 32 {
            let j = i % k;
            if high && j >= 16 {
                t[k].0[i] = (j - 16) as u8;
            } else if !high && j < 16 {
                t[k].0[i] = j as u8;
            }
            i += 1;
        }
        k += 1;
    }
    t
}

const fn steps() -> [u8; 33] {
    let mut s = [0u8; 33];
    let mut k = 1;
    while k <= 32 {
        s[k] = (32 - 32 % k) as u8;
        k += 1;
    }
    s
}

/// The 32 bytes `from[i mod k]`, `i < 32`, for `1 <= k <= 32`: for a match
/// at distance `off`, `k = min(off, 32)` gives its first 32 bytes (when
/// `off >= 32` these are simply `from[0..32]`). Only `from[0..k]` is used,
/// but all of `from[0..32]` is read.
///
/// # Safety
/// AVX2 available; `1 <= k <= 32`; `from .. from + 32` readable.
#[inline(always)]
pub(super) unsafe fn pattern(from: *const u8, k: usize) -> __m256i {
    debug_assert!((1..=32).contains(&k));
    // SAFETY: the two 16-byte loads cover `from .. from + 32` (the caller's
    // promise); the table rows are 32 aligned bytes of statics, `k <= 32`.
    unsafe {
        let a = _mm256_broadcastsi128_si256(_mm_loadu_si128(from as *const __m128i));
        let b = _mm256_broadcastsi128_si256(_mm_loadu_si128(from.add(16) as *const __m128i));
        let lo = _mm256_load_si256(LO[k].0.as_ptr() as *const __m256i);
        let hi = _mm256_load_si256(HI[k].0.as_ptr() as *const __m256i);
        _mm256_or_si256(_mm256_shuffle_epi8(a, lo), _mm256_shuffle_epi8(b, hi))
    }
}
