//! Attribute info message (HDF5 File Format Specification IV.A.2.v), version
//! 0: where an object keeps its dense attributes (fractal heap and v2 B-tree
//! indexes). The model is [`IndexInfo`], shared with link info.

pub use super::index_info::IndexInfo;
use crate::Sizes;

/// A decoded attribute info message (16-bit maximum creation index).
pub type AttributeInfo = IndexInfo<u16>;

/// Encode an attribute info message with creation-order flags `bits` (as
/// [`crate::messages::link_info::encode`]; the maximum creation index is 16
/// bits): [`AttributeInfo::from_parts`] then [`AttributeInfo::encode`].
pub fn encode(
    bits: u8,
    max_order: Option<u16>,
    heap: u64,
    name_index: u64,
    order_index: u64,
) -> Vec<u8> {
    AttributeInfo::from_parts(bits, max_order, heap, name_index, order_index)
        .encode(Sizes::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::Cursor;

    #[test]
    fn decode() {
        let mut b = vec![0u8, 1, 7, 0];
        b.extend_from_slice(&0x100u64.to_le_bytes());
        b.extend_from_slice(&0x200u64.to_le_bytes());
        let ai = AttributeInfo::decode(&mut Cursor::new(&b, 0, "ai"), Sizes::default()).unwrap();
        assert_eq!(ai.max_creation_order, Some(7));
        assert_eq!(ai.heap_address, Some(0x100));
        assert_eq!(ai.order_index, None);
        assert!(!ai.order_indexed);
        assert_eq!(ai.encode(Sizes::default()), b);
        assert_eq!(encode(1, Some(7), 0x100, 0x200, 0), b);
        assert!(
            AttributeInfo::decode(&mut Cursor::new(&b[..9], 0, "ai"), Sizes::default()).is_err()
        );
    }
}
