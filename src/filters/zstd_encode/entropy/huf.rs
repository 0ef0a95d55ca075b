//! Huffman coding of literals (RFC 8878 §4.2): optimal length-limited code
//! lengths (package-merge, at most 11 bits), canonical codes as the RFC
//! assigns them, the tree description (direct 4-bit or FSE-compressed weights,
//! §4.2.1) and the 1- or 4-stream bitstreams (§3.1.1.3.1.6).

use super::bits::BitWriter;
use super::fse::{self, FseTable};

/// RFC limit on Huffman code length.
pub(crate) const MAX_BITS: u32 = 11;

/// A Huffman code: per-symbol code values and lengths (0 = absent).
#[derive(Clone)]
pub(crate) struct HufTable {
    pub(crate) codes: [u16; 256],
    pub(crate) lens: [u8; 256],
}

impl HufTable {
    /// A table coding nothing.
    pub(crate) fn empty() -> Self {
        HufTable {
            codes: [0; 256],
            lens: [0; 256],
        }
    }

    /// Can this table code every symbol of `hist`?
    pub(crate) fn covers(&self, hist: &[u32; 256]) -> bool {
        hist.iter().zip(&self.lens).all(|(&c, &l)| c == 0 || l > 0)
    }

    /// Bits of the segment with histogram `hist`.
    pub(crate) fn bits(&self, hist: &[u32; 256]) -> u64 {
        hist.iter()
            .zip(&self.lens)
            .map(|(&c, &l)| u64::from(c) * u64::from(l))
            .sum()
    }

    /// Build optimal lengths limited to [`MAX_BITS`] for `hist` (at least two
    /// symbols present) and the canonical codes.
    pub(crate) fn build(&mut self, hist: &[u32; 256], scratch: &mut PackageMerge) {
        scratch.lengths(hist, MAX_BITS, &mut self.lens);
        self.assign_codes();
    }

    /// Canonical codes from lengths (RFC §4.2.1: longest codes first, each
    /// length in increasing symbol order, starting from code 0).
    fn assign_codes(&mut self) {
        let max = u32::from(*self.lens.iter().max().unwrap_or(&0));
        let mut count = [0u32; 13];
        for &l in &self.lens {
            if l > 0 {
                count[(max + 1 - u32::from(l)) as usize] += 1;
            }
        }
        // Start slot (in units of 2^-max) of each weight.
        let mut start = [0u32; 13];
        let mut next = 0u32;
        for w in 1..=max as usize {
            start[w] = next;
            next += count[w] << (w - 1);
        }
        for s in 0..256 {
            let l = u32::from(self.lens[s]);
            if l > 0 {
                let w = (max + 1 - l) as usize;
                self.codes[s] = (start[w] >> (w - 1)) as u16;
                start[w] += 1 << (w - 1);
            }
        }
    }

    /// Longest code length.
    pub(crate) fn max_bits(&self) -> u32 {
        u32::from(*self.lens.iter().max().unwrap_or(&0))
    }

    /// Append the tree description (header byte and weights); `false` if it
    /// cannot be represented (more than 128 weights that FSE does not shrink).
    pub(crate) fn write_description(&self, out: &mut Vec<u8>, scratch: &mut Vec<u8>) -> bool {
        let max = self.max_bits();
        let last = match self.lens.iter().rposition(|&l| l > 0) {
            Some(l) if l > 0 => l,
            _ => return false,
        };
        let weights: Vec<u8> = self.lens[..last]
            .iter()
            .map(|&l| {
                if l == 0 {
                    0
                } else {
                    (max + 1 - u32::from(l)) as u8
                }
            })
            .collect();
        scratch.clear();
        let fse_ok = compress_weights(&weights, scratch) && scratch.len() < 128;
        let direct = weights.len().div_ceil(2);
        if fse_ok && (scratch.len() < direct || weights.len() > 128) {
            out.push(scratch.len() as u8);
            out.extend_from_slice(scratch);
            return true;
        }
        if weights.len() > 128 {
            return false;
        }
        out.push((127 + weights.len()) as u8);
        for pair in weights.chunks(2) {
            let hi = pair[0] << 4;
            let lo = pair.get(1).copied().unwrap_or(0);
            out.push(hi | lo);
        }
        true
    }

    /// Append one stream coding `lits` (decoded first to last).
    pub(crate) fn write_stream(&self, lits: &[u8], out: &mut Vec<u8>) {
        let mut w = BitWriter::new(out, lits.len());
        // Codes of at most 11 bits: 4 per flush keeps ≤ 7 + 44 pending bits.
        for chunk in lits.rchunks(4) {
            for &b in chunk.iter().rev() {
                let s = usize::from(b);
                w.add(u64::from(self.codes[s]), u32::from(self.lens[s]));
            }
            w.flush();
        }
        w.finish_marked();
    }
}

/// FSE-compress Huffman weights (two interleaved states, accuracy log ≤ 6).
fn compress_weights(weights: &[u8], out: &mut Vec<u8>) -> bool {
    let n = weights.len();
    if n < 2 {
        return false;
    }
    let mut counts = [0u32; 13];
    for &w in weights {
        counts[usize::from(w)] += 1;
    }
    if counts.iter().filter(|&&c| c > 0).count() < 2 {
        return false;
    }
    let top = counts.iter().rposition(|&c| c > 0).unwrap_or(0);
    let counts = &counts[..=top];
    let mut best: Option<(usize, u32, [i16; 13])> = None;
    let mut tmp = Vec::new();
    for log in 5..=6 {
        let mut norm = [0i16; 13];
        if !fse::normalize(counts, n as u32, log, &mut norm[..=top]) {
            continue;
        }
        let bytes = fse::ncount_bytes(&norm[..=top], log, &mut tmp) * 8
            + (fse::data_cost256(counts, &norm[..=top], log) / 256) as usize;
        if best.as_ref().is_none_or(|b| bytes < b.0) {
            best = Some((bytes, log, norm));
        }
    }
    let Some((_, log, norm)) = best else {
        return false;
    };
    let mut table = FseTable::empty();
    if !table.build(&norm[..=top], log) {
        return false;
    }
    fse::write_ncount(&norm[..=top], log, out);
    let mut w = BitWriter::new(out, n);
    let mut st = [0u32; 2];
    st[(n - 1) & 1] = table.init(weights[n - 1]);
    st[(n - 2) & 1] = table.init(weights[n - 2]);
    for i in (0..n - 2).rev() {
        table.encode(&mut st[i & 1], weights[i], &mut w);
        w.flush();
    }
    table.flush(st[1], &mut w);
    table.flush(st[0], &mut w);
    w.finish_marked();
    true
}

/// Scratch of the package-merge algorithm (length-limited Huffman).
#[derive(Default)]
pub(crate) struct PackageMerge {
    leaves: Vec<(u64, u16)>,
    /// Per level: (weight, leaf symbol or u16::MAX for a package).
    levels: Vec<Vec<(u64, u16)>>,
}

impl PackageMerge {
    /// Optimal code lengths of at most `limit` bits for `hist` into `lens`.
    fn lengths(&mut self, hist: &[u32; 256], limit: u32, lens: &mut [u8; 256]) {
        *lens = [0; 256];
        self.leaves.clear();
        for (s, &c) in hist.iter().enumerate() {
            if c > 0 {
                self.leaves.push((u64::from(c), s as u16));
            }
        }
        self.leaves.sort_unstable();
        let n = self.leaves.len();
        if n < 2 {
            if let Some(&(_, s)) = self.leaves.first() {
                lens[usize::from(s)] = 1;
            }
            return;
        }
        let levels = limit as usize;
        self.levels.resize_with(levels, Vec::new);
        self.levels[0].clear();
        self.levels[0].extend_from_slice(&self.leaves);
        for j in 1..levels {
            let (done, rest) = self.levels.split_at_mut(j);
            let prev = &done[j - 1];
            let cur = &mut rest[0];
            cur.clear();
            let mut li = 0;
            let mut pi = 0;
            let npk = prev.len() / 2;
            while li < n || pi < npk {
                let pw = if pi < npk {
                    prev[2 * pi].0 + prev[2 * pi + 1].0
                } else {
                    u64::MAX
                };
                if li < n && self.leaves[li].0 <= pw {
                    cur.push(self.leaves[li]);
                    li += 1;
                } else {
                    cur.push((pw, u16::MAX));
                    pi += 1;
                }
            }
        }
        let mut take = 2 * n - 2;
        for j in (0..levels).rev() {
            let mut packages = 0;
            for &(_, s) in &self.levels[j][..take] {
                if s == u16::MAX {
                    packages += 1;
                } else {
                    lens[usize::from(s)] += 1;
                }
            }
            take = 2 * packages;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kraft_equality_and_limit() {
        let mut pm = PackageMerge::default();
        let mut hist = [0u32; 256];
        // Fibonacci counts force long codes without a limit.
        let (mut a, mut b) = (1u32, 1u32);
        for h in hist.iter_mut().take(40) {
            *h = a;
            let c = a.saturating_add(b);
            a = b;
            b = c.min(1 << 28);
        }
        let mut t = HufTable::empty();
        t.build(&hist, &mut pm);
        let max = t.max_bits();
        assert!(max <= MAX_BITS);
        let kraft: u64 = t
            .lens
            .iter()
            .filter(|&&l| l > 0)
            .map(|&l| 1u64 << (max - u32::from(l)))
            .sum();
        assert_eq!(kraft, 1 << max);
    }
}
