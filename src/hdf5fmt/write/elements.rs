//! Element values whose stored bytes depend on where other things land in the
//! file: references (HDF5 File Format Specification IV.A.2.d class 7: object
//! references hold an object header address, dataset region references a global
//! heap ID of `address + serialized selection`, revised references (`H5R_ref_t`
//! on disk) `type, flags, token` inline or `type, flags, length, heap ID`) and
//! variable-length values anywhere inside a type (class 9, global heap pointers,
//! III.E). Values are built as bytes plus [`Fixup`]s at byte offsets; the
//! serialiser resolves the fixups once object addresses are known.

use super::global_heap::{vlen_pointer, GlobalHeap};
use super::ids::ObjectId;
use super::sink::Sink;
use crate::error::{Error, Result};

/// Size of a stored revised reference with 8-byte addresses (`H5T_STD_REF` on disk).
pub const REVISED_REF_SIZE: usize = 18;
/// `H5R_OBJECT2`: the type byte of a revised reference to an object.
pub const REF_OBJECT2: u8 = 2;
/// `H5R_DATASET_REGION2`: the type byte of a revised reference to a region of a dataset.
pub const REF_REGION2: u8 = 3;
/// `H5R_ATTR`: the type byte of a revised reference to an attribute.
pub const REF_ATTR: u8 = 4;

/// Something written into element bytes at serialisation time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fixup {
    /// Old-style object reference: the 8-byte header address of the object.
    Object(ObjectId),
    /// Old-style dataset region reference: a heap object `address + selection`
    /// (`selection` is libhdf5's serialized selection), stored as a 12-byte heap ID.
    Region {
        /// The dataset the region belongs to; its header address starts the heap object.
        target: ObjectId,
        /// libhdf5's serialized dataspace selection of the region, appended after the address.
        selection: Vec<u8>,
    },
    /// Revised reference to an object of this file (18 bytes). `kind` is
    /// [`REF_OBJECT2`], [`REF_REGION2`] or [`REF_ATTR`]; `tail` follows the token
    /// in the encoding (serialized selection, or u16 length + attribute name).
    Revised {
        /// Reference type byte: [`REF_OBJECT2`], [`REF_REGION2`] or [`REF_ATTR`].
        kind: u8,
        /// The referenced object (for attribute references, the object holding the attribute).
        target: ObjectId,
        /// Bytes encoded after the 8-byte token: the serialized selection, or a u16 length and the
        /// attribute name; empty for object references.
        tail: Vec<u8>,
    },
    /// Revised reference stored as given (`type`, `flags`, heap blob): external
    /// references, whose token is another file's address.
    RevisedBlob {
        /// Reference type byte (`H5R_type_t`).
        kind: u8,
        /// Reference flags byte (bit 0: external reference), written as given.
        flags: u8,
        /// The reference's encoded body as found in the source's global heap (for an external
        /// reference it names the other file), stored as a new global heap object.
        blob: Vec<u8>,
    },
    /// Variable-length value: `count` elements (bytes for strings) whose stored
    /// bytes are `value` (itself resolved first), as a 16-byte heap pointer.
    Vlen {
        /// Sequence length in base-type elements (in bytes for strings), the pointer's first
        /// 4 bytes.
        count: u32,
        /// The sequence's elements, resolved and stored as one global heap object.
        value: Box<Elements>,
    },
}

/// Element bytes with fixups at byte offsets (each fixup overwrites the bytes
/// from its offset: 8 for objects, 12 for regions, 18 for revised references,
/// 16 for variable-length values).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Elements {
    /// The element bytes in file order, with placeholder bytes where fixups go.
    pub bytes: Vec<u8>,
    /// Fixups as (byte offset into `bytes`, what to write there), applied in order.
    pub fixups: Vec<(usize, Fixup)>,
}

impl Elements {
    /// Plain bytes without fixups.
    pub fn raw(bytes: Vec<u8>) -> Self {
        Elements {
            bytes,
            fixups: Vec::new(),
        }
    }

    /// True when some fixup (at any depth) needs an object address.
    pub fn has_references(&self) -> bool {
        self.fixups.iter().any(|(_, f)| match f {
            Fixup::Object(_) | Fixup::Region { .. } | Fixup::Revised { .. } => true,
            Fixup::RevisedBlob { .. } => false,
            Fixup::Vlen { value, .. } => value.has_references(),
        })
    }
}

/// Width of the bytes a fixup writes.
fn width(f: &Fixup) -> usize {
    match f {
        Fixup::Object(_) => 8,
        Fixup::Region { .. } => 12,
        Fixup::Revised { .. } | Fixup::RevisedBlob { .. } => REVISED_REF_SIZE,
        Fixup::Vlen { .. } => 16,
    }
}

fn heap_id(r: crate::global_heap::HeapId) -> [u8; 12] {
    let mut b = Vec::with_capacity(12);
    r.encode(super::sizes::WRITER_SIZES, &mut b);
    let mut out = [0u8; 12];
    out.copy_from_slice(&b);
    out
}

/// Resolve `e` into stored bytes: `addr` gives an object's header address
/// (`None` while unknown is an error), heap objects go to `gheap`.
pub fn resolve(
    e: &Elements,
    addr: &dyn Fn(ObjectId) -> Option<u64>,
    gheap: &mut GlobalHeap,
    sink: &mut Sink,
    depth: usize,
) -> Result<Vec<u8>> {
    if depth > crate::limits::MAX_DATATYPE_DEPTH {
        return Err(Error::InvalidArgument(
            "variable-length values nested too deeply".into(),
        ));
    }
    let need = |o: ObjectId| {
        addr(o).ok_or_else(|| {
            Error::InvalidArgument(format!("reference to {o:?}, which is not in the file"))
        })
    };
    let mut out = e.bytes.clone();
    for (at, f) in &e.fixups {
        let val: Vec<u8> = match f {
            Fixup::Object(o) => need(*o)?.to_le_bytes().to_vec(),
            Fixup::Region { target, selection } => {
                let mut blob = need(*target)?.to_le_bytes().to_vec();
                blob.extend_from_slice(selection);
                heap_id(gheap.add(sink, &blob)?).to_vec()
            }
            Fixup::Revised { kind, target, tail } => {
                let a = need(*target)?;
                // encoding after the 2-byte header: token size, token, tail
                let mut enc = vec![8u8];
                enc.extend_from_slice(&a.to_le_bytes());
                enc.extend_from_slice(tail);
                if *kind == REF_OBJECT2 && tail.is_empty() {
                    let mut v = vec![*kind, 0];
                    v.extend_from_slice(&enc);
                    v.resize(REVISED_REF_SIZE, 0);
                    v
                } else {
                    revised_blob(*kind, 0, &enc, gheap, sink)?
                }
            }
            Fixup::RevisedBlob { kind, flags, blob } => {
                revised_blob(*kind, *flags, blob, gheap, sink)?
            }
            Fixup::Vlen { count, value } => {
                let inner = resolve(value, addr, gheap, sink, depth + 1)?;
                vlen_pointer(*count, gheap.add(sink, &inner)?).to_vec()
            }
        };
        let end = at
            .checked_add(width(f))
            .filter(|&end| end <= out.len())
            .ok_or_else(|| Error::InvalidArgument(format!("fixup at {at} past the data")))?;
        if let Some(dst) = out.get_mut(*at..end) {
            dst.copy_from_slice(&val);
        }
    }
    Ok(out)
}

/// A revised reference kept in the global heap: `type, flags, length, heap ID`.
fn revised_blob(
    kind: u8,
    flags: u8,
    blob: &[u8],
    gheap: &mut GlobalHeap,
    sink: &mut Sink,
) -> Result<Vec<u8>> {
    let len = u32::try_from(blob.len())
        .map_err(|_| Error::InvalidArgument("reference too long".into()))?;
    let mut v = vec![kind, flags];
    v.extend_from_slice(&len.to_le_bytes());
    v.extend_from_slice(&heap_id(gheap.add(sink, blob)?));
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr_of(o: ObjectId) -> Option<u64> {
        (o.0 < 10).then_some(0x1000 + o.0 as u64)
    }

    #[test]
    fn object_and_revised_object_references() {
        let e = Elements {
            bytes: vec![0xEE; 8 + REVISED_REF_SIZE],
            fixups: vec![
                (0, Fixup::Object(ObjectId(3))),
                (
                    8,
                    Fixup::Revised {
                        kind: REF_OBJECT2,
                        target: ObjectId(2),
                        tail: Vec::new(),
                    },
                ),
            ],
        };
        assert!(e.has_references());
        let mut sink = Sink::memory();
        let mut gh = GlobalHeap::default();
        let out = resolve(&e, &addr_of, &mut gh, &mut sink, 0).unwrap();
        assert_eq!(&out[..8], &0x1003u64.to_le_bytes());
        assert_eq!(&out[8..11], &[2, 0, 8]);
        assert_eq!(&out[11..19], &0x1002u64.to_le_bytes());
        assert_eq!(&out[19..], &[0; 7]);
        assert_eq!(sink.pos(), 0, "no heap object for an inline reference");
    }

    #[test]
    fn region_and_vlen_go_to_the_heap() {
        let inner = Elements {
            bytes: vec![0; 16],
            fixups: vec![(8, Fixup::Object(ObjectId(1)))],
        };
        let e = Elements {
            bytes: vec![0; 12 + 16],
            fixups: vec![
                (
                    0,
                    Fixup::Region {
                        target: ObjectId(4),
                        selection: vec![9, 9, 9],
                    },
                ),
                (
                    12,
                    Fixup::Vlen {
                        count: 2,
                        value: Box::new(inner),
                    },
                ),
            ],
        };
        let mut sink = Sink::memory();
        let mut gh = GlobalHeap::default();
        let out = resolve(&e, &addr_of, &mut gh, &mut sink, 0).unwrap();
        gh.flush(&mut sink).unwrap();
        let b = sink.into_bytes().unwrap();
        // region: collection 0, index 1; blob = address + selection
        assert_eq!(&out[..8], &0u64.to_le_bytes());
        assert_eq!(&out[8..12], &1u32.to_le_bytes());
        assert_eq!(&b[16..18], &[1, 0]);
        assert_eq!(&b[24..32], &11u64.to_le_bytes());
        assert_eq!(&b[32..40], &0x1004u64.to_le_bytes());
        assert_eq!(&b[40..43], &[9, 9, 9]);
        // vlen: count 2, index 2, payload holds the resolved object address
        assert_eq!(&out[12..16], &2u32.to_le_bytes());
        assert_eq!(&out[24..28], &2u32.to_le_bytes());
        assert_eq!(&b[48..50], &[2, 0]);
        assert_eq!(&b[64 + 8..64 + 16], &0x1001u64.to_le_bytes());
    }

    #[test]
    fn unknown_object_and_overflow_are_errors() {
        let mut sink = Sink::memory();
        let mut gh = GlobalHeap::default();
        let e = Elements {
            bytes: vec![0; 8],
            fixups: vec![(0, Fixup::Object(ObjectId(42)))],
        };
        assert!(resolve(&e, &addr_of, &mut gh, &mut sink, 0).is_err());
        let e = Elements {
            bytes: vec![0; 8],
            fixups: vec![(4, Fixup::Object(ObjectId(1)))],
        };
        assert!(resolve(&e, &addr_of, &mut gh, &mut sink, 0).is_err());
    }
}
