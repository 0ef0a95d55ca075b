//! The x86-64 fast loop of the raw LZ4 block decoder (`shared/spec/filters.md`
//! §3.7): while both buffers have a margin left, sequences are decoded with
//! raw-pointer 32-byte moves and no per-byte bounds checks; lengths and
//! offsets are still checked once per sequence, so a corrupt block gives the
//! same error class as the safe decoder. Short-period matches (offset < 16)
//! are expanded with one byte shuffle. The safe decoder finishes the block.

use super::{read_len, DecodeError};
use std::arch::x86_64::*;

/// Bytes of input the loop wants left before starting a sequence.
const IN_MARGIN: usize = 48;
/// Bytes of output the loop wants left before starting a sequence.
const OUT_MARGIN: usize = 64;

/// `MASKS[off][i] = i mod off` for `i < 32`: shuffles that repeat the first
/// `off` bytes (the low and the high 16 bytes of a 32-byte pattern).
static MASKS: [[u8; 32]; 16] = masks();

/// `STEPS[off]`: the largest multiple of `off` that is at most 32.
static STEPS: [u8; 16] = steps();

const fn masks() -> [[u8; 32]; 16] {
    let mut m = [[0u8; 32]; 16];
    let mut off = 1;
    while off < 16 {
        let mut i = 0;
        while i < 32 {
            m[off][i] = (i % off) as u8;
            i += 1;
        }
        off += 1;
    }
    m
}

const fn steps() -> [u8; 16] {
    let mut s = [0u8; 16];
    let mut off = 1;
    while off < 16 {
        s[off] = (32 - 32 % off) as u8;
        off += 1;
    }
    s
}

/// How the fast loop stopped.
pub(super) enum Stop {
    /// The block ended (last literals consumed exactly the input): bytes written.
    Done(usize),
    /// A margin ran out at a sequence boundary: resume safely from `(ip, op)`.
    Resume(usize, usize),
}

/// `SEL[min(off, 16)]`: all ones where the high 16 bytes of a short match
/// come from the repeated pattern (offset < 16), zero where they are the
/// source's own bytes 16..32.
static SEL: [[u8; 16]; 17] = sel();

/// `LOW[min(off, 16)]`: the pattern shuffle of the low 16 bytes, the
/// identity for offsets of 16 and more.
static LOW: [[u8; 16]; 17] = low();

/// `HIGH[min(off, 16)]`: the pattern shuffle of the high 16 bytes (unused,
/// zero, for offsets of 16 and more).
static HIGH: [[u8; 16]; 17] = high();

const fn sel() -> [[u8; 16]; 17] {
    let mut m = [[0u8; 16]; 17];
    let mut off = 1;
    while off < 16 {
        m[off] = [0xFF; 16];
        off += 1;
    }
    m
}

const fn low() -> [[u8; 16]; 17] {
    let mut m = [[0u8; 16]; 17];
    let mut off = 0;
    while off <= 16 {
        let mut i = 0;
        while i < 16 {
            m[off][i] = if off == 0 || off >= 16 {
                i as u8
            } else {
                (i % off) as u8
            };
            i += 1;
        }
        off += 1;
    }
    m
}

const fn high() -> [[u8; 16]; 17] {
    let mut m = [[0u8; 16]; 17];
    let mut off = 1;
    while off < 16 {
        let mut i = 0;
        while i < 16 {
            m[off][i] = ((i + 16) % off) as u8;
            i += 1;
        }
        off += 1;
    }
    m
}

/// Copy a match of at most 18 bytes at distance `off` to `d + op` with one
/// 32-byte store and no branch on the offset: for `off < 16` the first `off`
/// bytes are repeated by a shuffle, otherwise the 32 bytes at `op - off` are
/// copied (correct for the `ml` bytes that matter when `off >= ml`). Up to 32
/// bytes are written; the surplus is rewritten by later sequences.
///
/// # Safety
/// AVX2 available; `1 <= off <= op`; `off >= 16` implies `off >= ml` (the
/// match length, at most 18); `d` valid for reads and writes up to `op + 32`.
#[inline(always)]
unsafe fn copy_short_match(d: *mut u8, op: usize, off: usize) {
    // SAFETY: loads start at `op - off >= 0` and end at `op - off + 32 <=
    // op + 31`; the store covers `op .. op + 32`, all inside the buffer. When
    // `off < 16` only bytes before `op` are used (the shuffle picks bytes
    // 0..off of the first load); when `off >= 16` the bytes that matter,
    // `op - off .. op - off + ml`, all precede `op`.
    unsafe {
        let from = d.add(op - off);
        let k = off.min(16);
        let v0 = _mm_loadu_si128(from as *const __m128i);
        let v1 = _mm_loadu_si128(from.add(16) as *const __m128i);
        let lo = _mm_shuffle_epi8(v0, _mm_loadu_si128(LOW[k].as_ptr() as *const __m128i));
        let ph = _mm_shuffle_epi8(v0, _mm_loadu_si128(HIGH[k].as_ptr() as *const __m128i));
        let sel = _mm_loadu_si128(SEL[k].as_ptr() as *const __m128i);
        let hi = _mm_blendv_epi8(v1, ph, sel);
        _mm256_storeu_si256(d.add(op) as *mut __m256i, _mm256_set_m128i(hi, lo));
    }
}

/// Copy 16 bytes (unaligned, non-overlapping).
///
/// # Safety
/// 16 bytes readable at `from`, writable at `to`.
#[inline(always)]
unsafe fn copy16(from: *const u8, to: *mut u8) {
    // SAFETY: caller guarantees both 16-byte ranges.
    unsafe {
        let v = _mm_loadu_si128(from as *const __m128i);
        _mm_storeu_si128(to as *mut __m128i, v);
    }
}

/// Copy 32 bytes (unaligned, non-overlapping).
///
/// # Safety
/// 32 bytes readable at `from`, writable at `to`.
#[inline(always)]
unsafe fn copy32(from: *const u8, to: *mut u8) {
    // SAFETY: caller guarantees both 32-byte ranges.
    unsafe {
        let v = _mm256_loadu_si256(from as *const __m256i);
        _mm256_storeu_si256(to as *mut __m256i, v);
    }
}

/// 32 bytes of the period-`off` pattern that starts at `from` (`1 <= off <
/// 16`): two shuffles of one 16-byte load.
///
/// # Safety
/// AVX2 available; `from .. from + 16` readable.
#[inline(always)]
unsafe fn pattern32(from: *const u8, off: usize) -> __m256i {
    // SAFETY: the 16-byte load is what the caller promises; the masks are
    // 32-byte rows of a static table.
    unsafe {
        let v = _mm_loadu_si128(from as *const __m128i);
        let mask = MASKS[off].as_ptr();
        let lo = _mm_shuffle_epi8(v, _mm_loadu_si128(mask as *const __m128i));
        let hi = _mm_shuffle_epi8(v, _mm_loadu_si128(mask.add(16) as *const __m128i));
        _mm256_set_m128i(hi, lo)
    }
}

/// Copy a match of `ml` bytes at distance `off` to `d + op`, in wide steps
/// that may write up to 31 bytes past the match.
///
/// # Safety
/// AVX2 available; `off <= op`; `d` valid for reads and writes up to `op + ml + 32`.
#[inline(always)]
unsafe fn copy_match_wide(d: *mut u8, op: usize, off: usize, ml: usize) {
    // SAFETY: ranges as promised by the caller; for off >= 32 (resp. 16) each
    // 32-byte (16-byte) load ends at or before the store position, so it
    // reads bytes already final.
    unsafe {
        let from = d.add(op - off);
        let to = d.add(op);
        if off >= 32 {
            let mut k = 0;
            while k < ml {
                copy32(from.add(k), to.add(k));
                k += 32;
            }
        } else if off >= 16 {
            let mut k = 0;
            while k < ml {
                let v = _mm_loadu_si128(from.add(k) as *const __m128i);
                _mm_storeu_si128(to.add(k) as *mut __m128i, v);
                k += 16;
            }
        } else {
            // Period off < 16: stores step by the largest multiple of off
            // that is <= 32.
            let pat = pattern32(from, off);
            let step = usize::from(STEPS[off]);
            let mut k = 0;
            while k < ml {
                _mm256_storeu_si256(to.add(k) as *mut __m256i, pat);
                k += step;
            }
        }
    }
}

/// Decode sequences while the margins hold.
///
/// Literals: a length in the token's nibble (≤ 14) is one 16-byte move with
/// no check beyond the loop margins; an extended length is one 32-byte move
/// when it is ≤ 32, a checked copy otherwise. Matches whose length is in the
/// nibble (≤ 18) take the one-store copy ([`copy_short_match`]) whenever 50
/// bytes of output remain, whatever the literal length was (the literal runs
/// of the low-byte planes are mostly 15–29, with short matches); longer
/// matches take [`copy_match_first_wide`]. Every length and offset is
/// checked once per sequence.
///
/// # Safety
/// The CPU must support AVX2 (which implies SSSE3).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn run(src: &[u8], out: &mut [u8]) -> Result<Stop, DecodeError> {
    let (n, on) = (src.len(), out.len());
    if n < IN_MARGIN || on < OUT_MARGIN {
        return Ok(Stop::Resume(0, 0));
    }
    // Last input / output positions at which a sequence may start.
    let (ilim, olim) = (n - IN_MARGIN, on - OUT_MARGIN);
    // Last output position from which a short match takes the one-store copy
    // (and the wide copy of an 18-byte match at offset 16 or 17): 18 + 32.
    let slim = on - 50;
    let s = src.as_ptr();
    let mut d = out.as_mut_ptr();
    let (mut ip, mut op) = (0usize, 0usize);
    while ip <= ilim && op <= olim {
        // SAFETY: ip <= n - 48 (loop condition).
        let token = unsafe { *s.add(ip) };
        ip += 1;
        let mut lit = usize::from(token >> 4);
        if lit != 15 {
            // SAFETY: ip + 47 <= n and op + 64 <= on: 16 bytes are readable at
            // ip and writable at op; ≤ 14 of them are the literals.
            unsafe { copy16(s.add(ip), d.add(op)) };
            ip += lit;
            op += lit;
            // ip <= n - 33 here: the offset is inside the input.
        } else {
            lit = read_len(src, &mut ip, lit)?;
            if lit <= 32 && ip + 32 <= n && op + 32 <= on {
                // SAFETY: 32 bytes readable at ip, writable at op (checked).
                unsafe { copy32(s.add(ip), d.add(op)) };
            } else {
                if lit > n - ip {
                    return Err("literals past input end");
                }
                if lit > on - op {
                    return Err("literals past output end");
                }
                // SAFETY: both ranges were checked above; distinct borrows.
                unsafe { std::ptr::copy_nonoverlapping(s.add(ip), d.add(op), lit) };
            }
            ip += lit;
            op += lit;
            if ip >= n {
                return if ip == n {
                    Ok(Stop::Done(op))
                } else {
                    Err("literals past input end")
                };
            }
            if ip + 2 > n {
                return Err("truncated offset");
            }
        }
        // SAFETY: ip + 2 <= n (either branch above).
        let off = usize::from(u16::from_le_bytes(unsafe {
            std::ptr::read_unaligned(s.add(ip) as *const [u8; 2])
        }));
        ip += 2;
        let mut ml = usize::from(token & 15);
        if ml != 15 && op <= slim {
            ml += 4;
            if off.wrapping_sub(1) >= op {
                return Err(if off == 0 {
                    "zero offset"
                } else {
                    "offset before output start"
                });
            }
            if off >= 16 && off < ml {
                // SAFETY: off <= op, op + 18 + 32 <= on.
                unsafe { copy_match_wide(d, op, off, ml) };
            } else {
                // SAFETY: 1 <= off <= op, off >= 16 implies off >= ml, op + 32 <= on.
                unsafe { copy_short_match(d, op, off) };
            }
            op += ml;
            continue;
        }
        if ml == 15 {
            ml = read_len(src, &mut ip, ml)?;
        }
        ml += 4;
        if off.wrapping_sub(1) >= op {
            return Err(if off == 0 {
                "zero offset"
            } else {
                "offset before output start"
            });
        }
        if ml > on - op {
            return Err("match past output end");
        }
        let end = op + ml;
        if end + 32 > on {
            // Too close to the end for wide moves: finish this match safely,
            // then re-derive the pointer after the slice was used directly.
            super::copy_match(out, op - off, op, ml, end);
            d = out.as_mut_ptr();
            op = end;
            continue;
        }
        // SAFETY: off <= op, end + 32 <= on (checked above).
        unsafe { copy_match_first_wide(d, op, off, ml) };
        op = end;
    }
    Ok(Stop::Resume(ip, op))
}

/// [`copy_match_wide`] with its first step (32 bytes) taken before the
/// length test: most matches need one step only.
///
/// # Safety
/// As for [`copy_match_wide`] (`d` valid up to `op + ml + 32`, `off <= op`).
#[inline(always)]
unsafe fn copy_match_first_wide(d: *mut u8, op: usize, off: usize, ml: usize) {
    // SAFETY: as in `copy_match_wide`; the first step writes op .. op + 32,
    // inside op + ml + 32.
    unsafe {
        let from = d.add(op - off);
        let to = d.add(op);
        if off >= 32 {
            copy32(from, to);
            let mut k = 32;
            while k < ml {
                copy32(from.add(k), to.add(k));
                k += 32;
            }
        } else if off >= 16 {
            copy16(from, to);
            copy16(from.add(16), to.add(16));
            let mut k = 32;
            while k < ml {
                copy16(from.add(k), to.add(k));
                k += 16;
            }
        } else {
            let pat = pattern32(from, off);
            let step = usize::from(STEPS[off]);
            _mm256_storeu_si256(to as *mut __m256i, pat);
            let mut k = step;
            while k < ml {
                _mm256_storeu_si256(to.add(k) as *mut __m256i, pat);
                k += step;
            }
        }
    }
}
