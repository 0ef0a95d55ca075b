//! Huffman coding of literals, RFC 8878 §4.2: the tree description (§4.2.1,
//! weights stored directly or FSE-compressed) and the decoding of 1 or 4
//! backward bitstreams (§4.2.2).

use super::bits::BackBits;
use super::fse::{self, Cell};
use super::huffman_table::{load, windows, MAX_BITS, TABLE_SIZE};
use super::huffman_x2::{self, X2Table};
use super::{corrupt, Result};

/// False when a test asks for the plain 4-stream loop only (the fast loop
/// must give the same output and errors on any input).
#[inline(always)]
fn fast_loop_enabled() -> bool {
    #[cfg(test)]
    if NO_FAST_LOOP.with(|f| f.get()) {
        return false;
    }
    true
}

#[cfg(test)]
thread_local! {
    /// Tests set this to skip [`HufTable::decode_4_fast`].
    pub(crate) static NO_FAST_LOOP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Words of the error for a 4-stream Huffman section whose streams do not
/// end exactly where their segments do, in the shape libzstd's fast decoder
/// takes: RFC 8878 (§4.2.2) and libzstd's own generic path call it corrupt,
/// and so do we; libzstd's fast path (1.5 and later, `HUF_decompress4X1_usingDTable_internal_fast`)
/// decodes it without an error into other bytes. A reader that reports what
/// libzstd-based tools see (medh5 `verify`: the data does not match its
/// digest) recognises the error by these words ([`super::libzstd_decodes`]).
pub(crate) const LIBZSTD_DECODES: &str = "a corruption libzstd's fast decoder lets through";

const TABLE_MASK: usize = TABLE_SIZE - 1;

/// Decoding table indexed by the next 11 bits of the stream: `symbol << 8 | length`.
pub(crate) struct HufTable {
    pub(crate) cells: Box<[u16; TABLE_SIZE]>,
    pub(crate) valid: bool,
    /// The same code two symbols per lookup, built when a section asks for it.
    pub(crate) x2: X2Table,
}

impl HufTable {
    pub(crate) fn new() -> Self {
        HufTable {
            cells: Box::new([0u16; TABLE_SIZE]),
            valid: false,
            x2: X2Table::new(),
        }
    }

    /// Read a tree description from the start of `src`, replacing the table;
    /// returns the bytes used.
    pub(crate) fn read(&mut self, src: &[u8], offset: usize) -> Result<usize> {
        self.valid = false;
        self.x2.valid = false;
        let mut weights = [0u8; 256];
        let (n, used) = read_weights(src, &mut weights, offset)?;
        self.build(&weights[..n], offset)?;
        self.valid = true;
        Ok(used)
    }

    /// Build from the stored weights (the last symbol's weight is implied).
    ///
    /// As libzstd's `HUF_readDTableX1`: one pass checks and counts the
    /// weights, a second sorts the symbols by weight (stable, so ascending
    /// within a weight), then each weight's symbols fill their runs with
    /// a store width fixed per weight (no per-symbol branch on the run
    /// length). The layout is the canonical one of RFC 8878 §4.2.1.3:
    /// weight 1 (the longest codes) at the bottom, symbols ascending.
    fn build(&mut self, stored: &[u8], offset: usize) -> Result<()> {
        if stored.is_empty() || stored.len() > 255 {
            return Err(corrupt(offset, "Huffman tree has no weights"));
        }
        // rank_count[w]: symbols of weight w (0..=MAX_BITS), counted in
        // four interleaved arrays: runs of equal weights then make four
        // independent increment chains instead of one chain through memory.
        let mut counts4 = [[0u32; MAX_BITS as usize + 1]; 4];
        let too_large = |w: u8| corrupt(offset, format!("Huffman weight {w} too large"));
        let mut quads = stored.chunks_exact(4);
        for q in &mut quads {
            for (k, &w) in q.iter().enumerate() {
                match counts4[k].get_mut(usize::from(w)) {
                    Some(c) => *c += 1,
                    None => return Err(too_large(w)),
                }
            }
        }
        for &w in quads.remainder() {
            match counts4[0].get_mut(usize::from(w)) {
                Some(c) => *c += 1,
                None => return Err(too_large(w)),
            }
        }
        let mut rank_count = [0u32; MAX_BITS as usize + 1];
        for (w, c) in rank_count.iter_mut().enumerate() {
            *c = counts4[0][w] + counts4[1][w] + counts4[2][w] + counts4[3][w];
        }
        let mut total: u32 = 0;
        for (w, &c) in rank_count.iter().enumerate().skip(1) {
            total += c << (w - 1);
        }
        if total == 0 {
            return Err(corrupt(offset, "Huffman weights are all zero"));
        }
        let max_bits = 32 - total.leading_zeros(); // highbit(total) + 1
        if max_bits > MAX_BITS {
            return Err(corrupt(offset, "Huffman code longer than 11 bits"));
        }
        let rest = (1u32 << max_bits) - total;
        if !rest.is_power_of_two() {
            return Err(corrupt(offset, "Huffman weights do not complete a tree"));
        }
        let last_w = (rest.trailing_zeros() + 1) as usize;
        let last_sym = stored.len(); // <= 255
                                     // last_w <= max_bits <= MAX_BITS: rest < 2^max_bits.
        if let Some(c) = rank_count.get_mut(last_w) {
            *c += 1;
        }
        // Symbols sorted by weight: those of weight w at
        // order[first[w]..first[w] + rank_count[w]].
        let mut first = [0usize; MAX_BITS as usize + 2];
        for w in 1..=MAX_BITS as usize {
            first[w + 1] = first[w] + rank_count[w] as usize;
        }
        let mut next = first;
        let mut order = [0u8; 256];
        let mut place = |s: usize, w: usize| {
            if w > 0 {
                let at = next[w];
                next[w] = at + 1;
                if let Some(o) = order.get_mut(at) {
                    *o = s as u8;
                }
            }
        };
        for (s, &w) in stored.iter().enumerate() {
            place(s, usize::from(w));
        }
        place(last_sym, last_w);
        // Fill the runs, weight by weight from the bottom of the table.
        let scale = MAX_BITS - max_bits;
        let cells = &mut *self.cells;
        let mut at = 0usize;
        for w in 1..=max_bits as usize {
            let syms = order.get(first[w]..first[w + 1]).unwrap_or(&[]);
            let len = (1usize << (w - 1)) << scale;
            let code_len = (max_bits + 1 - w as u32) as u16;
            // Runs are powers of two: one store per symbol for the short
            // ones (most symbols of a flat literal alphabet), 8-cell stores
            // otherwise. The runs add up to the table (checked below), so
            // the `get`s never fail on a complete tree.
            match len {
                1 => {
                    if let Some(run) = cells.get_mut(at..at + syms.len()) {
                        for (c, &s) in run.iter_mut().zip(syms) {
                            *c = (u16::from(s) << 8) | code_len;
                        }
                    }
                }
                // A width fixed at compile time: a copy of a run-time length
                // is a `memcpy` call per symbol.
                2 => {
                    at = fill_runs::<2>(cells, at, syms, code_len);
                    continue;
                }
                4 => {
                    at = fill_runs::<4>(cells, at, syms, code_len);
                    continue;
                }
                _ => {
                    for &s in syms {
                        let v = (u16::from(s) << 8) | code_len;
                        if let Some(run) = cells.get_mut(at..at + len) {
                            fill8(run, v);
                        }
                        at += len;
                    }
                    continue;
                }
            }
            at += syms.len();
        }
        if at != TABLE_SIZE {
            return Err(corrupt(offset, "Huffman weights do not fill the table"));
        }
        Ok(())
    }

    #[inline(always)]
    fn decode_one(&self, r: &mut BackBits) -> u8 {
        let v = self.cells[r.peek(MAX_BITS) as usize & TABLE_MASK];
        r.consume(u32::from(v & 0xFF));
        (v >> 8) as u8
    }

    /// Decode one stream filling `out` exactly.
    pub(crate) fn decode_stream(&self, src: &[u8], out: &mut [u8], offset: usize) -> Result<()> {
        let mut r = BackBits::new(src, offset)?;
        let mut chunks = out.chunks_exact_mut(4);
        for c in &mut chunks {
            r.refill();
            c[0] = self.decode_one(&mut r);
            c[1] = self.decode_one(&mut r);
            c[2] = self.decode_one(&mut r);
            c[3] = self.decode_one(&mut r);
        }
        for b in chunks.into_remainder() {
            r.refill();
            *b = self.decode_one(&mut r);
        }
        r.refill();
        if !r.finished() {
            return Err(corrupt(offset, "Huffman stream not consumed exactly"));
        }
        Ok(())
    }

    /// Decode the 4-stream layout (6-byte jump table then 4 streams) into
    /// `out`, two symbols per lookup where [`huffman_x2::worth_it`] says
    /// so: the same output and errors as [`HufTable::decode_4`].
    pub(crate) fn decode_4_auto(
        &mut self,
        src: &[u8],
        out: &mut [u8],
        offset: usize,
    ) -> Result<()> {
        // The double-symbol loop is x86-64 assembly with BMI2.
        if !super::use_bmi2() || !huffman_x2::worth_it(src.len(), out.len()) {
            return self.decode_4(src, out, offset);
        }
        if !self.x2.valid && !self.x2.build(&self.cells) {
            return self.decode_4(src, out, offset);
        }
        self.decode_4_with(Some(&self.x2), src, out, offset)
    }

    /// Decode the 4-stream layout (6-byte jump table then 4 streams) into `out`.
    pub(crate) fn decode_4(&self, src: &[u8], out: &mut [u8], offset: usize) -> Result<()> {
        self.decode_4_with(None, src, out, offset)
    }

    fn decode_4_with(
        &self,
        x2: Option<&X2Table>,
        src: &[u8],
        out: &mut [u8],
        offset: usize,
    ) -> Result<()> {
        #[cfg(target_arch = "x86_64")]
        if super::use_bmi2() {
            // SAFETY: the CPU supports BMI1, BMI2 and LZCNT (checked by use_bmi2).
            return unsafe { self.decode_4_bmi2(x2, src, out, offset) };
        }
        self.decode_4_body(x2, src, out, offset)
    }

    /// [`HufTable::decode_4_with`] compiled with BMI1/BMI2/LZCNT
    /// (`shrx`/`shlx` take the shift count in any register; `tzcnt`).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi1,bmi2,lzcnt")]
    fn decode_4_bmi2(
        &self,
        x2: Option<&X2Table>,
        src: &[u8],
        out: &mut [u8],
        offset: usize,
    ) -> Result<()> {
        self.decode_4_body(x2, src, out, offset)
    }

    #[inline(always)]
    fn decode_4_body(
        &self,
        x2: Option<&X2Table>,
        src: &[u8],
        out: &mut [u8],
        offset: usize,
    ) -> Result<()> {
        let jump = src
            .get(..6)
            .ok_or_else(|| corrupt(offset, "truncated Huffman jump table"))?;
        let s1 = usize::from(u16::from_le_bytes([jump[0], jump[1]]));
        let s2 = usize::from(u16::from_le_bytes([jump[2], jump[3]]));
        let s3 = usize::from(u16::from_le_bytes([jump[4], jump[5]]));
        let body = &src[6..];
        let e1 = s1;
        let e2 = e1 + s2;
        let e3 = e2 + s3;
        if e3 > body.len() {
            return Err(corrupt(offset, "Huffman jump table past the literals"));
        }
        let seg = out.len().div_ceil(4);
        if 3 * seg > out.len() {
            return Err(corrupt(offset, "too few literals for 4 streams"));
        }
        // libzstd's fast 4-stream decoder (taken when every stream has at
        // least 8 bytes and the output more than 3 segments' worth) checks
        // only that each segment is filled, not that its stream ends there;
        // such a corruption gets its own words (see `LIBZSTD_DECODES`).
        let n4 = body.len() - e3;
        let libzstd_fast = s1.min(s2).min(s3).min(n4) >= 8 && 3 * seg < out.len();
        let o = offset + 6;
        let mut r1 = BackBits::new(&body[..e1], o)?;
        let mut r2 = BackBits::new(&body[e1..e2], o + e1)?;
        let mut r3 = BackBits::new(&body[e2..e3], o + e2)?;
        let mut r4 = BackBits::new(&body[e3..], o + e3)?;
        let readers = [&mut r1, &mut r2, &mut r3, &mut r4];
        // Symbols the fast loop decoded per stream, and whether the streams
        // are still in lock step.
        let (fast, lockstep) = match x2 {
            _ if !fast_loop_enabled() => ([0; 4], true),
            Some(t) => (
                t.decode_4_fast(body, [0, e1, e2, e3], readers, out, seg),
                false,
            ),
            None => {
                #[cfg(target_arch = "x86_64")]
                let n = if super::use_bmi2() {
                    // SAFETY: the CPU supports BMI1, BMI2 and LZCNT (checked by use_bmi2).
                    unsafe { self.decode_4_fast_bmi2(body, [0, e1, e2, e3], readers, out, seg) }
                } else {
                    self.decode_4_fast(body, [0, e1, e2, e3], readers, out, seg)
                };
                #[cfg(not(target_arch = "x86_64"))]
                let n = self.decode_4_fast(body, [0, e1, e2, e3], readers, out, seg);
                ([n; 4], true)
            }
        };
        let (o1, rest) = out.split_at_mut(seg);
        let (o2, rest) = rest.split_at_mut(seg);
        let (o3, o4) = rest.split_at_mut(seg);
        let (o1, o2, o3, o4) = (
            &mut o1[fast[0]..],
            &mut o2[fast[1]..],
            &mut o3[fast[2]..],
            &mut o4[fast[3]..],
        );
        // All four streams in lock step over the common length, 4 symbols per refill.
        let common = if lockstep { o4.len() & !3 } else { 0 };
        {
            let it = o1[..common]
                .chunks_exact_mut(4)
                .zip(o2[..common].chunks_exact_mut(4))
                .zip(o3[..common].chunks_exact_mut(4))
                .zip(o4[..common].chunks_exact_mut(4));
            for (((a, b), c), d) in it {
                r1.refill();
                r2.refill();
                r3.refill();
                r4.refill();
                for i in 0..4 {
                    a[i] = self.decode_one(&mut r1);
                    b[i] = self.decode_one(&mut r2);
                    c[i] = self.decode_one(&mut r3);
                    d[i] = self.decode_one(&mut r4);
                }
            }
        }
        for (r, o) in [
            (&mut r1, &mut o1[common..]),
            (&mut r2, &mut o2[common..]),
            (&mut r3, &mut o3[common..]),
            (&mut r4, &mut o4[common..]),
        ] {
            for b in o.iter_mut() {
                r.refill();
                *b = self.decode_one(r);
            }
            r.refill();
            if !r.finished() {
                return Err(if libzstd_fast {
                    corrupt(
                        offset,
                        format_args!("Huffman stream not consumed exactly, {LIBZSTD_DECODES}"),
                    )
                } else {
                    corrupt(offset, "Huffman stream not consumed exactly")
                });
            }
        }
        Ok(())
    }
}

/// Runs of `N` cells from `at`, one per symbol of `syms` (code length
/// `code_len`); returns where the runs end. A run past the table is skipped
/// (the caller checks that the runs fill it exactly).
#[inline(always)]
fn fill_runs<const N: usize>(
    cells: &mut [u16],
    mut at: usize,
    syms: &[u8],
    code_len: u16,
) -> usize {
    for &s in syms {
        let v = (u16::from(s) << 8) | code_len;
        if let Some(run) = cells.get_mut(at..at + N) {
            run.copy_from_slice(&[v; N]);
        }
        at += N;
    }
    at
}

/// Set every cell of `run` (a multiple of 8 cells long) to `v`, 8 cells
/// per store: `copy_from_slice(&[v; 8])` compiled to eight 2-byte stores.
#[inline(always)]
fn fill8(run: &mut [u16], v: u16) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_set1_epi16, _mm_storeu_si128};
        // SAFETY: SSE2 is part of the x86-64 baseline (no memory access).
        let x = unsafe { _mm_set1_epi16(v as i16) };
        for c in run.chunks_exact_mut(8) {
            // SAFETY: `c` is 8 cells = 16 writable bytes, and `storeu`
            // needs no alignment (SSE2 is part of x86-64).
            unsafe { _mm_storeu_si128(c.as_mut_ptr().cast::<__m128i>(), x) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for c in run.chunks_exact_mut(8) {
        c.copy_from_slice(&[v; 8]);
    }
}

/// Symbols per stream per refill in the fast loop: after a refill at least
/// 57 bits are loaded, and 5 codes of at most 11 bits take 55.
const PER_REFILL: usize = 5;
const ROUND: usize = 2 * PER_REFILL;
/// Bytes a stream must have below its window at the start of a fast-loop
/// round: a refill steps back `trailing_zeros / 8 <= 64 / 8 = 8` bytes
/// (whatever the bits hold), and a round refills twice.
const ROUND_STEP_MAX: usize = 16;

impl HufTable {
    /// [`HufTable::decode_4_fast`] as a function of its own, compiled with
    /// BMI1/BMI2/LZCNT: inlined into the 4-stream decode next to the
    /// double-symbol branch, its loop lost registers and reloaded two
    /// window pointers and a segment offset from the stack every round.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi1,bmi2,lzcnt")]
    #[inline(never)]
    fn decode_4_fast_bmi2(
        &self,
        body: &[u8],
        starts: [usize; 4],
        readers: [&mut BackBits; 4],
        out: &mut [u8],
        seg: usize,
    ) -> usize {
        self.decode_4_fast(body, starts, readers, out, seg)
    }

    /// Bulk of the 4-stream decode while every stream is far from its start:
    /// 10 symbols per stream per round, bits kept left-aligned in one
    /// register per stream with a marker bit below them (its trailing-zero
    /// count is the bits consumed since the load). `out` holds the four
    /// output segments of `seg` bytes (the last one shorter). Returns the
    /// symbols decoded per stream (a multiple of 10); the readers are left
    /// positioned after them.
    ///
    /// Stream windows are raw pointers into `body` and the output is written
    /// through one raw pointer: 4 pointers, 4 bit registers, the table and
    /// the output pointer fit the x86-64 registers, where slices and indices
    /// spilled about a dozen values per round. Every round first checks that
    /// each stream's window has `ROUND_STEP_MAX` bytes of its own stream
    /// below it and that 10 output bytes remain in the shortest segment.
    #[inline(always)]
    fn decode_4_fast(
        &self,
        body: &[u8],
        starts: [usize; 4],
        readers: [&mut BackBits; 4],
        out: &mut [u8],
        seg: usize,
    ) -> usize {
        // Largest start of an 8-byte window in `body` (none: no fast loop).
        let Some(lim) = body.len().checked_sub(8) else {
            return 0;
        };
        // The last segment is the shortest; rounds stay inside it.
        let Some(last) = out.len().checked_sub(3 * seg) else {
            return 0;
        };
        let rounds = last / ROUND;
        let Some((pos, used)) = windows(&readers, starts, lim) else {
            return 0;
        };
        let cells = &*self.cells;
        let base = body.as_ptr();
        // Lowest window start at which a round may begin, per stream (as
        // addresses; never dereferenced, so wrapping arithmetic).
        let lo = starts.map(|s| base.wrapping_add(s + ROUND_STEP_MAX) as usize);
        // SAFETY: pos[k] <= lim = body.len() - 8 (checked above).
        let [mut p0, mut p1, mut p2, mut p3] = pos.map(|p| unsafe { base.add(p) });
        // The marker bit (the stream's lowest loaded bit, never consumed
        // before the next refill: at most 7 + 55 bits are) sits at `used`.
        let marked = |p: usize, u: u32| (load(body, p) | 1) << (u & 63);
        let (mut b0, mut b1, mut b2, mut b3) = (
            marked(pos[0], used[0]),
            marked(pos[1], used[1]),
            marked(pos[2], used[2]),
            marked(pos[3], used[3]),
        );
        // Refill one stream: step back over whole bytes read, reload, realign.
        macro_rules! refill {
            ($p:ident, $b:ident) => {
                let c = $b.trailing_zeros();
                // SAFETY: at the round's start `$p` was at least
                // ROUND_STEP_MAX bytes above its stream's start in `body`
                // (checked), and a round steps back at most 2 * 8 bytes
                // (c <= 64), so `$p` stays inside `body`; it only ever moves
                // down from at most `lim`, so `$p..$p + 8` is inside `body`.
                $p = unsafe { $p.sub((c >> 3) as usize) };
                // SAFETY: as above, the 8 bytes at `$p` are inside `body`.
                let v = unsafe { $p.cast::<u64>().read_unaligned() };
                $b = (u64::from_le(v) | 1) << (c & 7);
            };
        }
        let q0 = out.as_mut_ptr();
        // One output pointer per stream, moved on a round at a time: with the
        // shift as an immediate this keeps the four window pointers, four bit
        // registers, four output pointers and the table in registers (output
        // bases plus an index, and the shift in a register, spilled two window
        // pointers into the refill's dependency chain).
        // SAFETY: k * seg <= 3 * seg <= out.len() (checked by the caller's
        // `last`), so each is inside `out` or one past it.
        let [mut o0, mut o1, mut o2, mut o3] = [0, 1, 2, 3].map(|k| unsafe { q0.add(k * seg) });
        // The last stream's output address at which the rounds end.
        let o3_end = (o3 as usize).wrapping_add(rounds * ROUND);
        while (o3 as usize) < o3_end {
            if (p0 as usize) < lo[0]
                || (p1 as usize) < lo[1]
                || (p2 as usize) < lo[2]
                || (p3 as usize) < lo[3]
            {
                break;
            }
            // Decode one symbol of one stream into `$o[$j]`.
            macro_rules! sym {
                ($b:ident, $o:ident, $j:expr) => {
                    let at = ($b >> (64 - MAX_BITS)) as usize;
                    debug_assert!(at < TABLE_SIZE);
                    // SAFETY: a 64-bit value shifted right by 64 - MAX_BITS
                    // is below 2^MAX_BITS = cells.len().
                    let v = unsafe { *cells.get_unchecked(at) };
                    $b <<= u32::from(v & 0xFF);
                    // SAFETY: every stream has done as many rounds as the
                    // last, whose output ends at `o3_end` <= out.len() after
                    // this round (the loop bound: rounds * ROUND <= last); the
                    // other segments are longer, so `$o + $j` (j < ROUND) lies
                    // inside its segment of `out`.
                    unsafe { *$o.add($j) = (v >> 8) as u8 };
                };
            }
            // Two halves of PER_REFILL (5) symbols per stream.
            macro_rules! half {
                ($($j:expr),*) => {
                    refill!(p0, b0);
                    refill!(p1, b1);
                    refill!(p2, b2);
                    refill!(p3, b3);
                    $(
                        sym!(b0, o0, $j);
                        sym!(b1, o1, $j);
                        sym!(b2, o2, $j);
                        sym!(b3, o3, $j);
                    )*
                };
            }
            half!(0, 1, 2, 3, 4);
            half!(5, 6, 7, 8, 9);
            // SAFETY: at most one past each segment's part of the rounds (see `sym`).
            unsafe {
                o0 = o0.add(ROUND);
                o1 = o1.add(ROUND);
                o2 = o2.add(ROUND);
                o3 = o3.add(ROUND);
            }
        }
        let i = (o0 as usize).wrapping_sub(q0 as usize);
        if i > 0 {
            let ptr = [p0, p1, p2, p3];
            let bits = [b0, b1, b2, b3];
            for k in 0..4 {
                let at = (ptr[k] as usize).wrapping_sub(base as usize);
                readers[k].set_position(at.wrapping_sub(starts[k]), bits[k].trailing_zeros());
            }
        }
        i
    }
}

/// Read the weights of a tree description (§4.2.1.1); returns (count, bytes used).
fn read_weights(src: &[u8], w: &mut [u8; 256], offset: usize) -> Result<(usize, usize)> {
    let &hb = src
        .first()
        .ok_or_else(|| corrupt(offset, "missing Huffman tree description"))?;
    let hb = usize::from(hb);
    if hb >= 128 {
        let n = hb - 127;
        let bytes = n.div_ceil(2);
        let packed = src
            .get(1..1 + bytes)
            .ok_or_else(|| corrupt(offset, "truncated Huffman weights"))?;
        for i in 0..n {
            let b = packed[i / 2];
            w[i] = if i % 2 == 0 { b >> 4 } else { b & 0xF };
        }
        return Ok((n, 1 + bytes));
    }
    let body = src
        .get(1..1 + hb)
        .ok_or_else(|| corrupt(offset, "truncated FSE-compressed Huffman weights"))?;
    let (counts, used) = fse::read_counts(body, 6, 255, offset + 1)?;
    let mut table = [Cell::default(); 64];
    fse::build(&counts, &mut table, offset + 1)?;
    let stream = body
        .get(used..)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| corrupt(offset, "missing Huffman weight bitstream"))?;
    let n = decode_weights(&table, counts.log, stream, w, offset + 1 + used)?;
    Ok((n, 1 + hb))
}

/// Two interleaved FSE states decode weights until the stream is exhausted.
fn decode_weights(
    table: &[Cell; 64],
    log: u32,
    stream: &[u8],
    w: &mut [u8; 256],
    offset: usize,
) -> Result<usize> {
    let mut r = BackBits::new(stream, offset)?;
    let mask = 63usize;
    let mut s1 = r.read(log) as usize & mask;
    let mut s2 = r.read(log) as usize & mask;
    let mut n = 0usize;
    let limit = 255usize;
    loop {
        // Four weights per refill while the window is >= 4 bytes above the
        // stream's start (after a refill that did not reach the start, at
        // most 7 bits of it are consumed): four reads of <= 6 bits take at
        // most 3 bytes, so none of the per-read overflow checks below
        // could fire, and the 57 loaded bits cover them. Same bits, same
        // weights as one pair at a time; `n + 6 <= limit` keeps the
        // "too many" check of the next two pairs passing as well.
        loop {
            let (p, used) = r.position();
            if p < 4 || used > 7 || n + 6 > limit {
                break;
            }
            let c = table[s1];
            s1 = (usize::from(c.base) + r.read(u32::from(c.nb_bits)) as usize) & mask;
            let d = table[s2];
            s2 = (usize::from(d.base) + r.read(u32::from(d.nb_bits)) as usize) & mask;
            let e = table[s1];
            s1 = (usize::from(e.base) + r.read(u32::from(e.nb_bits)) as usize) & mask;
            let f = table[s2];
            s2 = (usize::from(f.base) + r.read(u32::from(f.nb_bits)) as usize) & mask;
            if let Some(o) = w.get_mut(n..n + 4) {
                o.copy_from_slice(&[c.symbol, d.symbol, e.symbol, f.symbol]);
            }
            n += 4;
            r.refill();
        }
        if n + 2 > limit {
            return Err(corrupt(offset, "too many Huffman weights"));
        }
        let c = table[s1];
        w[n] = c.symbol;
        n += 1;
        s1 = (usize::from(c.base) + r.read(u32::from(c.nb_bits)) as usize) & mask;
        r.refill();
        if r.overflowed() {
            w[n] = table[s2].symbol;
            n += 1;
            break;
        }
        let c = table[s2];
        w[n] = c.symbol;
        n += 1;
        s2 = (usize::from(c.base) + r.read(u32::from(c.nb_bits)) as usize) & mask;
        r.refill();
        if r.overflowed() {
            w[n] = table[s1].symbol;
            n += 1;
            break;
        }
    }
    Ok(n)
}

#[cfg(test)]
/// The weight decoder before zdec7 (one weight per refill): the
/// definition [`decode_weights`] is checked against.
fn decode_weights_reference(
    table: &[Cell; 64],
    log: u32,
    stream: &[u8],
    w: &mut [u8; 256],
    offset: usize,
) -> Result<usize> {
    let mut r = BackBits::new(stream, offset)?;
    let mask = 63usize;
    let mut s1 = r.read(log) as usize & mask;
    let mut s2 = r.read(log) as usize & mask;
    let mut n = 0usize;
    let limit = 255usize;
    loop {
        if n + 2 > limit {
            return Err(corrupt(offset, "too many Huffman weights"));
        }
        let c = table[s1];
        w[n] = c.symbol;
        n += 1;
        s1 = (usize::from(c.base) + r.read(u32::from(c.nb_bits)) as usize) & mask;
        r.refill();
        if r.overflowed() {
            w[n] = table[s2].symbol;
            n += 1;
            break;
        }
        let c = table[s2];
        w[n] = c.symbol;
        n += 1;
        s2 = (usize::from(c.base) + r.read(u32::from(c.nb_bits)) as usize) & mask;
        r.refill();
        if r.overflowed() {
            w[n] = table[s1].symbol;
            n += 1;
            break;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    impl HufTable {
        /// The build before zdec7 (per-symbol runs in symbol order): the
        /// definition [`HufTable::build`] is checked against.
        fn build_reference(&mut self, stored: &[u8], offset: usize) -> Result<()> {
            if stored.is_empty() || stored.len() > 255 {
                return Err(corrupt(offset, "Huffman tree has no weights"));
            }
            let mut total: u32 = 0;
            for &w in stored {
                if w > MAX_BITS as u8 {
                    return Err(corrupt(offset, format!("Huffman weight {w} too large")));
                }
                if w > 0 {
                    total += 1 << (w - 1);
                }
            }
            if total == 0 {
                return Err(corrupt(offset, "Huffman weights are all zero"));
            }
            let max_bits = 32 - total.leading_zeros(); // highbit(total) + 1
            if max_bits > MAX_BITS {
                return Err(corrupt(offset, "Huffman code longer than 11 bits"));
            }
            let rest = (1u32 << max_bits) - total;
            if !rest.is_power_of_two() {
                return Err(corrupt(offset, "Huffman weights do not complete a tree"));
            }
            let last_w = rest.trailing_zeros() + 1;
            let mut weights = [0u8; 256];
            weights[..stored.len()].copy_from_slice(stored);
            weights[stored.len()] = last_w as u8;
            let n = stored.len() + 1;
            // Start of each weight's run, in units of the 11-bit table.
            let scale = MAX_BITS - max_bits;
            let mut rank_count = [0u32; 13];
            for &w in &weights[..n] {
                rank_count[w as usize] += 1;
            }
            let mut start = [0usize; 13];
            let mut acc = 0usize;
            for w in 1..=max_bits as usize {
                start[w] = acc;
                acc += (rank_count[w] as usize) << (w - 1) << scale;
            }
            if acc != TABLE_SIZE {
                return Err(corrupt(offset, "Huffman weights do not fill the table"));
            }
            for (s, &w) in weights[..n].iter().enumerate() {
                if w == 0 {
                    continue;
                }
                let w = w as usize;
                let len = (1usize << (w - 1)) << scale;
                let code_len = max_bits + 1 - w as u32;
                let v = ((s as u16) << 8) | code_len as u16;
                let at = start[w];
                // Runs are powers of two: one store for the short ones (most
                // symbols of a flat literal alphabet), 8-cell stores otherwise.
                match len {
                    1 => {
                        if let Some(c) = self.cells.get_mut(at) {
                            *c = v;
                        }
                    }
                    2 | 4 => {
                        if let Some(run) = self.cells.get_mut(at..at + len) {
                            run.copy_from_slice(&[v; 4][..len]);
                        }
                    }
                    _ => {
                        if let Some(run) = self.cells.get_mut(at..at + len) {
                            for c in run.chunks_exact_mut(8) {
                                c.copy_from_slice(&[v; 8]);
                            }
                        }
                    }
                }
                start[w] = at + len;
            }
            Ok(())
        }
    }

    #[test]
    fn direct_weights_build_a_table() {
        // Two stored weights [1, 1] -> total 2, max_bits 2, rest 2 -> last weight 2.
        // Symbols 0,1 get 2-bit codes, symbol 2 a 1-bit code.
        let src = [127 + 2, 0x11];
        let mut t = HufTable::new();
        assert_eq!(t.read(&src, 0).unwrap(), 2);
        // Lowest weights first: symbol 0 at table quarter 0, symbol 1 at quarter 1,
        // symbol 2 in the upper half.
        assert_eq!(t.cells[0], 2);
        assert_eq!(t.cells[TABLE_SIZE / 4], (1 << 8) | 2);
        assert_eq!(t.cells[TABLE_SIZE / 2], (2 << 8) | 1);
        assert_eq!(t.cells[TABLE_SIZE - 1], (2 << 8) | 1);
    }

    /// A complete Huffman code from a seed: start with two 1-bit codes and
    /// split random leaves (up to 11 bits) `splits` times; the leaves go to
    /// distinct random symbols. Returns the stored weights (the last used
    /// symbol's weight implied).
    fn random_tree(seed: u64, splits: usize) -> Vec<u8> {
        let mut r = seed | 1;
        let mut next = move || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r
        };
        let mut lens = vec![1u32, 1];
        for _ in 0..splits.min(254) {
            let k = next() as usize % lens.len();
            if lens[k] < MAX_BITS {
                lens[k] += 1;
                lens.push(lens[k]);
            }
        }
        let max = *lens.iter().max().unwrap();
        let mut syms: Vec<usize> = (0..256).collect();
        for i in (1..256).rev() {
            syms.swap(i, next() as usize % (i + 1));
        }
        let mut w = [0u8; 256];
        for (k, &l) in lens.iter().enumerate() {
            w[syms[k]] = (max + 1 - l) as u8;
        }
        let last = (0..256).rev().find(|&s| w[s] > 0).unwrap();
        w[..last].to_vec()
    }

    /// One backward Huffman stream of `syms` (RFC 8878 §4.2.2): codes
    /// written last symbol first from bit 0 up, then the marker bit.
    fn encode_stream(t: &HufTable, syms: &[u8]) -> Vec<u8> {
        let code = |s: u8| -> Option<(u64, u32)> {
            let at = t
                .cells
                .iter()
                .position(|&v| (v >> 8) as u8 == s && v & 0xFF > 0)?;
            let len = u32::from(t.cells[at] & 0xFF);
            Some(((at >> (MAX_BITS - len)) as u64, len))
        };
        let mut bits: Vec<bool> = Vec::new();
        for &s in syms.iter().rev() {
            let (c, len) = code(s).expect("symbol in the tree");
            for b in 0..len {
                bits.push(c >> b & 1 == 1);
            }
        }
        bits.push(true);
        let mut out = vec![0u8; bits.len().div_ceil(8)];
        for (i, &b) in bits.iter().enumerate() {
            if b {
                out[i / 8] |= 1 << (i % 8);
            }
        }
        out
    }

    /// Decode the 4-stream section with and without the fast loop (on the
    /// dispatched and the portable build): same result, and on success the
    /// same output bytes.
    fn both_loops(t: &mut HufTable, src: &[u8], n: usize) -> (bool, Vec<u8>) {
        let mut results = Vec::new();
        assert!(t.x2.build(&t.cells));
        let t = &*t;
        for portable in [false, true] {
            for plain in [false, true] {
                for x2 in [None, Some(&t.x2)] {
                    crate::zstd_decode::force_portable(portable);
                    NO_FAST_LOOP.with(|f| f.set(plain));
                    // Guard bytes past the output: no loop may write there.
                    let mut out = vec![0xA5u8; n + 32];
                    let r = t.decode_4_with(x2, src, &mut out[..n], 0);
                    assert!(out[n..].iter().all(|&b| b == 0xA5), "write past the output");
                    out.truncate(n);
                    // The double-symbol loop ends where the single-symbol
                    // one would: the same error, word for word.
                    if x2.is_some() {
                        let mut want = vec![0xA5u8; n];
                        let w = t.decode_4_with(None, src, &mut want, 0);
                        assert_eq!(
                            r.as_ref().err().map(|e| e.to_string()),
                            w.as_ref().err().map(|e| e.to_string())
                        );
                    }
                    NO_FAST_LOOP.with(|f| f.set(false));
                    crate::zstd_decode::force_portable(false);
                    results.push((r.is_ok(), out));
                }
            }
        }
        // On an error the output is unspecified (the loops stop at
        // different points); success and its bytes must agree.
        for (k, r) in results.iter().enumerate() {
            assert!(
                r.0 == results[0].0 && (!r.0 || r.1 == results[0].1),
                "fast and plain 4-stream loops disagree (variant {k}, ok {} vs {})",
                r.0,
                results[0].0
            );
        }
        results.swap_remove(0)
    }

    /// Symbols drawn from the tree's alphabet, skewed toward short codes.
    fn symbols(t: &HufTable, n: usize, seed: u64) -> Vec<u8> {
        let mut r = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                (t.cells[(r >> 53) as usize] >> 8) as u8
            })
            .collect()
    }

    fn four_streams(t: &HufTable, syms: &[u8]) -> Vec<u8> {
        let seg = syms.len().div_ceil(4);
        let parts: Vec<Vec<u8>> = (0..4)
            .map(|k| {
                encode_stream(
                    t,
                    &syms[(k * seg).min(syms.len())..((k + 1) * seg).min(syms.len())],
                )
            })
            .collect();
        let mut src = Vec::new();
        for p in &parts[..3] {
            src.extend_from_slice(&(p.len() as u16).to_le_bytes());
        }
        for p in &parts {
            src.extend_from_slice(p);
        }
        src
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// Valid 4-stream sections decode to their symbols through the fast
        /// loop, and every corruption (flipped bytes, a cut stream, a wrong
        /// jump table, a wrong literal count) gives the same result with and
        /// without the fast loop (and the same bytes when it decodes).
        #[test]
        fn fast_loop_equals_plain_loop(
            tree in proptest::num::u64::ANY,
            splits in 1usize..300,
            // At least 6: a 4-stream section of 5 literals is corrupt
            // (segments of 2, 2, 2 leave -1 for the last; RFC 8878 §4.2.2).
            // Up to 40,000: the double-symbol loop's rounds, its idle
            // slots and the calls between them all run on long streams.
            n in proptest::prop_oneof![6usize..3000, 3000usize..40_000],
            seed in proptest::num::u64::ANY,
            flips in proptest::collection::vec((proptest::num::usize::ANY, 1u8..=255), 0..4),
            cut in 0usize..3,
            dn in 0usize..3,
        ) {
            let stored = random_tree(tree, splits);
            let mut t = HufTable::new();
            t.build(&stored, 0).unwrap();
            let syms = symbols(&t, n, seed);
            let src = four_streams(&t, &syms);
            let (ok, out) = both_loops(&mut t, &src, n);
            proptest::prop_assert!(ok);
            proptest::prop_assert_eq!(&out, &syms);
            let mut bad = src.clone();
            for &(at, x) in &flips {
                let i = at % bad.len();
                bad[i] ^= x;
            }
            bad.truncate(bad.len() - cut.min(bad.len()));
            both_loops(&mut t, &bad, n);
            // Another literal count than the streams hold.
            both_loops(&mut t, &src, n + dn * 7 + 1);
            both_loops(&mut t, &src, n.saturating_sub(dn * 5 + 1).max(4));
        }
    }

    proptest::proptest! {
        /// The double-symbol table built from random trees equals its
        /// per-cell definition.
        #[test]
        fn x2_build_equals_reference(tree in proptest::num::u64::ANY, splits in 1usize..300) {
            let mut t = HufTable::new();
            t.build(&random_tree(tree, splits), 0).unwrap();
            let mut x2 = X2Table::new();
            proptest::prop_assert!(x2.build(&t.cells));
            proptest::prop_assert_eq!(x2.cells(), &X2Table::reference(&t.cells)[..]);
        }
    }

    /// Four codes of 2 bits: every double-symbol lookup yields two symbols,
    /// so each round moves every output pointer by exactly the 10 bytes
    /// the round bound allows; with fewer literals than the streams hold,
    /// that bound ends the rounds, and a looser one writes past the output.
    #[test]
    fn x2_rounds_that_fill_their_bound() {
        let mut t = HufTable::new();
        t.build(&[1, 1, 1], 0).unwrap();
        for n in [4000, 4001, 4003, 20_000, 39_999] {
            let syms = symbols(&t, n, n as u64);
            let src = four_streams(&t, &syms);
            let (ok, out) = both_loops(&mut t, &src, n);
            assert!(ok);
            assert_eq!(out, syms);
            // Fewer literals than the streams hold: the output bound stops
            // the rounds (both_loops checks nothing is written past it).
            for less in [1, 7, 1000] {
                both_loops(&mut t, &src, n - less);
            }
        }
    }

    /// The build of weights `stored` by [`HufTable::build`] and by the
    /// reference: same result (error message included) and, when it
    /// builds, the same 2048 cells.
    fn builds_agree(stored: &[u8]) -> bool {
        let mut a = HufTable::new();
        let mut b = HufTable::new();
        a.cells.fill(0x5A5A);
        b.cells.fill(0x5A5A);
        let ra = a.build(stored, 7).map_err(|e| e.to_string());
        let rb = b.build_reference(stored, 7).map_err(|e| e.to_string());
        assert_eq!(ra, rb, "weights {stored:?}");
        if ra.is_ok() {
            assert!(
                a.cells[..] == b.cells[..],
                "cells differ for weights {stored:?}"
            );
        }
        ra.is_ok()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]

        /// Random complete trees (1-11 bit codes, up to 256 symbols), the
        /// same with one or two weights changed (mostly incomplete trees,
        /// weights up to 13: too large), and short arbitrary weight lists
        /// build the same table or fail with the same error as the
        /// reference build.
        #[test]
        fn build_equals_reference(
            tree in proptest::num::u64::ANY,
            splits in 0usize..300,
            edits in proptest::collection::vec((proptest::num::usize::ANY, 0u8..=13), 0..3),
            raw in proptest::collection::vec(0u8..=12, 1..12),
        ) {
            let mut stored = random_tree(tree, splits.max(1));
            proptest::prop_assert!(builds_agree(&stored));
            for &(at, w) in &edits {
                let i = at % stored.len();
                stored[i] = w;
            }
            builds_agree(&stored);
            builds_agree(&raw);
        }
    }

    #[test]
    fn build_edge_cases_equal_reference() {
        // Every weight list of length 1 and 2 over 0..=12.
        for a in 0..=12u8 {
            builds_agree(&[a]);
            for b in 0..=12u8 {
                builds_agree(&[a, b]);
            }
        }
        // 255 stored weights (256 symbols, 8-bit codes) and too many weights.
        let mut flat = vec![1u8; 255];
        assert!(builds_agree(&flat));
        flat.push(1);
        assert!(!builds_agree(&flat));
        assert!(!builds_agree(&[]));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]

        /// The weight decoder gives the same weights or the same error as
        /// the one-weight-per-refill reference on any stream (random bytes
        /// of 1..200, last byte with its marker) and any valid FSE table of
        /// accuracy log 5 or 6 over up to 13 symbols.
        #[test]
        fn decode_weights_equals_reference(
            log in 5u32..=6,
            nsym in 1usize..14,
            seed in proptest::num::u64::ANY,
            mut stream in proptest::collection::vec(proptest::num::u8::ANY, 1..200),
        ) {
            if let Some(l) = stream.last_mut() {
                *l |= 1 << (seed % 8);
            }
            let counts = fse::tests::random_counts(log, nsym, seed);
            let mut table = [Cell::default(); 64];
            fse::build(&counts, &mut table, 0).unwrap();
            let mut wa = [0u8; 256];
            let mut wb = [0u8; 256];
            let a = decode_weights(&table, log, &stream, &mut wa, 5).map_err(|e| e.to_string());
            let b = decode_weights_reference(&table, log, &stream, &mut wb, 5).map_err(|e| e.to_string());
            proptest::prop_assert_eq!(&a, &b);
            if let Ok(n) = a {
                proptest::prop_assert_eq!(&wa[..n], &wb[..n]);
            }
        }
    }

    /// Streams not consumed exactly are refused either way; the error names
    /// the shape libzstd's fast decoder reads without an error (every stream
    /// at least 8 bytes) and only that one.
    #[test]
    fn inexact_streams_name_what_libzstd_lets_through() {
        let mut t = HufTable::new();
        t.build(&random_tree(7, 40), 0).unwrap();
        let decode = |src: &[u8], n: usize| {
            let mut out = vec![0u8; n];
            t.decode_4(src, &mut out, 0).map_err(|e| e.to_string())
        };
        // 100 symbols per stream: every stream is at least 13 bytes.
        let long = four_streams(&t, &symbols(&t, 400, 1));
        assert!(decode(&long, 400).is_ok());
        for n in [396, 392, 404] {
            let e = decode(&long, n).unwrap_err();
            assert!(e.contains("not consumed exactly"), "{n}: {e}");
            assert!(super::super::libzstd_decodes(&e), "{n}: {e}");
        }
        // 3 symbols per stream: streams of a few bytes, libzstd's generic
        // path checks the ends too.
        let short = four_streams(&t, &symbols(&t, 12, 2));
        assert!(decode(&short, 12).is_ok());
        let e = decode(&short, 8).unwrap_err();
        assert!(e.contains("not consumed exactly"), "{e}");
        assert!(!super::super::libzstd_decodes(&e), "{e}");
    }

    #[test]
    fn incomplete_tree_is_refused() {
        // weights [2, 1]: total 3, max_bits 2, rest 1 -> last weight 1: complete.
        // weights [2, 2, 1]: total 5 -> max_bits 3, rest 3 not a power of two.
        let mut t = HufTable::new();
        assert!(t.read(&[127 + 3, 0x22, 0x10], 0).is_err());
        assert!(t.read(&[127 + 2, 0x21], 0).is_ok());
    }
}
