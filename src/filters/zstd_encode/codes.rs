//! The sequence codes of RFC 8878 §3.1.1.3.2.1.1: literal-length and
//! match-length codes with their baselines and extra bits, and offset codes,
//! one definition for the block writer ([`super::entropy`]) and the
//! parser's price model ([`super::opt`]).

/// Literal-length code baselines and extra bits (RFC §3.1.1.3.2.1.1).
pub(crate) const LL_BASE: [u32; 36] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 28, 32, 40, 48, 64,
    128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
];
pub(crate) const LL_BITS: [u8; 36] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11,
    12, 13, 14, 15, 16,
];
/// Match-length code baselines and extra bits (RFC §3.1.1.3.2.1.1).
pub(crate) const ML_BASE: [u32; 53] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
    28, 29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027,
    2051, 4099, 8195, 16387, 32771, 65539,
];
pub(crate) const ML_BITS: [u8; 53] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
];

/// Code of each literal length below 64.
const LL_CODE: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut c = 0;
    while c < 36 {
        let mut v = LL_BASE[c];
        while v < LL_BASE[c] + (1 << LL_BITS[c]) && v < 64 {
            t[v as usize] = c as u8;
            v += 1;
        }
        c += 1;
    }
    t
};
/// Code of each match length minus 3 below 128.
const ML_CODE: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut c = 0;
    while c < 53 {
        let mut v = ML_BASE[c] - 3;
        while v < ML_BASE[c] - 3 + (1 << ML_BITS[c]) && v < 128 {
            t[v as usize] = c as u8;
            v += 1;
        }
        c += 1;
    }
    t
};

/// Index of the highest set bit (0 for 0 and 1).
#[inline(always)]
pub(crate) fn highbit(v: u32) -> u32 {
    31 - (v | 1).leading_zeros()
}

/// Literal-length code of `ll` (at most 35 for `ll` < 2^17).
#[inline(always)]
pub(crate) fn ll_code(ll: u32) -> u8 {
    if ll < 64 {
        LL_CODE[ll as usize & 63]
    } else {
        (highbit(ll) + 19).min(35) as u8
    }
}

/// Match-length code of `ml` (≥ 3; at most 52 for `ml` ≤ 131074).
#[inline(always)]
pub(crate) fn ml_code(ml: u32) -> u8 {
    let b = ml.saturating_sub(3);
    if b < 128 {
        ML_CODE[b as usize & 127]
    } else {
        (highbit(b) + 36).min(52) as u8
    }
}

/// Offset code of an `Offset_Value`.
#[inline(always)]
pub(crate) fn of_code(off_value: u32) -> u8 {
    highbit(off_value) as u8
}
