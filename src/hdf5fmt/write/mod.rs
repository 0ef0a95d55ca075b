//! The HDF5 writer: build a tree of groups, datasets and attributes in memory,
//! then serialise it in one pass on [`FileWriter::commit`] (to a file, atomically)
//! or [`FileWriter::finish`] (to bytes). Chunks given already encoded
//! ([`FileWriter::write_raw_chunk`]) go to the output at once, so a copy holds
//! no more than the chunks it is encoding. Never parses: the message types and
//! their encoders ([`crate::messages`]), the structure signatures
//! ([`crate::signature`]), the datatype model, [`FilterSpec`] and the
//! filter encoders are the ones the reader uses.
//!
//! Format choices (HDF5 File Format Specification 3.0): superblock version 2 with
//! 8-byte offsets and lengths; version 2 object headers; new-style groups (link
//! info + group info, compact link messages up to 8 links each under 64 KiB,
//! else a fractal heap and a type 5 v2 B-tree); attributes compact up to 8 (and
//! under 64 KiB each), else a fractal heap and a type 8 v2 B-tree (heap objects
//! over 64 KiB are huge objects, as libhdf5 writes them); layouts compact,
//! contiguous, or chunked
//! (layout v4: single chunk, fixed array, extensible array for one unlimited
//! dimension, v2 B-tree for several);
//! fill value message v3; filter pipeline v2; variable-length data in global heap
//! collections.
//!
//! ```
//! use purehdf::low_level::write::{AttrValue, DatasetSpec, FileWriter};
//! use purehdf::low_level::datatype::Datatype;
//! let mut w = FileWriter::in_memory();
//! let g = w.create_group(w.root(), "grp").unwrap();
//! let data: Vec<u8> = [1i32, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let d = w.create_dataset(g, "x", DatasetSpec::new(Datatype::int(4, true), &[3]), data).unwrap();
//! w.set_attr(d, "units", AttrValue::string("mm")).unwrap();
//! let bytes = w.finish().unwrap();
//! assert_eq!(&bytes[..4], b"\x89HDF");
//! ```

pub mod atomic;
pub mod btree_v2;
pub mod chunk_policy;
pub mod chunks;
pub mod elements;
pub mod extensible_array;
pub mod file_writer;
pub mod filter_spec;
pub mod fractal_heap;
pub(crate) mod fragment;
pub mod global_heap;
mod groups_attrs;
mod ids;
mod node_settings;
pub mod object_header;
pub mod set_local;
pub mod sharing;
pub mod sink;
mod sizes;
pub mod typed_write;

pub use crate::messages::dataspace::{Dataspace, SpaceKind};
pub use elements::{Elements, Fixup};
pub use filter_spec::{Blosc2Codec, Blosc2Shuffle, Filter};
pub use ids::{DatasetId, DatatypeId, GroupId, ObjectId};
pub use node_settings::CreationOrder;
pub use sizes::WRITER_SIZES;

use crate::datatype::{CharSet, Datatype, EnumMember, StringPad};
use crate::error::{Error, Result};
use atomic::TempFile;
pub use atomic::{sync_dir, Synced, Unsynced};
use chunks::RawChunks;
use purehdf_filters::FilterSpec;
use sink::Sink;
use std::collections::HashSet;
use std::path::Path;

/// Storage layout of a dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Data inside the object header (under 64 KiB).
    Compact,
    /// One contiguous block.
    Contiguous,
    /// Fixed-size chunks, each run through `filters`.
    Chunked {
        /// Chunk dimensions in elements, one per dataset dimension.
        chunk_dims: Vec<u64>,
        /// Filter pipeline applied to each chunk, in order (empty: chunked without filters).
        filters: Vec<FilterSpec>,
    },
    /// A virtual dataset: no data of its own, its mapping list (encoded by
    /// `virtual_layout::encode::encode_mappings`) kept in the global heap.
    Virtual {
        /// The mapping list as the global heap object holds it.
        mapping_list: Vec<u8>,
    },
}

/// How to create a dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetSpec {
    /// Element type.
    pub dtype: Datatype,
    /// Shape and maximum shape.
    pub shape: Dataspace,
    /// Storage layout (contiguous, compact or chunked with filters).
    pub layout: Layout,
    /// One element's bytes, or `None` for the default (zeros).
    pub fill_value: Option<Vec<u8>>,
}

impl DatasetSpec {
    /// A contiguous dataset of fixed `shape`.
    pub fn new(dtype: Datatype, shape: &[u64]) -> Self {
        DatasetSpec {
            dtype,
            shape: Dataspace::simple(shape),
            layout: Layout::Contiguous,
            fill_value: None,
        }
    }

    /// A contiguous scalar dataset.
    pub fn scalar(dtype: Datatype) -> Self {
        DatasetSpec {
            dtype,
            shape: Dataspace::scalar(),
            layout: Layout::Contiguous,
            fill_value: None,
        }
    }

    /// Set maximum dimensions (`None` = unlimited).
    pub fn with_maxshape(mut self, max: &[Option<u64>]) -> Self {
        if self.shape.kind == SpaceKind::Simple {
            self.shape.max_dims = if max.is_empty() {
                self.shape.dims.iter().map(|&d| Some(d)).collect()
            } else {
                max.to_vec()
            };
        }
        self
    }

    /// Use chunked storage with the filter pipeline `filters`, applied in
    /// order when writing.
    pub fn chunked(self, chunk_dims: &[u64], filters: Vec<Filter>) -> Self {
        self.chunked_stored(chunk_dims, filters.into_iter().map(Into::into).collect())
    }

    /// Use chunked storage with a filter pipeline given as stored (filter
    /// ids, flags and client data, e.g. copied from another dataset).
    pub fn chunked_stored(mut self, chunk_dims: &[u64], pipeline: Vec<FilterSpec>) -> Self {
        self.layout = Layout::Chunked {
            chunk_dims: chunk_dims.to_vec(),
            filters: pipeline,
        };
        self
    }

    /// Use compact storage.
    pub fn compact(mut self) -> Self {
        self.layout = Layout::Compact;
        self
    }

    /// Set the fill value (one element's bytes).
    pub fn with_fill(mut self, fill: Vec<u8>) -> Self {
        self.fill_value = Some(fill);
        self
    }
}

/// Values of a dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatasetData {
    /// Nothing written (reads as the fill value; chunks may come from `write_raw_chunk`).
    None,
    /// Raw little-endian C-order element bytes.
    Raw(Vec<u8>),
    /// One string per element (variable-length string datatype).
    VarStrings(Vec<String>),
    /// One byte run per element (variable-length sequence datatype).
    VarSequences(Vec<Vec<u8>>),
    /// Element bytes with references or variable-length values anywhere inside.
    Elements(Elements),
}

impl From<Vec<u8>> for DatasetData {
    fn from(v: Vec<u8>) -> Self {
        DatasetData::Raw(v)
    }
}

impl From<&[u8]> for DatasetData {
    fn from(v: &[u8]) -> Self {
        DatasetData::Raw(v.to_vec())
    }
}

impl From<Elements> for DatasetData {
    fn from(v: Elements) -> Self {
        DatasetData::Elements(v)
    }
}

impl From<Vec<String>> for DatasetData {
    fn from(v: Vec<String>) -> Self {
        DatasetData::VarStrings(v)
    }
}

/// Stored values of an attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrData {
    /// Raw little-endian C-order element bytes.
    Raw(Vec<u8>),
    /// One string per element (variable-length string datatype).
    VarStrings(Vec<String>),
    /// One byte run per element (variable-length sequence datatype).
    VarSequences(Vec<Vec<u8>>),
    /// Element bytes with references or variable-length values anywhere inside.
    Elements(Elements),
}

/// An attribute: datatype, shape and values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrValue {
    /// Element type.
    pub dtype: Datatype,
    /// Shape (scalar or simple).
    pub shape: Dataspace,
    /// The values.
    pub data: AttrData,
}

/// Numbers that map onto an HDF5 datatype (little-endian).
pub trait Element: Copy {
    /// The HDF5 datatype stored for values of this type.
    fn dtype() -> Datatype;
    /// Append the little-endian bytes of this value to `out`.
    fn put(&self, out: &mut Vec<u8>);
    /// Append the little-endian bytes of every value (one bulk copy for the
    /// numeric types on a little-endian target).
    fn put_all(values: &[Self], out: &mut Vec<u8>) {
        for v in values {
            v.put(out);
        }
    }
    /// The little-endian bytes of `values`: the slice itself, viewed as
    /// bytes, for the numeric types on a little-endian target (no copy);
    /// otherwise a new buffer filled by [`Element::put_all`].
    fn bytes_of(values: &[Self]) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Owned(to_bytes(values))
    }
}

macro_rules! element {
    ($t:ty, $dt:expr) => {
        impl Element for $t {
            fn dtype() -> Datatype {
                $dt
            }
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn put_all(values: &[Self], out: &mut Vec<u8>) {
                out.extend_from_slice(&Self::bytes_of(values));
            }
            fn bytes_of(values: &[Self]) -> std::borrow::Cow<'_, [u8]> {
                if cfg!(target_endian = "little") {
                    // SAFETY: a primitive number has no padding and every byte
                    // of it is initialised; the byte view covers exactly
                    // `size_of_val(values)` bytes of the borrowed slice (which
                    // it borrows) and on a little-endian target equals
                    // `to_le_bytes` of each value in order.
                    std::borrow::Cow::Borrowed(unsafe {
                        std::slice::from_raw_parts(
                            values.as_ptr().cast::<u8>(),
                            std::mem::size_of_val(values),
                        )
                    })
                } else {
                    let mut out = Vec::with_capacity(std::mem::size_of_val(values));
                    for v in values {
                        v.put(&mut out);
                    }
                    std::borrow::Cow::Owned(out)
                }
            }
        }
    };
}
element!(i8, Datatype::int(1, true));
element!(i16, Datatype::int(2, true));
element!(i32, Datatype::int(4, true));
element!(i64, Datatype::int(8, true));
element!(u8, Datatype::int(1, false));
element!(u16, Datatype::int(2, false));
element!(u32, Datatype::int(4, false));
element!(u64, Datatype::int(8, false));
element!(f32, Datatype::float(4));
element!(f64, Datatype::float(8));

impl Element for bool {
    fn dtype() -> Datatype {
        bool_type()
    }
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
}

/// h5py's boolean: an enum over int8 with FALSE = 0 and TRUE = 1.
pub fn bool_type() -> Datatype {
    Datatype::Enum {
        base: Box::new(Datatype::int(1, true)),
        members: vec![
            EnumMember {
                name: "FALSE".into(),
                value: vec![0],
            },
            EnumMember {
                name: "TRUE".into(),
                value: vec![1],
            },
        ],
    }
}

/// Variable-length string datatype.
pub fn vlen_string_type(cset: CharSet) -> Datatype {
    Datatype::VarString {
        size: 16,
        pad: StringPad::NullTerm,
        cset,
    }
}

/// Little-endian bytes of a slice of elements.
pub fn to_bytes<T: Element>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(values));
    // A dataset's worth of bytes: a few huge-page faults instead of one per 4 KiB.
    crate::alloc::advise_huge_pages(&mut out);
    T::put_all(values, &mut out);
    out
}

impl AttrValue {
    /// A scalar number or bool.
    pub fn scalar<T: Element>(v: T) -> Self {
        AttrValue {
            dtype: T::dtype(),
            shape: Dataspace::scalar(),
            data: AttrData::Raw(to_bytes(&[v])),
        }
    }

    /// A 1-D array of numbers or bools.
    pub fn array<T: Element>(v: &[T]) -> Self {
        AttrValue {
            dtype: T::dtype(),
            shape: Dataspace::simple(&[v.len() as u64]),
            data: AttrData::Raw(to_bytes(v)),
        }
    }

    /// A scalar variable-length UTF-8 string (what h5py writes for `str`).
    pub fn string(s: &str) -> Self {
        AttrValue {
            dtype: vlen_string_type(CharSet::Utf8),
            shape: Dataspace::scalar(),
            data: AttrData::VarStrings(vec![s.to_string()]),
        }
    }

    /// A scalar variable-length ASCII string.
    pub fn ascii(s: &str) -> Self {
        AttrValue {
            dtype: vlen_string_type(CharSet::Ascii),
            shape: Dataspace::scalar(),
            data: AttrData::VarStrings(vec![s.to_string()]),
        }
    }

    /// A 1-D array of variable-length strings.
    pub fn strings<S: AsRef<str>>(values: &[S], cset: CharSet) -> Self {
        AttrValue {
            dtype: vlen_string_type(cset),
            shape: Dataspace::simple(&[values.len() as u64]),
            data: AttrData::VarStrings(values.iter().map(|s| s.as_ref().to_string()).collect()),
        }
    }

    /// A scalar fixed-length string of `size` bytes (the value is truncated or padded).
    pub fn fixed_string(s: &str, size: u32, pad: StringPad, cset: CharSet) -> Self {
        let mut b = s.as_bytes().to_vec();
        b.truncate(size as usize);
        let fill = if pad == StringPad::SpacePad { b' ' } else { 0 };
        b.resize(size as usize, fill);
        AttrValue {
            dtype: Datatype::String { size, pad, cset },
            shape: Dataspace::scalar(),
            data: AttrData::Raw(b),
        }
    }

    /// Any datatype, shape and raw little-endian bytes.
    pub fn raw(dtype: Datatype, shape: Dataspace, data: Vec<u8>) -> Self {
        AttrValue {
            dtype,
            shape,
            data: AttrData::Raw(data),
        }
    }
}

/// A link from a group.
#[derive(Clone, Debug)]
pub(crate) enum LinkIntent {
    Hard(usize),
    Soft(String),
    External {
        file: String,
        path: String,
    },
    /// A user-defined link class (65–255) with its link information as stored.
    UserDefined {
        kind: u8,
        data: Vec<u8>,
    },
}

pub(crate) struct DatasetNode {
    pub spec: DatasetSpec,
    /// Node of the committed datatype the dataset shares, if any.
    pub named_type: Option<usize>,
    pub data: DatasetData,
    pub raw_chunks: RawChunks,
    /// Contiguous data already in the output: (address, bytes so far).
    pub streamed: Option<(u64, u64)>,
    /// The pipeline's client data is final (copied from a file): no set-local.
    pub pipeline_as_stored: bool,
    /// The source's filter pipeline message body, written as it was (same
    /// version, names, padding and client data) instead of encoding one.
    pub pipeline_message: Option<Vec<u8>>,
}

pub(crate) enum NodeKind {
    Group { links: Vec<(String, LinkIntent)> },
    Dataset(Box<DatasetNode>),
    NamedType(Datatype),
}

pub(crate) struct Node {
    pub kind: NodeKind,
    pub attrs: Vec<(String, AttrValue)>,
    /// Creation-order flags and committed attribute types (see `sharing.rs`).
    pub extra: node_settings::NodeExtra,
}

/// Builds an HDF5 file. See the module documentation.
pub struct FileWriter {
    nodes: Vec<Node>,
    /// (group, link name) pairs, for O(1) duplicate checks.
    link_names: HashSet<(usize, String)>,
    /// Where bytes go: the superblock's room is reserved, raw chunks are
    /// appended as they come, the rest on serialisation.
    sink: Sink,
    /// The temporary file of a file writer.
    temp: Option<TempFile>,
    /// A raw chunk write failed: the output is incomplete.
    broken: Option<String>,
}

fn check_name(name: &str) -> Result<()> {
    let reason = match name {
        "" => "empty",
        "." => "`.` names the group itself",
        n if n.contains('/') => "contains `/` (a path separator)",
        n if n.contains('\0') => "contains a NUL byte",
        _ => return Ok(()),
    };
    Err(Error::InvalidName {
        what: "link name",
        name: name.to_string(),
        reason,
    })
}

/// Variable-length strings are refused when one holds a NUL byte: C readers
/// (libhdf5 and h5py among them) would cut the value there.
fn check_strings<'a>(mut values: impl Iterator<Item = &'a String>) -> Result<()> {
    match values.find(|s| s.contains('\0')) {
        Some(s) => Err(Error::InvalidName {
            what: "string",
            name: s.clone(),
            reason: "contains a NUL byte",
        }),
        None => Ok(()),
    }
}

impl FileWriter {
    /// Start a file that [`FileWriter::commit`] will atomically put at `path`. The
    /// bytes go to `<dir>/.<name>.tmp-<pid>-<8 hex>` first; dropping the writer without
    /// committing (or a failed commit) removes that file and leaves `path` untouched.
    pub fn create(path: impl AsRef<Path>) -> Result<FileWriter> {
        let (temp, file) = TempFile::create(path.as_ref())?;
        let mut sink = Sink::file(file);
        sink.reserve(file_writer::SUPERBLOCK_SIZE)?;
        Ok(FileWriter {
            nodes: vec![Self::empty_group()],
            link_names: HashSet::new(),
            sink,
            temp: Some(temp),
            broken: None,
        })
    }

    /// [`FileWriter::create`] for a file that must not exist yet (an immutable
    /// build): an existing `path` is refused now, and [`FileWriter::commit`]
    /// refuses to replace one that appeared meanwhile, both with an
    /// [`Error::Io`] of kind `AlreadyExists`. A new file gets `0666 & ~umask`.
    pub fn create_new(path: impl AsRef<Path>) -> Result<FileWriter> {
        let (temp, file) = TempFile::create_new(path.as_ref())?;
        let mut w = Self::in_memory();
        w.sink = Sink::file(file);
        w.sink.reserve(file_writer::SUPERBLOCK_SIZE)?;
        w.temp = Some(temp);
        Ok(w)
    }

    /// Start a file that [`FileWriter::finish`] returns as bytes.
    pub fn in_memory() -> FileWriter {
        let mut sink = Sink::memory();
        // a memory sink cannot fail
        let _ = sink.reserve(file_writer::SUPERBLOCK_SIZE);
        FileWriter {
            nodes: vec![Self::empty_group()],
            link_names: HashSet::new(),
            sink,
            temp: None,
            broken: None,
        }
    }

    fn empty_group() -> Node {
        Node {
            kind: NodeKind::Group { links: Vec::new() },
            attrs: Vec::new(),
            extra: Default::default(),
        }
    }

    /// Path of the temporary file, for file writers.
    pub fn temp_path(&self) -> Option<&Path> {
        self.temp.as_ref().map(TempFile::path)
    }

    pub(crate) fn inject_failure_after(&mut self, bytes: u64) {
        self.sink.fail_after(Some(bytes));
    }

    /// The root group.
    pub fn root(&self) -> GroupId {
        GroupId(0)
    }

    fn links_mut(&mut self, parent: GroupId) -> Result<&mut Vec<(String, LinkIntent)>> {
        match self.nodes.get_mut(parent.0).map(|n| &mut n.kind) {
            Some(NodeKind::Group { links }) => Ok(links),
            _ => Err(Error::InvalidArgument(format!("{parent:?} is not a group"))),
        }
    }

    fn add_link(&mut self, parent: GroupId, name: &str, link: LinkIntent) -> Result<()> {
        check_name(name)?;
        let key = (parent.0, name.to_string());
        if self.link_names.contains(&key) {
            return Err(Error::InvalidArgument(format!(
                "link {name:?} already exists"
            )));
        }
        self.links_mut(parent)?.push((name.to_string(), link));
        self.link_names.insert(key);
        Ok(())
    }

    /// Create a group `name` in `parent`.
    pub fn create_group(&mut self, parent: GroupId, name: &str) -> Result<GroupId> {
        let id = self.nodes.len();
        self.add_link(parent, name, LinkIntent::Hard(id))?;
        self.nodes.push(Self::empty_group());
        Ok(GroupId(id))
    }

    /// Create a dataset `name` in `parent` holding `data` (checked on serialisation).
    pub fn create_dataset(
        &mut self,
        parent: GroupId,
        name: &str,
        spec: DatasetSpec,
        data: impl Into<DatasetData>,
    ) -> Result<DatasetId> {
        if spec.shape.kind == SpaceKind::Simple {
            let (dims, max) = (&spec.shape.dims, &spec.shape.max_dims);
            if max.len() != dims.len() {
                return Err(Error::InvalidArgument(
                    "maxshape rank differs from shape".into(),
                ));
            }
            if max.iter().zip(dims).any(|(m, d)| m.is_some_and(|m| m < *d)) {
                return Err(Error::InvalidArgument("maxshape below shape".into()));
            }
            if dims.len() > crate::limits::MAX_RANK {
                return Err(Error::InvalidArgument("rank too large".into()));
            }
            if max.iter().any(|m| m.is_none())
                && !matches!(spec.layout, Layout::Chunked { .. } | Layout::Virtual { .. })
            {
                return Err(Error::InvalidArgument(
                    "unlimited dimensions need chunked layout".into(),
                ));
            }
        }
        let data = data.into();
        if let DatasetData::VarStrings(v) = &data {
            check_strings(v.iter())?;
        }
        let id = self.nodes.len();
        self.add_link(parent, name, LinkIntent::Hard(id))?;
        self.nodes.push(Node {
            kind: NodeKind::Dataset(Box::new(DatasetNode {
                spec,
                data,
                named_type: None,
                raw_chunks: RawChunks::new(),
                streamed: None,
                pipeline_as_stored: false,
                pipeline_message: None,
            })),
            attrs: Vec::new(),
            extra: Default::default(),
        });
        Ok(DatasetId(id))
    }

    /// Commit `dtype` as a named datatype `name` in `parent`.
    pub fn commit_datatype(
        &mut self,
        parent: GroupId,
        name: &str,
        dtype: Datatype,
    ) -> Result<DatatypeId> {
        let id = self.nodes.len();
        self.add_link(parent, name, LinkIntent::Hard(id))?;
        self.nodes.push(Node {
            kind: NodeKind::NamedType(dtype),
            attrs: Vec::new(),
            extra: Default::default(),
        });
        Ok(DatatypeId(id))
    }

    /// Like [`FileWriter::create_dataset`], but the dataset's datatype is the
    /// committed datatype `named` (stored as a shared datatype message); `spec.dtype`
    /// is replaced by it.
    pub fn create_dataset_with_type(
        &mut self,
        parent: GroupId,
        name: &str,
        mut spec: DatasetSpec,
        named: DatatypeId,
        data: impl Into<DatasetData>,
    ) -> Result<DatasetId> {
        match self.nodes.get(named.0).map(|n| &n.kind) {
            Some(NodeKind::NamedType(dt)) => spec.dtype = dt.clone(),
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "{named:?} is not a datatype"
                )))
            }
        }
        let id = self.create_dataset(parent, name, spec, data)?;
        if let Some(NodeKind::Dataset(ds)) = self.nodes.get_mut(id.0).map(|n| &mut n.kind) {
            ds.named_type = Some(named.0);
        }
        Ok(id)
    }

    /// Store an already-encoded chunk (`filter_mask` bit i = stage i skipped) at chunk
    /// coordinates `chunk_coords` (chunk index along each dimension, not element offsets).
    /// The dataset must have been created with `DatasetData::None`. The bytes are
    /// written to the output now; storing the same coordinates again replaces the
    /// chunk (the first copy's bytes stay in the file, unreferenced).
    pub fn write_raw_chunk(
        &mut self,
        dataset: DatasetId,
        chunk_coords: &[u64],
        stored_bytes: Vec<u8>,
        filter_mask: u32,
    ) -> Result<()> {
        self.append_chunk(dataset, chunk_coords, &stored_bytes, filter_mask)
    }

    /// [`FileWriter::write_raw_chunk`] of borrowed bytes.
    fn append_chunk(
        &mut self,
        dataset: DatasetId,
        chunk_coords: &[u64],
        stored_bytes: &[u8],
        filter_mask: u32,
    ) -> Result<()> {
        match self.nodes.get_mut(dataset.0).map(|n| &mut n.kind) {
            Some(NodeKind::Dataset(ds)) => {
                if !matches!(ds.spec.layout, Layout::Chunked { .. }) {
                    return Err(Error::InvalidArgument("dataset is not chunked".into()));
                }
                if ds.data != DatasetData::None {
                    return Err(Error::InvalidArgument(
                        "raw chunks need a dataset created without data".into(),
                    ));
                }
                let addr = match self.sink.append(stored_bytes) {
                    Ok(a) => a,
                    Err(e) => {
                        self.broken = Some(e.to_string());
                        return Err(e);
                    }
                };
                ds.raw_chunks.insert(
                    chunk_coords.to_vec(),
                    chunks::RawChunk {
                        addr,
                        size: stored_bytes.len() as u64,
                        mask: filter_mask,
                    },
                );
                Ok(())
            }
            _ => Err(Error::InvalidArgument(format!(
                "{dataset:?} is not a dataset"
            ))),
        }
    }

    /// Append the next `bytes` (C order) of a contiguous dataset created with
    /// `DatasetData::None`: they go to the output now, so a large dataset is
    /// written one slab at a time. The parts of one dataset must follow each
    /// other with no other raw write between them, and add up to the whole
    /// dataset by the time the file is serialised.
    pub fn write_contiguous_part(&mut self, dataset: DatasetId, bytes: &[u8]) -> Result<()> {
        let pos = self.sink.pos();
        let ds = match self.nodes.get_mut(dataset.0).map(|n| &mut n.kind) {
            Some(NodeKind::Dataset(ds)) => ds,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "{dataset:?} is not a dataset"
                )))
            }
        };
        if ds.spec.layout != Layout::Contiguous || ds.data != DatasetData::None {
            return Err(Error::InvalidArgument(
                "contiguous parts need a contiguous dataset created without data".into(),
            ));
        }
        let total = ds
            .spec
            .shape
            .num_elements()
            .and_then(|n| n.checked_mul(ds.spec.dtype.size()))
            .ok_or_else(|| Error::InvalidArgument("dataset too large".into()))?;
        let (addr, len) = ds.streamed.unwrap_or((pos, 0));
        if addr.checked_add(len) != Some(pos) {
            return Err(Error::InvalidArgument(
                "contiguous parts must be written back to back".into(),
            ));
        }
        let len = len
            .checked_add(bytes.len() as u64)
            .filter(|&l| l <= total)
            .ok_or_else(|| {
                Error::InvalidArgument(format!("contiguous parts exceed the {total}-byte dataset"))
            })?;
        if let Err(e) = self.sink.append(bytes) {
            self.broken = Some(e.to_string());
            return Err(e);
        }
        ds.streamed = Some((addr, len));
        Ok(())
    }

    /// Pad the output with zeros so the next raw write (a contiguous part
    /// or a raw chunk) starts at a file address that is a multiple of
    /// `align` (a power of two up to 1 MiB), e.g. 64 for data read as typed
    /// slices straight from a mapping (`low_level::records`).
    pub fn align_next_raw(&mut self, align: u64) -> Result<()> {
        if !align.is_power_of_two() || align > 1 << 20 {
            return Err(Error::InvalidArgument(format!(
                "alignment {align} is not a power of two up to 1 MiB"
            )));
        }
        let pad = (align - self.sink.pos() % align) % align;
        if pad > 0 {
            if let Err(e) = self.sink.append(&vec![0u8; pad as usize]) {
                self.broken = Some(e.to_string());
                return Err(e);
            }
        }
        Ok(())
    }

    /// Set (or replace) attribute `name` on a group or dataset.
    pub fn set_attr(
        &mut self,
        obj: impl Into<ObjectId>,
        name: &str,
        value: AttrValue,
    ) -> Result<()> {
        if name.is_empty() || name.contains('\0') {
            return Err(Error::InvalidName {
                what: "attribute name",
                name: name.to_string(),
                reason: if name.is_empty() {
                    "empty"
                } else {
                    "contains a NUL byte"
                },
            });
        }
        if let AttrData::VarStrings(v) = &value.data {
            check_strings(v.iter())?;
        }
        let obj = obj.into();
        let node = self
            .nodes
            .get_mut(obj.0)
            .ok_or_else(|| Error::InvalidArgument(format!("{obj:?} does not exist")))?;
        match node.attrs.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => node.attrs.push((name.to_string(), value)),
        }
        Ok(())
    }

    /// Add a soft link `name` in `parent` pointing at `target` (a path).
    pub fn soft_link(&mut self, parent: GroupId, name: &str, target: &str) -> Result<()> {
        self.add_link(parent, name, LinkIntent::Soft(target.to_string()))
    }

    /// Add a user-defined link `name` in `parent`: link class `kind` (65–255,
    /// the classes HDF5 leaves to applications) with its link information
    /// `data` stored as given, as libhdf5 stores a class it cannot follow.
    pub fn user_defined_link(
        &mut self,
        parent: GroupId,
        name: &str,
        kind: u8,
        data: &[u8],
    ) -> Result<()> {
        if kind < 65 {
            return Err(Error::InvalidArgument(format!(
                "link class {kind} is reserved by HDF5 (user-defined classes are 65-255)"
            )));
        }
        if data.len() > usize::from(u16::MAX) {
            return Err(Error::InvalidArgument(format!(
                "user-defined link information of {} bytes (at most 65535)",
                data.len()
            )));
        }
        self.add_link(
            parent,
            name,
            LinkIntent::UserDefined {
                kind,
                data: data.to_vec(),
            },
        )
    }

    /// Add a hard link `name` in `parent` to an existing object: a second name
    /// for the same object (written once). A link to a group that contains
    /// `parent` makes a cycle, which serialisation refuses.
    pub fn hard_link(
        &mut self,
        parent: GroupId,
        name: &str,
        target: impl Into<ObjectId>,
    ) -> Result<()> {
        let t = target.into();
        if t.0 >= self.nodes.len() {
            return Err(Error::InvalidArgument(format!("{t:?} does not exist")));
        }
        self.add_link(parent, name, LinkIntent::Hard(t.0))
    }

    /// Add an external link `name` in `parent` to object `path` of file `file`.
    pub fn external_link(
        &mut self,
        parent: GroupId,
        name: &str,
        file: &str,
        path: &str,
    ) -> Result<()> {
        if file.is_empty() || path.is_empty() || file.contains('\0') || path.contains('\0') {
            return Err(Error::InvalidArgument(format!(
                "bad external link {file:?}:{path:?}"
            )));
        }
        self.add_link(
            parent,
            name,
            LinkIntent::External {
                file: file.to_string(),
                path: path.to_string(),
            },
        )
    }

    /// Replace the values of a dataset (e.g. references written once every
    /// object they point at exists). Refused when raw chunks were stored.
    pub fn set_data(&mut self, dataset: DatasetId, data: impl Into<DatasetData>) -> Result<()> {
        let data = data.into();
        if let DatasetData::VarStrings(v) = &data {
            check_strings(v.iter())?;
        }
        match self.nodes.get_mut(dataset.0).map(|n| &mut n.kind) {
            Some(NodeKind::Dataset(ds)) if ds.raw_chunks.is_empty() && ds.streamed.is_none() => {
                ds.data = data;
                Ok(())
            }
            Some(NodeKind::Dataset(_)) => Err(Error::InvalidArgument(
                "dataset already has raw chunks or contiguous parts".into(),
            )),
            _ => Err(Error::InvalidArgument(format!(
                "{dataset:?} is not a dataset"
            ))),
        }
    }

    /// Serialise to the temporary file, fsync, rename over the target, fsync the directory.
    pub fn commit(mut self) -> Result<()> {
        let Some(temp) = self.temp.take() else {
            return Err(Error::InvalidArgument(
                "in-memory writer: use finish()".into(),
            ));
        };
        self.serialize()?;
        let file = self.sink.into_file()?;
        temp.commit(file)
    }

    /// Serialise to the temporary file without flushing or renaming it:
    /// the caller checks the file at [`Unsynced::path`], then
    /// [`Unsynced::sync`] and [`Synced::publish`] it (and [`sync_dir`] its
    /// directory). [`FileWriter::commit`] is these steps in one.
    pub fn prepare(mut self) -> Result<Unsynced> {
        let Some(temp) = self.temp.take() else {
            return Err(Error::InvalidArgument(
                "in-memory writer: use finish()".into(),
            ));
        };
        self.serialize()?;
        let file = self.sink.into_file()?;
        Ok(temp.unsynced(file))
    }

    fn serialize(&mut self) -> Result<()> {
        if let Some(e) = &self.broken {
            return Err(Error::InvalidArgument(format!(
                "a raw chunk could not be written: {e}"
            )));
        }
        file_writer::serialize(&self.nodes, &mut self.sink)
    }

    /// Serialise and return the file's bytes (in-memory writers; a file writer
    /// returns the bytes of its temporary file, which is then removed, without
    /// committing).
    pub fn finish(mut self) -> Result<Vec<u8>> {
        self.serialize()?;
        match self.temp.take() {
            None => self.sink.into_bytes(),
            Some(temp) => {
                drop(self.sink.into_file()?);
                std::fs::read(temp.path()).map_err(|e| Error::io("read back", e))
            }
        }
    }
}

#[cfg(test)]
mod golden_tests;
#[cfg(test)]
mod tests;

/// Failure injection for crash-safety tests: make `writer` fail with an I/O
/// error once `bytes` bytes would be written, as a full disk would.
pub fn inject_failure_after(writer: &mut FileWriter, bytes: u64) {
    writer.inject_failure_after(bytes);
}
