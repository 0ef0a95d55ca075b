//! Conversion of stored elements to Rust values for typed reads (HDF5 File
//! Format Specification IV.A.2.d, "Datatype Message": fixed-point class 0,
//! floating-point class 1 (IEEE half, single and double), bitfield class 4,
//! enumeration class 8 over an integer base, strings classes 3 and 9), from
//! either byte order. A value the target type cannot hold is refused with
//! [`Error::Conversion`]; nothing is clipped or wrapped.
//!
//! Rules: integers convert to any integer type that holds the value and to
//! floats (rounded to nearest, as libhdf5 does); floats convert to floats
//! (a finite value beyond `f32::MAX` is refused; NaN and infinities carry
//! over) and to integers when finite and in range after truncation toward
//! zero; strings (fixed or variable length, ASCII or UTF-8) read as
//! [`String`] with the padding the type declares removed.

#![deny(missing_docs)]

use crate::datatype::{ByteOrder, CharSet, Datatype, StringPad};
use crate::error::{Error, Result};
use crate::file::File;

mod sealed {
    pub trait Sealed {}
}

/// Where the stored elements sit in a byte buffer: element `i` starts at
/// `offset + i * stride` and is `dtype.size()` bytes long. Whole elements have
/// `stride` = element size and `offset` 0; a compound field has the compound's
/// size as stride and the member's offset.
#[derive(Clone, Copy, Debug)]
pub struct Elements<'a> {
    /// The stored bytes (file byte order).
    pub bytes: &'a [u8],
    /// Bytes from one element to the next.
    pub stride: usize,
    /// Offset of element 0 inside `bytes`.
    pub offset: usize,
}

impl<'a> Elements<'a> {
    /// Whole elements of `size` bytes packed back to back.
    pub fn packed(bytes: &'a [u8], size: usize) -> Self {
        Elements {
            bytes,
            stride: size,
            offset: 0,
        }
    }

    fn get(&self, i: usize, size: usize) -> Option<&'a [u8]> {
        let s = i.checked_mul(self.stride)?.checked_add(self.offset)?;
        self.bytes.get(s..s.checked_add(size)?)
    }
}

/// What a typed read needs besides the bytes: the file (variable-length
/// strings live in its global heap) and the object's path, for errors.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The file the elements come from (`None`: variable-length strings
    /// cannot be read, everything else can).
    pub file: Option<&'a File>,
    /// Path of the dataset or name of the attribute, named in errors.
    pub object: &'a str,
}

impl Context<'_> {
    fn error(&self, target: &'static str, reason: impl Into<String>) -> Error {
        Error::Conversion {
            object: self.object.to_string(),
            target,
            reason: reason.into(),
        }
    }
}

/// A Rust type that stored HDF5 elements can be read as: the integers
/// `u8`…`u64`, `i8`…`i64`, `f32`, `f64` and `String`. Sealed.
pub trait H5Read: sealed::Sealed + Sized + Clone + Default {
    /// The type's name in errors (`"u16"`, `"String"`, ...).
    const NAME: &'static str;

    /// Convert `out.len()` stored elements of `dtype` laid out as `src` into `out`.
    fn convert(
        ctx: &Context<'_>,
        dtype: &Datatype,
        src: Elements<'_>,
        out: &mut [Self],
    ) -> Result<()>;

    /// `out` seen as the bytes a plain copy of stored `dtype` elements
    /// fills, when reading them is exactly such a copy (numbers stored
    /// little-endian in `Self`'s own layout, read on a little-endian
    /// machine); `None` when a conversion is needed.
    fn as_stored_bytes<'o>(_dtype: &Datatype, _out: &'o mut [Self]) -> Option<&'o mut [u8]> {
        None
    }
}

/// The numeric types typed reads and writes support.
pub trait Numeric: H5Read + Copy + PartialOrd + std::fmt::Debug + Send + Sync + 'static {
    /// Size in bytes.
    const SIZE: usize;
    /// The value of an integer, when it fits.
    fn from_i128(v: i128) -> Option<Self>;
    /// The value of a float, when it fits (see the module rules).
    fn from_f64(v: f64) -> Option<Self>;
    /// The value of little-endian bytes of exactly this type.
    fn from_le(b: &[u8]) -> Self;
    /// True for the integer types whose storage is exactly the one described
    /// by (`size`, `signed`), for floats (`size`, float).
    fn same_as(size: u32, float: bool, signed: bool) -> bool;
}

macro_rules! int_numeric {
    ($($t:ty, $signed:expr);*) => {$(
        impl sealed::Sealed for $t {}
        impl Numeric for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn from_i128(v: i128) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
            fn from_f64(v: f64) -> Option<Self> {
                if v.is_finite() {
                    // `as` saturates; a saturated value is out of every target's range.
                    <$t>::try_from(v.trunc() as i128).ok()
                } else {
                    None
                }
            }
            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            fn same_as(size: u32, float: bool, signed: bool) -> bool {
                !float && signed == $signed && size as usize == Self::SIZE
            }
        }
    )*};
}

int_numeric!(u8, false; u16, false; u32, false; u64, false; i8, true; i16, true; i32, true; i64, true);

/// Every numeric type reads through [`convert_numeric`].
macro_rules! numeric_read {
    ($($t:ty),*) => {$(
        impl H5Read for $t {
            const NAME: &'static str = stringify!($t);
            fn convert(
                ctx: &Context<'_>,
                dtype: &Datatype,
                src: Elements<'_>,
                out: &mut [Self],
            ) -> Result<()> {
                convert_numeric(ctx, dtype, src, out)
            }
            fn as_stored_bytes<'o>(dtype: &Datatype, out: &'o mut [Self]) -> Option<&'o mut [u8]> {
                stored_bytes_of(dtype, out)
            }
        }
    )*};
}

/// [`H5Read::as_stored_bytes`] of the numeric types.
fn stored_bytes_of<'o, T: Numeric>(dtype: &Datatype, out: &'o mut [T]) -> Option<&'o mut [u8]> {
    if !cfg!(target_endian = "little") {
        return None;
    }
    let ctx = Context {
        file: None,
        object: "",
    };
    if !matches!(plan_for::<T>(&ctx, dtype), Ok(Plan::Same)) {
        return None;
    }
    let len = out.len().checked_mul(T::SIZE)?;
    // SAFETY: `T` is one of the sealed primitive integer and float types: no
    // padding, every bit pattern is a valid value, and `u8`'s alignment is 1;
    // `len` is the slice's size in bytes; the exclusive borrow moves into the
    // result, so nothing else sees the elements meanwhile.
    Some(unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) })
}

numeric_read!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);

macro_rules! float_numeric {
    ($($t:ty);*) => {$(
        impl sealed::Sealed for $t {}
        impl Numeric for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn from_i128(v: i128) -> Option<Self> {
                Some(v as $t)
            }
            fn from_f64(v: f64) -> Option<Self> {
                let r = v as $t;
                // Only a finite value that became infinite lost its range.
                (r.is_finite() || !v.is_finite()).then_some(r)
            }
            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            fn same_as(size: u32, float: bool, _signed: bool) -> bool {
                float && size as usize == Self::SIZE
            }
        }
    )*};
}

float_numeric!(f32; f64);

/// How one stored numeric element decodes.
#[derive(Clone, Copy, Debug)]
enum Plan {
    /// Little-endian storage identical to the target type: a plain copy.
    Same,
    /// An integer of `size` bytes: shift right by `shift`, keep `bits` bits,
    /// sign-extend when `signed`.
    Int {
        size: usize,
        big: bool,
        signed: bool,
        shift: u32,
        bits: u32,
    },
    /// An IEEE float of 2, 4 or 8 bytes.
    Float { size: usize, big: bool },
}

enum Value {
    Int(i128),
    Float(f64),
}

fn plan_for<T: Numeric>(ctx: &Context<'_>, dtype: &Datatype) -> Result<Plan> {
    let unsupported = |what: String| ctx.error(T::NAME, what);
    let order_big = |o: ByteOrder| match o {
        ByteOrder::Little => Ok(false),
        ByteOrder::Big => Ok(true),
        ByteOrder::Vax => Err(unsupported("VAX byte order".into())),
    };
    match dtype {
        Datatype::Integer {
            size,
            order,
            signed,
            bit_offset,
            precision,
        } => int_plan::<T>(
            ctx,
            *size,
            order_big(*order)?,
            *signed,
            *bit_offset,
            *precision,
        ),
        Datatype::Bitfield {
            size,
            order,
            bit_offset,
            precision,
        } => int_plan::<T>(
            ctx,
            *size,
            order_big(*order)?,
            false,
            *bit_offset,
            *precision,
        ),
        Datatype::Enum { base, .. } => plan_for::<T>(ctx, base),
        Datatype::Float {
            size,
            order,
            layout,
        } => {
            let big = order_big(*order)?;
            let ieee = crate::datatype::FloatLayout::ieee(*size);
            let same_bits = layout.exp_size == ieee.exp_size
                && layout.mant_size == ieee.mant_size
                && layout.exp_pos == ieee.exp_pos
                && layout.sign_pos == ieee.sign_pos
                && layout.exp_bias == ieee.exp_bias;
            if !matches!(size, 2 | 4 | 8) || !same_bits {
                return Err(unsupported(format!(
                    "a {size}-byte float that is not IEEE half, single or double"
                )));
            }
            if !big && T::same_as(*size, true, true) {
                return Ok(Plan::Same);
            }
            Ok(Plan::Float {
                size: *size as usize,
                big,
            })
        }
        other => Err(unsupported(format!(
            "the stored type ({}) is not numeric",
            class_name(other)
        ))),
    }
}

fn int_plan<T: Numeric>(
    ctx: &Context<'_>,
    size: u32,
    big: bool,
    signed: bool,
    bit_offset: u16,
    precision: u16,
) -> Result<Plan> {
    if !(1..=16).contains(&size) || precision == 0 {
        return Err(ctx.error(T::NAME, format!("a {size}-byte integer")));
    }
    let full = u32::from(precision) == size * 8 && bit_offset == 0;
    if full && !big && T::same_as(size, false, signed) {
        return Ok(Plan::Same);
    }
    let bits = u32::from(precision).min(size * 8);
    let shift = u32::from(bit_offset).min(size * 8 - 1);
    Ok(Plan::Int {
        size: size as usize,
        big,
        signed,
        shift,
        bits,
    })
}

fn class_name(dt: &Datatype) -> &'static str {
    match dt {
        Datatype::Integer { .. } => "integer",
        Datatype::Float { .. } => "float",
        Datatype::Time { .. } => "time",
        Datatype::String { .. } => "fixed-length string",
        Datatype::Bitfield { .. } => "bitfield",
        Datatype::Opaque { .. } => "opaque",
        Datatype::Compound { .. } => "compound",
        Datatype::Reference { .. } => "reference",
        Datatype::Enum { .. } => "enum",
        Datatype::VarString { .. } => "variable-length string",
        Datatype::VarSequence { .. } => "variable-length sequence",
        Datatype::Array { .. } => "array",
        Datatype::Complex { .. } => "complex",
    }
}

fn decode(plan: Plan, b: &[u8]) -> Value {
    match plan {
        Plan::Same => Value::Int(0),
        Plan::Int {
            big,
            signed,
            shift,
            bits,
            ..
        } => {
            let mut raw: u128 = 0;
            if big {
                for &x in b {
                    raw = (raw << 8) | u128::from(x);
                }
            } else {
                for &x in b.iter().rev() {
                    raw = (raw << 8) | u128::from(x);
                }
            }
            raw >>= shift;
            if bits < 128 {
                raw &= (1u128 << bits) - 1;
            }
            let v = if signed && bits < 128 && (raw >> (bits - 1)) & 1 == 1 {
                (raw | !((1u128 << bits) - 1)) as i128
            } else {
                raw as i128
            };
            Value::Int(v)
        }
        Plan::Float { size, big } => {
            let mut a = [0u8; 8];
            let dst = &mut a[..size];
            dst.copy_from_slice(b);
            if big {
                dst.reverse();
            }
            Value::Float(match size {
                2 => f16_to_f64(u16::from_le_bytes([a[0], a[1]])),
                4 => f64::from(f32::from_le_bytes([a[0], a[1], a[2], a[3]])),
                _ => f64::from_le_bytes(a),
            })
        }
    }
}

/// IEEE binary16 bits to f64 (exact).
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x3ff);
    match exp {
        0 => sign * mant * 2f64.powi(-24),
        31 if mant == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        e => sign * (1.0 + mant / 1024.0) * 2f64.powi(e - 15),
    }
}

fn convert_numeric<T: Numeric>(
    ctx: &Context<'_>,
    dtype: &Datatype,
    src: Elements<'_>,
    out: &mut [T],
) -> Result<()> {
    let plan = plan_for::<T>(ctx, dtype)?;
    let size = match plan {
        Plan::Same => T::SIZE,
        Plan::Int { size, .. } | Plan::Float { size, .. } => size,
    };
    let short = || ctx.error(T::NAME, "the buffer holds fewer elements than asked");
    if let (Plan::Same, true) = (plan, src.stride == size && src.offset == 0) {
        let bytes = out
            .len()
            .checked_mul(size)
            .and_then(|n| src.bytes.get(..n))
            .ok_or_else(short)?;
        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(size)) {
            *o = T::from_le(b);
        }
        return Ok(());
    }
    for (i, o) in out.iter_mut().enumerate() {
        let b = src.get(i, size).ok_or_else(short)?;
        *o = match (plan, decode(plan, b)) {
            (Plan::Same, _) => T::from_le(b),
            (_, Value::Int(v)) => T::from_i128(v).ok_or_else(|| {
                ctx.error(T::NAME, format!("element {i} holds {v}, out of range"))
            })?,
            (_, Value::Float(v)) => T::from_f64(v).ok_or_else(|| {
                ctx.error(T::NAME, format!("element {i} holds {v}, out of range"))
            })?,
        };
    }
    Ok(())
}

impl sealed::Sealed for String {}

impl H5Read for String {
    const NAME: &'static str = "String";

    fn convert(
        ctx: &Context<'_>,
        dtype: &Datatype,
        src: Elements<'_>,
        out: &mut [Self],
    ) -> Result<()> {
        let short = || ctx.error(Self::NAME, "the buffer holds fewer elements than asked");
        let (size, pad, cset, vlen) = match dtype {
            Datatype::String { size, pad, cset } => (*size as usize, *pad, *cset, false),
            Datatype::VarString { size, pad, cset } => (*size as usize, *pad, *cset, true),
            other => {
                return Err(ctx.error(
                    Self::NAME,
                    format!("the stored type ({}) is not a string", class_name(other)),
                ))
            }
        };
        for (i, o) in out.iter_mut().enumerate() {
            let el = src.get(i, size).ok_or_else(short)?;
            let owned;
            let bytes = if vlen {
                let file = ctx.file.ok_or_else(|| {
                    ctx.error(
                        Self::NAME,
                        "variable-length strings need the file (use read_strings_in)",
                    )
                })?;
                owned = file.vlen_bytes(el)?;
                &owned[..]
            } else {
                el
            };
            let text = strip_padding(bytes, pad);
            *o = match std::str::from_utf8(text) {
                Ok(s) => s.to_string(),
                Err(_) => {
                    let set = if cset == CharSet::Ascii {
                        "ASCII"
                    } else {
                        "UTF-8"
                    };
                    return Err(
                        ctx.error(Self::NAME, format!("element {i} is not valid {set} text"))
                    );
                }
            };
        }
        Ok(())
    }
}

/// The text of one string element without its padding: up to the first NUL
/// for null-terminated strings, trailing NULs or spaces removed otherwise.
pub fn strip_padding(el: &[u8], pad: StringPad) -> &[u8] {
    let end = match pad {
        StringPad::NullTerm => el.iter().position(|&b| b == 0).unwrap_or(el.len()),
        StringPad::NullPad => el.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1),
        StringPad::SpacePad => el
            .iter()
            .rposition(|&b| b != b' ' && b != 0)
            .map_or(0, |p| p + 1),
    };
    el.get(..end).unwrap_or(el)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::FloatLayout;

    fn file() -> File {
        let bytes = crate::write::FileWriter::in_memory().finish().unwrap();
        File::from_bytes(bytes).unwrap()
    }

    fn conv<T: H5Read>(dt: &Datatype, bytes: &[u8], n: usize) -> Result<Vec<T>> {
        let f = file();
        let ctx = Context {
            file: Some(&f),
            object: "/x",
        };
        let mut out = vec![T::default(); n];
        let size = dt.size() as usize;
        T::convert(&ctx, dt, Elements::packed(bytes, size), &mut out)?;
        Ok(out)
    }

    fn be_int(size: u32, signed: bool) -> Datatype {
        Datatype::Integer {
            size,
            order: ByteOrder::Big,
            signed,
            bit_offset: 0,
            precision: (size * 8) as u16,
        }
    }

    #[test]
    fn integers_convert_with_range_checks() {
        let dt = be_int(2, true);
        let bytes: Vec<u8> = [-2i16, 300, 7]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        assert_eq!(conv::<i64>(&dt, &bytes, 3).unwrap(), vec![-2, 300, 7]);
        assert_eq!(conv::<f32>(&dt, &bytes, 3).unwrap(), vec![-2.0, 300.0, 7.0]);
        let e = conv::<u8>(&dt, &bytes, 3).unwrap_err();
        assert!(matches!(e, Error::Conversion { target: "u8", .. }), "{e}");
        assert!(e.to_string().contains("element 0 holds -2"), "{e}");
        let le: Vec<u8> = [1u32, 0xffff_ffff]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            conv::<u32>(&Datatype::int(4, false), &le, 2).unwrap(),
            vec![1, u32::MAX]
        );
        assert!(conv::<i32>(&Datatype::int(4, false), &le, 2).is_err());
        assert_eq!(
            conv::<i64>(&Datatype::int(4, false), &le, 2).unwrap(),
            vec![1, 4_294_967_295]
        );
    }

    #[test]
    fn partial_precision_and_enums() {
        // 12 bits at offset 4 of a little-endian u16, signed.
        let dt = Datatype::Integer {
            size: 2,
            order: ByteOrder::Little,
            signed: true,
            bit_offset: 4,
            precision: 12,
        };
        let v: u16 = 0xfff0; // -1 in the 12 bits
        assert_eq!(conv::<i16>(&dt, &v.to_le_bytes(), 1).unwrap(), vec![-1]);
        let e = Datatype::Enum {
            base: Box::new(Datatype::int(1, true)),
            members: vec![],
        };
        assert_eq!(conv::<u8>(&e, &[1, 0], 2).unwrap(), vec![1, 0]);
    }

    #[test]
    fn floats_convert() {
        let be = Datatype::Float {
            size: 8,
            order: ByteOrder::Big,
            layout: FloatLayout::ieee(8),
        };
        let bytes: Vec<u8> = [1.5f64, -2.75, 1e300]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        assert_eq!(
            conv::<f64>(&be, &bytes, 3).unwrap(),
            vec![1.5, -2.75, 1e300]
        );
        assert!(conv::<f32>(&be, &bytes, 3).is_err());
        assert_eq!(conv::<f32>(&be, &bytes[..16], 2).unwrap(), vec![1.5, -2.75]);
        assert_eq!(conv::<i8>(&be, &bytes[..16], 2).unwrap(), vec![1, -2]);
        assert!(conv::<u8>(&be, &bytes[..16], 2).is_err());
        let nan = f64::NAN.to_le_bytes();
        assert!(conv::<f32>(&Datatype::float(8), &nan, 1).unwrap()[0].is_nan());
        assert!(conv::<i32>(&Datatype::float(8), &nan, 1).is_err());
        // half: 1.0, -2.0, 65504
        let h: Vec<u8> = [0x3c00u16, 0xc000, 0x7bff]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            conv::<f32>(&Datatype::float(2), &h, 3).unwrap(),
            vec![1.0, -2.0, 65504.0]
        );
    }

    #[test]
    fn strings_strip_padding_and_refuse_numbers() {
        let dt = Datatype::String {
            size: 4,
            pad: StringPad::NullPad,
            cset: CharSet::Ascii,
        };
        assert_eq!(
            conv::<String>(&dt, b"ab\0\0abcd", 2).unwrap(),
            vec!["ab".to_string(), "abcd".to_string()]
        );
        let sp = Datatype::String {
            size: 4,
            pad: StringPad::SpacePad,
            cset: CharSet::Utf8,
        };
        assert_eq!(
            conv::<String>(&sp, b"x   ", 1).unwrap(),
            vec!["x".to_string()]
        );
        assert!(conv::<String>(&Datatype::int(1, false), b"a", 1).is_err());
        assert!(conv::<u8>(&dt, b"abcd", 1).is_err());
        assert!(conv::<String>(&dt, b"\xff\xfe\0\0", 1).is_err());
        // too few bytes is a typed error, not a panic
        assert!(conv::<u16>(&Datatype::int(2, false), b"a", 1).is_err());
    }
}
