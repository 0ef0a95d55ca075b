//! Version 2 B-tree record layouts (HDF5 File Format Specification III.A.2,
//! record types 1–11), each parsed by a small pure function from the raw record
//! bytes handed out by [`super::BTreeV2::for_each_record`] and encoded by the
//! record's `encode` beside it (what the writer emits).

use crate::cursor::Cursor;
use crate::encode::{put_u32, put_u64, put_var, UNDEF};
use crate::error::Result;
use crate::Sizes;

const REC: &str = "v2 B-tree record";

/// Types 1–4: where a fractal heap's "huge" object lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HugeObjectRecord {
    /// File address of the object's (possibly filtered) bytes.
    pub address: u64,
    /// Stored length in bytes.
    pub stored_len: u64,
    /// Filter mask (types 2 and 4; 0 otherwise).
    pub filter_mask: u32,
    /// Length after undoing the filters (types 2 and 4; the stored length otherwise).
    pub object_len: u64,
    /// Heap ID key (types 1 and 2; `None` for directly addressed objects).
    pub id: Option<u64>,
}

/// Parse a record of type 1 (indirect), 2 (indirect, filtered), 3 (direct) or
/// 4 (direct, filtered).
pub fn huge_object(record_type: u8, rec: &[u8], sizes: Sizes) -> Result<HugeObjectRecord> {
    let mut c = Cursor::new(rec, 0, REC);
    let address = c.uint(usize::from(sizes.offset))?;
    let stored_len = c.length(sizes.length)?;
    let filtered = matches!(record_type, 2 | 4);
    let (filter_mask, object_len) = if filtered {
        (c.u32()?, c.length(sizes.length)?)
    } else {
        (0, stored_len)
    };
    let id = match record_type {
        1 | 2 => Some(c.length(sizes.length)?),
        3 | 4 => None,
        t => return Err(c.unsupported(format!("record type {t} is not a huge-object record"))),
    };
    Ok(HugeObjectRecord {
        address,
        stored_len,
        filter_mask,
        object_len,
        id,
    })
}

impl HugeObjectRecord {
    /// Encode as a record of `record_type` (1–4), the inverse of [`huge_object`]:
    /// the filter fields for types 2 and 4, the key (0 when absent) for 1 and 2.
    pub fn encode(&self, record_type: u8, sizes: Sizes, out: &mut Vec<u8>) {
        put_var(out, self.address, usize::from(sizes.offset));
        put_var(out, self.stored_len, usize::from(sizes.length));
        if matches!(record_type, 2 | 4) {
            put_u32(out, self.filter_mask);
            put_var(out, self.object_len, usize::from(sizes.length));
        }
        if matches!(record_type, 1 | 2) {
            put_var(out, self.id.unwrap_or(0), usize::from(sizes.length));
        }
    }
}

/// Type 5: a link in a dense group's name index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkNameRecord<'a> {
    /// lookup3 hash of the link name.
    pub hash: u32,
    /// Fractal heap ID of the link message.
    pub heap_id: &'a [u8],
}

/// Parse a type-5 record (the heap ID is the rest of the record, 7 bytes as written).
pub fn link_name(rec: &[u8]) -> Result<LinkNameRecord<'_>> {
    let mut c = Cursor::new(rec, 0, REC);
    let hash = c.u32()?;
    Ok(LinkNameRecord {
        hash,
        heap_id: c.rest(),
    })
}

impl LinkNameRecord<'_> {
    /// Encode as a type-5 record, the inverse of [`link_name`].
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u32(out, self.hash);
        out.extend_from_slice(self.heap_id);
    }
}

/// Type 6: a link in a dense group's creation-order index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkOrderRecord<'a> {
    /// Creation order of the link, a 64-bit counter unique within the group.
    pub creation_order: u64,
    /// Fractal heap ID of the link message in the group's link heap (the rest of the record, 7
    /// bytes as written).
    pub heap_id: &'a [u8],
}

/// Parse a type-6 record.
pub fn link_order(rec: &[u8]) -> Result<LinkOrderRecord<'_>> {
    let mut c = Cursor::new(rec, 0, REC);
    let creation_order = c.u64()?;
    Ok(LinkOrderRecord {
        creation_order,
        heap_id: c.rest(),
    })
}

impl LinkOrderRecord<'_> {
    /// Encode as a type-6 record, the inverse of [`link_order`].
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u64(out, self.creation_order);
        out.extend_from_slice(self.heap_id);
    }
}

/// Type 7: a shared object header message index entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SharedMessageRecord<'a> {
    /// The message lives in the shared-message fractal heap.
    InHeap {
        /// Jenkins lookup3 hash of the shared message's encoded body.
        hash: u32,
        /// Number of objects that share this message.
        ref_count: u32,
        /// Fractal heap ID (8 bytes) of the message in the shared-message heap.
        heap_id: &'a [u8],
    },
    /// The message lives in an object header.
    InObjectHeader {
        /// Jenkins lookup3 hash of the shared message's encoded body.
        hash: u32,
        /// Message type number of the shared message.
        message_type: u8,
        /// Object header index: the message is the `index`-th message of its type in that header.
        index: u16,
        /// Address of the object header holding the message.
        header_address: u64,
    },
}

/// Parse a type-7 record.
pub fn shared_message(rec: &[u8], sizes: Sizes) -> Result<SharedMessageRecord<'_>> {
    let mut c = Cursor::new(rec, 0, REC);
    let location = c.u8()?;
    let hash = c.u32()?;
    match location {
        0 => {
            let ref_count = c.u32()?;
            let heap_id = c.bytes(8)?;
            Ok(SharedMessageRecord::InHeap {
                hash,
                ref_count,
                heap_id,
            })
        }
        1 => {
            c.skip(1)?;
            let message_type = c.u8()?;
            let index = c.u16()?;
            let header_address = c.uint(usize::from(sizes.offset))?;
            Ok(SharedMessageRecord::InObjectHeader {
                hash,
                message_type,
                index,
                header_address,
            })
        }
        l => Err(c.malformed(format!("shared message location {l}"))),
    }
}

/// Type 8: an attribute in a dense attribute name index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttributeNameRecord<'a> {
    /// Fractal heap ID of the attribute message in the object's dense attribute heap (8 bytes as
    /// written).
    pub heap_id: &'a [u8],
    /// Object header message flags of the attribute message.
    pub message_flags: u8,
    /// Creation order of the attribute (32 bits).
    pub creation_order: u32,
    /// lookup3 hash of the attribute name.
    pub hash: u32,
}

/// Parse a type-8 record (heap ID: the first `len - 9` bytes, 8 as written).
pub fn attribute_name(rec: &[u8]) -> Result<AttributeNameRecord<'_>> {
    let mut c = Cursor::new(rec, 0, REC);
    let id_len = rec.len().saturating_sub(9);
    let heap_id = c.bytes(id_len)?;
    let message_flags = c.u8()?;
    let creation_order = c.u32()?;
    let hash = c.u32()?;
    Ok(AttributeNameRecord {
        heap_id,
        message_flags,
        creation_order,
        hash,
    })
}

impl AttributeNameRecord<'_> {
    /// Encode as a type-8 record, the inverse of [`attribute_name`].
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.heap_id);
        out.push(self.message_flags);
        put_u32(out, self.creation_order);
        put_u32(out, self.hash);
    }
}

/// Type 9: an attribute in a dense attribute creation-order index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttributeOrderRecord<'a> {
    /// Fractal heap ID of the attribute message in the object's dense attribute heap.
    pub heap_id: &'a [u8],
    /// Object header message flags of the attribute message.
    pub message_flags: u8,
    /// Creation order of the attribute (32 bits), the key of this index.
    pub creation_order: u32,
}

/// Parse a type-9 record (heap ID: the first `len - 5` bytes).
pub fn attribute_order(rec: &[u8]) -> Result<AttributeOrderRecord<'_>> {
    let mut c = Cursor::new(rec, 0, REC);
    let id_len = rec.len().saturating_sub(5);
    let heap_id = c.bytes(id_len)?;
    let message_flags = c.u8()?;
    let creation_order = c.u32()?;
    Ok(AttributeOrderRecord {
        heap_id,
        message_flags,
        creation_order,
    })
}

impl AttributeOrderRecord<'_> {
    /// Encode as a type-9 record, the inverse of [`attribute_order`].
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.heap_id);
        out.push(self.message_flags);
        put_u32(out, self.creation_order);
    }
}

/// Types 10 and 11: a chunk of a dataset indexed by a v2 B-tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkRecordV2 {
    /// Chunk address (`None` when undefined).
    pub address: Option<u64>,
    /// Stored size (type 11 only).
    pub size: Option<u64>,
    /// Filter mask (type 11; 0 for type 10).
    pub filter_mask: u32,
    /// Chunk offsets in units of chunks ("scaled"), one per dataspace dimension.
    pub scaled: Vec<u64>,
}

/// Parse a type-10 (`filtered == false`) or type-11 record of a `rank`-dimensional
/// dataset. The type-11 size field takes the bytes left over by the fixed fields.
pub fn chunk(rec: &[u8], sizes: Sizes, rank: usize, filtered: bool) -> Result<ChunkRecordV2> {
    let mut c = Cursor::new(rec, 0, REC);
    let address = c.addr(sizes.offset)?;
    let fixed = usize::from(sizes.offset)
        .saturating_add(rank.saturating_mul(8))
        .saturating_add(if filtered { 4 } else { 0 });
    let (size, filter_mask) = if filtered {
        let width = rec
            .len()
            .checked_sub(fixed)
            .filter(|w| (1..=8).contains(w))
            .ok_or_else(|| c.malformed(format!("record of {} bytes for rank {rank}", rec.len())))?;
        (Some(c.uint(width)?), c.u32()?)
    } else {
        (None, 0)
    };
    let mut scaled = Vec::with_capacity(rank.min(32));
    for _ in 0..rank {
        scaled.push(c.u64()?);
    }
    Ok(ChunkRecordV2 {
        address,
        size,
        filter_mask,
        scaled,
    })
}

impl ChunkRecordV2 {
    /// Encode as a type-10 record (no size) or a type-11 record (a size of
    /// `size_width` bytes and the filter mask), the inverse of [`chunk`]. An
    /// undefined address is written as all ones.
    pub fn encode(&self, sizes: Sizes, size_width: usize, out: &mut Vec<u8>) {
        put_var(
            out,
            self.address.unwrap_or(UNDEF),
            usize::from(sizes.offset),
        );
        if let Some(size) = self.size {
            put_var(out, size, size_width);
            put_u32(out, self.filter_mask);
        }
        for &c in &self.scaled {
            put_u64(out, c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sizes() -> impl Strategy<Value = Sizes> {
        (
            prop::sample::select(vec![2u8, 4, 8]),
            prop::sample::select(vec![2u8, 4, 8]),
        )
            .prop_map(|(offset, length)| Sizes { offset, length })
    }

    fn fit(v: u64, bytes: u8) -> u64 {
        if bytes >= 8 {
            v
        } else {
            v & ((1u64 << (8 * u32::from(bytes))) - 1)
        }
    }

    proptest! {
        #[test]
        fn huge_records_round_trip(t in 1u8..=4, a: u64, len: u64, mask: u32, olen: u64, key: u64, s in sizes()) {
            let filtered = matches!(t, 2 | 4);
            let r = HugeObjectRecord {
                address: fit(a, s.offset),
                stored_len: fit(len, s.length),
                filter_mask: if filtered { mask } else { 0 },
                object_len: if filtered { fit(olen, s.length) } else { fit(len, s.length) },
                id: matches!(t, 1 | 2).then(|| fit(key, s.length)),
            };
            let mut b = Vec::new();
            r.encode(t, s, &mut b);
            prop_assert_eq!(huge_object(t, &b, s).unwrap(), r);
        }

        #[test]
        fn group_records_round_trip(hash: u32, order: u64, id in prop::collection::vec(any::<u8>(), 7)) {
            let mut b = Vec::new();
            LinkNameRecord { hash, heap_id: &id }.encode(&mut b);
            prop_assert_eq!(b.len(), 11);
            prop_assert_eq!(link_name(&b).unwrap(), LinkNameRecord { hash, heap_id: &id });
            let mut b = Vec::new();
            LinkOrderRecord { creation_order: order, heap_id: &id }.encode(&mut b);
            prop_assert_eq!(b.len(), 15);
            prop_assert_eq!(link_order(&b).unwrap(), LinkOrderRecord { creation_order: order, heap_id: &id });
        }

        #[test]
        fn attribute_records_round_trip(flags: u8, order: u32, hash: u32, id in prop::collection::vec(any::<u8>(), 8)) {
            let name = AttributeNameRecord { heap_id: &id, message_flags: flags, creation_order: order, hash };
            let mut b = Vec::new();
            name.encode(&mut b);
            prop_assert_eq!(b.len(), 17);
            prop_assert_eq!(attribute_name(&b).unwrap(), name);
            let by_order = AttributeOrderRecord { heap_id: &id, message_flags: flags, creation_order: order };
            let mut b = Vec::new();
            by_order.encode(&mut b);
            prop_assert_eq!(b.len(), 13);
            prop_assert_eq!(attribute_order(&b).unwrap(), by_order);
        }

        #[test]
        fn chunk_records_round_trip(
            a in prop::option::of(0u64..u64::MAX),
            size: u64,
            width in 1usize..=8,
            mask: u32,
            filtered: bool,
            scaled in prop::collection::vec(any::<u64>(), 0..5),
        ) {
            let s = Sizes::default();
            let size = if width < 8 { size & ((1u64 << (8 * width)) - 1) } else { size };
            let r = ChunkRecordV2 {
                address: a,
                size: filtered.then_some(size),
                filter_mask: if filtered { mask } else { 0 },
                scaled,
            };
            let mut b = Vec::new();
            r.encode(s, width, &mut b);
            prop_assert_eq!(chunk(&b, s, r.scaled.len(), filtered).unwrap(), r);
        }
    }

    #[test]
    fn huge_records() {
        let s = Sizes::default();
        let mut r = Vec::new();
        r.extend_from_slice(&0x1000u64.to_le_bytes());
        r.extend_from_slice(&77u64.to_le_bytes());
        r.extend_from_slice(&5u64.to_le_bytes());
        let h = huge_object(1, &r, s).unwrap();
        assert_eq!(
            (h.address, h.stored_len, h.object_len, h.id),
            (0x1000, 77, 77, Some(5))
        );
        let h = huge_object(3, &r[..16], s).unwrap();
        assert_eq!(h.id, None);
        let mut r = Vec::new();
        r.extend_from_slice(&0x2000u64.to_le_bytes());
        r.extend_from_slice(&10u64.to_le_bytes());
        r.extend_from_slice(&2u32.to_le_bytes());
        r.extend_from_slice(&40u64.to_le_bytes());
        let h = huge_object(4, &r, s).unwrap();
        assert_eq!((h.stored_len, h.filter_mask, h.object_len), (10, 2, 40));
        assert!(huge_object(2, &r, s).is_err()); // id missing
        assert!(huge_object(5, &r, s).is_err());
    }

    #[test]
    fn group_and_attribute_records() {
        let mut r = 0xdead_beefu32.to_le_bytes().to_vec();
        r.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7]);
        let l = link_name(&r).unwrap();
        assert_eq!((l.hash, l.heap_id.len()), (0xdead_beef, 7));
        let mut r = 9u64.to_le_bytes().to_vec();
        r.extend_from_slice(&[0; 7]);
        assert_eq!(link_order(&r).unwrap().creation_order, 9);
        let mut r = vec![1, 2, 3, 4, 5, 6, 7, 8, 0x01];
        r.extend_from_slice(&3u32.to_le_bytes());
        r.extend_from_slice(&0x1234u32.to_le_bytes());
        let a = attribute_name(&r).unwrap();
        assert_eq!(
            (a.heap_id, a.message_flags, a.creation_order, a.hash),
            (&[1u8, 2, 3, 4, 5, 6, 7, 8][..], 1, 3, 0x1234)
        );
        let a = attribute_order(&r[..13]).unwrap();
        assert_eq!(a.creation_order, 3);
        assert!(attribute_order(&r[..3]).is_err());
    }

    #[test]
    fn shared_message_records() {
        let mut r = vec![0u8];
        r.extend_from_slice(&7u32.to_le_bytes());
        r.extend_from_slice(&2u32.to_le_bytes());
        r.extend_from_slice(&[9; 8]);
        match shared_message(&r, Sizes::default()).unwrap() {
            SharedMessageRecord::InHeap {
                hash,
                ref_count,
                heap_id,
            } => {
                assert_eq!((hash, ref_count, heap_id), (7, 2, &[9u8; 8][..]))
            }
            other => panic!("{other:?}"),
        }
        let mut r = vec![1u8];
        r.extend_from_slice(&7u32.to_le_bytes());
        r.extend_from_slice(&[0, 3, 1, 0]);
        r.extend_from_slice(&0x800u64.to_le_bytes());
        assert_eq!(
            shared_message(&r, Sizes::default()).unwrap(),
            SharedMessageRecord::InObjectHeader {
                hash: 7,
                message_type: 3,
                index: 1,
                header_address: 0x800
            }
        );
        r[0] = 4;
        assert!(shared_message(&r, Sizes::default()).is_err());
    }

    #[test]
    fn chunk_records() {
        let s = Sizes::default();
        let mut r = 0x400u64.to_le_bytes().to_vec();
        r.extend_from_slice(&1u64.to_le_bytes());
        r.extend_from_slice(&2u64.to_le_bytes());
        let c = chunk(&r, s, 2, false).unwrap();
        assert_eq!(
            (c.address, c.size, c.scaled.clone()),
            (Some(0x400), None, vec![1, 2])
        );
        let mut r = 0x400u64.to_le_bytes().to_vec();
        r.extend_from_slice(&[0x34, 0x12, 0x00]); // 3-byte size
        r.extend_from_slice(&1u32.to_le_bytes());
        r.extend_from_slice(&5u64.to_le_bytes());
        let c = chunk(&r, s, 1, true).unwrap();
        assert_eq!(
            (c.size, c.filter_mask, c.scaled),
            (Some(0x1234), 1, vec![5])
        );
        assert!(chunk(&r[..12], s, 1, true).is_err());
        let mut u = vec![0xff; 8];
        u.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(chunk(&u, s, 1, false).unwrap().address, None);
    }
}
