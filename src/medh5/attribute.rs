//! Typed attribute values as medh5 writes them (see
//! `docs/medh5-format.md` §2.3 encoding rules: string → scalar vlen UTF-8,
//! string list → 1-D vlen UTF-8, integers → int64 (class ids uint16),
//! floats → float64, matrix → 2-D float64, bool → FALSE/TRUE int8 enum), their
//! HDF5 datatypes and their canonical JSON rendering (§5.5).

use super::canonical_json::Json;
use purehdf::low_level::datatype::{CharSet, Datatype, EnumMember, StringPad};

/// One attribute value with its shape (`shape` empty = scalar dataspace).
///
/// In the numeric variants `shape` is the attribute's dataspace (`[]` for a
/// scalar, `[n]` for a list, `[r, c]` for a matrix) and `values` holds its
/// elements in C order, one per element of `shape` (one for a scalar).
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// Scalar vlen UTF-8 string.
    Str(String),
    /// 1-D vlen UTF-8 string array.
    StrList(Vec<String>),
    /// int64 values.
    I64 {
        /// Dataspace dimensions; empty = scalar.
        shape: Vec<u64>,
        /// Elements in C order.
        values: Vec<i64>,
    },
    /// uint16 values (class id arrays).
    U16 {
        /// Dataspace dimensions; empty = scalar.
        shape: Vec<u64>,
        /// Elements in C order.
        values: Vec<u16>,
    },
    /// float64 values.
    F64 {
        /// Dataspace dimensions; empty = scalar.
        shape: Vec<u64>,
        /// Elements in C order.
        values: Vec<f64>,
    },
    /// bool values (stored as the FALSE/TRUE enum over int8).
    Bool {
        /// Dataspace dimensions; empty = scalar.
        shape: Vec<u64>,
        /// Elements in C order.
        values: Vec<bool>,
    },
}

/// The vlen UTF-8 NULLTERM string type (element = 16-byte global-heap pointer).
pub fn vlen_utf8() -> Datatype {
    Datatype::VarString {
        size: 16,
        pad: StringPad::NullTerm,
        cset: CharSet::Utf8,
    }
}

/// The h5py/NumPy bool type: enum over int8 with `FALSE` = 0, `TRUE` = 1.
pub fn bool_enum() -> Datatype {
    Datatype::Enum {
        base: Box::new(Datatype::int(1, true)),
        members: vec![
            EnumMember {
                name: "FALSE".to_string(),
                value: vec![0],
            },
            EnumMember {
                name: "TRUE".to_string(),
                value: vec![1],
            },
        ],
    }
}

impl AttrValue {
    /// A 1-D int64 array.
    pub fn i64s(values: &[i64]) -> Self {
        AttrValue::I64 {
            shape: vec![values.len() as u64],
            values: values.to_vec(),
        }
    }
    /// A scalar int64.
    pub fn i64(v: i64) -> Self {
        AttrValue::I64 {
            shape: vec![],
            values: vec![v],
        }
    }
    /// A 1-D float64 array.
    pub fn f64s(values: &[f64]) -> Self {
        AttrValue::F64 {
            shape: vec![values.len() as u64],
            values: values.to_vec(),
        }
    }
    /// A scalar float64.
    pub fn f64(v: f64) -> Self {
        AttrValue::F64 {
            shape: vec![],
            values: vec![v],
        }
    }
    /// A 1-D uint16 array.
    pub fn u16s(values: &[u16]) -> Self {
        AttrValue::U16 {
            shape: vec![values.len() as u64],
            values: values.to_vec(),
        }
    }
    /// A scalar bool.
    pub fn bool(v: bool) -> Self {
        AttrValue::Bool {
            shape: vec![],
            values: vec![v],
        }
    }
    /// A scalar string.
    pub fn str(s: &str) -> Self {
        AttrValue::Str(s.to_string())
    }
    /// A 1-D string list.
    pub fn strs<S: AsRef<str>>(items: &[S]) -> Self {
        AttrValue::StrList(items.iter().map(|s| s.as_ref().to_string()).collect())
    }

    /// The HDF5 datatype the writer stores.
    pub fn datatype(&self) -> Datatype {
        match self {
            AttrValue::Str(_) | AttrValue::StrList(_) => vlen_utf8(),
            AttrValue::I64 { .. } => Datatype::int(8, true),
            AttrValue::U16 { .. } => Datatype::int(2, false),
            AttrValue::F64 { .. } => Datatype::float(8),
            AttrValue::Bool { .. } => bool_enum(),
        }
    }

    /// Dataspace dimensions (empty = scalar).
    pub fn shape(&self) -> Vec<u64> {
        match self {
            AttrValue::Str(_) => vec![],
            AttrValue::StrList(v) => vec![v.len() as u64],
            AttrValue::I64 { shape, .. }
            | AttrValue::U16 { shape, .. }
            | AttrValue::F64 { shape, .. }
            | AttrValue::Bool { shape, .. } => shape.clone(),
        }
    }

    /// Little-endian element bytes of a numeric value (`None` for strings,
    /// whose elements the writer puts in the global heap).
    pub fn raw_bytes(&self) -> Option<Vec<u8>> {
        match self {
            AttrValue::Str(_) | AttrValue::StrList(_) => None,
            AttrValue::I64 { values, .. } => {
                Some(values.iter().flat_map(|v| v.to_le_bytes()).collect())
            }
            AttrValue::U16 { values, .. } => {
                Some(values.iter().flat_map(|v| v.to_le_bytes()).collect())
            }
            AttrValue::F64 { values, .. } => {
                Some(values.iter().flat_map(|v| v.to_le_bytes()).collect())
            }
            AttrValue::Bool { values, .. } => Some(values.iter().map(|&b| u8::from(b)).collect()),
        }
    }

    /// The string elements (scalar = one element).
    pub fn strings(&self) -> Option<Vec<&str>> {
        match self {
            AttrValue::Str(s) => Some(vec![s.as_str()]),
            AttrValue::StrList(v) => Some(v.iter().map(String::as_str).collect()),
            _ => None,
        }
    }

    /// Canonical JSON rendering (§5.5): strings as strings, string arrays as
    /// flat lists, numbers nested by shape, floats in Python repr.
    pub fn to_json(&self) -> Json {
        match self {
            AttrValue::Str(s) => Json::Str(s.clone()),
            AttrValue::StrList(v) => Json::Array(v.iter().map(|s| Json::Str(s.clone())).collect()),
            AttrValue::I64 { shape, values } => nest(values.iter().map(|&v| Json::Int(v)), shape),
            AttrValue::U16 { shape, values } => {
                nest(values.iter().map(|&v| Json::Int(i64::from(v))), shape)
            }
            AttrValue::F64 { shape, values } => nest(values.iter().map(|&v| Json::Float(v)), shape),
            AttrValue::Bool { shape, values } => nest(values.iter().map(|&v| Json::Bool(v)), shape),
        }
    }
}

/// Nest a flat C-order sequence into lists following `shape` (scalar when
/// `shape` is empty).
pub fn nest(items: impl Iterator<Item = Json>, shape: &[u64]) -> Json {
    let flat: Vec<Json> = items.collect();
    if shape.is_empty() {
        return flat.into_iter().next().unwrap_or(Json::Null);
    }
    fn build(flat: &[Json], shape: &[u64]) -> Json {
        match shape.split_first() {
            None => flat.first().cloned().unwrap_or(Json::Null),
            Some((&n, rest)) => {
                let stride: usize = rest.iter().map(|&d| d as usize).product();
                Json::Array(
                    (0..n as usize)
                        .map(|i| {
                            let lo = (i * stride).min(flat.len());
                            let hi = ((i + 1) * stride).min(flat.len());
                            if rest.is_empty() {
                                flat.get(i).cloned().unwrap_or(Json::Null)
                            } else {
                                build(flat.get(lo..hi).unwrap_or(&[]), rest)
                            }
                        })
                        .collect(),
                )
            }
        }
    }
    build(&flat, shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_renders_nested() {
        let v = AttrValue::F64 {
            shape: vec![3, 3],
            values: vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        };
        assert_eq!(
            v.to_json().to_canonical(),
            "[[1.0,0.0,0.0],[0.0,1.0,0.0],[0.0,0.0,1.0]]"
        );
        assert_eq!(v.shape(), vec![3, 3]);
    }

    #[test]
    fn scalars_and_lists() {
        assert_eq!(AttrValue::i64(65534).to_json().to_canonical(), "65534");
        assert_eq!(AttrValue::bool(false).to_json().to_canonical(), "false");
        assert_eq!(AttrValue::u16s(&[]).to_json().to_canonical(), "[]");
        assert_eq!(
            AttrValue::strs(&["z", "y"]).to_json().to_canonical(),
            r#"["z","y"]"#
        );
        assert_eq!(
            AttrValue::f64(0.5).raw_bytes().unwrap(),
            0.5f64.to_le_bytes()
        );
        assert_eq!(AttrValue::bool(true).datatype().size(), 1);
        assert_eq!(vlen_utf8().size(), 16);
    }
}
