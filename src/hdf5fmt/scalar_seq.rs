//! Typed scalar sequences as VneuroTK stores them (`docs/neighbours.md`, V4):
//! a group with attribute `encoding = "vneurotk_scalar_v1"`, a `types` uint8
//! dataset and a `values` variable-length UTF-8 dataset, one entry each per
//! value, so IDs such as `1`, `"1"`, `True`, `1.5` and `"a/b"` keep their
//! Python type and never become HDF5 paths.
//!
//! | code | value | text |
//! | --- | --- | --- |
//! | 1 | bool | `1` or `0` |
//! | 2 | int | decimal |
//! | 3 | float | C99 hex float exactly as Python's `float.hex` prints it (`0x1.999999999999ap-4`, `-0x0.0p+0`, `nan`, `inf`) |
//! | 4 | str | the text (no NUL) |
//! | 5, 6, 7 | None, pandas NA, NaT | empty |
//!
//! Python ints are unbounded; here they are `i128`, and a stored integer
//! outside it is a typed error on read.
//!
//! ```
//! use purehdf::scalar_seq::{self, Scalar};
//! use purehdf::{File, FileWriter};
//! let ids = vec![Scalar::Int(1), Scalar::Str("1".into()), Scalar::Bool(true), Scalar::Float(0.1)];
//! let mut w = FileWriter::in_memory();
//! let root = w.root();
//! scalar_seq::write(&mut w, root, "stim_ids", &ids)?;
//! let file = File::from_bytes(w.finish()?)?;
//! let g = file.root()?.group("stim_ids")?;
//! assert_eq!(g.dataset("values")?.read::<String>()?, ["1", "1", "1", "0x1.999999999999ap-4"]);
//! assert_eq!(scalar_seq::read(&g)?, ids);
//! # Ok::<(), purehdf::Error>(())
//! ```

use crate::datatype::CharSet;
use crate::error::{Error, Result};
use crate::group::Group;
use crate::header_gate::HeaderReason;
use crate::write::{vlen_string_type, AttrValue, DatasetData, DatasetSpec, FileWriter, GroupId};

/// The `encoding` attribute's value.
pub const ENCODING: &str = "vneurotk_scalar_v1";

/// One typed scalar.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// Python `bool` (code 1).
    Bool(bool),
    /// Python `int` (code 2).
    Int(i128),
    /// Python `float` (code 3).
    Float(f64),
    /// Python `str` (code 4).
    Str(String),
    /// `None` (code 5).
    None,
    /// `pandas.NA` (code 6).
    Na,
    /// `pandas.NaT` (code 7).
    NaT,
}

/// The type code and text stored for `v`; a string holding NUL is refused
/// with [`Error::InvalidName`].
pub fn token(v: &Scalar) -> Result<(u8, String)> {
    Ok(match v {
        Scalar::Bool(b) => (1, if *b { "1" } else { "0" }.to_string()),
        Scalar::Int(i) => (2, i.to_string()),
        Scalar::Float(f) => (3, float_hex(*f)),
        Scalar::Str(s) => {
            if s.contains('\0') {
                return Err(Error::InvalidName {
                    what: "string",
                    name: s.clone(),
                    reason: "contains a NUL byte",
                });
            }
            (4, s.clone())
        }
        Scalar::None => (5, String::new()),
        Scalar::Na => (6, String::new()),
        Scalar::NaT => (7, String::new()),
    })
}

/// The value a stored code and text stand for (`None` for an unknown code or
/// text that does not parse).
pub fn decode(code: u8, text: &str) -> Option<Scalar> {
    Some(match code {
        1 => Scalar::Bool(text == "1"),
        2 => Scalar::Int(text.parse().ok()?),
        3 => Scalar::Float(parse_float_hex(text)?),
        4 => Scalar::Str(text.to_string()),
        5 => Scalar::None,
        6 => Scalar::Na,
        7 => Scalar::NaT,
        _ => return None,
    })
}

/// Write `values` as a sequence group `name` in `parent`.
pub fn write(
    w: &mut FileWriter,
    parent: GroupId,
    name: &str,
    values: &[Scalar],
) -> Result<GroupId> {
    let tokens = values.iter().map(token).collect::<Result<Vec<_>>>()?;
    let g = w.create_group(parent, name)?;
    w.set_attr(g, "encoding", AttrValue::string(ENCODING))?;
    let n = tokens.len() as u64;
    let codes: Vec<u8> = tokens.iter().map(|t| t.0).collect();
    w.write_dataset(g, "types", DatasetSpec::of::<u8>(&[n]), &codes)?;
    let texts: Vec<String> = tokens.into_iter().map(|t| t.1).collect();
    w.create_dataset(
        g,
        "values",
        DatasetSpec::new(vlen_string_type(CharSet::Utf8), &[n]),
        DatasetData::VarStrings(texts),
    )?;
    Ok(g)
}

/// Read the sequence stored in `group`.
pub fn read(group: &Group) -> Result<Vec<Scalar>> {
    let enc = group
        .attribute("encoding")
        .map_err(|_| Error::Header {
            attribute: "encoding".into(),
            reason: HeaderReason::Missing,
        })?
        .read_scalar::<String>()?;
    if enc != ENCODING {
        return Err(Error::Header {
            attribute: "encoding".into(),
            reason: HeaderReason::WrongValue {
                found: enc,
                expected: ENCODING.into(),
            },
        });
    }
    let codes = group.dataset("types")?.read::<u8>()?;
    let texts = group.dataset("values")?.read::<String>()?;
    let bad = |why: String| Error::malformed("vneurotk_scalar_v1 group", group.address(), why);
    if codes.len() != texts.len() {
        return Err(bad(format!(
            "{}: {} types but {} values",
            group.path(),
            codes.len(),
            texts.len()
        )));
    }
    codes
        .iter()
        .zip(&texts)
        .enumerate()
        .map(|(i, (&c, t))| {
            decode(c, t).ok_or_else(|| {
                bad(format!(
                    "{}: entry {i}: code {c} with text {t:?}",
                    group.path()
                ))
            })
        })
        .collect()
}

/// `v` as Python's `float.hex` prints it.
pub fn float_hex(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    if v.is_infinite() {
        return format!("{sign}inf");
    }
    let bits = v.to_bits();
    let frac = bits & ((1u64 << 52) - 1);
    let biased = ((bits >> 52) & 0x7FF) as i64;
    if biased == 0 && frac == 0 {
        return format!("{sign}0x0.0p+0");
    }
    let (lead, exp) = if biased == 0 {
        (0, -1022)
    } else {
        (1, biased - 1023)
    };
    let exp_sign = if exp < 0 { '-' } else { '+' };
    format!(
        "{sign}0x{lead}.{frac:013x}p{exp_sign}{}",
        exp.unsigned_abs()
    )
}

/// Python's `float.fromhex`: optional sign, optional `0x`, hex digits with an
/// optional point, optional `p` exponent; `inf`, `infinity` and `nan` in any
/// case. Exact for every string [`float_hex`] prints; `None` for text that
/// does not parse.
pub fn parse_float_hex(text: &str) -> Option<f64> {
    let t = text.trim();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let signed = |x: f64| if neg { -x } else { x };
    let lower = body.to_ascii_lowercase();
    if lower == "inf" || lower == "infinity" {
        return Some(signed(f64::INFINITY));
    }
    if lower == "nan" {
        return Some(signed(f64::NAN));
    }
    let body = lower.strip_prefix("0x").unwrap_or(&lower);
    let (digits, exp) = match body.split_once('p') {
        Some((d, e)) => (d, e.parse::<i64>().ok()?),
        None => (body, 0),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    // mantissa: the first 60 significant bits, then a sticky bit
    let mut mant: u64 = 0;
    let mut bits: i64 = 0; // binary exponent adjustment
    let mut sticky = false;
    for (i, c) in int_part.chars().chain(frac_part.chars()).enumerate() {
        let d = u64::from(c.to_digit(16)?);
        let in_frac = i >= int_part.len();
        if mant >> 56 == 0 {
            mant = (mant << 4) | d;
            if in_frac {
                bits -= 4;
            }
        } else {
            sticky |= d != 0;
            if !in_frac {
                bits += 4;
            }
        }
    }
    if sticky {
        mant |= 1;
    }
    let e = exp.checked_add(bits)?;
    Some(signed(scale(mant as f64, e)))
}

/// `m × 2^e` without intermediate overflow or underflow.
fn scale(mut m: f64, mut e: i64) -> f64 {
    e = e.clamp(-3000, 3000);
    while e > 1000 {
        m *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        // stay above the subnormal range until the last step
        if m == 0.0 {
            return m;
        }
        m *= 2f64.powi(-1000);
        e += 1000;
    }
    m * 2f64.powi(e as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_float_hex_forms() {
        for (v, s) in [
            (0.1, "0x1.999999999999ap-4"),
            (1.5, "0x1.8000000000000p+0"),
            (1.0, "0x1.0000000000000p+0"),
            (-0.0, "-0x0.0p+0"),
            (0.0, "0x0.0p+0"),
            (5e-324, "0x0.0000000000001p-1022"),
            (f64::MAX, "0x1.fffffffffffffp+1023"),
            (-2.0, "-0x1.0000000000000p+1"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(float_hex(v), s);
            assert_eq!(
                parse_float_hex(s).map(f64::to_bits),
                Some(v.to_bits()),
                "{s}"
            );
        }
        assert!(parse_float_hex("nan").is_some_and(f64::is_nan));
        assert_eq!(parse_float_hex("0x1p-1"), Some(0.5));
        assert_eq!(parse_float_hex("1.8"), Some(1.5));
        assert_eq!(parse_float_hex("x"), None);
        assert_eq!(parse_float_hex(""), None);
    }

    #[test]
    fn float_hex_round_trips_many_values() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            if v.is_nan() {
                continue;
            }
            assert_eq!(parse_float_hex(&float_hex(v)).map(f64::to_bits), Some(x));
        }
    }

    #[test]
    fn nul_is_refused() {
        assert!(matches!(
            token(&Scalar::Str("x\0y".into())),
            Err(Error::InvalidName { what: "string", .. })
        ));
    }
}
