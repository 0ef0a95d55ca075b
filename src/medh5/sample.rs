//! Reading a medh5 sample (`shared/spec/medh5.md` §2, §3, §5.5): root
//! attributes, the `/meta` document, the members of `grids`, `images` and
//! `annotations`, attribute values decoded to [`Json`], and image or labelmap
//! reads (whole or as a patch) straight into the caller's buffer.

use std::path::Path;

use super::canonical_json::Json;
use super::document::SampleDocument;
pub use super::labelmap::LabelVolume;
use super::model::half::f16_to_f64;
use purehdf::low_level::attribute::Attribute;
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::{ByteOrder, Datatype, StringPad};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::group::Group;
use purehdf::low_level::messages::link::Link;
use purehdf::low_level::selection::Selection;
use crate::error::{Error, Result};

/// Cap on the number of elements of one attribute decoded to JSON.
const MAX_ATTR_ELEMENTS: u64 = 1 << 20;

/// An open sample file.
#[derive(Debug)]
pub struct SampleFile {
    /// The underlying HDF5 file, for reads this type does not wrap; paths
    /// resolve from the sample root.
    pub file: File,
}

impl SampleFile {
    /// Open the file at `path`. The only medh5 check made here is that the
    /// file holds its own bytes (§2, [`super::self_contained`]).
    ///
    /// # Errors
    ///
    /// An HDF5-layer error ([`Error::Hdf5`]) when the file cannot be read
    /// or is not HDF5; [`Error::Refused`] when it has an external link,
    /// external raw-data storage or a virtual dataset.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        Ok(SampleFile {
            file: super::self_contained::open(path, &path.display().to_string())?,
        })
    }

    /// Wrap an already open file.
    pub fn from_file(file: File) -> Self {
        SampleFile { file }
    }

    /// The root attributes as `(name, JSON value)`.
    pub fn root_attrs(&self) -> Result<Vec<(String, Json)>> {
        attrs_json(&self.file, &self.file.root()?.attributes()?)
    }

    /// The stored `/meta` string bytes.
    ///
    /// # Errors
    ///
    /// E004 when `/meta` is not a scalar string dataset; an HDF5-layer error
    /// when it is missing or unreadable.
    pub fn meta_bytes(&self) -> Result<Vec<u8>> {
        match self.file.object("meta")? {
            Object::Dataset(ds) => read_scalar_string(&self.file, &ds),
            _ => Err(Error::Code {
                code: "E004".into(),
                message: "/meta is not a dataset".into(),
            }),
        }
    }

    /// The parsed sample document.
    ///
    /// # Errors
    ///
    /// As [`meta_bytes`](Self::meta_bytes), E004 when the bytes are not UTF-8,
    /// then as [`SampleDocument::from_meta`].
    pub fn document(&self) -> Result<SampleDocument> {
        let bytes = self.meta_bytes()?;
        let text = std::str::from_utf8(&bytes).map_err(|_| Error::Code {
            code: "E004".into(),
            message: "/meta is not UTF-8".into(),
        })?;
        SampleDocument::from_meta(text)
    }

    /// Names of the members of top-level group `group` (`grids`, `images`,
    /// `annotations`, `transforms`), in byte order: its hard links, and its
    /// soft links that name an object; empty when the group is absent.
    pub fn members(&self, group: &str) -> Result<Vec<String>> {
        let Ok(Object::Group(g)) = self.file.object(group) else {
            return Ok(Vec::new());
        };
        let mut names: Vec<String> = g
            .links()?
            .into_iter()
            .filter(|(n, l)| match l {
                Link::Hard(_) => true,
                // a soft link is a member when it names an object
                Link::Soft(_) => self.file.object(&format!("{group}/{n}")).is_ok(),
                _ => false,
            })
            .map(|(n, _)| n)
            .collect();
        names.sort();
        Ok(names)
    }

    /// [`SampleFile::members`] of `group` that are groups themselves (a
    /// grid, annotation or transform is a group; anything else standing
    /// there is the validator's to report, not a member to describe).
    pub fn group_members(&self, group: &str) -> Result<Vec<String>> {
        let mut names = self.members(group)?;
        names.retain(|n| {
            matches!(
                self.file.object(&format!("{group}/{n}")),
                Ok(Object::Group(_))
            )
        });
        Ok(names)
    }

    /// The attributes of the object at `path` as `(name, JSON value)`.
    pub fn object_attrs(&self, path: &str) -> Result<Vec<(String, Json)>> {
        attrs_json(&self.file, &self.file.object(path)?.attributes()?)
    }

    /// The image dataset `images/<id>` (its level-0 data when it is a group).
    pub fn image(&self, id: &str) -> Result<Dataset> {
        dataset_or_data(&self.file, &format!("images/{id}"))
    }

    /// Annotation `ann_id` decoded to one label volume as the reference's
    /// `labelmap()` returns it (uint16; [`LabelVolume::to_u8`] for uint8),
    /// for the `labelmap`, `layers`, `bitmask`, `probmap`, `instances` and
    /// `mask` encodings (see [`super::labelmap`]).
    ///
    /// # Errors
    ///
    /// E410 when the annotation's `kind`, datasets or attributes are missing
    /// or malformed; an invalid-input error when the volume exceeds the
    /// decode limit; an HDF5-layer error when the annotation is absent or a
    /// read fails.
    pub fn labelmap(&self, ann_id: &str) -> Result<LabelVolume> {
        super::labelmap::decode(&self.file, ann_id, None, &[])
    }

    /// [`SampleFile::labelmap`] over the spatial box `start .. start + count`.
    pub fn labelmap_patch(
        &self,
        ann_id: &str,
        start: &[u64],
        count: &[u64],
    ) -> Result<LabelVolume> {
        super::labelmap::decode(&self.file, ann_id, Some((start, count)), &[])
    }

    /// [`SampleFile::labelmap`] with overlap ties broken by `priority`
    /// (highest precedence first; classes it omits are painted first).
    pub fn labelmap_with_priority(
        &self,
        ann_id: &str,
        roi: Option<(&[u64], &[u64])>,
        priority: &[u16],
    ) -> Result<LabelVolume> {
        super::labelmap::decode(&self.file, ann_id, roi, priority)
    }

    /// The voxel dataset of annotation `id` (`annotations/<id>/data`).
    pub fn annotation_data(&self, id: &str) -> Result<Dataset> {
        dataset_or_data(&self.file, &format!("annotations/{id}"))
    }
}

/// The dataset at `path`, or `path/data` / `path/0` when `path` is a group.
fn dataset_or_data(file: &File, path: &str) -> Result<Dataset> {
    match file.object(path)? {
        Object::Dataset(ds) => Ok(*ds),
        Object::Group(g) => Ok(g.dataset("data").or_else(|_| g.dataset("0"))?),
        Object::NamedDatatype(_) => Err(Error::not_found(format!("{path} is not a dataset"))),
    }
}

/// Read the box `start .. start + count` of `ds` (whole dataset when `start`
/// is `None`) into `out`, which must hold exactly the selected elements in the
/// stored element size; elements keep the file's byte order.
pub fn read_patch(
    ds: &Dataset,
    start: Option<&[u64]>,
    count: &[u64],
    out: &mut [u8],
) -> Result<()> {
    let sel = match start {
        None => Selection::All,
        Some(s) => Selection::Hyperslab {
            start: s.to_vec(),
            count: count.to_vec(),
        },
    };
    Ok(ds.read_raw(&sel, out)?)
}

/// [`read_patch`] into a new buffer of exactly the selection's size (see
/// [`Dataset::read_raw_vec`]: chunked data is decoded into memory that is not
/// zeroed first).
pub fn read_patch_vec(ds: &Dataset, start: Option<&[u64]>, count: &[u64]) -> Result<Vec<u8>> {
    let sel = match start {
        None => Selection::All,
        Some(s) => Selection::Hyperslab {
            start: s.to_vec(),
            count: count.to_vec(),
        },
    };
    Ok(ds.read_raw_vec(&sel)?)
}

/// Read a scalar (or one-element) string dataset's bytes.
pub fn read_scalar_string(file: &File, ds: &Dataset) -> Result<Vec<u8>> {
    let size = usize::try_from(ds.dtype().size()).map_err(|_| too_large(ds.path()))?;
    if ds.num_elements() != 1 {
        return Err(Error::Code {
            code: "E004".into(),
            message: format!("{} is not a scalar string", ds.path()),
        });
    }
    let mut buf = vec![0u8; size];
    ds.read_raw(&Selection::All, &mut buf)?;
    string_element(file, ds.dtype(), &buf)
}

fn too_large(path: &str) -> Error {
    Error::invalid(format!("{path}: too large"))
}

/// The bytes of one string element (vlen: from the global heap; fixed: with
/// its padding removed).
pub fn string_element(file: &File, dt: &Datatype, el: &[u8]) -> Result<Vec<u8>> {
    match dt {
        Datatype::VarString { .. } => Ok(file.vlen_bytes(el)?),
        Datatype::String { pad, .. } => Ok(strip_padding(el, *pad).to_vec()),
        _ => Err(Error::Code {
            code: "E004".into(),
            message: "not a string type".into(),
        }),
    }
}

/// A fixed-length string element without its padding.
pub fn strip_padding(el: &[u8], pad: StringPad) -> &[u8] {
    match pad {
        StringPad::NullTerm => el.split(|&b| b == 0).next().unwrap_or(&[]),
        StringPad::NullPad => {
            let end = el.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
            el.get(..end).unwrap_or(&[])
        }
        StringPad::SpacePad => {
            let end = el.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
            el.get(..end).unwrap_or(&[])
        }
    }
}

/// Decode every attribute to `(name, JSON)`.
pub fn attrs_json(file: &File, attrs: &[Attribute]) -> Result<Vec<(String, Json)>> {
    attrs
        .iter()
        .map(|a| Ok((a.name.clone(), attr_json(file, a)?)))
        .collect()
}

/// An attribute value as the JSON of §5.5: strings (string arrays flatten),
/// bools, integers, floats widened to f64, nested by shape.
pub fn attr_json(file: &File, a: &Attribute) -> Result<Json> {
    let n = a.num_elements();
    if n > MAX_ATTR_ELEMENTS {
        return Err(too_large(&a.name));
    }
    let size = usize::try_from(a.dtype.size()).map_err(|_| too_large(&a.name))?;
    if size == 0 {
        return Ok(Json::Str(describe_type(&a.dtype)));
    }
    let elems: Vec<&[u8]> = a.data.chunks_exact(size).take(n as usize).collect();
    if (elems.len() as u64) < n {
        return Err(Error::Code {
            code: "E004".into(),
            message: format!("attribute {}: value shorter than its dataspace", a.name),
        });
    }
    let shape = a.shape();
    match &a.dtype {
        Datatype::String { .. } | Datatype::VarString { .. } => {
            let strs = elems
                .iter()
                .map(|el| {
                    let b = string_element(file, &a.dtype, el)?;
                    Ok(Json::Str(String::from_utf8_lossy(&b).into_owned()))
                })
                .collect::<Result<Vec<Json>>>()?;
            if shape.is_empty() {
                Ok(strs.into_iter().next().unwrap_or(Json::Null))
            } else {
                Ok(Json::Array(strs))
            }
        }
        dt => {
            let vals = elems
                .iter()
                .map(|el| scalar_json(dt, el))
                .collect::<Option<Vec<Json>>>();
            match vals {
                Some(v) => Ok(super::attribute::nest(v.into_iter(), shape)),
                None => Ok(Json::Str(describe_type(dt))),
            }
        }
    }
}

/// One numeric/bool element as JSON, `None` for types without a number form.
pub fn scalar_json(dt: &Datatype, el: &[u8]) -> Option<Json> {
    match dt {
        Datatype::Integer {
            size,
            order,
            signed,
            ..
        } => {
            let v = int_value(el, *size, *order, *signed)?;
            Some(match v {
                IntValue::S(i) => Json::Int(i),
                IntValue::U(u) => match i64::try_from(u) {
                    Ok(i) => Json::Int(i),
                    Err(_) => Json::UInt(u),
                },
            })
        }
        Datatype::Float { size, order, .. } => float_value(el, *size, *order).map(Json::Float),
        Datatype::Enum { base, members } => {
            if super::integrity::is_bool_enum(base, members) {
                Some(Json::Bool(el.first().copied()? != 0))
            } else {
                scalar_json(base, el)
            }
        }
        _ => None,
    }
}

enum IntValue {
    S(i64),
    U(u64),
}

fn le_bytes(el: &[u8], size: u32, order: ByteOrder) -> Option<[u8; 8]> {
    let n = size as usize;
    if n == 0 || n > 8 {
        return None;
    }
    let src = el.get(..n)?;
    let mut b = [0u8; 8];
    for (i, &v) in src.iter().enumerate() {
        let j = if order == ByteOrder::Big {
            n - 1 - i
        } else {
            i
        };
        *b.get_mut(j)? = v;
    }
    Some(b)
}

fn int_value(el: &[u8], size: u32, order: ByteOrder, signed: bool) -> Option<IntValue> {
    let b = le_bytes(el, size, order)?;
    let raw = u64::from_le_bytes(b);
    let bits = size * 8;
    if signed {
        let shift = 64 - bits;
        Some(IntValue::S(((raw << shift) as i64) >> shift))
    } else {
        Some(IntValue::U(raw))
    }
}

/// A float element (2, 4 or 8 bytes) widened to f64.
pub fn float_value(el: &[u8], size: u32, order: ByteOrder) -> Option<f64> {
    let b = le_bytes(el, size, order)?;
    match size {
        2 => Some(f16_to_f64(u16::from_le_bytes([b[0], b[1]]))),
        4 => Some(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        8 => Some(f64::from_le_bytes(b)),
        _ => None,
    }
}

fn describe_type(dt: &Datatype) -> String {
    format!("<unsupported type of {} bytes>", dt.size())
}

/// The root group of a file (convenience for walkers).
pub fn root(file: &File) -> Result<Group> {
    Ok(file.root()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_and_float_decoding() {
        let dt = Datatype::int(2, true);
        assert_eq!(
            scalar_json(&dt, &(-3i16).to_le_bytes()),
            Some(Json::Int(-3))
        );
        let dt = Datatype::int(8, false);
        assert_eq!(
            scalar_json(&dt, &u64::MAX.to_le_bytes()),
            Some(Json::UInt(u64::MAX))
        );
        let dt = Datatype::float(4);
        assert_eq!(
            scalar_json(&dt, &0.8f32.to_le_bytes()),
            Some(Json::Float(f64::from(0.8f32)))
        );
        assert_eq!(float_value(&[0x00, 0x3c], 2, ByteOrder::Little), Some(1.0));
        assert_eq!(float_value(&[0x3c, 0x00], 2, ByteOrder::Big), Some(1.0));
    }

    #[test]
    fn padding_is_stripped() {
        assert_eq!(strip_padding(b"ab\0\0", StringPad::NullPad), b"ab");
        assert_eq!(strip_padding(b"ab\0c", StringPad::NullTerm), b"ab");
        assert_eq!(strip_padding(b"ab  ", StringPad::SpacePad), b"ab");
    }

    #[test]
    fn reads_vector_meta_and_attrs() {
        let p = crate::test_support::medh5_vector("v1b_dense_label.medh5");
        if !p.exists() {
            return;
        }
        let s = SampleFile::open(&p).unwrap();
        let doc = s.document().unwrap();
        assert_eq!(doc.identity.sample_id, "v1b");
        assert_eq!(s.members("images").unwrap(), vec!["CT".to_string()]);
        let attrs = s.object_attrs("grids/ct").unwrap();
        let spacing = attrs.iter().find(|(n, _)| n == "spacing").unwrap();
        assert_eq!(
            spacing.1,
            Json::Array(vec![Json::Float(2.0), Json::Float(0.8), Json::Float(0.8)])
        );
        let ds = s.image("CT").unwrap();
        let mut buf = vec![0u8; 2 * 2 * 2 * 2];
        read_patch(&ds, Some(&[1, 2, 3]), &[2, 2, 2], &mut buf).unwrap();
        // value z*256 + y*16 + x
        assert_eq!(i16::from_le_bytes([buf[0], buf[1]]), 256 + 32 + 3);
    }

    #[test]
    fn chunked_patch_equals_slice_of_whole() {
        let p = crate::test_support::medh5_vector("v2_balanced.medh5");
        if !p.exists() {
            return;
        }
        let s = SampleFile::open(&p).unwrap();
        let ds = s.image("CT").unwrap();
        assert_eq!(ds.shape(), &[32, 64, 64]);
        let mut whole = vec![0u8; 32 * 64 * 64 * 2];
        read_patch(&ds, None, &[], &mut whole).unwrap();
        let (start, count) = ([3u64, 10, 20], [6u64, 20, 30]);
        let mut patch = vec![0u8; 6 * 20 * 30 * 2];
        read_patch(&ds, Some(&start), &count, &mut patch).unwrap();
        let mut expect = Vec::new();
        for z in 3..9usize {
            for y in 10..30usize {
                let at = ((z * 64 + y) * 64 + 20) * 2;
                expect.extend_from_slice(&whole[at..at + 60]);
            }
        }
        assert_eq!(patch, expect);
        // A patch reaching outside the image is refused.
        let mut small = vec![0u8; 2 * 2 * 2 * 2];
        assert!(read_patch(&ds, Some(&[31, 0, 0]), &[2, 2, 2], &mut small).is_err());
        let lab = s.annotation_data("organs").unwrap();
        assert_eq!(lab.shape(), &[32, 64, 64]);
    }
}
