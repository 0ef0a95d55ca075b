//! Class selection for foreground draws (reference `PatchSampler`'s
//! `foreground_classes` / `class_weights`): which classes a draw may target
//! and how one is picked among those with voxels.
//!
//! The pick, as the reference makes it: the candidate classes are those with
//! a positive voxel count, in ascending class id. `uniform` takes
//! `candidates[rng.below(n)]`; the weighted forms (`frequency`: the count,
//! `inverse_frequency`: `1 / count`, a mapping: its weight, 0 for a class it
//! does not name) draw `u = float53 · Σw` and take the first class whose
//! running sum exceeds `u`. No candidate, or every weight 0: no class.

use super::Rng;
use crate::error::{Error, Result};

/// How a foreground draw weighs the classes that have voxels.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum ClassWeights {
    /// Every class with voxels equally likely.
    #[default]
    Uniform,
    /// Proportional to the class's voxel count.
    Frequency,
    /// Proportional to the inverse of the class's voxel count.
    InverseFrequency,
    /// The given weight per class id (0 for a class not listed); each weight
    /// finite and at least 0.
    Map(Vec<(u16, f64)>),
}

impl ClassWeights {
    /// The named form (`uniform`, `frequency`, `inverse_frequency`), or an
    /// error naming the accepted ones (the reference's message).
    pub fn from_name(s: &str) -> Result<ClassWeights> {
        match s {
            "uniform" => Ok(ClassWeights::Uniform),
            "frequency" => Ok(ClassWeights::Frequency),
            "inverse_frequency" => Ok(ClassWeights::InverseFrequency),
            _ => Err(Error::invalid(format!(
                "unknown class_weights {s:?}; expected one of ['uniform', \
                 'inverse_frequency', 'frequency'] or a mapping of class id to weight"
            ))),
        }
    }

    /// A mapping of class id to weight, each checked (finite, at least 0).
    pub fn from_map(weights: &[(u16, f64)]) -> Result<ClassWeights> {
        for &(c, w) in weights {
            if !w.is_finite() || w < 0.0 {
                return Err(Error::invalid(format!(
                    "class_weights gives class {c} the weight {w}; a weight is a finite \
                     number of at least 0"
                )));
            }
        }
        Ok(ClassWeights::Map(weights.to_vec()))
    }

    fn weight(&self, class: u16, count: u64) -> f64 {
        match self {
            ClassWeights::Uniform => 1.0,
            ClassWeights::Frequency => count as f64,
            ClassWeights::InverseFrequency => 1.0 / count as f64,
            ClassWeights::Map(m) => m.iter().find(|(c, _)| *c == class).map_or(0.0, |&(_, w)| w),
        }
    }

    /// The class a draw targets among `counts` (`(class id, voxel count)`,
    /// any order), advancing `r` as the reference does; `None` when no class
    /// has voxels or every candidate weighs 0.
    pub fn pick(&self, counts: &[(u16, u64)], r: &mut Rng) -> Option<u16> {
        let mut cand: Vec<(u16, u64)> = counts.iter().copied().filter(|&(_, n)| n > 0).collect();
        cand.sort_unstable_by_key(|&(c, _)| c);
        cand.dedup_by_key(|&mut (c, _)| c);
        if cand.is_empty() {
            return None;
        }
        if *self == ClassWeights::Uniform {
            let k = r.below(cand.len() as u64) as usize;
            return cand.get(k).map(|&(c, _)| c);
        }
        let w: Vec<f64> = cand.iter().map(|&(c, n)| self.weight(c, n)).collect();
        let total: f64 = w.iter().sum();
        if total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) || !total.is_finite() {
            return None;
        }
        let u = ((r.next_u64() >> 11) as f64) / ((1u64 << 53) as f64) * total;
        let mut acc = 0.0;
        let mut last = None;
        for (&(c, _), &x) in cand.iter().zip(&w) {
            acc += x;
            if x > 0.0 {
                last = Some(c);
            }
            if u < acc {
                return Some(c);
            }
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picks(w: &ClassWeights, counts: &[(u16, u64)]) -> Vec<Option<u16>> {
        (0..12)
            .map(|s| w.pick(counts, &mut Rng::from_seeds(&[s])))
            .collect()
    }

    #[test]
    fn picks_as_the_reference() {
        // reference: PatchSampler(8, class_weights=W)._pick_class(counts, seed)
        // for seed in range(12)
        let counts = [(3, 60), (1, 10), (2, 30)];
        let s = |v: &[u16]| v.iter().map(|&c| Some(c)).collect::<Vec<_>>();
        assert_eq!(
            picks(&ClassWeights::Uniform, &counts),
            s(&[3, 2, 3, 2, 2, 1, 1, 1, 1, 2, 3, 3])
        );
        assert_eq!(
            picks(&ClassWeights::Frequency, &counts),
            s(&[3, 3, 3, 3, 3, 2, 1, 1, 2, 3, 3, 3])
        );
        assert_eq!(
            picks(&ClassWeights::InverseFrequency, &counts),
            s(&[2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 3, 2])
        );
        let m = ClassWeights::from_map(&[(1, 1.0), (2, 3.0), (3, 0.0)]).unwrap();
        assert_eq!(picks(&m, &counts), s(&[2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2]));
        assert_eq!(
            picks(&ClassWeights::Uniform, &[(1, 10), (2, 0), (3, 5)]),
            s(&[3, 1, 3, 1, 1, 1, 1, 1, 1, 3, 3, 3])
        );
        let zero = ClassWeights::from_map(&[(1, 0.0), (2, 0.0)]).unwrap();
        assert_eq!(picks(&zero, &[(1, 10), (2, 30)]), vec![None; 12]);
        assert_eq!(picks(&ClassWeights::Uniform, &[(1, 0)]), vec![None; 12]);
    }

    #[test]
    fn refusals() {
        assert!(ClassWeights::from_map(&[(1, -1.0)]).is_err());
        assert!(ClassWeights::from_map(&[(1, f64::INFINITY)]).is_err());
        assert!(ClassWeights::from_map(&[(1, f64::NAN)]).is_err());
        assert!(ClassWeights::from_name("bogus").is_err());
        assert_eq!(
            ClassWeights::from_name("inverse_frequency").unwrap(),
            ClassWeights::InverseFrequency
        );
    }
}
