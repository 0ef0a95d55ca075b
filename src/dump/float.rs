//! Conversion of floating-point values described by an HDF5 float layout
//! (File Format Specification IV.A.2.d, class 1 bit fields) into the numpy float h5py
//! reads them as: IEEE binary16/32/64 or the x87 80-bit extended type kept in 16
//! bytes. Conversions the oracle makes are widening, so they are exact; NaN becomes a
//! NaN with every significand bit set, as libhdf5's soft conversion does.

use purehdf::low_level::datatype::{ByteOrder, FloatLayout};

/// A finite, infinite or NaN value decoded from its bit fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// Positive or negative zero: a zero significand (with a zero exponent field when the
    /// leading bit is implied).
    Zero {
        /// Sign bit: true for negative.
        neg: bool,
    },
    /// `mant * 2^exp2`, `mant > 0`.
    Finite {
        /// Sign bit: true for negative.
        neg: bool,
        /// Significand as an integer, never 0.
        mant: u128,
        /// Power of two the significand is scaled by.
        exp2: i64,
    },
    /// Positive or negative infinity: all-ones exponent field, zero fraction.
    Inf {
        /// Sign bit: true for negative.
        neg: bool,
    },
    /// Not a number: all-ones exponent field, non-zero fraction.
    NaN {
        /// Sign bit of the NaN.
        neg: bool,
    },
}

/// The bits of a `size`-byte value in file order `order`, as a little-endian integer.
pub fn load_bits(bytes: &[u8], order: ByteOrder) -> u128 {
    let mut le = [0u8; 16];
    let n = bytes.len().min(16);
    match order {
        ByteOrder::Big => {
            for (d, s) in le.iter_mut().zip(bytes.iter().take(n).rev()) {
                *d = *s;
            }
        }
        // VAX floats have no numpy equivalent; the dump never converts them.
        ByteOrder::Little | ByteOrder::Vax => le[..n].copy_from_slice(&bytes[..n]),
    }
    u128::from_le_bytes(le)
}

fn field(bits: u128, pos: u8, len: u8) -> u128 {
    if len == 0 || pos >= 128 {
        return 0;
    }
    let v = bits >> pos;
    if len >= 128 {
        v
    } else {
        v & ((1u128 << len) - 1)
    }
}

/// Decode a float whose bits are `bits` (little-endian integer) under `layout`.
pub fn decode(bits: u128, layout: &FloatLayout) -> Value {
    let neg = field(bits, layout.sign_pos, 1) == 1;
    let e_size = layout.exp_size.min(63);
    let exp = field(bits, layout.exp_pos, e_size) as i64;
    let mant = field(bits, layout.mant_pos, layout.mant_size);
    let m_size = i64::from(layout.mant_size);
    let bias = i64::from(layout.exp_bias);
    let exp_max = (1i64 << e_size) - 1;
    let implied = layout.norm == 2;
    if exp == exp_max && e_size > 0 {
        // Infinity or NaN; with an explicit integer bit it does not count.
        let frac = if implied || m_size == 0 {
            mant
        } else {
            mant & ((1u128 << (m_size - 1).clamp(0, 127)) - 1)
        };
        return if frac == 0 {
            Value::Inf { neg }
        } else {
            Value::NaN { neg }
        };
    }
    if mant == 0 && (exp == 0 || !implied) {
        return Value::Zero { neg };
    }
    let (m, exp2) = if implied {
        if exp == 0 {
            (mant, 1 - bias - m_size)
        } else {
            (mant | (1u128 << m_size.min(126)), exp - bias - m_size)
        }
    } else {
        (mant, exp.max(1) - bias - (m_size - 1))
    };
    if m == 0 {
        return Value::Zero { neg };
    }
    Value::Finite { neg, mant: m, exp2 }
}

/// An IEEE-style binary format: exponent bits, stored mantissa bits, explicit integer
/// bit (x87) or not, total significant bits.
#[derive(Clone, Copy, Debug)]
struct Target {
    exp_size: u32,
    mant_size: u32,
    explicit: bool,
}

fn target_for(np_size: u32) -> Option<Target> {
    match np_size {
        2 => Some(Target {
            exp_size: 5,
            mant_size: 10,
            explicit: false,
        }),
        4 => Some(Target {
            exp_size: 8,
            mant_size: 23,
            explicit: false,
        }),
        8 => Some(Target {
            exp_size: 11,
            mant_size: 52,
            explicit: false,
        }),
        16 => Some(Target {
            exp_size: 15,
            mant_size: 64,
            explicit: true,
        }),
        _ => None,
    }
}

/// Shift `m` right by `s` bits, rounding to nearest, ties to even.
fn shr_round(m: u128, s: u32) -> u128 {
    if s == 0 {
        return m;
    }
    if s >= 128 {
        return 0;
    }
    let q = m >> s;
    let rem = m & ((1u128 << s) - 1);
    let half = 1u128 << (s - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

/// Encode `v` as the numpy float of `np_size` bytes (2, 4, 8 or 16 = x87 in 16
/// bytes), little-endian, into `out`.
pub fn encode(v: Value, np_size: u32, out: &mut Vec<u8>) {
    let Some(t) = target_for(np_size) else {
        out.extend(std::iter::repeat_n(0u8, np_size as usize));
        return;
    };
    let bias = (1i64 << (t.exp_size - 1)) - 1;
    let exp_max = (1u128 << t.exp_size) - 1;
    let sign_pos = t.exp_size + t.mant_size;
    let frac_bits = if t.explicit {
        t.mant_size - 1
    } else {
        t.mant_size
    };
    let int_bit: u128 = if t.explicit { 1u128 << frac_bits } else { 0 };
    let (neg, exp_field, mant_field) = match v {
        Value::Zero { neg } => (neg, 0u128, 0u128),
        Value::Inf { neg } => (neg, exp_max, int_bit),
        Value::NaN { neg } => (neg, exp_max, (1u128 << t.mant_size) - 1),
        Value::Finite { neg, mant, exp2 } => {
            let top = 127 - i64::from(mant.leading_zeros());
            let e = exp2 + top; // value = 1.xxx * 2^e
            let min_e = 1 - bias;
            if e > bias {
                (neg, exp_max, int_bit)
            } else if e >= min_e {
                // normal: keep frac_bits bits after the leading one
                let shift = top - i64::from(frac_bits);
                let mut m = if shift >= 0 {
                    shr_round(mant, shift as u32)
                } else {
                    mant << (-shift) as u32
                };
                let mut be = e + bias;
                if m >> (frac_bits + 1) != 0 {
                    m >>= 1;
                    be += 1;
                }
                if be as u128 >= exp_max {
                    (neg, exp_max, int_bit)
                } else {
                    let frac = m & ((1u128 << frac_bits) - 1);
                    (neg, be as u128, frac | int_bit)
                }
            } else {
                // subnormal: value = m * 2^(min_e - frac_bits)
                let shift = (min_e - i64::from(frac_bits)) - exp2;
                let m = if shift >= 0 {
                    shr_round(mant, shift.min(200) as u32)
                } else {
                    mant << (-shift) as u32
                };
                if m >> frac_bits != 0 {
                    (neg, 1, (m & ((1u128 << frac_bits) - 1)) | int_bit)
                } else {
                    (neg, 0, m)
                }
            }
        }
    };
    let bits = mant_field | (exp_field << t.mant_size) | (u128::from(neg) << sign_pos);
    let bytes = bits.to_le_bytes();
    let keep = if t.explicit { 10 } else { np_size as usize };
    out.extend_from_slice(&bytes[..keep]);
    out.extend(std::iter::repeat_n(0u8, np_size as usize - keep));
}

/// True when `layout` is the plain IEEE layout of a `size`-byte float.
pub fn is_ieee(size: u32, layout: &FloatLayout) -> bool {
    let std = FloatLayout::ieee(size);
    matches!(size, 2 | 4 | 8)
        && layout.bit_offset == 0
        && layout.precision == std.precision
        && layout.sign_pos == std.sign_pos
        && layout.exp_pos == std.exp_pos
        && layout.exp_size == std.exp_size
        && layout.mant_pos == std.mant_pos
        && layout.mant_size == std.mant_size
        && layout.exp_bias == std.exp_bias
}

/// True when `layout` is the x87 80-bit layout that numpy's 16-byte long double uses.
pub fn is_x87(layout: &FloatLayout) -> bool {
    layout.sign_pos == 79
        && layout.exp_pos == 64
        && layout.exp_size == 15
        && layout.mant_pos == 0
        && layout.mant_size == 64
        && layout.exp_bias == 16383
}

/// The value of a decoded float as an f64 (rounded), for JSON previews.
pub fn to_f64(v: Value) -> f64 {
    let mut out = Vec::with_capacity(8);
    encode(v, 8, &mut out);
    let mut b = [0u8; 8];
    b.copy_from_slice(&out[..8]);
    f64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(bits: u128, size: u32, layout: &FloatLayout, np: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let _ = size;
        encode(decode(bits, layout), np, &mut out);
        out
    }

    #[test]
    fn ieee_roundtrips_through_decode_encode() {
        for x in [
            0.0f32,
            -0.0,
            1.0,
            -2.5,
            1e-40,
            3.4e38,
            f32::INFINITY,
            f32::MIN_POSITIVE,
        ] {
            let l = FloatLayout::ieee(4);
            assert_eq!(
                conv(u128::from(x.to_bits()), 4, &l, 4),
                x.to_le_bytes().to_vec()
            );
            // widening to f64 is exact
            let wide = conv(u128::from(x.to_bits()), 4, &l, 8);
            assert_eq!(wide, f64::from(x).to_le_bytes().to_vec(), "{x}");
        }
        for x in [0.1f64, -123456.789, 5e-324, 1.7e308] {
            let l = FloatLayout::ieee(8);
            assert_eq!(
                conv(u128::from(x.to_bits()), 8, &l, 8),
                x.to_le_bytes().to_vec()
            );
        }
    }

    #[test]
    fn half_precision_widens_exactly() {
        let l = FloatLayout::ieee(2);
        // 0x3c00 = 1.0, 0xc000 = -2.0, 0x0001 = smallest subnormal 2^-24, 0x7bff = 65504
        for (h, f) in [
            (0x3c00u128, 1.0f32),
            (0xc000, -2.0),
            (0x0001, 5.960_464_5e-8),
            (0x7bff, 65504.0),
        ] {
            assert_eq!(conv(h, 2, &l, 4), f.to_le_bytes().to_vec(), "{h:#x}");
            assert_eq!(conv(h, 2, &l, 2), (h as u16).to_le_bytes().to_vec());
        }
    }

    #[test]
    fn bfloat16_becomes_f32_with_same_bits_on_top() {
        // bfloat16: sign 15, exponent 7..15 (8 bits), mantissa 0..7 (7 bits), bias 127
        let l = FloatLayout {
            bit_offset: 0,
            precision: 16,
            sign_pos: 15,
            exp_pos: 7,
            exp_size: 8,
            mant_pos: 0,
            mant_size: 7,
            exp_bias: 127,
            norm: 2,
            pad: [false; 3],
        };
        for x in [1.0f32, -3.5, 0.15625, 1e30] {
            let bf = (x.to_bits() >> 16) as u128;
            let want = f32::from_bits((bf as u32) << 16);
            assert_eq!(conv(bf, 2, &l, 4), want.to_le_bytes().to_vec());
        }
    }

    #[test]
    fn nan_sets_every_significand_bit() {
        let l = FloatLayout::ieee(4);
        let out = conv(u128::from(f32::NAN.to_bits()), 4, &l, 8);
        assert_eq!(out, 0x7fff_ffff_ffff_ffffu64.to_le_bytes().to_vec());
    }

    #[test]
    fn x87_from_f64_and_back() {
        let l = FloatLayout::ieee(8);
        let mut out = Vec::new();
        encode(decode(u128::from(1.5f64.to_bits()), &l), 16, &mut out);
        // 1.5 = exponent 16383 (0x3fff), mantissa 0xC000...0 with explicit bit
        assert_eq!(&out[..8], &0xc000_0000_0000_0000u64.to_le_bytes());
        assert_eq!(&out[8..10], &0x3fffu16.to_le_bytes());
        assert_eq!(&out[10..], &[0u8; 6]);
        let x87 = FloatLayout {
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
        assert!(is_x87(&x87));
        let bits = u128::from_le_bytes(out.clone().try_into().unwrap());
        assert_eq!(to_f64(decode(bits, &x87)), 1.5);
    }

    #[test]
    fn big_and_little_endian_loading() {
        assert_eq!(load_bits(&[0x3f, 0x80, 0, 0], ByteOrder::Big), 0x3f80_0000);
        assert_eq!(load_bits(&[1, 2], ByteOrder::Little), 0x0201);
    }
}
