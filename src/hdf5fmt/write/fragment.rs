//! Pieces of a file encoded for the in-place editor (`crate::edit`): an
//! attribute message, or one new object (group or dataset, with its data),
//! serialised by the writer's own encoders into bytes that start at a given
//! address of an existing file.

use super::file_writer::{hard_link_counts, Serializer};
use super::global_heap::GlobalHeap;
use super::sink::Sink;
use super::{AttrValue, FileWriter};
use crate::error::{Error, Result};
use std::collections::{HashMap, HashSet};

/// Bytes to place at `base` (the address they were encoded for) and what
/// they hold.
pub(crate) struct Fragment<T> {
    /// Address of the first byte of `bytes`.
    pub base: u64,
    /// The encoded structures (global heap collections, headers, data).
    pub bytes: Vec<u8>,
    /// The result: a message body, or a header address.
    pub value: T,
}

fn serializer<'a>(writer: &'a FileWriter, sink: &'a mut Sink) -> Serializer<'a> {
    Serializer {
        nodes: &writer.nodes,
        refcounts: hard_link_counts(&writer.nodes),
        sink,
        gheap: GlobalHeap::default(),
        named: HashMap::new(),
        addrs: HashMap::new(),
        busy: HashSet::new(),
        pending: Vec::new(),
    }
}

fn finish<T>(mut s: Serializer<'_>, value: T, base: u64) -> Result<Fragment<T>> {
    for p in std::mem::take(&mut s.pending) {
        s.finish_deferred(p)?;
    }
    s.gheap.flush(s.sink)?;
    let sink = std::mem::replace(s.sink, Sink::memory());
    Ok(Fragment {
        base,
        bytes: sink.into_bytes()?,
        value,
    })
}

/// The body of an attribute message for `name` = `value`; its variable-length
/// values go to a global heap collection encoded at `base`.
pub(crate) fn attribute(name: &str, value: &AttrValue, base: u64) -> Result<Fragment<Vec<u8>>> {
    if name.is_empty() || name.contains('\0') {
        return Err(Error::InvalidArgument(format!(
            "bad attribute name {name:?}"
        )));
    }
    let writer = FileWriter::in_memory();
    let mut sink = Sink::memory_at(base);
    let mut s = serializer(&writer, &mut sink);
    let body = s.attribute_message(name, value, None)?;
    finish(s, body, base)
}

/// The object `child` (a link of the root group) of `writer` — a group or a
/// dataset built with the writer's API, data included — encoded at `base`;
/// the value is its header address. Raw chunks written ahead with
/// `write_raw_chunk` are not supported (they live in the writer's own sink).
pub(crate) fn object(writer: &FileWriter, name: &str, base: u64) -> Result<Fragment<u64>> {
    let id = writer
        .link_target(name)
        .ok_or_else(|| Error::NotFound(format!("no object {name:?} in the fragment")))?;
    let mut sink = Sink::memory_at(base);
    let mut s = serializer(writer, &mut sink);
    let addr = s.object(id, 1)?;
    finish(s, addr, base)
}

/// Dense link storage (`attrs` false) or dense attribute storage of `items`
/// (name, creation order, message body) encoded at `base`: the fractal heap,
/// its name index and its creation-order index (`UNDEF` unless `indexed`).
pub(crate) fn dense(
    items: Vec<(&str, u64, Vec<u8>)>,
    attrs: bool,
    indexed: bool,
    base: u64,
) -> Result<Fragment<(u64, u64, u64)>> {
    let mut sink = Sink::memory_at(base);
    let value = if attrs {
        super::groups_attrs::dense_attrs(&mut sink, items, indexed)?
    } else {
        super::groups_attrs::dense_links(&mut sink, items, indexed)?
    };
    Ok(Fragment {
        base,
        bytes: sink.into_bytes()?,
        value,
    })
}

impl FileWriter {
    /// The node a hard link `name` of the root group points at.
    fn link_target(&self, name: &str) -> Option<usize> {
        match &self.nodes.first()?.kind {
            super::NodeKind::Group { links } => links.iter().find_map(|(n, l)| match l {
                super::LinkIntent::Hard(i) if n == name => Some(*i),
                _ => None,
            }),
            _ => None,
        }
    }
}
