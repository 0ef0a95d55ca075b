//! Attribute info message (HDF5 File Format Specification IV.A.2.v), version 0,
//! decoded and encoded: where an object keeps its dense attributes (fractal
//! heap and v2 B-tree indexes).

use crate::cursor::Cursor;
use crate::encode::put_u16;
use crate::error::Result;
use crate::messages::link_info::encode_index_info;
use crate::Sizes;

/// A decoded attribute info message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttributeInfo {
    /// Maximum creation index of the object's attributes, present when flags bit 0 (creation order
    /// tracked) is set.
    pub max_creation_order: Option<u16>,
    /// Fractal heap holding the attribute messages (`None`: attributes are compact).
    pub heap_address: Option<u64>,
    /// v2 B-tree indexing attributes by name hash (record type 8).
    pub name_index: Option<u64>,
    /// v2 B-tree indexing attributes by creation order (record type 9).
    pub order_index: Option<u64>,
}

impl AttributeInfo {
    /// Decode an attribute info message body (version 0 only); undefined addresses (all ones)
    /// decode as `None`.
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let version = c.u8()?;
        if version != 0 {
            return Err(c.unsupported(format!("attribute info version {version}")));
        }
        let flags = c.u8()?;
        let max_creation_order = if flags & 1 != 0 { Some(c.u16()?) } else { None };
        let heap_address = c.addr(sizes.offset)?;
        let name_index = c.addr(sizes.offset)?;
        let order_index = if flags & 2 != 0 {
            c.addr(sizes.offset)?
        } else {
            None
        };
        Ok(AttributeInfo {
            max_creation_order,
            heap_address,
            name_index,
            order_index,
        })
    }
}

/// Encode an attribute info message, version 0, with creation-order flags
/// `bits` (as [`crate::messages::link_info::encode`]; the maximum
/// creation index is 16 bits).
pub fn encode(
    bits: u8,
    max_order: Option<u16>,
    heap: u64,
    name_index: u64,
    order_index: u64,
) -> Vec<u8> {
    encode_index_info(
        bits,
        |out| put_u16(out, max_order.unwrap_or(0)),
        heap,
        name_index,
        order_index,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_round_trip() {
        let b = encode(1, Some(7), 0x100, 0x200, 0);
        assert_eq!(&b[..4], &[0, 1, 7, 0]);
        let ai = AttributeInfo::decode(&mut Cursor::new(&b, 0, "ai"), Sizes::default()).unwrap();
        assert_eq!(
            ai,
            AttributeInfo {
                max_creation_order: Some(7),
                heap_address: Some(0x100),
                name_index: Some(0x200),
                order_index: None,
            }
        );
        let b = encode(2, None, u64::MAX, 0x10, 0x20);
        let ai = AttributeInfo::decode(&mut Cursor::new(&b, 0, "ai"), Sizes::default()).unwrap();
        assert_eq!((ai.heap_address, ai.order_index), (None, Some(0x20)));
    }

    #[test]
    fn decode() {
        let mut b = vec![0u8, 1, 7, 0];
        b.extend_from_slice(&0x100u64.to_le_bytes());
        b.extend_from_slice(&0x200u64.to_le_bytes());
        let ai = AttributeInfo::decode(&mut Cursor::new(&b, 0, "ai"), Sizes::default()).unwrap();
        assert_eq!(ai.max_creation_order, Some(7));
        assert_eq!(ai.heap_address, Some(0x100));
        assert_eq!(ai.order_index, None);
        assert!(
            AttributeInfo::decode(&mut Cursor::new(&b[..9], 0, "ai"), Sizes::default()).is_err()
        );
    }
}
