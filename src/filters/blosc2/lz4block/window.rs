//! The literal-poor fast loop of the raw LZ4 block decoder
//! (`shared/spec/filters.md` §3.7) for CPUs with AVX-512 VBMI and VL: the
//! last 64 bytes of output are kept in two 32-byte registers, so a match at
//! distance ≤ 64 (most matches of the high-byte planes of shuffled
//! integers: periods 2, ≈ 16–32, ≈ 64) is one two-source byte permute of
//! them instead of a load of bytes the previous few sequences have just
//! stored (such a load spans several of those stores and waits until they
//! are written to the cache). Only 256-bit registers are used. Lengths,
//! offsets and their errors are checked as in [`super::fast`]; the safe
//! decoder finishes the block.

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
/// 14 literal bytes (moved as 32) and a 64-byte match after them.
const OUT_MARGIN: usize = 80;

/// 32 bytes, aligned so a table row is one 32-byte load.
#[repr(C, align(32))]
struct Row([u8; 32]);

/// 128 bytes of [`PAT`].
#[repr(C, align(32))]
struct Pat([u8; 128]);

/// `PAT[k]`, `1 <= k <= 64`: byte `m` is `64 - k + m mod k`, the index into
/// the window (the 64 bytes before the match) of byte `m` of a match at
/// distance `k`; 128 bytes long so 64 bytes of it may start at any phase
/// `r < k`.
static PAT: [Pat; 65] = pat_table();

/// `SHIFT[n]`, `0 <= n <= 32`: byte `j` is `n + j`: the 32 bytes `n` on in
/// two concatenated vectors.
static SHIFT: [Row; 33] = shift_table();

/// `STEP[k]`: the largest multiple of `k` that is at most 64 (how far the
/// 64-byte pattern of a period-`k` match may be stored again).
static STEP: [u8; 65] = steps();

const fn pat_table() -> [Pat; 65] {
    let mut t = [const { Pat([0; 128]) }; 65];
    let mut k = 1;
    while k <= 64 {
        let mut m = 0;
        while m < 128 {
            t[k].0[m] = (64 - k + m % k) as u8;
            m += 1;
        }
        k += 1;
    }
    t
}

const fn shift_table() -> [Row; 33] {
    let mut t = [const { Row([0; 32]) }; 33];
    let mut n = 0;
    while n <= 32 {
        let mut j = 0;
        while j < 32 {
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
/// AVX available; `n <= 32`.
#[inline(always)]
unsafe fn shift(n: usize) -> __m256i {
    debug_assert!(n <= 32);
    // SAFETY: `n <= 32`: a row of the table, 32 aligned bytes.
    unsafe { _mm256_load_si256(SHIFT[n].0.as_ptr() as *const __m256i) }
}

/// 32 bytes of row `k` of [`PAT`] from byte `p`.
///
/// # Safety
/// AVX available; `1 <= k <= 64`, `p <= 96`.
#[inline(always)]
unsafe fn pat(k: usize, p: usize) -> __m256i {
    debug_assert!((1..=64).contains(&k) && p <= 96);
    // SAFETY: `p + 32 <= 128`: inside row `k` (`k <= 64`).
    unsafe { _mm256_loadu_si256(PAT[k].0.as_ptr().add(p) as *const __m256i) }
}

/// Bytes `idx[j]` of `lo ++ hi` (indices modulo 64).
///
/// # Safety
/// AVX-512VBMI and VL available.
#[inline(always)]
unsafe fn pick(lo: __m256i, idx: __m256i, hi: __m256i) -> __m256i {
    // SAFETY: the features are available (the caller's promise).
    unsafe { _mm256_permutex2var_epi8(lo, idx, hi) }
}

/// The window at output position `op`: byte `j` of `lo ++ hi` is
/// `out[op - 64 + j]` where that index is ≥ 0 (the bytes before the
/// output start are arbitrary; a valid offset never reaches them).
///
/// # Safety
/// AVX-512VBMI and VL available; `d .. d + max(op, 64)` readable.
#[inline(always)]
unsafe fn window(d: *const u8, op: usize) -> (__m256i, __m256i) {
    // SAFETY: `op >= 64`: the 64 bytes before `op`; else the first 64
    // bytes (readable by the contract) rotated so `out[i]` lands at
    // `64 - op + i` (index `j + op` mod 64 for window byte `j`).
    unsafe {
        if op >= 64 {
            (
                _mm256_loadu_si256(d.add(op - 64) as *const __m256i),
                _mm256_loadu_si256(d.add(op - 32) as *const __m256i),
            )
        } else {
            let a = _mm256_loadu_si256(d as *const __m256i);
            let b = _mm256_loadu_si256(d.add(32) as *const __m256i);
            let i = _mm256_add_epi8(shift(0), _mm256_set1_epi8(op as i8));
            let j = _mm256_add_epi8(i, _mm256_set1_epi8(32));
            (pick(a, i, b), pick(a, j, b))
        }
    }
}

/// One sequence through the safe decoder, outside the loop body.
#[cold]
#[inline(never)]
fn slow(src: &[u8], out: &mut [u8], ip: usize, op: usize) -> Result<Seq, DecodeError> {
    sequence(src, out, ip, op)
}

/// Decode sequences while the margins hold, keeping the last 64 output
/// bytes in two registers (`lo`, `hi`).
///
/// A literal nibble of 15 goes to the safe [`sequence`]; 1..=14 literals
/// are one 32-byte move and shift the window; a block with more than a few
/// literal runs continues in [`super::fast::run`]. A match at distance ≤ 64
/// is one permute of the window per 32 bytes, farther a load; matches of up
/// to 32 bytes are one store, up to 64 two, longer ones continue in 64-byte
/// steps. Offsets and lengths are checked once per sequence, in the safe
/// decoder's order.
///
/// # Safety
/// The CPU must support AVX2, AVX-512F, AVX-512BW, AVX-512VL and
/// AVX-512VBMI.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vbmi")]
pub(super) unsafe fn run(src: &[u8], out: &mut [u8]) -> Result<Stop, DecodeError> {
    let (n, on) = (src.len(), out.len());
    if n < IN_MARGIN || on < OUT_MARGIN {
        return Ok(Stop::Resume(0, 0));
    }
    // Last input / output positions at which a sequence may start.
    let (ilim, olim) = (n - IN_MARGIN, on - OUT_MARGIN);
    let s = src.as_ptr();
    let mut d = out.as_mut_ptr();
    let (mut ip, mut op) = (0usize, 0usize);
    // SAFETY: on >= 80: the first 64 bytes are readable.
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
                // SAFETY: op <= on and on >= 64.
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
                let t = shift(lit);
                (lo, hi) = (pick(lo, t, hi), pick(hi, t, l));
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
        // The match's first 32 bytes.
        let near = off <= 64;
        // SAFETY: near: 1 <= off <= 64, a row of the table, and the window
        // holds the output bytes `op - off .. op`; else 64 < off <= op: the
        // 32 bytes at op - off end before op, inside the output.
        let v0 = unsafe {
            if near {
                pick(lo, pat(off, 0), hi)
            } else {
                _mm256_loadu_si256(d.add(op - off) as *const __m256i)
            }
        };
        // SAFETY: op + 32 <= on (op was at most on - 80 before its <= 14
        // literals).
        unsafe { _mm256_storeu_si256(d.add(op) as *mut __m256i, v0) };
        if ml <= 32 {
            // SAFETY: ml <= 32: a row of the table.
            unsafe {
                let t = shift(ml);
                (lo, hi) = (pick(lo, t, hi), pick(hi, t, v0));
            }
        } else {
            // Bytes 32..64 of the match.
            // SAFETY: as for `v0`, 32 bytes on (for a far match they end at
            // op - off + 64 <= op); op + 64 <= on (as above).
            let v1 = unsafe {
                let v1 = if near {
                    pick(lo, pat(off, 32), hi)
                } else {
                    _mm256_loadu_si256(d.add(op + 32 - off) as *const __m256i)
                };
                _mm256_storeu_si256(d.add(op + 32) as *mut __m256i, v1);
                v1
            };
            if ml <= 64 {
                // SAFETY: ml - 32 <= 32: a row of the table.
                unsafe {
                    let t = shift(ml - 32);
                    (lo, hi) = (pick(hi, t, v0), pick(v0, t, v1));
                }
            } else {
                if ml > on - op {
                    return Err("match past output end");
                }
                if ml + 64 > on - op {
                    // Too close to the end for wide moves: finish this match
                    // safely, then re-derive the pointer after the slice
                    // was used.
                    super::copy_match(out, op - off, op, ml, op + ml);
                    d = out.as_mut_ptr();
                } else {
                    // SAFETY: 1 <= off <= op, op + ml + 64 <= on (checked).
                    unsafe { match_tail(d, op, off, ml, v0, v1) };
                }
                // SAFETY: 1 <= off <= op, 64 < ml, op + ml <= on.
                (lo, hi) = unsafe { after_long(d, op, off, ml, lo, hi) };
            }
        }
        ip = i;
        op += ml;
    }
    Ok(Stop::Resume(ip, op))
}

/// The window after a match longer than 64 bytes at `op`, from the window
/// before it (`lo`, `hi`): byte `t` of the match is byte `t mod off` of its
/// period when `off <= 64`, byte `t` of its source `off` back (older than
/// the stores just made) otherwise.
///
/// # Safety
/// AVX-512VBMI and VL available; `1 <= off <= op`, `64 < ml`, `op + ml`
/// bytes at `d` readable.
#[inline(always)]
unsafe fn after_long(
    d: *const u8,
    op: usize,
    off: usize,
    ml: usize,
    lo: __m256i,
    hi: __m256i,
) -> (__m256i, __m256i) {
    // SAFETY: the phase `r` is below `off <= 64`, so `r + 32 <= 96` (rows
    // of `PAT`); the loads span `op + ml - 64 - off .. op + ml - off`,
    // inside the output (`off <= op`, `op + ml <= on`).
    unsafe {
        if off <= 64 {
            let r = (ml - 64) % off;
            (pick(lo, pat(off, r), hi), pick(lo, pat(off, r + 32), hi))
        } else {
            let from = d.add(op + ml - 64 - off);
            (
                _mm256_loadu_si256(from as *const __m256i),
                _mm256_loadu_si256(from.add(32) as *const __m256i),
            )
        }
    }
}

/// The rest of a match longer than 64 bytes whose first 64 bytes `v0 ++ v1`
/// are stored at `d + op` already: at distances above 64 in 32-byte steps
/// from the source, up to 64 as copies of `v0 ++ v1` one period multiple on.
///
/// # Safety
/// AVX available; `1 <= off <= op`; `v0 ++ v1` are the match's first 64
/// bytes; `d` valid for reads and writes up to `op + ml + 64`.
#[inline(always)]
unsafe fn match_tail(d: *mut u8, op: usize, off: usize, ml: usize, v0: __m256i, v1: __m256i) {
    // SAFETY: every store starts below `op + ml` and ends by `op + ml + 64`;
    // for `off > 64` each load ends at or before the position it is stored
    // to, so it reads final bytes; for `off <= 64` the stores repeat the
    // pattern at multiples of its period.
    unsafe {
        let to = d.add(op);
        if off > 64 {
            let from = to.sub(off);
            let mut k = 64;
            while k < ml {
                let w = _mm256_loadu_si256(from.add(k) as *const __m256i);
                _mm256_storeu_si256(to.add(k) as *mut __m256i, w);
                k += 32;
            }
        } else {
            let step = usize::from(STEP[off]);
            let mut k = step;
            while k < ml {
                _mm256_storeu_si256(to.add(k) as *mut __m256i, v0);
                _mm256_storeu_si256(to.add(k + 32) as *mut __m256i, v1);
                k += step;
            }
        }
    }
}
