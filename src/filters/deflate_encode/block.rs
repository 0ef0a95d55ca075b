//! Deflate blocks (RFC 1951 §3.2.3–§3.2.7): choose stored, fixed or dynamic
//! Huffman codes by their exact size in bits, and write the block.

use super::bitwriter::BitWriter;
use super::huffman::{build_lengths, codes_from_lengths};

/// Literal/length symbols in use (0–285), distance symbols (0–29).
pub(super) const NUM_LITLEN: usize = 286;
pub(super) const NUM_DIST: usize = 30;
const END_OF_BLOCK: usize = 256;

/// First length of each length symbol 257..=285 and its extra bits (§3.2.5).
const LEN_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEN_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
/// First distance of each distance symbol and its extra bits (§3.2.5).
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// Length symbol index (0..29, i.e. symbol - 257) of each match length 0..=258.
pub(super) static LEN_SYM: [u8; 259] = len_sym_table();
/// Distance symbol of distance d: `DIST_SYM_LO[d - 1]` for d <= 256, else
/// `DIST_SYM_HI[(d - 1) >> 7]`.
pub(super) static DIST_SYM_LO: [u8; 256] = dist_sym_table(0);
pub(super) static DIST_SYM_HI: [u8; 256] = dist_sym_table(7);

const fn len_sym_table() -> [u8; 259] {
    let mut t = [0u8; 259];
    let mut s = 0usize;
    while s < 29 {
        let end = if s == 28 {
            259
        } else {
            LEN_BASE[s + 1] as usize
        };
        let mut l = LEN_BASE[s] as usize;
        while l < end {
            t[l] = s as u8;
            l += 1;
        }
        s += 1;
    }
    // 258 is symbol 285 (index 28), not 284's 5-bit extra range.
    t[258] = 28;
    t
}

const fn dist_sym_table(shift: u32) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut s = 0usize;
    while s < 30 {
        let lo = (DIST_BASE[s] as usize - 1) >> shift;
        let hi = if s == 29 {
            32768 >> shift
        } else {
            (DIST_BASE[s + 1] as usize - 1) >> shift
        };
        let mut i = lo;
        while i < hi && i < 256 {
            t[i] = s as u8;
            i += 1;
        }
        s += 1;
    }
    t
}

/// The distance symbol of `dist` (1..=32768).
#[inline(always)]
pub(super) fn dist_sym(dist: u32) -> usize {
    let d = (dist - 1) as usize;
    if d < 256 {
        DIST_SYM_LO[d] as usize
    } else {
        DIST_SYM_HI[(d >> 7) & 255] as usize
    }
}

/// One parsed item: a literal byte (< 256) or a match `dist << 9 | len`.
pub(super) type Item = u32;

#[inline(always)]
pub(super) fn match_item(len: u32, dist: u32) -> Item {
    (dist << 9) | len
}

/// Symbol statistics of the block being gathered.
#[derive(Clone)]
pub(super) struct Stats {
    pub lit: [u32; NUM_LITLEN],
    pub dist: [u32; NUM_DIST],
}

impl Stats {
    pub(super) fn new() -> Self {
        Stats {
            lit: [0; NUM_LITLEN],
            dist: [0; NUM_DIST],
        }
    }

    pub(super) fn clear(&mut self) {
        self.lit.fill(0);
        self.dist.fill(0);
    }

    /// Add `other`'s counts.
    pub(super) fn add(&mut self, other: &Stats) {
        for (a, b) in self.lit.iter_mut().zip(other.lit.iter()) {
            *a += b;
        }
        for (a, b) in self.dist.iter_mut().zip(other.dist.iter()) {
            *a += b;
        }
    }
}

/// `256·log2(1 + m/256)` for m in 0..256.
fn log2_table() -> &'static [u32; 256] {
    static T: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut t = [0u32; 256];
        for (m, v) in t.iter_mut().enumerate() {
            *v = (256.0 * (1.0 + m as f64 / 256.0).log2()).round() as u32;
        }
        t
    })
}

/// `256·log2(x)`, approximately (x >= 1).
#[inline(always)]
fn log2_fixed(x: u32, t: &[u32; 256]) -> u64 {
    let e = 31 - x.leading_zeros();
    let m = if e >= 8 { x >> (e - 8) } else { x << (8 - e) } & 255;
    u64::from(e * 256 + t[m as usize])
}

/// Estimated size in 1/256 bits of a dynamic block for `stats`: the entropy
/// of each alphabet, the extra bits, and about 5 header bits per used symbol.
pub(super) fn estimate_bits(stats: &Stats) -> u64 {
    let t = log2_table();
    let mut total = 0u64;
    let mut used = 0u64;
    let mut extra = 0u64;
    let lit_n: u32 = stats.lit.iter().sum::<u32>() + 1;
    let lit_log = log2_fixed(lit_n, t);
    for (s, &f) in stats.lit.iter().enumerate() {
        if f > 0 {
            used += 1;
            total += u64::from(f) * (lit_log - log2_fixed(f, t));
            if s > 256 {
                extra += u64::from(f) * u64::from(LEN_EXTRA[s - 257]);
            }
        }
    }
    let dist_n: u32 = stats.dist.iter().sum();
    if dist_n > 0 {
        let dist_log = log2_fixed(dist_n, t);
        for (s, &f) in stats.dist.iter().enumerate() {
            if f > 0 {
                used += 1;
                total += u64::from(f) * (dist_log - log2_fixed(f, t).min(dist_log));
                extra += u64::from(f) * u64::from(DIST_EXTRA[s]);
            }
        }
    }
    total + 256 * (extra + 5 * used + 60)
}

/// Order of the code length code lengths in the header (§3.2.7).
const CL_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// Code lengths of the fixed Huffman codes (§3.2.6).
fn fixed_lengths(lit: &mut [u8; 288], dist: &mut [u8; NUM_DIST]) {
    for (i, l) in lit.iter_mut().enumerate() {
        *l = match i {
            0..=143 => 8,
            144..=255 => 9,
            256..=279 => 7,
            _ => 8,
        };
    }
    dist.fill(5);
}

/// A block's code lengths and codes, and its dynamic header as run-length items.
pub(super) struct Codes {
    /// 288 entries: the fixed code's lengths cover symbols 286 and 287 too.
    lit_len: [u8; 288],
    lit_code: [u16; 288],
    dist_len: [u8; NUM_DIST],
    dist_code: [u16; NUM_DIST],
    /// Length code + extra bits of each match length 3..=258, and its bit count.
    len_bits: [u32; 259],
    len_nbits: [u8; 259],
    fixed_lit_len: [u8; 288],
    fixed_dist_len: [u8; NUM_DIST],
    /// Header: (code length symbol, extra value) pairs.
    rle: Vec<(u8, u8)>,
    cl_len: [u8; 19],
    cl_code: [u16; 19],
    hlit: usize,
    hdist: usize,
    hclen: usize,
}

impl Codes {
    pub(super) fn new() -> Self {
        let mut c = Codes {
            lit_len: [0; 288],
            lit_code: [0; 288],
            dist_len: [0; NUM_DIST],
            dist_code: [0; NUM_DIST],
            len_bits: [0; 259],
            len_nbits: [0; 259],
            fixed_lit_len: [0; 288],
            fixed_dist_len: [0; NUM_DIST],
            rle: Vec::with_capacity(NUM_LITLEN + NUM_DIST),
            cl_len: [0; 19],
            cl_code: [0; 19],
            hlit: 0,
            hdist: 0,
            hclen: 0,
        };
        fixed_lengths(&mut c.fixed_lit_len, &mut c.fixed_dist_len);
        c
    }

    /// Build the dynamic codes for `stats` (EOB counted here) and the header
    /// items; returns the header's size in bits.
    fn build_dynamic(&mut self, stats: &Stats) -> u64 {
        let mut lit = stats.lit;
        lit[END_OF_BLOCK] = 1;
        build_lengths(&lit, 15, &mut self.lit_len[..NUM_LITLEN]);
        self.lit_len[NUM_LITLEN..].fill(0);
        build_lengths(&stats.dist, 15, &mut self.dist_len);
        self.hlit = NUM_LITLEN;
        while self.hlit > 257 && self.lit_len[self.hlit - 1] == 0 {
            self.hlit -= 1;
        }
        self.hdist = NUM_DIST;
        while self.hdist > 1 && self.dist_len[self.hdist - 1] == 0 {
            self.hdist -= 1;
        }
        // Run-length code of the concatenated lengths (§3.2.7).
        let mut all = [0u8; NUM_LITLEN + NUM_DIST];
        all[..self.hlit].copy_from_slice(&self.lit_len[..self.hlit]);
        all[self.hlit..self.hlit + self.hdist].copy_from_slice(&self.dist_len[..self.hdist]);
        let all = &all[..self.hlit + self.hdist];
        self.rle.clear();
        let mut cl_freq = [0u32; 19];
        let mut i = 0usize;
        while i < all.len() {
            let v = all[i];
            let mut run = 1usize;
            while i + run < all.len() && all[i + run] == v {
                run += 1;
            }
            i += run;
            if v == 0 {
                while run >= 11 {
                    let r = run.min(138);
                    self.rle.push((18, (r - 11) as u8));
                    run -= r;
                }
                if run >= 3 {
                    self.rle.push((17, (run - 3) as u8));
                    run = 0;
                }
            } else {
                self.rle.push((v, 0));
                run -= 1;
                while run >= 3 {
                    let r = run.min(6);
                    self.rle.push((16, (r - 3) as u8));
                    run -= r;
                }
            }
            for _ in 0..run {
                self.rle.push((v, 0));
            }
        }
        for &(s, _) in &self.rle {
            cl_freq[s as usize] += 1;
        }
        build_lengths(&cl_freq, 7, &mut self.cl_len);
        codes_from_lengths(&self.cl_len, &mut self.cl_code);
        self.hclen = 19;
        while self.hclen > 4 && self.cl_len[CL_ORDER[self.hclen - 1]] == 0 {
            self.hclen -= 1;
        }
        let mut bits = 5 + 5 + 4 + 3 * self.hclen as u64;
        for (s, &f) in cl_freq.iter().enumerate() {
            let extra = match s {
                16 => 2,
                17 => 3,
                18 => 7,
                _ => 0,
            };
            bits += u64::from(f) * (u64::from(self.cl_len[s]) + extra);
        }
        bits
    }

    /// Size in bits of the block's symbols (with EOB) under the given lengths.
    fn data_bits(stats: &Stats, lit_len: &[u8; 288], dist_len: &[u8; NUM_DIST]) -> u64 {
        let mut bits = u64::from(lit_len[END_OF_BLOCK]);
        for (&f, &l) in stats.lit[..256].iter().zip(&lit_len[..256]) {
            bits += u64::from(f) * u64::from(l);
        }
        for s in 257..NUM_LITLEN {
            bits +=
                u64::from(stats.lit[s]) * (u64::from(lit_len[s]) + u64::from(LEN_EXTRA[s - 257]));
        }
        for s in 0..NUM_DIST {
            bits += u64::from(stats.dist[s]) * (u64::from(dist_len[s]) + u64::from(DIST_EXTRA[s]));
        }
        bits
    }

    /// Fill the codes (and the per-length table) from the chosen lengths.
    fn prepare(&mut self, fixed: bool) {
        if fixed {
            self.lit_len = self.fixed_lit_len;
            self.dist_len = self.fixed_dist_len;
        }
        codes_from_lengths(&self.lit_len, &mut self.lit_code);
        codes_from_lengths(&self.dist_len, &mut self.dist_code);
        for (len, &sym) in LEN_SYM.iter().enumerate().skip(3) {
            let s = sym as usize;
            let cl = u32::from(self.lit_len[257 + s]);
            let extra = (len - LEN_BASE[s] as usize) as u32;
            self.len_bits[len] = u32::from(self.lit_code[257 + s]) | (extra << cl);
            self.len_nbits[len] = (cl + u32::from(LEN_EXTRA[s])) as u8;
        }
    }

    fn write_header(&self, w: &mut BitWriter) {
        w.put((self.hlit - 257) as u64, 5);
        w.put((self.hdist - 1) as u64, 5);
        w.put((self.hclen - 4) as u64, 4);
        w.flush();
        for &s in &CL_ORDER[..self.hclen] {
            w.put(u64::from(self.cl_len[s]), 3);
            w.flush();
        }
        for &(s, extra) in &self.rle {
            let s = s as usize;
            w.put(u64::from(self.cl_code[s]), u32::from(self.cl_len[s]));
            let n = match s {
                16 => 2,
                17 => 3,
                18 => 7,
                _ => 0,
            };
            w.put(u64::from(extra), n);
            w.flush();
        }
    }

    fn write_items(&self, w: &mut BitWriter, items: &[Item]) {
        for &it in items {
            w.flush();
            if it < 256 {
                let s = it as usize;
                w.put(u64::from(self.lit_code[s]), u32::from(self.lit_len[s]));
            } else {
                let len = (it & 511) as usize;
                let dist = it >> 9;
                w.put(
                    u64::from(self.len_bits[len]),
                    u32::from(self.len_nbits[len]),
                );
                let ds = dist_sym(dist);
                let extra = u64::from(dist - u32::from(DIST_BASE[ds]));
                let cl = u32::from(self.dist_len[ds]);
                w.put(
                    u64::from(self.dist_code[ds]) | (extra << cl),
                    cl + u32::from(DIST_EXTRA[ds]),
                );
            }
        }
        w.flush();
        w.put(
            u64::from(self.lit_code[END_OF_BLOCK]),
            u32::from(self.lit_len[END_OF_BLOCK]),
        );
        w.flush();
    }
}

/// Size in bits of `raw` as stored blocks starting at bit offset `off` (0..8)
/// in the current byte.
fn stored_bits(raw_len: usize, off: u32) -> u64 {
    let blocks = raw_len.div_ceil(65535).max(1) as u64;
    let first_pad = u64::from((8 - (off + 3) % 8) % 8);
    blocks * (3 + 32) + (blocks - 1) * 5 + first_pad + 8 * raw_len as u64
}

/// Write `raw` as stored blocks (the last one final if `last`).
pub(super) fn write_stored(w: &mut BitWriter, raw: &[u8], last: bool) {
    let mut chunks = raw.chunks(65535).peekable();
    if raw.is_empty() {
        w.put(u64::from(last), 3);
        w.align();
        w.put(0xFFFF_0000, 32);
        w.flush();
        return;
    }
    while let Some(c) = chunks.next() {
        let fin = last && chunks.peek().is_none();
        w.put(u64::from(fin), 3);
        w.align();
        let n = c.len() as u64;
        w.put(n | ((!n & 0xFFFF) << 16), 32);
        w.flush();
        w.put_bytes(c);
    }
}

/// Write one block of `items` (which decode to `raw`) with the smallest of the
/// three block types.
pub(super) fn write_block(
    w: &mut BitWriter,
    codes: &mut Codes,
    stats: &Stats,
    items: &[Item],
    raw: &[u8],
    last: bool,
) {
    let header = codes.build_dynamic(stats);
    let dynamic = 3 + header + Codes::data_bits(stats, &codes.lit_len, &codes.dist_len);
    let fixed = 3 + Codes::data_bits(stats, &codes.fixed_lit_len, &codes.fixed_dist_len);
    let stored = stored_bits(raw.len(), w.bit_offset());
    if stored < dynamic.min(fixed) {
        write_stored(w, raw, last);
    } else if fixed <= dynamic {
        codes.prepare(true);
        w.put(u64::from(last) | (1 << 1), 3);
        codes.write_items(w, items);
    } else {
        codes.prepare(false);
        w.put(u64::from(last) | (2 << 1), 3);
        codes.write_header(w);
        codes.write_items(w, items);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_tables() {
        for (len, &sym) in LEN_SYM.iter().enumerate().skip(3) {
            let s = sym as usize;
            assert!(len >= LEN_BASE[s] as usize);
            assert!(
                len - (LEN_BASE[s] as usize) < (1usize << LEN_EXTRA[s]),
                "len {len}"
            );
        }
        assert_eq!(LEN_SYM[258], 28);
        assert_eq!(LEN_SYM[257], 27);
        for d in 1..=32768u32 {
            let s = dist_sym(d);
            assert!(d >= u32::from(DIST_BASE[s]));
            assert!(
                d - u32::from(DIST_BASE[s]) < (1u32 << DIST_EXTRA[s]),
                "dist {d}"
            );
        }
    }
}
