//! Reading a medh5 sample (`docs/medh5-format.md` §2, §3, §5.5): root
//! attributes, the `/meta` document, the members of `grids`, `images` and
//! `annotations`, attribute values decoded to [`Json`], and image or labelmap
//! reads (whole or as a patch) straight into the caller's buffer.

use std::path::Path;

use super::canonical_json::Json;
use super::document::SampleDocument;
pub use super::labelmap::LabelVolume;
pub use super::values::{
    attr_json, attrs_json, float_value, read_scalar_string, scalar_json, string_element,
    strip_padding,
};
use crate::error::{Error, Result};
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::group::Group;
use purehdf::low_level::messages::link::Link;
use purehdf::low_level::selection::Selection;

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

    /// Open a sample held in memory (the bytes of a `.medh5` file), refused
    /// like [`SampleFile::open`] unless it is self-contained.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        let file = File::from_bytes(bytes)?;
        super::self_contained::check(&file, "memory")?;
        Ok(SampleFile { file })
    }

    /// The `content_id` the sample declares (a root attribute, `sha256:…`),
    /// or `None` when it declares none. [`SampleFile::verify`] checks it
    /// against the stored digests.
    pub fn content_id(&self) -> Result<Option<String>> {
        let attrs = self.root_attrs()?;
        Ok(attrs
            .into_iter()
            .find(|(k, _)| k == "content_id")
            .and_then(|(_, v)| match v {
                super::canonical_json::Json::Str(s) => Some(s),
                _ => None,
            }))
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

/// The root group of a file (convenience for walkers).
pub fn root(file: &File) -> Result<Group> {
    Ok(file.root()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use purehdf::low_level::datatype::{ByteOrder, Datatype, StringPad};

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
