//! Object reference count message (HDF5 File Format Specification IV.A.2.w),
//! version 0, decoded and encoded: the number of hard links to an object whose
//! header is version 2.

use crate::cursor::Cursor;
use crate::encode::put_u32;
use crate::error::Result;

/// Decode a reference count message body.
pub fn decode(c: &mut Cursor<'_>) -> Result<u32> {
    let version = c.u8()?;
    if version != 0 {
        return Err(c.unsupported(format!("reference count version {version}")));
    }
    c.u32()
}

/// Encode a reference count message, version 0.
pub fn encode(count: u32) -> Vec<u8> {
    let mut out = vec![0];
    put_u32(&mut out, count);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let b = encode(3);
        assert_eq!(b, vec![0, 3, 0, 0, 0]);
        assert_eq!(decode(&mut Cursor::new(&b, 0, "rc")).unwrap(), 3);
        assert!(decode(&mut Cursor::new(&[1, 3, 0, 0, 0], 0, "rc")).is_err());
        assert!(decode(&mut Cursor::new(&[0, 3], 0, "rc")).is_err());
    }
}
