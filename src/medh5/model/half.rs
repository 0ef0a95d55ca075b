//! IEEE 754 binary16 conversions (round to nearest, ties to even) for probmap
//! storage (`docs/medh5-format.md` §2.5, `probmap` float16).

/// The float16 bits nearest to `x`.
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let q = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let halfway = 1 << (shift - 1);
        let r = if rem > halfway || (rem == halfway && q & 1 == 1) {
            q + 1
        } else {
            q
        };
        return sign | r as u16;
    }
    let h = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    let h = if rem > 0x1000 || (rem == 0x1000 && h & 1 == 1) {
        h + 1
    } else {
        h
    };
    sign | h as u16
}

/// The value of float16 bits `h`.
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let man = f64::from(h & 0x3ff);
    match exp {
        0 => sign * man * 2f64.powi(-24),
        0x1f if man == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        _ => sign * (1.0 + man / 1024.0) * 2f64.powi(exp - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        assert_eq!(f32_to_f16(0.75), 0x3a00);
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(0.0), 0);
        assert_eq!(f32_to_f16(-2.0), 0xc000);
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(1e6), 0x7c00);
        assert_eq!(f32_to_f16(5.960_464_5e-8), 1);
        assert_eq!(f32_to_f16(0.1), 0x2e66);
        assert_eq!(f16_to_f64(0x3a00), 0.75);
        assert!(f16_to_f64(0x7e00).is_nan());
    }

    proptest! {
        #[test]
        fn f16_round_trips(h in 0u16..0x7c00) {
            // Every finite float16 converts to f32 exactly and back to itself.
            let x = f16_to_f64(h) as f32;
            prop_assert_eq!(f32_to_f16(x), h);
            prop_assert_eq!(f32_to_f16(-x), h | 0x8000);
        }

        #[test]
        fn nearest(x in 0f32..65000.0) {
            let h = f32_to_f16(x);
            let v = f16_to_f64(h);
            let lo = f16_to_f64(h.saturating_sub(1));
            let hi = f16_to_f64(h + 1);
            let d = (v - f64::from(x)).abs();
            prop_assert!(d <= (lo - f64::from(x)).abs() && d <= (hi - f64::from(x)).abs());
        }
    }
}
