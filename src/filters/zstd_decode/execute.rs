//! Execution of decoded sequences, RFC 8878 §3.1.1.4, and the repeat
//! offsets they resolve (§3.1.1.5): literals then a match copied into the
//! output. A wide path copies in 16- and 32-byte pieces that may write up to
//! [`WILD`] bytes past a sequence's end, taken while that slack lies inside
//! the buffers; a checked path copies exactly and names what is wrong.

use super::{corrupt, Result};

/// The output of the block being decoded and its bounds.
pub(crate) struct Target<'a> {
    /// Whole output buffer; bytes past `limit` are slack for wide copies only.
    pub(crate) buf: &'a mut [u8],
    /// Write position.
    pub(crate) pos: usize,
    /// The block may not write at or past this position.
    pub(crate) limit: usize,
    /// Start of the current frame's output (matches may not reach before it).
    pub(crate) frame_start: usize,
}

/// Copy the literals `lits[from..to]` to the output: those left after a
/// section's last sequence.
pub(super) fn copy_literals(
    t: &mut Target,
    lits: &[u8],
    from: usize,
    to: usize,
    offset: usize,
) -> Result<()> {
    let n = to - from;
    let end = t.pos + n;
    if end > t.limit {
        return Err(corrupt(offset, "block decodes past its maximum size"));
    }
    let (Some(d), Some(s)) = (t.buf.get_mut(t.pos..end), lits.get(from..to)) else {
        return Err(corrupt(offset, "literal copy out of range"));
    };
    d.copy_from_slice(s);
    t.pos = end;
    Ok(())
}

/// Copy `len` bytes from `dist` bytes back; `buf[pos..]` has room checked by the caller.
#[inline(always)]
pub(super) fn copy_match(buf: &mut [u8], pos: usize, dist: usize, len: usize) {
    let src = pos - dist;
    if dist >= 32 && pos + len + 32 <= buf.len() {
        // Every 32-byte read lies before the write it feeds (dist >= 32).
        let mut i = 0;
        while i < len {
            buf.copy_within(src + i..src + i + 32, pos + i);
            i += 32;
        }
    } else if dist >= 16 && pos + len + 16 <= buf.len() {
        let mut i = 0;
        while i < len {
            buf.copy_within(src + i..src + i + 16, pos + i);
            i += 16;
        }
    } else if dist >= len {
        buf.copy_within(src..src + len, pos);
    } else if dist == 1 {
        let b = buf[src];
        buf[pos..pos + len].fill(b);
    } else {
        // Overlapping: the pattern repeats every `dist` bytes; grow the copied run.
        let end = pos + len;
        let mut d = pos;
        while d < end {
            let k = (d - src).min(end - d);
            buf.copy_within(src..src + k, d);
            d += k;
        }
    }
}

/// Room a sequence's wide copies need past its end (in the output) and past
/// its last literal (in the literals): they round every run up to a whole
/// number of 16- or 32-byte pieces, and copy 64 bytes of a run whatever
/// its length in sections of long runs.
pub(super) const WILD: usize = 64;

/// Whether a section's sequences average 24 output bytes or more (`room`,
/// the block's output bound, over `nb_seq` sequences; the bound is the
/// block's size when the frame declares its content size, as Blosc2's and
/// HDF5's frames do): [`wild_copy`]'s `LONG` form. Shuffled CT planes run
/// 40–150 bytes a sequence, text 10–15 (where the long form cost 2.7 %);
/// 64 as the threshold left a third of the gain on the CT planes.
#[cfg(any(test, target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn long_runs(room: usize, nb_seq: usize) -> bool {
    room >= nb_seq.saturating_mul(24)
}

/// Effective distance used after the 8-byte prologue of a match with offset
/// `d` < 8: the smallest multiple of `d` that is >= 8 (the pattern repeats
/// with it, and 8-byte copies at that distance never read unwritten bytes).
const SHORT_STEP: [usize; 8] = [0, 8, 8, 9, 8, 10, 12, 14];

/// `PATTERN_MASK[d][i] = i % d`: the shuffle that repeats the `d` bytes
/// before a match across 32 bytes (each 16-byte lane indexes the same 16
/// source bytes).
#[cfg(target_arch = "x86_64")]
const PATTERN_MASK: [[u8; 32]; 16] = {
    let mut m = [[0u8; 32]; 16];
    let mut d = 1;
    while d < 16 {
        let mut i = 0;
        while i < 32 {
            m[d][i] = (i % d) as u8;
            i += 1;
        }
        d += 1;
    }
    m
};

/// A match of offset `dist` (1..=15) and length `ml` at `m`: the `dist`
/// bytes before `m` repeat, so one shuffle builds 32 bytes of the pattern
/// and the copy is stores only, each `dist * (32 / dist)` bytes after the
/// last (a whole number of periods). The 8-byte copies at such offsets
/// read what the previous store just wrote (or two stores, which the CPU
/// cannot forward): a store-to-load wait per 8 bytes.
///
/// # Safety
/// AVX2 present; `m - dist .. m` written and `m - dist .. m - dist + 16`
/// readable; `m .. m + ml + 31` writable (wild_sequence's contract: its
/// writes end below pos + ll + ml + 32).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn short_match_avx2(m: *mut u8, dist: usize, ml: usize) {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm256_broadcastsi128_si256, _mm256_loadu_si256, _mm256_shuffle_epi8,
        _mm256_storeu_si256, _mm_loadu_si128,
    };
    let d = dist & 15;
    // Never 0 (dist >= 1; the max keeps the loop moving regardless).
    let step = (d * (32 / d.max(1))).max(1);
    // SAFETY: the caller's contract (reads at m - dist, 16 bytes; the mask
    // is a 32-byte table row; stores of 32 bytes at m + k for k < ml).
    unsafe {
        let src = _mm_loadu_si128(m.sub(dist).cast::<__m128i>());
        let mask = _mm256_loadu_si256(PATTERN_MASK[d].as_ptr().cast::<__m256i>());
        let p = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(src), mask);
        let mut k = 0;
        while k < ml {
            _mm256_storeu_si256(m.add(k).cast::<__m256i>(), p);
            k += step;
        }
    }
}

/// `N` bytes from `src` to `dst` (regions may not overlap within the `N`
/// bytes): one unaligned load and store of 8 or 16 bytes, or of 32 where the
/// caller is compiled with AVX2 (two 16-byte halves without it).
///
/// # Safety
/// `src..src + N` readable, `dst..dst + N` writable.
#[inline(always)]
unsafe fn copy<const N: usize>(dst: *mut u8, src: *const u8) {
    // SAFETY: the caller guarantees both N-byte ranges.
    unsafe {
        dst.cast::<[u8; N]>()
            .write_unaligned(src.cast::<[u8; N]>().read_unaligned())
    }
}

/// Execute one sequence with wide copies: `ll` literals from `lits[lit_pos..]`
/// to `buf[pos..]`, then `ml` bytes from `dist` back, in [`wild_copy`]'s
/// `LONG` form when `long`. Bytes of `buf` up to [`WILD`] past the
/// sequence's end may be overwritten with garbage (later writes or the
/// caller's truncation replace them).
///
/// # Safety
/// `lit_pos + ll + WILD <= lits.len()`, `pos + ll + ml + WILD <= buf.len()`,
/// `1 <= dist <= pos + ll`.
#[cfg(test)]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn wild_sequence(
    buf: &mut [u8],
    pos: usize,
    lits: &[u8],
    lit_pos: usize,
    ll: usize,
    dist: usize,
    ml: usize,
    long: bool,
) {
    // SAFETY: the contract puts both positions inside their slices, and
    // is wild_copy's in indices; the AVX2 copy runs where use_avx2 found it.
    unsafe {
        let (op, lp) = (buf.as_mut_ptr().add(pos), lits.as_ptr().add(lit_pos));
        #[cfg(target_arch = "x86_64")]
        if super::use_avx2() {
            return if long {
                wild_copy_avx2::<true>(op, lp, ll, dist, ml)
            } else {
                wild_copy_avx2::<false>(op, lp, ll, dist, ml)
            };
        }
        if long {
            wild_copy::<false, true>(op, lp, ll, dist, ml)
        } else {
            wild_copy::<false, false>(op, lp, ll, dist, ml)
        }
    }
}

/// [`wild_copy`] compiled with AVX2, for [`wild_sequence`]'s tests.
///
/// # Safety
/// As [`wild_copy`], with AVX2 present.
#[cfg(all(test, target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
unsafe fn wild_copy_avx2<const LONG: bool>(
    op: *mut u8,
    lp: *const u8,
    ll: usize,
    dist: usize,
    ml: usize,
) {
    // SAFETY: the caller upholds `wild_copy`'s contract (readable literals
    // and writable output with `WILD` slack, `dist` back inside written
    // bytes), and AVX2 is enabled here as `wild_copy::<true, _>` requires.
    unsafe { wild_copy::<true, LONG>(op, lp, ll, dist, ml) }
}

/// A sequence with wide copies, on pointers: `ll` literals from `lp` to
/// `op`, then `ml` bytes from `dist` back. `AVX2`: the caller is compiled
/// with AVX2 (the 32-byte pieces are one load and one store, and matches of
/// offset under 16 take [`short_match_avx2`]). `LONG`: the section's
/// sequences are long (see [`long_runs`]), and the literals and a match of
/// offset 32 or more start with 64 bytes copied whatever their length:
/// runs of 33–64 bytes then take no branch on their length (1.7 % of a
/// pass over shuffled CT planes, 143 bytes a sequence).
/// Short runs keep one piece before the first branch: copying 64 there
/// costs more than the branch saves (2.7 % on text), since the extra stores
/// overlap bytes the next sequences read back.
///
/// # Safety
/// `lp .. lp + ll + WILD` readable; `op .. op + ll + ml + WILD` writable;
/// `op + ll - dist .. op + ll` written (in the same allocation), `dist >= 1`;
/// with `AVX2`, the CPU has AVX2.
#[inline(always)]
unsafe fn wild_copy<const AVX2: bool, const LONG: bool>(
    op: *mut u8,
    lp: *const u8,
    ll: usize,
    dist: usize,
    ml: usize,
) {
    // SAFETY: (whole body) every access is inside the ranges this
    // function's contract makes readable and writable (AVX2 too, when
    // `AVX2`): the literal pieces (32 bytes) start at op + k
    // and lp + k for k < ll, or are the first ones (ending at most at + 64),
    // and a loop step's second piece starts at most 32 past a k < ll: they
    // end below op + ll + 64 and lp + ll + 64 (WILD). The match pieces (8,
    // 16 or 32 bytes) start at m + k (m = op + ll) for k < ml, or are the
    // first ones (ending at most at m + 64), so they end below m + ml + 64;
    // they read at most `dist` back (written bytes, by the contract), each
    // piece after the bytes it reads were written (distance >= the piece
    // size) or byte by byte.
    unsafe {
        // Two pieces per step and one after: a loop of one piece per step
        // whose size is its stride has a trip count LLVM turns into a
        // `memcpy` call (register spills and a call for every literal run
        // over 32 bytes).
        copy::<32>(op, lp);
        if LONG {
            copy::<32>(op.add(32), lp.add(32));
            let mut k = 64;
            while k < ll {
                copy::<32>(op.add(k), lp.add(k));
                copy::<32>(op.add(k + 32), lp.add(k + 32));
                k += 64;
            }
        } else {
            let mut k = 32;
            while k + 32 < ll {
                copy::<32>(op.add(k), lp.add(k));
                copy::<32>(op.add(k + 32), lp.add(k + 32));
                k += 64;
            }
            if k < ll {
                copy::<32>(op.add(k), lp.add(k));
            }
        }
        let m = op.add(ll);
        let s = m.sub(dist);
        if dist >= 32 {
            // Each piece reads at least 32 bytes back: bytes written before it.
            copy::<32>(m, s);
            let mut k = 32;
            if LONG {
                copy::<32>(m.add(32), s.add(32));
                k = 64;
            }
            while k < ml {
                copy::<32>(m.add(k), s.add(k));
                k += 32;
            }
        } else if dist >= 16 {
            copy::<16>(m, s);
            copy::<16>(m.add(16), s.add(16));
            let mut k = 32;
            while k < ml {
                copy::<16>(m.add(k), s.add(k));
                k += 16;
            }
        } else {
            #[cfg(target_arch = "x86_64")]
            if AVX2 {
                // The contract covers its reads and writes (see
                // short_match_avx2); AVX2 is present (the caller's word).
                short_match_avx2(m, dist, ml);
                return;
            }
            let step = if dist >= 8 {
                dist
            } else {
                // Byte by byte until 8 bytes of the pattern are out.
                for j in 0..8 {
                    *m.add(j) = *s.add(j);
                }
                SHORT_STEP[dist]
            };
            let mut k = if dist >= 8 { 0 } else { 8 };
            while k < ml {
                copy::<8>(m.add(k), m.add(k).sub(step));
                k += 8;
            }
        }
    }
}

/// One decoded sequence waiting for execution: literal length, match
/// length and the offset value as coded (1..=3 name repeat offsets, RFC 8878
/// §3.1.1.5; resolved when the sequence executes).
#[derive(Clone, Copy, Default)]
pub(super) struct Seq {
    pub(super) ll: u32,
    pub(super) ml: u32,
    pub(super) of: u32,
}

/// Execution state of a sequences section (RFC 8878 §3.1.1.4).
pub(super) struct Exec {
    /// Output write position.
    pub(super) pos: usize,
    /// Literals used so far.
    pub(super) lit_pos: usize,
    /// Repeat offsets (§3.1.1.5).
    pub(super) rep: [u32; 3],
    /// The block may not write at or past this output position.
    pub(super) limit: usize,
    /// Decoded literals.
    pub(super) lit_len: usize,
    /// Matches may not reach before this output position.
    pub(super) frame_start: usize,
    /// A sequence may take the wide-copy path when its end is below this
    /// (inside `limit`, WILD bytes of room in the output) ...
    pub(super) out_fast: usize,
    /// ... and its last literal below this (inside `lit_len`, WILD bytes of
    /// room in the literals).
    pub(super) lit_fast: usize,
}

/// Resolve a sequence's offset value (RFC 8878 §3.1.1.5) against the
/// repeat offsets `rep`, updating them; returns the match distance (0 when
/// "repeat offset 1 minus one" meets a repeat offset of 1: invalid, and
/// refused by the execution's bounds).
///
/// Without branches: which repeat offset a value names depends on the
/// data, and a mispredicted branch costs more than the selects.
#[inline(always)]
pub(super) fn resolve_offset(of: u32, ll: u32, rep: &mut [u32; 3]) -> usize {
    let [r0, r1, r2] = *rep;
    // 0..=3 for a repeat code: the value minus one, plus one when the
    // sequence has no literals.
    let idx = of.wrapping_sub(1).wrapping_add(u32::from(ll == 0));
    let odd = if idx & 1 != 0 { r1 } else { r0 };
    let even = if idx & 1 != 0 { r0.wrapping_sub(1) } else { r2 };
    let repeat = if idx & 2 != 0 { even } else { odd };
    let new = of > 3;
    let dist = if new { of - 3 } else { repeat };
    // Repeat 0 keeps the order; repeat 1 swaps the first two; the others
    // and a new offset push down the first two.
    let r2 = if new || idx >= 2 { r1 } else { r2 };
    let r1 = if new || idx >= 1 { r0 } else { r1 };
    *rep = [dist, r1, r2];
    dist as usize
}

/// Execute decoded sequences (`first` is the section index of `seqs[0]`, for
/// errors), with 32-byte copies and the short-offset match copy inlined where
/// the CPU has AVX2. Not inlined, so its loop gets the registers: next to
/// the decode loop it spilled positions and bounds.
#[inline(never)]
pub(super) fn execute_batch(
    seqs: &[Seq],
    first: usize,
    ex: &mut Exec,
    buf: &mut [u8],
    lits: &[u8],
    offset: usize,
) -> Result<()> {
    #[cfg(target_arch = "x86_64")]
    if super::use_avx2() && super::use_bmi2() {
        // SAFETY: the CPU has AVX2, BMI1 and BMI2 (checked just above).
        return unsafe { execute_batch_avx2(seqs, first, ex, buf, lits, offset) };
    }
    execute_batch_body::<false>(seqs, first, ex, buf, lits, offset)
}

/// [`execute_batch`]'s body compiled with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2")]
fn execute_batch_avx2(
    seqs: &[Seq],
    first: usize,
    ex: &mut Exec,
    buf: &mut [u8],
    lits: &[u8],
    offset: usize,
) -> Result<()> {
    execute_batch_body::<true>(seqs, first, ex, buf, lits, offset)
}

#[inline(always)]
fn execute_batch_body<const AVX2: bool>(
    seqs: &[Seq],
    first: usize,
    ex: &mut Exec,
    buf: &mut [u8],
    lits: &[u8],
    offset: usize,
) -> Result<()> {
    let mut done = 0usize;
    while done < seqs.len() {
        // SAFETY: with AVX2, this body is execute_batch_avx2's (its target
        // features).
        let (n, dist) = unsafe { execute_wide::<AVX2>(&seqs[done..], ex, buf, lits) };
        done += n;
        let Some(s) = seqs.get(done) else {
            break;
        };
        execute_checked(s, dist, first + done, ex, buf, lits, offset)?;
        done += 1;
    }
    Ok(())
}

/// The wide-copy executor: output and literal positions as pointers and
/// their bounds as addresses, so a loop over sequences needs no slice
/// bases and names no error (its positions and bounds stay in registers).
pub(super) struct Wide {
    rep: [u32; 3],
    op: *mut u8,
    lp: *const u8,
    /// Addresses, only compared: see [`Exec`].
    out_fast: usize,
    lit_fast: usize,
    frame_start: usize,
}

impl Wide {
    #[inline(always)]
    pub(super) fn new(ex: &Exec, buf: &mut [u8], lits: &[u8]) -> Self {
        let base = buf.as_mut_ptr();
        let lbase = lits.as_ptr();
        Wide {
            rep: ex.rep,
            // Never out of their slices: pos <= buf.len() and lit_pos <=
            // lits.len() (positions only move by executed sequences).
            op: base.wrapping_add(ex.pos),
            lp: lbase.wrapping_add(ex.lit_pos),
            out_fast: (base as usize).wrapping_add(ex.out_fast),
            lit_fast: (lbase as usize).wrapping_add(ex.lit_fast),
            frame_start: (base as usize).wrapping_add(ex.frame_start),
        }
    }

    /// Execute `s` if its reads and writes keep their slack inside the
    /// buffers ([`wild_copy`]'s contract); false (nothing changed) if not.
    ///
    /// # Safety
    /// With `AVX2`, the CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn execute<const AVX2: bool, const LONG: bool>(&mut self, s: Seq) -> bool {
        let (ll, ml) = (s.ll as usize, s.ml as usize);
        let mut rep = self.rep;
        let dist = resolve_offset(s.of, s.ll, &mut rep);
        let m = (self.op as usize).wrapping_add(ll);
        // `dist - 1 < m - frame_start` is 1 <= dist <= m - frame_start.
        if m.wrapping_add(ml) >= self.out_fast
            || (self.lp as usize).wrapping_add(ll) >= self.lit_fast
            || dist.wrapping_sub(1) >= m.wrapping_sub(self.frame_start)
        {
            return false;
        }
        self.rep = rep;
        // SAFETY: checked just above (the sums cannot wrap: each is below a
        // bound of the form slice end + 1 - WILD): the literal reads lie
        // below lp + ll + WILD <= lits' end and the writes below op + ll +
        // ml + WILD <= buf's end (wild_copy's contract); the match source
        // starts at m - dist >= frame_start, inside buf and written; AVX2
        // as the caller says.
        unsafe {
            wild_copy::<AVX2, LONG>(self.op, self.lp, ll, dist, ml);
            self.op = self.op.add(ll + ml);
            self.lp = self.lp.add(ll);
        }
        true
    }

    /// Write the positions and repeat offsets back (`buf` and `lits` as
    /// given to [`Wide::new`]).
    #[inline(always)]
    pub(super) fn finish(self, ex: &mut Exec, buf: &[u8], lits: &[u8]) {
        ex.rep = self.rep;
        ex.pos = self.op as usize - buf.as_ptr() as usize;
        ex.lit_pos = self.lp as usize - lits.as_ptr() as usize;
    }
}

/// Execute sequences with wide copies while [`Wide::execute`] takes them;
/// returns how many it executed and, when it stopped before the end, the
/// distance of the sequence it stopped at (the repeat offsets updated for
/// it): that one goes to [`execute_checked`].
///
/// # Safety
/// With `AVX2`, the CPU has AVX2.
#[inline(always)]
unsafe fn execute_wide<const AVX2: bool>(
    seqs: &[Seq],
    ex: &mut Exec,
    buf: &mut [u8],
    lits: &[u8],
) -> (usize, usize) {
    let mut w = Wide::new(ex, buf, lits);
    let mut n = 0usize;
    let mut stop = None;
    for &s in seqs {
        // SAFETY: the caller's word on AVX2.
        if !unsafe { w.execute::<AVX2, false>(s) } {
            stop = Some(resolve_offset(s.of, s.ll, &mut w.rep));
            break;
        }
        n += 1;
    }
    w.finish(ex, buf, lits);
    (n, stop.unwrap_or(0))
}

/// Execute one sequence whose distance is resolved, checking every bound
/// (`i` is its index in the section, for errors).
#[inline(never)]
pub(super) fn execute_checked(
    s: &Seq,
    dist: usize,
    i: usize,
    ex: &mut Exec,
    buf: &mut [u8],
    lits: &[u8],
    offset: usize,
) -> Result<()> {
    let (ll_v, ml_v) = (s.ll as usize, s.ml as usize);
    let (pos, lit_pos) = (ex.pos, ex.lit_pos);
    let lit_end = lit_pos + ll_v;
    let m_pos = pos + ll_v;
    let end = m_pos + ml_v;
    if lit_end > ex.lit_len {
        return Err(corrupt(
            offset,
            format!("sequence {i} uses more literals than decoded"),
        ));
    }
    if end > ex.limit {
        return Err(corrupt(
            offset,
            format!("sequence {i} writes past the block maximum"),
        ));
    }
    if dist == 0 || dist > m_pos - ex.frame_start {
        return Err(corrupt(
            offset,
            format!("sequence {i}: offset {dist} reaches before the frame"),
        ));
    }
    buf[pos..m_pos].copy_from_slice(&lits[lit_pos..lit_end]);
    copy_match(buf, m_pos, dist, ml_v);
    ex.lit_pos = lit_end;
    ex.pos = end;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Every copy path (32- and 16-byte strides, plain, run, overlapping)
        /// equals the byte-by-byte definition on the bytes it must write.
        #[test]
        fn copy_match_equals_bytewise(
            head in proptest::collection::vec(proptest::num::u8::ANY, 1..200),
            dist_pick in 0usize..200,
            len in 0usize..300,
            slack in 0usize..40,
        ) {
            let pos = head.len();
            let dist = 1 + dist_pick % pos;
            let mut buf = head.clone();
            buf.resize(pos + len + slack, 0xEE);
            let mut want = buf.clone();
            for i in 0..len {
                want[pos + i] = want[pos + i - dist];
            }
            copy_match(&mut buf, pos, dist, len);
            proptest::prop_assert_eq!(&buf[..pos + len], &want[..pos + len]);
        }
    }

    proptest::proptest! {
        /// The wide-copy sequence (literals then match, every offset class:
        /// 1..=15 as AVX2 pattern stores, or 1..=7 with the byte prologue and
        /// 8..=15 in 8-byte steps, >= 16 in 16-byte steps) equals the byte-by-byte definition, with the output
        /// and the literals sized to the least room its contract allows.
        #[test]
        fn wild_sequence_equals_bytewise(
            head in proptest::collection::vec(proptest::num::u8::ANY, 0..120),
            lits in proptest::collection::vec(proptest::num::u8::ANY, 0..100),
            lit_pick in 0usize..100,
            ll_pick in 0usize..100,
            dist_pick in 0usize..40,
            ml in 3usize..200,
        ) {
            let lit_pos = lit_pick % (lits.len() + 1);
            let ll = ll_pick % (lits.len() - lit_pos + 1);
            let pos = head.len();
            let dist = 1 + dist_pick % (pos + ll).max(1);
            proptest::prop_assume!(dist <= pos + ll);
            let mut l = lits.clone();
            l.resize(lit_pos + ll + WILD, 0xAB);
            let mut buf = head.clone();
            buf.resize(pos + ll + ml + WILD, 0xEE);
            let mut want = head.clone();
            want.extend_from_slice(&l[lit_pos..lit_pos + ll]);
            for _ in 0..ml {
                let b = want[want.len() - dist];
                want.push(b);
            }
            // Both short-offset paths (AVX2 pattern stores and 8-byte
            // steps), and both forms of the first pieces.
            for (portable, long) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut buf = buf.clone();
                crate::zstd_decode::force_portable(portable);
                // SAFETY: the buffers are sized to the contract of wild_sequence.
                unsafe { wild_sequence(&mut buf, pos, &l, lit_pos, ll, dist, ml, long) };
                crate::zstd_decode::force_portable(false);
                proptest::prop_assert_eq!(&buf[..want.len()], &want[..]);
            }
        }
    }

    /// Every offset 1..=40 with match lengths around the copy sizes.
    #[test]
    fn wild_sequence_short_offsets_and_lengths() {
        for dist in 1..=40usize {
            for ml in 3..=70usize {
                let head: Vec<u8> = (0..50u8).map(|b| b.wrapping_mul(37)).collect();
                let mut buf = head.clone();
                buf.resize(50 + ml + WILD, 0);
                let lits = [0u8; WILD];
                let mut want = head.clone();
                for _ in 0..ml {
                    let b = want[want.len() - dist];
                    want.push(b);
                }
                for (portable, long) in [(false, false), (true, false), (false, true), (true, true)]
                {
                    let mut buf = buf.clone();
                    crate::zstd_decode::force_portable(portable);
                    // SAFETY: buf holds pos + ml + WILD bytes, lits WILD, dist <= 50.
                    unsafe { wild_sequence(&mut buf, 50, &lits, 0, 0, dist, ml, long) };
                    crate::zstd_decode::force_portable(false);
                    assert_eq!(
                        &buf[..want.len()],
                        &want[..],
                        "dist {dist} ml {ml} portable {portable} long {long}"
                    );
                }
            }
        }
    }

    #[test]
    fn overlapping_match_copies_repeat_the_pattern() {
        let mut buf = vec![0u8; 64];
        buf[..3].copy_from_slice(b"abc");
        copy_match(&mut buf, 3, 3, 10);
        assert_eq!(&buf[..13], b"abcabcabcabca");
        let mut buf = vec![7u8, 0, 0, 0, 0];
        copy_match(&mut buf, 1, 1, 4);
        assert_eq!(buf, [7, 7, 7, 7, 7]);
    }
}
