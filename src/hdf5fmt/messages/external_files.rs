//! External data files message (HDF5 File Format Specification IV.A.2.h): a
//! contiguous dataset's bytes stored in other files, named in a local heap.

use crate::cursor::Cursor;
use crate::error::Result;
use crate::Sizes;

/// One slot: `size` bytes at `file_offset` of the file named at `name_offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalSlot {
    /// Byte offset, in the local heap at the message's heap address, of the external file's
    /// null-terminated name.
    pub name_offset: u64,
    /// Byte offset in the external file where this slot's data begins.
    pub file_offset: u64,
    /// Number of bytes of the dataset stored in this slot (the spec's "Data Size").
    pub size: u64,
}

/// A decoded external data files message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalFiles {
    /// Local heap holding the file names.
    pub heap_address: u64,
    /// The used slots in order: the dataset's bytes are the concatenation of these pieces.
    pub slots: Vec<ExternalSlot>,
}

impl ExternalFiles {
    /// Decode an external data files message body (version 1): the name heap address and the used
    /// slots (allocated but unused slots are not read).
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let version = c.u8()?;
        if version != 1 {
            return Err(c.unsupported(format!("external files version {version}")));
        }
        c.skip(3)?;
        let _allocated = c.u16()?;
        let used = c.u16()?;
        let heap_address = c
            .addr(sizes.offset)?
            .ok_or_else(|| c.malformed("undefined external-file name heap"))?;
        let mut slots = Vec::with_capacity(usize::from(used).min(256));
        for _ in 0..used {
            slots.push(ExternalSlot {
                name_offset: c.length(sizes.length)?,
                file_offset: c.length(sizes.length)?,
                size: c.length(sizes.length)?,
            });
        }
        Ok(ExternalFiles {
            heap_address,
            slots,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode() {
        let mut b = vec![1u8, 0, 0, 0, 1, 0, 1, 0];
        b.extend_from_slice(&0x300u64.to_le_bytes());
        for v in [8u64, 0, 400] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let e = ExternalFiles::decode(&mut Cursor::new(&b, 0, "ef"), Sizes::default()).unwrap();
        assert_eq!(e.heap_address, 0x300);
        assert_eq!(e.slots[0].size, 400);
        assert!(
            ExternalFiles::decode(&mut Cursor::new(&b[..30], 0, "ef"), Sizes::default()).is_err()
        );
    }
}
