//! Symbol statistics and prices for the optimal parser: the costs, in
//! 1/256 bit, of the literal bytes and of the literal-length, match-length
//! and offset codes of RFC 8878 §3.1.1.3.2.1, estimated from running symbol
//! frequencies (the model libzstd's `btultra2` strategy uses).

/// Fixed-point accuracy of a price: 1 bit = 256.
pub(crate) const BIT: u32 = 1 << 8;
/// A price larger than any real one.
pub(crate) const MAX_PRICE: i32 = 1 << 30;
/// A literal counts this many times when the statistics are updated.
const LIT_ADD: u32 = 2;
/// Blocks this small are priced from fixed assumptions.
const PREDEF_THRESHOLD: usize = 8;
/// Largest block (RFC 8878 `Block_Maximum_Size`).
const BLOCK_MAX: u32 = crate::filters::zstd_decode::BLOCK_MAX as u32;

use crate::filters::zstd_encode::codes;
pub(crate) use crate::filters::zstd_encode::codes::{highbit, LL_BITS, ML_BITS};

/// The literal-length code of `ll`, as a table index.
#[inline]
pub(crate) fn ll_code(ll: u32) -> usize {
    usize::from(codes::ll_code(ll))
}

/// The match-length code of `ml_base` = match length − 3, as a table index.
#[inline]
pub(crate) fn ml_code(ml_base: u32) -> usize {
    usize::from(codes::ml_code(ml_base.saturating_add(3)))
}

/// Fractional cost weight of a frequency: about `256 * log2(stat + 1)`,
/// linear between powers of two.
#[inline]
fn weight(raw: u32) -> u32 {
    let stat = raw.saturating_add(1);
    let hb = highbit(stat);
    hb * BIT + ((stat << 8) >> hb)
}

fn sum(t: &[u32]) -> u32 {
    t.iter().fold(0u32, |a, &v| a.saturating_add(v))
}

/// Replace each count `c` by `base + (c >> shift)`, `base` being 1, or 1
/// only for nonzero counts; returns the new sum.
fn downscale(t: &mut [u32], shift: u32, base_always: bool) -> u32 {
    let mut s = 0u32;
    for v in t.iter_mut() {
        let base = u32::from(base_always || *v > 0);
        *v = base + (*v >> shift);
        s = s.saturating_add(*v);
    }
    s
}

/// Scale a table down so that its sum is about `1 << log_target`.
fn scale(t: &mut [u32], log_target: u32) -> u32 {
    let prev = sum(t);
    let factor = prev >> log_target;
    if factor <= 1 {
        return prev;
    }
    downscale(t, highbit(factor), true)
}

/// Running symbol statistics and the prices derived from them.
#[derive(Clone)]
pub(crate) struct Stats {
    lit: [u32; 256],
    ll: [u32; 36],
    ml: [u32; 53],
    of: [u32; 32],
    lit_sum: u32,
    ll_sum: u32,
    ml_sum: u32,
    of_sum: u32,
    predef: bool,
    /// Price of each literal byte.
    lit_price: [u32; 256],
    /// Price of each literal-length code, extra bits included.
    ll_price: [u32; 36],
    /// Price of each match-length code, extra bits included.
    ml_price: [u32; 53],
    /// Price of each offset code, extra bits included.
    of_price: [u32; 32],
}

impl Stats {
    /// Empty statistics: the first block initialises them.
    pub(crate) fn new() -> Stats {
        Stats {
            lit: [0; 256],
            ll: [0; 36],
            ml: [0; 53],
            of: [0; 32],
            lit_sum: 0,
            ll_sum: 0,
            ml_sum: 0,
            of_sum: 0,
            predef: false,
            lit_price: [0; 256],
            ll_price: [0; 36],
            ml_price: [0; 53],
            of_price: [0; 32],
        }
    }

    /// True before any block was parsed.
    pub(crate) fn is_fresh(&self) -> bool {
        self.ll_sum == 0
    }

    /// At the start of a block: initialise (first block: literal
    /// frequencies from the block itself, fixed priors for the codes) or
    /// scale down what earlier blocks accumulated.
    pub(crate) fn rescale(&mut self, block: &[u8]) {
        self.predef = false;
        if self.ll_sum == 0 {
            if block.len() <= PREDEF_THRESHOLD {
                self.predef = true;
            }
            self.lit = [0; 256];
            for &b in block {
                self.lit[usize::from(b)] = self.lit[usize::from(b)].saturating_add(1);
            }
            self.lit_sum = downscale(&mut self.lit, 8, false);
            let mut ll = [1u32; 36];
            ll[0] = 4;
            ll[1] = 2;
            self.ll = ll;
            self.ll_sum = sum(&self.ll);
            self.ml = [1; 53];
            self.ml_sum = 53;
            let mut of = [1u32; 32];
            of[..11].copy_from_slice(&[6, 2, 1, 1, 2, 3, 4, 4, 4, 3, 2]);
            self.of = of;
            self.of_sum = sum(&self.of);
        } else {
            self.lit_sum = scale(&mut self.lit, 12);
            self.ll_sum = scale(&mut self.ll, 11);
            self.ml_sum = scale(&mut self.ml, 11);
            self.of_sum = scale(&mut self.of, 11);
        }
        self.set_prices();
    }

    /// Recompute the cached prices from the frequencies.
    pub(crate) fn set_prices(&mut self) {
        let lit_base = weight(self.lit_sum);
        let lit_max = lit_base.saturating_sub(BIT);
        for (p, &f) in self.lit_price.iter_mut().zip(self.lit.iter()) {
            *p = lit_base - weight(f).min(lit_max);
        }
        let ll_base = weight(self.ll_sum);
        for (c, p) in self.ll_price.iter_mut().enumerate() {
            *p = u32::from(LL_BITS[c]) * BIT + ll_base.saturating_sub(weight(self.ll[c]));
        }
        let ml_base = weight(self.ml_sum);
        for (c, p) in self.ml_price.iter_mut().enumerate() {
            *p = u32::from(ML_BITS[c]) * BIT + ml_base.saturating_sub(weight(self.ml[c]));
        }
        let of_base = weight(self.of_sum);
        for (c, p) in self.of_price.iter_mut().enumerate() {
            *p = c as u32 * BIT + of_base.saturating_sub(weight(self.of[c]));
        }
    }

    /// Price of one literal byte.
    #[inline]
    pub(crate) fn lit(&self, b: u8) -> i32 {
        if self.predef {
            return (6 * BIT) as i32;
        }
        self.lit_price[usize::from(b)] as i32
    }

    /// Price of the literal-length symbol for `ll` literals.
    #[inline]
    pub(crate) fn ll(&self, ll: u32) -> i32 {
        if self.predef {
            return weight(ll) as i32;
        }
        if ll >= BLOCK_MAX {
            return (BIT + self.ll_price[ll_code(BLOCK_MAX - 1)]) as i32;
        }
        self.ll_price[ll_code(ll)] as i32
    }

    /// Price of the match part of a sequence: offset code `off_value`
    /// (RFC `Offset_Value`) and length `ml` (≥ 3).
    #[inline]
    pub(crate) fn matched(&self, off_value: u32, ml: u32) -> i32 {
        let oc = highbit(off_value) as usize;
        let base = ml - 3;
        if self.predef {
            return (weight(base) + (16 + oc as u32) * BIT) as i32;
        }
        let ofp = self
            .of_price
            .get(oc)
            .copied()
            .unwrap_or(MAX_PRICE as u32 / 4);
        let mlp = self
            .ml_price
            .get(ml_code(base))
            .copied()
            .unwrap_or(MAX_PRICE as u32 / 4);
        (ofp + mlp + BIT / 5) as i32
    }

    /// Count one chosen sequence.
    pub(crate) fn update(&mut self, literals: &[u8], off_value: u32, ml: u32) {
        for &b in literals {
            let f = &mut self.lit[usize::from(b)];
            *f = f.saturating_add(LIT_ADD);
        }
        self.lit_sum = self
            .lit_sum
            .saturating_add((literals.len() as u32).saturating_mul(LIT_ADD));
        let llc = ll_code(literals.len().min(BLOCK_MAX as usize - 1) as u32);
        self.ll[llc] += 1;
        self.ll_sum += 1;
        if let Some(f) = self.of.get_mut(highbit(off_value) as usize) {
            *f += 1;
            self.of_sum += 1;
        }
        if let Some(f) = self.ml.get_mut(ml_code(ml.saturating_sub(3))) {
            *f += 1;
            self.ml_sum += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_rfc_tables() {
        assert_eq!(ll_code(15), 15);
        assert_eq!(ll_code(16), 16);
        assert_eq!(ll_code(17), 16);
        assert_eq!(ll_code(24), 20);
        assert_eq!(ll_code(63), 24);
        assert_eq!(ll_code(64), 25);
        assert_eq!(ll_code(65535), 34);
        assert_eq!(ll_code(65536), 35);
        assert_eq!(ml_code(0), 0);
        assert_eq!(ml_code(31), 31);
        assert_eq!(ml_code(32), 32);
        assert_eq!(ml_code(40), 36);
        assert_eq!(ml_code(127), 42);
        assert_eq!(ml_code(128), 43);
        assert_eq!(ml_code(65536), 52);
    }

    #[test]
    fn frequent_symbols_are_cheaper() {
        let mut s = Stats::new();
        let mut block = vec![0u8; 5000];
        block.extend_from_slice(&[7u8; 50]);
        s.rescale(&block);
        assert!(s.lit(0) < s.lit(7));
        assert!(s.lit(7) < s.lit(200));
        assert!(s.matched(1, 3) < s.matched(1 << 20, 3));
        s.update(&[0, 0, 7], 1, 4);
        s.set_prices();
        s.rescale(&block);
        assert!(!s.is_fresh());
    }
}
