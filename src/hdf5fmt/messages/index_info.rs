//! The dense-storage index message shared by link info (HDF5 File Format
//! Specification IV.A.2.c) and attribute info (IV.A.2.v), version 0: one
//! struct decoded and encoded for both, generic over the width of the
//! maximum creation index (64 bits for links, 16 for attributes).

use crate::cursor::Cursor;
use crate::encode::{put_u16, put_u64, put_var, UNDEF};
use crate::error::Result;
use crate::Sizes;

/// Flag bit 0: creation order tracked (the maximum creation index is stored).
pub const ORDER_TRACKED: u8 = 0x01;
/// Flag bit 1: creation order indexed (the creation-order index address is stored).
pub const ORDER_INDEXED: u8 = 0x02;

/// The width of a maximum creation index field: `u64` in link info, `u16`
/// in attribute info.
pub trait CreationIndex: Copy {
    /// The message's name in errors.
    const MESSAGE: &'static str;
    /// Zero.
    const ZERO: Self;
    /// Read the field.
    fn read(c: &mut Cursor<'_>) -> Result<Self>;
    /// Append the field.
    fn put(self, out: &mut Vec<u8>);
}

impl CreationIndex for u64 {
    const MESSAGE: &'static str = "link info";
    const ZERO: Self = 0;
    fn read(c: &mut Cursor<'_>) -> Result<Self> {
        c.u64()
    }
    fn put(self, out: &mut Vec<u8>) {
        put_u64(out, self);
    }
}

impl CreationIndex for u16 {
    const MESSAGE: &'static str = "attribute info";
    const ZERO: Self = 0;
    fn read(c: &mut Cursor<'_>) -> Result<Self> {
        c.u16()
    }
    fn put(self, out: &mut Vec<u8>) {
        put_u16(out, self);
    }
}

/// A decoded link info or attribute info message: where an object keeps its
/// dense links or attributes (fractal heap and v2 B-tree indexes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexInfo<M> {
    /// Largest creation order used so far, present when creation order is
    /// tracked (flags bit 0).
    pub max_creation_order: Option<M>,
    /// Fractal heap holding the messages (`None`: they are compact).
    pub heap_address: Option<u64>,
    /// v2 B-tree indexing by name hash (record type 5 for links, 8 for attributes).
    pub name_index: Option<u64>,
    /// v2 B-tree indexing by creation order (record type 6 or 9), when indexed
    /// and built.
    pub order_index: Option<u64>,
    /// Creation order is indexed (flags bit 1): the order index address is
    /// stored, undefined while the storage is compact.
    pub order_indexed: bool,
}

impl<M: CreationIndex> IndexInfo<M> {
    /// Decode a message body (version 0); undefined addresses (all ones) decode as `None`.
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let version = c.u8()?;
        if version != 0 {
            return Err(c.unsupported(format!("{} version {version}", M::MESSAGE)));
        }
        let flags = c.u8()?;
        let max_creation_order = if flags & ORDER_TRACKED != 0 {
            Some(M::read(c)?)
        } else {
            None
        };
        let heap_address = c.addr(sizes.offset)?;
        let name_index = c.addr(sizes.offset)?;
        let order_indexed = flags & ORDER_INDEXED != 0;
        let order_index = if order_indexed {
            c.addr(sizes.offset)?
        } else {
            None
        };
        Ok(IndexInfo {
            max_creation_order,
            heap_address,
            name_index,
            order_index,
            order_indexed,
        })
    }

    /// Flag bits: [`ORDER_TRACKED`] when the maximum is present, [`ORDER_INDEXED`].
    pub fn flags(&self) -> u8 {
        let tracked = if self.max_creation_order.is_some() {
            ORDER_TRACKED
        } else {
            0
        };
        tracked | if self.order_indexed { ORDER_INDEXED } else { 0 }
    }

    /// Encode the message body (version 0) with `sizes`' address width;
    /// `None` addresses are written undefined.
    pub fn encode(&self, sizes: Sizes) -> Vec<u8> {
        let o = usize::from(sizes.offset);
        let mut out = vec![0, self.flags()];
        if let Some(max) = self.max_creation_order {
            max.put(&mut out);
        }
        put_var(&mut out, self.heap_address.unwrap_or(UNDEF), o);
        put_var(&mut out, self.name_index.unwrap_or(UNDEF), o);
        if self.order_indexed {
            put_var(&mut out, self.order_index.unwrap_or(UNDEF), o);
        }
        out
    }

    /// The message for creation-order flag `bits` ([`ORDER_TRACKED`],
    /// [`ORDER_INDEXED`]; the maximum is kept only when tracked) and the
    /// three addresses, [`UNDEF`] for none.
    pub fn from_parts(
        bits: u8,
        max_order: Option<M>,
        heap: u64,
        name_index: u64,
        order_index: u64,
    ) -> Self {
        let defined = |a: u64| (a != UNDEF).then_some(a);
        let tracked = bits & ORDER_TRACKED != 0;
        IndexInfo {
            max_creation_order: if tracked {
                Some(max_order.unwrap_or(M::ZERO))
            } else {
                None
            },
            heap_address: defined(heap),
            name_index: defined(name_index),
            order_index: defined(order_index),
            order_indexed: bits & ORDER_INDEXED != 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip<M: CreationIndex + PartialEq + std::fmt::Debug>(
        info: IndexInfo<M>,
    ) -> std::result::Result<(), TestCaseError> {
        let b = info.encode(Sizes::default());
        let got = IndexInfo::<M>::decode(&mut Cursor::new(&b, 0, "t"), Sizes::default()).unwrap();
        prop_assert_eq!(got, info);
        Ok(())
    }

    fn addr() -> impl Strategy<Value = Option<u64>> {
        prop::option::of(0u64..u64::MAX)
    }

    proptest! {
        #[test]
        fn link_info_round_trips(max: Option<u64>, h in addr(), n in addr(), o in addr(), indexed: bool) {
            round_trip(IndexInfo { max_creation_order: max, heap_address: h, name_index: n, order_index: o.filter(|_| indexed), order_indexed: indexed })?;
        }

        #[test]
        fn attribute_info_round_trips(max: Option<u16>, h in addr(), n in addr(), o in addr(), indexed: bool) {
            round_trip(IndexInfo { max_creation_order: max, heap_address: h, name_index: n, order_index: o.filter(|_| indexed), order_indexed: indexed })?;
        }
    }

    #[test]
    fn layout_and_widths() {
        let li = IndexInfo::<u64>::from_parts(3, Some(9), 0x100, 0x200, 0x300);
        let b = li.encode(Sizes::default());
        assert_eq!(b.len(), 2 + 8 * 4);
        assert_eq!(&b[..3], &[0, 3, 9]);
        let ai = IndexInfo::<u16>::from_parts(1, Some(7), 0x100, 0x200, 0);
        let b = ai.encode(Sizes::default());
        assert_eq!(&b[..4], &[0, 1, 7, 0]);
        assert_eq!(b.len(), 2 + 2 + 16);
        // indexed but compact: the order index is written undefined
        let ai = IndexInfo::<u16>::from_parts(3, Some(0), UNDEF, UNDEF, UNDEF);
        let b = ai.encode(Sizes::default());
        assert_eq!(b.len(), 2 + 2 + 24);
        assert_eq!(&b[4..], &[0xff; 24]);
        assert!(
            IndexInfo::<u64>::decode(&mut Cursor::new(&[1, 0], 0, "t"), Sizes::default()).is_err()
        );
    }
}
