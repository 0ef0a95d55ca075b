//! Strided selections for typed reads: per dimension an index or a range with
//! a step, like numpy's basic slicing (HDF5 File Format Specification
//! IV.A.2.b dataspaces; the hyperslab model of `H5Sselect_hyperslab` with
//! unit block). Built with the [`s!`](crate::s) macro or [`Slice::new`].
//!
//! Differences from Python, on purpose: negative indices and negative steps
//! are refused (a typed error, not counted from the end), and an index past
//! the end is an error; a range's end is clamped to the extent as in Python.

#![deny(missing_docs)]

use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use crate::error::{Error, Result};
use crate::selection::Selection;

/// The selection along one dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceArg {
    /// One index (the dimension is dropped from [`Hyperslab::out_shape`]).
    Index(i64),
    /// `start .. end` (end `None` = to the extent) every `step` elements.
    Range {
        /// First index.
        start: i64,
        /// One past the last index, clamped to the extent; `None` = the extent.
        end: Option<i64>,
        /// Distance between selected indices (at least 1).
        step: i64,
    },
}

impl SliceArg {
    /// The same range taking every `step`-th element (an index is unchanged).
    pub fn step(self, step: i64) -> SliceArg {
        match self {
            SliceArg::Range { start, end, .. } => SliceArg::Range { start, end, step },
            i => i,
        }
    }
}

macro_rules! slice_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for SliceArg {
            fn from(i: $t) -> Self {
                SliceArg::Index(i64::try_from(i).unwrap_or(i64::MAX))
            }
        }
        impl From<Range<$t>> for SliceArg {
            fn from(r: Range<$t>) -> Self {
                SliceArg::Range {
                    start: i64::try_from(r.start).unwrap_or(i64::MAX),
                    end: Some(i64::try_from(r.end).unwrap_or(i64::MAX)),
                    step: 1,
                }
            }
        }
        impl From<RangeInclusive<$t>> for SliceArg {
            fn from(r: RangeInclusive<$t>) -> Self {
                let end = i64::try_from(*r.end()).unwrap_or(i64::MAX);
                SliceArg::Range {
                    start: i64::try_from(*r.start()).unwrap_or(i64::MAX),
                    end: Some(end.saturating_add(1)),
                    step: 1,
                }
            }
        }
        impl From<RangeFrom<$t>> for SliceArg {
            fn from(r: RangeFrom<$t>) -> Self {
                SliceArg::Range {
                    start: i64::try_from(r.start).unwrap_or(i64::MAX),
                    end: None,
                    step: 1,
                }
            }
        }
        impl From<RangeTo<$t>> for SliceArg {
            fn from(r: RangeTo<$t>) -> Self {
                SliceArg::Range {
                    start: 0,
                    end: Some(i64::try_from(r.end).unwrap_or(i64::MAX)),
                    step: 1,
                }
            }
        }
        impl From<RangeToInclusive<$t>> for SliceArg {
            fn from(r: RangeToInclusive<$t>) -> Self {
                let end = i64::try_from(r.end).unwrap_or(i64::MAX);
                SliceArg::Range {
                    start: 0,
                    end: Some(end.saturating_add(1)),
                    step: 1,
                }
            }
        }
    )*};
}

slice_from_int!(i32, i64, u32, u64, usize);

impl From<RangeFull> for SliceArg {
    fn from(_: RangeFull) -> Self {
        SliceArg::Range {
            start: 0,
            end: None,
            step: 1,
        }
    }
}

/// A selection: one [`SliceArg`] per leading dimension; dimensions not named
/// are selected whole. [`Slice::all`] selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Slice {
    args: Vec<SliceArg>,
}

/// Build a [`Slice`]: `s![1..5, .., 0..10; 2, 3]` selects rows 1–4, every
/// column, every second element of 0..10 along the third dimension and index 3
/// of the fourth (ranges may use any integer type; `;` gives the step).
///
/// ```
/// use purehdf::{s, Slice};
/// let sl: Slice = s![2.., 0..10; 3];
/// let h = sl.resolve(&[5, 8]).unwrap();
/// assert_eq!((h.start.as_slice(), h.count.as_slice(), h.step.as_slice()),
///            (&[2, 0][..], &[3, 3][..], &[1, 3][..]));
/// ```
#[macro_export]
macro_rules! s {
    ($($e:expr $(; $st:expr)?),* $(,)?) => {
        $crate::Slice::new(vec![$( $crate::SliceArg::from($e) $(.step($st))? ),*])
    };
}

/// A selection resolved against a shape: `start + k * step` for
/// `k in 0..count` along each dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hyperslab {
    /// First selected index per dimension.
    pub start: Vec<u64>,
    /// Selected indices per dimension.
    pub count: Vec<u64>,
    /// Distance between selected indices per dimension.
    pub step: Vec<u64>,
    /// Dimensions selected by a single index (dropped from the output shape).
    pub indexed: Vec<bool>,
}

impl Hyperslab {
    /// Number of selected elements (`None` on overflow).
    pub fn num_elements(&self) -> Option<u64> {
        self.count.iter().try_fold(1u64, |a, &c| a.checked_mul(c))
    }

    /// The shape of what a read returns: the counts without indexed dimensions.
    pub fn out_shape(&self) -> Vec<u64> {
        self.count
            .iter()
            .zip(&self.indexed)
            .filter(|(_, &i)| !i)
            .map(|(&c, _)| c)
            .collect()
    }

    /// True when every step is 1 (a plain box).
    pub fn is_unit_stride(&self) -> bool {
        self.step.iter().all(|&s| s == 1) || self.count.contains(&0)
    }

    /// The same selection restricted to `count` indices from the `first`-th
    /// along dimension `dim`.
    pub fn sub(&self, dim: usize, first: u64, count: u64) -> Hyperslab {
        let mut h = self.clone();
        if let (Some(s), Some(c), Some(&st)) = (
            h.start.get_mut(dim),
            h.count.get_mut(dim),
            self.step.get(dim),
        ) {
            *s = s.saturating_add(first.saturating_mul(st));
            *c = count;
        }
        h
    }

    /// The unit-stride box covering the selection, as a [`Selection`]
    /// (`start`, `(count - 1) * step + 1` per dimension).
    pub fn bounding_box(&self) -> Selection {
        let count = self
            .count
            .iter()
            .zip(&self.step)
            .map(|(&c, &s)| if c == 0 { 0 } else { (c - 1) * s + 1 })
            .collect();
        Selection::Hyperslab {
            start: self.start.clone(),
            count,
        }
    }
}

impl Slice {
    /// Every element.
    pub fn all() -> Slice {
        Slice::default()
    }

    /// One argument per leading dimension.
    pub fn new(args: Vec<SliceArg>) -> Slice {
        Slice { args }
    }

    /// The arguments, one per leading dimension.
    pub fn args(&self) -> &[SliceArg] {
        &self.args
    }

    /// Resolve against `shape`: a typed error for more arguments than
    /// dimensions, a negative index or step, a zero step, an index past the
    /// end or a range starting past it.
    pub fn resolve(&self, shape: &[u64]) -> Result<Hyperslab> {
        let bad = |m: String| Error::InvalidArgument(format!("slice {:?}: {m}", self.args));
        if self.args.len() > shape.len() {
            return Err(bad(format!(
                "{} arguments for {} dimensions",
                self.args.len(),
                shape.len()
            )));
        }
        let rank = shape.len();
        let mut h = Hyperslab {
            start: Vec::with_capacity(rank),
            count: Vec::with_capacity(rank),
            step: Vec::with_capacity(rank),
            indexed: Vec::with_capacity(rank),
        };
        for (d, &extent) in shape.iter().enumerate() {
            let arg = self.args.get(d).copied().unwrap_or(SliceArg::from(..));
            let unsigned = |v: i64, what: &str| {
                u64::try_from(v).map_err(|_| bad(format!("negative {what} {v} (not supported)")))
            };
            match arg {
                SliceArg::Index(i) => {
                    let i = unsigned(i, "index")?;
                    if i >= extent {
                        return Err(bad(format!("index {i} outside extent {extent}")));
                    }
                    h.start.push(i);
                    h.count.push(1);
                    h.step.push(1);
                    h.indexed.push(true);
                }
                SliceArg::Range { start, end, step } => {
                    let start = unsigned(start, "start")?;
                    let step = unsigned(step, "step")?;
                    if step == 0 {
                        return Err(bad("step 0".into()));
                    }
                    if start > extent {
                        return Err(bad(format!("start {start} past extent {extent}")));
                    }
                    let end = match end {
                        None => extent,
                        Some(e) => unsigned(e, "end")?.min(extent),
                    };
                    let count = end.saturating_sub(start).div_ceil(step);
                    h.start.push(start);
                    h.count.push(count);
                    h.step.push(step);
                    h.indexed.push(false);
                }
            }
        }
        Ok(h)
    }
}

impl From<&Selection> for Slice {
    fn from(s: &Selection) -> Self {
        match s {
            Selection::All => Slice::all(),
            Selection::Hyperslab { start, count } => Slice::new(
                start
                    .iter()
                    .zip(count)
                    .map(|(&s, &c)| SliceArg::from(s..s.saturating_add(c)))
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macro_forms_resolve() {
        let h = s![1..5, .., 0..10; 3, 2].resolve(&[6, 4, 8, 3]).unwrap();
        assert_eq!(h.start, vec![1, 0, 0, 2]);
        assert_eq!(h.count, vec![4, 4, 3, 1]);
        assert_eq!(h.step, vec![1, 1, 3, 1]);
        assert_eq!(h.out_shape(), vec![4, 4, 3]);
        let h = s![..=2, 3..].resolve(&[10, 5]).unwrap();
        assert_eq!((h.start, h.count), (vec![0, 3], vec![3, 2]));
        let h = Slice::all().resolve(&[2, 3]).unwrap();
        assert_eq!(h.count, vec![2, 3]);
        assert!(h.is_unit_stride());
        let h = s![5usize..; 2].resolve(&[5]).unwrap();
        assert_eq!(h.count, vec![0]);
    }

    #[test]
    fn bad_slices_are_typed_errors() {
        for bad in [
            s![-1],
            s![0..4; 0],
            s![7],
            s![9..],
            s![0..2; -1],
            s![1, 2, 3],
        ] {
            assert!(
                matches!(bad.resolve(&[6, 4]), Err(Error::InvalidArgument(_))),
                "{bad:?}"
            );
        }
        // the end is clamped as in Python
        assert_eq!(s![2..100].resolve(&[6]).unwrap().count, vec![4]);
    }

    #[test]
    fn bounding_box_and_sub() {
        let h = s![1..8; 3, 2].resolve(&[9, 4]).unwrap();
        assert_eq!(
            h.bounding_box(),
            Selection::Hyperslab {
                start: vec![1, 2],
                count: vec![7, 1]
            }
        );
        let s = h.sub(0, 1, 2);
        assert_eq!((s.start[0], s.count[0]), (4, 2));
    }
}
