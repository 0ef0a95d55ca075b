//! HDF5 values as medh5 reads them: attributes and scalar datasets decoded
//! to canonical JSON (numbers keep their Python type, strings their bytes),
//! string elements with their padding removed, and single numbers of any
//! stored width and byte order. The sample, labelmap, verify and validate
//! code all read values through these.

use super::canonical_json::Json;
use super::model::half::f16_to_f64;
use crate::error::{Error, Result};
use purehdf::low_level::attribute::Attribute;
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::{ByteOrder, Datatype, StringPad};
use purehdf::low_level::file::File;
use purehdf::low_level::selection::Selection;

/// Cap on the number of elements of one attribute decoded to JSON.
const MAX_ATTR_ELEMENTS: u64 = 1 << 20;

/// Read a scalar (or one-element) string dataset's bytes.
pub fn read_scalar_string(file: &File, ds: &Dataset) -> Result<Vec<u8>> {
    let size = usize::try_from(ds.dtype().size()).map_err(|_| too_large(ds.path()))?;
    if ds.num_elements() != 1 {
        return Err(Error::Code {
            code: "E004".into(),
            message: format!("{} is not a scalar string", ds.path()),
        });
    }
    let mut buf = vec![0u8; size];
    ds.read_raw(&Selection::All, &mut buf)?;
    string_element(file, ds.dtype(), &buf)
}

fn too_large(path: &str) -> Error {
    Error::invalid(format!("{path}: too large"))
}

/// The bytes of one string element (vlen: from the global heap; fixed: with
/// its padding removed).
pub fn string_element(file: &File, dt: &Datatype, el: &[u8]) -> Result<Vec<u8>> {
    match dt {
        Datatype::VarString { .. } => Ok(file.vlen_bytes(el)?),
        Datatype::String { pad, .. } => Ok(strip_padding(el, *pad).to_vec()),
        _ => Err(Error::Code {
            code: "E004".into(),
            message: "not a string type".into(),
        }),
    }
}

/// A fixed-length string element without its padding.
pub fn strip_padding(el: &[u8], pad: StringPad) -> &[u8] {
    match pad {
        StringPad::NullTerm => el.split(|&b| b == 0).next().unwrap_or(&[]),
        StringPad::NullPad => {
            let end = el.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
            el.get(..end).unwrap_or(&[])
        }
        StringPad::SpacePad => {
            let end = el.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
            el.get(..end).unwrap_or(&[])
        }
    }
}

/// Decode every attribute to `(name, JSON)`.
pub fn attrs_json(file: &File, attrs: &[Attribute]) -> Result<Vec<(String, Json)>> {
    attrs
        .iter()
        .map(|a| Ok((a.name.clone(), attr_json(file, a)?)))
        .collect()
}

/// An attribute value as the JSON of §5.5: strings (string arrays flatten),
/// bools, integers, floats widened to f64, nested by shape.
pub fn attr_json(file: &File, a: &Attribute) -> Result<Json> {
    let n = a.num_elements();
    if n > MAX_ATTR_ELEMENTS {
        return Err(too_large(&a.name));
    }
    let size = usize::try_from(a.dtype.size()).map_err(|_| too_large(&a.name))?;
    if size == 0 {
        return Ok(Json::Str(describe_type(&a.dtype)));
    }
    let elems: Vec<&[u8]> = a.data.chunks_exact(size).take(n as usize).collect();
    if (elems.len() as u64) < n {
        return Err(Error::Code {
            code: "E004".into(),
            message: format!("attribute {}: value shorter than its dataspace", a.name),
        });
    }
    let shape = a.shape();
    match &a.dtype {
        Datatype::String { .. } | Datatype::VarString { .. } => {
            let strs = elems
                .iter()
                .map(|el| {
                    let b = string_element(file, &a.dtype, el)?;
                    Ok(Json::Str(String::from_utf8_lossy(&b).into_owned()))
                })
                .collect::<Result<Vec<Json>>>()?;
            if shape.is_empty() {
                Ok(strs.into_iter().next().unwrap_or(Json::Null))
            } else {
                Ok(Json::Array(strs))
            }
        }
        dt => {
            let vals = elems
                .iter()
                .map(|el| scalar_json(dt, el))
                .collect::<Option<Vec<Json>>>();
            match vals {
                Some(v) => Ok(super::attribute::nest(v.into_iter(), shape)),
                None => Ok(Json::Str(describe_type(dt))),
            }
        }
    }
}

/// One numeric/bool element as JSON, `None` for types without a number form.
pub fn scalar_json(dt: &Datatype, el: &[u8]) -> Option<Json> {
    match dt {
        Datatype::Integer {
            size,
            order,
            signed,
            ..
        } => {
            let v = int_value(el, *size, *order, *signed)?;
            Some(match v {
                IntValue::S(i) => Json::Int(i),
                IntValue::U(u) => match i64::try_from(u) {
                    Ok(i) => Json::Int(i),
                    Err(_) => Json::UInt(u),
                },
            })
        }
        Datatype::Float { size, order, .. } => float_value(el, *size, *order).map(Json::Float),
        Datatype::Enum { base, members } => {
            if super::integrity::is_bool_enum(base, members) {
                Some(Json::Bool(el.first().copied()? != 0))
            } else {
                scalar_json(base, el)
            }
        }
        _ => None,
    }
}

enum IntValue {
    S(i64),
    U(u64),
}

fn le_bytes(el: &[u8], size: u32, order: ByteOrder) -> Option<[u8; 8]> {
    let n = size as usize;
    if n == 0 || n > 8 {
        return None;
    }
    let src = el.get(..n)?;
    let mut b = [0u8; 8];
    for (i, &v) in src.iter().enumerate() {
        let j = if order == ByteOrder::Big {
            n - 1 - i
        } else {
            i
        };
        *b.get_mut(j)? = v;
    }
    Some(b)
}

fn int_value(el: &[u8], size: u32, order: ByteOrder, signed: bool) -> Option<IntValue> {
    let b = le_bytes(el, size, order)?;
    let raw = u64::from_le_bytes(b);
    let bits = size * 8;
    if signed {
        let shift = 64 - bits;
        Some(IntValue::S(((raw << shift) as i64) >> shift))
    } else {
        Some(IntValue::U(raw))
    }
}

/// A float element (2, 4 or 8 bytes) widened to f64.
pub fn float_value(el: &[u8], size: u32, order: ByteOrder) -> Option<f64> {
    let b = le_bytes(el, size, order)?;
    match size {
        2 => Some(f16_to_f64(u16::from_le_bytes([b[0], b[1]]))),
        4 => Some(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        8 => Some(f64::from_le_bytes(b)),
        _ => None,
    }
}

fn describe_type(dt: &Datatype) -> String {
    format!("<unsupported type of {} bytes>", dt.size())
}
