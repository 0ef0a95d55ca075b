//! Huffman coding of literals, RFC 8878 §4.2: the tree description (§4.2.1,
//! weights stored directly or FSE-compressed) and the decoding of 1 or 4
//! backward bitstreams (§4.2.2).

use super::bits::BackBits;
use super::fse::{self, Cell};
use super::{corrupt, Result};

/// Largest code length (RFC 8878 §4.2.1: Max_Number_of_Bits <= 11).
pub(crate) const MAX_BITS: u32 = 11;
const TABLE_SIZE: usize = 1 << MAX_BITS;
const TABLE_MASK: usize = TABLE_SIZE - 1;

/// Decoding table indexed by the next 11 bits of the stream: `symbol << 8 | length`.
pub(crate) struct HufTable {
    pub(crate) cells: Box<[u16; TABLE_SIZE]>,
    pub(crate) valid: bool,
}

impl HufTable {
    pub(crate) fn new() -> Self {
        HufTable {
            cells: Box::new([0u16; TABLE_SIZE]),
            valid: false,
        }
    }

    /// Read a tree description from the start of `src`, replacing the table;
    /// returns the bytes used.
    pub(crate) fn read(&mut self, src: &[u8], offset: usize) -> Result<usize> {
        self.valid = false;
        let mut weights = [0u8; 256];
        let (n, used) = read_weights(src, &mut weights, offset)?;
        self.build(&weights[..n], offset)?;
        self.valid = true;
        Ok(used)
    }

    /// Build from the stored weights (the last symbol's weight is implied).
    fn build(&mut self, stored: &[u8], offset: usize) -> Result<()> {
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

    /// Decode the 4-stream layout (6-byte jump table then 4 streams) into `out`.
    pub(crate) fn decode_4(&self, src: &[u8], out: &mut [u8], offset: usize) -> Result<()> {
        #[cfg(target_arch = "x86_64")]
        if super::use_bmi2() {
            // SAFETY: the CPU supports BMI1, BMI2 and LZCNT (checked by use_bmi2).
            return unsafe { self.decode_4_bmi2(src, out, offset) };
        }
        self.decode_4_body(src, out, offset)
    }

    /// [`HufTable::decode_4`] compiled with BMI1/BMI2/LZCNT (`shrx`/`shlx`
    /// take the shift count in any register; `tzcnt`).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi1,bmi2,lzcnt")]
    fn decode_4_bmi2(&self, src: &[u8], out: &mut [u8], offset: usize) -> Result<()> {
        self.decode_4_body(src, out, offset)
    }

    #[inline(always)]
    fn decode_4_body(&self, src: &[u8], out: &mut [u8], offset: usize) -> Result<()> {
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
        let (o1, rest) = out.split_at_mut(seg);
        let (o2, rest) = rest.split_at_mut(seg);
        let (o3, o4) = rest.split_at_mut(seg);
        let o = offset + 6;
        let mut r1 = BackBits::new(&body[..e1], o)?;
        let mut r2 = BackBits::new(&body[e1..e2], o + e1)?;
        let mut r3 = BackBits::new(&body[e2..e3], o + e2)?;
        let mut r4 = BackBits::new(&body[e3..], o + e3)?;
        let fast = self.decode_4_fast(
            body,
            [0, e1, e2, e3],
            [&mut r1, &mut r2, &mut r3, &mut r4],
            [&mut *o1, &mut *o2, &mut *o3, &mut *o4],
        );
        let (o1, o2, o3, o4) = (
            &mut o1[fast..],
            &mut o2[fast..],
            &mut o3[fast..],
            &mut o4[fast..],
        );
        // All four streams in lock step over the common length, 4 symbols per refill.
        let common = o4.len() & !3;
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
                return Err(corrupt(offset, "Huffman stream not consumed exactly"));
            }
        }
        Ok(())
    }
}

/// Bytes a stream must keep below its window for one fast-loop round
/// (2 refills of at most 7 bytes each).
const FAST_MARGIN: usize = 14;
/// Symbols per stream per refill in the fast loop: after a refill at least
/// 57 bits are loaded, and 5 codes of at most 11 bits take 55.
const PER_REFILL: usize = 5;
const ROUND: usize = 2 * PER_REFILL;

impl HufTable {
    /// Bulk of the 4-stream decode while every stream is far from its start:
    /// 10 symbols per stream per round, refills without clamping, bits kept
    /// left-aligned in one register per stream with a marker bit below them
    /// (its trailing-zero count is the bits consumed since the load). Returns
    /// the symbols decoded per stream (a multiple of 10); the readers are
    /// left positioned after them.
    #[inline(always)]
    fn decode_4_fast(
        &self,
        body: &[u8],
        starts: [usize; 4],
        readers: [&mut BackBits; 4],
        outs: [&mut [u8]; 4],
    ) -> usize {
        // Largest start of an 8-byte window in `body` (none: no fast loop).
        let Some(lim) = body.len().checked_sub(8) else {
            return 0;
        };
        let mut ptr = [0usize; 4];
        let mut used = [0u32; 4];
        for k in 0..4 {
            let (p, c) = readers[k].position();
            ptr[k] = starts[k] + p;
            used[k] = c;
        }
        let mut i = 0usize;
        let cells = &*self.cells;
        let [mut p0, mut p1, mut p2, mut p3] = ptr;
        let [s0, s1, s2, s3] = starts;
        let [o0, o1, o2, o3] = outs;
        // The marker bit (the stream's lowest loaded bit, never consumed
        // before the next refill: at most 7 + 55 bits are) sits at `used`.
        let marked = |p: usize, u: u32| (load(body, p) | 1) << (u & 63);
        let (mut b0, mut b1, mut b2, mut b3) = (
            marked(p0, used[0]),
            marked(p1, used[1]),
            marked(p2, used[2]),
            marked(p3, used[3]),
        );
        // Refill one stream: step back over whole bytes read, reload, realign.
        macro_rules! refill {
            ($p:ident, $b:ident) => {
                let c = $b.trailing_zeros();
                $p -= (c >> 3) as usize;
                $b = (load_in_window(body, lim, $p) | 1) << (c & 7);
            };
        }
        // Decode one symbol of one stream into `$w[$j]`.
        macro_rules! sym {
            ($b:ident, $w:ident, $j:expr) => {
                let v = cells[($b >> (64 - MAX_BITS)) as usize & TABLE_MASK];
                $b <<= u32::from(v & 0xFF);
                $w[$j] = (v >> 8) as u8;
            };
        }
        // Rounds left before some stream could come within FAST_MARGIN of
        // its start (each round steps a window back by at most FAST_MARGIN
        // bytes); recomputed when used up, so the loop checks one counter.
        let mut budget = 0usize;
        let rounds = o0
            .chunks_exact_mut(ROUND)
            .zip(o1.chunks_exact_mut(ROUND))
            .zip(o2.chunks_exact_mut(ROUND))
            .zip(o3.chunks_exact_mut(ROUND));
        for (((w0, w1), w2), w3) in rounds {
            // Exact chunks: the conversions cannot fail.
            let (Ok(w0), Ok(w1), Ok(w2), Ok(w3)) = (
                <&mut [u8; ROUND]>::try_from(w0),
                <&mut [u8; ROUND]>::try_from(w1),
                <&mut [u8; ROUND]>::try_from(w2),
                <&mut [u8; ROUND]>::try_from(w3),
            ) else {
                break;
            };
            if budget == 0 {
                let room = (p0 - s0).min(p1 - s1).min(p2 - s2).min(p3 - s3);
                budget = room / FAST_MARGIN;
                if budget == 0 {
                    break;
                }
            }
            budget -= 1;
            // Two halves of PER_REFILL (5) symbols per stream, written out
            // so every output index is a constant (no bounds checks).
            macro_rules! half {
                ($($j:expr),*) => {
                    refill!(p0, b0);
                    refill!(p1, b1);
                    refill!(p2, b2);
                    refill!(p3, b3);
                    $(
                        sym!(b0, w0, $j);
                        sym!(b1, w1, $j);
                        sym!(b2, w2, $j);
                        sym!(b3, w3, $j);
                    )*
                };
            }
            half!(0, 1, 2, 3, 4);
            half!(5, 6, 7, 8, 9);
            i += ROUND;
        }
        if i > 0 {
            let ptr = [p0, p1, p2, p3];
            let bits = [b0, b1, b2, b3];
            for k in 0..4 {
                readers[k].set_position(ptr[k] - starts[k], bits[k].trailing_zeros());
            }
        }
        i
    }
}

/// The 8 bytes at `at` of the fast loop's input, which lie inside `body`:
/// every stream's window starts at most 8 bytes before that stream's end
/// (which is at or before `body`'s end) and only moves down, and the round
/// budget keeps it at or after the stream's start. The read does not rest on
/// that: the position is clamped to `lim = body.len() - 8` (a compare and a
/// conditional move instead of the two compares and a branch of a slice
/// `get`), so no file byte is ever read out of bounds.
#[inline(always)]
fn load_in_window(body: &[u8], lim: usize, at: usize) -> u64 {
    debug_assert!(at <= lim && lim + 8 == body.len());
    let at = at.min(lim);
    if lim + 8 > body.len() {
        return 0; // never taken (lim = body.len() - 8), kept for the proof
    }
    // SAFETY: at <= lim and lim + 8 <= body.len(), so at..at + 8 is in bounds.
    let v = unsafe { body.as_ptr().add(at).cast::<u64>().read_unaligned() };
    u64::from_le(v)
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

    #[test]
    fn incomplete_tree_is_refused() {
        // weights [2, 1]: total 3, max_bits 2, rest 1 -> last weight 1: complete.
        // weights [2, 2, 1]: total 5 -> max_bits 3, rest 3 not a power of two.
        let mut t = HufTable::new();
        assert!(t.read(&[127 + 3, 0x22, 0x10], 0).is_err());
        assert!(t.read(&[127 + 2, 0x21], 0).is_ok());
    }
}
