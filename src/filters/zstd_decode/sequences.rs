//! Sequences section of a compressed block, RFC 8878 §3.1.1.3.2: the section
//! header and symbol compression modes (§3.1.1.3.2.1), the predefined
//! distributions (§3.1.1.3.2.2), the interleaved FSE bitstream (§3.1.1.3.2.2
//! "Sequences_Section") and repeat offsets (§3.1.1.5); sequences are executed
//! (§3.1.1.4) as they are decoded, straight into the output.

use super::bits::BackBits;
use super::fse::{self, Cell};
use super::{corrupt, Result};
use std::sync::OnceLock;

/// Literal lengths default distribution (accuracy log 6).
pub(crate) const LL_DEFAULT: [i16; 36] = [
    4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
    -1, -1, -1, -1,
];
/// Match lengths default distribution (accuracy log 6).
pub(crate) const ML_DEFAULT: [i16; 53] = [
    1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
];
/// Offset codes default distribution (accuracy log 5).
pub(crate) const OF_DEFAULT: [i16; 29] = [
    1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1,
];

/// Literal length codes 16..=35: (baseline, extra bits).
const LL_CODES: [(u32, u8); 20] = [
    (16, 1),
    (18, 1),
    (20, 1),
    (22, 1),
    (24, 2),
    (28, 2),
    (32, 3),
    (40, 3),
    (48, 4),
    (64, 6),
    (128, 7),
    (256, 8),
    (512, 9),
    (1024, 10),
    (2048, 11),
    (4096, 12),
    (8192, 13),
    (16384, 14),
    (32768, 15),
    (65536, 16),
];
/// Match length codes 32..=52: (baseline, extra bits).
const ML_CODES: [(u32, u8); 21] = [
    (35, 1),
    (37, 1),
    (39, 1),
    (41, 1),
    (43, 2),
    (47, 2),
    (51, 3),
    (59, 3),
    (67, 4),
    (83, 4),
    (99, 5),
    (131, 7),
    (259, 8),
    (515, 9),
    (1027, 10),
    (2051, 11),
    (4099, 12),
    (8195, 13),
    (16387, 14),
    (32771, 15),
    (65539, 16),
];

/// Which of the three codes a table decodes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Code {
    LiteralLength,
    Offset,
    MatchLength,
}

impl Code {
    fn max_symbol(self) -> usize {
        match self {
            Code::LiteralLength => 35,
            Code::Offset => 31,
            Code::MatchLength => 52,
        }
    }
    fn max_log(self) -> u32 {
        match self {
            Code::Offset => 8,
            _ => 9,
        }
    }
    fn default_counts(self) -> fse::Counts {
        match self {
            Code::LiteralLength => fse::counts_from(6, &LL_DEFAULT),
            Code::Offset => fse::counts_from(5, &OF_DEFAULT),
            Code::MatchLength => fse::counts_from(6, &ML_DEFAULT),
        }
    }
    /// The predefined decoding table (§3.1.1.3.2.2), built once per process.
    fn predefined(self) -> &'static (Vec<SeqCell>, u32) {
        static LL: OnceLock<(Vec<SeqCell>, u32)> = OnceLock::new();
        static OF: OnceLock<(Vec<SeqCell>, u32)> = OnceLock::new();
        static ML: OnceLock<(Vec<SeqCell>, u32)> = OnceLock::new();
        let cell = match self {
            Code::LiteralLength => &LL,
            Code::Offset => &OF,
            Code::MatchLength => &ML,
        };
        cell.get_or_init(|| {
            let c = self.default_counts();
            let mut t = SeqTable::new(self);
            let mut cells = [Cell::default(); 64];
            // The fixed distributions are valid: the build cannot fail.
            if fse::build(&c, &mut cells, 0).is_ok() {
                t.fill(&cells, c.log);
            }
            (t.cells[..1 << c.log].to_vec(), c.log)
        })
    }
    /// Value baseline and extra bits of every code byte (codes past the
    /// code's largest read as (0, 0)), computed at compile time.
    fn values(self) -> &'static [(u32, u8); 256] {
        static LL: [(u32, u8); 256] = value_table(Code::LiteralLength);
        static OF: [(u32, u8); 256] = value_table(Code::Offset);
        static ML: [(u32, u8); 256] = value_table(Code::MatchLength);
        match self {
            Code::LiteralLength => &LL,
            Code::Offset => &OF,
            Code::MatchLength => &ML,
        }
    }

    /// Value baseline and extra bits of a code.
    #[cfg(test)]
    fn value(self, code: u8) -> (u32, u8) {
        let c = code as usize;
        match self {
            Code::LiteralLength => match c {
                0..=15 => (c as u32, 0),
                _ => LL_CODES.get(c - 16).copied().unwrap_or((0, 0)),
            },
            Code::MatchLength => match c {
                0..=31 => (c as u32 + 3, 0),
                _ => ML_CODES.get(c - 32).copied().unwrap_or((0, 0)),
            },
            Code::Offset => (1u32 << (c & 31), c as u8 & 31),
        }
    }
}

/// [`Code::values`]: RFC 8878 §3.1.1.3.2.1.1 (literal and match length
/// codes; offset code c: baseline 1 << c, c extra bits). Codes above a
/// code's largest are refused when tables are read.
const fn value_table(code: Code) -> [(u32, u8); 256] {
    let mut t = [(0u32, 0u8); 256];
    let mut c = 0usize;
    while c < 256 {
        t[c] = match code {
            Code::LiteralLength => {
                if c < 16 {
                    (c as u32, 0)
                } else if c < 36 {
                    LL_CODES[c - 16]
                } else {
                    (0, 0)
                }
            }
            Code::MatchLength => {
                if c < 32 {
                    (c as u32 + 3, 0)
                } else if c < 53 {
                    ML_CODES[c - 32]
                } else {
                    (0, 0)
                }
            }
            Code::Offset => (1u32 << (c & 31), (c & 31) as u8),
        };
        c += 1;
    }
    t
}

/// A sequence decoding cell: value baseline and extra bits of the symbol, plus
/// the FSE transition to the next state.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct SeqCell {
    pub(super) base: u32,
    pub(super) extra: u8,
    pub(super) nb_bits: u8,
    pub(super) next: u16,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    None,
    Predefined,
    Other,
}

/// One decoding table (512 cells: the largest accuracy log is 9).
pub(crate) struct SeqTable {
    pub(super) cells: Box<[SeqCell; 512]>,
    pub(super) log: u32,
    kind: Kind,
    code: Code,
}

impl SeqTable {
    pub(crate) fn new(code: Code) -> Self {
        SeqTable {
            cells: Box::new([SeqCell::default(); 512]),
            log: 0,
            kind: Kind::None,
            code,
        }
    }

    /// Forget the table (a new frame starts).
    pub(crate) fn reset(&mut self) {
        self.kind = Kind::None;
    }

    fn fill(&mut self, fse_cells: &[Cell], log: u32) {
        let values = self.code.values();
        for (dst, c) in self.cells.iter_mut().zip(fse_cells) {
            let (base, extra) = values[usize::from(c.symbol)];
            *dst = SeqCell {
                base,
                extra,
                nb_bits: c.nb_bits,
                next: c.base,
            };
        }
        self.log = log;
    }

    /// Set up the table for `mode` from the start of `src`; returns bytes used.
    fn read(&mut self, mode: u8, src: &[u8], offset: usize) -> Result<usize> {
        match mode {
            0 => {
                if self.kind != Kind::Predefined {
                    let (t, log) = self.code.predefined();
                    self.cells[..t.len()].copy_from_slice(t);
                    self.log = *log;
                    self.kind = Kind::Predefined;
                }
                Ok(0)
            }
            1 => {
                let &s = src
                    .first()
                    .ok_or_else(|| corrupt(offset, "missing RLE sequence symbol"))?;
                if usize::from(s) > self.code.max_symbol() {
                    return Err(corrupt(
                        offset,
                        format!("RLE {:?} code {s} too large", self.code),
                    ));
                }
                let mut cells = [Cell::default(); 1];
                fse::rle(s, &mut cells);
                self.fill(&cells, 0);
                self.kind = Kind::Other;
                Ok(1)
            }
            2 => {
                self.kind = Kind::None;
                let (c, used) =
                    fse::read_counts(src, self.code.max_log(), self.code.max_symbol(), offset)?;
                let values = self.code.values();
                let cells = &mut *self.cells;
                fse::build_with(&c, offset, |i, symbol, nb_bits, next| {
                    let (base, extra) = values[usize::from(symbol)];
                    cells[i & 511] = SeqCell {
                        base,
                        extra,
                        nb_bits,
                        next,
                    };
                })?;
                self.log = c.log;
                self.kind = Kind::Other;
                Ok(used)
            }
            _ => {
                if self.kind == Kind::None {
                    return Err(corrupt(
                        offset,
                        format!("repeat {:?} table with none before", self.code),
                    ));
                }
                Ok(0)
            }
        }
    }
}

/// Per-frame sequence decoding state: the three tables and the repeat offsets.
pub(crate) struct SeqState {
    pub(crate) ll: SeqTable,
    pub(crate) of: SeqTable,
    pub(crate) ml: SeqTable,
    pub(crate) rep: [u32; 3],
}

impl SeqState {
    pub(crate) fn new() -> Self {
        SeqState {
            ll: SeqTable::new(Code::LiteralLength),
            of: SeqTable::new(Code::Offset),
            ml: SeqTable::new(Code::MatchLength),
            rep: [1, 4, 8],
        }
    }

    pub(crate) fn reset(&mut self) {
        self.ll.reset();
        self.of.reset();
        self.ml.reset();
        self.rep = [1, 4, 8];
    }
}

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

/// Decode the sequences section `src` and execute it with `lits` (the first
/// `lit_len` bytes are the literals; the slice may carry slack after them).
pub(crate) fn decode_and_execute(
    src: &[u8],
    st: &mut SeqState,
    lits: &[u8],
    lit_len: usize,
    t: &mut Target,
    offset: usize,
) -> Result<()> {
    let b0 = usize::from(
        *src.first()
            .ok_or_else(|| corrupt(offset, "missing sequences section"))?,
    );
    let byte = |i: usize| -> Result<usize> {
        src.get(i)
            .map(|&b| usize::from(b))
            .ok_or_else(|| corrupt(offset, "truncated sequences section header"))
    };
    let (nb_seq, mut at) = match b0 {
        0 => {
            if src.len() != 1 {
                return Err(corrupt(offset, "bytes after an empty sequences section"));
            }
            return copy_literals(t, lits, 0, lit_len, offset);
        }
        1..=127 => (b0, 1usize),
        128..=254 => (((b0 - 128) << 8) + byte(1)?, 2),
        _ => (byte(1)? + (byte(2)? << 8) + 0x7F00, 3),
    };
    let modes = byte(at)? as u8;
    at += 1;
    if modes & 3 != 0 {
        return Err(corrupt(
            offset + at - 1,
            "reserved bits set in sequence compression modes",
        ));
    }
    let rest = |at: usize| src.get(at..).unwrap_or(&[]);
    at += st.ll.read(modes >> 6, rest(at), offset + at)?;
    at += st.of.read((modes >> 4) & 3, rest(at), offset + at)?;
    at += st.ml.read((modes >> 2) & 3, rest(at), offset + at)?;
    let stream = rest(at);
    execute(stream, st, nb_seq, lits, lit_len, t, offset + at)
}

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
/// its last literal (in the literals): they round every run up to 16 bytes.
pub(super) const WILD: usize = 32;

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

/// 16 bytes from `src` to `dst` (regions may not overlap within the 16 bytes).
///
/// # Safety
/// `src..src + 16` readable, `dst..dst + 16` writable.
#[inline(always)]
unsafe fn copy16(dst: *mut u8, src: *const u8) {
    // SAFETY: the caller guarantees both 16-byte ranges.
    unsafe {
        dst.cast::<[u8; 16]>()
            .write_unaligned(src.cast::<[u8; 16]>().read_unaligned())
    }
}

/// 32 bytes from `src` to `dst` as two 16-byte halves (regions may not
/// overlap within the 32 bytes). One load and one store where the caller
/// is compiled with AVX2.
///
/// # Safety
/// `src..src + 32` readable, `dst..dst + 32` writable.
#[inline(always)]
unsafe fn copy32(dst: *mut u8, src: *const u8) {
    // SAFETY: the caller guarantees both 32-byte ranges.
    unsafe {
        dst.cast::<[u8; 32]>()
            .write_unaligned(src.cast::<[u8; 32]>().read_unaligned())
    }
}

/// 8 bytes from `src` to `dst` (regions may not overlap within the 8 bytes).
///
/// # Safety
/// `src..src + 8` readable, `dst..dst + 8` writable.
#[inline(always)]
unsafe fn copy8(dst: *mut u8, src: *const u8) {
    // SAFETY: the caller guarantees both 8-byte ranges.
    unsafe {
        dst.cast::<[u8; 8]>()
            .write_unaligned(src.cast::<[u8; 8]>().read_unaligned())
    }
}

/// Execute one sequence with wide copies: `ll` literals from `lits[lit_pos..]`
/// to `buf[pos..]`, then `ml` bytes from `dist` back. Bytes of `buf` up to 32
/// past the sequence's end may be overwritten with garbage (later writes or
/// the caller's truncation replace them).
///
/// # Safety
/// `lit_pos + ll + 32 <= lits.len()`, `pos + ll + ml + 32 <= buf.len()`,
/// `1 <= dist <= pos + ll`.
#[cfg(test)]
#[inline(always)]
pub(super) unsafe fn wild_sequence(
    buf: &mut [u8],
    pos: usize,
    lits: &[u8],
    lit_pos: usize,
    ll: usize,
    dist: usize,
    ml: usize,
) {
    // SAFETY: the contract puts both positions inside their slices, and
    // is wild_copy's in indices.
    unsafe {
        wild_copy::<false>(
            buf.as_mut_ptr().add(pos),
            lits.as_ptr().add(lit_pos),
            ll,
            dist,
            ml,
        )
    }
}

/// [`wild_sequence`] on pointers: `ll` literals from `lp` to `op`, then
/// `ml` bytes from `dist` back. `AVX2`: the caller is compiled with AVX2
/// (the 32-byte pieces are one load and one store, and matches of offset
/// under 16 take [`short_match_avx2`]).
///
/// # Safety
/// `lp .. lp + ll + 32` readable; `op .. op + ll + ml + 32` writable;
/// `op + ll - dist .. op + ll` written (in the same allocation), `dist >= 1`;
/// with `AVX2`, the CPU has AVX2.
#[inline(always)]
unsafe fn wild_copy<const AVX2: bool>(
    d: *mut u8,
    lp: *const u8,
    ll: usize,
    dist: usize,
    ml: usize,
) {
    // SAFETY (whole body): literal copies read lp[32k..32k + 32] for 32k <
    // max(ll, 1), all below lp + ll + 32; they write the same span at `d`.
    // Match copies write pieces of at most 32 bytes starting below
    // d + ll + max(ml, 32) - 16 (32-byte pieces: below d + ll + ml), so
    // they end below d + ll + ml + 32; they read at most `dist` back
    // (written bytes, by the contract), each piece after the bytes it
    // reads were written (distance >= the piece size) or byte by byte.
    unsafe {
        // Two pieces per step and one after: a loop of one piece per step
        // whose size is its stride has a trip count LLVM turns into a
        // `memcpy` call (register spills and a call for every literal run
        // over 32 bytes).
        copy32(d, lp);
        let mut k = 32;
        while k + 32 < ll {
            copy32(d.add(k), lp.add(k));
            copy32(d.add(k + 32), lp.add(k + 32));
            k += 64;
        }
        if k < ll {
            copy32(d.add(k), lp.add(k));
        }
        let m = d.add(ll);
        let s = m.sub(dist);
        if dist >= 32 {
            // Each piece reads at least 32 bytes back: bytes written before it.
            copy32(m, s);
            let mut k = 32;
            while k < ml {
                copy32(m.add(k), s.add(k));
                k += 32;
            }
        } else if dist >= 16 {
            copy16(m, s);
            copy16(m.add(16), s.add(16));
            let mut k = 32;
            while k < ml {
                copy16(m.add(k), s.add(k));
                k += 16;
            }
        } else {
            #[cfg(target_arch = "x86_64")]
            if AVX2 || super::use_avx2() {
                // The contract covers its reads and writes (see
                // short_match_avx2); AVX2 is present.
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
                copy8(m.add(k), m.add(k).sub(step));
                k += 8;
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn execute(
    stream: &[u8],
    st: &mut SeqState,
    nb_seq: usize,
    lits: &[u8],
    lit_len: usize,
    t: &mut Target,
    offset: usize,
) -> Result<()> {
    #[cfg(target_arch = "x86_64")]
    if super::use_bmi2() {
        // SAFETY: the CPU supports BMI1, BMI2 and LZCNT (checked by use_bmi2).
        return unsafe { execute_bmi2(stream, st, nb_seq, lits, lit_len, t, offset) };
    }
    execute_body(stream, st, nb_seq, lits, lit_len, t, offset)
}

/// [`execute`] compiled with BMI1/BMI2/LZCNT (the bit reads are variable
/// shifts: `shlx`/`shrx` need no `cl` register).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi1,bmi2,lzcnt")]
#[allow(clippy::too_many_arguments)]
fn execute_bmi2(
    stream: &[u8],
    st: &mut SeqState,
    nb_seq: usize,
    lits: &[u8],
    lit_len: usize,
    t: &mut Target,
    offset: usize,
) -> Result<()> {
    execute_body(stream, st, nb_seq, lits, lit_len, t, offset)
}

/// False when a test asks for the [`BackBits`] sequence decode only.
#[inline(always)]
fn fast_decode_enabled() -> bool {
    #[cfg(test)]
    if NO_FAST_DECODE.with(|f| f.get()) {
        return false;
    }
    true
}

/// Bytes a window must have below it when a sequence starts in
/// [`decode_fast`]: a refill steps back `trailing_zeros / 8 <= 8` bytes
/// whatever the bits hold, and a sequence refills at most twice.
const SEQ_STEP_MAX: usize = 16;

/// Decode sequences into `out` (all of them read their next states) while
/// the stream window is far from the stream's start; returns how many were
/// decoded and leaves `r` after them. Same bits as the [`BackBits`] loop:
/// the bits are kept left-aligned in one register with a marker bit below
/// them (its trailing-zero count is the bits consumed from the window; a
/// sequence consumes at most 7 + 56 after a refill, so the marker survives),
/// and the window is a raw pointer: no clamp and no short-stream case per
/// refill, which the generic reader needs near the start.
#[inline(always)]
fn decode_fast(
    r: &mut BackBits,
    stream: &[u8],
    tables: &[&[SeqCell; 512]; 3],
    states: &mut [usize; 3],
    extra_budget: u32,
    max: usize,
    mut sink: impl FnMut(Seq) -> bool,
) -> usize {
    r.refill_always();
    let (ptr, used) = r.position();
    // Largest window start (none: streams under 8 bytes never go fast).
    let Some(lim) = stream.len().checked_sub(8) else {
        return 0;
    };
    if ptr > lim || ptr < SEQ_STEP_MAX || used > 7 {
        return 0;
    }
    let base = stream.as_ptr();
    // Lowest window start at which a sequence may begin (an address, never
    // dereferenced).
    let lo = base as usize + SEQ_STEP_MAX;
    // SAFETY: ptr <= lim = stream.len() - 8 (checked above).
    let mut p = unsafe { base.add(ptr) };
    // SAFETY: p..p + 8 lies in `stream` (ptr <= lim).
    let mut bits = (u64::from_le(unsafe { p.cast::<u64>().read_unaligned() }) | 1) << used;
    let [ll_t, of_t, ml_t] = *tables;
    let [mut ll_s, mut of_s, mut ml_s] = *states;
    macro_rules! refill {
        () => {
            let c = bits.trailing_zeros();
            // SAFETY: at the sequence's start `p` was at least SEQ_STEP_MAX
            // bytes above the stream's start (checked), and a sequence steps
            // back at most 2 * 8 bytes (c <= 64); `p` only moves down from at
            // most `lim`, so `p..p + 8` stays inside `stream`.
            p = unsafe { p.sub((c >> 3) as usize) };
            // SAFETY: as above.
            let v = unsafe { p.cast::<u64>().read_unaligned() };
            bits = (u64::from_le(v) | 1) << (c & 7);
        };
    }
    // Next `n` (<= 56) bits: `>> 1 >> (63 - n)` is 0 for n = 0.
    macro_rules! read {
        ($n:expr) => {{
            let n: u32 = $n;
            let v = (bits >> 1) >> (63 - n);
            bits <<= n;
            v
        }};
    }
    let mut n = 0usize;
    while n < max {
        if (p as usize) < lo {
            break;
        }
        refill!();
        let of = of_t[of_s & 511];
        let ll = ll_t[ll_s & 511];
        let ml = ml_t[ml_s & 511];
        let (of_e, ml_e, ll_e) = (
            u32::from(of.extra),
            u32::from(ml.extra),
            u32::from(ll.extra),
        );
        let (off_val, ml_v, ll_v);
        if of_e + ml_e + ll_e <= extra_budget {
            // The three extras in one read (offset's on top, then match
            // length's, then literal length's: the stream order).
            let v = read!(of_e + ml_e + ll_e);
            off_val = of.base + (v >> (ml_e + ll_e)) as u32;
            ml_v = ml.base + low(v >> ll_e, ml_e);
            ll_v = ll.base + low(v, ll_e);
        } else {
            off_val = of.base + read!(of_e) as u32;
            ml_v = ml.base + read!(ml_e) as u32;
            refill!();
            ll_v = ll.base + read!(ll_e) as u32;
        }
        // The three state updates in one read (literal length, match
        // length, offset: the stream order).
        let (ll_n, ml_n, of_n) = (
            u32::from(ll.nb_bits),
            u32::from(ml.nb_bits),
            u32::from(of.nb_bits),
        );
        let w = read!(ll_n + ml_n + of_n);
        ll_s = usize::from(ll.next) + (w >> (ml_n + of_n)) as usize;
        ml_s = usize::from(ml.next) + low(w >> of_n, ml_n) as usize;
        of_s = usize::from(of.next) + low(w, of_n) as usize;
        n += 1;
        if !sink(Seq {
            ll: ll_v,
            ml: ml_v,
            of: off_val,
        }) {
            break;
        }
    }
    *states = [ll_s, of_s, ml_s];
    let at = p as usize - base as usize;
    r.set_position(at, bits.trailing_zeros());
    n
}

/// [`decode_fast`] executing each sequence as soon as it is decoded (as
/// [`execute_wide`] does), compiled with AVX2: the copies then overlap the
/// next sequence's bit reads, a chain of dependent loads and shifts that a
/// batch decoded ahead leaves alone on the core. Stops where
/// [`decode_fast`] does, after `max` sequences, or at a sequence the wide
/// path cannot take, which it returns decoded but not executed (its offset
/// not yet resolved). Returns the sequences executed.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt")]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn decode_execute_avx2(
    r: &mut BackBits,
    stream: &[u8],
    tables: &[&[SeqCell; 512]; 3],
    states: &mut [usize; 3],
    extra_budget: u32,
    max: usize,
    ex: &mut Exec,
    buf: &mut [u8],
    lits: &[u8],
) -> (usize, Option<Seq>) {
    let mut w = Wide::new(ex, buf, lits);
    let mut pending = None;
    let n = decode_fast(r, stream, tables, states, extra_budget, max, |s| {
        // SAFETY: AVX2 is present (this function's target features).
        let taken = unsafe { w.execute::<true>(s) };
        if !taken {
            pending = Some(s);
        }
        taken
    });
    w.finish(ex, buf, lits);
    (n - usize::from(pending.is_some()), pending)
}

/// The low `n` (< 32) bits of `v`.
#[inline(always)]
fn low(v: u64, n: u32) -> u32 {
    (v as u32) & ((1u32 << n) - 1)
}

#[cfg(test)]
thread_local! {
    /// Tests set this to skip [`decode_fast`].
    pub(crate) static NO_FAST_DECODE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// One decoded sequence waiting for execution: literal length, match
/// length and the offset value as coded (1..=3 name repeat offsets, RFC 8878
/// §3.1.1.5; resolved when the sequence executes).
#[derive(Clone, Copy, Default)]
struct Seq {
    ll: u32,
    ml: u32,
    of: u32,
}

/// Sequences decoded ahead of their execution. Decoding (bit reader, three
/// states, three tables) and executing (output and literal positions,
/// repeat offsets, bounds) each fit the registers; interleaved they spilled
/// about 20 values per sequence.
const BATCH: usize = 32;

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn execute_body(
    stream: &[u8],
    st: &mut SeqState,
    nb_seq: usize,
    lits: &[u8],
    lit_len: usize,
    t: &mut Target,
    offset: usize,
) -> Result<()> {
    #[cfg(test)]
    if REFERENCE_LOOP.with(|f| f.get()) {
        return super::seq_reference::execute_interleaved(
            stream, st, nb_seq, lits, lit_len, t, offset,
        );
    }
    let mut r = BackBits::new(stream, offset)?;
    let (ll_t, of_t, ml_t) = (&*st.ll.cells, &*st.of.cells, &*st.ml.cells);
    let tables = [ll_t, of_t, ml_t];
    let mut states = [0usize; 3];
    states[0] = r.read(st.ll.log) as usize;
    states[1] = r.read(st.of.log) as usize;
    states[2] = r.read(st.ml.log) as usize;
    let buf = &mut *t.buf;
    let mut ex = Exec {
        pos: t.pos,
        lit_pos: 0,
        rep: st.rep,
        limit: t.limit,
        lit_len,
        frame_start: t.frame_start,
        // `x < len + 1 - WILD` is `x + WILD <= len` (0 when len < WILD
        // admits nothing).
        out_fast: (t.limit + 1).min((buf.len() + 1).saturating_sub(WILD)),
        lit_fast: (lit_len + 1).min((lits.len() + 1).saturating_sub(WILD)),
    };
    // Extra bits a sequence may read after one refill (56 bits) and still leave
    // room for the three state updates (at most each table's accuracy log).
    let extra_budget = 56u32.saturating_sub(st.ll.log + st.of.log + st.ml.log);
    let mut batch = [Seq::default(); BATCH];
    #[cfg(target_arch = "x86_64")]
    let avx2 = super::use_avx2() && super::use_bmi2();
    // Decode one sequence into `$s`; `$update` reads the next states (all
    // but the last sequence of the section).
    macro_rules! decode {
        ($s:expr, $update:expr) => {{
            r.refill_always();
            let of = of_t[states[1] & 511];
            let ll = ll_t[states[0] & 511];
            let ml = ml_t[states[2] & 511];
            // One refill leaves >= 56 bits: the offset (<= 31) and match length
            // (<= 16) extras always fit; a second refill is needed only when all
            // three extras and the state updates together could exceed 56 bits.
            let off_val = of.base + r.read(u32::from(of.extra)) as u32;
            let ml_v = ml.base + r.read(u32::from(ml.extra)) as u32;
            if u32::from(of.extra) + u32::from(ml.extra) + u32::from(ll.extra) > extra_budget {
                r.refill_always();
            }
            let ll_v = ll.base + r.read(u32::from(ll.extra)) as u32;
            #[allow(unused_assignments)]
            if $update {
                states[0] = usize::from(ll.next) + r.read(u32::from(ll.nb_bits)) as usize;
                states[2] = usize::from(ml.next) + r.read(u32::from(ml.nb_bits)) as usize;
                states[1] = usize::from(of.next) + r.read(u32::from(of.nb_bits)) as usize;
            }
            $s = Seq {
                ll: ll_v,
                ml: ml_v,
                of: off_val,
            };
        }};
    }
    let mut done = 0usize;
    #[cfg(target_arch = "x86_64")]
    let mut fused = avx2 && fast_decode_enabled();
    while done < nb_seq {
        #[cfg(target_arch = "x86_64")]
        if fused {
            // SAFETY: the CPU has AVX2, BMI1, BMI2 and LZCNT (checked above).
            let (n, pending) = unsafe {
                decode_execute_avx2(
                    &mut r,
                    stream,
                    &tables,
                    &mut states,
                    extra_budget,
                    nb_seq - 1 - done,
                    &mut ex,
                    buf,
                    lits,
                )
            };
            done += n;
            if let Some(s) = pending {
                // SAFETY: as above.
                unsafe { execute_batch_avx2(&[s], done, &mut ex, buf, lits, offset)? };
                done += 1;
                continue;
            }
            fused = false;
        }
        let k = (nb_seq - done).min(BATCH);
        let last = done + k == nb_seq;
        // The section's last sequence reads no next states (§3.1.1.3.2.2).
        let updating = if last { k - 1 } else { k };
        let mut j = 0usize;
        if fast_decode_enabled() {
            j = decode_fast(
                &mut r,
                stream,
                &tables,
                &mut states,
                extra_budget,
                updating,
                |s| {
                    // `updating <= BATCH`: decode_fast stops after that many.
                    if let Some(b) = batch.get_mut(j) {
                        *b = s;
                    }
                    j += 1;
                    true
                },
            );
        }
        for s in &mut batch[j..updating] {
            decode!(*s, true);
        }
        if last {
            decode!(batch[k - 1], false);
        }
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: the CPU has AVX2, BMI1 and BMI2 (checked above).
            unsafe { execute_batch_avx2(&batch[..k], done, &mut ex, buf, lits, offset)? };
            done += k;
            continue;
        }
        execute_batch(&batch[..k], done, &mut ex, buf, lits, offset)?;
        done += k;
    }
    r.refill();
    if !r.finished() {
        return Err(corrupt(offset, "sequence bitstream not consumed exactly"));
    }
    st.rep = ex.rep;
    t.pos = ex.pos;
    copy_literals(t, lits, ex.lit_pos, lit_len, offset)
}

/// Execution state of a sequences section (RFC 8878 §3.1.1.4).
struct Exec {
    /// Output write position.
    pos: usize,
    /// Literals used so far.
    lit_pos: usize,
    /// Repeat offsets (§3.1.1.5).
    rep: [u32; 3],
    /// The block may not write at or past this output position.
    limit: usize,
    /// Decoded literals.
    lit_len: usize,
    /// Matches may not reach before this output position.
    frame_start: usize,
    /// A sequence may take the wide-copy path when its end is below this
    /// (inside `limit`, WILD bytes of room in the output) ...
    out_fast: usize,
    /// ... and its last literal below this (inside `lit_len`, WILD bytes of
    /// room in the literals).
    lit_fast: usize,
}

/// Resolve a sequence's offset value (RFC 8878 §3.1.1.5) against the
/// repeat offsets `rep`, updating them; returns the match distance (0 when
/// "repeat offset 1 minus one" meets a repeat offset of 1: invalid, and
/// refused by the execution's bounds).
///
/// Without branches: which repeat offset a value names depends on the
/// data, and a mispredicted branch costs more than the selects.
#[inline(always)]
fn resolve_offset(of: u32, ll: u32, rep: &mut [u32; 3]) -> usize {
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
/// errors). A function of its own so its loop gets the registers: inlined
/// next to the decode loop it spilled positions and bounds.
#[inline(never)]
fn execute_batch(
    seqs: &[Seq],
    first: usize,
    ex: &mut Exec,
    buf: &mut [u8],
    lits: &[u8],
    offset: usize,
) -> Result<()> {
    execute_batch_body::<false>(seqs, first, ex, buf, lits, offset)
}

/// [`execute_batch`] compiled with AVX2: 32-byte copies, and the short-offset
/// match copy inlined.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2")]
#[inline(never)]
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
        // SAFETY: the caller's word on AVX2 (execute_batch_avx2's target
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
struct Wide {
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
    fn new(ex: &Exec, buf: &mut [u8], lits: &[u8]) -> Self {
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
    unsafe fn execute<const AVX2: bool>(&mut self, s: Seq) -> bool {
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
            wild_copy::<AVX2>(self.op, self.lp, ll, dist, ml);
            self.op = self.op.add(ll + ml);
            self.lp = self.lp.add(ll);
        }
        true
    }

    /// Write the positions and repeat offsets back (`buf` and `lits` as
    /// given to [`Wide::new`]).
    #[inline(always)]
    fn finish(self, ex: &mut Exec, buf: &[u8], lits: &[u8]) {
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
        if !unsafe { w.execute::<AVX2>(s) } {
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
fn execute_checked(
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
thread_local! {
    /// Tests set this to run the interleaved decode-and-execute loop of
    /// [`super::seq_reference`] instead of the batched one.
    pub(crate) static REFERENCE_LOOP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compile-time value tables equal the per-code definition.
    #[test]
    fn value_tables_match_the_definition() {
        for code in [Code::LiteralLength, Code::Offset, Code::MatchLength] {
            let t = code.values();
            for (c, &v) in t.iter().enumerate().take(code.max_symbol() + 1) {
                assert_eq!(v, code.value(c as u8), "{code:?} {c}");
            }
        }
        assert_eq!(Code::LiteralLength.values()[36], (0, 0));
        assert_eq!(Code::MatchLength.values()[53], (0, 0));
    }

    #[test]
    fn code_values() {
        assert_eq!(Code::LiteralLength.value(15), (15, 0));
        assert_eq!(Code::LiteralLength.value(16), (16, 1));
        assert_eq!(Code::LiteralLength.value(35), (65536, 16));
        assert_eq!(Code::MatchLength.value(0), (3, 0));
        assert_eq!(Code::MatchLength.value(52), (65539, 16));
        assert_eq!(Code::Offset.value(5), (32, 5));
    }

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
            l.resize(lit_pos + ll + 32, 0xAB);
            let mut buf = head.clone();
            buf.resize(pos + ll + ml + 32, 0xEE);
            let mut want = head.clone();
            want.extend_from_slice(&l[lit_pos..lit_pos + ll]);
            for _ in 0..ml {
                let b = want[want.len() - dist];
                want.push(b);
            }
            // Both short-offset paths: AVX2 pattern stores and 8-byte steps.
            for portable in [false, true] {
                let mut buf = buf.clone();
                crate::filters::zstd_decode::FORCE_PORTABLE.with(|f| f.set(portable));
                // SAFETY: the buffers are sized to the contract of wild_sequence.
                unsafe { wild_sequence(&mut buf, pos, &l, lit_pos, ll, dist, ml) };
                crate::filters::zstd_decode::FORCE_PORTABLE.with(|f| f.set(false));
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
                buf.resize(50 + ml + 32, 0);
                let lits = [0u8; 32];
                let mut want = head.clone();
                for _ in 0..ml {
                    let b = want[want.len() - dist];
                    want.push(b);
                }
                for portable in [false, true] {
                    let mut buf = buf.clone();
                    crate::filters::zstd_decode::FORCE_PORTABLE.with(|f| f.set(portable));
                    // SAFETY: buf holds pos + ml + 32 bytes, lits 32, dist <= 50.
                    unsafe { wild_sequence(&mut buf, 50, &lits, 0, 0, dist, ml) };
                    crate::filters::zstd_decode::FORCE_PORTABLE.with(|f| f.set(false));
                    assert_eq!(
                        &buf[..want.len()],
                        &want[..],
                        "dist {dist} ml {ml} portable {portable}"
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

    #[test]
    fn predefined_tables_sum_to_their_size() {
        let s = |d: &[i16]| d.iter().map(|&c| i32::from(c.abs())).sum::<i32>();
        assert_eq!(s(&LL_DEFAULT), 64);
        assert_eq!(s(&ML_DEFAULT), 64);
        assert_eq!(s(&OF_DEFAULT), 32);
    }
}
