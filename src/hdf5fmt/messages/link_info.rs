//! Link info message (HDF5 File Format Specification IV.A.2.c), version 0:
//! where a new-style group keeps its dense links (fractal heap and v2 B-tree
//! indexes). The model is [`IndexInfo`], shared with attribute info.

pub use super::index_info::IndexInfo;
use crate::Sizes;

/// A decoded link info message (64-bit maximum creation index).
pub type LinkInfo = IndexInfo<u64>;

/// Encode a link info message with creation-order flags `bits` (1 tracked:
/// `max_order` written; 2 indexed: `order_index` written) and 8-byte
/// addresses: [`LinkInfo::from_parts`] then [`LinkInfo::encode`].
pub fn encode(
    bits: u8,
    max_order: Option<u64>,
    heap: u64,
    name_index: u64,
    order_index: u64,
) -> Vec<u8> {
    LinkInfo::from_parts(bits, max_order, heap, name_index, order_index).encode(Sizes::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::Cursor;

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
        assert!(li.order_indexed);
        assert_eq!(li.encode(Sizes::default()), b);
        assert_eq!(encode(3, Some(5), 0x100, 0x200, u64::MAX), b);
        assert!(LinkInfo::decode(&mut Cursor::new(&b[..20], 0, "li"), Sizes::default()).is_err());
        assert!(LinkInfo::decode(&mut Cursor::new(&[1, 0], 0, "li"), Sizes::default()).is_err());
    }
}
