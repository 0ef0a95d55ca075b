//! Attributes of an object (HDF5 File Format Specification IV.A.2.m and v,
//! III.A.2 record types 8 and 9): compact attribute messages in the object
//! header and dense attributes in a fractal heap indexed by a v2 B-tree.

use crate::btree_v2::BTreeV2;
use crate::cursor::Cursor;
use crate::datatype::Datatype;
use crate::error::{Error, Result};
use crate::file_core::File;
use crate::fractal_heap::FractalHeap;
use crate::messages::attribute::AttributeMessage;
use crate::messages::attribute_info::AttributeInfo;
use crate::messages::dataspace::{Dataspace, SpaceKind};
use crate::messages::shared::SharedRef;
use crate::messages::types;
use crate::object_header::ObjectHeader;

#[path = "attribute_repr.rs"]
mod repr;

/// An attribute: name, datatype, dataspace and the raw value bytes in file
/// order (variable-length elements are global-heap references, resolved
/// through the file the attribute was read from). Like a [`Dataset`], an
/// attribute read from a file keeps a handle to it, so
/// [`Attribute::read`], [`Attribute::value`] and its
/// [`Display`](std::fmt::Display) resolve variable-length strings and
/// sequences themselves.
///
/// [`Dataset`]: crate::Dataset
#[derive(Clone)]
pub struct Attribute {
    /// Attribute name.
    pub name: String,
    /// Stored datatype.
    pub dtype: Datatype,
    /// Stored dataspace.
    pub space: Dataspace,
    /// Raw value bytes in the file's byte order.
    pub data: Vec<u8>,
    /// The file the attribute was read from (`None` when built from a bare
    /// attribute message).
    file: Option<File>,
}

/// Attributes are equal when name, type, shape and stored bytes are (the
/// file they were read from does not count).
impl PartialEq for Attribute {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.dtype == other.dtype
            && self.space == other.space
            && self.data == other.data
    }
}

impl Eq for Attribute {}

impl std::fmt::Debug for Attribute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attribute")
            .field("name", &self.name)
            .field("dtype", &self.dtype)
            .field("space", &self.space)
            .field("data", &self.data)
            .finish()
    }
}

impl std::fmt::Display for Attribute {
    /// The value as Python prints what h5py returns for `attrs[name]`:
    /// `array([0.75, 0.75])`, `array([1, 2], dtype=int32)`, `'mm'` for a
    /// variable-length string, `b'XYZ'` for a fixed-length one, `7`,
    /// `0.125`, `True`, `(1, 2.5)` for a compound, `Empty(dtype=...)` for
    /// a null dataspace (numpy's `repr`, with scalars as numpy's `str`).
    /// A value that cannot be printed shows as
    /// `<HDF5 attribute "name": shape (..), type "..">`.
    ///
    /// ```
    /// use purehdf::{AttrValue, File, FileWriter};
    /// let mut w = FileWriter::in_memory();
    /// let root = w.root();
    /// w.set_attr(root, "spacing", AttrValue::array(&[0.75f64, 0.75]))?;
    /// w.set_attr(root, "dims", AttrValue::array(&[512i32, 512]))?;
    /// w.set_attr(root, "units", AttrValue::string("mm"))?;
    /// w.set_attr(root, "n", AttrValue::scalar(7u16))?;
    /// let file = File::from_bytes(w.finish()?)?;
    /// let shown: Vec<String> = file.root()?.attributes()?.iter().map(|a| format!("{}={a}", a.name)).collect();
    /// assert_eq!(shown, ["dims=array([512, 512], dtype=int32)", "n=7", "spacing=array([0.75, 0.75])", "units='mm'"]);
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match repr::repr(self) {
            Ok(s) => f.write_str(&s),
            Err(_) => write!(
                f,
                "<HDF5 attribute {:?}: shape {}, type {:?}>",
                self.name,
                crate::datatype::shape_tuple(self.shape()),
                self.dtype.to_string()
            ),
        }
    }
}

impl Attribute {
    /// The file the attribute was read from (`None` for one built from a
    /// bare attribute message).
    pub fn file(&self) -> Option<&File> {
        self.file.as_ref()
    }

    /// Dimensions (empty for scalar and null).
    pub fn shape(&self) -> &[u64] {
        &self.space.dims
    }

    /// Scalar, simple or null dataspace.
    pub fn space_kind(&self) -> SpaceKind {
        self.space.kind
    }

    /// Number of elements (1 for scalar, 0 for null).
    pub fn num_elements(&self) -> u64 {
        self.space.num_elements().unwrap_or(0)
    }
}

impl From<AttributeMessage> for Attribute {
    fn from(m: AttributeMessage) -> Self {
        Attribute {
            name: m.name,
            dtype: m.dtype,
            space: m.space,
            data: m.data,
            file: None,
        }
    }
}

impl Attribute {
    /// `m` as read from `file`.
    fn in_file(m: AttributeMessage, file: &File) -> Attribute {
        Attribute {
            file: Some(file.clone()),
            ..m.into()
        }
    }
}

fn decode(file: &File, body: &[u8], at: u64) -> Result<Attribute> {
    let lookup = |mtype: u16, r: &SharedRef| file.resolve_shared(mtype, r);
    let m = AttributeMessage::decode(
        &mut Cursor::new(body, at, "attribute message"),
        file.sizes(),
        &lookup,
    )?;
    Ok(Attribute::in_file(m, file))
}

fn info(file: &File, h: &ObjectHeader) -> Result<Option<AttributeInfo>> {
    match h.first(types::ATTRIBUTE_INFO) {
        None => Ok(None),
        Some(m) => {
            let body = file.message_body(m)?;
            Ok(Some(AttributeInfo::decode(
                &mut Cursor::new(&body, m.offset, "attribute info message"),
                file.sizes(),
            )?))
        }
    }
}

/// How an object keeps its attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrStorage {
    /// Attribute messages kept in the object header itself (no attribute info message, or one
    /// without a fractal heap).
    Compact,
    /// Attributes kept in a fractal heap indexed by v2 B-trees, as named by the attribute info
    /// message.
    Dense,
}

impl AttrStorage {
    /// `"compact"` or `"dense"`.
    pub fn name(self) -> &'static str {
        match self {
            AttrStorage::Compact => "compact",
            AttrStorage::Dense => "dense",
        }
    }
}

/// How the object stores its attributes.
pub fn storage(file: &File, h: &ObjectHeader) -> AttrStorage {
    match info(file, h) {
        Ok(Some(i)) if i.heap_address.is_some() => AttrStorage::Dense,
        _ => AttrStorage::Compact,
    }
}

/// Every attribute of the object, sorted by name.
pub fn read_all(file: &File, h: &ObjectHeader) -> Result<Vec<Attribute>> {
    let mut out = Vec::new();
    for m in h.all(types::ATTRIBUTE) {
        let body = file.message_body(m)?;
        out.push(decode(file, &body, m.offset)?);
    }
    if let Some(i) = info(file, h)? {
        out.extend(dense(file, &i)?);
    }
    out.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    file.source().check()?;
    Ok(out)
}

/// Every attribute of the object, each decoded on its own: one malformed
/// attribute gives one `Err` entry instead of failing the whole list. Sorted by
/// name (errors last).
pub fn read_each(file: &File, h: &ObjectHeader) -> Vec<Result<Attribute>> {
    let mut out: Vec<Result<Attribute>> = h
        .all(types::ATTRIBUTE)
        .map(|m| {
            file.message_body(m)
                .and_then(|b| decode(file, &b, m.offset))
        })
        .collect();
    match info(file, h) {
        Ok(Some(i)) => match dense(file, &i) {
            Ok(v) => out.extend(v.into_iter().map(Ok)),
            Err(e) => out.push(Err(e)),
        },
        Ok(None) => {}
        Err(e) => out.push(Err(e)),
    }
    out.sort_by(|a, b| match (a, b) {
        (Ok(a), Ok(b)) => a.name.as_bytes().cmp(b.name.as_bytes()),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => std::cmp::Ordering::Equal,
    });
    out
}

/// The attributes kept in dense storage.
fn dense(file: &File, info: &AttributeInfo) -> Result<Vec<Attribute>> {
    let (Some(heap_addr), Some(index)) = (info.heap_address, info.name_index) else {
        return Ok(Vec::new());
    };
    let src = file.source();
    let sizes = file.sizes();
    let heap = FractalHeap::open(src, sizes, heap_addr)?;
    let tree = BTreeV2::open(src, sizes, index)?;
    let mut out = Vec::new();
    tree.for_each_record(src, sizes, &mut |rec| {
        let mut c = Cursor::new(rec, index, "attribute name record");
        let id: [u8; 8] = c.array()?;
        let flags = c.u8()?;
        let body = if flags & 0x02 != 0 {
            file.resolve_shared(types::ATTRIBUTE, &SharedRef::Heap(id))?
        } else {
            heap.object(src, sizes, &id)?
        };
        out.push(decode(file, &body, heap_addr)?);
        Ok(())
    })?;
    Ok(out)
}

/// An attribute with what a faithful copy needs besides its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttributeEntry {
    /// The attribute itself: name, datatype, dataspace and value.
    pub attribute: Attribute,
    /// Creation order (when the object tracks it).
    pub creation_order: Option<u64>,
    /// Header address of the committed datatype the attribute uses.
    pub committed_type: Option<u64>,
}

fn decode_entry(file: &File, body: &[u8], at: u64, order: Option<u64>) -> Result<AttributeEntry> {
    let committed = std::cell::Cell::new(None);
    let lookup = |mtype: u16, r: &SharedRef| {
        if let (types::DATATYPE, SharedRef::ObjectHeader(a)) = (mtype, r) {
            committed.set(Some(*a));
        }
        file.resolve_shared(mtype, r)
    };
    let m = AttributeMessage::decode(
        &mut Cursor::new(body, at, "attribute message"),
        file.sizes(),
        &lookup,
    )?;
    Ok(AttributeEntry {
        attribute: Attribute::in_file(m, file),
        creation_order: order,
        committed_type: committed.get(),
    })
}

/// Every attribute of the object with its creation order and committed
/// datatype, in creation order when the object tracks it (name order for
/// attributes without one), else by name: the order libhdf5 lists them in.
pub fn read_entries(file: &File, h: &ObjectHeader) -> Result<Vec<AttributeEntry>> {
    let mut out = Vec::new();
    for m in h.all(types::ATTRIBUTE) {
        let body = file.message_body(m)?;
        out.push(decode_entry(
            file,
            &body,
            m.offset,
            m.creation_order.map(u64::from),
        )?);
    }
    let info = info(file, h)?;
    if let Some(i) = &info {
        if let (Some(heap_addr), Some(index)) = (i.heap_address, i.name_index) {
            let src = file.source();
            let sizes = file.sizes();
            let heap = FractalHeap::open(src, sizes, heap_addr)?;
            let tree = BTreeV2::open(src, sizes, index)?;
            tree.for_each_record(src, sizes, &mut |rec| {
                let mut c = Cursor::new(rec, index, "attribute name record");
                let id: [u8; 8] = c.array()?;
                let flags = c.u8()?;
                let order = c.u32()?;
                let body = if flags & 0x02 != 0 {
                    file.resolve_shared(types::ATTRIBUTE, &SharedRef::Heap(id))?
                } else {
                    heap.object(src, sizes, &id)?
                };
                out.push(decode_entry(
                    file,
                    &body,
                    heap_addr,
                    Some(u64::from(order)),
                )?);
                Ok(())
            })?;
        }
    }
    let tracked = info.is_some_and(|i| i.max_creation_order.is_some());
    if tracked {
        out.sort_by(|a, b| {
            (
                a.creation_order.unwrap_or(u64::MAX),
                a.attribute.name.as_bytes(),
            )
                .cmp(&(
                    b.creation_order.unwrap_or(u64::MAX),
                    b.attribute.name.as_bytes(),
                ))
        });
    } else {
        out.sort_by(|a, b| a.attribute.name.as_bytes().cmp(b.attribute.name.as_bytes()));
    }
    Ok(out)
}

/// The attribute named `name`.
pub fn find(file: &File, h: &ObjectHeader, name: &str) -> Result<Attribute> {
    read_all(file, h)?
        .into_iter()
        .find(|a| a.name == name)
        .ok_or_else(|| Error::NotFound(format!("attribute {name}")))
}
