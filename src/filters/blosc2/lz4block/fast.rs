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

/// Decode sequences while the margins hold.
///
/// # Safety
/// The CPU must support AVX2 (which implies SSSE3).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn run(src: &[u8], out: &mut [u8]) -> Result<Stop, DecodeError> {
    let (n, on) = (src.len(), out.len());
    let s = src.as_ptr();
    let mut d = out.as_mut_ptr();
    let (mut ip, mut op) = (0usize, 0usize);
    while ip + IN_MARGIN <= n && op + OUT_MARGIN <= on {
        // SAFETY: ip < n (loop condition).
        let token = unsafe { *s.add(ip) };
        ip += 1;
        let mut lit = usize::from(token >> 4);
        if lit == 15 {
            lit = read_len(src, &mut ip, lit)?;
        }
        if lit <= 32 && ip + 32 <= n && op + 32 <= on {
            // SAFETY: 32 bytes are readable at ip and writable at op (checked
            // just above); surplus bytes are rewritten by later sequences.
            unsafe { copy32(s.add(ip), d.add(op)) };
        } else {
            if lit > n - ip {
                return Err("literals past input end");
            }
            if lit > on - op {
                return Err("literals past output end");
            }
            // SAFETY: both ranges were checked above; the buffers are distinct borrows.
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
        // SAFETY: ip + 2 <= n (checked above).
        let off = unsafe { usize::from(*s.add(ip)) | usize::from(*s.add(ip + 1)) << 8 };
        ip += 2;
        let mut ml = usize::from(token & 15);
        if ml == 15 {
            ml = read_len(src, &mut ip, ml)?;
        }
        ml += 4;
        if off == 0 {
            return Err("zero offset");
        }
        if off > op {
            return Err("offset before output start");
        }
        if ml > on - op {
            return Err("match past output end");
        }
        let end = op + ml;
        if end + 32 > on {
            // Too close to the end for wide moves: finish this match safely.
            super::copy_match(out, op - off, op, ml, end);
            // Re-derive the pointer after the slice was used directly.
            d = out.as_mut_ptr();
            op = end;
            continue;
        }
        // SAFETY: off <= op, end + 32 <= on: every load below starts at or
        // after op - off and ends before end + 32, every store ends before
        // end + 32, all inside `out`.
        unsafe { copy_match_wide(d, op, off, ml) };
        op = end;
    }
    Ok(Stop::Resume(ip, op))
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
            // Period off < 16: two shuffles make 32 bytes of the pattern;
            // stores step by the largest multiple of off that is <= 32.
            let v = _mm_loadu_si128(from as *const __m128i);
            let mask = MASKS[off].as_ptr();
            let lo = _mm_shuffle_epi8(v, _mm_loadu_si128(mask as *const __m128i));
            let hi = _mm_shuffle_epi8(v, _mm_loadu_si128(mask.add(16) as *const __m128i));
            let pat = _mm256_set_m128i(hi, lo);
            let step = usize::from(STEPS[off]);
            let mut k = 0;
            while k < ml {
                _mm256_storeu_si256(to.add(k) as *mut __m256i, pat);
                k += step;
            }
        }
    }
}
