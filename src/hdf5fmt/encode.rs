//! Little-endian output helpers shared by the message encoders
//! ([`crate::messages`]) and the writer's structure encoders: the
//! write-side counterpart of [`crate::cursor`]. Every encoder appends
//! to a `Vec<u8>`; none parses.

use crate::error::{Error, Result};

/// The undefined address (all bits set).
pub const UNDEF: u64 = u64::MAX;

/// Bytes needed to hold values from 0 to `limit` (HDF5's `limit_enc_size`).
pub fn limit_enc_size(limit: u64) -> usize {
    (log2_floor(limit) / 8 + 1) as usize
}

/// Floor of log2 (0 for 0).
pub fn log2_floor(v: u64) -> u32 {
    if v == 0 {
        0
    } else {
        63 - v.leading_zeros()
    }
}

/// Append the low `n` bytes of `v`, little-endian.
pub fn put_var(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend_from_slice(&v.to_le_bytes()[..n.min(8)]);
}

/// Append a little-endian `u16`.
pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Append a little-endian `u32`.
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Append a little-endian `u64`.
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// `n` as a 16-bit length field, or an error naming `what`.
pub fn u16_len(n: usize, what: &str) -> Result<u16> {
    u16::try_from(n).map_err(|_| Error::InvalidArgument(format!("{what} too long ({n} bytes)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_enc_sizes() {
        assert_eq!(limit_enc_size(0), 1);
        assert_eq!(limit_enc_size(255), 1);
        assert_eq!(limit_enc_size(256), 2);
        assert_eq!(limit_enc_size(65535), 2);
        assert_eq!(limit_enc_size(65536), 3);
    }

    #[test]
    fn var_widths() {
        let mut b = Vec::new();
        put_var(&mut b, 0x0102_0304, 3);
        put_var(&mut b, 7, 12);
        assert_eq!(b, [4, 3, 2, 7, 0, 0, 0, 0, 0, 0, 0]);
        assert!(u16_len(70_000, "x").is_err());
        assert_eq!(u16_len(65_535, "x").unwrap(), 65_535);
    }
}
