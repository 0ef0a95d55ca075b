//! Attribute values as JSON, rendered the way the corpus oracle (`make_expected.py`,
//! `_to_json_value`) renders what h5py returns: numbers as numbers (NaN and
//! infinities as the strings `nan`, `inf`, `-inf`), booleans, strings decoded as
//! UTF-8 with `\xNN` escapes for bad bytes, complex numbers as `[re, im]`, records
//! as objects, references as `"<reference>"`, numeric arrays as nested lists and
//! record or object arrays as flat lists. Values of more than 64 elements, or whose
//! JSON is longer than 4096 characters, are hashed instead.

use serde_json::{Map, Number, Value};

use super::canonical::{
    canonical_bytes, convert_fixed_string, flatten_array, hex, relabel_little, tlv_bytes,
    vlen_keeps_file_order, vlen_string_bytes, DataHasher, HashKind, VlenResolver,
};
use super::float;
use super::numpy::has_object;
use purehdf::low_level::datatype::enum_value;
use purehdf::low_level::datatype::Datatype;
use purehdf::{Error, Result};

/// Largest number of elements rendered as a JSON value.
pub const MAX_PREVIEW: u64 = 64;
/// Longest JSON text (as Python's `json.dumps` writes it) kept as a value.
pub const MAX_PREVIEW_JSON: usize = 4096;

/// An attribute's content in the dump: a JSON value or a hash.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrData {
    /// The value itself as h5py would present it (small enough to preview).
    Value(Value),
    /// A digest in place of the value, when it has no JSON preview or is too large for one
    /// (over [`MAX_PREVIEW`] elements or [`MAX_PREVIEW_JSON`] characters of JSON).
    Hash {
        /// How the hashed bytes were formed from the elements.
        kind: HashKind,
        /// SHA-256 of those bytes, as lowercase hexadecimal.
        sha256: String,
    },
}

fn bad(what: &str) -> Error {
    Error::InvalidArgument(format!("attribute value: {what}"))
}

fn slice(s: &[u8], off: u64, len: u64) -> Result<&[u8]> {
    let a = usize::try_from(off).map_err(|_| bad("offset"))?;
    let n = usize::try_from(len).map_err(|_| bad("length"))?;
    a.checked_add(n)
        .and_then(|b| s.get(a..b))
        .ok_or_else(|| bad("data shorter than its datatype"))
}

/// Decode bytes as UTF-8, writing each invalid byte as `\xNN` (Python's
/// `errors="backslashreplace"`).
pub fn decode_backslashreplace(mut b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    loop {
        match std::str::from_utf8(b) {
            Ok(v) => {
                s.push_str(v);
                return s;
            }
            Err(e) => {
                let good = e.valid_up_to();
                s.push_str(std::str::from_utf8(&b[..good]).unwrap_or_default());
                let bad_len = e.error_len().unwrap_or(b.len() - good).max(1);
                for x in &b[good..good + bad_len] {
                    s.push_str(&format!("\\x{x:02x}"));
                }
                b = &b[good + bad_len..];
            }
        }
    }
}

/// A Python float as the oracle writes it: a number, or `"nan"`, `"inf"`, `"-inf"`.
pub fn float_json(x: f64) -> Value {
    if x.is_nan() {
        Value::String("nan".into())
    } else if x.is_infinite() {
        Value::String(if x > 0.0 { "inf" } else { "-inf" }.into())
    } else {
        Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

fn le_uint(b: &[u8]) -> u128 {
    let mut a = [0u8; 16];
    let n = b.len().min(16);
    a[..n].copy_from_slice(&b[..n]);
    u128::from_le_bytes(a)
}

fn int_json(canon: &[u8], signed: bool) -> Value {
    let v = le_uint(canon);
    let bits = canon.len() * 8;
    if signed && bits > 0 && bits < 128 && (v >> (bits - 1)) & 1 == 1 {
        let neg = (v | !((1u128 << bits) - 1)) as i128;
        Value::Number(Number::from(neg as i64))
    } else {
        Value::Number(Number::from(v as u64))
    }
}

/// The value of one numpy float item given its canonical little-endian bytes.
fn np_float_value(canon: &[u8]) -> f64 {
    match canon.len() {
        2 => float::to_f64(float::decode(
            le_uint(canon),
            &purehdf::low_level::datatype::FloatLayout::ieee(2),
        )),
        4 => f64::from(f32::from_le_bytes([canon[0], canon[1], canon[2], canon[3]])),
        8 => {
            let mut a = [0u8; 8];
            a.copy_from_slice(canon);
            f64::from_le_bytes(a)
        }
        16 => {
            let x87 = purehdf::low_level::datatype::FloatLayout {
                bit_offset: 0,
                precision: 80,
                sign_pos: 79,
                exp_pos: 64,
                exp_size: 15,
                mant_pos: 0,
                mant_size: 64,
                exp_bias: 16383,
                norm: 0,
                pad: [false; 3],
            };
            float::to_f64(float::decode(le_uint(canon), &x87))
        }
        _ => f64::NAN,
    }
}

/// `_to_json_value` of one numpy item of `dt` (an array type is a nested list).
pub fn item_json(dt: &Datatype, s: &[u8], r: VlenResolver) -> Result<Value> {
    Ok(match dt {
        Datatype::Integer { signed, .. } => {
            let mut c = Vec::new();
            canonical_bytes(dt, s, &mut c)?;
            int_json(&c, *signed)
        }
        Datatype::Bitfield { .. } => {
            let mut c = Vec::new();
            canonical_bytes(dt, s, &mut c)?;
            int_json(&c, false)
        }
        Datatype::Enum { base, .. } => {
            if dt.is_bool_enum() {
                Value::Bool(enum_value(base, s).unwrap_or(0) != 0)
            } else {
                item_json(base, s, r)?
            }
        }
        Datatype::Float { size, layout, .. } => {
            layout
                .numpy_float_size(*size)
                .ok_or_else(|| bad("float without numpy type"))?;
            let mut c = Vec::new();
            canonical_bytes(dt, s, &mut c)?;
            float_json(np_float_value(&c))
        }
        Datatype::Complex { size: 32, base } => {
            let part = |b: &[u8]| match &**base {
                Datatype::Float { order, layout, .. } => float_json(float::to_f64(float::decode(
                    float::load_bits(b, *order),
                    layout,
                ))),
                _ => Value::Null,
            };
            Value::Array(vec![part(slice(s, 0, 16)?), part(slice(s, 16, 16)?)])
        }
        Datatype::Complex { base, .. } => {
            let h = base.size();
            Value::Array(vec![
                item_json(base, slice(s, 0, h)?, r)?,
                item_json(base, slice(s, h, h)?, r)?,
            ])
        }
        Datatype::String { pad, .. } => {
            let mut b = Vec::new();
            convert_fixed_string(s, *pad, &mut b);
            while b.last() == Some(&0) {
                b.pop();
            }
            Value::String(decode_backslashreplace(&b))
        }
        Datatype::VarString { .. } => {
            Value::String(decode_backslashreplace(&vlen_string_bytes(s, r)?))
        }
        Datatype::VarSequence { base, .. } => {
            let n = vlen_count(s)?;
            let data = if n == 0 { Vec::new() } else { r(s)? };
            if vlen_keeps_file_order(base) {
                ndarray_json(&relabel_little(base), &[n], &data, r)?
            } else {
                ndarray_json(base, &[n], &data, r)?
            }
        }
        Datatype::Reference { .. } => Value::String("<reference>".into()),
        Datatype::Compound { members, .. } => {
            if dt.complex_compound_part().is_some() {
                let [re, im] = members.as_slice() else {
                    return Err(bad("complex compound"));
                };
                Value::Array(vec![
                    item_json(
                        &re.dtype,
                        slice(s, u64::from(re.offset), re.dtype.size())?,
                        r,
                    )?,
                    item_json(
                        &im.dtype,
                        slice(s, u64::from(im.offset), im.dtype.size())?,
                        r,
                    )?,
                ])
            } else {
                let mut map = Map::new();
                for m in members {
                    let v = item_json(&m.dtype, slice(s, u64::from(m.offset), m.dtype.size())?, r)?;
                    map.insert(m.name.clone(), v);
                }
                Value::Object(map)
            }
        }
        Datatype::Array { base, dims } => ndarray_json(base, dims, s, r)?,
        Datatype::Opaque { .. } | Datatype::Time { .. } => Value::String(format!("hex:{}", hex(s))),
    })
}

fn vlen_count(s: &[u8]) -> Result<u64> {
    let b = s.get(..4).ok_or_else(|| bad("vlen element"))?;
    Ok(u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
}

/// True when numpy gives `dt` field names (a compound that is not a complex number).
fn is_structured(dt: &Datatype) -> bool {
    matches!(dt, Datatype::Compound { .. }) && dt.complex_compound_part().is_none()
}

/// `_to_json_value` of a numpy array of shape `shape` (with `dt`'s own array
/// dimensions appended) stored in `data`.
pub fn ndarray_json(dt: &Datatype, shape: &[u64], data: &[u8], r: VlenResolver) -> Result<Value> {
    ndarray_preview(dt, shape, data, r)?.ok_or_else(|| bad("value too large to show"))
}

/// [`ndarray_json`], or `None` (nothing built) when its text could not fit
/// a preview of [`MAX_PREVIEW_JSON`] characters. A zero dimension empties the
/// data but not the lists before it (shape [n, 0] is n empty lists), so the
/// bound is on the values, not the bytes.
fn ndarray_preview(
    dt: &Datatype,
    shape: &[u64],
    data: &[u8],
    r: VlenResolver,
) -> Result<Option<Value>> {
    let (leaf, _) = flatten_array(dt);
    let full = full_shape(dt, shape);
    if min_json_len_of(leaf, &full) > MAX_PREVIEW_JSON as u64 {
        return Ok(None);
    }
    let total = full
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| bad("too many elements"))?;
    let ls = leaf.size();
    if total > 0 && ls == 0 {
        return Err(bad("zero-sized element"));
    }
    if is_structured(leaf) || has_object(leaf) {
        let mut items = Vec::with_capacity(total.min(1 << 16) as usize);
        for i in 0..total {
            items.push(item_json(leaf, slice(data, i * ls, ls)?, r)?);
        }
        return Ok(Some(Value::Array(items)));
    }
    nested(leaf, &full, data, 0, r).map(|(v, _)| Some(v))
}

/// `shape` with `dt`'s own array dimensions (nested arrays too) appended.
fn full_shape(dt: &Datatype, shape: &[u64]) -> Vec<u64> {
    let mut full: Vec<u64> = shape.to_vec();
    let mut cur = dt;
    while let Datatype::Array { base, dims } = cur {
        full.extend_from_slice(dims);
        cur = base;
    }
    full
}

/// A lower bound of the length of the JSON text `ndarray_json` writes for an
/// array of `dt` of shape `shape`: one character for every value it holds
/// (each list, record and leaf), counted without building any, saturating.
/// Larger than [`MAX_PREVIEW_JSON`] means the oracle hashes instead.
fn min_json_len(dt: &Datatype, shape: &[u64]) -> u64 {
    min_json_len_of(flatten_array(dt).0, &full_shape(dt, shape))
}

/// [`min_json_len`] of `leaf` items in an array of shape `full` (the leaf's
/// array dimensions already appended).
fn min_json_len_of(leaf: &Datatype, full: &[u64]) -> u64 {
    let total = full.iter().fold(1u64, |a, &d| a.saturating_mul(d));
    if is_structured(leaf) || has_object(leaf) {
        // one flat list of the items (numpy's reshape(-1))
        return 1u64.saturating_add(total.saturating_mul(min_item_len(leaf)));
    }
    // nested lists: every level's lists, then the leaves
    let mut values = 1u64;
    let mut count = 1u64;
    for &d in full {
        count = count.saturating_mul(d);
        values = values.saturating_add(count);
    }
    values
}

/// A lower bound of the length of `item_json`'s text for one `dt` item.
fn min_item_len(dt: &Datatype) -> u64 {
    match dt {
        Datatype::Array { base, dims } => min_json_len(base, dims),
        Datatype::Compound { members, .. } => members
            .iter()
            .fold(2u64, |a, m| a.saturating_add(min_item_len(&m.dtype))),
        _ => 1,
    }
}

fn nested(
    leaf: &Datatype,
    shape: &[u64],
    data: &[u8],
    start: u64,
    r: VlenResolver,
) -> Result<(Value, u64)> {
    let ls = leaf.size();
    match shape.split_first() {
        // numpy's `tolist()` gives opaque items as `bytes`, which the oracle
        // decodes (a lone np.void scalar is `hex:`)
        None if matches!(leaf, Datatype::Opaque { .. }) => Ok((
            Value::String(decode_backslashreplace(slice(data, start * ls, ls)?)),
            start + 1,
        )),
        None => Ok((item_json(leaf, slice(data, start * ls, ls)?, r)?, start + 1)),
        Some((&n, rest)) => {
            let mut items = Vec::new();
            let mut pos = start;
            for _ in 0..n {
                let (v, next) = nested(leaf, rest, data, pos, r)?;
                items.push(v);
                pos = next;
            }
            Ok((Value::Array(items), pos))
        }
    }
}

/// The content of an attribute of type `dt` and dataspace `shape` (`None` = null
/// dataspace) whose stored elements are `data` (file layout).
pub fn attr_value(
    dt: &Datatype,
    shape: Option<&[u64]>,
    data: &[u8],
    r: VlenResolver,
) -> Result<AttrData> {
    let Some(shape) = shape else {
        let mut m = Map::new();
        m.insert("empty".into(), Value::Bool(true));
        return Ok(AttrData::Value(Value::Object(m)));
    };
    let (leaf, mult) = flatten_array(dt);
    let count = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| bad("too many elements"))?;
    let esize = dt.size();
    let need = count.checked_mul(esize).ok_or_else(|| bad("too large"))?;
    let data = slice(data, 0, need)?;
    let is_array = matches!(dt, Datatype::Array { .. });

    // A scalar vlen sequence is returned by h5py as its inner array.
    if shape.is_empty() && !is_array {
        if let Datatype::VarSequence { base, .. } = dt {
            let n = vlen_count(data)?;
            let inner = if n == 0 { Vec::new() } else { r(data)? };
            let (_, imult) = flatten_array(base);
            let size = n.saturating_mul(imult);
            if size <= MAX_PREVIEW {
                if let Some(v) = ndarray_preview(base, &[n], &inner, r)? {
                    if py_json_len(&v) <= MAX_PREVIEW_JSON {
                        return Ok(AttrData::Value(v));
                    }
                }
            }
            return inner_array_hash(dt_base(dt), data, r);
        }
        let v = item_json(dt, data, r)?;
        if py_json_len(&v) <= MAX_PREVIEW_JSON {
            return Ok(AttrData::Value(v));
        }
        return hash_items(dt, data, r);
    }
    let size = count.saturating_mul(mult);
    if size <= MAX_PREVIEW {
        if let Some(v) = ndarray_preview(dt, shape, data, r)? {
            if py_json_len(&v) <= MAX_PREVIEW_JSON {
                return Ok(AttrData::Value(v));
            }
        }
    }
    hash_items(leaf, data, r)
}

fn dt_base(dt: &Datatype) -> &Datatype {
    match dt {
        Datatype::VarSequence { base, .. } => base,
        other => other,
    }
}

/// The hash of the inner array of one vlen sequence element `element` (what h5py
/// returns for a scalar vlen dataset or attribute): `raw-le-packed` for plain items.
pub fn inner_array_hash(base: &Datatype, element: &[u8], r: VlenResolver) -> Result<AttrData> {
    let n = vlen_count(element)?;
    let inner = if n == 0 { Vec::new() } else { r(element)? };
    let (ileaf, imult) = flatten_array(base);
    let size = n.saturating_mul(imult);
    let bytes = slice(&inner, 0, size.saturating_mul(ileaf.size()))?;
    hash_items(ileaf, bytes, r)
}

/// `_hash_data` of an array of `leaf` items.
fn hash_items(leaf: &Datatype, data: &[u8], r: VlenResolver) -> Result<AttrData> {
    let kind = if has_object(leaf) {
        HashKind::ObjectTlv
    } else {
        HashKind::RawLePacked
    };
    let mut h = DataHasher::with_kind(leaf, kind);
    let mut buf = Vec::new();
    match kind {
        HashKind::ObjectTlv => tlv_bytes(leaf, data, r, &mut buf)?,
        _ => canonical_bytes(leaf, data, &mut buf)?,
    }
    h.update_canonical(&buf);
    Ok(AttrData::Hash {
        kind,
        sha256: h.finish(),
    })
}

/// Python's `repr(float)` (shortest round-trip digits; exponent form below 1e-4 and
/// from 1e16).
pub fn py_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let sci = format!("{:e}", x); // e.g. "-1.2345e-7"
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if neg { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let s = if exp >= 0 {
            let int_len = exp + 1;
            if n <= int_len {
                format!("{digits}{}.0", "0".repeat((int_len - n) as usize))
            } else {
                format!(
                    "{}.{}",
                    &digits[..int_len as usize],
                    &digits[int_len as usize..]
                )
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        };
        format!("{sign}{s}")
    } else {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let es = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{es}{:02}", exp.abs())
    }
}

/// Length of `json.dumps(v)` in Python (default separators, `ensure_ascii=True`).
pub fn py_json_len(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(b) => {
            if *b {
                4
            } else {
                5
            }
        }
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string().len()
            } else if let Some(u) = n.as_u64() {
                u.to_string().len()
            } else {
                py_float_repr(n.as_f64().unwrap_or(0.0)).len()
            }
        }
        Value::String(s) => py_str_len(s),
        Value::Array(a) => {
            2 + a.iter().map(py_json_len).sum::<usize>() + 2 * a.len().saturating_sub(1)
        }
        Value::Object(m) => {
            2 + m
                .iter()
                .map(|(k, v)| py_str_len(k) + 2 + py_json_len(v))
                .sum::<usize>()
                + 2 * m.len().saturating_sub(1)
        }
    }
}

fn py_str_len(s: &str) -> usize {
    2 + s
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c if (c as u32) < 0x7f => 1,
            c if (c as u32) < 0x10000 => 6,
            _ => 12,
        })
        .sum::<usize>()
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
