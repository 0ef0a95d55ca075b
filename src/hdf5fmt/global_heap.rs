//! Global heap (HDF5 File Format Specification III.E): collections (`GCOL`) of
//! objects holding variable-length data and region references, and the
//! 16-byte (for 8-byte offsets) heap IDs that point into them.

use std::collections::HashMap;

use crate::cursor::{bounded, Cursor};
use crate::error::{Error, Result};
use crate::source::Source;
use crate::{limits, Sizes};

/// A parsed global heap collection: object index → bytes.
#[derive(Clone, Debug)]
pub struct Collection {
    /// Address of the collection (its `GCOL` signature) in the file.
    pub address: u64,
    objects: HashMap<u16, Vec<u8>>,
}

impl Collection {
    /// Read and parse the collection at `address`.
    pub fn read(src: &dyn Source, sizes: Sizes, address: u64) -> Result<Self> {
        let hlen = 8 + u64::from(sizes.length);
        let head = src.read("global heap collection", address, hlen)?;
        let mut c = Cursor::new(&head, address, "global heap collection");
        c.signature(crate::signature::GCOL)?;
        let version = c.u8()?;
        if version != 1 {
            return Err(c.unsupported(format!("global heap version {version}")));
        }
        c.skip(3)?;
        let size = c.length(sizes.length)?;
        bounded(
            size,
            limits::MAX_READ,
            "global heap collection",
            address,
            "collection size",
        )?;
        if size < hlen {
            return Err(c.malformed(format!("collection size {size}")));
        }
        // Some writers record a size larger than what remains; read what exists.
        let all = src.read_upto("global heap collection", address, size)?;
        let mut c = Cursor::new(&all, address, "global heap collection");
        c.skip(hlen as usize)?;
        let mut objects = HashMap::new();
        let obj_head = 8 + usize::from(sizes.length);
        while c.remaining() >= obj_head {
            let index = c.u16()?;
            let _refs = c.u16()?;
            c.skip(4)?;
            let n = c.length(sizes.length)?;
            if index == 0 {
                break;
            }
            let data = c.bytes_u64(n)?;
            objects.insert(index, data.to_vec());
            let pad = (8 - (data.len() % 8)) % 8;
            if c.skip(pad).is_err() {
                break;
            }
        }
        Ok(Collection { address, objects })
    }

    /// The object with this index.
    pub fn object(&self, index: u32) -> Result<&[u8]> {
        u16::try_from(index)
            .ok()
            .and_then(|i| self.objects.get(&i))
            .map(Vec::as_slice)
            .ok_or_else(|| {
                Error::malformed(
                    "global heap collection",
                    self.address,
                    format!("no object with index {index}"),
                )
            })
    }
}

/// A global heap ID: collection address and object index (`None` address = empty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapId {
    /// Address of the global heap collection holding the object; `None` when stored undefined (all
    /// ones), which marks an empty or null element.
    pub collection: Option<u64>,
    /// Index of the object within its collection (heap object index 0 is the free space, never a
    /// real object).
    pub index: u32,
}

impl HeapId {
    /// Decode a heap ID: an offset-sized collection address followed by a 4-byte object index.
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        Ok(HeapId {
            collection: c.addr(sizes.offset)?,
            index: c.u32()?,
        })
    }

    /// Append the heap ID (an undefined collection as all ones), the inverse
    /// of [`HeapId::decode`].
    pub fn encode(&self, sizes: Sizes, out: &mut Vec<u8>) {
        let addr = self.collection.unwrap_or(u64::MAX);
        out.extend_from_slice(&addr.to_le_bytes()[..usize::from(sizes.offset).min(8)]);
        out.extend_from_slice(&self.index.to_le_bytes());
    }
}

/// A stored variable-length element: element count and where its bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlenRef {
    /// Length of the sequence in base-type elements (for variable-length strings, in bytes), the
    /// first 4 bytes of the stored element.
    pub length: u32,
    /// Global heap ID of the object holding the sequence's bytes.
    pub id: HeapId,
}

impl VlenRef {
    /// Decode the `4 + offset + 4` bytes of one vlen element.
    pub fn decode(bytes: &[u8], sizes: Sizes) -> Result<Self> {
        let mut c = Cursor::new(bytes, 0, "variable-length element");
        let length = c.u32()?;
        let id = HeapId::decode(&mut c, sizes)?;
        Ok(VlenRef { length, id })
    }

    /// Append the `4 + offset + 4` bytes of the element, the inverse of
    /// [`VlenRef::decode`].
    pub fn encode(&self, sizes: Sizes, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.length.to_le_bytes());
        self.id.encode(sizes, out);
    }
}

#[cfg(test)]
mod model_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn vlen_refs_round_trip(length: u32, collection in prop::option::of(0u64..u64::MAX), index: u32, small: bool) {
            let sizes = if small { Sizes { offset: 4, length: 4 } } else { Sizes::default() };
            let collection = collection.map(|a| if small { a & 0xFFFF_FFFE } else { a });
            let v = VlenRef { length, id: HeapId { collection, index } };
            let mut b = Vec::new();
            v.encode(sizes, &mut b);
            prop_assert_eq!(b.len(), 8 + usize::from(sizes.offset));
            prop_assert_eq!(VlenRef::decode(&b, sizes).unwrap(), v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemSource;

    fn collection() -> Vec<u8> {
        let mut b = b"GCOL\x01\0\0\0".to_vec();
        b.extend_from_slice(&4096u64.to_le_bytes());
        for (i, d) in [(1u16, &b"hello"[..]), (2, &b"abcdefgh"[..])] {
            b.extend_from_slice(&i.to_le_bytes());
            b.extend_from_slice(&[1, 0, 0, 0, 0, 0]);
            b.extend_from_slice(&(d.len() as u64).to_le_bytes());
            b.extend_from_slice(d);
            b.resize(b.len().div_ceil(8) * 8, 0);
        }
        b.resize(4096, 0);
        b
    }

    #[test]
    fn objects() {
        let src = MemSource::new(collection());
        let c = Collection::read(&src, Sizes::default(), 0).unwrap();
        assert_eq!(c.object(1).unwrap(), b"hello");
        assert_eq!(c.object(2).unwrap(), b"abcdefgh");
        assert!(c.object(3).is_err());
        assert!(c.object(70000).is_err());
    }

    #[test]
    fn vlen_ref_and_errors() {
        let mut b = 5u32.to_le_bytes().to_vec();
        b.extend_from_slice(&0x800u64.to_le_bytes());
        b.extend_from_slice(&2u32.to_le_bytes());
        let r = VlenRef::decode(&b, Sizes::default()).unwrap();
        assert_eq!(r.length, 5);
        assert_eq!(r.id.collection, Some(0x800));
        assert_eq!(r.id.index, 2);
        assert!(VlenRef::decode(&b[..10], Sizes::default()).is_err());
        let mut bad = collection();
        bad[0] = b'X';
        assert!(Collection::read(&MemSource::new(bad), Sizes::default(), 0).is_err());
        // object size pointing past the end
        let mut bad = collection();
        bad[24] = 0xff;
        bad[25] = 0xff;
        assert!(Collection::read(&MemSource::new(bad), Sizes::default(), 0).is_err());
    }
}
