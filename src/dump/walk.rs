//! The dump walker: visits every object of a file once (by object header address,
//! File Format Specification IV.A), following hard links in name order, and builds
//! the JSON document of `h5 dump --json`. Further hard links to an object already
//! seen become `hard_link_alias` entries (which is also the cycle check); an object
//! that cannot be read gets an `error` string and the walk goes on.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::canonical::{DataHasher, VlenResolver};
use super::json::{attr_value, inner_array_hash, AttrData};
use purehdf::low_level::attribute::{read_each, Attribute};
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::Datatype;
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::group::Group;
use purehdf::low_level::link::join_path;
use purehdf::low_level::messages::dataspace::SpaceKind;
use purehdf::low_level::messages::link::Link;
use purehdf::low_level::object_header::ObjectHeader;
use purehdf::low_level::selection::Selection;
use purehdf::{Error, Result};

/// Bytes read at once when hashing a large dataset (slabs along the first axis).
const BLOCK_BYTES: u64 = 64 << 20;
/// Most objects one dump visits (a guard against pathological link graphs).
pub const MAX_OBJECTS: usize = 1_000_000;

/// A finished dump: the JSON document and the number of objects that failed.
#[derive(Debug)]
pub struct Dump {
    /// The dump document: a JSON object whose `objects` list has one record per object visited.
    pub doc: Value,
    /// Number of objects whose record carries an error (plus one when the object limit stopped the
    /// walk).
    pub failures: usize,
}

/// Dump the file at `path`. `Err` only when the file cannot be opened at all.
pub fn dump_file(path: impl AsRef<Path>) -> Result<Dump> {
    dump_file_with(path, &|_| true)
}

/// [`dump_file`], reading and hashing only the datasets whose path `hash`
/// accepts; the others get `"hash_deferred": true` instead (for a caller
/// that checks their data another way, as `h5 recompress` does).
pub fn dump_file_with(path: impl AsRef<Path>, hash: &dyn Fn(&str) -> bool) -> Result<Dump> {
    let path = path.as_ref();
    let file = match path.to_str() {
        Some(s) => crate::open::open(s)?,
        None => File::open(path)?,
    };
    let mut w = Walker {
        file: &file,
        seen: HashMap::new(),
        objects: Vec::new(),
        failures: 0,
        hash,
    };
    match file.root() {
        Ok(root) => w.walk(root),
        // libhdf5 opens a file whose root object header is unreadable (a writer
        // that never closed it) and reports the root as a group it cannot read.
        Err(e) => w.fail(unreadable_root(), &e),
    }
    let size = match path.to_str() {
        // A remote object: its length as pinned at open (the source counts
        // from the base address).
        Some(s) if crate::open::is_url(s) => file
            .source()
            .len()
            .saturating_add(file.superblock().base_address),
        _ => std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
    };
    let doc = json!({
        "file": path.display().to_string(),
        "size": size,
        "format": {"superblock_version": file.superblock().version},
        "objects": w.objects,
        "failures": w.failures,
    });
    Ok(Dump {
        doc,
        failures: w.failures,
    })
}

/// The record of a root group whose header cannot be read: no attributes, no links.
fn unreadable_root() -> Map<String, Value> {
    let mut rec = Map::new();
    rec.insert("path".into(), Value::String("/".into()));
    rec.insert("kind".into(), Value::String("group".into()));
    rec.insert("attrs".into(), Value::Object(Map::new()));
    rec.insert("links".into(), Value::Array(Vec::new()));
    rec
}

/// A group being walked: the group, its links, the next link to visit.
type Frame = (Group, Vec<(String, Link)>, usize);

struct Walker<'f> {
    file: &'f File,
    seen: HashMap<u64, String>,
    objects: Vec<Value>,
    failures: usize,
    /// Which datasets to read and hash.
    hash: &'f dyn Fn(&str) -> bool,
}

fn err_string(e: &Error) -> String {
    let s = e.to_string();
    if s.len() > 300 {
        let mut end = 300;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s[..end].to_string()
    } else {
        s
    }
}

impl Walker<'_> {
    fn fail(&mut self, mut rec: Map<String, Value>, e: &Error) {
        rec.insert("error".into(), Value::String(err_string(e)));
        self.failures += 1;
        self.objects.push(Value::Object(rec));
    }

    /// Depth-first walk from the root in link-name order, like the oracle's
    /// recursion (so the first path to reach an object is the same), but with an
    /// explicit stack: nesting depth is file-controlled.
    fn walk(&mut self, root: Group) {
        self.seen.insert(root.address(), "/".into());
        let mut stack: Vec<Frame> = Vec::new();
        if let Some(links) = self.visit_group(&root) {
            stack.push((root, links, 0));
        }
        while let Some((g, links, i)) = stack.last_mut() {
            let Some((name, link)) = links.get(*i).cloned() else {
                stack.pop();
                continue;
            };
            *i += 1;
            if self.objects.len() >= MAX_OBJECTS {
                self.failures += 1;
                break;
            }
            let parent = g.path().to_string();
            if let Some(child) = self.visit_link(&parent, name, link) {
                if let Some(l) = self.visit_group(&child) {
                    stack.push((child, l, 0));
                }
            }
        }
    }

    /// Record group `g`; return its links (`None` when they cannot be listed).
    fn visit_group(&mut self, g: &Group) -> Option<Vec<(String, Link)>> {
        let mut rec = Map::new();
        rec.insert("path".into(), Value::String(g.path().to_string()));
        rec.insert("kind".into(), Value::String("group".into()));
        let (attrs, problem) = self.attrs_of(g.file(), g.header());
        rec.insert("attrs".into(), attrs);
        let links = match g.links() {
            Ok(l) => l,
            Err(e) => {
                self.fail(rec, &problem.unwrap_or(e));
                return None;
            }
        };
        rec.insert(
            "links".into(),
            Value::Array(
                links
                    .iter()
                    .map(|(n, _)| Value::String(n.clone()))
                    .collect(),
            ),
        );
        match problem {
            Some(e) => self.fail(rec, &e),
            None => self.objects.push(Value::Object(rec)),
        }
        Some(links)
    }

    /// Record the link `name` of the group at `parent`; return a group not yet
    /// visited that it leads to.
    fn visit_link(&mut self, parent: &str, name: String, link: Link) -> Option<Group> {
        let child = join_path(parent, &name);
        match link {
            Link::Soft(target) => {
                let dangling = self.file.object(&resolve_soft(parent, &target)).is_err();
                self.objects.push(json!({"path": child, "kind": "soft_link",
                    "target": target, "dangling": dangling}));
            }
            Link::External { file, path } => {
                self.objects
                    .push(json!({"path": child, "kind": "external_link",
                    "file": file, "target": path}));
            }
            Link::UserDefined { kind, .. } => {
                self.objects
                    .push(json!({"path": child, "kind": "user_defined_link",
                    "link_type": kind}));
            }
            Link::Hard(addr) => {
                if let Some(first) = self.seen.get(&addr) {
                    self.objects
                        .push(json!({"path": child, "kind": "hard_link_alias",
                        "same_as": first}));
                    return None;
                }
                match self.file.object_at(addr, child.clone()) {
                    Err(e) => {
                        let mut r = Map::new();
                        r.insert("path".into(), Value::String(child));
                        r.insert("kind".into(), Value::String("unopenable".into()));
                        self.fail(r, &e);
                    }
                    Ok(obj) => {
                        self.seen.insert(addr, child);
                        match obj {
                            Object::Group(cg) => return Some(cg),
                            Object::Dataset(d) => self.visit_dataset(&d),
                            Object::NamedDatatype(t) => {
                                let mut r = Map::new();
                                r.insert("path".into(), Value::String(t.path.clone()));
                                r.insert("kind".into(), Value::String("datatype".into()));
                                r.insert("dtype".into(), opt_str(t.dtype.numpy_str()));
                                let (attrs, problem) = self.attrs_of(t.file(), &t.header);
                                r.insert("attrs".into(), attrs);
                                match problem {
                                    Some(e) => self.fail(r, &e),
                                    None => self.objects.push(Value::Object(r)),
                                }
                            }
                        }
                    }
                }
            }
        }
        None
    }

    /// The attributes of the object with header `h`. libhdf5 decodes all of an
    /// object's attribute messages whenever it opens one of them, so one that
    /// cannot be decoded makes every attribute of the object unreadable: then no
    /// attribute is listed and the first error is returned.
    fn attrs_of(&mut self, file: &File, h: &ObjectHeader) -> (Value, Option<Error>) {
        let mut good = Vec::new();
        for a in read_each(file, h) {
            match a {
                Ok(a) => good.push(a),
                Err(e) => return (Value::Object(Map::new()), Some(e)),
            }
        }
        (self.attrs(&good), None)
    }

    fn attrs(&mut self, attrs: &[Attribute]) -> Value {
        let file = self.file;
        let resolve = |el: &[u8]| file.vlen_bytes(el);
        let mut out = Map::new();
        for a in attrs {
            if libhdf5_rejects(&a.dtype) {
                continue;
            }
            let mut e = Map::new();
            e.insert("dtype".into(), opt_str(a.dtype.numpy_str()));
            let shape = match a.space_kind() {
                SpaceKind::Null => None,
                _ => Some(a.shape()),
            };
            e.insert("shape".into(), shape.map_or(Value::Null, |s| json!(s)));
            match attr_value(&a.dtype, shape, &a.data, &resolve) {
                Ok(AttrData::Value(v)) => {
                    e.insert("value".into(), v);
                    e.insert("read_ok".into(), Value::Bool(true));
                }
                Ok(AttrData::Hash { kind, sha256 }) => {
                    e.insert("hash_kind".into(), Value::String(kind.as_str().into()));
                    e.insert("sha256".into(), Value::String(sha256));
                    e.insert("read_ok".into(), Value::Bool(true));
                }
                Err(err) => {
                    e.insert("read_ok".into(), Value::Bool(false));
                    e.insert("read_error".into(), Value::String(err_string(&err)));
                }
            }
            out.insert(a.name.clone(), Value::Object(e));
        }
        Value::Object(out)
    }

    fn visit_dataset(&mut self, d: &Dataset) {
        let mut rec = Map::new();
        rec.insert("path".into(), Value::String(d.path().to_string()));
        rec.insert("kind".into(), Value::String("dataset".into()));
        let null = d.space_kind() == SpaceKind::Null;
        rec.insert(
            "shape".into(),
            if null { Value::Null } else { json!(d.shape()) },
        );
        rec.insert(
            "maxshape".into(),
            if null {
                Value::Null
            } else {
                json!(d.maxshape())
            },
        );
        rec.insert("dtype".into(), opt_str(d.dtype().numpy_str()));
        rec.insert("layout".into(), Value::String(d.layout_kind().into()));
        if let Some(c) = d.chunk_dims() {
            rec.insert("chunks".into(), json!(c));
        }
        let filters: Vec<u32> = d.filters().iter().map(|f| f.id).collect();
        if !filters.is_empty() {
            rec.insert("filters".into(), json!(filters));
        }
        let mut error = None;
        let hashed = if (self.hash)(d.path()) {
            hash_dataset(self.file, d)
        } else {
            rec.insert("hash_deferred".into(), Value::Bool(true));
            Ok(Hashed::Empty)
        };
        match hashed {
            Ok(Hashed::Done(kind, sha)) => {
                rec.insert("hash_kind".into(), Value::String(kind.into()));
                rec.insert("sha256".into(), Value::String(sha));
                rec.insert("read_ok".into(), Value::Bool(true));
            }
            Ok(Hashed::Empty) => {
                rec.insert("read_ok".into(), Value::Bool(true));
            }
            Ok(Hashed::Skipped(why)) => {
                rec.insert("read_skipped".into(), Value::String(why));
                rec.insert("read_ok".into(), Value::Bool(true));
            }
            Err(e) => {
                rec.insert("read_ok".into(), Value::Bool(false));
                error = Some(e);
            }
        }
        let (attrs, problem) = self.attrs_of(d.file(), d.header());
        rec.insert("attrs".into(), attrs);
        if let Some(e) = problem {
            error.get_or_insert(e);
        }
        match error {
            Some(e) => self.fail(rec, &e),
            None => self.objects.push(Value::Object(rec)),
        }
    }
}

/// Types libhdf5 refuses to open (a compound without members): the oracle cannot
/// list such an attribute at all, so the dump leaves it out too.
fn libhdf5_rejects(dt: &Datatype) -> bool {
    match dt {
        Datatype::Compound { members, .. } => {
            members.is_empty() || members.iter().any(|m| libhdf5_rejects(&m.dtype))
        }
        Datatype::Array { base, .. }
        | Datatype::VarSequence { base, .. }
        | Datatype::Enum { base, .. } => libhdf5_rejects(base),
        _ => false,
    }
}

/// A soft link's target as an absolute path (relative targets are taken from the
/// link's group).
fn resolve_soft(group: &str, target: &str) -> String {
    if target.starts_with('/') {
        target.to_string()
    } else {
        join_path(group, target)
    }
}

fn opt_str(s: Option<String>) -> Value {
    s.map_or(Value::Null, Value::String)
}

enum Hashed {
    Done(&'static str, String),
    Empty,
    Skipped(String),
}

/// Read and hash a dataset's data under the oracle's canonical rules, in slabs along
/// the first dimension for large datasets.
fn hash_dataset(file: &File, d: &Dataset) -> Result<Hashed> {
    if d.space_kind() == SpaceKind::Null {
        return Ok(Hashed::Empty);
    }
    let dt = d.dtype();
    let mut hasher = DataHasher::new(dt).ok_or_else(|| {
        Error::unsupported(
            "datatype",
            d.address(),
            "a type with no numpy equivalent holding vlen data or references",
        )
    })?;
    // The crate's one data budget (`limits::data_budget`: by default
    // max(2 GiB, 1024 x file size), as the oracle's 2 GiB cap for small files):
    // a dataset over it is not hashed, and the record says why with the
    // typed error that names the dataset and its size.
    match d.check_budget() {
        Err(e @ Error::OverBudget { .. }) => return Ok(Hashed::Skipped(e.to_string())),
        other => other?,
    }
    let esize = dt.size();
    let n = d.num_elements();
    let logical = n.saturating_mul(esize);
    let resolve = |el: &[u8]| file.vlen_bytes(el);
    let resolve: VlenResolver = &resolve;
    let shape = d.shape().to_vec();
    if let (true, Datatype::VarSequence { base, .. }) = (shape.is_empty(), dt) {
        // h5py returns a scalar vlen dataset's value as its inner array
        let data = d.read_all_raw()?;
        return match inner_array_hash(base, &data, resolve)? {
            AttrData::Hash { kind, sha256 } => Ok(Hashed::Done(kind.as_str(), sha256)),
            AttrData::Value(_) => Err(Error::InvalidArgument("scalar vlen hash".into())),
        };
    }
    if logical <= BLOCK_BYTES || shape.first().copied().unwrap_or(1) <= 1 {
        let data = d.read_all_raw()?;
        hasher.update(&data, resolve)?;
    } else {
        let rows = shape[0];
        let row_bytes = (logical / rows).max(1);
        let step = (BLOCK_BYTES / row_bytes).max(1);
        let mut start = 0u64;
        // One block buffer for the whole dataset (a fresh 64 MiB buffer per
        // block costs page faults on every block).
        let mut buf = Vec::new();
        while start < rows {
            let count0 = step.min(rows - start);
            let mut st = vec![0u64; shape.len()];
            st[0] = start;
            let mut cnt = shape.clone();
            cnt[0] = count0;
            let len = usize::try_from(count0.saturating_mul(row_bytes))
                .map_err(|_| Error::InvalidArgument("block too large".into()))?;
            buf.resize(len, 0);
            d.read_raw(
                &Selection::Hyperslab {
                    start: st,
                    count: cnt,
                },
                &mut buf[..len],
            )?;
            hasher.update(&buf[..len], resolve)?;
            start += count0;
        }
    }
    let kind = hasher.kind().as_str();
    Ok(Hashed::Done(kind, hasher.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use purehdf::low_level::checksum::metadata_checksum;
    use purehdf::low_level::superblock::SIGNATURE;

    /// A writer that never closed its file leaves the root header unwritten:
    /// the dump still describes the root, as a group that could not be read.
    #[test]
    fn unreadable_root_is_a_failed_group() {
        let mut f = SIGNATURE.to_vec();
        f.extend_from_slice(&[2, 8, 8, 0]);
        for a in [0u64, u64::MAX, 0x100, 0x30] {
            f.extend_from_slice(&a.to_le_bytes());
        }
        let ck = metadata_checksum(&f);
        f.extend_from_slice(&ck.to_le_bytes());
        f.resize(0x100, 0);
        let path = std::env::temp_dir().join(format!("purehdf-noclose-{}.h5", std::process::id()));
        std::fs::write(&path, &f).unwrap();
        let d = dump_file(&path);
        std::fs::remove_file(&path).unwrap();
        let d = d.unwrap();
        assert_eq!(d.failures, 1);
        let objs = d.doc["objects"].as_array().unwrap();
        assert_eq!(objs.len(), 1);
        assert_eq!(objs[0]["path"], "/");
        assert_eq!(objs[0]["kind"], "group");
        assert_eq!(objs[0]["links"], json!([]));
        assert!(objs[0]["error"].as_str().unwrap().contains("object header"));
    }
}
