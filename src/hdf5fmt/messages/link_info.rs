//! Link info message (HDF5 File Format Specification IV.A.2.c), version 0,
//! decoded and encoded: where a new-style group keeps its dense links (fractal
//! heap and v2 B-tree indexes).

use crate::cursor::Cursor;
use crate::encode::put_u64;
use crate::error::Result;
use crate::Sizes;

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
    /// Decode a link info message body (version 0); undefined addresses (all ones) decode as
    /// `None`.
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

/// Encode a link info message, version 0, with creation-order flags `bits`
/// (1 tracked: `max_order` written; 2 indexed: `order_index` written).
pub fn encode(
    bits: u8,
    max_order: Option<u64>,
    heap: u64,
    name_index: u64,
    order_index: u64,
) -> Vec<u8> {
    encode_index_info(
        bits,
        |out| put_u64(out, max_order.unwrap_or(0)),
        heap,
        name_index,
        order_index,
    )
}

/// The layout the link info and attribute info messages share: version,
/// flags, the maximum creation index (its width differs) when tracked, the
/// heap and name index, the creation-order index when indexed.
pub fn encode_index_info(
    bits: u8,
    put_max: impl FnOnce(&mut Vec<u8>),
    heap: u64,
    name_index: u64,
    order_index: u64,
) -> Vec<u8> {
    let mut out = vec![0, bits & 3];
    if bits & 1 != 0 {
        put_max(&mut out);
    }
    put_u64(&mut out, heap);
    put_u64(&mut out, name_index);
    if bits & 2 != 0 {
        put_u64(&mut out, order_index);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_round_trip() {
        let undef = u64::MAX;
        let dec = |b: &[u8]| LinkInfo::decode(&mut Cursor::new(b, 0, "li"), Sizes::default());
        let b = encode(0, None, undef, undef, undef);
        assert_eq!(b.len(), 18);
        assert_eq!(
            dec(&b).unwrap(),
            LinkInfo {
                max_creation_order: None,
                heap_address: None,
                name_index: None,
                order_index: None,
            }
        );
        let b = encode(3, Some(9), 0x100, 0x200, 0x300);
        assert_eq!(b.len(), 2 + 8 * 4);
        assert_eq!(
            dec(&b).unwrap(),
            LinkInfo {
                max_creation_order: Some(9),
                heap_address: Some(0x100),
                name_index: Some(0x200),
                order_index: Some(0x300),
            }
        );
    }

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
