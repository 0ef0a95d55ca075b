//! The x86-64 fast loop of the raw LZ4 block decoder (`docs/filters-format.md`
//! §3.7): while both buffers have a margin left, sequences are decoded with
//! raw-pointer 32-byte moves and no per-byte bounds checks; lengths and
//! offsets are still checked once per sequence, so a corrupt block gives the
//! same error class as the safe decoder. The common sequence (literals and
//! match of at most 32 bytes each, lengths with at most one extension byte)
//! takes no branch on its lengths' classes or its offset: one 32-byte
//! literal move and one 32-byte match store built by [`pattern`]. The safe
//! decoder finishes the block.

use super::pattern::{pattern, STEP};
use super::{read_len, sequence, DecodeError, Seq};
use std::arch::x86_64::*;

/// Bytes of input the loop wants left before starting a sequence: token,
/// one extension byte, 32 literal bytes, offset and one extension byte.
const IN_MARGIN: usize = 40;
/// Bytes of output the loop wants left before starting a sequence: 32
/// literal bytes and a 32-byte match store.
const OUT_MARGIN: usize = 64;

/// How the fast loop stopped.
pub(super) enum Stop {
    /// The block ended (last literals consumed exactly the input): bytes written.
    Done(usize),
    /// A margin ran out at a sequence boundary: resume safely from `(ip, op)`.
    Resume(usize, usize),
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

/// A length nibble plus its extension byte `x` when the nibble is 15,
/// without a branch; `ext` is 1 when `x` was consumed.
#[inline(always)]
fn nibble_len(nib: usize, x: u8) -> (usize, usize) {
    let ext = usize::from(nib == 15);
    (nib + (usize::from(x) & ext.wrapping_neg()), ext)
}

/// The rest of a match longer than 32 bytes whose first 32 bytes `v` are
/// stored at `d + op` already: at distances of 32 and more in 32-byte
/// steps from the source, below 32 as copies of `v` one period multiple on.
///
/// # Safety
/// AVX2 available; `1 <= off <= op`; `v` is [`pattern`] of the match;
/// `d` valid for reads and writes up to `op + ml + 32`.
#[inline(always)]
unsafe fn match_tail(d: *mut u8, op: usize, off: usize, ml: usize, v: __m256i) {
    // SAFETY: every store starts below `op + ml` and is 32 bytes long; for
    // `off >= 32` each load ends at or before the position it is stored to,
    // so it reads final bytes; for `off < 32` the stores repeat the pattern
    // at multiples of its period.
    unsafe {
        let to = d.add(op);
        if off >= 32 {
            let from = to.sub(off);
            let mut k = 32;
            while k < ml {
                copy32(from.add(k), to.add(k));
                k += 32;
            }
        } else {
            let step = usize::from(STEP[off]);
            let mut k = step;
            while k < ml {
                _mm256_storeu_si256(to.add(k) as *mut __m256i, v);
                k += step;
            }
        }
    }
}

/// One sequence through the safe decoder (long literal runs and lengths of
/// more than one extension byte), outside the loop body.
#[cold]
#[inline(never)]
fn slow(src: &[u8], out: &mut [u8], ip: usize, op: usize) -> Result<Seq, DecodeError> {
    sequence(src, out, ip, op)
}

/// Decode sequences while the margins hold.
///
/// Both lengths are read with their first extension byte and no branch
/// ([`nibble_len`]); literals of at most 32 bytes are one 32-byte move,
/// longer runs 32-byte moves while 32 bytes of both buffers remain past them;
/// every match gets its first 32 bytes from one [`pattern`] store; only a
/// match longer than 32 bytes continues ([`match_tail`]). A literal run
/// with a second extension byte, or too near the end, is decoded by the
/// safe decoder's [`sequence`]. Offsets and lengths are checked once per
/// sequence, in the safe decoder's order.
///
/// `FEW_LITERALS` (blocks of match-rich streams such as the high-byte planes
/// of shuffled integers, where a literal run is almost always 0): the
/// literal length is the nibble alone, a nibble of 15 goes to [`sequence`],
/// so the loop branches (predictably) instead of computing the extension,
/// and zero literals are not moved.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn run<const FEW_LITERALS: bool>(
    src: &[u8],
    out: &mut [u8],
) -> Result<Stop, DecodeError> {
    let (n, on) = (src.len(), out.len());
    if n < IN_MARGIN || on < OUT_MARGIN {
        return Ok(Stop::Resume(0, 0));
    }
    // Last input / output positions at which a sequence may start.
    let (ilim, olim) = (n - IN_MARGIN, on - OUT_MARGIN);
    let s = src.as_ptr();
    let mut d = out.as_mut_ptr();
    let (mut ip, mut op) = (0usize, 0usize);
    while ip <= ilim && op <= olim {
        // SAFETY: ip + 40 <= n (loop condition): token and next byte.
        let (token, x) = unsafe { (*s.add(ip), *s.add(ip + 1)) };
        let (lit, ext) = if FEW_LITERALS {
            (usize::from(token >> 4), 0)
        } else {
            nibble_len(usize::from(token >> 4), x)
        };
        let mut i = ip + 1 + ext;
        if lit > (if FEW_LITERALS { 14 } else { 32 }) {
            // Long literal runs: 32-byte moves while both buffers keep 32
            // bytes past the run (what the match that follows needs too);
            // a second extension byte or a run near the end: the safe step.
            if FEW_LITERALS || lit == 15 + 255 || lit > n - i - 32 || lit > on - op - 32 {
                match slow(src, out, ip, op)? {
                    Seq::Next(i, o) => (ip, op) = (i, o),
                    Seq::End(o) => return Ok(Stop::Done(o)),
                }
                // `out` was used directly: re-derive the pointer.
                d = out.as_mut_ptr();
                continue;
            }
            let mut k = 0;
            while k < lit {
                // SAFETY: k < lit, i + lit + 32 <= n and op + lit + 32 <= on
                // (checked above): 32 bytes readable at i + k, writable at
                // op + k.
                unsafe { copy32(s.add(i + k), d.add(op + k)) };
                k += 32;
            }
        } else if !FEW_LITERALS || lit != 0 {
            // With few literals, no move when there are none: the match's
            // source loads then find whole earlier stores to forward from.
            // SAFETY: i + 32 <= ip + 34 <= n and op + 32 <= on (margins):
            // 32 bytes readable at i and writable at op; the first `lit` of
            // them are the literals, the rest is rewritten later.
            unsafe { copy32(s.add(i), d.add(op)) };
        }
        i += lit;
        op += lit;
        // SAFETY: i + 3 <= n (short run: i <= ip + 34, ip + 40 <= n; long
        // run: i + 32 <= n, checked): offset and one extension byte.
        let (off, y) = unsafe {
            let o = std::ptr::read_unaligned(s.add(i) as *const [u8; 2]);
            (usize::from(u16::from_le_bytes(o)), *s.add(i + 2))
        };
        let (m, ext) = nibble_len(usize::from(token & 15), y);
        i += 2 + ext;
        let mut ml = m + 4;
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
        // SAFETY: 1 <= off <= op, and op + 32 <= on (short run: op was at
        // most on - 64 before its <= 32 literals; long run: checked): the 32
        // bytes at op - off are inside the output.
        let v = unsafe { pattern(d.add(op - off), off.min(32)) };
        // SAFETY: op + 32 <= on (as above).
        unsafe { _mm256_storeu_si256(d.add(op) as *mut __m256i, v) };
        if ml > 32 {
            if ml > on - op {
                return Err("match past output end");
            }
            if ml + 32 > on - op {
                // Too close to the end for wide moves: finish this match
                // safely, then re-derive the pointer after the slice was used.
                super::copy_match(out, op - off, op, ml, op + ml);
                d = out.as_mut_ptr();
            } else {
                // SAFETY: 1 <= off <= op, op + ml + 32 <= on (checked).
                unsafe { match_tail(d, op, off, ml, v) };
            }
        }
        ip = i;
        op += ml;
    }
    Ok(Stop::Resume(ip, op))
}
