//! Element conversion from a source dataset's datatype to the virtual
//! dataset's (libhdf5 converts each source to the virtual datatype on read):
//! identical types are copied; integers and IEEE floats of either byte order
//! convert between each other (integers saturate, floats to integers truncate
//! toward zero, NaN becomes 0). Anything else is unsupported.

use crate::datatype::{ByteOrder, Datatype};
use crate::error::{Error, Result};

/// A numeric element type this module can convert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Num {
    Int {
        size: usize,
        signed: bool,
        big: bool,
    },
    Float {
        size: usize,
        big: bool,
    },
}

/// How to turn source elements into virtual ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conversion(Kind);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Same type: bytes are copied.
    Copy,
    Numeric(Num, Num),
}

fn num(t: &Datatype) -> Option<Num> {
    match t {
        Datatype::Integer {
            size,
            order,
            signed,
            bit_offset: 0,
            precision,
        } if matches!(size, 1 | 2 | 4 | 8) && u32::from(*precision) == size * 8 => Some(Num::Int {
            size: *size as usize,
            signed: *signed,
            big: *order == ByteOrder::Big,
        }),
        Datatype::Float {
            size,
            order,
            layout,
        } if matches!(size, 4 | 8) && *order != ByteOrder::Vax => {
            (*layout == crate::datatype::FloatLayout::ieee(*size)).then_some(Num::Float {
                size: *size as usize,
                big: *order == ByteOrder::Big,
            })
        }
        _ => None,
    }
}

impl Conversion {
    /// The conversion from `from` to `to`.
    pub fn new(from: &Datatype, to: &Datatype) -> Result<Self> {
        if from == to {
            return Ok(Conversion(Kind::Copy));
        }
        match (num(from), num(to)) {
            (Some(a), Some(b)) => Ok(Conversion(Kind::Numeric(a, b))),
            _ => Err(Error::unsupported(
                "virtual dataset",
                0,
                format!("conversion of source type {from:?} to virtual type {to:?}"),
            )),
        }
    }

    /// True when elements are copied unchanged.
    pub fn is_copy(&self) -> bool {
        self.0 == Kind::Copy
    }

    /// Convert `n` elements from `src` into `dst` (sizes checked by the caller:
    /// `src` holds `n` source elements, `dst` `n` virtual ones).
    pub fn apply(&self, src: &[u8], dst: &mut [u8]) -> Option<()> {
        match self.0 {
            Kind::Copy => {
                dst.get_mut(..src.len())?.copy_from_slice(src);
                Some(())
            }
            Kind::Numeric(from, to) => {
                let (fs, ts) = (size(from), size(to));
                for (s, d) in src.chunks_exact(fs).zip(dst.chunks_exact_mut(ts)) {
                    let v = read(from, s)?;
                    write(to, v, d)?;
                }
                Some(())
            }
        }
    }
}

fn size(n: Num) -> usize {
    match n {
        Num::Int { size, .. } | Num::Float { size, .. } => size,
    }
}

/// A value in transit: an exact integer or a float.
#[derive(Clone, Copy, Debug)]
enum Value {
    Int(i128),
    Float(f64),
}

fn le_bytes(b: &[u8], big: bool) -> [u8; 8] {
    let mut a = [0u8; 8];
    for (i, &x) in b.iter().enumerate().take(8) {
        let j = if big { b.len() - 1 - i } else { i };
        if let Some(slot) = a.get_mut(j) {
            *slot = x;
        }
    }
    a
}

fn read(n: Num, b: &[u8]) -> Option<Value> {
    match n {
        Num::Int { size, signed, big } => {
            let raw = u64::from_le_bytes(le_bytes(b.get(..size)?, big));
            let bits = size * 8;
            let v = if signed && bits < 64 && raw >> (bits - 1) & 1 == 1 {
                i128::from(raw) - (1i128 << bits)
            } else if signed && bits == 64 {
                i128::from(raw as i64)
            } else {
                i128::from(raw)
            };
            Some(Value::Int(v))
        }
        Num::Float { size: 4, big } => {
            let a = le_bytes(b.get(..4)?, big);
            Some(Value::Float(f64::from(f32::from_le_bytes([
                a[0], a[1], a[2], a[3],
            ]))))
        }
        Num::Float { big, .. } => {
            Some(Value::Float(f64::from_le_bytes(le_bytes(b.get(..8)?, big))))
        }
    }
}

fn write(n: Num, v: Value, d: &mut [u8]) -> Option<()> {
    let mut put = |le: &[u8], big: bool| -> Option<()> {
        let dst = d.get_mut(..le.len())?;
        dst.copy_from_slice(le);
        if big {
            dst.reverse();
        }
        Some(())
    };
    match n {
        Num::Int { size, signed, big } => {
            let bits = (size * 8) as u32;
            let (lo, hi): (i128, i128) = if signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            let x = match v {
                Value::Int(i) => i.clamp(lo, hi),
                Value::Float(f) if f.is_nan() => 0,
                Value::Float(f) => {
                    let t = f.trunc();
                    if t <= lo as f64 {
                        lo
                    } else if t >= hi as f64 {
                        hi
                    } else {
                        t as i128
                    }
                }
            };
            put(&(x as u64).to_le_bytes()[..size], big)
        }
        Num::Float { size, big } => {
            let f = match v {
                Value::Int(i) => i as f64,
                Value::Float(f) => f,
            };
            if size == 4 {
                put(&(f as f32).to_le_bytes(), big)
            } else {
                put(&f.to_le_bytes(), big)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn be(t: Datatype) -> Datatype {
        t.with_order(ByteOrder::Big)
    }

    fn conv(from: &Datatype, to: &Datatype, src: &[u8]) -> Vec<u8> {
        let c = Conversion::new(from, to).unwrap();
        let n = src.len() / from.size() as usize;
        let mut out = vec![0u8; n * to.size() as usize];
        c.apply(src, &mut out).unwrap();
        out
    }

    #[test]
    fn ints_to_floats_and_back() {
        let src: Vec<u8> = [1i32, -2, 300, 4000]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let out = conv(&Datatype::int(4, true), &Datatype::float(8), &src);
        let want: Vec<u8> = [1.0f64, -2.0, 300.0, 4000.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(out, want);
        let back = conv(&Datatype::float(8), &Datatype::int(4, true), &want);
        assert_eq!(back, src);
        // saturation, truncation toward zero, NaN
        let f: Vec<u8> = [1e10f64, -2.7, f64::NAN]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            conv(&Datatype::float(8), &Datatype::int(1, false), &f),
            vec![255, 0, 0]
        );
        assert_eq!(
            conv(&Datatype::float(8), &Datatype::int(1, true), &f),
            vec![127, (-2i8) as u8, 0]
        );
        // int narrowing saturates; sign extension
        assert_eq!(
            conv(
                &Datatype::int(2, true),
                &Datatype::int(1, true),
                &(-300i16).to_le_bytes()
            ),
            vec![(-128i8) as u8]
        );
        assert_eq!(
            conv(&Datatype::int(1, true), &Datatype::int(8, true), &[0xfe]),
            (-2i64).to_le_bytes().to_vec()
        );
        assert_eq!(
            conv(
                &Datatype::int(8, false),
                &Datatype::int(8, true),
                &u64::MAX.to_le_bytes()
            ),
            i64::MAX.to_le_bytes().to_vec()
        );
    }

    #[test]
    fn byte_orders_copy_and_unsupported() {
        let be32 = be(Datatype::int(4, true));
        assert_eq!(
            conv(&be32, &Datatype::int(4, true), &[0, 0, 1, 2]),
            vec![2, 1, 0, 0]
        );
        assert_eq!(
            conv(
                &Datatype::float(4),
                &be(Datatype::float(8)),
                &1.5f32.to_le_bytes()
            ),
            1.5f64.to_be_bytes().to_vec()
        );
        assert!(
            Conversion::new(&Datatype::int(4, true), &Datatype::int(4, true))
                .unwrap()
                .is_copy()
        );
        let s = Datatype::String {
            size: 4,
            pad: crate::datatype::StringPad::NullPad,
            cset: crate::datatype::CharSet::Ascii,
        };
        assert!(matches!(
            Conversion::new(&s, &Datatype::int(4, true)),
            Err(Error::Unsupported { .. })
        ));
    }
}
