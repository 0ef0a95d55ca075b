//! Object header continuation message (HDF5 File Format Specification IV.A.2.q):
//! where the next block of header messages lives.

use crate::cursor::Cursor;
use crate::error::Result;
use crate::Sizes;

/// Address and length of a continuation block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Continuation {
    /// Address of the continuation block in the file (never the undefined address: decoding refuses
    /// it).
    pub address: u64,
    /// Length of the continuation block in bytes.
    pub length: u64,
}

impl Continuation {
    /// Decode a continuation message body: an offset-sized address then a length-sized length.
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let address = c
            .addr(sizes.offset)?
            .ok_or_else(|| c.malformed("continuation with undefined address"))?;
        let length = c.length(sizes.length)?;
        Ok(Continuation { address, length })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode() {
        let mut b = 100u64.to_le_bytes().to_vec();
        b.extend_from_slice(&50u64.to_le_bytes());
        let c = Continuation::decode(&mut Cursor::new(&b, 0, "c"), Sizes::default()).unwrap();
        assert_eq!((c.address, c.length), (100, 50));
        assert!(
            Continuation::decode(&mut Cursor::new(&b[..10], 0, "c"), Sizes::default()).is_err()
        );
        let u = [0xffu8; 16];
        assert!(Continuation::decode(&mut Cursor::new(&u, 0, "c"), Sizes::default()).is_err());
    }
}
