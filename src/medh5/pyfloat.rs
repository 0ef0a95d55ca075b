//! Python's `repr(float)` (`docs/medh5-format.md` §5.6): the shortest
//! digit string that round-trips, positional for decimal exponents in
//! `-4 < p <= 16`, scientific (`1e-05`, `1.5e+300`) otherwise.
//!
//! `ryu` supplies the shortest digits; this module only re-formats them.

/// The shortest round-trip decimal digits of a finite, non-zero `|v|` and the
/// decimal point position `p` such that `|v| = 0.d1d2…dn × 10^p`.
fn shortest_digits(v: f64) -> (String, i32) {
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(v.abs());
    let (mantissa, exp) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = int_part.chars().chain(frac_part.chars()).collect();
    let lead = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_start_matches('0').trim_end_matches('0');
    // The value is 0.<all> × 10^(len(int_part) + exp); stripping `lead` zeros
    // moves the point left.
    let point = int_part.len() as i32 + exp - lead as i32;
    if digits.is_empty() {
        return ("0".to_string(), 1);
    }
    (digits.to_string(), point)
}

/// `repr(v)` as CPython prints it (`inf`, `-inf`, `nan` for non-finite values).
pub fn repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    if v == 0.0 {
        return format!("{sign}0.0");
    }
    let (digits, point) = shortest_digits(v);
    let n = digits.len() as i32;
    let body = if point <= -4 || point > 16 {
        let (first, rest) = digits.split_at(1);
        let exp = point - 1;
        let esign = if exp < 0 { '-' } else { '+' };
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        format!("{first}{frac}e{esign}{:02}", exp.abs())
    } else if point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else if point >= n {
        format!("{digits}{}.0", "0".repeat((point - n) as usize))
    } else {
        let (a, b) = digits.split_at(point as usize);
        format!("{a}.{b}")
    };
    format!("{sign}{body}")
}

/// The float as Python's `json.dumps` writes it: `repr`, except non-finite
/// values, which become `NaN`, `Infinity` and `-Infinity`.
pub fn json_repr(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_string()
    } else if v.is_infinite() {
        (if v > 0.0 { "Infinity" } else { "-Infinity" }).to_string()
    } else {
        repr(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (0.8, "0.8"),
            (2.0, "2.0"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.5e300, "1.5e+300"),
            (-5.25, "-5.25"),
            (0.800000011920929, "0.800000011920929"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (5e-324, "5e-324"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ];
        for (v, want) in cases {
            assert_eq!(repr(*v), *want, "repr({v:e})");
        }
        assert_eq!(json_repr(f64::NAN), "NaN");
        assert_eq!(json_repr(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(json_repr(f64::INFINITY), "Infinity");
        assert_eq!(json_repr(0.5), "0.5");
    }

    proptest! {
        #[test]
        fn round_trips_and_has_python_shape(bits in any::<u64>()) {
            let v = f64::from_bits(bits);
            prop_assume!(v.is_finite());
            let s = repr(v);
            let back: f64 = s.parse().unwrap();
            prop_assert_eq!(back.to_bits(), v.to_bits());
            // Positional output always has a fractional part; scientific output has
            // a signed exponent of at least two digits.
            if let Some((_, e)) = s.split_once('e') {
                prop_assert!(e.starts_with('+') || e.starts_with('-'));
                prop_assert!(e.len() >= 3);
            } else {
                prop_assert!(s.contains('.'));
            }
        }
    }
}
