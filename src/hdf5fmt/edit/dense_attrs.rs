//! Attributes of version 2 object headers in dense storage, and the
//! transitions libhdf5 makes: a new attribute on an object already holding
//! `max_compact` compact attributes (the header's phase change values, 8 by
//! default) or too large for a header message makes the storage dense, a
//! removal leaving a dense object under `min_dense` (6) makes it compact.
//! Setting an existing attribute is a removal then an insert, as h5py does
//! it (`attrs[name] = value` deletes and recreates), so the attribute takes
//! the next creation order. The new state is written in one header rewrite
//! (compact: attribute messages; dense: new dense storage from `dense`, the
//! attribute info message repointed at it). Version 1 headers and compact
//! edits without a transition stay with `attrs`.

use super::commit::Txn;
use super::dense::{Item, Placed, ATTRS_KEY};
use super::header::{attr_name, messages_of, Chunk0};
use super::Editor;
use crate::btree_v2::BTreeV2;
use crate::error::{Error, Result};
use crate::fractal_heap::FractalHeap;
use crate::messages::attribute_info::AttributeInfo;
use crate::messages::types;
use crate::object_header::{ObjectHeader, ATTR_ORDER_INDEXED, FLAG_SHARED};
use crate::write::object_header::{Message, MAX_MESSAGE_BODY};

/// Largest message body the header rewrite places.
const FITS: usize = MAX_MESSAGE_BODY - 8;

/// One attribute edit.
pub(super) enum AttrStep {
    /// Set (create, or delete and recreate) an attribute: name, message body.
    Put(String, Vec<u8>),
    /// Delete an attribute.
    Remove(String),
}

fn shared(at: u64) -> Error {
    Error::Unsupported {
        structure: "object header",
        offset: at,
        what: "editing attributes stored as shared messages".into(),
    }
}

impl Editor {
    /// The attribute info message of `h`, if any.
    fn attr_info(&self, h: &ObjectHeader) -> Result<Option<AttributeInfo>> {
        match h.first(types::ATTRIBUTE_INFO) {
            Some(m) => Ok(Some(AttributeInfo::decode(
                &mut m.cursor("attribute info"),
                self.reader.sizes(),
            )?)),
            None => Ok(None),
        }
    }

    /// Whether setting (`len`: the new message body's size) or deleting
    /// (`None`) attribute `name` of the object with header `h` goes through
    /// dense storage: a version 2 header whose attributes are dense, or
    /// that a new or too large attribute makes dense.
    pub(super) fn attr_needs_dense(
        &self,
        h: &ObjectHeader,
        c: &Chunk0,
        name: &str,
        len: Option<usize>,
    ) -> Result<bool> {
        if c.version != 2 {
            return Ok(false);
        }
        if self.attr_info(h)?.is_some_and(|i| i.heap_address.is_some()) {
            return Ok(true);
        }
        let Some(len) = len else {
            return Ok(false);
        };
        let names = self.named_messages(h)?;
        let count = names.iter().filter(|(_, n)| n.is_some()).count();
        let exists = names.iter().any(|(_, n)| n.as_deref() == Some(name));
        let (max_compact, _) = c.attr_phase_change();
        Ok(len > FITS || (!exists && count >= max_compact))
    }

    /// The attributes in the dense storage `info` points at.
    fn dense_attr_items(&self, info: &AttributeInfo) -> Result<Vec<Item>> {
        let (Some(heap_addr), Some(index)) = (info.heap_address, info.name_index) else {
            return Ok(Vec::new());
        };
        let src = self.reader.source();
        let sizes = self.reader.sizes();
        let heap = FractalHeap::open(src, sizes, heap_addr)?;
        let tree = BTreeV2::open(src, sizes, index)?;
        let mut out = Vec::new();
        tree.for_each_record(src, sizes, &mut |rec| {
            let r = crate::btree_v2::records::attribute_name(rec)?;
            let order = r.creation_order;
            if r.message_flags & FLAG_SHARED != 0 {
                return Err(shared(index));
            }
            let body = heap.object(src, sizes, r.heap_id)?;
            let name = attr_name(&body)
                .ok_or_else(|| Error::malformed("attribute message", heap_addr, "no name"))?;
            out.push(Item {
                name,
                order: u64::from(order),
                body,
            });
            Ok(())
        })?;
        Ok(out)
    }

    /// Apply `step` to the attributes of the version 2 header `h` at
    /// `addr` with libhdf5's storage transitions, the header rewrite queued
    /// in `txn`; the dense storage written, if any (to record with
    /// `own_dense` once committed).
    pub(super) fn edit_attrs_dense(
        &mut self,
        addr: u64,
        h: &ObjectHeader,
        c: &Chunk0,
        step: AttrStep,
        txn: &mut Txn,
    ) -> Result<Option<Placed>> {
        let sizes = self.reader.sizes();
        let info = self.attr_info(h)?.unwrap_or(AttributeInfo {
            max_creation_order: c.attr_order_tracked().then_some(0),
            heap_address: None,
            name_index: None,
            order_index: None,
            order_indexed: c.flags & ATTR_ORDER_INDEXED != 0,
        });
        let (max_compact, min_dense) = c.attr_phase_change();
        let mut dense = info.heap_address.is_some();
        let mut items = if dense {
            self.dense_attr_items(&info)?
        } else {
            let mut v = Vec::new();
            for m in h.all(types::ATTRIBUTE) {
                if m.flags & FLAG_SHARED != 0 {
                    return Err(shared(m.offset));
                }
                let name = attr_name(&m.data)
                    .ok_or_else(|| Error::malformed("attribute message", m.offset, "no name"))?;
                v.push(Item {
                    name,
                    order: u64::from(m.creation_order.unwrap_or(0)),
                    body: m.data.clone(),
                });
            }
            v
        };
        let mut max = info.max_creation_order;
        let remove = |items: &mut Vec<Item>, dense: &mut bool, name: &str| -> bool {
            let Some(i) = items.iter().position(|it| it.name == name) else {
                return false;
            };
            items.remove(i);
            if *dense && items.len() < min_dense && items.iter().all(|it| it.body.len() <= FITS) {
                *dense = false;
                items.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
            }
            true
        };
        match step {
            AttrStep::Put(name, body) => {
                remove(&mut items, &mut dense, &name);
                let order = max.unwrap_or(0);
                if let Some(m) = max.as_mut() {
                    *m = m.checked_add(1).ok_or_else(|| {
                        Error::InvalidArgument("attribute creation order exhausted".into())
                    })?;
                }
                if !dense && (items.len() >= max_compact || body.len() > FITS) {
                    dense = true;
                }
                items.push(Item {
                    name,
                    order: u64::from(order),
                    body,
                });
            }
            AttrStep::Remove(name) => {
                if !remove(&mut items, &mut dense, &name) {
                    return Err(Error::NotFound(format!("attribute {name:?}")));
                }
            }
        }
        self.free_dense(addr, ATTRS_KEY, txn);
        let placed = if dense {
            Some(self.place_dense(&items, true, info.order_indexed, txn)?)
        } else {
            None
        };
        let new = AttributeInfo {
            max_creation_order: max,
            heap_address: placed.map(|p| p.heap),
            name_index: placed.map(|p| p.name_index),
            order_index: placed.and_then(|p| p.order_index),
            order_indexed: info.order_indexed,
        };
        let mut msgs: Vec<Message> = messages_of(h)
            .into_iter()
            .filter(|m| m.kind != types::ATTRIBUTE)
            .collect();
        match msgs.iter_mut().find(|m| m.kind == types::ATTRIBUTE_INFO) {
            Some(m) => m.body = new.encode(sizes),
            None => msgs.push(Message::new(types::ATTRIBUTE_INFO, new.encode(sizes))),
        }
        if !dense {
            for it in items {
                let mut m = Message::new(types::ATTRIBUTE, it.body);
                m.order = u16::try_from(it.order).unwrap_or(u16::MAX);
                msgs.push(m);
            }
        }
        self.rewrite_header(addr, h, msgs, None, txn)?;
        Ok(placed)
    }
}
