//! The writer's link and attribute storage (HDF5 File Format Specification
//! IV.A.2.c link info, IV.A.2.g link, IV.A.2.m attribute, IV.A.2.v attribute
//! info, III.A.2 v2 B-tree record types 5, 6, 8 and 9): compact messages in the
//! object header up to [`MAX_COMPACT`] under 64 KiB each, else dense storage (a
//! fractal heap with a name index, plus a creation-order index when the object
//! indexes creation order). Tracked creation order numbers links and attributes
//! in the order they were added.

use super::btree_v2::{self, BTreeParams};
use super::file_writer::{name_hash, Serializer, MAX_COMPACT};
use super::fractal_heap;
use super::node_settings::CreationOrder;
use super::object_header::{Message, MAX_MESSAGE_BODY};
use super::sink::Sink;
use super::{AttrValue, LinkIntent, Node};
use crate::btree_v2::records::{
    AttributeNameRecord, AttributeOrderRecord, LinkNameRecord, LinkOrderRecord,
};
use crate::encode::UNDEF;
use crate::error::Result;
use crate::messages::attribute_info::AttributeInfo;
use crate::messages::group_info::GroupInfo;
use crate::messages::link::{Link, LinkMessage};
use crate::messages::link_info::LinkInfo;
use crate::messages::shared::SharedRef;
use crate::messages::types;
use crate::messages::{attribute, datatype};

/// One dense index to build over the heap objects.
struct Index<F> {
    record: F,
    record_type: u8,
    record_size: u16,
}

fn params(record_type: u8, record_size: u16) -> BTreeParams {
    BTreeParams {
        record_type,
        record_size,
        node_size: 512,
        split: 100,
        merge: 40,
    }
}

impl Serializer<'_> {
    /// The group's messages; hard links to objects being written (cycles) are
    /// left out and returned, to go to a continuation chunk (the group's links
    /// then stay compact).
    pub(super) fn group(
        &mut self,
        links: &[(String, LinkIntent)],
        link_order: u8,
        depth: usize,
    ) -> Result<(Vec<Message>, Vec<usize>)> {
        let order = CreationOrder::from_bits(link_order);
        let mut encoded = Vec::with_capacity(links.len());
        let mut later = Vec::new();
        for (i, (name, link)) in links.iter().enumerate() {
            let target = match link {
                LinkIntent::Hard(child) if self.busy.contains(child) => {
                    later.push(i);
                    continue;
                }
                LinkIntent::Hard(child) => Link::Hard(self.object(*child, depth + 1)?),
                LinkIntent::Soft(path) => Link::Soft(path.clone()),
                LinkIntent::External { file, path } => Link::External {
                    file: file.clone(),
                    path: path.clone(),
                },
                LinkIntent::UserDefined { kind, data } => Link::UserDefined {
                    kind: *kind,
                    data: data.clone(),
                },
            };
            let corder = order.tracked.then_some(i as u64);
            encoded.push((
                name.as_str(),
                i as u64,
                LinkMessage {
                    name: name.clone(),
                    link: target,
                    creation_order: corder,
                }
                .encode(super::sizes::WRITER_SIZES)?,
            ));
        }
        let max_order = order.tracked.then_some(links.len() as u64);
        let bits = order.bits();
        let mut msgs = Vec::new();
        // a link message over 64 KiB cannot sit in a header (its size field
        // is 16 bits): the group goes dense, as libhdf5 does
        let too_big = encoded.iter().any(|(_, _, b)| b.len() > MAX_MESSAGE_BODY);
        if (encoded.len() <= MAX_COMPACT && !too_big) || !later.is_empty() {
            msgs.push(Message::new(
                types::LINK_INFO,
                LinkInfo::from_parts(bits, max_order, UNDEF, UNDEF, UNDEF)
                    .encode(super::sizes::WRITER_SIZES),
            ));
            msgs.push(Message::new(
                types::GROUP_INFO,
                GroupInfo::default().encode(),
            ));
            for (_, _, body) in encoded {
                msgs.push(Message::new(types::LINK, body));
            }
        } else {
            let (heap, index, by_order) = dense_links(self.sink, encoded, order.indexed)?;
            msgs.push(Message::new(
                types::LINK_INFO,
                LinkInfo::from_parts(bits, max_order, heap, index, by_order)
                    .encode(super::sizes::WRITER_SIZES),
            ));
            msgs.push(Message::new(
                types::GROUP_INFO,
                GroupInfo::default().encode(),
            ));
        }
        Ok((msgs, later))
    }

    /// An attribute message; `named`: the address of the committed datatype
    /// the attribute uses.
    pub(super) fn attribute_message(
        &mut self,
        name: &str,
        value: &AttrValue,
        named: Option<u64>,
    ) -> Result<Vec<u8>> {
        let (dtype, flags) = match named {
            Some(addr) => (
                SharedRef::ObjectHeader(addr).encode(super::sizes::WRITER_SIZES),
                1,
            ),
            None => (datatype::encode(&value.dtype)?, 0),
        };
        let space = value.shape.encode(super::sizes::WRITER_SIZES);
        let data = self.element_bytes(&value.dtype, &value.shape, (&value.data).into())?;
        attribute::encode(name, flags, &dtype, &space, &data)
    }

    /// The node's attribute messages, or dense storage when there are many or
    /// big ones.
    pub(super) fn attributes(&mut self, node: &Node, msgs: &mut Vec<Message>) -> Result<()> {
        let order = CreationOrder::from_bits(node.extra.attr_order);
        let bits = order.bits();
        let max_order = order
            .tracked
            .then(|| u16::try_from(node.attrs.len()).unwrap_or(u16::MAX));
        if node.attrs.is_empty() {
            if bits != 0 {
                msgs.push(Message::new(
                    types::ATTRIBUTE_INFO,
                    AttributeInfo::from_parts(bits, max_order, UNDEF, UNDEF, UNDEF)
                        .encode(super::sizes::WRITER_SIZES),
                ));
            }
            return Ok(());
        }
        let mut encoded = Vec::with_capacity(node.attrs.len());
        for (i, (name, value)) in node.attrs.iter().enumerate() {
            let named = node
                .extra
                .attr_types
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, t)| self.named.get(t).copied());
            encoded.push((
                name.as_str(),
                i as u64,
                self.attribute_message(name, value, named)?,
            ));
        }
        let too_big = encoded.iter().any(|(_, _, b)| b.len() > MAX_MESSAGE_BODY);
        if encoded.len() <= MAX_COMPACT && !too_big {
            // libhdf5 counts the attributes of a version 2 header through its
            // attribute info message (no message: zero attributes)
            msgs.push(Message::new(
                types::ATTRIBUTE_INFO,
                AttributeInfo::from_parts(bits, max_order, UNDEF, UNDEF, UNDEF)
                    .encode(super::sizes::WRITER_SIZES),
            ));
            for (_, i, body) in encoded {
                let mut m = Message::new(types::ATTRIBUTE, body);
                m.order = u16::try_from(i).unwrap_or(u16::MAX);
                msgs.push(m);
            }
        } else {
            let (heap, index, by_order) = dense_attrs(self.sink, encoded, order.indexed)?;
            msgs.push(Message::new(
                types::ATTRIBUTE_INFO,
                AttributeInfo::from_parts(bits, max_order, heap, index, by_order)
                    .encode(super::sizes::WRITER_SIZES),
            ));
        }
        Ok(())
    }
}

/// Dense link storage of `items` (name, creation order, link message body)
/// appended to `sink`: the fractal heap, its name index and, when
/// `indexed`, its creation-order index (else `UNDEF`).
pub(crate) fn dense_links(
    sink: &mut Sink,
    items: Vec<(&str, u64, Vec<u8>)>,
    indexed: bool,
) -> Result<(u64, u64, u64)> {
    dense(
        sink,
        items,
        7,
        |id: &[u8], _, hash: u32| {
            let mut r = Vec::with_capacity(11);
            LinkNameRecord { hash, heap_id: id }.encode(&mut r);
            r
        },
        (5, 11),
        indexed.then_some(Index {
            record: |id: &[u8], order: u64| {
                let mut r = Vec::with_capacity(15);
                LinkOrderRecord {
                    creation_order: order,
                    heap_id: id,
                }
                .encode(&mut r);
                r
            },
            record_type: 6,
            record_size: 15,
        }),
    )
}

/// Dense attribute storage of `items` (name, creation order, attribute
/// message body) appended to `sink`, as [`dense_links`].
pub(crate) fn dense_attrs(
    sink: &mut Sink,
    items: Vec<(&str, u64, Vec<u8>)>,
    indexed: bool,
) -> Result<(u64, u64, u64)> {
    dense(
        sink,
        items,
        8,
        |id: &[u8], order: u64, hash: u32| {
            let mut r = Vec::with_capacity(17);
            AttributeNameRecord {
                heap_id: id,
                message_flags: 0,
                creation_order: order as u32,
                hash,
            }
            .encode(&mut r);
            r
        },
        (8, 17),
        indexed.then_some(Index {
            record: |id: &[u8], order: u64| {
                let mut r = Vec::with_capacity(13);
                AttributeOrderRecord {
                    heap_id: id,
                    message_flags: 0,
                    creation_order: order as u32,
                }
                .encode(&mut r);
                r
            },
            record_type: 9,
            record_size: 13,
        }),
    )
}

/// Write a fractal heap of `items` (name, creation order, body), its name
/// index and, when asked, its creation-order index; returns (heap, name
/// index, order index or UNDEF).
fn dense<F, G>(
    sink: &mut Sink,
    mut items: Vec<(&str, u64, Vec<u8>)>,
    id_len: u16,
    record: F,
    (record_type, record_size): (u8, u16),
    by_order: Option<Index<G>>,
) -> Result<(u64, u64, u64)>
where
    F: Fn(&[u8], u64, u32) -> Vec<u8>,
    G: Fn(&[u8], u64) -> Vec<u8>,
{
    let objects: Vec<Vec<u8>> = items
        .iter_mut()
        .map(|(_, _, b)| std::mem::take(b))
        .collect();
    let heap = fractal_heap::write(sink, &objects, id_len)?;
    let mut keyed: Vec<(u32, &str, u64, &Vec<u8>)> = items
        .iter()
        .zip(&heap.ids)
        .map(|((name, order, _), id)| (name_hash(name), *name, *order, id))
        .collect();
    keyed.sort_by(|a, b| (a.0, a.1.as_bytes()).cmp(&(b.0, b.1.as_bytes())));
    let records: Vec<Vec<u8>> = keyed
        .iter()
        .map(|(hash, _, order, id)| record(id, *order, *hash))
        .collect();
    let index = btree_v2::write(sink, &params(record_type, record_size), &records)?;
    let order_index = match by_order {
        None => UNDEF,
        Some(ix) => {
            keyed.sort_by_key(|k| k.2);
            let records: Vec<Vec<u8>> = keyed
                .iter()
                .map(|(_, _, order, id)| (ix.record)(id, *order))
                .collect();
            btree_v2::write(sink, &params(ix.record_type, ix.record_size), &records)?
        }
    };
    Ok((heap.address, index, order_index))
}
