//! Amend (`docs/medh5-format.md` §8, §5.3, §5.4, §6.7): open a sample
//! copy-on-write, add, replace or remove objects, and commit a new file
//! atomically (temporary beside the target, the target's mode bits, a symlink
//! followed, rename). Everything not touched — unknown groups, datasets and
//! attributes, committed and non-native types, nested groups — is copied
//! through the one graph copier (`hdf5fmt::copy`) with its stored
//! types, chunked datasets as their raw stored chunks and filter masks. Root
//! attributes other than the seven managed ones are copied raw; `/meta` is
//! rewritten; added datasets are stamped; `content_id` is recomputed.
//!
//! Refused (typed [`Error::Code`] codes): a collection or a higher minor
//! version (E002), an unknown digest algorithm or a non-canonical digest
//! (E703), a `content_id` that does not recompute (E702), and at commit a
//! dataset whose bytes no longer match its digest (E701).
//!
//! For tools that amend (`index build`, `fix --rebuild-index`): besides
//! [`Amend::add_dataset`] and [`Amend::add_group`], [`Amend::with_writer`]
//! runs a step with the [`FileWriter`] itself once the copy is done (the
//! step gets the writer ids of the groups it asked for with
//! [`Amend::reserve_group`]), and [`Amend::add_profile`] /
//! [`Amend::document_mut`] change the root `medh5_profiles` and `/meta`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::attribute::AttrValue;
use super::canonical_json::Json;
use super::chunking::image_chunk_shape;
use super::integrity::{
    canonical_attrs, covered_names, dataset_digest, dtype_descr, is_stamped_path, ContentIdInput,
    DigestAlgo, ROOT_COVERED,
};
use super::model::image::Image;
use super::profiles::{is_contiguous, Profile, Role};
use super::sample::{attr_json, attrs_json, read_scalar_string};
use super::validate::collection::is_collection;
use super::verify::{compute_content_id, verify_file};
use super::writer::to_hdf5;
use crate::error::{Error, Result};
use purehdf::low_level::copy::{copy_group_into, CopyOptions, CopyPolicy};
use purehdf::low_level::datatype::{CharSet, Datatype};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::group::Group;
use purehdf::low_level::write::{self, DatasetData, FileWriter, GroupId};
use purehdf_filters::FilterSpec;

pub mod cow;
pub use crate::stage::{keep_mode, keep_mode_from, Staged};

/// Root attributes an amend writes itself.
pub const MANAGED: [&str; 7] = [
    "medh5_version",
    "medh5_kind",
    "medh5_profiles",
    "created",
    "generator",
    "digest_algo",
    "content_id",
];
/// Groups whose members' covered attributes enter `content_id`.
const ATTESTED: [&str; 4] = ["grids", "images", "annotations", "transforms"];

fn code(c: &str, msg: String) -> Error {
    Error::Code {
        code: c.into(),
        message: msg,
    }
}

/// A dataset an amend adds.
#[derive(Clone, Debug, PartialEq)]
pub struct NewDataset {
    /// The stored element type; `data` holds `dtype.size()` bytes per element.
    pub dtype: Datatype,
    /// Empty: scalar.
    pub shape: Vec<u64>,
    /// Chunk shape and pipeline; `None`: contiguous.
    pub chunked: Option<(Vec<u64>, Vec<FilterSpec>)>,
    /// Raw little-endian element bytes, C order.
    pub data: Vec<u8>,
    /// Attributes to write, in order. A `digest` given here is ignored: the
    /// amend computes and writes it itself when the path is stamped (§5.3).
    pub attrs: Vec<(String, AttrValue)>,
}

/// A step run with the writer after the copy; returns `(sample-relative
/// path, digest)` of every stamped dataset it wrote.
pub type WriterStep =
    Box<dyn FnOnce(&mut FileWriter, &HashMap<String, GroupId>) -> Result<Vec<(String, String)>>>;

enum Addition {
    Group(String, Vec<(String, AttrValue)>),
    Dataset(String, NewDataset),
}

/// A sample opened for amending.
pub struct Amend {
    path: PathBuf,
    src: File,
    algo: DigestAlgo,
    doc: Json,
    root_attrs: Vec<(String, Json)>,
    profiles: Vec<String>,
    removed: BTreeSet<String>,
    additions: Vec<Addition>,
    reserved: BTreeSet<String>,
    steps: Vec<WriterStep>,
    mismatched: Vec<String>,
    generator: String,
}

fn norm(path: &str) -> String {
    path.trim_matches('/').to_string()
}

fn parent_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

fn name_of(path: &str) -> &str {
    path.rfind('/').map_or(path, |i| &path[i + 1..])
}

impl Amend {
    /// Open the sample at `path` (a symlink is followed at commit) and check
    /// the §8 refusals that do not wait for the commit.
    pub fn open(path: impl AsRef<Path>) -> Result<Amend> {
        let path = path.as_ref().to_path_buf();
        let src = File::open(&path)?;
        let shown = path.display().to_string();
        if is_collection(&src) {
            return Err(code(
                "E002",
                format!("{shown} is a collection; amend one of its samples after `medh5 unpack`"),
            ));
        }
        let root_attrs = attrs_json(&src, &src.root()?.attributes()?)?;
        let get = |n: &str| root_attrs.iter().find(|(k, _)| k == n).map(|(_, v)| v);
        if let super::version_gate::Verdict::NewerMinor(v) = super::version_gate::check(&src)? {
            return Err(code(
                "E002",
                format!("{shown} is medh5 {v}, newer than this implementation: not amended"),
            ));
        }
        let algo = match get("digest_algo") {
            None => DigestAlgo::default(),
            Some(Json::Str(s)) => DigestAlgo::from_name(s).ok_or_else(|| {
                code(
                    "E703",
                    format!(
                        "{shown} declares digest_algo {s:?}: its digests can be neither checked \
                         nor kept; `medh5 fix --rewrite-digests --reason ...` first"
                    ),
                )
            })?,
            Some(other) => {
                return Err(code(
                    "E703",
                    format!("{shown} declares digest_algo {}", other.to_canonical()),
                ))
            }
        };
        let v = verify_file(&src, &shown, None)?;
        if let Some(p) = v.malformed.first() {
            return Err(code(
                "E703",
                format!(
                    "{shown}: the digest of {p} is not canonical ALGO:HEX; \
                     `medh5 fix --rewrite-digests --reason ...` first"
                ),
            ));
        }
        if v.content_id_ok == Some(false) {
            return Err(code(
                "E702",
                format!(
                    "{shown}: content_id does not recompute from the file's contents; \
                     `medh5 fix --rewrite-digests --reason ...` first"
                ),
            ));
        }
        let meta = match src.object("meta")? {
            Object::Dataset(ds) => read_scalar_string(&src, &ds)?,
            _ => return Err(code("E004", format!("{shown}: /meta is not a dataset"))),
        };
        let parsed: serde_json::Value = serde_json::from_slice(&meta)
            .map_err(|e| code("E004", format!("{shown}: /meta is not JSON: {e}")))?;
        let doc = Json::from_serde(&parsed);
        let profiles = match get("medh5_profiles") {
            Some(Json::Array(a)) => a
                .iter()
                .filter_map(|j| match j {
                    Json::Str(s) => Some(s.clone()),
                    _ => None,
                })
                .collect(),
            Some(Json::Str(s)) => vec![s.clone()],
            _ => Vec::new(),
        };
        Ok(Amend {
            path,
            src,
            algo,
            doc,
            root_attrs: root_attrs.clone(),
            profiles,
            removed: BTreeSet::new(),
            additions: Vec::new(),
            reserved: BTreeSet::new(),
            steps: Vec::new(),
            mismatched: v.mismatched,
            generator: format!("purehdf {}", env!("CARGO_PKG_VERSION")),
        })
    }

    /// The source file (read-only).
    pub fn source(&self) -> &File {
        &self.src
    }

    /// The `/meta` document written at commit.
    pub fn document_mut(&mut self) -> &mut Json {
        &mut self.doc
    }

    /// Add `name` to the root `medh5_profiles` (kept in the reference's order).
    pub fn add_profile(&mut self, name: &str) {
        if !self.profiles.iter().any(|p| p == name) {
            self.profiles.push(name.to_string());
            let rank = |p: &String| {
                super::model::sample::KNOWN_PROFILES
                    .iter()
                    .position(|k| k == p)
                    .unwrap_or(usize::MAX)
            };
            self.profiles.sort_by_key(rank);
        }
    }

    /// Leave the object at sample-relative `path` (and all below it) out.
    pub fn remove(&mut self, path: &str) -> Result<()> {
        let p = norm(path);
        if p.is_empty() || p == "meta" {
            return Err(Error::invalid(format!("{path:?} cannot be removed")));
        }
        if self.src.object(&p).is_err() {
            return Err(Error::invalid(format!("{path:?} does not exist")));
        }
        self.removed.insert(p);
        Ok(())
    }

    fn exists_after(&self, p: &str) -> bool {
        let gone = self
            .removed
            .iter()
            .any(|r| p == r || p.starts_with(&format!("{r}/")));
        let added = self.additions.iter().any(|a| match a {
            Addition::Group(q, _) | Addition::Dataset(q, _) => q == p,
        });
        added || (!gone && self.src.object(p).is_ok())
    }

    /// Add a group at `path` (its parents are created as needed).
    pub fn add_group(&mut self, path: &str, attrs: Vec<(String, AttrValue)>) -> Result<()> {
        let p = self.new_path(path)?;
        self.additions.push(Addition::Group(p, attrs));
        Ok(())
    }

    /// Add a dataset at `path`; stamped with a digest when §5.3 says so.
    pub fn add_dataset(&mut self, path: &str, ds: NewDataset) -> Result<()> {
        let p = self.new_path(path)?;
        let elems = ds
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .and_then(|n| n.checked_mul(ds.dtype.size()));
        if elems != Some(ds.data.len() as u64) {
            return Err(Error::invalid(format!(
                "{p}: {} bytes for shape {:?} of {}-byte elements",
                ds.data.len(),
                ds.shape,
                ds.dtype.size()
            )));
        }
        self.additions.push(Addition::Dataset(p, ds));
        Ok(())
    }

    /// Add an image at `images/<id>`, stored as a fresh write of `profile`
    /// stores it (contiguous below 64 KiB, else chunked by its grid
    /// `image.grid` of the file, §6.2–§6.3, as `create` chunks it).
    pub fn add_image(&mut self, image: &Image, profile: Profile) -> Result<()> {
        let rel = format!("images/{}", image.id);
        let shape = image.data.shape.clone();
        let item = image.data.dtype.size();
        let chunked = if is_contiguous(&shape, u64::from(item)) {
            None
        } else {
            let chunk = image_chunk_shape(&self.src, &image.grid, &shape, u64::from(item));
            let pipeline = profile.codec(Role::Image).pipeline(item, &chunk)?;
            Some((chunk, pipeline))
        };
        self.add_dataset(
            &rel,
            NewDataset {
                dtype: image.data.dtype.datatype(),
                shape,
                chunked,
                data: image.data.bytes.clone(),
                attrs: image.attrs(),
            },
        )
    }

    /// Replace the object at `path` by a new dataset.
    pub fn replace_dataset(&mut self, path: &str, ds: NewDataset) -> Result<()> {
        self.remove(path)?;
        self.add_dataset(path, ds)
    }

    fn new_path(&self, path: &str) -> Result<String> {
        let p = norm(path);
        if p.is_empty() || p == "meta" || p.split('/').any(str::is_empty) {
            return Err(Error::invalid(format!("{path:?} cannot be added")));
        }
        if self.exists_after(&p) {
            return Err(Error::invalid(format!("{path:?} exists; remove it first")));
        }
        Ok(p)
    }

    /// Ask for the writer id of the group at `path` (created when absent)
    /// in the map a [`WriterStep`] receives.
    pub fn reserve_group(&mut self, path: &str) {
        self.reserved.insert(norm(path));
    }

    /// Run `step` with the writer once the copy and the additions are written.
    pub fn with_writer(&mut self, step: WriterStep) {
        self.steps.push(step);
    }

    /// The root `generator` written (default `purehdf <version>`).
    pub fn set_generator(&mut self, g: &str) {
        self.generator = g.to_string();
    }

    /// Groups the amend creates itself: ancestors of every addition and
    /// every reserved group.
    fn opened(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut add_chain = |p: &str, include_self: bool| {
            let mut cur = if include_self {
                p.to_string()
            } else {
                parent_of(p).to_string()
            };
            while !cur.is_empty() {
                out.insert(cur.clone());
                cur = parent_of(&cur).to_string();
            }
        };
        for a in &self.additions {
            match a {
                Addition::Group(p, _) | Addition::Dataset(p, _) => add_chain(p, false),
            }
        }
        for r in &self.reserved {
            add_chain(r, true);
        }
        out
    }

    /// Write the new file and replace the old one; returns the new `content_id`.
    pub fn commit(self) -> Result<String> {
        let present = |p: &str| {
            !self
                .removed
                .iter()
                .any(|r| p == r || p.starts_with(&format!("{r}/")))
        };
        if let Some(p) = self.mismatched.iter().find(|p| present(p)) {
            return Err(code(
                "E701",
                format!(
                    "{}: the bytes of {p} no longer match its digest; \
                     `medh5 fix --rewrite-digests --reason ...` first",
                    self.path.display()
                ),
            ));
        }
        let target = std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone());
        let mut w = FileWriter::create(&target)?;
        let opened = self.opened();
        let policy = AmendPolicy {
            removed: &self.removed,
            opened: &opened,
        };
        // the copy, level by level down every opened group
        let mut groups: HashMap<String, GroupId> = HashMap::new();
        let root = w.root();
        groups.insert(String::new(), root);
        let mut todo: Vec<(String, Option<Group>)> = vec![(String::new(), Some(self.src.root()?))];
        while let Some((p, src_group)) = todo.pop() {
            let Some(dst) = groups.get(&p).copied() else {
                continue;
            };
            if let Some(g) = &src_group {
                let rep = copy_group_into(
                    &self.src,
                    g.clone(),
                    &mut w,
                    dst,
                    &CopyOptions::default(),
                    &policy,
                )?;
                if let Some(s) = rep.skipped.first() {
                    return Err(Error::invalid(format!("could not copy {s}")));
                }
            }
            for child in opened.iter().filter(|c| parent_of(c) == p) {
                let src_child = match (&src_group, present(child)) {
                    (Some(_), true) => match self.src.object(child) {
                        Ok(Object::Group(g)) => Some(g),
                        _ => None,
                    },
                    _ => None,
                };
                let id = w.create_group(dst, name_of(child))?;
                groups.insert(child.clone(), id);
                todo.push((child.clone(), src_child));
            }
        }
        // additions
        let mut digests = self.copied_digests()?;
        let mut added_attrs: HashMap<String, Vec<(String, Json)>> = HashMap::new();
        for a in &self.additions {
            match a {
                Addition::Group(p, attrs) => {
                    let id = match groups.get(p) {
                        Some(&id) => id,
                        None => {
                            let parent = *groups.get(parent_of(p)).ok_or_else(|| {
                                Error::invalid(format!("no parent group for {p}"))
                            })?;
                            let id = w.create_group(parent, name_of(p))?;
                            groups.insert(p.clone(), id);
                            id
                        }
                    };
                    for (n, v) in attrs {
                        w.set_attr(id, n, to_hdf5(v))?;
                    }
                    added_attrs.insert(
                        p.clone(),
                        attrs
                            .iter()
                            .map(|(n, v)| (n.clone(), v.to_json()))
                            .collect(),
                    );
                }
                Addition::Dataset(p, d) => {
                    let parent = *groups
                        .get(parent_of(p))
                        .ok_or_else(|| Error::invalid(format!("no parent group for {p}")))?;
                    let mut spec = if d.shape.is_empty() {
                        write::DatasetSpec::scalar(d.dtype.clone())
                    } else {
                        write::DatasetSpec::new(d.dtype.clone(), &d.shape)
                    };
                    if let Some((c, f)) = &d.chunked {
                        spec = spec.chunked_stored(c, f.clone());
                    }
                    let id = w.create_dataset(
                        parent,
                        name_of(p),
                        spec,
                        DatasetData::Raw(d.data.clone()),
                    )?;
                    for (n, v) in &d.attrs {
                        if n != "digest" {
                            w.set_attr(id, n, to_hdf5(v))?;
                        }
                    }
                    if is_stamped_path(p) {
                        if let Some(descr) = dtype_descr(&d.dtype) {
                            let dg = dataset_digest(self.algo, p, &descr, &d.shape, &d.data);
                            w.set_attr(id, "digest", to_hdf5(&AttrValue::str(&dg)))?;
                            digests.push((p.clone(), dg));
                        }
                    }
                    added_attrs.insert(
                        p.clone(),
                        d.attrs
                            .iter()
                            .map(|(n, v)| (n.clone(), v.to_json()))
                            .collect(),
                    );
                }
            }
        }
        for step in self.steps {
            digests.extend(step(&mut w, &groups)?);
        }
        // /meta and the managed root attributes
        let meta = self.doc.to_meta();
        w.create_dataset(
            root,
            "meta",
            write::DatasetSpec::scalar(write::vlen_string_type(CharSet::Utf8)),
            DatasetData::VarStrings(vec![meta.clone()]),
        )?;
        let mut root_json: Vec<(String, Json)> = Vec::new();
        for name in ["medh5_version", "medh5_kind"] {
            let v = self
                .root_attrs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone());
            if let Some(v) = v {
                if let Ok(a) = self.src.root()?.attribute(name) {
                    w.set_attr(root, name, cow::attr_value(&self.src, &a)?)?;
                }
                root_json.push((name.to_string(), v));
            }
        }
        if !self.profiles.is_empty() {
            w.set_attr(
                root,
                "medh5_profiles",
                to_hdf5(&AttrValue::strs(&self.profiles)),
            )?;
            root_json.push((
                "medh5_profiles".to_string(),
                Json::Array(self.profiles.iter().map(|s| Json::Str(s.clone())).collect()),
            ));
        }
        w.set_attr(
            root,
            "created",
            to_hdf5(&AttrValue::str(&super::create::now_utc())),
        )?;
        w.set_attr(root, "generator", to_hdf5(&AttrValue::str(&self.generator)))?;
        w.set_attr(
            root,
            "digest_algo",
            to_hdf5(&AttrValue::str(self.algo.name())),
        )?;
        // content_id over the digests, the new meta and the covered attributes
        let mut attribute_objects =
            vec![(String::new(), canonical_attrs(ROOT_COVERED, &root_json))];
        for top in ATTESTED {
            let mut members: BTreeSet<String> = BTreeSet::new();
            if let Ok(Object::Group(g)) = self.src.object(top) {
                for (n, _) in g.links()? {
                    members.insert(format!("{top}/{n}"));
                }
            }
            for a in &self.additions {
                let (Addition::Group(p, _) | Addition::Dataset(p, _)) = a;
                if parent_of(p) == top {
                    members.insert(p.clone());
                }
            }
            for m in members {
                let Some(covered) = covered_names(&m) else {
                    continue;
                };
                let attrs = if let Some(a) = added_attrs.get(&m) {
                    a.clone()
                } else if present(&m) {
                    match self.src.object(&m) {
                        Ok(obj) => attrs_json(&self.src, &obj.attributes()?)?,
                        Err(_) => continue,
                    }
                } else {
                    continue;
                };
                attribute_objects.push((m, canonical_attrs(covered, &attrs)));
            }
        }
        let content_id = ContentIdInput {
            algo: self.algo,
            datasets: digests,
            meta: meta.into_bytes(),
            attribute_objects,
        }
        .content_id();
        w.set_attr(root, "content_id", to_hdf5(&AttrValue::str(&content_id)))?;
        keep_mode(&target, &w)?;
        w.commit()?;
        Ok(content_id)
    }

    /// `(path, digest)` of every stamped dataset the copy keeps, at its first
    /// path in the walk of §5.3.
    fn copied_digests(&self) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for (p, ds) in cow::first_paths(&self.src, &|p| self.removed.contains(p))? {
            if !is_stamped_path(&p) {
                continue;
            }
            if let Some(d) = cow::stored_digest(&self.src, &ds)? {
                out.push((p, d));
            }
        }
        Ok(out)
    }
}

/// What the copy of an amend leaves out: `/meta`, removed objects, groups
/// the amend creates itself, and the managed root attributes.
struct AmendPolicy<'a> {
    removed: &'a BTreeSet<String>,
    opened: &'a BTreeSet<String>,
}

impl CopyPolicy for AmendPolicy<'_> {
    fn skip(&self, path: &str) -> bool {
        let p = path.trim_start_matches('/');
        p == "meta" || self.removed.contains(p) || self.opened.contains(p)
    }

    fn keep_attr(&self, path: &str, name: &str) -> bool {
        path != "/" || !MANAGED.contains(&name)
    }
}

/// The content_id a sample file declares and the one its contents give.
pub fn content_ids(file: &File) -> Result<(Option<String>, String)> {
    let declared = match file.root()?.attribute("content_id") {
        Ok(a) => match attr_json(file, &a)? {
            Json::Str(s) => Some(s),
            _ => None,
        },
        Err(_) => None,
    };
    Ok((declared, compute_content_id(file)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::medh5_vector;

    #[test]
    fn remove_writer_step_and_profile_recompute_content_id() {
        let src = medh5_vector("v2_balanced.medh5");
        if !src.exists() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("purehdf-amend-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dst = dir.join("v2.medh5");
        std::fs::copy(&src, &dst).unwrap();
        let mut a = Amend::open(&dst).unwrap();
        a.remove("annotations/organs").unwrap();
        assert!(a.remove("nothing/here").is_err());
        a.add_profile("training");
        a.reserve_group("index");
        a.with_writer(Box::new(|w, groups| {
            let g = *groups.get("index").unwrap();
            let sub = w.create_group(g, "extra")?;
            let spec = write::DatasetSpec::new(Datatype::int(1, false), &[4]);
            w.create_dataset(sub, "occupancy", spec, DatasetData::Raw(vec![1, 0, 1, 1]))?;
            Ok(Vec::new())
        }));
        let cid = a.commit().unwrap();
        let f = File::open(&dst).unwrap();
        assert_eq!(compute_content_id(&f).unwrap(), cid);
        let v = verify_file(&f, "v2", None).unwrap();
        assert!(v.ok, "{v:?}");
        assert!(f.object("annotations/organs").is_err());
        assert!(f.object("index/extra/occupancy").is_ok());
        let profiles = attrs_json(&f, &f.root().unwrap().attributes().unwrap()).unwrap();
        let p = profiles
            .iter()
            .find(|(n, _)| n == "medh5_profiles")
            .unwrap();
        assert_eq!(p.1.to_canonical(), r#"["core","seg","training"]"#);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
