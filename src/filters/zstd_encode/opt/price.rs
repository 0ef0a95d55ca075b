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
const BLOCK_MAX: u32 = crate::zstd_decode::BLOCK_MAX as u32;

use crate::zstd_encode::codes;
pub(crate) use crate::zstd_encode::codes::{highbit, LL_BITS, ML_BITS};

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

/// `w[i] = weight(t[i])` for every count.
fn fill_weights(w: &mut [u32], t: &[u32]) {
    for (w, &f) in w.iter_mut().zip(t) {
        *w = weight(f);
    }
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
    /// `weight` of each count, kept up to date with the counts (so that
    /// [`Self::set_prices`] only subtracts).
    lit_w: [u32; 256],
    ll_w: [u32; 36],
    ml_w: [u32; 53],
    of_w: [u32; 32],
    /// A literal's price is `lit_base - min(lit_w[b], lit_max)`.
    lit_base: u32,
    lit_max: u32,
    /// Price of each literal-length code, extra bits included.
    ll_price: [u32; 36],
    /// Price of each match-length code, extra bits included.
    ml_price: [u32; 53],
    /// Price of each offset code, extra bits included.
    of_price: [u32; 32],
    /// Offset part of [`Self::matched`] per offset code (bias included).
    of_cost: [u32; 32],
    /// Length part of [`Self::matched`] per match length − 3 below 128.
    ml_cost: [u32; ML_COST_LEN],
}

/// Match lengths (− 3) whose price [`Stats::ml_cost`] tabulates.
const ML_COST_LEN: usize = 128;

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
            lit_w: [0; 256],
            ll_w: [0; 36],
            ml_w: [0; 53],
            of_w: [0; 32],
            lit_base: 0,
            lit_max: 0,
            ll_price: [0; 36],
            ml_price: [0; 53],
            of_price: [0; 32],
            of_cost: [0; 32],
            ml_cost: [0; ML_COST_LEN],
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
        fill_weights(&mut self.lit_w, &self.lit);
        fill_weights(&mut self.ll_w, &self.ll);
        fill_weights(&mut self.ml_w, &self.ml);
        fill_weights(&mut self.of_w, &self.of);
        self.set_prices();
    }

    /// Recompute the cached prices from the frequencies (their weights).
    pub(crate) fn set_prices(&mut self) {
        self.lit_base = weight(self.lit_sum);
        self.lit_max = self.lit_base.saturating_sub(BIT);
        let ll_base = weight(self.ll_sum);
        for (c, p) in self.ll_price.iter_mut().enumerate() {
            *p = u32::from(LL_BITS[c]) * BIT + ll_base.saturating_sub(self.ll_w[c]);
        }
        let ml_base = weight(self.ml_sum);
        for (c, p) in self.ml_price.iter_mut().enumerate() {
            *p = u32::from(ML_BITS[c]) * BIT + ml_base.saturating_sub(self.ml_w[c]);
        }
        let of_base = weight(self.of_sum);
        for (c, p) in self.of_price.iter_mut().enumerate() {
            *p = c as u32 * BIT + of_base.saturating_sub(self.of_w[c]);
        }
        // The two parts of `matched`, tabulated.
        if self.predef {
            for (c, p) in self.of_cost.iter_mut().enumerate() {
                *p = (16 + c as u32) * BIT;
            }
            for (b, p) in self.ml_cost.iter_mut().enumerate() {
                *p = weight(b as u32);
            }
        } else {
            for (p, &f) in self.of_cost.iter_mut().zip(self.of_price.iter()) {
                *p = f + BIT / 5;
            }
            for (b, p) in self.ml_cost.iter_mut().enumerate() {
                *p = self.ml_price[ml_code(b as u32)];
            }
        }
    }

    /// Price of one literal byte.
    #[inline]
    pub(crate) fn lit(&self, b: u8) -> i32 {
        if self.predef {
            return (6 * BIT) as i32;
        }
        (self.lit_base - self.lit_w[usize::from(b)].min(self.lit_max)) as i32
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
        self.off_part(off_value) + self.ml_part(ml)
    }

    /// The offset part of [`Self::matched`] (constant over a match's lengths).
    #[inline(always)]
    pub(crate) fn off_part(&self, off_value: u32) -> i32 {
        self.of_cost[highbit(off_value) as usize & 31] as i32
    }

    /// The length part of [`Self::matched`] for `ml` ≥ 3.
    #[inline(always)]
    pub(crate) fn ml_part(&self, ml: u32) -> i32 {
        let base = ml - 3;
        if let Some(&p) = self.ml_cost.get(base as usize) {
            return p as i32;
        }
        if self.predef {
            return weight(base) as i32;
        }
        self.ml_price
            .get(ml_code(base))
            .copied()
            .unwrap_or(MAX_PRICE as u32 / 4) as i32
    }

    /// [`Self::matched`] straight from the counts (no cached weights or
    /// tables): the definition the cached prices are tested against.
    #[cfg(test)]
    fn matched_direct(&self, off_value: u32, ml: u32) -> i32 {
        let oc = highbit(off_value) as usize;
        let base = ml - 3;
        if self.predef {
            return (weight(base) + (16 + oc as u32) * BIT) as i32;
        }
        let ofp = oc as u32 * BIT + weight(self.of_sum).saturating_sub(weight(self.of[oc]));
        let mc = ml_code(base);
        let mlp =
            u32::from(ML_BITS[mc]) * BIT + weight(self.ml_sum).saturating_sub(weight(self.ml[mc]));
        (ofp + mlp + BIT / 5) as i32
    }

    /// [`Self::lit`] straight from the counts.
    #[cfg(test)]
    fn lit_direct(&self, b: u8) -> i32 {
        if self.predef {
            return (6 * BIT) as i32;
        }
        let base = weight(self.lit_sum);
        (base - weight(self.lit[usize::from(b)]).min(base.saturating_sub(BIT))) as i32
    }

    /// [`Self::ll`] straight from the counts.
    #[cfg(test)]
    fn ll_direct(&self, ll: u32) -> i32 {
        if self.predef {
            return weight(ll) as i32;
        }
        let price = |c: usize| {
            u32::from(LL_BITS[c]) * BIT + weight(self.ll_sum).saturating_sub(weight(self.ll[c]))
        };
        if ll >= BLOCK_MAX {
            return (BIT + price(ll_code(BLOCK_MAX - 1))) as i32;
        }
        price(ll_code(ll)) as i32
    }

    /// Count one chosen sequence.
    pub(crate) fn update(&mut self, literals: &[u8], off_value: u32, ml: u32) {
        for &b in literals {
            let f = &mut self.lit[usize::from(b)];
            *f = f.saturating_add(LIT_ADD);
            self.lit_w[usize::from(b)] = weight(*f);
        }
        self.lit_sum = self
            .lit_sum
            .saturating_add((literals.len() as u32).saturating_mul(LIT_ADD));
        let llc = ll_code(literals.len().min(BLOCK_MAX as usize - 1) as u32);
        self.ll[llc] += 1;
        self.ll_w[llc] = weight(self.ll[llc]);
        self.ll_sum += 1;
        let oc = highbit(off_value) as usize;
        if let (Some(f), Some(w)) = (self.of.get_mut(oc), self.of_w.get_mut(oc)) {
            *f += 1;
            *w = weight(*f);
            self.of_sum += 1;
        }
        let mc = ml_code(ml.saturating_sub(3));
        if let (Some(f), Some(w)) = (self.ml.get_mut(mc), self.ml_w.get_mut(mc)) {
            *f += 1;
            *w = weight(*f);
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

    proptest::proptest! {
        /// The cached prices (weights kept per count, tabulated match
        /// lengths) equal the formulas on the counts for any statistics,
        /// symbol, offset and length, in the predefined and counted modes.
        #[test]
        fn cached_prices_are_the_formulas(
            block in proptest::collection::vec(0u8..8, 0..400),
            seqs in proptest::collection::vec((0usize..300, 1u32..1 << 22, 3u32..70_000), 0..20),
            probes in proptest::collection::vec((1u32..u32::MAX, 3u32..200_000), 1..64),
        ) {
            let mut s = Stats::new();
            s.rescale(&block);
            let check = |s: &Stats, at: &str| -> Result<(), proptest::test_runner::TestCaseError> {
                for &(p, o) in &probes {
                    proptest::prop_assert_eq!(s.matched(p, o), s.matched_direct(p, o), "{}", at);
                    proptest::prop_assert_eq!(s.lit(p as u8), s.lit_direct(p as u8), "{}", at);
                    proptest::prop_assert_eq!(s.ll(o), s.ll_direct(o), "{}", at);
                }
                Ok(())
            };
            check(&s, "first block")?;
            for _ in 0..2 {
                for &(l, o, m) in &seqs {
                    s.update(&block[..l.min(block.len())], o, m);
                }
                s.set_prices();
                check(&s, "after updates")?;
                s.rescale(&block);
                check(&s, "next block")?;
            }
        }
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
