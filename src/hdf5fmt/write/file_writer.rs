//! Serialisation of the in-memory tree into an HDF5 file (HDF5 File Format
//! Specification II.A "Superblock" version 2, then objects written depth first so
//! every child's address is known before its parent's header is encoded). Space
//! is allocated by appending; only the superblock (written last, at offset 0) and
//! global heap collections (reserved then filled) are written in place.

use super::chunks::{self, ChunkedInput};
use super::elements::{self, Elements};
use super::global_heap::{vlen_pointer, GlobalHeap};
use super::object_header::{self, Message};
use super::set_local::set_local;
use super::sink::Sink;
use super::{
    AttrData, AttrValue, DatasetData, DatasetNode, Layout, LinkIntent, Node, NodeKind, ObjectId,
};
use super::{Dataspace, SpaceKind, WRITER_SIZES};
use crate::checksum::{lookup3, metadata_checksum};
use crate::datatype::Datatype;
use crate::encode::UNDEF;
use crate::error::{Error, Result};
use crate::limits::MAX_GROUP_DEPTH;
use crate::messages::fill_value::AllocTime;
use crate::messages::layout::Layout as FileLayout;
use crate::messages::link::{Link, LinkMessage};
use crate::messages::shared::SharedRef;
use crate::messages::types;
use crate::messages::{datatype, fill_value, filter_pipeline, refcount};
use crate::object_header::{FLAG_CONSTANT, FLAG_SHARED};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// Size of the version 2 superblock with 8-byte offsets and lengths.
pub const SUPERBLOCK_SIZE: u64 = 48;
/// Links or attributes beyond this count go to dense storage.
pub const MAX_COMPACT: usize = 8;

/// Serialise the whole tree (root = node 0) into `sink`.
/// The sink already holds the superblock's room (and any raw chunks).
pub(crate) fn serialize(nodes: &[Node], sink: &mut Sink) -> Result<()> {
    if sink.pos() < SUPERBLOCK_SIZE {
        return Err(Error::InvalidArgument(
            "sink without room for the superblock".into(),
        ));
    }
    let mut s = Serializer {
        nodes,
        refcounts: hard_link_counts(nodes),
        sink,
        gheap: GlobalHeap::default(),
        named: HashMap::new(),
        addrs: HashMap::new(),
        busy: HashSet::new(),
        pending: Vec::new(),
    };
    // Committed datatypes first: datasets refer to their addresses.
    for (id, node) in nodes.iter().enumerate() {
        if matches!(node.kind, NodeKind::NamedType(_)) {
            let addr = s.object(id, 0)?;
            s.named.insert(id, addr);
        }
    }
    let root = s.object(0, 0)?;
    // Every object has its address now: write what holds references.
    for p in std::mem::take(&mut s.pending) {
        s.finish_deferred(p)?;
    }
    s.gheap.flush(s.sink)?;
    let eof = s.sink.pos();
    let sb = superblock(root, eof);
    s.sink.write_at(0, &sb)
}

/// Superblock version 2.
pub fn superblock(root: u64, eof: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(SUPERBLOCK_SIZE as usize);
    b.extend_from_slice(&crate::signature::SUPERBLOCK);
    b.extend_from_slice(&[2, 8, 8, 0]);
    b.extend_from_slice(&0u64.to_le_bytes());
    b.extend_from_slice(&UNDEF.to_le_bytes());
    b.extend_from_slice(&eof.to_le_bytes());
    b.extend_from_slice(&root.to_le_bytes());
    let sum = metadata_checksum(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    b
}

/// How many hard links reach each node (the root counts one more, for the
/// superblock's pointer, as libhdf5 counts it), plus, for committed datatypes,
/// the datasets and attributes using them.
pub(super) fn hard_link_counts(nodes: &[Node]) -> Vec<u32> {
    let mut counts = vec![0u32; nodes.len()];
    if let Some(root) = counts.first_mut() {
        *root = 1;
    }
    let mut bump = |t: usize| {
        if let Some(c) = counts.get_mut(t) {
            *c = c.saturating_add(1);
        }
    };
    for n in nodes {
        match &n.kind {
            NodeKind::Group { links } => {
                for (_, l) in links {
                    if let LinkIntent::Hard(t) = l {
                        bump(*t);
                    }
                }
            }
            // libhdf5 counts every dataset and attribute using a committed
            // datatype as one more reference to it
            NodeKind::Dataset(ds) => {
                if let Some(t) = ds.named_type {
                    bump(t);
                }
            }
            NodeKind::NamedType(_) => {}
        }
        for &(_, t) in &n.extra.attr_types {
            bump(t);
        }
    }
    counts
}

pub(super) struct Serializer<'a> {
    pub(super) nodes: &'a [Node],
    /// Hard links to each node: written as a reference count message (0x16)
    /// when over one, so libhdf5 frees the object only with its last link.
    pub(super) refcounts: Vec<u32>,
    pub(super) sink: &'a mut Sink,
    pub(super) gheap: GlobalHeap,
    /// Header addresses of committed datatypes, by node.
    pub(super) named: HashMap<usize, u64>,
    /// Header addresses of every object written so far, by node.
    pub(super) addrs: HashMap<usize, u64>,
    /// Objects being written (a hard link back to one is a cycle).
    pub(super) busy: HashSet<usize>,
    /// Objects whose reference-holding messages wait for every address.
    pub(super) pending: Vec<Deferred>,
}

/// An object written without its reference-holding messages: they go to a
/// continuation chunk once every object has an address, and the header's
/// continuation message is patched to point at it.
pub(super) struct Deferred {
    node: usize,
    header_addr: u64,
    header: Vec<u8>,
    /// The attributes were left out of the header (one holds references).
    attrs: bool,
    /// The dataset's layout (and data) left out too.
    data: bool,
    /// Indexes of the group's hard links that close a cycle.
    links: Vec<usize>,
}

/// Borrowed element values.
#[derive(Clone, Copy)]
pub(super) enum DataRef<'a> {
    Raw(&'a [u8]),
    Strings(&'a [String]),
    Seqs(&'a [Vec<u8>]),
    Elements(&'a Elements),
}

impl<'a> From<&'a AttrData> for DataRef<'a> {
    fn from(d: &'a AttrData) -> Self {
        match d {
            AttrData::Raw(b) => DataRef::Raw(b),
            AttrData::VarStrings(v) => DataRef::Strings(v),
            AttrData::VarSequences(v) => DataRef::Seqs(v),
            AttrData::Elements(e) => DataRef::Elements(e),
        }
    }
}

/// Object header flags for the node's attribute creation order.
fn attr_header_flags(node: &Node) -> u8 {
    (node.extra.attr_order & 3) << 2
}

fn attr_has_refs(v: &AttrValue) -> bool {
    matches!(&v.data, AttrData::Elements(e) if e.has_references())
}

/// Sort key of dense-storage name index records: hash, then name.
pub(super) fn name_hash(name: &str) -> u32 {
    lookup3(name.as_bytes(), 0)
}

impl Serializer<'_> {
    pub(super) fn object(&mut self, id: usize, depth: usize) -> Result<u64> {
        if depth > MAX_GROUP_DEPTH {
            return Err(Error::InvalidArgument("groups nested too deeply".into()));
        }
        let node = self
            .nodes
            .get(id)
            .ok_or_else(|| Error::InvalidArgument(format!("no object {id}")))?;
        if let Some(&addr) = self.named.get(&id).or_else(|| self.addrs.get(&id)) {
            return Ok(addr);
        }
        if !self.busy.insert(id) {
            return Err(Error::InvalidArgument(format!(
                "object {id} is reached again while it is written (cycle)"
            )));
        }
        let deferred_attrs: Vec<usize> = node
            .attrs
            .iter()
            .enumerate()
            .filter(|(_, (_, v))| attr_has_refs(v))
            .map(|(i, _)| i)
            .collect();
        // an attribute whose committed datatype has no address yet (the
        // object itself, or a committed datatype written after it) waits too
        let types_later = node
            .extra
            .attr_types
            .iter()
            .any(|(_, t)| !self.named.contains_key(t));
        let mut deferred_data = false;
        let mut deferred_links = Vec::new();
        let mut msgs = match &node.kind {
            NodeKind::Group { links } => {
                let (m, later) = self.group(links, node.extra.link_order, depth)?;
                deferred_links = later;
                m
            }
            NodeKind::Dataset(ds) => {
                deferred_data = matches!(&ds.data, DatasetData::Elements(e) if e.has_references());
                self.dataset(ds, deferred_data)?
            }
            NodeKind::NamedType(dt) => vec![Message {
                kind: types::DATATYPE,
                body: datatype::encode(dt)?,
                flags: FLAG_CONSTANT,
                order: 0,
            }],
        };
        let links = self.refcounts.get(id).copied().unwrap_or(1);
        if links > 1 {
            msgs.push(Message::new(types::REFCOUNT, refcount::encode(links)));
        }
        let attrs_later = !deferred_attrs.is_empty() || types_later;
        let defer = deferred_data || attrs_later || !deferred_links.is_empty();
        // an object with a reference-holding attribute gets all its attributes
        // (compact or dense) in the continuation chunk, once every address is known
        if !attrs_later {
            self.attributes(node, &mut msgs)?;
        }
        if defer {
            // placeholder, patched by finish_deferred
            msgs.push(Message::new(types::CONTINUATION, continuation(UNDEF, 0)));
        }
        let header = object_header::encode_with(&msgs, attr_header_flags(node))?;
        let addr = self.sink.append(&header)?;
        if defer {
            self.pending.push(Deferred {
                node: id,
                header_addr: addr,
                header,
                attrs: attrs_later,
                data: deferred_data,
                links: deferred_links,
            });
        }
        self.busy.remove(&id);
        self.addrs.insert(id, addr);
        Ok(addr)
    }

    /// Write the reference-holding messages of a deferred object into a
    /// continuation chunk and point its header at it.
    pub(super) fn finish_deferred(&mut self, p: Deferred) -> Result<()> {
        let node = self
            .nodes
            .get(p.node)
            .ok_or_else(|| Error::InvalidArgument(format!("no object {}", p.node)))?;
        let mut msgs = Vec::new();
        if let NodeKind::Group { links } = &node.kind {
            for &i in &p.links {
                if let Some((name, LinkIntent::Hard(child))) = links.get(i) {
                    let addr = self.addrs.get(child).copied().ok_or_else(|| {
                        Error::InvalidArgument(format!("link {name:?}: object never written"))
                    })?;
                    let order = (node.extra.link_order != 0).then_some(i as u64);
                    msgs.push(Message::new(
                        types::LINK,
                        LinkMessage {
                            name: name.clone(),
                            link: Link::Hard(addr),
                            creation_order: order,
                        }
                        .encode(WRITER_SIZES)?,
                    ));
                }
            }
        }
        if p.data {
            if let NodeKind::Dataset(ds) = &node.kind {
                msgs.push(self.layout(ds)?.1);
            }
        }
        if p.attrs {
            self.attributes(node, &mut msgs)?;
        }
        let chunk = object_header::encode_continuation(&msgs, attr_header_flags(node))?;
        let at = self.sink.append(&chunk)?;
        let mut header = p.header;
        object_header::patch_last_message(&mut header, &continuation(at, chunk.len() as u64))?;
        self.sink.write_at(p.header_addr, &header)
    }

    /// Raw stored bytes of all elements; variable-length values go to the global heap.
    pub(super) fn element_bytes<'d>(
        &mut self,
        dtype: &Datatype,
        shape: &Dataspace,
        data: DataRef<'d>,
    ) -> Result<Cow<'d, [u8]>> {
        let n = shape
            .num_elements()
            .ok_or_else(|| Error::InvalidArgument("dataspace too large".into()))?;
        match data {
            DataRef::Raw(bytes) => {
                let want = n.checked_mul(dtype.size());
                if want != Some(bytes.len() as u64) {
                    return Err(Error::InvalidArgument(format!(
                        "data is {} bytes, expected {} elements of {} bytes",
                        bytes.len(),
                        n,
                        dtype.size()
                    )));
                }
                Ok(Cow::Borrowed(bytes))
            }
            DataRef::Strings(values) => {
                if !matches!(dtype, Datatype::VarString { .. }) {
                    return Err(Error::InvalidArgument(
                        "string values need a variable-length string datatype".into(),
                    ));
                }
                self.vlen(
                    values.iter().map(|s| (s.as_bytes(), s.len())),
                    values.len(),
                    n,
                )
                .map(Cow::Owned)
            }
            DataRef::Seqs(values) => {
                let base = match dtype {
                    Datatype::VarSequence { base, .. } => base.size().max(1),
                    _ => {
                        return Err(Error::InvalidArgument(
                            "sequence values need a variable-length sequence datatype".into(),
                        ))
                    }
                };
                if values
                    .iter()
                    .any(|v| !(v.len() as u64).is_multiple_of(base))
                {
                    return Err(Error::InvalidArgument(
                        "sequence bytes are not a whole number of elements".into(),
                    ));
                }
                let it = values
                    .iter()
                    .map(|v| (v.as_slice(), (v.len() as u64 / base) as usize));
                self.vlen(it, values.len(), n).map(Cow::Owned)
            }
            DataRef::Elements(e) => {
                if n.checked_mul(dtype.size()) != Some(e.bytes.len() as u64) {
                    return Err(Error::InvalidArgument(format!(
                        "data is {} bytes, expected {} elements of {} bytes",
                        e.bytes.len(),
                        n,
                        dtype.size()
                    )));
                }
                let addrs = &self.addrs;
                let lookup = |o: ObjectId| addrs.get(&o.0).copied();
                elements::resolve(e, &lookup, &mut self.gheap, self.sink, 0).map(Cow::Owned)
            }
        }
    }

    fn vlen<'b>(
        &mut self,
        values: impl Iterator<Item = (&'b [u8], usize)>,
        count: usize,
        n: u64,
    ) -> Result<Vec<u8>> {
        if count as u64 != n {
            return Err(Error::InvalidArgument(format!(
                "{count} values for {n} elements"
            )));
        }
        let mut out = Vec::with_capacity(count * 16);
        for (bytes, len) in values {
            let len = u32::try_from(len)
                .map_err(|_| Error::InvalidArgument("variable-length value too long".into()))?;
            let r = self.gheap.add(self.sink, bytes)?;
            out.extend_from_slice(&vlen_pointer(len, r));
        }
        Ok(out)
    }

    /// The dataset's messages; its layout (with the data) is left out when `defer`.
    fn dataset(&mut self, ds: &DatasetNode, defer: bool) -> Result<Vec<Message>> {
        let spec = &ds.spec;
        let elem = spec.dtype.size();
        if elem == 0 || elem > u64::from(u32::MAX) {
            return Err(Error::InvalidArgument("bad element size".into()));
        }
        if let Some(f) = &spec.fill_value {
            if f.len() as u64 != elem {
                return Err(Error::InvalidArgument(
                    "fill value must be one element".into(),
                ));
            }
        }
        let mut msgs = vec![
            Message::new(types::DATASPACE, spec.shape.encode(WRITER_SIZES)),
            match ds.named_type.and_then(|n| self.named.get(&n)) {
                Some(&addr) => Message {
                    kind: types::DATATYPE,
                    body: SharedRef::ObjectHeader(addr).encode(WRITER_SIZES),
                    flags: FLAG_SHARED,
                    order: 0,
                },
                None => Message {
                    kind: types::DATATYPE,
                    body: datatype::encode(&spec.dtype)?,
                    flags: FLAG_CONSTANT,
                    order: 0,
                },
            },
        ];
        let alloc = match &spec.layout {
            Layout::Compact => AllocTime::Early,
            Layout::Virtual { .. } => AllocTime::Incremental,
            Layout::Contiguous => AllocTime::Late,
            Layout::Chunked {
                chunk_dims,
                filters,
            } => {
                if matches!(spec.shape.kind, SpaceKind::Scalar | SpaceKind::Null) {
                    return Err(Error::InvalidArgument(
                        "chunked layout needs a simple dataspace".into(),
                    ));
                }
                let filters: Vec<_> = filters
                    .iter()
                    .map(|f| {
                        if ds.pipeline_as_stored {
                            f.clone()
                        } else {
                            set_local(f, &spec.dtype, chunk_dims)
                        }
                    })
                    .collect();
                if let Some(body) = &ds.pipeline_message {
                    msgs.push(Message::new(types::FILTER_PIPELINE, body.clone()));
                } else if !filters.is_empty() {
                    msgs.push(Message::new(
                        types::FILTER_PIPELINE,
                        filter_pipeline::encode(&filters)?,
                    ));
                }
                AllocTime::Incremental
            }
        };
        msgs.push(Message {
            kind: types::FILL_VALUE,
            body: fill_value::encode(alloc, spec.fill_value.as_deref())?,
            flags: FLAG_CONSTANT,
            order: 0,
        });
        if !defer {
            msgs.push(self.layout(ds)?.1);
        }
        Ok(msgs)
    }

    /// Write the dataset's data; returns its allocation time and layout message.
    fn layout(&mut self, ds: &DatasetNode) -> Result<(AllocTime, Message)> {
        let spec = &ds.spec;
        let elem = spec.dtype.size();
        let view = match &ds.data {
            DatasetData::None => None,
            DatasetData::Raw(b) => Some(DataRef::Raw(b)),
            DatasetData::VarStrings(v) => Some(DataRef::Strings(v)),
            DatasetData::VarSequences(v) => Some(DataRef::Seqs(v)),
            DatasetData::Elements(e) => Some(DataRef::Elements(e)),
        };
        let raw: Option<Cow<[u8]>> = match view {
            Some(v) => Some(self.element_bytes(&spec.dtype, &spec.shape, v)?),
            None => None,
        };
        let nbytes = spec
            .shape
            .num_elements()
            .and_then(|n| n.checked_mul(elem))
            .ok_or_else(|| Error::InvalidArgument("dataset too large".into()))?;
        let fill = spec.fill_value.as_deref();
        let (alloc, layout) = match &spec.layout {
            Layout::Compact => {
                let data = raw.unwrap_or_else(|| {
                    Cow::Owned(match fill {
                        Some(f) => f.repeat(nbytes as usize / f.len().max(1)),
                        None => vec![0; nbytes as usize],
                    })
                });
                (
                    AllocTime::Early,
                    FileLayout::Compact {
                        data: data.into_owned(),
                    }
                    .encode(WRITER_SIZES)?,
                )
            }
            Layout::Contiguous => {
                let addr = match (raw, ds.streamed) {
                    (Some(d), _) if !d.is_empty() => self.sink.append(&d)?,
                    (_, Some((addr, len))) => {
                        if len != nbytes {
                            return Err(Error::InvalidArgument(format!(
                                "{len} of the dataset's {nbytes} bytes were written"
                            )));
                        }
                        addr
                    }
                    _ => UNDEF,
                };
                (
                    AllocTime::Late,
                    FileLayout::Contiguous {
                        address: (addr != UNDEF).then_some(addr),
                        size: Some(nbytes),
                    }
                    .encode(WRITER_SIZES)?,
                )
            }
            Layout::Chunked {
                chunk_dims,
                filters,
            } => {
                let max = spec.shape.max_dims.clone();
                let filters: Vec<_> = filters
                    .iter()
                    .map(|f| {
                        if ds.pipeline_as_stored {
                            f.clone()
                        } else {
                            set_local(f, &spec.dtype, chunk_dims)
                        }
                    })
                    .collect();
                let input = ChunkedInput {
                    dims: &spec.shape.dims,
                    max: &max,
                    chunk: chunk_dims,
                    element_size: elem as usize,
                    filters: &filters,
                    fill,
                    data: raw.as_deref(),
                    raw_chunks: &ds.raw_chunks,
                };
                (AllocTime::Incremental, chunks::write(self.sink, &input)?)
            }
            Layout::Virtual { mapping_list } => {
                if raw.is_some() || ds.streamed.is_some() {
                    return Err(Error::InvalidArgument(
                        "a virtual dataset holds no data of its own".into(),
                    ));
                }
                let r = self.gheap.add(self.sink, mapping_list)?;
                (
                    AllocTime::Incremental,
                    FileLayout::Virtual {
                        heap_address: r.collection,
                        index: r.index,
                    }
                    .encode(WRITER_SIZES)?,
                )
            }
        };
        Ok((alloc, Message::new(types::LAYOUT, layout)))
    }
}

/// Object header continuation message: address and length of the next chunk.
fn continuation(addr: u64, len: u64) -> Vec<u8> {
    let mut out = addr.to_le_bytes().to_vec();
    out.extend_from_slice(&len.to_le_bytes());
    out
}
