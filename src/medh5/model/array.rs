//! Numeric arrays as the writer stores them: NumPy-style dtype, shape, and
//! C-order little-endian element bytes.

use super::err;
use crate::attribute::bool_enum;
use crate::error::Result;
use purehdf::low_level::datatype::Datatype;

/// The numeric element types medh5 stores. Multi-byte types are always
/// little-endian in the file; [`descr`](Self::descr) gives the NumPy name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumDtype {
    /// Boolean, one byte holding 0 or 1, stored as the HDF5 `FALSE`/`TRUE`
    /// enum over int8 (NumPy `|b1`).
    Bool,
    /// Signed 8-bit integer (`|i1`).
    I8,
    /// Unsigned 8-bit integer (`|u1`).
    U8,
    /// Signed 16-bit integer (`<i2`).
    I16,
    /// Unsigned 16-bit integer (`<u2`).
    U16,
    /// Signed 32-bit integer (`<i4`).
    I32,
    /// Unsigned 32-bit integer (`<u4`).
    U32,
    /// Signed 64-bit integer (`<i8`).
    I64,
    /// Unsigned 64-bit integer (`<u8`).
    U64,
    /// IEEE 754 half precision (`<f2`), the default `probmap` dtype.
    F16,
    /// IEEE 754 single precision (`<f4`).
    F32,
    /// IEEE 754 double precision (`<f8`).
    F64,
}

impl NumDtype {
    /// Bytes per element.
    pub fn size(self) -> u32 {
        match self {
            NumDtype::Bool | NumDtype::I8 | NumDtype::U8 => 1,
            NumDtype::I16 | NumDtype::U16 | NumDtype::F16 => 2,
            NumDtype::I32 | NumDtype::U32 | NumDtype::F32 => 4,
            NumDtype::I64 | NumDtype::U64 | NumDtype::F64 => 8,
        }
    }

    /// The NumPy dtype string hashed by the digest (§5.2).
    pub fn descr(self) -> &'static str {
        match self {
            NumDtype::Bool => "|b1",
            NumDtype::I8 => "|i1",
            NumDtype::U8 => "|u1",
            NumDtype::I16 => "<i2",
            NumDtype::U16 => "<u2",
            NumDtype::I32 => "<i4",
            NumDtype::U32 => "<u4",
            NumDtype::I64 => "<i8",
            NumDtype::U64 => "<u8",
            NumDtype::F16 => "<f2",
            NumDtype::F32 => "<f4",
            NumDtype::F64 => "<f8",
        }
    }

    /// The HDF5 file datatype (little-endian; bool as the FALSE/TRUE enum).
    pub fn datatype(self) -> Datatype {
        match self {
            NumDtype::Bool => bool_enum(),
            NumDtype::I8 => Datatype::int(1, true),
            NumDtype::U8 => Datatype::int(1, false),
            NumDtype::I16 => Datatype::int(2, true),
            NumDtype::U16 => Datatype::int(2, false),
            NumDtype::I32 => Datatype::int(4, true),
            NumDtype::U32 => Datatype::int(4, false),
            NumDtype::I64 => Datatype::int(8, true),
            NumDtype::U64 => Datatype::int(8, false),
            NumDtype::F16 => Datatype::float(2),
            NumDtype::F32 => Datatype::float(4),
            NumDtype::F64 => Datatype::float(8),
        }
    }
}

/// A Rust element type with a medh5 dtype, for building an [`ArrayData`]
/// from typed values ([`ArrayData::from_slice`]). Implemented for `bool`,
/// the 8- to 64-bit integers, `f32` and `f64` (half floats have no Rust
/// primitive; build them with [`ArrayData::from_bytes`]).
pub trait Element: Copy {
    /// The medh5 dtype this type is stored as.
    const DTYPE: NumDtype;
    /// Little-endian bytes into `out` (`DTYPE.size()` bytes long).
    fn write_le(self, out: &mut [u8]);
}

macro_rules! element {
    ($t:ty, $d:ident) => {
        impl Element for $t {
            const DTYPE: NumDtype = NumDtype::$d;
            #[inline(always)]
            fn write_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
        }
    };
}
element!(i8, I8);
element!(u8, U8);
element!(i16, I16);
element!(u16, U16);
element!(i32, I32);
element!(u32, U32);
element!(i64, I64);
element!(u64, U64);
element!(f32, F32);
element!(f64, F64);

impl Element for bool {
    const DTYPE: NumDtype = NumDtype::Bool;
    #[inline(always)]
    fn write_le(self, out: &mut [u8]) {
        out.fill(u8::from(self));
    }
}

/// A C-order array: dtype, shape and little-endian bytes. The constructors
/// check that `bytes` holds exactly `product(shape) × dtype.size()` bytes;
/// code that mutates the public fields must keep that invariant.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayData {
    /// Element type of `bytes`.
    pub dtype: NumDtype,
    /// Extent of each axis, slowest-varying first (C order).
    pub shape: Vec<u64>,
    /// The elements, C order, little-endian, `dtype.size()` bytes each.
    pub bytes: Vec<u8>,
}

/// A set of 16-bit values as a lookup table (for [`ArrayData::first_outside`]).
pub struct ValueSet(Box<[bool; 65536]>);

impl ValueSet {
    /// The set holding exactly `values`.
    pub fn of(values: impl IntoIterator<Item = u16>) -> Self {
        let mut t = Box::new([false; 65536]);
        for v in values {
            t[usize::from(v)] = true;
        }
        ValueSet(t)
    }

    /// Every value except `v`.
    pub fn all_but(v: u16) -> Self {
        let mut t = Box::new([true; 65536]);
        t[usize::from(v)] = false;
        ValueSet(t)
    }
}

/// Number of elements of `shape` (checked).
pub fn element_count(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
}

impl ArrayData {
    /// Wrap raw little-endian bytes, checking their length against the shape.
    ///
    /// # Errors
    ///
    /// E405 when the element count overflows or `bytes` has the wrong
    /// length; E411 when `dtype` is [`NumDtype::Bool`] and a byte is not 0 or 1.
    pub fn from_bytes(dtype: NumDtype, shape: Vec<u64>, bytes: Vec<u8>) -> Result<Self> {
        let want = element_count(&shape)
            .and_then(|n| n.checked_mul(u64::from(dtype.size())))
            .ok_or_else(|| err("E405", format!("shape {shape:?} overflows")))?;
        if bytes.len() as u64 != want {
            return Err(err(
                "E405",
                format!("{} bytes for shape {shape:?} of {:?}", bytes.len(), dtype),
            ));
        }
        if dtype == NumDtype::Bool && bytes.iter().any(|&b| b > 1) {
            return Err(err("E411", "bool data must be 0 or 1"));
        }
        Ok(ArrayData {
            dtype,
            shape,
            bytes,
        })
    }

    /// Build from typed values in C order (one sized buffer filled in fixed-size
    /// steps, which the compiler turns into straight copies on little-endian targets).
    ///
    /// # Errors
    ///
    /// E405 when `values.len()` does not match `shape`, as
    /// [`from_bytes`](Self::from_bytes).
    pub fn from_slice<T: Element>(shape: &[u64], values: &[T]) -> Result<Self> {
        let size = T::DTYPE.size() as usize;
        let total = values
            .len()
            .checked_mul(size)
            .ok_or_else(|| err("E405", "array too large"))?;
        let mut bytes = vec![0u8; total];
        for (out, &v) in bytes.chunks_exact_mut(size).zip(values) {
            v.write_le(out);
        }
        ArrayData::from_bytes(T::DTYPE, shape.to_vec(), bytes)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.dtype.size() as usize
    }

    /// Whether the array has no elements (some extent is 0).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The first value (in C order) of 8- or 16-bit integer data whose entry
    /// in `allowed` (indexed by value) is false; `None` when every value is
    /// allowed or the dtype is wider. One pass over the bytes, in parallel
    /// pieces when the thread policy allows.
    pub fn first_outside(&self, allowed: &ValueSet) -> Option<u64> {
        const PIECE: usize = 1 << 20;
        let lut = &allowed.0;
        match self.dtype {
            NumDtype::Bool | NumDtype::I8 | NumDtype::U8 => {
                purehdf_filters::threads::find_first(&self.bytes, PIECE, |piece| {
                    piece
                        .chunks(4096)
                        .find(|blk| blk.iter().fold(false, |bad, &b| bad | !lut[usize::from(b)]))
                        .and_then(|blk| blk.iter().find(|&&b| !lut[usize::from(b)]))
                        .map(|&b| u64::from(b))
                })
            }
            NumDtype::I16 | NumDtype::U16 => {
                let value = |c: &[u8]| match c {
                    [a, b] => u16::from_le_bytes([*a, *b]),
                    _ => 0,
                };
                purehdf_filters::threads::find_first(&self.bytes, PIECE, |piece| {
                    piece
                        .chunks(4096)
                        .find(|blk| {
                            blk.chunks_exact(2)
                                .fold(false, |bad, c| bad | !lut[usize::from(value(c))])
                        })
                        .and_then(|blk| {
                            blk.chunks_exact(2)
                                .map(value)
                                .find(|&v| !lut[usize::from(v)])
                        })
                        .map(u64::from)
                })
            }
            _ => None,
        }
    }

    /// Element `i` (C-order index) as u64 (integer and bool types; `None` for
    /// floats or out of range). Signed values come back as their
    /// two's-complement bits zero-extended (`-1i16` gives 65535).
    pub fn get_u64(&self, i: usize) -> Option<u64> {
        let s = self.dtype.size() as usize;
        let b = self.bytes.get(i * s..(i + 1) * s)?;
        let mut buf = [0u8; 8];
        buf.get_mut(..s)?.copy_from_slice(b);
        match self.dtype {
            NumDtype::F16 | NumDtype::F32 | NumDtype::F64 => None,
            _ => Some(u64::from_le_bytes(buf)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_arrays() {
        let a = ArrayData::from_slice(&[2, 2], &[1i16, -2, 3, 4]).unwrap();
        assert_eq!(a.bytes, [1, 0, 0xfe, 0xff, 3, 0, 4, 0]);
        assert_eq!(a.dtype.descr(), "<i2");
        assert_eq!(a.len(), 4);
        assert_eq!(a.get_u64(2), Some(3));
        assert!(ArrayData::from_slice(&[3], &[1u8, 2]).is_err());
        assert!(ArrayData::from_bytes(NumDtype::Bool, vec![1], vec![2]).is_err());
        assert!(ArrayData::from_bytes(NumDtype::U8, vec![u64::MAX, 2], vec![]).is_err());
        assert_eq!(NumDtype::Bool.datatype().size(), 1);
    }

    /// The lookup-table scan finds the first value outside the set, in C order,
    /// across piece boundaries (3 MiB of data: several parallel pieces), and
    /// agrees with a per-element scan through `get_u64`.
    #[test]
    fn first_outside_matches_a_plain_scan() {
        let n = 3 << 20;
        let mut v8: Vec<u8> = (0..n).map(|i| (i % 4) as u8).collect();
        let allowed = ValueSet::of([0, 1, 2, 3]);
        let a = ArrayData::from_slice(&[n as u64], &v8).unwrap();
        assert_eq!(a.first_outside(&allowed), None);
        // Two offenders in different pieces: the earlier one is reported.
        v8[(2 << 20) + 5] = 200;
        v8[(1 << 20) + 3] = 9;
        let a = ArrayData::from_slice(&[n as u64], &v8).unwrap();
        let plain = (0..a.len()).filter_map(|i| a.get_u64(i)).find(|&x| x > 3);
        assert_eq!(a.first_outside(&allowed), Some(9));
        assert_eq!(plain, Some(9));
        let mut v16: Vec<u16> = (0..n / 2).map(|i| (i % 3) as u16 * 300).collect();
        let allowed = ValueSet::of([0, 300, 600]);
        let a = ArrayData::from_slice(&[v16.len() as u64], &v16).unwrap();
        assert_eq!(a.first_outside(&allowed), None);
        v16[n / 2 - 1] = 65535;
        let a = ArrayData::from_slice(&[v16.len() as u64], &v16).unwrap();
        assert_eq!(a.first_outside(&allowed), Some(65535));
        assert_eq!(a.first_outside(&ValueSet::all_but(65535)), Some(65535));
        assert_eq!(a.first_outside(&ValueSet::all_but(7)), None);
        // Wider and float dtypes are not scanned.
        let f = ArrayData::from_slice(&[2], &[1.5f32, 2.0]).unwrap();
        assert_eq!(f.first_outside(&ValueSet::of([])), None);
    }
}
