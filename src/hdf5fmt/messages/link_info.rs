//! Link info message (HDF5 File Format Specification IV.A.2.c): where a
//! new-style group keeps its dense links (fractal heap and v2 B-tree indexes).

use crate::error::Result;
use crate::hdf5fmt::cursor::Cursor;
use crate::hdf5fmt::Sizes;

/// A decoded link info message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    /// Largest creation order used so far, when creation order is tracked.
    pub max_creation_order: Option<u64>,
    /// Fractal heap holding the link messages (`None`: links are compact).
    pub heap_address: Option<u64>,
    /// v2 B-tree indexing links by name hash (record type 5).
    pub name_index: Option<u64>,
    /// v2 B-tree indexing links by creation order (record type 6), when indexed.
    pub order_index: Option<u64>,
}

impl LinkInfo {
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let version = c.u8()?;
        if version != 0 {
            return Err(c.unsupported(format!("link info version {version}")));
        }
        let flags = c.u8()?;
        let max_creation_order = if flags & 1 != 0 { Some(c.u64()?) } else { None };
        let heap_address = c.addr(sizes.offset)?;
        let name_index = c.addr(sizes.offset)?;
        let order_index = if flags & 2 != 0 {
            c.addr(sizes.offset)?
        } else {
            None
        };
        Ok(LinkInfo {
            max_creation_order,
            heap_address,
            name_index,
            order_index,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode() {
        let mut b = vec![0u8, 3];
        b.extend_from_slice(&5u64.to_le_bytes());
        b.extend_from_slice(&0x100u64.to_le_bytes());
        b.extend_from_slice(&0x200u64.to_le_bytes());
        b.extend_from_slice(&[0xff; 8]);
        let li = LinkInfo::decode(&mut Cursor::new(&b, 0, "li"), Sizes::default()).unwrap();
        assert_eq!(li.max_creation_order, Some(5));
        assert_eq!(li.heap_address, Some(0x100));
        assert_eq!(li.name_index, Some(0x200));
        assert_eq!(li.order_index, None);
        assert!(LinkInfo::decode(&mut Cursor::new(&b[..20], 0, "li"), Sizes::default()).is_err());
        assert!(LinkInfo::decode(&mut Cursor::new(&[1, 0], 0, "li"), Sizes::default()).is_err());
    }
}
