//! Carrying element values that point into the source file over to the copy
//! (HDF5 File Format Specification IV.A.2.d: class 7 references, class 9
//! variable-length data): object references become references to the copied
//! objects, region references keep their serialized selection, variable-length
//! values (at any depth, inside compounds, arrays or other sequences) are read
//! from the source's global heap. The result is writer [`Elements`] whose
//! fixups the writer resolves once the new addresses are known.

use std::collections::HashMap;

use crate::datatype::{Datatype, ReferenceKind};
use crate::error::{Error, Result};
use crate::file::File;
use crate::limits::MAX_DATATYPE_DEPTH;
use crate::write::elements::REVISED_REF_SIZE;
use crate::write::{Elements, Fixup, ObjectId};

/// Source file, where its objects went, and what could not be carried.
pub(super) struct Ctx<'a> {
    pub file: &'a File,
    /// Source header address → copied object.
    pub map: &'a HashMap<u64, ObjectId>,
    /// References to objects that were not copied (written as null references).
    pub dangling: usize,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        a.copy_from_slice(s);
    }
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        a.copy_from_slice(s);
    }
    u64::from_le_bytes(a)
}

fn bad(what: &str) -> Error {
    Error::InvalidArgument(format!("h5 copy: {what}"))
}

impl Ctx<'_> {
    /// The global heap object at (collection, index); empty for a null pointer.
    fn heap(&self, collection: u64, index: u32) -> Result<Vec<u8>> {
        if collection == 0 || collection == u64::MAX {
            return Ok(Vec::new());
        }
        Ok(self.file.collection(collection)?.object(index)?.to_vec())
    }

    fn target(&mut self, addr: u64) -> Option<ObjectId> {
        let t = self.map.get(&addr).copied();
        if t.is_none() {
            self.dangling += 1;
        }
        t
    }

    /// Convert all elements of `dt` in `data` (the source's stored bytes).
    pub(super) fn elements(&mut self, dt: &Datatype, data: &[u8]) -> Result<Elements> {
        if dt.has_vlen_or_ref() && (self.file.sizes().offset != 8 || self.file.sizes().length != 8)
        {
            return Err(bad(
                "variable-length data or references in a file without 8-byte offsets",
            ));
        }
        let mut e = Elements::raw(data.to_vec());
        let size = usize::try_from(dt.size()).map_err(|_| bad("element too large"))?;
        if size == 0 || !dt.has_vlen_or_ref() {
            return Ok(e);
        }
        if !data.len().is_multiple_of(size) {
            return Err(bad("data is not a whole number of elements"));
        }
        for k in 0..data.len() / size {
            self.element(dt, &mut e, k * size, 0)?;
        }
        Ok(e)
    }

    /// Convert the element of `dt` at byte `at` of `e.bytes`.
    fn element(&mut self, dt: &Datatype, e: &mut Elements, at: usize, depth: usize) -> Result<()> {
        if depth > MAX_DATATYPE_DEPTH {
            return Err(bad("datatype nested too deeply"));
        }
        if !dt.has_vlen_or_ref() {
            return Ok(());
        }
        let size = usize::try_from(dt.size()).map_err(|_| bad("element too large"))?;
        let Some(bytes) = e.bytes.get(at..at.saturating_add(size)).map(<[u8]>::to_vec) else {
            return Err(bad("element past the data"));
        };
        let mut null = false;
        match dt {
            Datatype::Reference { kind, .. } => match kind {
                ReferenceKind::Object => {
                    let addr = u64_at(&bytes, 0);
                    if addr != 0 && addr != u64::MAX {
                        match self.target(addr) {
                            Some(o) => e.fixups.push((at, Fixup::Object(o))),
                            None => null = true,
                        }
                    }
                }
                ReferenceKind::Region => {
                    let coll = u64_at(&bytes, 0);
                    if coll != 0 && coll != u64::MAX {
                        let blob = self.heap(coll, u32_at(&bytes, 8))?;
                        match self.target(u64_at(&blob, 0)) {
                            Some(target) => e.fixups.push((
                                at,
                                Fixup::Region {
                                    target,
                                    selection: blob.get(8..).unwrap_or_default().to_vec(),
                                },
                            )),
                            None => null = true,
                        }
                    }
                }
                ReferenceKind::ObjectV2 | ReferenceKind::RegionV2 | ReferenceKind::AttributeV2 => {
                    // (some writers record the in-memory size, 64, in the type)
                    if size < REVISED_REF_SIZE {
                        return Err(bad("revised reference of unexpected size"));
                    }
                    null = self.revised(&bytes, e, at)?;
                }
                ReferenceKind::Unknown(t) => {
                    return Err(bad(&format!("reference type {t}")));
                }
            },
            Datatype::VarString { .. } | Datatype::VarSequence { .. } => {
                let count = u32_at(&bytes, 0);
                let coll = u64_at(&bytes, 4);
                if coll != 0 {
                    let mut heap = self.heap(coll, u32_at(&bytes, 12))?;
                    let value = match dt {
                        Datatype::VarSequence { base, .. } => {
                            let want = base.size().saturating_mul(u64::from(count));
                            if (heap.len() as u64) < want {
                                return Err(bad("variable-length value shorter than its length"));
                            }
                            heap.truncate(want as usize);
                            self.elements(base, &heap)?
                        }
                        _ => Elements::raw(heap),
                    };
                    e.fixups.push((
                        at,
                        Fixup::Vlen {
                            count,
                            value: Box::new(value),
                        },
                    ));
                }
            }
            Datatype::Compound { members, .. } => {
                for m in members {
                    self.element(&m.dtype, e, at + m.offset as usize, depth + 1)?;
                }
            }
            Datatype::Array { base, .. } => {
                let bs = usize::try_from(base.size()).map_err(|_| bad("element too large"))?;
                for k in 0..size.checked_div(bs).unwrap_or(0) {
                    self.element(base, e, at + k * bs, depth + 1)?;
                }
            }
            _ => {}
        }
        if null {
            if let Some(b) = e.bytes.get_mut(at..at + size) {
                b.fill(0);
            }
        }
        Ok(())
    }

    /// A revised reference; returns true when it must be written as null.
    fn revised(&mut self, bytes: &[u8], e: &mut Elements, at: usize) -> Result<bool> {
        let kind = bytes.first().copied().unwrap_or(0);
        let flags = bytes.get(1).copied().unwrap_or(0);
        if kind == 0 {
            return Ok(false);
        }
        let external = flags & 1 != 0;
        let (blob, inline) = if kind == 2 && !external {
            (bytes.get(2..).unwrap_or_default().to_vec(), true)
        } else {
            let blob = self.heap(u64_at(bytes, 6), u32_at(bytes, 14))?;
            (blob, false)
        };
        if external {
            e.fixups
                .push((at, Fixup::RevisedBlob { kind, flags, blob }));
            return Ok(false);
        }
        // token size, token (an address), then the selection or attribute name
        let tsize = usize::from(blob.first().copied().unwrap_or(0));
        let token = blob.get(1..1 + tsize).unwrap_or_default();
        let mut a = [0u8; 8];
        if let Some(d) = a.get_mut(..token.len().min(8)) {
            d.copy_from_slice(token.get(..token.len().min(8)).unwrap_or_default());
        }
        let tail = if inline {
            Vec::new()
        } else {
            blob.get(1 + tsize..).unwrap_or_default().to_vec()
        };
        match self.target(u64::from_le_bytes(a)) {
            Some(target) => {
                e.fixups.push((at, Fixup::Revised { kind, target, tail }));
                Ok(false)
            }
            None => Ok(true),
        }
    }
}
