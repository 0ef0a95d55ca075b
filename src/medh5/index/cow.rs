//! The copy-on-write of an index amend (spec digest `shared/spec/medh5.md`
//! §8): every member of the source sample is rebuilt in a [`FileWriter`]
//! (chunked datasets as their stored chunks, never decoded) except `/meta`
//! and the `/index` entries about to be rebuilt; stored digests are kept and
//! only datasets lacking one are stamped (`commit(digests=False)`). Then
//! [`finish_root`] writes `/meta`, the root attributes in the reference's
//! order and the recomputed `content_id` — shared with `fix`.
//!
//! A library `Amend` that can replace members supersedes the copy half of
//! this module; [`super::write::write_entry`] is written against any writer.

use std::collections::HashSet;

use crate::filters::ids;
use crate::hdf5fmt::chunk_index;
use crate::hdf5fmt::dataset::Dataset;
use crate::hdf5fmt::datatype::CharSet;
use crate::hdf5fmt::file::{File, Object};
use crate::hdf5fmt::group::Group;
use crate::hdf5fmt::messages::link::Link;
use crate::hdf5fmt::write::{
    vlen_string_type, AttrData, AttrValue, DatasetData, DatasetSpec, FileWriter, GroupId,
};
use crate::medh5::create::now_utc;
use crate::medh5::error::{Error, Result};
use crate::medh5::fix::copy::{attr_value, space_of, utf8};
use crate::medh5::integrity::{
    canonical_attrs, covered_names, is_stamped_path, ContentIdInput, DigestAlgo, ROOT_COVERED,
};
use crate::medh5::sample::attrs_json;
use crate::medh5::verify::compute_digest;

/// Most objects one copy visits.
const MAX_OBJECTS: usize = 1 << 20;
/// Groups whose members carry `content_id` attribute lines.
const ATTESTED: [&str; 4] = ["grids", "images", "annotations", "transforms"];

/// What the copy produced.
#[derive(Debug, Default)]
pub struct Copied {
    /// `(path, digest)` of every dataset carrying a digest in the new file
    /// (first paths, `meta` and `index/**` excluded).
    pub digests: Vec<(String, String)>,
    /// The new file's `/index` group, when the source had one.
    pub index: Option<GroupId>,
    /// Every dataset uses only HDF5's built-in filters.
    pub builtin_filters_only: bool,
}

struct Copier<'a> {
    src: &'a File,
    algo: DigestAlgo,
    skip: &'a HashSet<String>,
    out: Copied,
    seen: HashSet<u64>,
    objects: usize,
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

const BUILTIN: [u32; 6] = [
    ids::DEFLATE,
    ids::SHUFFLE,
    ids::FLETCHER32,
    ids::SZIP,
    ids::NBIT,
    ids::SCALEOFFSET,
];

/// Copy the sample except `/meta` and the index entries named in `skip`
/// (`index/<name>` paths); digests kept, missing ones stamped in `algo`.
pub fn copy_except(
    src: &File,
    w: &mut FileWriter,
    algo: DigestAlgo,
    skip: &HashSet<String>,
) -> Result<Copied> {
    let root = src.root()?;
    let mut c = Copier {
        src,
        algo,
        skip,
        out: Copied {
            builtin_filters_only: true,
            ..Copied::default()
        },
        seen: HashSet::new(),
        objects: 0,
    };
    c.seen.insert(root.address());
    let dst = w.root();
    c.group(w, &root, "", dst)?;
    Ok(c.out)
}

impl Copier<'_> {
    fn attrs(
        &self,
        w: &mut FileWriter,
        attrs: Vec<crate::hdf5fmt::attribute::Attribute>,
        dst: impl Into<crate::hdf5fmt::write::ObjectId> + Copy,
    ) -> Result<()> {
        for a in attrs {
            w.set_attr(dst, &a.name, attr_value(self.src, &a)?)?;
        }
        Ok(())
    }

    fn group(&mut self, w: &mut FileWriter, g: &Group, prefix: &str, dst: GroupId) -> Result<()> {
        let mut links = g.links()?;
        links.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        for (name, link) in links {
            let path = join(prefix, &name);
            if path == "meta" || self.skip.contains(&path) {
                continue;
            }
            let addr = match link {
                Link::Hard(a) => a,
                Link::Soft(target) => {
                    w.soft_link(dst, &name, &target)?;
                    continue;
                }
                // as `fix`: links the writer cannot express are dropped
                _ => continue,
            };
            self.objects += 1;
            if self.objects > MAX_OBJECTS {
                return Err(Error::Hdf5(crate::error::Error::Limit {
                    structure: "medh5 index",
                    offset: addr,
                    what: "objects",
                    value: self.objects as u64,
                    limit: MAX_OBJECTS as u64,
                }));
            }
            let first = self.seen.insert(addr);
            match self.src.object_at(addr, format!("/{path}"))? {
                Object::Group(sub) => {
                    if !first {
                        continue; // a group reached twice: an ancestor cycle or alias
                    }
                    let sd = w.create_group(dst, &name)?;
                    if path == "index" {
                        self.out.index = Some(sd);
                    }
                    self.attrs(w, sub.attributes()?, sd)?;
                    self.group(w, &sub, &path, sd)?;
                }
                Object::Dataset(ds) => self.dataset(w, &ds, &path, dst, &name, first)?,
                Object::NamedDatatype(t) => {
                    let id = w.commit_datatype(dst, &name, t.dtype.clone())?;
                    self.attrs(w, t.attributes()?, id)?;
                }
            }
        }
        Ok(())
    }

    fn dataset(
        &mut self,
        w: &mut FileWriter,
        ds: &Dataset,
        path: &str,
        parent: GroupId,
        name: &str,
        first: bool,
    ) -> Result<()> {
        if ds.layout_kind() == "virtual" {
            return Err(Error::invalid(format!(
                "{}: virtual datasets cannot be rewritten",
                ds.path()
            )));
        }
        if ds.filters().iter().any(|f| !BUILTIN.contains(&f.id)) {
            self.out.builtin_filters_only = false;
        }
        let mut spec = DatasetSpec {
            dtype: ds.dtype().clone(),
            shape: space_of(ds.dataspace()),
            layout: crate::hdf5fmt::write::Layout::Contiguous,
            fill_value: None,
        };
        let fixed = !ds.dtype().has_vlen_or_ref();
        if let (true, Some(f)) = (fixed, ds.fill_value().bytes()) {
            if f.len() as u64 == ds.dtype().size() {
                spec.fill_value = Some(f.to_vec());
            }
        }
        let rank = ds.shape().len();
        let chunk = ds.chunk_dims().map(|c| c.get(..rank).unwrap_or(c).to_vec());
        let id = match (&chunk, fixed) {
            (Some(chunk), true) => {
                spec = spec.chunked(chunk, ds.filters().to_vec());
                let id = w.create_dataset(parent, name, spec, DatasetData::None)?;
                if let Some(params) = ds.chunk_params() {
                    for r in chunk_index::chunks(self.src.source(), self.src.sizes(), &params)? {
                        let coords: Vec<u64> = r
                            .offset
                            .iter()
                            .zip(chunk)
                            .map(|(o, c)| o / (*c).max(1))
                            .collect();
                        let beyond = coords
                            .iter()
                            .zip(ds.shape().iter().zip(chunk))
                            .any(|(&s, (&d, &c))| s >= d.div_ceil(c.max(1)));
                        if !beyond {
                            let bytes =
                                chunk_index::stored_bytes(self.src.source(), &r)?.into_owned();
                            w.write_raw_chunk(id, &coords, bytes, r.filter_mask)?;
                        }
                    }
                }
                id
            }
            _ => {
                match &chunk {
                    Some(c) => spec = spec.chunked(c, ds.filters().to_vec()),
                    None if ds.layout_kind() == "compact" => spec = spec.compact(),
                    None => {}
                }
                let raw = ds.read_all_raw()?;
                let data = match ds.dtype() {
                    dt if dt.has_vlen_or_ref() => {
                        // vlen payloads go through the same path as attributes
                        let v = attr_value(
                            self.src,
                            &crate::hdf5fmt::attribute::Attribute {
                                name: String::new(),
                                dtype: dt.clone(),
                                space: ds.dataspace().clone(),
                                data: raw,
                            },
                        )?;
                        spec.dtype = v.dtype;
                        match v.data {
                            AttrData::VarStrings(s) => DatasetData::VarStrings(s),
                            AttrData::VarSequences(s) => DatasetData::VarSequences(s),
                            AttrData::Raw(r) => DatasetData::Raw(r),
                            AttrData::Elements(e) => DatasetData::Elements(e),
                        }
                    }
                    _ => DatasetData::Raw(raw),
                };
                w.create_dataset(parent, name, spec, data)?
            }
        };
        self.attrs(w, ds.attributes()?, id)?;
        if !first || !is_stamped_path(path) {
            return Ok(());
        }
        let stored = match ds.attribute("digest") {
            Ok(a) => match attr_value(self.src, &a)?.data {
                AttrData::VarStrings(s) => s.into_iter().next(),
                _ => None,
            },
            Err(_) => None,
        };
        match stored {
            Some(d) => self.out.digests.push((path.to_string(), d)),
            None => {
                if let Some(d) = compute_digest(self.src, ds, path, self.algo)? {
                    w.set_attr(id, "digest", utf8(&d))?;
                    self.out.digests.push((path.to_string(), d));
                }
            }
        }
        Ok(())
    }
}

/// The closing half of an amend: `/meta` (the `meta` text), root attributes
/// (managed ones in the reference's order with `profiles` and `generator`
/// as given, `created` now, extensions copied raw, `content_id` last) and the
/// `content_id` over `digests`, `meta` and the source's covered attributes
/// (root profiles replaced). Returns the new `content_id`.
pub fn finish_root(
    src: &File,
    w: &mut FileWriter,
    meta: &str,
    algo: DigestAlgo,
    digests: &[(String, String)],
    profiles: Option<&[String]>,
    generator: &str,
) -> Result<String> {
    let root = w.root();
    w.create_dataset(
        root,
        "meta",
        DatasetSpec::scalar(vlen_string_type(CharSet::Utf8)),
        DatasetData::VarStrings(vec![meta.to_string()]),
    )?;
    let src_root = src.root()?.attributes()?;
    let find = |n: &str| src_root.iter().find(|a| a.name == n);
    for name in ["medh5_version", "medh5_kind"] {
        if let Some(a) = find(name) {
            w.set_attr(root, name, attr_value(src, a)?)?;
        }
    }
    match (profiles, find("medh5_profiles")) {
        (Some(p), _) => w.set_attr(root, "medh5_profiles", AttrValue::strings(p, CharSet::Utf8))?,
        (None, Some(a)) => w.set_attr(root, "medh5_profiles", attr_value(src, a)?)?,
        (None, None) => {}
    }
    w.set_attr(root, "created", utf8(&now_utc()))?;
    w.set_attr(root, "generator", utf8(generator))?;
    w.set_attr(root, "digest_algo", utf8(algo.name()))?;
    const MANAGED: [&str; 7] = [
        "medh5_version",
        "medh5_kind",
        "medh5_profiles",
        "created",
        "generator",
        "digest_algo",
        "content_id",
    ];
    for a in &src_root {
        if !MANAGED.contains(&a.name.as_str()) {
            w.set_attr(root, &a.name, attr_value(src, a)?)?;
        }
    }
    let mut root_json = attrs_json(src, &src_root)?;
    if let Some(p) = profiles {
        root_json.retain(|(n, _)| n != "medh5_profiles");
        root_json.push((
            "medh5_profiles".to_string(),
            crate::medh5::canonical_json::Json::Array(
                p.iter()
                    .map(|s| crate::medh5::canonical_json::Json::Str(s.clone()))
                    .collect(),
            ),
        ));
    }
    let mut attribute_objects = vec![(String::new(), canonical_attrs(ROOT_COVERED, &root_json))];
    for top in ATTESTED {
        let Ok(Object::Group(g)) = src.object(top) else {
            continue;
        };
        let mut names: Vec<String> = g.links()?.into_iter().map(|(n, _)| n).collect();
        names.sort();
        for n in names {
            let member = format!("{top}/{n}");
            let Some(covered) = covered_names(&member) else {
                continue;
            };
            let Ok(obj) = src.object(&member) else {
                continue;
            };
            let attrs = attrs_json(src, &obj.attributes()?)?;
            attribute_objects.push((member, canonical_attrs(covered, &attrs)));
        }
    }
    let content_id = ContentIdInput {
        algo,
        datasets: digests.to_vec(),
        meta: meta.as_bytes().to_vec(),
        attribute_objects,
    }
    .content_id();
    w.set_attr(root, "content_id", utf8(&content_id))?;
    Ok(content_id)
}
