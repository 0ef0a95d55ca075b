//! The literal-poor fast loop of the raw LZ4 block decoder
//! (`shared/spec/filters.md` §3.7) for CPUs with AVX-512 VBMI: the last 128
//! bytes of output are kept in two registers, so a match at distance ≤ 128
//! (most matches of the high-byte planes of shuffled integers: periods 2,
//! ≈ 16–32, ≈ 64) is one byte permute of them instead of a load of bytes
//! the previous few sequences have just stored (such a load spans several
//! of those stores and waits until they are written to the cache). Matches
//! up to 64 bytes are one 64-byte store; the window moves on with two
//! two-source permutes. Lengths, offsets and their errors are checked as in
//! [`super::fast`]; the safe decoder finishes the block.

use super::fast::Stop;
use super::{read_len, sequence, DecodeError, Seq};
use std::arch::x86_64::*;

/// A literal run every this many output bytes (on top of [`LIT_GRACE`])
/// sends the rest of the block to the AVX2 literal-poor loop: the window
/// pays off on match-only streams (the high-byte planes have ≈ 1 literal
/// run per 8 KiB, the literal-poor low-byte planes ≈ 1 per 100 bytes).
const LIT_SPACING: usize = 256;
/// Literal runs allowed before [`LIT_SPACING`] applies.
const LIT_GRACE: usize = 16;

/// Bytes of input the loop wants left before starting a sequence: token,
/// 14 literal bytes moved as 32, offset and one extension byte.
const IN_MARGIN: usize = 40;
/// Bytes of output the loop wants left before starting a sequence: at most
/// 14 literal bytes (moved as 32) and a 64-byte match store after them.
const OUT_MARGIN: usize = 80;
/// Shortest output the loop runs on (the window is first filled from the
/// first 128 bytes).
const MIN_OUT: usize = 128;

/// 64 bytes, aligned so a table row is one 64-byte load.
#[repr(C, align(64))]
struct Row([u8; 64]);

/// 128 bytes of [`PAT`].
#[repr(C, align(64))]
struct Pat([u8; 128]);

/// `PAT[k]`, `1 <= k <= 64`: byte `m` is `128 - k + m mod k`, the index into
/// the window (the 128 bytes before the match) of byte `m` of a match at
/// distance `k`; 128 bytes long so a 64-byte row may start at any phase
/// `r < k`. Modulo 64 it indexes the window's upper half.
static PAT: [Pat; 65] = pat_table();

/// `SHIFT[n]`, `0 <= n <= 64`: byte `j` is `n + j`: the 64 bytes `n` on
/// in two concatenated vectors (the window after `n` more bytes; the first
/// bytes of a match at distance `128 - n`).
static SHIFT: [Row; 65] = shift_table();

/// `STEP[k]`: the largest multiple of `k` that is at most 64 (how far the
/// 64-byte pattern of a period-`k` match may be stored again).
static STEP: [u8; 65] = steps();

const fn pat_table() -> [Pat; 65] {
    let mut t = [const { Pat([0; 128]) }; 65];
    let mut k = 1;
    while k <= 64 {
        let mut m = 0;
        while m < 128 {
            t[k].0[m] = (128 - k + m % k) as u8;
            m += 1;
        }
        k += 1;
    }
    t
}

const fn shift_table() -> [Row; 65] {
    let mut t = [const { Row([0; 64]) }; 65];
    let mut n = 0;
    while n <= 64 {
        let mut j = 0;
        while j < 64 {
            t[n].0[j] = (n + j) as u8;
            j += 1;
        }
        n += 1;
    }
    t
}

const fn steps() -> [u8; 65] {
    let mut s = [0u8; 65];
    let mut k = 1;
    while k <= 64 {
        s[k] = (64 - 64 % k) as u8;
        k += 1;
    }
    s
}

/// Row `n` of [`SHIFT`].
///
/// # Safety
/// AVX-512F available; `n <= 64`.
#[inline(always)]
unsafe fn shift(n: usize) -> __m512i {
    debug_assert!(n <= 64);
    // SAFETY: `n <= 64`: a row of the table, 64 aligned bytes.
    unsafe { _mm512_load_si512(SHIFT[n].0.as_ptr() as *const __m512i) }
}

/// Row `k` of [`PAT`] from phase `r`.
///
/// # Safety
/// AVX-512F available; `1 <= k <= 64`, `r <= 64`.
#[inline(always)]
unsafe fn pat(k: usize, r: usize) -> __m512i {
    debug_assert!((1..=64).contains(&k) && r <= 64);
    // SAFETY: `r + 64 <= 128`: inside row `k` (`k <= 64`).
    unsafe { _mm512_loadu_si512(PAT[k].0.as_ptr().add(r) as *const __m512i) }
}

/// The window at output position `op`: byte `j` of `(lo, hi)` is
/// `out[op - 128 + j]` where that index is ≥ 0 (the bytes before the
/// output start are arbitrary; a valid offset never reaches them).
///
/// # Safety
/// AVX-512F/BW/VBMI available; `d .. d + max(op, 128)` readable.
#[inline(always)]
unsafe fn window(d: *const u8, op: usize) -> (__m512i, __m512i) {
    // SAFETY: `op >= 128`: the 128 bytes before `op`; else the first 128
    // bytes (readable by the contract) rotated so `out[i]` lands at
    // `128 - op + i` (index `j + op` mod 128 for window byte `j`).
    unsafe {
        if op >= 128 {
            (
                _mm512_loadu_si512(d.add(op - 128) as *const __m512i),
                _mm512_loadu_si512(d.add(op - 64) as *const __m512i),
            )
        } else {
            let a = _mm512_loadu_si512(d as *const __m512i);
            let b = _mm512_loadu_si512(d.add(64) as *const __m512i);
            let i = _mm512_add_epi8(shift(0), _mm512_set1_epi8(op as i8));
            let j = _mm512_add_epi8(i, _mm512_set1_epi8(64));
            (
                _mm512_permutex2var_epi8(a, i, b),
                _mm512_permutex2var_epi8(a, j, b),
            )
        }
    }
}

/// One sequence through the safe decoder, outside the loop body.
#[cold]
#[inline(never)]
fn slow(src: &[u8], out: &mut [u8], ip: usize, op: usize) -> Result<Seq, DecodeError> {
    sequence(src, out, ip, op)
}

/// Decode sequences while the margins hold, keeping the last 128 output
/// bytes in two registers (`lo`, `hi`).
///
/// A literal nibble of 15 goes to the safe [`sequence`]; 1..=14 literals are
/// one 32-byte move and shift the window. A block with more than a few
/// literal runs continues in [`super::fast::run`]. A match at distance ≤ 128 is one
/// permute of the window, farther one 64-byte load; its first 64 bytes are
/// one store, a longer match continues in 64-byte steps. Offsets and
/// lengths are checked once per sequence, in the safe decoder's order.
///
/// # Safety
/// The CPU must support AVX2, AVX-512F, AVX-512BW and AVX-512VBMI.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi")]
pub(super) unsafe fn run(src: &[u8], out: &mut [u8]) -> Result<Stop, DecodeError> {
    let (n, on) = (src.len(), out.len());
    if n < IN_MARGIN || on < MIN_OUT {
        return Ok(Stop::Resume(0, 0));
    }
    // Last input / output positions at which a sequence may start.
    let (ilim, olim) = (n - IN_MARGIN, on - OUT_MARGIN);
    let s = src.as_ptr();
    let mut d = out.as_mut_ptr();
    let (mut ip, mut op) = (0usize, 0usize);
    // SAFETY: on >= 128: the first 128 bytes are readable.
    let (mut lo, mut hi) = unsafe { window(d, op) };
    // Literal runs seen so far.
    let mut runs = 0usize;
    while ip <= ilim && op <= olim {
        // SAFETY: ip + 40 <= n (loop condition).
        let token = unsafe { *s.add(ip) };
        let lit = usize::from(token >> 4);
        let mut i = ip + 1;
        if lit != 0 {
            runs += 1;
            if runs > LIT_GRACE && runs * LIT_SPACING > op {
                // A literal-rich block: the AVX2 loop takes it from here.
                // SAFETY: AVX2 is available (this function's contract);
                // (ip, op) is a sequence boundary.
                return unsafe { super::fast::run::<true>(src, out, ip, op) };
            }
            if lit == 15 {
                match slow(src, out, ip, op)? {
                    Seq::Next(i, o) => (ip, op) = (i, o),
                    Seq::End(o) => return Ok(Stop::Done(o)),
                }
                // `out` was used directly: re-derive the pointer.
                d = out.as_mut_ptr();
                // SAFETY: op <= on and on >= 128.
                (lo, hi) = unsafe { window(d, op) };
                continue;
            }
            // SAFETY: i + 32 <= ip + 33 <= n and op + 32 <= on (margins):
            // 32 bytes readable at i and writable at op; the first `lit` of
            // them are the literals, the rest is rewritten later. `lit <= 14`
            // indexes the shift table.
            unsafe {
                let l = _mm256_loadu_si256(s.add(i) as *const __m256i);
                _mm256_storeu_si256(d.add(op) as *mut __m256i, l);
                let l = _mm512_castsi256_si512(l);
                let t = shift(lit);
                (lo, hi) = (
                    _mm512_permutex2var_epi8(lo, t, hi),
                    _mm512_permutex2var_epi8(hi, t, l),
                );
            }
            i += lit;
            op += lit;
        }
        // SAFETY: i + 3 <= ip + 18 <= n (margin): offset and one extension byte.
        let (off, y) = unsafe {
            let o = std::ptr::read_unaligned(s.add(i) as *const [u8; 2]);
            (usize::from(u16::from_le_bytes(o)), *s.add(i + 2))
        };
        let nib = usize::from(token & 15);
        let ext = usize::from(nib == 15);
        let mut ml = nib + (usize::from(y) & ext.wrapping_neg()) + 4;
        i += 2 + ext;
        if ml == 15 + 255 + 4 {
            // The extension byte was 255: more bytes follow.
            ml = read_len(src, &mut i, ml)?;
        }
        if off.wrapping_sub(1) >= op {
            return Err(if off == 0 {
                "zero offset"
            } else {
                "offset before output start"
            });
        }
        let v = if off <= 128 {
            // SAFETY: 1 <= off <= 128: a row of either table; the window
            // holds the output bytes `op - off .. op` (off <= op).
            unsafe {
                let idx = if off <= 64 {
                    pat(off, 0)
                } else {
                    shift(128 - off)
                };
                _mm512_permutex2var_epi8(lo, idx, hi)
            }
        } else {
            // SAFETY: 128 < off <= op: the 64 bytes at op - off end before
            // op, inside the output.
            unsafe { _mm512_loadu_si512(d.add(op - off) as *const __m512i) }
        };
        // SAFETY: op + 64 <= on (op was at most on - 80 before its <= 14
        // literals).
        unsafe { _mm512_storeu_si512(d.add(op) as *mut __m512i, v) };
        if ml <= 64 {
            // SAFETY: ml <= 64: a row of the table.
            unsafe {
                let t = shift(ml);
                (lo, hi) = (
                    _mm512_permutex2var_epi8(lo, t, hi),
                    _mm512_permutex2var_epi8(hi, t, v),
                );
            }
        } else {
            if ml > on - op {
                return Err("match past output end");
            }
            if ml + 64 > on - op {
                // Too close to the end for wide moves: finish this match
                // safely, then re-derive the pointer after the slice was used.
                super::copy_match(out, op - off, op, ml, op + ml);
                d = out.as_mut_ptr();
            } else {
                // SAFETY: 1 <= off <= op, op + ml + 64 <= on (checked).
                unsafe { match_tail(d, op, off, ml, v) };
            }
            // SAFETY: 1 <= off <= op, 64 < ml, op + ml <= on.
            (lo, hi) = unsafe { after_long(d, op, off, ml, hi, v) };
        }
        ip = i;
        op += ml;
    }
    Ok(Stop::Resume(ip, op))
}

/// The window after a match longer than 64 bytes at `op`, from the upper
/// half of the window before it (`hi`) and its first 64 bytes `v`: byte `t` of the match
/// is byte `t mod off` of its period when `off <= 64`, byte `t` of its
/// source `off` back (older than the stores just made) otherwise.
///
/// # Safety
/// AVX-512F/BW/VBMI available; `1 <= off <= op`, `64 < ml`, `op + ml`
/// bytes at `d` readable.
#[inline(always)]
unsafe fn after_long(
    d: *const u8,
    op: usize,
    off: usize,
    ml: usize,
    hi: __m512i,
    v: __m512i,
) -> (__m512i, __m512i) {
    // SAFETY: the phases are below `off <= 64` (rows of `PAT`, whose indices
    // modulo 64 address `hi`); `ml - 64 <= 64` indexes `SHIFT`; the loads
    // end at `op + ml - off <= op + ml`, start at `op + ml - 128 - off >= 0`
    // (ml >= 128) resp. `op + ml - 64 - off >= 0`.
    unsafe {
        let new_hi = if off <= 64 {
            _mm512_permutexvar_epi8(pat(off, (ml - 64) % off), hi)
        } else {
            _mm512_loadu_si512(d.add(op + ml - 64 - off) as *const __m512i)
        };
        let new_lo = if ml < 128 {
            // Bytes ml - 128 .. ml - 64 of the match: the end of the old
            // window and the match's first bytes.
            _mm512_permutex2var_epi8(hi, shift(ml - 64), v)
        } else if off <= 64 {
            _mm512_permutexvar_epi8(pat(off, (ml - 128) % off), hi)
        } else {
            _mm512_loadu_si512(d.add(op + ml - 128 - off) as *const __m512i)
        };
        (new_lo, new_hi)
    }
}

/// The rest of a match longer than 64 bytes whose first 64 bytes `v` are
/// stored at `d + op` already: at distances above 64 in 64-byte steps from
/// the source, up to 64 as copies of `v` one period multiple on.
///
/// # Safety
/// AVX-512F available; `1 <= off <= op`; `v` is the match's first 64
/// bytes; `d` valid for reads and writes up to `op + ml + 64`.
#[inline(always)]
unsafe fn match_tail(d: *mut u8, op: usize, off: usize, ml: usize, v: __m512i) {
    // SAFETY: every store starts below `op + ml` and is 64 bytes long; for
    // `off > 64` each load ends before the position it is stored to, so it
    // reads final bytes; for `off <= 64` the stores repeat the pattern at
    // multiples of its period.
    unsafe {
        let to = d.add(op);
        if off > 64 {
            let from = to.sub(off);
            let mut k = 64;
            while k < ml {
                let w = _mm512_loadu_si512(from.add(k) as *const __m512i);
                _mm512_storeu_si512(to.add(k) as *mut __m512i, w);
                k += 64;
            }
        } else {
            let step = usize::from(STEP[off]);
            let mut k = step;
            while k < ml {
                _mm512_storeu_si512(to.add(k) as *mut __m512i, v);
                k += step;
            }
        }
    }
}
