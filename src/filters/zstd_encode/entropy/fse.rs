//! FSE encoding (RFC 8878 §4.1): normalized counts chosen for the least
//! estimated size, their header (§4.1.1), and the encoding table whose states
//! mirror the decoder's table built by the RFC's symbol spreading.

use super::bits::BitWriter;

/// Largest accuracy log we build (LL/ML 9, OF 8, Huffman weights 6).
pub(crate) const MAX_LOG: u32 = 9;
/// Alphabet bound for the tables (ML has 53 codes).
pub(crate) const MAX_SYMS: usize = 64;

/// An FSE encoding table (also the per-symbol costs for mode selection).
#[derive(Clone)]
pub(crate) struct FseTable {
    /// Accuracy log (0 for an RLE table).
    pub(crate) log: u32,
    /// Normalized counts (−1 = "less than one", 0 = absent).
    pub(crate) norm: [i16; MAX_SYMS],
    states: [u16; 1 << MAX_LOG],
    delta_nb: [u32; MAX_SYMS],
    delta_find: [i32; MAX_SYMS],
}

impl FseTable {
    /// An empty table (no symbol present).
    pub(crate) fn empty() -> Self {
        FseTable {
            log: 0,
            norm: [0; MAX_SYMS],
            states: [0; 1 << MAX_LOG],
            delta_nb: [0; MAX_SYMS],
            delta_find: [0; MAX_SYMS],
        }
    }

    /// Build from normalized counts summing to `1 << log` (−1 counts as 1).
    /// Returns false when the counts are inconsistent.
    pub(crate) fn build(&mut self, norm: &[i16], log: u32) -> bool {
        if log > MAX_LOG || norm.len() > MAX_SYMS {
            return false;
        }
        let size = 1usize << log;
        let total: i64 = norm
            .iter()
            .map(|&n| i64::from(n.max(0)) + i64::from(n == -1))
            .sum();
        if total != size as i64 || norm.iter().any(|&n| n < -1) {
            return false;
        }
        self.log = log;
        self.norm = [0; MAX_SYMS];
        self.norm[..norm.len()].copy_from_slice(norm);
        // Symbol spreading as the decoder does it (RFC §4.1.1).
        let mut spread = [0u8; 1 << MAX_LOG];
        let mut high = size - 1;
        for (s, &n) in norm.iter().enumerate() {
            if n == -1 {
                spread[high] = s as u8;
                high = high.wrapping_sub(1);
            }
        }
        let mask = size - 1;
        let step = (size >> 1) + (size >> 3) + 3;
        let mut pos = 0usize;
        for (s, &n) in norm.iter().enumerate() {
            for _ in 0..n.max(0) {
                spread[pos] = s as u8;
                loop {
                    pos = (pos + step) & mask;
                    if size == 1 || pos <= high {
                        break;
                    }
                }
            }
        }
        if size > 1 && pos != 0 {
            return false;
        }
        // Encoder states: the k-th cell (in position order) of symbol s.
        let mut cumul = [0u32; MAX_SYMS + 1];
        for (s, &n) in norm.iter().enumerate() {
            let c = if n == -1 { 1 } else { n.max(0) as u32 };
            cumul[s + 1] = cumul[s] + c;
        }
        let mut next = cumul;
        for (u, &s) in spread[..size].iter().enumerate() {
            let slot = &mut next[usize::from(s)];
            self.states[*slot as usize] = (size + u) as u16;
            *slot += 1;
        }
        for (s, &n) in norm.iter().enumerate() {
            let start = cumul[s] as i32;
            let (nb, find) = match n {
                0 => (((log + 1) << 16).wrapping_sub(size as u32), 0),
                -1 | 1 => ((log << 16).wrapping_sub(size as u32), start - 1),
                _ => {
                    let n = n as u32;
                    let max_bits = log - (31 - (n - 1).leading_zeros());
                    (
                        (max_bits << 16).wrapping_sub(n << max_bits),
                        start - n as i32,
                    )
                }
            };
            self.delta_nb[s] = nb;
            self.delta_find[s] = find;
        }
        true
    }

    /// A one-symbol table (RLE mode): no bits at all.
    pub(crate) fn build_rle(&mut self, sym: u8) {
        self.log = 0;
        self.norm = [0; MAX_SYMS];
        self.norm[usize::from(sym) & (MAX_SYMS - 1)] = 1;
        self.states[0] = 1;
        let s = usize::from(sym) & (MAX_SYMS - 1);
        self.delta_nb[s] = 0u32.wrapping_sub(1);
        self.delta_find[s] = -1;
    }

    /// Estimated bits to code symbol `s` once, in 1/256 bit; `None` if absent.
    pub(crate) fn cost256(&self, s: usize) -> Option<u32> {
        let n = *self.norm.get(s)?;
        if n == 0 {
            return None;
        }
        let n = if n == -1 { 1 } else { n as u32 };
        Some(log2_256(1u32 << self.log) - log2_256(n))
    }

    /// Initial state for the last symbol coded (RFC: the decoder's first).
    #[inline(always)]
    pub(crate) fn init(&self, s: u8) -> u32 {
        let s = usize::from(s) & (MAX_SYMS - 1);
        let nb = self.delta_nb[s].wrapping_add(1 << 15) >> 16;
        let v = (nb << 16).wrapping_sub(self.delta_nb[s]);
        let idx = ((v >> nb) as i32 + self.delta_find[s]) as usize;
        u32::from(self.states[idx & ((1 << MAX_LOG) - 1)])
    }

    /// Code `s` from `state`, writing at most `log` bits.
    #[inline(always)]
    pub(crate) fn encode(&self, state: &mut u32, s: u8, w: &mut BitWriter<'_>) {
        let s = usize::from(s) & (MAX_SYMS - 1);
        let nb = state.wrapping_add(self.delta_nb[s]) >> 16;
        w.add(u64::from(*state), nb);
        let idx = ((*state >> nb) as i32 + self.delta_find[s]) as usize;
        *state = u32::from(self.states[idx & ((1 << MAX_LOG) - 1)]);
    }

    /// Write the final state (the decoder's initial state).
    #[inline(always)]
    pub(crate) fn flush(&self, state: u32, w: &mut BitWriter<'_>) {
        w.add(u64::from(state), self.log);
    }
}

/// Arguments below this use the tables of [`tables`].
const TABLE_LEN: usize = 1 << (MAX_LOG + 1);

/// Values of the two logarithms used here, computed once per process with
/// the same expressions as the direct paths (so results are identical).
struct Tables {
    /// `log2_256(x)` for `x < TABLE_LEN`.
    log2_256: [u32; TABLE_LEN],
    /// `log2((n + 1) / n)` for `1 ≤ n < TABLE_LEN` (entry 0 unused).
    up: [f64; TABLE_LEN],
}

fn tables() -> &'static Tables {
    static T: std::sync::OnceLock<Box<Tables>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut t = Box::new(Tables {
            log2_256: [0; TABLE_LEN],
            up: [0.0; TABLE_LEN],
        });
        for x in 0..TABLE_LEN {
            t.log2_256[x] = log2_256_direct(x as u32);
            if x > 0 {
                t.up[x] = log2_ratio(x as i16);
            }
        }
        t
    })
}

/// log2(x) in 1/256 bit (x ≥ 1), accurate to about 0.01 bit.
pub(crate) fn log2_256(x: u32) -> u32 {
    match tables().log2_256.get(x as usize) {
        Some(&v) => v,
        None => log2_256_direct(x),
    }
}

fn log2_256_direct(x: u32) -> u32 {
    ((x.max(1) as f64).log2() * 256.0).round() as u32
}

/// log2((n + 1) / n) for n ≥ 1.
fn log2_ratio(n: i16) -> f64 {
    (f64::from(n + 1) / f64::from(n)).log2()
}

/// Normalize `counts` (total `total`, at least two symbols present) to sum
/// `1 << log`, minimizing Σ count·log2(size/norm) with every present symbol
/// at least 1. Returns false if `log` cannot hold every present symbol.
pub(crate) fn normalize(counts: &[u32], total: u32, log: u32, norm: &mut [i16]) -> bool {
    let size = 1i64 << log;
    let present = counts.iter().filter(|&&c| c > 0).count() as i64;
    if present > size
        || present == 0
        || total == 0
        || norm.len() < counts.len()
        || counts.len() > MAX_SYMS
    {
        return false;
    }
    // The present symbols only, in symbol order (so ties break as they
    // would over the whole alphabet): index, count, normalized count.
    let mut at = [0usize; MAX_SYMS];
    let mut cf = [0f64; MAX_SYMS];
    let mut nv = [0i16; MAX_SYMS];
    let mut k = 0usize;
    let mut sum = 0i64;
    for (s, (n, &c)) in norm.iter_mut().zip(counts).enumerate() {
        *n = 0;
        if c > 0 {
            let v = ((u64::from(c) << log) / u64::from(total)).max(1) as i16;
            at[k] = s;
            cf[k] = f64::from(c);
            nv[k] = v;
            k += 1;
            sum += i64::from(v);
        }
    }
    let (cf, nv) = (&cf[..k], &mut nv[..k]);
    // Gain (in bits) of raising symbol j by one, loss of lowering it.
    let up = &tables().up;
    let ratio = |n: i16| match up.get(n as usize) {
        Some(&r) => r,
        None => log2_ratio(n),
    };
    let best_up = |nv: &[i16]| {
        let mut best = (f64::NEG_INFINITY, usize::MAX);
        for (j, (&c, &n)) in cf.iter().zip(nv.iter()).enumerate() {
            let g = c * ratio(n);
            if g > best.0 {
                best = (g, j);
            }
        }
        best
    };
    let best_down = |nv: &[i16], skip: usize| {
        let mut best = (f64::INFINITY, usize::MAX);
        for (j, (&c, &n)) in cf.iter().zip(nv.iter()).enumerate() {
            if j != skip {
                let l = if n <= 1 {
                    f64::INFINITY
                } else {
                    c * ratio(n - 1)
                };
                if l < best.0 {
                    best = (l, j);
                }
            }
        }
        best
    };
    while sum < size {
        let (_, j) = best_up(nv);
        nv[j] += 1;
        sum += 1;
    }
    while sum > size {
        let (l, j) = best_down(nv, usize::MAX);
        if !l.is_finite() {
            return false;
        }
        nv[j] -= 1;
        sum -= 1;
    }
    // Local exchanges until no move of one unit helps.
    for _ in 0..256 {
        let (g, u) = best_up(nv);
        let (l, d) = best_down(nv, u);
        if d == usize::MAX || g <= l + 1e-9 {
            break;
        }
        nv[u] += 1;
        nv[d] -= 1;
    }
    for (&s, &v) in at.iter().zip(nv.iter()) {
        norm[s] = v;
    }
    true
}
/// Append the normalized-count header (RFC §4.1.1) of `norm` (the last entry
/// non-zero), returning its length in bytes.
pub(crate) fn write_ncount(norm: &[i16], log: u32, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    let mut w = BitWriter::new(out, 2 * MAX_SYMS);
    w.add(u64::from(log - 5), 4);
    let size = 1i32 << log;
    let mut remaining = size + 1;
    let mut threshold = size;
    let mut nbits = log + 1;
    let mut s = 0usize;
    let mut prev_zero = false;
    while remaining > 1 && s < norm.len() {
        if prev_zero {
            let mut end = s;
            while end < norm.len() && norm[end] == 0 {
                end += 1;
            }
            let mut run = end - s;
            while run >= 24 {
                w.add(0xFFFF, 16);
                w.flush();
                run -= 24;
            }
            while run >= 3 {
                w.add(3, 2);
                run -= 3;
            }
            w.add(run as u64, 2);
            w.flush();
            s = end;
            if s >= norm.len() {
                break;
            }
        }
        let count = i32::from(norm[s]);
        s += 1;
        let max = (2 * threshold - 1) - remaining;
        remaining -= count.abs();
        let mut v = count + 1;
        if v >= threshold {
            v += max;
        }
        w.add(v as u64, nbits - u32::from(v < max));
        w.flush();
        prev_zero = v == 1;
        while remaining < threshold {
            nbits -= 1;
            threshold >>= 1;
        }
    }
    w.finish_plain();
    out.len() - start
}

/// Bits of the normalized-count header, measured by writing it to `scratch`.
pub(crate) fn ncount_bytes(norm: &[i16], log: u32, scratch: &mut Vec<u8>) -> usize {
    scratch.clear();
    write_ncount(norm, log, scratch)
}

/// Estimated data bits (×256) of `counts` coded with `norm` at `log`.
pub(crate) fn data_cost256(counts: &[u32], norm: &[i16], log: u32) -> u64 {
    let full = log2_256(1 << log);
    counts
        .iter()
        .zip(norm)
        .filter(|(&c, _)| c > 0)
        .map(|(&c, &n)| {
            let n = if n == -1 { 1 } else { n.max(1) as u32 };
            u64::from(c) * u64::from(full - log2_256(n))
        })
        .sum()
}

/// RFC 8878 §3.1.1.3.2.2 predefined distributions: the decoder's one definition.
pub(crate) use crate::zstd_decode::{LL_DEFAULT, ML_DEFAULT, OF_DEFAULT};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_tables_build() {
        let mut t = FseTable::empty();
        assert!(t.build(&LL_DEFAULT, 6));
        assert!(t.build(&ML_DEFAULT, 6));
        assert!(t.build(&OF_DEFAULT, 5));
    }

    /// The lookup tables hold exactly what the direct expressions give,
    /// around and past their end.
    #[test]
    fn tables_equal_direct_values() {
        for x in 0..TABLE_LEN as u32 + 40 {
            assert_eq!(log2_256(x), log2_256_direct(x), "log2_256({x})");
        }
        let up = &tables().up;
        for (n, r) in up.iter().enumerate().skip(1) {
            assert_eq!(r.to_bits(), log2_ratio(n as i16).to_bits(), "ratio {n}");
        }
        assert_eq!(log2_256(1 << 9), 9 * 256);
        assert_eq!(log2_256(1), 0);
    }

    /// The normalization as first written (every symbol scanned, logarithms
    /// computed directly): the present-symbol version must agree exactly.
    fn normalize_reference(counts: &[u32], total: u32, log: u32, norm: &mut [i16]) -> bool {
        let size = 1i64 << log;
        let present = counts.iter().filter(|&&c| c > 0).count() as i64;
        if present > size || total == 0 || norm.len() < counts.len() {
            return false;
        }
        let mut sum = 0i64;
        for (n, &c) in norm.iter_mut().zip(counts) {
            *n = if c == 0 {
                0
            } else {
                ((u64::from(c) << log) / u64::from(total)).max(1) as i16
            };
            sum += i64::from(*n);
        }
        // Gain (in bits) of raising symbol s by one, loss of lowering it.
        let gain = |c: u32, n: i16| f64::from(c) * log2_ratio(n);
        let loss = |c: u32, n: i16| {
            if n <= 1 {
                f64::INFINITY
            } else {
                f64::from(c) * log2_ratio(n - 1)
            }
        };
        let best_up = |norm: &[i16]| {
            let mut best = (f64::NEG_INFINITY, usize::MAX);
            for (s, &c) in counts.iter().enumerate() {
                if c > 0 {
                    let g = gain(c, norm[s]);
                    if g > best.0 {
                        best = (g, s);
                    }
                }
            }
            best
        };
        let best_down = |norm: &[i16], skip: usize| {
            let mut best = (f64::INFINITY, usize::MAX);
            for (s, &c) in counts.iter().enumerate() {
                if c > 0 && s != skip {
                    let l = loss(c, norm[s]);
                    if l < best.0 {
                        best = (l, s);
                    }
                }
            }
            best
        };
        while sum < size {
            let (_, s) = best_up(norm);
            norm[s] += 1;
            sum += 1;
        }
        while sum > size {
            let (l, s) = best_down(norm, usize::MAX);
            if !l.is_finite() {
                return false;
            }
            norm[s] -= 1;
            sum -= 1;
        }
        // Local exchanges until no move of one unit helps.
        for _ in 0..256 {
            let (g, up) = best_up(norm);
            let (l, down) = best_down(norm, up);
            if down == usize::MAX || g <= l + 1e-9 {
                break;
            }
            norm[up] += 1;
            norm[down] -= 1;
        }
        true
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        #[test]
        fn normalize_equals_reference(
            raw in proptest::collection::vec((0usize..MAX_SYMS, 0u32..5000), 1..64),
            flat in proptest::prelude::any::<bool>(),
            log in 5u32..=9,
        ) {
            let mut counts = [0u32; MAX_SYMS];
            for &(s, c) in &raw {
                counts[s] = if flat { 1 + c % 3 } else { c };
            }
            let top = counts.iter().rposition(|&c| c > 0).unwrap_or(0);
            let counts = &counts[..=top];
            let total: u32 = counts.iter().sum();
            let (mut a, mut b) = ([7i16; MAX_SYMS], [9i16; MAX_SYMS]);
            let ok = normalize(counts, total, log, &mut a[..=top]);
            let ok_ref = normalize_reference(counts, total, log, &mut b[..=top]);
            proptest::prop_assert_eq!(ok, ok_ref);
            if ok {
                proptest::prop_assert_eq!(&a[..=top], &b[..=top]);
            }
        }
    }

    #[test]
    fn normalize_sums() {
        let counts = [1000u32, 1, 0, 0, 5, 77, 3, 0, 1];
        let total = counts.iter().sum();
        for log in 5..=9 {
            let mut norm = [0i16; 9];
            assert!(normalize(&counts, total, log, &mut norm));
            assert_eq!(norm.iter().map(|&n| i32::from(n)).sum::<i32>(), 1 << log);
            for (c, n) in counts.iter().zip(norm) {
                assert_eq!(*c > 0, n > 0);
            }
        }
    }
}
