//! Dataspace message (HDF5 File Format Specification IV.A.2.b): decodes
//! versions 1 and 2 (scalar, simple with maximum dimensions, unlimited = all
//! ones, and null spaces) and encodes version 2 (what the writer emits).

use crate::cursor::{is_undefined, Cursor};
use crate::encode::{put_var, UNDEF};
use crate::error::Result;
use crate::{limits, Sizes};

/// What kind of dataspace an object has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpaceKind {
    /// Scalar dataspace (type 0, or a version 1 message of rank 0): exactly one element, no
    /// dimensions.
    Scalar,
    /// Simple dataspace (type 1): a regular array of rank 1 or more with current and maximum sizes.
    Simple,
    /// Null dataspace (type 2, version 2 only): no elements at all.
    Null,
}

impl SpaceKind {
    /// `"scalar"`, `"simple"` or `"null"`.
    pub fn name(self) -> &'static str {
        match self {
            SpaceKind::Scalar => "scalar",
            SpaceKind::Simple => "simple",
            SpaceKind::Null => "null",
        }
    }
}

/// A decoded dataspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataspace {
    /// Dataspace type: scalar, simple or null.
    pub kind: SpaceKind,
    /// Current dimensions (empty for scalar and null).
    pub dims: Vec<u64>,
    /// Maximum dimensions, `None` = unlimited; equal to `dims` when not stored.
    pub max_dims: Vec<Option<u64>>,
}

impl Dataspace {
    /// The scalar dataspace (one element, rank 0).
    pub fn scalar() -> Self {
        Dataspace {
            kind: SpaceKind::Scalar,
            dims: Vec::new(),
            max_dims: Vec::new(),
        }
    }

    /// The null dataspace (no elements).
    pub fn null() -> Self {
        Dataspace {
            kind: SpaceKind::Null,
            dims: Vec::new(),
            max_dims: Vec::new(),
        }
    }

    /// A fixed simple dataspace of `dims` (maximum = current).
    pub fn simple(dims: &[u64]) -> Self {
        Dataspace {
            kind: SpaceKind::Simple,
            dims: dims.to_vec(),
            max_dims: dims.iter().map(|&d| Some(d)).collect(),
        }
    }

    /// A simple dataspace of `dims` with maximum sizes `max` (`None` = unlimited).
    pub fn with_max(dims: &[u64], max: &[Option<u64>]) -> Self {
        Dataspace {
            kind: SpaceKind::Simple,
            dims: dims.to_vec(),
            max_dims: max.to_vec(),
        }
    }

    /// True when some maximum size differs from the current one (the message
    /// then stores the maximum sizes).
    pub fn has_max(&self) -> bool {
        self.max_dims.len() != self.dims.len()
            || self
                .max_dims
                .iter()
                .zip(&self.dims)
                .any(|(m, d)| *m != Some(*d))
    }

    /// Number of elements (1 for scalar, 0 for null); `None` on overflow.
    pub fn num_elements(&self) -> Option<u64> {
        match self.kind {
            SpaceKind::Null => Some(0),
            SpaceKind::Scalar => Some(1),
            SpaceKind::Simple => self.dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d)),
        }
    }

    /// Decode a dataspace message body.
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let c0 = c.offset();
        let version = c.u8()?;
        let rank = usize::from(c.u8()?);
        let flags = c.u8()?;
        if rank > limits::MAX_RANK {
            return Err(crate::Error::Limit {
                structure: c.structure(),
                offset: c0,
                what: "dataspace rank",
                value: rank as u64,
                limit: limits::MAX_RANK as u64,
            });
        }
        let kind = match version {
            1 => {
                c.skip(5)?;
                if rank == 0 {
                    SpaceKind::Scalar
                } else {
                    SpaceKind::Simple
                }
            }
            2 => match c.u8()? {
                0 => SpaceKind::Scalar,
                1 => SpaceKind::Simple,
                2 => SpaceKind::Null,
                t => return Err(c.malformed(format!("dataspace type {t}"))),
            },
            v => return Err(c.unsupported(format!("dataspace version {v}"))),
        };
        let n = usize::from(sizes.length);
        let mut dims = Vec::with_capacity(rank);
        for _ in 0..rank {
            dims.push(c.uint(n)?);
        }
        let max_dims = if flags & 1 != 0 {
            let mut m = Vec::with_capacity(rank);
            for _ in 0..rank {
                let v = c.uint(n)?;
                m.push(if is_undefined(v, n) { None } else { Some(v) });
            }
            m
        } else {
            dims.iter().map(|&d| Some(d)).collect()
        };
        // libhdf5 (H5S__decode) refuses a current size above its maximum.
        if let Some((i, (d, m))) = dims
            .iter()
            .zip(&max_dims)
            .enumerate()
            .find(|(_, (d, m))| m.is_some_and(|m| **d > m))
        {
            return Err(crate::Error::malformed(
                c.structure(),
                c0,
                format!(
                    "dimension {i}: current size {d} exceeds the maximum {}",
                    m.unwrap_or(0)
                ),
            ));
        }
        // Permutation indices (v1 flag bit 1) are never used by the library; skipped.
        let kind = if kind == SpaceKind::Simple && rank == 0 {
            SpaceKind::Scalar
        } else {
            kind
        };
        Ok(Dataspace {
            kind,
            dims,
            max_dims,
        })
    }

    /// Encode as a version 2 dataspace message with `sizes.length`-byte sizes.
    /// Maximum sizes are written when some differ from the current ones.
    pub fn encode(&self, sizes: Sizes) -> Vec<u8> {
        let n = usize::from(sizes.length);
        let mut out = vec![2u8];
        match self.kind {
            SpaceKind::Scalar => out.extend_from_slice(&[0, 0, 0]),
            SpaceKind::Null => out.extend_from_slice(&[0, 0, 2]),
            SpaceKind::Simple => {
                let has_max = self.has_max();
                out.push(self.dims.len() as u8);
                out.push(u8::from(has_max));
                out.push(1);
                for &d in &self.dims {
                    put_var(&mut out, d, n);
                }
                if has_max {
                    for m in &self.max_dims {
                        put_var(&mut out, m.unwrap_or(UNDEF), n);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_v2_bytes_and_round_trip() {
        let s = Dataspace::with_max(&[3], &[None]);
        let b = s.encode(Sizes::default());
        assert_eq!(&b[..4], &[2, 1, 1, 1]);
        assert_eq!(&b[4..12], &3u64.to_le_bytes());
        assert_eq!(&b[12..20], &[0xFF; 8]);
        assert_eq!(dec(&b).unwrap(), s);
        assert_eq!(
            Dataspace::scalar().encode(Sizes::default()),
            vec![2, 0, 0, 0]
        );
        assert_eq!(Dataspace::null().encode(Sizes::default()), vec![2, 0, 0, 2]);
        for s in [
            Dataspace::scalar(),
            Dataspace::null(),
            Dataspace::simple(&[4, 5, 6]),
            Dataspace::simple(&[0]),
            Dataspace::with_max(&[2, 7], &[Some(9), None]),
        ] {
            assert_eq!(dec(&s.encode(Sizes::default())).unwrap(), s, "{s:?}");
        }
        // a fixed space stores no maximum sizes
        assert_eq!(Dataspace::simple(&[4]).encode(Sizes::default()).len(), 12);
    }

    fn dec(b: &[u8]) -> Result<Dataspace> {
        Dataspace::decode(&mut Cursor::new(b, 0, "dataspace"), Sizes::default())
    }

    #[test]
    fn v1_simple_with_max() {
        let mut b = vec![1u8, 2, 1, 0, 0, 0, 0, 0];
        b.extend_from_slice(&3u64.to_le_bytes());
        b.extend_from_slice(&4u64.to_le_bytes());
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        b.extend_from_slice(&4u64.to_le_bytes());
        let s = dec(&b).unwrap();
        assert_eq!(s.kind, SpaceKind::Simple);
        assert_eq!(s.dims, vec![3, 4]);
        assert_eq!(s.max_dims, vec![None, Some(4)]);
        assert_eq!(s.num_elements(), Some(12));
    }

    #[test]
    fn v2_scalar_null() {
        assert_eq!(dec(&[2, 0, 0, 0]).unwrap().kind, SpaceKind::Scalar);
        let n = dec(&[2, 0, 0, 2]).unwrap();
        assert_eq!(n.kind, SpaceKind::Null);
        assert_eq!(n.num_elements(), Some(0));
        assert_eq!(
            dec(&[1, 0, 0, 0, 0, 0, 0, 0]).unwrap().kind,
            SpaceKind::Scalar
        );
    }

    #[test]
    fn current_size_above_maximum_is_refused() {
        let mut b = vec![2u8, 2, 1, 1];
        for v in [3u64, 9, 3, 8] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let e = dec(&b).unwrap_err().to_string();
        assert!(
            e.contains("dimension 1: current size 9 exceeds the maximum 8"),
            "{e}"
        );
        // equal sizes and unlimited maxima are fine
        let mut b = vec![2u8, 2, 1, 1];
        for v in [3u64, 9, 3, u64::MAX] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(dec(&b).unwrap().max_dims, vec![Some(3), None]);
    }

    #[test]
    fn malformed() {
        assert!(dec(&[2, 1, 0, 1, 5]).is_err());
        assert!(dec(&[3, 0, 0, 0]).is_err());
        assert!(dec(&[2, 0, 0, 9]).is_err());
        assert!(dec(&[2, 200, 0, 1]).is_err());
        assert!(dec(&[]).is_err());
    }
}
