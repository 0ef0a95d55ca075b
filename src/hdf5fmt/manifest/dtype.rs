//! HDF5 datatypes as Zarr format 2 dtypes (numpy `dtype.str` and structured
//! field lists) describing the file's own bytes, so chunks are read as stored.

use crate::datatype::Datatype;

/// A Zarr (numpy) dtype laid out exactly as the HDF5 type is in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZarrDtype {
    /// A numpy `dtype.str` (`<f4`, `>i2`, `|S10`, `|b1`, `|V16`, `<c8`).
    Scalar(String),
    /// A structured dtype: fields in file order, gaps filled with `|V` fields
    /// named `_pad<offset>`.
    Structured(Vec<ZarrField>),
}

/// One field of a structured [`ZarrDtype`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZarrField {
    /// Field name.
    pub name: String,
    /// Field type.
    pub dtype: ZarrDtype,
    /// Sub-array shape (empty for a plain field).
    pub shape: Vec<u64>,
}

impl ZarrDtype {
    /// Size in bytes of one element.
    pub fn itemsize(&self) -> u64 {
        match self {
            ZarrDtype::Scalar(s) => s.get(2..).and_then(|n| n.parse().ok()).unwrap_or(0),
            ZarrDtype::Structured(fields) => fields
                .iter()
                .map(|f| f.dtype.itemsize().saturating_mul(f.shape.iter().product()))
                .sum(),
        }
    }
}

/// The Zarr dtype whose bytes are the file's, or what makes it impossible.
pub(crate) fn map(dt: &Datatype) -> Result<ZarrDtype, String> {
    let same_size = |s: String| -> Result<ZarrDtype, String> {
        // numpy's long double (`<f16`, `<c32`) has no zarr data type
        let wide = match s.as_bytes().get(1) {
            Some(b'f') => dt.size() > 8,
            Some(b'c') => dt.size() > 16,
            _ => false,
        };
        if wide {
            return Err(format!("datatype {dt} ({s}) has no zarr data type"));
        }
        let z = ZarrDtype::Scalar(s);
        if z.itemsize() == dt.size() {
            Ok(z)
        } else {
            Err(format!(
                "datatype {dt} has no numpy type of its stored size"
            ))
        }
    };
    match dt {
        Datatype::Integer { .. }
        | Datatype::Float { .. }
        | Datatype::Bitfield { .. }
        | Datatype::Complex { .. }
        | Datatype::String { .. } => same_size(
            dt.numpy_str()
                .ok_or_else(|| format!("datatype {dt} has no numpy type"))?,
        ),
        Datatype::Opaque { size, .. } => Ok(ZarrDtype::Scalar(format!("|V{size}"))),
        Datatype::Enum { base, .. } => {
            if dt.is_bool_enum() && base.size() == 1 {
                Ok(ZarrDtype::Scalar("|b1".into()))
            } else {
                map(base)
            }
        }
        Datatype::Compound { size, members } => {
            if let Some(part) = dt.complex_compound_part() {
                if let Ok(z) = same_size(format!(
                    "{}c{}",
                    &part[..1],
                    2 * part[2..].parse::<u64>().unwrap_or(0)
                )) {
                    return Ok(z);
                }
            }
            let mut sorted: Vec<_> = members.iter().collect();
            sorted.sort_by_key(|m| m.offset);
            let mut fields = Vec::new();
            let mut at = 0u64;
            for m in sorted {
                let off = u64::from(m.offset);
                if off < at {
                    return Err(format!("compound member {} overlaps another", m.name));
                }
                if off > at {
                    fields.push(pad(at, off - at));
                }
                let inner = match &m.dtype {
                    Datatype::Array { .. } => {
                        return Err(format!(
                            "compound member {} is an array (zarr has no sub-array fields)",
                            m.name
                        ))
                    }
                    other => map(other)?,
                };
                if matches!(inner, ZarrDtype::Structured(_)) {
                    return Err(format!(
                        "compound member {} is a compound (zarr has no nested fields)",
                        m.name
                    ));
                }
                let shape = Vec::new();
                at = off + m.dtype.size();
                fields.push(ZarrField {
                    name: m.name.clone(),
                    dtype: inner,
                    shape,
                });
            }
            let size = u64::from(*size);
            if at > size {
                return Err("compound members end past its size".into());
            }
            if at < size {
                fields.push(pad(at, size - at));
            }
            Ok(ZarrDtype::Structured(fields))
        }
        Datatype::Array { .. } => Err(format!(
            "array datatype {dt} as the element type (zarr has no sub-array elements)"
        )),
        Datatype::Reference { .. } => Err("references have no zarr dtype".into()),
        Datatype::VarString { .. } | Datatype::VarSequence { .. } => {
            Err(format!("variable-length datatype {dt}"))
        }
        Datatype::Time { .. } => Err("time datatype has no numpy type".into()),
    }
}

fn pad(at: u64, len: u64) -> ZarrField {
    ZarrField {
        name: format!("_pad{at}"),
        dtype: ZarrDtype::Scalar(format!("|V{len}")),
        shape: Vec::new(),
    }
}
