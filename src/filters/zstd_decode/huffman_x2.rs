//! Huffman literal decoding of RFC 8878 §4.2.2 two symbols per table
//! lookup: a table indexed by the next 11 bits of a stream whose cell holds
//! the first code's symbol and, when the code that follows it also fits in
//! those 11 bits, the second one. Built from the single-symbol table
//! ([`HufTable`]), it decodes exactly the same symbols and consumes exactly
//! the same bits, so streams decode (or fail) as with that table.

use super::bits::BackBits;
use super::huffman::{open4, HufTable, MAX_BITS};
use super::{corrupt, Result};

const TABLE_SIZE: usize = 1 << MAX_BITS;

/// Cell layout: the bytes `sym1, sym2, bits, count` (stored little-endian:
/// `sym1 | sym2 << 8 | bits << 16 | count << 24`; `sym2` is 0 and `count`
/// 1 when only one code fits; `bits` is what the codes take).
pub(crate) struct X2Table {
    cells: Box<[u32; TABLE_SIZE]>,
}

impl X2Table {
    pub(crate) fn new() -> Self {
        X2Table {
            cells: Box::new([0u32; TABLE_SIZE]),
        }
    }

    /// Fill from a valid single-symbol table. Cell `v` holds the code `v`
    /// starts with (symbol `s1`, length `l1`) and, when the code that
    /// follows it (read from the rest of `v`) has a length `l2 <= 11 - l1`,
    /// that one too. Filled by runs: the cells of `s1` are the single-symbol
    /// table sampled every `2^l1` cells, where codes longer than `11 - l1`
    /// (first in that table: longest codes first) come out as `s1` alone,
    /// and each shorter code as a run of `2^(11 - l1 - l2)` pair cells.
    pub(crate) fn build(&mut self, one: &[u16; TABLE_SIZE]) {
        // The runs of the single-symbol table: symbol, code length, start.
        let mut sym = [0u8; 256];
        let mut len = [0u32; 256];
        let mut at = [0usize; 256];
        let mut n = 0usize;
        let mut i = 0usize;
        while i < TABLE_SIZE && n < 256 {
            let v = one[i];
            let l = u32::from(v & 0xFF).clamp(1, MAX_BITS);
            sym[n] = (v >> 8) as u8;
            len[n] = l;
            at[n] = i;
            n += 1;
            i += 1 << (MAX_BITS - l);
        }
        // For each room r: the first run with a code of at most r bits, and
        // where it starts (codes are longest first).
        let mut first = [n; 12];
        let mut pos = [TABLE_SIZE; 12];
        let mut k = 0usize;
        for r in (0..=MAX_BITS as usize).rev() {
            while k < n && len[k] as usize > r {
                k += 1;
            }
            first[r] = k;
            pos[r] = if k < n { at[k] } else { TABLE_SIZE };
        }
        for j in 0..n {
            let l1 = len[j];
            let room = (MAX_BITS - l1) as usize;
            let size = 1usize << room;
            let Some(run) = self.cells.get_mut(at[j]..at[j] + size) else {
                continue;
            };
            let s1 = u32::from(sym[j]);
            let p = (pos[room] >> l1).min(size);
            run[..p].fill((s1 | l1 << 16 | 1 << 24).to_le());
            let mut c = p;
            for m in first[room]..n {
                let l2 = len[m];
                let cnt = 1usize << (room as u32).saturating_sub(l2);
                let v = s1 | u32::from(sym[m]) << 8 | (l1 + l2) << 16 | 2 << 24;
                if let Some(part) = run.get_mut(c..c + cnt) {
                    part.fill(v.to_le());
                }
                c += cnt;
            }
        }
    }

    /// One lookup at the reader: writes 2 bytes at `out[i..]` (the second
    /// meaningful only for a pair) and returns the symbols decoded.
    #[inline(always)]
    fn step(&self, r: &mut BackBits, out: &mut [u8], i: usize) -> usize {
        let v = u32::from_le(self.cells[r.peek(MAX_BITS) as usize & (TABLE_SIZE - 1)]);
        r.consume((v >> 16) & 0xFF);
        out[i] = v as u8;
        out[i + 1] = (v >> 8) as u8;
        (v >> 24) as usize
    }

    /// Decode `out.len()` symbols from the reader (no end check): 5 lookups
    /// per refill (a refill leaves at least 56 bits, 4 codes take at most
    /// 44 and the fifth lookup's 11 bits fit), the last symbol alone
    /// through the single-symbol table when one is left.
    fn decode_into(&self, x1: &HufTable, r: &mut BackBits, out: &mut [u8]) {
        let n = out.len();
        let mut i = 0usize;
        while i + 10 <= n {
            r.refill();
            i += self.step(r, out, i);
            i += self.step(r, out, i);
            i += self.step(r, out, i);
            i += self.step(r, out, i);
            i += self.step(r, out, i);
        }
        while i + 2 <= n {
            r.refill();
            i += self.step(r, out, i);
        }
        if i < n {
            r.refill();
            out[i] = x1.decode_one(r);
        }
    }

    /// Decode one stream filling `out` exactly (as [`HufTable::decode_stream`]).
    pub(crate) fn decode_stream(
        &self,
        x1: &HufTable,
        src: &[u8],
        out: &mut [u8],
        offset: usize,
    ) -> Result<()> {
        let mut r = BackBits::new(src, offset)?;
        self.decode_into(x1, &mut r, out);
        r.refill();
        if !r.finished() {
            return Err(corrupt(offset, "Huffman stream not consumed exactly"));
        }
        Ok(())
    }

    /// Decode the 4-stream layout (as [`HufTable::decode_4`]).
    pub(crate) fn decode_4(
        &self,
        x1: &HufTable,
        src: &[u8],
        out: &mut [u8],
        offset: usize,
    ) -> Result<()> {
        #[cfg(target_arch = "x86_64")]
        if super::use_bmi2() {
            // SAFETY: the CPU supports BMI1, BMI2 and LZCNT (checked by use_bmi2).
            return unsafe { self.decode_4_bmi2(x1, src, out, offset) };
        }
        self.decode_4_body(x1, src, out, offset)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi1,bmi2,lzcnt")]
    fn decode_4_bmi2(
        &self,
        x1: &HufTable,
        src: &[u8],
        out: &mut [u8],
        offset: usize,
    ) -> Result<()> {
        self.decode_4_body(x1, src, out, offset)
    }

    #[inline(always)]
    fn decode_4_body(
        &self,
        x1: &HufTable,
        src: &[u8],
        out: &mut [u8],
        offset: usize,
    ) -> Result<()> {
        let (body, starts, seg, mut readers) = open4(src, out.len(), offset)?;
        let done = if super::huffman::fast_loop_enabled() {
            let [r1, r2, r3, r4] = &mut readers;
            self.decode_4_fast(body, starts, [r1, r2, r3, r4], out, seg)
        } else {
            [0; 4]
        };
        let (o1, rest) = out.split_at_mut(seg);
        let (o2, rest) = rest.split_at_mut(seg);
        let (o3, o4) = rest.split_at_mut(seg);
        for ((r, o), d) in readers.iter_mut().zip([o1, o2, o3, o4]).zip(done) {
            self.decode_into(x1, r, &mut o[d..]);
            r.refill();
            if !r.finished() {
                return Err(corrupt(offset, "Huffman stream not consumed exactly"));
            }
        }
        Ok(())
    }
}

/// Lookups per stream per refill in the fast loop: after a refill at least
/// 57 bits are loaded; 4 lookups take at most 44 and the fifth reads 11.
const PER_REFILL: usize = 5;
/// Output bytes a stream may write in a round: 2 * PER_REFILL lookups of
/// at most 2 symbols (each lookup stores 2 bytes).
const ROUND_OUT: usize = 4 * PER_REFILL;
/// Bytes a stream must have below its window at the start of a round: a
/// refill steps back at most 8 bytes, a round refills twice.
const ROUND_STEP_MAX: usize = 16;

impl X2Table {
    /// Bulk of the 4-stream decode, in the manner of
    /// `HufTable::decode_4_fast` (left-aligned bits with a marker bit, raw
    /// window pointers, every bound checked at the start of each round);
    /// here each stream also has its own output pointer, since a lookup
    /// yields 1 or 2 symbols. A round runs only while every stream's window
    /// is `ROUND_STEP_MAX` bytes above its stream's start and every
    /// stream's segment has `ROUND_OUT` bytes left. Returns the symbols
    /// decoded per stream; the readers are left positioned after them.
    #[inline(always)]
    fn decode_4_fast(
        &self,
        body: &[u8],
        starts: [usize; 4],
        readers: [&mut BackBits; 4],
        out: &mut [u8],
        seg: usize,
    ) -> [usize; 4] {
        let Some(lim) = body.len().checked_sub(8) else {
            return [0; 4];
        };
        // Segment ends (the last one is out.len(); 3 * seg <= out.len() was
        // checked by open4).
        let ends = [seg, 2 * seg, 3 * seg, out.len()];
        if ends[3] < ends[2] {
            return [0; 4];
        }
        let mut pos = [0usize; 4];
        let mut used = [0u32; 4];
        for k in 0..4 {
            let (p, c) = readers[k].position();
            pos[k] = starts[k] + p;
            used[k] = c;
            if pos[k] > lim {
                return [0; 4];
            }
        }
        let cells = &*self.cells;
        let base = body.as_ptr();
        let lo = starts.map(|s| base.wrapping_add(s + ROUND_STEP_MAX) as usize);
        let obase = out.as_mut_ptr();
        // Highest output address at which a round may begin, per stream
        // (addresses only; a segment shorter than ROUND_OUT gives none).
        let hi = [0, 1, 2, 3].map(|k| {
            let room = ends[k].checked_sub(ROUND_OUT);
            match room {
                Some(h) if h >= k * seg => obase.wrapping_add(h) as usize,
                _ => 0,
            }
        });
        // SAFETY: pos[k] <= lim = body.len() - 8 (checked above).
        let [mut p0, mut p1, mut p2, mut p3] = pos.map(|p| unsafe { base.add(p) });
        let marked = |p: usize, u: u32| (load(body, p) | 1) << (u & 63);
        let (mut b0, mut b1, mut b2, mut b3) = (
            marked(pos[0], used[0]),
            marked(pos[1], used[1]),
            marked(pos[2], used[2]),
            marked(pos[3], used[3]),
        );
        // SAFETY: k * seg <= 3 * seg <= out.len(), so these are in (or one
        // past the end of) `out`.
        let [mut q0, mut q1, mut q2, mut q3] = [0, 1, 2, 3].map(|k| unsafe { obase.add(k * seg) });
        let qstart = [q0, q1, q2, q3];
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
        let sh: u32 = std::hint::black_box(64 - MAX_BITS);
        loop {
            if (p0 as usize) < lo[0]
                || (p1 as usize) < lo[1]
                || (p2 as usize) < lo[2]
                || (p3 as usize) < lo[3]
                || (q0 as usize) > hi[0]
                || (q1 as usize) > hi[1]
                || (q2 as usize) > hi[2]
                || (q3 as usize) > hi[3]
            {
                break;
            }
            macro_rules! sym {
                ($b:ident, $q:ident) => {
                    let at = ($b >> sh) as usize;
                    debug_assert!(at < TABLE_SIZE);
                    // SAFETY: `sh` is 64 - MAX_BITS (black_box is the
                    // identity), so `at` < 2^MAX_BITS = cells.len(); the
                    // cell's 4 bytes are sym1, sym2, bits, count.
                    let c = unsafe { cells.as_ptr().add(at) }.cast::<u8>();
                    // SAFETY: at the round's start `$q` was at most
                    // ROUND_OUT bytes below its segment's end (checked,
                    // `hi`); a round's lookups advance it by at most 2 each
                    // and each writes 2 bytes, so all writes stay inside the
                    // segment, inside `out`. The reads are inside the cell.
                    unsafe {
                        $q.cast::<u16>()
                            .write_unaligned(c.cast::<u16>().read_unaligned());
                        $b <<= *c.add(2);
                        $q = $q.add(usize::from(*c.add(3)));
                    }
                };
            }
            // Two streams' round (2 refills of PER_REFILL lookups each),
            // interleaved, then the other two: few values live at a time
            // (the pairs' dependency chains still overlap in the CPU).
            macro_rules! pair {
                ($pa:ident, $ba:ident, $qa:ident, $pb:ident, $bb:ident, $qb:ident) => {
                    for _ in 0..2 {
                        refill!($pa, $ba);
                        refill!($pb, $bb);
                        for _ in 0..PER_REFILL {
                            sym!($ba, $qa);
                            sym!($bb, $qb);
                        }
                    }
                };
            }
            pair!(p0, b0, q0, p1, b1, q1);
            pair!(p2, b2, q2, p3, b3, q3);
        }
        let qs = [q0, q1, q2, q3];
        let done = [0, 1, 2, 3].map(|k| (qs[k] as usize).wrapping_sub(qstart[k] as usize));
        if done != [0; 4] {
            let ptr = [p0, p1, p2, p3];
            let bits = [b0, b1, b2, b3];
            for k in 0..4 {
                let at = (ptr[k] as usize).wrapping_sub(base as usize);
                readers[k].set_position(at.wrapping_sub(starts[k]), bits[k].trailing_zeros());
            }
        }
        done
    }
}

#[inline(always)]
fn load(body: &[u8], at: usize) -> u64 {
    match body.get(at..at + 8) {
        Some(s) => {
            let mut b = [0u8; 8];
            b.copy_from_slice(s);
            u64::from_le_bytes(b)
        }
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::super::huffman::tests::{encode_stream, four_streams, random_tree, symbols};
    use super::super::huffman::{FORCE_TABLE, NO_FAST_LOOP};
    use super::super::FORCE_PORTABLE;
    use super::*;

    type Outcome = std::result::Result<Vec<u8>, String>;

    /// Decode a section every way: single- and double-symbol tables, with
    /// and without the 4-stream fast loops, portable and dispatched. All
    /// must agree on success and its bytes, or on the error message (kind
    /// and offset); returns the outcome.
    fn all_ways(t: &mut HufTable, four: bool, src: &[u8], n: usize) -> Outcome {
        let mut results: Vec<(u8, bool, bool, Outcome)> = Vec::new();
        for table in [1u8, 2] {
            for portable in [false, true] {
                for plain in [false, true] {
                    FORCE_TABLE.with(|f| f.set(table));
                    FORCE_PORTABLE.with(|f| f.set(portable));
                    NO_FAST_LOOP.with(|f| f.set(plain));
                    let mut out = vec![0xA5u8; n];
                    let r = t
                        .decode_section(four, src, &mut out, 7)
                        .map(|_| out)
                        .map_err(|e| e.to_string());
                    NO_FAST_LOOP.with(|f| f.set(false));
                    FORCE_PORTABLE.with(|f| f.set(false));
                    FORCE_TABLE.with(|f| f.set(0));
                    results.push((table, portable, plain, r));
                }
            }
        }
        for r in &results {
            assert!(
                r.3 == results[0].3,
                "decoders disagree (table {}, portable {}, plain {}): {:?} vs {:?}",
                r.0,
                r.1,
                r.2,
                r.3.as_ref().map(|v| v.len()),
                results[0].3.as_ref().map(|v| v.len()),
            );
        }
        results.swap_remove(0).3
    }

    /// The double-symbol table agrees cell by cell with two single lookups.
    #[test]
    fn x2_cells_are_two_x1_lookups() {
        for (seed, splits) in [(1u64, 0usize), (2, 3), (3, 40), (4, 254), (5, 9)] {
            let mut t = HufTable::new();
            t.build(&random_tree(seed, splits), 0).unwrap();
            let mut x = X2Table::new();
            x.build(&t.cells);
            for v in 0..TABLE_SIZE {
                let c = x.cells[v];
                let a = t.cells[v];
                assert_eq!(c as u8, (a >> 8) as u8);
                let l1 = u32::from(a & 0xFF);
                let b = t.cells[(v << l1) & (TABLE_SIZE - 1)];
                let l2 = u32::from(b & 0xFF);
                if c >> 24 == 2 {
                    assert!(l1 + l2 <= MAX_BITS);
                    assert_eq!((c >> 8) as u8, (b >> 8) as u8);
                    assert_eq!((c >> 16) & 0xFF, l1 + l2);
                } else {
                    assert_eq!(c >> 24, 1);
                    assert!(l1 + l2 > MAX_BITS);
                    assert_eq!((c >> 16) & 0xFF, l1);
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// Random trees (1- to 11-bit codes) and symbol strings (skewed
        /// toward short codes, or one repeated symbol) of every length
        /// decode identically with both tables, 1 and 4 streams; flipped
        /// bytes, cut streams and wrong literal counts give the same
        /// outcome (bytes or error message) with both.
        #[test]
        fn x2_equals_x1(
            tree in proptest::num::u64::ANY,
            splits in 0usize..300,
            n in 0usize..3000,
            seed in proptest::num::u64::ANY,
            repeat in proptest::bool::weighted(0.15),
            flips in proptest::collection::vec((proptest::num::usize::ANY, 1u8..=255), 0..4),
            cut in 0usize..3,
            dn in 0usize..3,
        ) {
            let stored = random_tree(tree, splits);
            let mut t = HufTable::new();
            t.build(&stored, 0).unwrap();
            let mut syms = symbols(&t, n, seed);
            if repeat {
                let s = syms.first().copied().unwrap_or(0);
                syms.iter_mut().for_each(|b| *b = s);
            }
            for four in [false, true] {
                let src = if four { four_streams(&t, &syms) } else { encode_stream(&t, &syms) };
                let r = all_ways(&mut t, four, &src, n);
                if !four || n >= 6 {
                    proptest::prop_assert_eq!(r.as_ref(), Ok(&syms));
                }
                let mut bad = src.clone();
                for &(at, x) in &flips {
                    let i = at % bad.len();
                    bad[i] ^= x;
                }
                bad.truncate(bad.len() - cut.min(bad.len()));
                let _ = all_ways(&mut t, four, &bad, n);
                let _ = all_ways(&mut t, four, &src, n + dn * 7 + 1);
                let _ = all_ways(&mut t, four, &src, n.saturating_sub(dn * 5 + 1));
            }
        }
    }
}
