//! The copy-on-write half of an amend (`shared/spec/medh5.md` §8, §6.7): every
//! group, dataset, attribute and soft link of the source sample is rebuilt in a
//! [`FileWriter`]; chunked datasets move as their stored chunks (filter masks
//! included, never decoded). While copying, each dataset outside `meta` and
//! `index/**` gets a fresh `digest` (§5.2, §5.3) in the file's algorithm;
//! `/meta` and the root attributes are left to the caller.
//!
//! What the writer cannot express is reported as a note: external and
//! user-defined links are dropped, a hard-link alias becomes a second copy.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::hdf5fmt::attribute::Attribute;
use crate::hdf5fmt::copy::raw;
use crate::hdf5fmt::dataset::Dataset;
use crate::hdf5fmt::datatype::{CharSet, Datatype};
use crate::hdf5fmt::file::{File, Object};
use crate::hdf5fmt::messages::dataspace::Dataspace;
use crate::hdf5fmt::messages::link::Link;
use crate::hdf5fmt::write::{
    AttrData, AttrValue, DatasetData, DatasetSpec, FileWriter, GroupId, ObjectId,
};
use crate::medh5::integrity::{is_stamped_path, DigestAlgo};
use crate::medh5::verify::compute_digest;

/// Most objects one rewrite copies.
const MAX_OBJECTS: usize = 1 << 20;

/// What the copy produced.
#[derive(Debug, Default)]
pub struct Copied {
    /// `(path, digest)` of every dataset carrying a `digest` in the new file,
    /// in walk order (first paths), `index/**` and `meta` excluded.
    pub digests: Vec<(String, String)>,
    /// Paths whose digest was written by this copy (fresh from the bytes).
    pub stamped: Vec<String>,
    /// Things the writer could not carry over exactly.
    pub notes: Vec<String>,
}

/// The writer's dataspace for a reader's dataspace (maximum dimensions kept
/// The writer's dataspace for a reader's dataspace.
pub fn space_of(ds: &Dataspace) -> Dataspace {
    ds.clone()
}

fn vlen_elements(file: &File, data: &[u8], elem: usize) -> Result<Vec<Vec<u8>>> {
    if elem == 0 {
        return Ok(Vec::new());
    }
    data.chunks_exact(elem)
        .map(|e| file.vlen_bytes(e))
        .collect()
}

fn to_strings(raw: Vec<Vec<u8>>) -> Result<Vec<String>> {
    raw.into_iter()
        .map(|b| {
            String::from_utf8(b)
                .map_err(|_| Error::InvalidArgument("a variable-length string is not UTF-8".into()))
        })
        .collect()
}

/// Datatype and values of a vlen-free, vlen-string or vlen-sequence payload.
fn values(
    file: &File,
    dt: &Datatype,
    raw: Vec<u8>,
) -> Result<(Datatype, std::result::Result<Vec<u8>, VlenValues>)> {
    let elem = usize::try_from(dt.size()).unwrap_or(usize::MAX);
    match dt {
        Datatype::VarString { pad, cset, .. } => {
            let s = to_strings(vlen_elements(file, &raw, elem)?)?;
            let dt = Datatype::VarString {
                size: 16,
                pad: *pad,
                cset: *cset,
            };
            Ok((dt, Err(VlenValues::Strings(s))))
        }
        Datatype::VarSequence { base, .. } if !base.has_vlen_or_ref() => {
            let v = vlen_elements(file, &raw, elem)?;
            let dt = Datatype::VarSequence {
                size: 16,
                base: base.clone(),
            };
            Ok((dt, Err(VlenValues::Sequences(v))))
        }
        d if d.has_vlen_or_ref() => Err(Error::InvalidArgument(
            "references or nested variable-length data cannot be rewritten".into(),
        )),
        d => Ok((d.clone(), Ok(raw))),
    }
}

enum VlenValues {
    Strings(Vec<String>),
    Sequences(Vec<Vec<u8>>),
}

/// An attribute as the writer stores it (vlen values re-stored in the new heap).
pub fn attr_value(file: &File, a: &Attribute) -> Result<AttrValue> {
    let (dtype, v) = values(file, &a.dtype, a.data.clone())?;
    let data = match v {
        Ok(raw) => AttrData::Raw(raw),
        Err(VlenValues::Strings(s)) => AttrData::VarStrings(s),
        Err(VlenValues::Sequences(s)) => AttrData::VarSequences(s),
    };
    Ok(AttrValue {
        dtype,
        shape: space_of(&a.space),
        data,
    })
}

/// A scalar vlen UTF-8 string attribute (what the reference stamps).
pub fn utf8(s: &str) -> AttrValue {
    AttrValue {
        dtype: Datatype::VarString {
            size: 16,
            pad: crate::hdf5fmt::datatype::StringPad::NullTerm,
            cset: CharSet::Utf8,
        },
        shape: Dataspace::scalar(),
        data: AttrData::VarStrings(vec![s.to_string()]),
    }
}

struct Copier<'a> {
    src: &'a File,
    algo: DigestAlgo,
    out: Copied,
    seen: HashMap<u64, String>,
    objects: usize,
}

/// Copy every member of the source root into `w` (root attributes and `/meta`
/// excluded: the caller writes them), restamping digests in `algo`.
pub fn copy_sample(src: &File, w: &mut FileWriter, algo: DigestAlgo) -> Result<Copied> {
    let root = src.root()?;
    let mut c = Copier {
        src,
        algo,
        out: Copied::default(),
        seen: HashMap::new(),
        objects: 0,
    };
    c.seen.insert(root.address(), String::new());
    let dst = w.root();
    c.copy_group(w, &root, "", dst, &mut vec![root.address()])?;
    Ok(c.out)
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

impl Copier<'_> {
    fn copy_attrs(
        &mut self,
        w: &mut FileWriter,
        path: &str,
        attrs: Vec<Attribute>,
        dst: ObjectId,
        skip_digest: bool,
    ) -> Result<()> {
        for a in attrs {
            if skip_digest && a.name == "digest" {
                continue;
            }
            match attr_value(self.src, &a) {
                Ok(v) => w.set_attr(dst, &a.name, v)?,
                Err(e) => self
                    .out
                    .notes
                    .push(format!("{path}@{}: not copied ({e})", a.name)),
            }
        }
        Ok(())
    }

    /// Depth-first in byte order of names, as the digest walk of §5.3.
    fn copy_group(
        &mut self,
        w: &mut FileWriter,
        g: &crate::hdf5fmt::group::Group,
        prefix: &str,
        dst: GroupId,
        ancestors: &mut Vec<u64>,
    ) -> Result<()> {
        let mut links = g.links()?;
        links.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        for (name, link) in links {
            let path = join(prefix, &name);
            if path == "meta" {
                continue;
            }
            let addr = match link {
                Link::Hard(a) => a,
                Link::Soft(target) => {
                    w.soft_link(dst, &name, &target)?;
                    continue;
                }
                Link::External { file, path: p } => {
                    self.out
                        .notes
                        .push(format!("{path}: external link to {file}:{p} dropped"));
                    continue;
                }
                Link::UserDefined { kind, .. } => {
                    self.out
                        .notes
                        .push(format!("{path}: user-defined link of type {kind} dropped"));
                    continue;
                }
            };
            if ancestors.contains(&addr) {
                self.out
                    .notes
                    .push(format!("{path}: hard link to an ancestor dropped"));
                continue;
            }
            self.objects += 1;
            if self.objects > MAX_OBJECTS {
                return Err(Error::Limit {
                    structure: "medh5 fix",
                    offset: addr,
                    what: "objects",
                    value: self.objects as u64,
                    limit: MAX_OBJECTS as u64,
                });
            }
            if let Some(first) = self.seen.get(&addr) {
                self.out.notes.push(format!(
                    "{path}: hard link to {first} written as a second copy"
                ));
            } else {
                self.seen.insert(addr, path.clone());
            }
            match self.src.object_at(addr, format!("/{path}"))? {
                Object::Group(sub) => {
                    let sd = w.create_group(dst, &name)?;
                    self.copy_attrs(w, &path, sub.attributes()?, sd.into(), false)?;
                    ancestors.push(addr);
                    self.copy_group(w, &sub, &path, sd, ancestors)?;
                    ancestors.pop();
                }
                Object::Dataset(ds) => self.copy_dataset(w, &ds, &path, dst, &name)?,
                Object::NamedDatatype(t) => {
                    let id = w.commit_datatype(dst, &name, t.dtype.clone())?;
                    self.copy_attrs(w, &path, t.attributes()?, id.into(), false)?;
                }
            }
        }
        Ok(())
    }

    fn copy_dataset(
        &mut self,
        w: &mut FileWriter,
        ds: &Dataset,
        path: &str,
        parent: GroupId,
        name: &str,
    ) -> Result<()> {
        let stamp = is_stamped_path(path) && path != "meta";
        let fresh = if stamp {
            compute_digest(self.src, ds, path, self.algo)?
        } else {
            None
        };
        let stored = match ds.attribute("digest") {
            Ok(a) => match attr_value(self.src, &a)?.data {
                AttrData::VarStrings(s) => s.into_iter().next(),
                _ => None,
            },
            Err(_) => None,
        };
        let id = self.create_dataset(w, ds, parent, name)?;
        self.copy_attrs(w, path, ds.attributes()?, id, fresh.is_some())?;
        if let Some(d) = fresh {
            w.set_attr(id, "digest", utf8(&d))?;
            self.out.stamped.push(path.to_string());
            self.out.digests.push((path.to_string(), d));
        } else if let (true, Some(d)) = (stamp, stored) {
            self.out.digests.push((path.to_string(), d));
        }
        Ok(())
    }

    fn create_dataset(
        &mut self,
        w: &mut FileWriter,
        ds: &Dataset,
        parent: GroupId,
        name: &str,
    ) -> Result<ObjectId> {
        if ds.layout_kind() == "virtual" {
            return Err(Error::InvalidArgument(format!(
                "{}: virtual datasets cannot be rewritten",
                ds.path()
            )));
        }
        let mut spec = DatasetSpec {
            dtype: ds.dtype().clone(),
            shape: space_of(ds.dataspace()),
            layout: crate::hdf5fmt::write::Layout::Contiguous,
            fill_value: None,
        };
        if let (false, Some(f)) = (ds.dtype().has_vlen_or_ref(), ds.fill_value().bytes()) {
            if f.len() as u64 == ds.dtype().size() {
                spec.fill_value = Some(f.to_vec());
            }
        }
        let chunk = raw::chunk_shape(ds);
        if let (true, Some(chunk)) = (raw::raw_copyable(ds), &chunk) {
            // Stored chunks move as they are (h5 copy's raw-chunk copier).
            spec = spec.chunked(chunk, ds.filters().to_vec());
            let id = w.create_dataset(parent, name, spec, DatasetData::None)?;
            raw::copy_stored_chunks(self.src, ds, w, id)?;
            return Ok(id.into());
        }
        match &chunk {
            Some(c) => spec = spec.chunked(c, ds.filters().to_vec()),
            None if ds.layout_kind() == "compact" => spec = spec.compact(),
            None => {}
        }
        let raw = ds.read_all_raw()?;
        let (dtype, v) = values(self.src, ds.dtype(), raw)?;
        spec.dtype = dtype;
        let data = match v {
            Ok(raw) => DatasetData::Raw(raw),
            Err(VlenValues::Strings(s)) => DatasetData::VarStrings(s),
            Err(VlenValues::Sequences(s)) => DatasetData::VarSequences(s),
        };
        Ok(w.create_dataset(parent, name, spec, data)?.into())
    }
}
