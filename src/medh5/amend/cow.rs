//! The copy-on-write of the tools that re-attest or rebuild part of a sample
//! in one go (`docs/medh5-format.md` §8, §5.3, §5.8, §6.8): `fix
//! --rewrite-digests` (every digest restamped from the current bytes) and
//! `index build` / `fix --rebuild-index` (stored digests kept, missing ones
//! stamped: the reference's `commit(digests=False)`). The sample is copied
//! by the one graph copier (`hdf5fmt::copy`) with a `CopyPolicy`
//! that leaves `/meta`, the root attributes and the entries being rebuilt to
//! the caller and writes the digests; so hard links stay one object, soft
//! and external links stay links, committed types stay shared and chunked
//! datasets move as their stored chunks (those the raw copier must not
//! carry, such as unfiltered partial edge chunks, are re-encoded).
//! [`finish_root`] then writes `/meta`, the root attributes in the
//! reference's order and the recomputed `content_id`.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

use crate::canonical_json::Json;
use crate::create::now_utc;
use crate::integrity::{
    canonical_attrs, covered_names, is_stamped_path, ContentIdInput, DigestAlgo, ROOT_COVERED,
};
use crate::sample::{attr_json, attrs_json};
use crate::verify::compute_digest;
use purehdf::low_level::attribute::Attribute;
use purehdf::low_level::copy::{copy_group_into, CopyOptions, CopyPolicy};
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::{CharSet, Datatype};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::link_walk::LinkWalk;
use purehdf::low_level::messages::link::Link;
use purehdf::low_level::write::{
    vlen_string_type, AttrData, AttrValue, DatasetData, DatasetSpec, Dataspace, FileWriter, GroupId,
};
use purehdf::{Error, Result};
use purehdf_filters::ids;

/// Most objects one first-path walk visits.
const MAX_OBJECTS: usize = 1 << 20;
/// Groups whose members carry `content_id` attribute lines.
const ATTESTED: [&str; 4] = ["grids", "images", "annotations", "transforms"];
/// HDF5's built-in filters (an index written beside only these is `portable`).
const BUILTIN: [u32; 6] = [
    ids::DEFLATE,
    ids::SHUFFLE,
    ids::FLETCHER32,
    ids::SZIP,
    ids::NBIT,
    ids::SCALEOFFSET,
];

/// The one error this module builds (the copier left something out).
/// A medh5 error inside a copier hook, which speaks the crate's error type:
/// HDF5-level errors unwrapped, coded ones kept with the same text.
fn to_hdf5(e: crate::error::Error) -> Error {
    match e {
        crate::error::Error::Hdf5(e) => e,
        other => Error::InvalidArgument(other.to_string()),
    }
}

fn not_copied(what: &str) -> Error {
    Error::InvalidArgument(format!("the sample cannot be rewritten: {what}"))
}

/// Which digests the copy writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stamp {
    /// Every stamped dataset gets a fresh digest from its bytes (`fix --rewrite-digests`).
    Fresh,
    /// Stored digests kept; datasets without one stamped (an index amend).
    Missing,
}

/// What the copy produced.
#[derive(Debug, Default)]
pub struct Copied {
    /// `(path, digest)` of every dataset carrying a digest in the new file,
    /// at its first path in the walk of §5.3 (`meta` and `index/**` excluded).
    pub digests: Vec<(String, String)>,
    /// The new file's `/index` group, when the source had one.
    pub index: Option<GroupId>,
    /// Every copied dataset uses only HDF5's built-in filters.
    pub builtin_filters_only: bool,
}

/// Every dataset reachable by hard links at its first path (sample-relative)
/// in the depth-first walk of §5.3, links in byte order of names; `/meta`
/// and the subtrees at `skip` are not entered.
pub fn first_paths(file: &File, skip: &dyn Fn(&str) -> bool) -> Result<Vec<(String, Dataset)>> {
    let root = file.root()?;
    let mut seen: HashSet<u64> = HashSet::from([root.address()]);
    let mut out = Vec::new();
    let mut walk = LinkWalk::new(&root)?;
    while let Some((path, link)) = walk.next_link() {
        let Link::Hard(addr) = link else { continue };
        if path == "meta" || skip(&path) || !seen.insert(addr) {
            continue;
        }
        if seen.len() > MAX_OBJECTS {
            return Err(Error::Limit {
                structure: "medh5 sample walk",
                offset: addr,
                what: "objects",
                value: seen.len() as u64,
                limit: MAX_OBJECTS as u64,
            });
        }
        match file.object_at(addr, format!("/{path}"))? {
            Object::Group(g) => walk.enter(path, &g)?,
            Object::Dataset(ds) => out.push((path, *ds)),
            Object::NamedDatatype(_) => {}
        }
    }
    Ok(out)
}

/// The `digest` a dataset stores, when it is text.
pub fn stored_digest(file: &File, ds: &Dataset) -> Result<Option<String>> {
    match ds.attribute("digest") {
        Ok(a) => match attr_json(file, &a).map_err(to_hdf5)? {
            Json::Str(s) => Ok(Some(s)),
            _ => Ok(None),
        },
        Err(_) => Ok(None),
    }
}

/// The copier's decisions for a rewrite.
struct DigestPolicy<'a> {
    src: &'a File,
    algo: DigestAlgo,
    stamp: Stamp,
    skip: &'a HashSet<String>,
    /// First path of every stamped dataset, by header address.
    first: HashMap<u64, String>,
    /// Digests this copy wrote, by header address.
    written: RefCell<HashMap<u64, String>>,
    index: Cell<Option<GroupId>>,
}

impl CopyPolicy for DigestPolicy<'_> {
    fn skip(&self, path: &str) -> bool {
        let p = path.trim_start_matches('/');
        p == "meta" || self.skip.contains(p)
    }

    fn keep_attr(&self, path: &str, _name: &str) -> bool {
        // the root's attributes are written by `finish_root`
        path != "/"
    }

    fn extra_attrs(&self, obj: &Object) -> Result<Vec<(String, AttrValue)>> {
        let Object::Dataset(ds) = obj else {
            return Ok(Vec::new());
        };
        let Some(path) = self.first.get(&ds.address()) else {
            return Ok(Vec::new());
        };
        if self.stamp == Stamp::Missing && stored_digest(self.src, ds)?.is_some() {
            return Ok(Vec::new());
        }
        match compute_digest(self.src, ds, path, self.algo).map_err(to_hdf5)? {
            Some(d) => {
                let value = utf8(&d);
                self.written.borrow_mut().insert(ds.address(), d);
                Ok(vec![("digest".to_string(), value)])
            }
            None => Ok(Vec::new()),
        }
    }

    fn copied_group(&self, path: &str, id: GroupId) {
        if path == "/index" {
            self.index.set(Some(id));
        }
    }
}

/// Copy every member of the source sample into `w` except `/meta`, the root
/// attributes (see [`finish_root`]) and the sample-relative paths in `skip`,
/// writing digests as `stamp` says in `algo`.
pub fn copy_sample(
    src: &File,
    w: &mut FileWriter,
    algo: DigestAlgo,
    stamp: Stamp,
    skip: &HashSet<String>,
) -> Result<Copied> {
    let datasets = first_paths(src, &|p| skip.contains(p))?;
    let policy = DigestPolicy {
        src,
        algo,
        stamp,
        skip,
        first: datasets
            .iter()
            .filter(|(p, _)| is_stamped_path(p))
            .map(|(p, ds)| (ds.address(), p.clone()))
            .collect(),
        written: RefCell::new(HashMap::new()),
        index: Cell::new(None),
    };
    let root = w.root();
    let report = copy_group_into(src, src.root()?, w, root, &CopyOptions::default(), &policy)?;
    if let Some(s) = report.skipped.first() {
        return Err(not_copied(s));
    }
    let written = policy.written.into_inner();
    let mut out = Copied {
        index: policy.index.get(),
        builtin_filters_only: true,
        ..Copied::default()
    };
    for (path, ds) in &datasets {
        if ds.filters().iter().any(|f| !BUILTIN.contains(&f.id)) {
            out.builtin_filters_only = false;
        }
        if !is_stamped_path(path) {
            continue;
        }
        let digest = match written.get(&ds.address()) {
            Some(d) => Some(d.clone()),
            None => stored_digest(src, ds)?,
        };
        if let Some(d) = digest {
            out.digests.push((path.clone(), d));
        }
    }
    Ok(out)
}

fn vlen_elements(file: &File, data: &[u8], elem: usize) -> Result<Vec<Vec<u8>>> {
    if elem == 0 {
        return Ok(Vec::new());
    }
    data.chunks_exact(elem)
        .map(|e| file.vlen_bytes(e))
        .collect()
}

/// An attribute as the writer stores it (vlen strings and sequences of
/// fixed-size values re-stored in the new file's heap).
pub fn attr_value(file: &File, a: &Attribute) -> Result<AttrValue> {
    let elem = usize::try_from(a.dtype.size()).unwrap_or(usize::MAX);
    let (dtype, data) = match &a.dtype {
        Datatype::VarString { pad, cset, .. } => {
            let s = vlen_elements(file, &a.data, elem)?
                .into_iter()
                .map(|b| {
                    String::from_utf8(b).map_err(|_| {
                        Error::InvalidArgument(format!("{}: a string is not UTF-8", a.name))
                    })
                })
                .collect::<Result<Vec<String>>>()?;
            let dt = Datatype::VarString {
                size: 16,
                pad: *pad,
                cset: *cset,
            };
            (dt, AttrData::VarStrings(s))
        }
        Datatype::VarSequence { base, .. } if !base.has_vlen_or_ref() => {
            let v = vlen_elements(file, &a.data, elem)?;
            let dt = Datatype::VarSequence {
                size: 16,
                base: base.clone(),
            };
            (dt, AttrData::VarSequences(v))
        }
        d if d.has_vlen_or_ref() => {
            return Err(Error::InvalidArgument(format!(
                "{}: references or nested variable-length data cannot be rewritten",
                a.name
            )))
        }
        d => (d.clone(), AttrData::Raw(a.data.clone())),
    };
    Ok(AttrValue {
        dtype,
        shape: a.space.clone(),
        data,
    })
}

/// A scalar vlen UTF-8 string attribute (what the reference stamps).
pub fn utf8(s: &str) -> AttrValue {
    AttrValue {
        dtype: vlen_string_type(CharSet::Utf8),
        shape: Dataspace::scalar(),
        data: AttrData::VarStrings(vec![s.to_string()]),
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
) -> crate::error::Result<String> {
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
    for a in &src_root {
        if !crate::amend::MANAGED.contains(&a.name.as_str()) {
            w.set_attr(root, &a.name, attr_value(src, a)?)?;
        }
    }
    let mut root_json = attrs_json(src, &src_root)?;
    if let Some(p) = profiles {
        root_json.retain(|(n, _)| n != "medh5_profiles");
        root_json.push((
            "medh5_profiles".to_string(),
            crate::canonical_json::Json::Array(
                p.iter()
                    .map(|s| crate::canonical_json::Json::Str(s.clone()))
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
