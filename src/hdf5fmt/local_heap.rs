//! Local heap (HDF5 File Format Specification III.D): the name store of
//! old-style groups and of the external data files message.

use crate::cursor::{bounded, Cursor};
use crate::error::Result;
use crate::signature;
use crate::source::Source;
use crate::{limits, Sizes};

/// A local heap's data segment.
#[derive(Clone, Debug)]
pub struct LocalHeap {
    /// Address of the local heap header (`HEAP` signature) in the file.
    pub address: u64,
    data: Vec<u8>,
    data_address: u64,
}

impl LocalHeap {
    /// Parse the heap header at `address` and load its data segment.
    pub fn read(src: &dyn Source, sizes: Sizes, address: u64) -> Result<Self> {
        let hlen = 8 + 2 * u64::from(sizes.length) + u64::from(sizes.offset);
        let head = src.read("local heap", address, hlen)?;
        let mut c = Cursor::new(&head, address, "local heap");
        c.signature(signature::HEAP)?;
        let version = c.u8()?;
        if version != 0 {
            return Err(c.unsupported(format!("local heap version {version}")));
        }
        c.skip(3)?;
        let size = c.length(sizes.length)?;
        let _free = c.length(sizes.length)?;
        let data_address = c
            .addr(sizes.offset)?
            .ok_or_else(|| c.malformed("undefined data segment address"))?;
        bounded(
            size,
            limits::MAX_READ,
            "local heap",
            address,
            "data segment size",
        )?;
        let data = src
            .read("local heap data", data_address, size)?
            .into_owned();
        Ok(LocalHeap {
            address,
            data,
            data_address,
        })
    }

    /// The NUL-terminated string at `offset` in the data segment.
    pub fn string(&self, offset: u64) -> Result<String> {
        let mut c = Cursor::new(&self.data, self.data_address, "local heap string");
        let pos = usize::try_from(offset).map_err(|_| c.malformed("offset out of range"))?;
        c.seek(pos)?;
        Ok(String::from_utf8_lossy(c.cstr()?).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemSource;

    fn heap(data: &[u8]) -> Vec<u8> {
        let mut b = b"HEAP\0\0\0\0".to_vec();
        b.extend_from_slice(&(data.len() as u64).to_le_bytes());
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        b.extend_from_slice(&32u64.to_le_bytes());
        b.extend_from_slice(data);
        b
    }

    #[test]
    fn strings() {
        let src = MemSource::new(heap(b"\0\0\0\0\0\0\0\0abc\0de\0"));
        let h = LocalHeap::read(&src, Sizes::default(), 0).unwrap();
        assert_eq!(h.string(8).unwrap(), "abc");
        assert_eq!(h.string(12).unwrap(), "de");
        assert_eq!(h.string(0).unwrap(), "");
        assert!(h.string(100).is_err());
        let src = MemSource::new(heap(b"abc"));
        let h = LocalHeap::read(&src, Sizes::default(), 0).unwrap();
        assert!(h.string(0).is_err());
    }

    #[test]
    fn bad_header() {
        let mut b = heap(b"x\0");
        b[0] = b'X';
        assert!(LocalHeap::read(&MemSource::new(b), Sizes::default(), 0).is_err());
        let mut b = heap(b"x\0");
        b[8] = 0xff;
        assert!(LocalHeap::read(&MemSource::new(b), Sizes::default(), 0).is_err());
    }
}
