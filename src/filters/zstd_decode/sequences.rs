//! Sequences section of a compressed block, RFC 8878 §3.1.1.3.2: the section
//! header and symbol compression modes (§3.1.1.3.2.1), the predefined
//! distributions (§3.1.1.3.2.2), the interleaved FSE bitstream (§3.1.1.3.2.2
//! "Sequences_Section"); sequences are executed (§3.1.1.4, [`super::execute`])
//! as they are decoded, or in batches of [`BATCH`], straight into the output.

use super::bits::BackBits;
use super::execute::{copy_literals, execute_batch, Exec, Seq, Target, WILD};
#[cfg(target_arch = "x86_64")]
use super::execute::{execute_checked, resolve_offset, Wide};
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
    /// What `cells` hold; kept across frames, so a frame after frames in
    /// predefined mode does not copy the predefined table again.
    kind: Kind,
    /// Whether this frame has set the table up (repeat mode needs it).
    in_frame: bool,
    code: Code,
}

impl SeqTable {
    pub(crate) fn new(code: Code) -> Self {
        SeqTable {
            cells: Box::new([SeqCell::default(); 512]),
            log: 0,
            kind: Kind::None,
            in_frame: false,
            code,
        }
    }

    /// Forget the table for repeat mode (a new frame starts).
    pub(crate) fn reset(&mut self) {
        self.in_frame = false;
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
                self.in_frame = true;
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
                self.in_frame = true;
                Ok(1)
            }
            2 => {
                self.kind = Kind::None;
                self.in_frame = false;
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
                self.in_frame = true;
                Ok(used)
            }
            _ => {
                if !self.in_frame {
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

/// [`decode_fast`] executing each sequence as soon as it is decoded (with
/// the batch executor's wide copies, [`Wide`]), compiled with AVX2: the copies then overlap the
/// next sequence's bit reads, a chain of dependent loads and shifts that a
/// batch decoded ahead leaves alone on the core. Stops where
/// [`decode_fast`] does, after `max` sequences, or at a sequence the wide
/// path cannot take, which it returns decoded but not executed (its offset
/// not yet resolved). Returns the sequences executed.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt")]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn decode_execute_avx2<const LONG: bool>(
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
        let taken = unsafe { w.execute::<true, LONG>(s) };
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

/// Sequences decoded ahead of their execution where the fused loop
/// ([`decode_execute_avx2`]) does not run: without AVX2, near the stream's
/// start, and for the section's last sequence. Decoding (bit reader, three
/// states, three tables) and executing (output and literal positions,
/// repeat offsets, bounds) each fit the registers; interleaved in portable
/// code they spilled about 20 values per sequence.
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
    #[cfg(target_arch = "x86_64")]
    let long = super::execute::long_runs(t.limit.saturating_sub(t.pos), nb_seq);
    while done < nb_seq {
        #[cfg(target_arch = "x86_64")]
        if fused {
            macro_rules! fused {
                ($long:literal) => {
                    decode_execute_avx2::<$long>(
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
            }
            // SAFETY: the CPU has AVX2, BMI1, BMI2 and LZCNT (checked above).
            let (n, pending) = unsafe {
                if long {
                    fused!(true)
                } else {
                    fused!(false)
                }
            };
            done += n;
            if let Some(s) = pending {
                // The wide path refused it: every bound checked.
                let dist = resolve_offset(s.of, s.ll, &mut ex.rep);
                execute_checked(&s, dist, done, &mut ex, buf, lits, offset)?;
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

    #[test]
    fn predefined_tables_sum_to_their_size() {
        let s = |d: &[i16]| d.iter().map(|&c| i32::from(c.abs())).sum::<i32>();
        assert_eq!(s(&LL_DEFAULT), 64);
        assert_eq!(s(&ML_DEFAULT), 64);
        assert_eq!(s(&OF_DEFAULT), 32);
    }
}
