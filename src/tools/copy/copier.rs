//! The walk of `h5 copy`: every object reached by hard links is created once
//! (a second hard link to it becomes a second link to the same copy), soft and
//! external links are copied as links, and values holding references are
//! written in a second pass, once every object they may point at exists.

use std::collections::HashMap;

use super::chunkwise::{self, Target};
use super::hook::{CopyPolicy, KeepAll};
use super::values::Ctx;
use super::{guess_chunk, space_of, CopyOptions, CopyReport, FilterChoice, MAX_OBJECTS};
use crate::error::{Error, Result};
use crate::filters::FilterSpec;
use crate::hdf5fmt::attribute::Attribute;
use crate::hdf5fmt::chunk_index;
use crate::hdf5fmt::dataset::Dataset;
use crate::hdf5fmt::datatype::Datatype;
use crate::hdf5fmt::file::{File, Object};
use crate::hdf5fmt::group::Group;
use crate::hdf5fmt::link::join_path;
use crate::hdf5fmt::messages::link::Link;
use crate::hdf5fmt::messages::shared::SharedRef;
use crate::hdf5fmt::messages::types;
use crate::hdf5fmt::write::{
    AttrData, AttrValue, DatasetData, DatasetId, DatasetSpec, DatatypeId, FileWriter, GroupId,
    Layout, ObjectId, Space,
};

/// A value holding references, written after the walk.
enum Pending {
    Attr {
        path: String,
        obj: ObjectId,
        attr: Attribute,
    },
    Data {
        path: String,
        dst: DatasetId,
        src: Box<Dataset>,
    },
}

/// The copy in progress.
pub(super) struct Copier<'a> {
    pub src: &'a File,
    pub w: FileWriter,
    pub opts: &'a CopyOptions,
    /// Per-object decisions of a tool driving the copy (default: copy all as `opts` says).
    pub policy: &'a dyn CopyPolicy,
    pub report: CopyReport,
    /// Source header address → its copy.
    map: HashMap<u64, ObjectId>,
    pending: Vec<Pending>,
    objects: usize,
    /// Source header address of a committed datatype → its copy.
    named: HashMap<u64, DatatypeId>,
}

impl<'a> Copier<'a> {
    pub fn new(src: &'a File, w: FileWriter, opts: &'a CopyOptions) -> Self {
        Self::with_policy(src, w, opts, &KeepAll)
    }

    pub fn with_policy(
        src: &'a File,
        w: FileWriter,
        opts: &'a CopyOptions,
        policy: &'a dyn CopyPolicy,
    ) -> Self {
        Copier {
            src,
            w,
            opts,
            policy,
            report: CopyReport::default(),
            map: HashMap::new(),
            pending: Vec::new(),
            objects: 0,
            named: HashMap::new(),
        }
    }

    fn skip(&mut self, path: &str, why: impl std::fmt::Display) {
        self.report.skipped.push(format!("{path}: {why}"));
    }

    fn note(&mut self, msg: String) {
        self.report.notes.push(msg);
    }

    /// Values of `dt` from the source's stored bytes, for the writer.
    fn values(&mut self, path: &str, dt: &Datatype, data: Vec<u8>) -> Result<AttrData> {
        if !dt.has_vlen_or_ref() {
            return Ok(AttrData::Raw(data));
        }
        let mut ctx = Ctx {
            file: self.src,
            map: &self.map,
            dangling: 0,
        };
        let e = ctx.elements(dt, &data)?;
        if ctx.dangling > 0 {
            let n = ctx.dangling;
            self.note(format!(
                "{path}: {n} reference(s) to objects not copied written as null"
            ));
        }
        Ok(AttrData::Elements(e))
    }

    fn copy_attrs(&mut self, path: &str, attrs: Vec<Attribute>, dst: ObjectId) {
        for a in attrs {
            if !self.policy.keep_attr(path, &a.name) {
                continue;
            }
            let where_ = format!("{path}@{}", a.name);
            if super::has_reference(&a.dtype) {
                self.pending.push(Pending::Attr {
                    path: where_,
                    obj: dst,
                    attr: a,
                });
                continue;
            }
            self.write_attr(&where_, dst, a);
        }
    }

    fn write_attr(&mut self, where_: &str, dst: ObjectId, a: Attribute) {
        let data = match self.values(where_, &a.dtype, a.data) {
            Ok(d) => d,
            Err(e) => return self.skip(where_, e),
        };
        let value = AttrValue {
            dtype: a.dtype,
            shape: space_of(&a.space),
            data,
        };
        match self.w.set_attr(dst, &a.name, value) {
            Ok(()) => self.report.attributes += 1,
            Err(e) => self.skip(where_, e),
        }
    }

    /// Second pass: values holding references.
    pub fn finish(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            match p {
                Pending::Attr { path, obj, attr } => self.write_attr(&path, obj, attr),
                Pending::Data { path, dst, src } => {
                    let res = src
                        .read_all_raw()
                        .and_then(|raw| self.values(&path, src.dtype(), raw))
                        .and_then(|v| match v {
                            AttrData::Elements(e) => self.w.set_data(dst, e),
                            AttrData::Raw(r) => self.w.set_data(dst, r),
                            _ => Ok(()),
                        });
                    if let Err(e) = res {
                        self.skip(&path, e);
                    }
                }
            }
        }
    }

    fn attrs_of(&mut self, obj: &Object, dst: ObjectId) {
        match obj.attributes() {
            Ok(a) => self.copy_attrs(obj.path(), a, dst),
            Err(e) => self.skip(obj.path(), format!("attributes: {e}")),
        }
    }

    /// Copy the tree under `root` (already created as `dst`).
    pub fn copy_tree(&mut self, root: Group, dst: GroupId) -> Result<()> {
        self.map.insert(root.address(), dst.into());
        match root.attributes() {
            Ok(a) => self.copy_attrs(root.path(), a, dst.into()),
            Err(e) => self.skip(root.path(), format!("attributes: {e}")),
        }
        // (group, its copy); a group is walked once, when first copied
        let mut stack = vec![(root, dst)];
        while let Some((g, gd)) = stack.pop() {
            let links = match g.links() {
                // committed datatypes first, so datasets of the group can use them
                Ok(mut l) => {
                    l.sort_by_key(
                        |(_, link)| !matches!(link, Link::Hard(a) if self.is_named_type(*a)),
                    );
                    l
                }
                Err(e) => {
                    self.skip(g.path(), format!("links: {e}"));
                    continue;
                }
            };
            for (name, link) in links {
                let path = join_path(g.path(), &name);
                if self.policy.skip(&path) {
                    continue;
                }
                match link {
                    Link::Soft(target) => {
                        match self
                            .w
                            .soft_link(gd, &name, &self.policy.soft_target(&target))
                        {
                            Ok(()) => self.report.soft_links += 1,
                            Err(e) => self.skip(&path, e),
                        }
                    }
                    Link::External { file, path: p } => {
                        match self.w.external_link(gd, &name, &file, &p) {
                            Ok(()) => self.report.external_links += 1,
                            Err(e) => self.skip(&path, e),
                        }
                    }
                    Link::UserDefined { kind, .. } => {
                        self.skip(&path, format!("user-defined link type {kind}"))
                    }
                    Link::Hard(addr) => {
                        if let Some(&existing) = self.map.get(&addr) {
                            match self.w.hard_link(gd, &name, existing) {
                                Ok(()) => self.report.hard_links += 1,
                                Err(e) => self.skip(&path, e),
                            }
                            continue;
                        }
                        self.objects += 1;
                        if self.objects > MAX_OBJECTS {
                            return Err(Error::Limit {
                                structure: "h5 copy",
                                offset: addr,
                                what: "objects",
                                value: self.objects as u64,
                                limit: MAX_OBJECTS as u64,
                            });
                        }
                        let obj = match self.src.object_at(addr, path.clone()) {
                            Ok(o) => o,
                            Err(e) => {
                                self.skip(&path, e);
                                continue;
                            }
                        };
                        let made: Option<ObjectId> = match &obj {
                            Object::Group(sub) => match self.w.create_group(gd, &name) {
                                Ok(sd) => {
                                    self.report.groups += 1;
                                    stack.push((sub.clone(), sd));
                                    Some(sd.into())
                                }
                                Err(e) => {
                                    self.skip(&path, e);
                                    None
                                }
                            },
                            Object::Dataset(ds) => match self.copy_dataset(ds, gd, &name) {
                                Ok(Some(d)) => {
                                    self.report.datasets += 1;
                                    Some(d.into())
                                }
                                Ok(None) => None,
                                Err(e) => {
                                    self.skip(&path, e);
                                    None
                                }
                            },
                            Object::NamedDatatype(t) => {
                                match self.w.commit_datatype(gd, &name, t.dtype.clone()) {
                                    Ok(d) => {
                                        self.named.insert(addr, d);
                                        Some(d.into())
                                    }
                                    Err(e) => {
                                        self.skip(&path, e);
                                        None
                                    }
                                }
                            }
                        };
                        if let Some(id) = made {
                            self.map.insert(addr, id);
                            self.attrs_of(&obj, id);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the object at `addr` is a committed datatype.
    fn is_named_type(&self, addr: u64) -> bool {
        self.src.header(addr).is_ok_and(|h| {
            h.has(types::DATATYPE)
                && !h.has(types::LAYOUT)
                && !h.has(types::DATASPACE)
                && !h.has(types::LINK_INFO)
                && !h.has(types::SYMBOL_TABLE)
        })
    }

    /// Create the copy of `ds`, of the copied committed type when its type is one.
    fn create(
        &mut self,
        ds: &Dataset,
        parent: GroupId,
        name: &str,
        spec: DatasetSpec,
        data: impl Into<DatasetData>,
    ) -> Result<DatasetId> {
        let named = ds
            .header()
            .first(types::DATATYPE)
            .filter(|m| m.is_shared())
            .and_then(|m| {
                SharedRef::decode(&mut m.cursor("shared datatype"), self.src.sizes()).ok()
            })
            .and_then(|r| match r {
                SharedRef::ObjectHeader(a) => self.named.get(&a).copied(),
                SharedRef::Heap(_) => None,
            });
        match named {
            Some(t) => self.w.create_dataset_with_type(parent, name, spec, t, data),
            None => self.w.create_dataset(parent, name, spec, data),
        }
    }

    /// Copy one dataset; `Ok(None)` when skipped (and reported).
    fn copy_dataset(
        &mut self,
        ds: &Dataset,
        parent: GroupId,
        name: &str,
    ) -> Result<Option<DatasetId>> {
        let path = ds.path().to_string();
        if ds.layout_kind() == "virtual" {
            self.skip(&path, "virtual dataset");
            return Ok(None);
        }
        if ds.external_files().is_some() {
            self.note(format!("{path}: external storage copied into the file"));
        }
        let dtype = ds.dtype().clone();
        let plain = !dtype.has_vlen_or_ref();
        let space = space_of(ds.dataspace());
        let simple = matches!(space, Space::Simple { .. });
        let mut spec = DatasetSpec {
            dtype: dtype.clone(),
            shape: space,
            layout: Layout::Contiguous,
            fill_value: None,
        };
        if let (true, Some(f)) = (plain, ds.fill_value().bytes()) {
            if f.len() as u64 == dtype.size() {
                spec.fill_value = Some(f.to_vec());
            }
        }
        let choice = self
            .policy
            .dataset(ds)
            .or_else(|| self.opts.choice_for(&path).cloned());
        let filter = choice
            .as_ref()
            .map_or_else(|| self.opts.filter.clone(), |c| c.filter.clone());
        let stored_chunks = ds.chunk_dims().map(|c| {
            let rank = ds.shape().len();
            c.get(..rank).unwrap_or(c).to_vec()
        });
        let src_chunks = match choice.and_then(|c| c.chunk) {
            Some(c) => c,
            None => stored_chunks.clone(),
        };
        let esize = dtype.size();
        // partial edge chunks stored unfiltered: the writer cannot say so, re-encode
        let edge_unfiltered = matches!(
            ds.layout(),
            crate::hdf5fmt::messages::layout::Layout::Chunked { flags, .. } if flags & 1 != 0
        );
        // keep + chunked + fixed-size values: copy stored chunks as they are
        if let (FilterChoice::Keep, Some(chunk), true, false, true) = (
            &filter,
            &src_chunks,
            plain,
            edge_unfiltered,
            src_chunks == stored_chunks,
        ) {
            spec = spec.chunked(chunk, ds.filters().to_vec());
            let d = self.create(ds, parent, name, spec, DatasetData::None)?;
            if let Some(params) = ds.chunk_params() {
                let recs = chunk_index::chunks(self.src.source(), self.src.sizes(), &params)?;
                for r in recs {
                    let coords: Vec<u64> = r
                        .offset
                        .iter()
                        .zip(chunk.iter())
                        .map(|(o, c)| o / c.max(&1))
                        .collect();
                    // chunks left beyond a shrunken extent cannot be read: drop them
                    let outside = coords
                        .iter()
                        .zip(ds.shape().iter().zip(chunk.iter()))
                        .any(|(&s, (&d, &c))| s >= d.div_ceil(c.max(1)));
                    if outside {
                        self.note(format!(
                            "{path}: chunk {:?} outside the extent dropped",
                            r.offset
                        ));
                        continue;
                    }
                    let bytes = chunk_index::stored_bytes(self.src.source(), &r)?.into_owned();
                    self.w.write_raw_chunk(d, &coords, bytes, r.filter_mask)?;
                    self.report.raw_chunks += 1;
                }
            }
            return Ok(Some(d));
        }
        let pipeline: Vec<FilterSpec> = match &filter {
            FilterChoice::Keep => ds.filters().to_vec(),
            FilterChoice::None => Vec::new(),
            FilterChoice::Pipeline(p) => p.clone(),
        };
        let chunk = match (&src_chunks, simple) {
            (Some(c), _) => Some(c.clone()),
            (None, true) if !pipeline.is_empty() => {
                let shape = ds.shape();
                let total = shape.iter().try_fold(esize, |a, &d| a.checked_mul(d));
                // small datasets: one chunk holding everything
                if shape.iter().all(|&d| d > 0) && total.is_some_and(|t| t <= 64 * 1024) {
                    Some(shape.to_vec())
                } else {
                    Some(guess_chunk(shape, esize))
                }
            }
            _ => None,
        };
        match chunk {
            Some(c) => spec = spec.chunked(&c, pipeline),
            None if ds.layout_kind() == "compact" => spec = spec.compact(),
            None => {}
        }
        if super::has_reference(&dtype) {
            // written once every object exists
            let d = self.create(ds, parent, name, spec, DatasetData::None)?;
            self.pending.push(Pending::Data {
                path,
                dst: d,
                src: Box::new(ds.clone()),
            });
            return Ok(Some(d));
        }
        if ds.storage_size()? == 0 && plain {
            // nothing stored: the copy reads as the fill value too
            return Ok(Some(self.create(
                ds,
                parent,
                name,
                spec,
                DatasetData::None,
            )?));
        }
        if let (
            true,
            Layout::Chunked {
                chunk_dims,
                filters,
            },
        ) = (plain, &spec.layout)
        {
            // chunk by chunk: bounded memory, unstored chunks stay unstored
            let target = Target::new(ds, chunk_dims, filters, spec.fill_value.as_deref());
            let same_shape = stored_chunks.as_deref() == Some(chunk_dims.as_slice());
            let d = self.create(ds, parent, name, spec, DatasetData::None)?;
            let done = if same_shape {
                chunkwise::stored_chunks(ds, &mut self.w, d, &target)?
            } else {
                chunkwise::by_rows(ds, &mut self.w, d, &target)?
            };
            if done.outside > 0 {
                self.note(format!(
                    "{path}: {} chunk(s) outside the extent dropped",
                    done.outside
                ));
            }
            self.report.encoded_chunks += done.chunks;
            return Ok(Some(d));
        }
        if plain && spec.layout == Layout::Contiguous && !ds.shape().is_empty() {
            let elem = usize::try_from(esize)
                .map_err(|_| Error::InvalidArgument("bad element size".into()))?;
            let d = self.create(ds, parent, name, spec, DatasetData::None)?;
            chunkwise::contiguous_by_slabs(ds, &mut self.w, d, elem)?;
            return Ok(Some(d));
        }
        let raw = ds.read_all_raw()?;
        let data = match self.values(&path, &dtype, raw)? {
            AttrData::Elements(e) => DatasetData::Elements(e),
            AttrData::Raw(r) => DatasetData::Raw(r),
            _ => DatasetData::None,
        };
        Ok(Some(self.create(ds, parent, name, spec, data)?))
    }
}
