//! Raw LZ4 block decoding (the stream format of Blosc codecs lz4/lz4hc,
//! `docs/filters-format.md` §3.7): tokens of literal length / match length,
//! 16-bit little-endian offsets, the last sequence literals only.
//!
//! Written for the Blosc hot path: short literals and matches are moved as
//! 16-byte blocks (the surplus bytes are overwritten by the next tokens),
//! overlapping matches are expanded by doubling, and every access is
//! bounds-checked, so any input gives either the block or an error.

/// Why a block is invalid.
pub type DecodeError = &'static str;

#[inline(always)]
fn read_len(src: &[u8], ip: &mut usize, mut n: usize) -> Result<usize, DecodeError> {
    loop {
        let b = *src.get(*ip).ok_or("truncated length")?;
        *ip += 1;
        n = n.checked_add(usize::from(b)).ok_or("length overflow")?;
        if b != 255 {
            return Ok(n);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod fast;
#[cfg(target_arch = "x86_64")]
mod pattern;

/// Decode one block into `out`; returns the number of bytes written. Bytes
/// of `out` past that count may be overwritten.
pub fn decode(src: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::cpu::avx2() {
            // SAFETY: AVX2 is available (checked above).
            return unsafe { decode_avx2(src, out) };
        }
    }
    decode_from(src, out, 0, 0)
}

/// The portable decoder alone (the reference the fast loop is tested against).
pub fn decode_scalar(src: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
    decode_from(src, out, 0, 0)
}

/// The fast loop while margins last, then the safe decoder, both compiled
/// with AVX2 enabled. A block at most a third the size of its output has
/// few literals (the high-byte planes of shuffled data) and takes the loop
/// that branches on the literal length instead of computing it.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn decode_avx2(src: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
    let few = src.len() * 3 < out.len();
    // SAFETY: AVX2 is available (this function's contract).
    unsafe { decode_avx2_loop(src, out, few) }
}

/// [`decode_avx2`] with the loop chosen by `few` (the tests run both loops
/// on every block).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn decode_avx2_loop(src: &[u8], out: &mut [u8], few: bool) -> Result<usize, DecodeError> {
    let r = if few {
        // SAFETY: AVX2 is available (this function's contract).
        unsafe { fast::run::<true>(src, out) }
    } else {
        // SAFETY: AVX2 is available (this function's contract).
        unsafe { fast::run::<false>(src, out) }
    };
    match r? {
        fast::Stop::Done(n) => Ok(n),
        fast::Stop::Resume(ip, op) => decode_from(src, out, ip, op),
    }
}

/// Where one sequence left the decoder.
pub(super) enum Seq {
    /// Next sequence starts at input `ip`, output `op`.
    Next(usize, usize),
    /// The block ended (its last literals consumed the input): bytes written.
    End(usize),
}

/// Decode sequences from input position `ip` and output position `op` (a
/// sequence boundary) to the end of the block.
#[inline(always)]
fn decode_from(
    src: &[u8],
    out: &mut [u8],
    mut ip: usize,
    mut op: usize,
) -> Result<usize, DecodeError> {
    loop {
        match sequence(src, out, ip, op)? {
            Seq::Next(i, o) => (ip, op) = (i, o),
            Seq::End(n) => return Ok(n),
        }
    }
}

/// Decode the one sequence that starts at input `ip`, output `op`, with
/// every access checked.
#[inline(always)]
fn sequence(src: &[u8], out: &mut [u8], mut ip: usize, mut op: usize) -> Result<Seq, DecodeError> {
    let (n, on) = (src.len(), out.len());
    let token = *src.get(ip).ok_or("truncated token")?;
    ip += 1;
    let mut lit = usize::from(token >> 4);
    if lit == 15 {
        lit = read_len(src, &mut ip, lit)?;
    }
    if lit <= 16 && ip + 16 <= n && op + 16 <= on {
        out[op..op + 16].copy_from_slice(&src[ip..ip + 16]);
    } else {
        let s = src.get(ip..ip + lit).ok_or("literals past input end")?;
        out.get_mut(op..op + lit)
            .ok_or("literals past output end")?
            .copy_from_slice(s);
    }
    ip += lit;
    op += lit;
    if ip >= n {
        return if ip == n {
            Ok(Seq::End(op))
        } else {
            Err("literals past input end")
        };
    }
    let off = src.get(ip..ip + 2).ok_or("truncated offset")?;
    let off = usize::from(off[0]) | usize::from(off[1]) << 8;
    ip += 2;
    let mut ml = usize::from(token & 15);
    if ml == 15 {
        ml = read_len(src, &mut ip, ml)?;
    }
    ml += 4;
    if off == 0 {
        return Err("zero offset");
    }
    let from = op.checked_sub(off).ok_or("offset before output start")?;
    let end = op
        .checked_add(ml)
        .filter(|&e| e <= on)
        .ok_or("match past output end")?;
    copy_match(out, from, op, ml, end);
    Ok(Seq::Next(ip, end))
}

#[inline(always)]
fn copy_match(out: &mut [u8], from: usize, op: usize, ml: usize, end: usize) {
    let off = op - from;
    let on = out.len();
    if off >= 32 && end + 32 <= on {
        let mut k = 0;
        while k < ml {
            let mut t = [0u8; 32];
            t.copy_from_slice(&out[from + k..from + k + 32]);
            out[op + k..op + k + 32].copy_from_slice(&t);
            k += 32;
        }
    } else if off >= 16 && end + 16 <= on {
        // Non-overlapping 16-byte steps; surplus bytes are rewritten later.
        let mut k = 0;
        while k < ml {
            let mut t = [0u8; 16];
            t.copy_from_slice(&out[from + k..from + k + 16]);
            out[op + k..op + k + 16].copy_from_slice(&t);
            k += 16;
        }
    } else if off >= ml {
        out.copy_within(from..from + ml, op);
    } else if off == 1 {
        let b = out[from];
        out[op..end].fill(b);
    } else if off < 16 && end + 16 <= on {
        // Short period: 16 bytes of the pattern, stored at steps of the
        // largest multiple of the period that is ≤ 16 (overlapping stores).
        let mut pat = [0u8; 16];
        pat[..off].copy_from_slice(&out[from..op]);
        for i in off..16 {
            pat[i] = pat[i - off];
        }
        let step = 16 - 16 % off;
        let mut k = 0;
        while k < ml {
            out[op + k..op + k + 16].copy_from_slice(&pat);
            k += step;
        }
    } else {
        // Overlapping: the pattern of `off` bytes repeats; double it each step.
        let mut done = 0;
        while done < ml {
            let step = (op + done - from).min(ml - done);
            out.copy_within(from..from + step, op + done);
            done += step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_garbage() {
        let mut out = [0u8; 64];
        assert!(decode(&[0x1f, 1, 0, 0], &mut out).is_err());
        assert!(decode(&[0xf0], &mut out).is_err());
        assert!(decode(&[], &mut out).is_err());
    }

    /// Extended length bytes of an LZ4 length (after the 15 of the nibble).
    fn push_len(c: &mut Vec<u8>, mut rest: usize) {
        while rest >= 255 {
            c.push(255);
            rest -= 255;
        }
        c.push(rest as u8);
    }

    /// A block built sequence by sequence (literal count, offset, match
    /// length, literal seed) with the output it stands for, decoded by the
    /// plain definition: the reference for hand-made blocks.
    fn build(seqs: &[(usize, usize, usize, u8)], last: usize) -> (Vec<u8>, Vec<u8>) {
        let (mut c, mut want) = (Vec::new(), Vec::<u8>::new());
        for &(lit, off, ml, seed) in seqs {
            let lit = if want.is_empty() { lit.max(1) } else { lit };
            let lits: Vec<u8> = (0..lit)
                .map(|i| seed.wrapping_add((i as u8).wrapping_mul(37)))
                .collect();
            let off = off.min(want.len() + lit);
            c.push(((lit.min(15) as u8) << 4) | (ml - 4).min(15) as u8);
            if lit >= 15 {
                push_len(&mut c, lit - 15);
            }
            c.extend_from_slice(&lits);
            want.extend_from_slice(&lits);
            c.extend_from_slice(&(off as u16).to_le_bytes());
            if ml - 4 >= 15 {
                push_len(&mut c, ml - 19);
            }
            for _ in 0..ml {
                want.push(want[want.len() - off]);
            }
        }
        c.push((last.min(15) as u8) << 4);
        if last >= 15 {
            push_len(&mut c, last - 15);
        }
        let lits: Vec<u8> = (0..last).map(|i| (i as u8) ^ 0x5a).collect();
        c.extend_from_slice(&lits);
        want.extend_from_slice(&lits);
        (c, want)
    }

    /// A block decoder.
    type Decoder = fn(&[u8], &mut [u8]) -> Result<usize, DecodeError>;

    /// Every decoder: the dispatching one, the scalar one and, with AVX2,
    /// both fast loops whatever the block's size ratio.
    fn decoders() -> Vec<Decoder> {
        #[allow(unused_mut)]
        let mut v: Vec<Decoder> = vec![decode, decode_scalar];
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::avx2() {
            // SAFETY: AVX2 is available (checked above), which is all
            // `decode_avx2_loop` requires beyond its slices.
            v.push(|c, o| unsafe { decode_avx2_loop(c, o, true) });
            // SAFETY: as for the first push: AVX2 checked above.
            v.push(|c, o| unsafe { decode_avx2_loop(c, o, false) });
        }
        v
    }

    /// Every decoder into `len`-byte outputs: the same result as the scalar
    /// decoder (for a bad block the same error class) and the same bytes.
    fn all_agree(c: &[u8], len: usize) -> Result<(), TestCaseError> {
        let mut want = vec![0u8; len];
        let rw = decode_scalar(c, &mut want);
        for f in decoders() {
            let mut a = vec![0x33u8; len];
            let ra = f(c, &mut a);
            prop_assert_eq!(ra, rw);
            if let Ok(x) = ra {
                prop_assert_eq!(&a[..x], &want[..x]);
            }
        }
        Ok(())
    }

    /// Literal lengths of every class of the fast loop.
    fn lit_class() -> impl Strategy<Value = usize> {
        prop_oneof![0usize..15, 15usize..=32, 33usize..80, 265usize..300]
    }

    /// Match lengths of every class of the fast loop.
    fn ml_class() -> impl Strategy<Value = usize> {
        prop_oneof![4usize..=18, 19usize..=32, 33usize..100, 268usize..300]
    }

    /// Offsets: short periods, around the 16 / 32 / 64 boundaries, far.
    fn off_class() -> impl Strategy<Value = usize> {
        prop_oneof![1usize..=17, 14usize..=34, 30usize..=70, 1usize..3000]
    }

    /// Offsets: short periods, around 16 / 32 / 64 / 128, far.
    fn run_off() -> impl Strategy<Value = usize> {
        prop_oneof![
            1usize..=4,
            14usize..=34,
            60usize..=70,
            120usize..=136,
            1usize..3000
        ]
    }

    /// Literal runs as in the high-byte planes: mostly none, a few short,
    /// rarely extended.
    fn run_lit() -> impl Strategy<Value = usize> {
        prop_oneof![20 => Just(0usize), 2 => 1usize..15, 1 => 15usize..40]
    }

    /// Match lengths: short, around 32 / 64 / 128, with a second extension
    /// byte.
    fn run_ml() -> impl Strategy<Value = usize> {
        prop_oneof![4usize..=18, 19usize..=70, 60usize..=140, 268usize..=300]
    }

    /// The block of `seqs` (and `last` literals) decoded `at` bytes into a
    /// buffer with `extra` bytes to spare by every decoder: its bytes, and
    /// nothing before them touched.
    fn decode_at(
        seqs: &[(usize, usize, usize, u8)],
        last: usize,
        at: usize,
        extra: usize,
    ) -> Result<(), TestCaseError> {
        let (c, want) = build(seqs, last);
        for f in decoders() {
            let mut a = vec![0xeeu8; at + want.len() + extra];
            prop_assert_eq!(f(&c, &mut a[at..]), Ok(want.len()));
            prop_assert_eq!(&a[at..at + want.len()], &want[..]);
            prop_assert!(a[..at].iter().all(|&x| x == 0xee));
        }
        Ok(())
    }

    /// The block of `seqs` with bytes changed (`flips`), cut short (when
    /// `cut % 3 == 0`) and decoded into an output `short` bytes too small
    /// (`grow` 0), exact (1) or too large (2): every decoder agrees with the
    /// scalar one ([`all_agree`]).
    fn damaged_agree(
        seqs: &[(usize, usize, usize, u8)],
        flips: &[(usize, u8)],
        cut: usize,
        short: usize,
        grow: usize,
    ) -> Result<(), TestCaseError> {
        let (mut c, want) = build(seqs, 7);
        for &(at, v) in flips {
            let k = at % c.len();
            c[k] = v;
        }
        if cut.is_multiple_of(3) {
            c.truncate(cut % (c.len() + 1));
        }
        let len = match grow {
            0 => want.len().saturating_sub(short),
            1 => want.len(),
            _ => want.len() + short,
        };
        all_agree(&c, len)
    }

    proptest! {
        /// Match-rich blocks (the high-byte planes' case: few literal runs,
        /// long runs of matches, offsets around 64 / 128, matches of 33..140
        /// bytes), decoded at any byte offset with any slack by every
        /// decoder: equal to the definition.
        #[test]
        fn fast_equals_definition_on_match_runs(
            seqs in proptest::collection::vec(
                (run_lit(), run_off(), run_ml(), any::<u8>()),
                1..200,
            ),
            last in 0usize..40,
            at in 0usize..64,
            extra in 0usize..100,
        ) {
            decode_at(&seqs, last, at, extra)?;
        }

        /// The same blocks damaged (bytes changed, cut short) or decoded
        /// into a buffer too small or too large: every decoder gives the
        /// scalar decoder's result, error class and bytes.
        #[test]
        fn fast_equals_scalar_on_damaged_match_runs(
            seqs in proptest::collection::vec(
                (run_lit(), run_off(), run_ml(), any::<u8>()),
                1..120,
            ),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
            cut in any::<usize>(),
            short in 0usize..150,
            grow in 0usize..3,
        ) {
            damaged_agree(&seqs, &flips, cut, short, grow)?;
        }

        /// Hand-made blocks of every sequence class the fast loop tells
        /// apart (literals in the nibble or extended, ≤ 32 or longer;
        /// matches in the nibble or extended; offsets 1..=64 and far),
        /// decoded at any byte offset of a larger buffer with any slack
        /// after the block: equal to the definition and to the scalar decoder.
        #[test]
        fn fast_equals_definition_on_sequences(
            seqs in proptest::collection::vec(
                (0usize..45, prop_oneof![1usize..=64, 1usize..3000], 4usize..90, any::<u8>()),
                1..120,
            ),
            last in 0usize..40,
            at in 0usize..64,
            extra in 0usize..80,
        ) {
            decode_at(&seqs, last, at, extra)?;
        }

        /// The same blocks damaged (bytes changed, cut short) or decoded into
        /// a buffer too small: both decoders agree on success and bytes.
        #[test]
        fn fast_equals_scalar_on_damaged_sequences(
            seqs in proptest::collection::vec(
                (0usize..45, prop_oneof![1usize..=64, 1usize..3000], 4usize..90, any::<u8>()),
                1..60,
            ),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
            cut in any::<usize>(),
            short in 0usize..40,
        ) {
            let (mut c, want) = build(&seqs, 5);
            for (at, v) in flips {
                let k = at % c.len();
                c[k] = v;
            }
            if cut % 3 == 0 {
                c.truncate(cut % (c.len() + 1));
            }
            let len = want.len().saturating_sub(short % 2 * short);
            all_agree(&c, len)?;
        }

        #[test]
        fn matches_lz4_flex(data in proptest::collection::vec(0u8..3, 0..20000), rep in 1usize..40) {
            let data: Vec<u8> = data.iter().flat_map(|&b| std::iter::repeat_n(b, rep % 7 + 1)).collect();
            let c = lz4_flex::block::compress(&data);
            let mut out = vec![0u8; data.len()];
            prop_assert_eq!(decode(&c, &mut out).unwrap(), data.len());
            prop_assert_eq!(&out, &data);
            let mut out2 = vec![0u8; data.len()];
            prop_assert_eq!(decode_scalar(&c, &mut out2).unwrap(), data.len());
            prop_assert_eq!(out2, data);
        }

        /// Short periods, long runs and far matches: the fast loop's shuffle
        /// and wide-copy paths, equal to the scalar decoder and the input.
        #[test]
        fn fast_equals_scalar_on_patterns(
            parts in proptest::collection::vec((1usize..40, 1usize..300, any::<u8>()), 1..60),
        ) {
            let mut data = Vec::new();
            for (period, reps, seed) in parts {
                let pat: Vec<u8> = (0..period).map(|i| seed.wrapping_mul(31).wrapping_add((i as u8).wrapping_mul(7))).collect();
                for _ in 0..reps { data.extend_from_slice(&pat); }
            }
            let c = lz4_flex::block::compress(&data);
            for f in decoders() {
                let mut a = vec![0u8; data.len()];
                prop_assert_eq!(f(&c, &mut a), Ok(data.len()));
                prop_assert_eq!(&a, &data);
            }
        }

        /// The classes of the branch-free fast loop and its exits: literals
        /// in the nibble, with one extension byte (15..=32), longer (the
        /// safe sequence) and with a second extension byte (>= 270); matches
        /// of one store (<= 32), with a tail (> 32) and with a second
        /// extension byte (>= 274); offsets around 16, 32 and 64 and far;
        /// decoded at any byte offset of a larger buffer with any slack:
        /// equal to the definition and to the scalar decoder.
        #[test]
        fn fast_equals_definition_on_length_classes(
            seqs in proptest::collection::vec(
                (lit_class(), off_class(), ml_class(), any::<u8>()),
                1..50,
            ),
            last in prop_oneof![0usize..40, 260usize..300],
            at in 0usize..64,
            extra in 0usize..100,
        ) {
            decode_at(&seqs, last, at, extra)?;
        }

        /// The same classes damaged (bytes changed, cut short) or decoded
        /// into a buffer too small or too large: the fast and the scalar
        /// decoder give the same result, error class and bytes.
        #[test]
        fn fast_equals_scalar_on_damaged_length_classes(
            seqs in proptest::collection::vec(
                (lit_class(), off_class(), ml_class(), any::<u8>()),
                1..40,
            ),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
            cut in any::<usize>(),
            short in 0usize..80,
            grow in 0usize..3,
        ) {
            damaged_agree(&seqs, &flips, cut, short, grow)?;
        }

        /// Corrupted blocks: both decoders agree on success and on the bytes.
        #[test]
        fn fast_equals_scalar_on_corrupt(
            data in proptest::collection::vec(0u8..4, 100..3000),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
            extra in 0usize..100,
        ) {
            let mut c = lz4_flex::block::compress(&data);
            for (at, v) in flips {
                let k = at % c.len();
                c[k] = v;
            }
            all_agree(&c, data.len() + extra)?;
        }
    }
}
