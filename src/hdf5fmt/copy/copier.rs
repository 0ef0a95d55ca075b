//! The walk of `h5 copy`: every object reached by hard links is created once
//! (a second hard link to it becomes a second link to the same copy), soft and
//! external links are copied as links, and values holding references are
//! written in a second pass, once every object they may point at exists.

use std::collections::HashMap;

use super::choices::{guess_chunk, has_reference, keep_pipeline, space_of};
use super::chunkwise::{self, Target};
use super::options::{CopyOptions, CopyReport, FilterChoice, MAX_OBJECTS};
use super::policy::{CopyPolicy, KeepAll};
use super::raw;
use super::values::Ctx;
use crate::attribute::{self, Attribute, AttributeEntry};
use crate::dataset::Dataset;
use crate::datatype::Datatype;
use crate::error::{Error, Result};
use crate::file::{File, Object};
use crate::group::Group;
use crate::link::join_path;
use crate::messages::link::Link;
use crate::messages::shared::SharedRef;
use crate::messages::types;
use crate::object_header::ObjectHeader;
use crate::write::{
    AttrData, AttrValue, CreationOrder, DatasetData, DatasetId, DatasetSpec, DatatypeId,
    FileWriter, GroupId, Layout, ObjectId, SpaceKind,
};
use purehdf_filters::FilterSpec;

/// A value holding references, written after the walk.
enum Pending {
    /// Every attribute of an object one of whose attributes holds references
    /// (all of them, so that their order is kept).
    Attrs {
        path: String,
        obj: ObjectId,
        attrs: Vec<AttributeEntry>,
        /// The policy's attributes, written after `attrs`.
        extra: Vec<(String, AttrValue)>,
    },
    Data {
        path: String,
        dst: DatasetId,
        src: Box<Dataset>,
        /// Where the dataset is linked (removed again if its values fail).
        parent: GroupId,
        name: String,
    },
}

/// The copy in progress.
pub(super) struct Copier<'a> {
    pub src: &'a File,
    pub w: &'a mut FileWriter,
    pub opts: &'a CopyOptions,
    /// Per-dataset choice of keep or re-encode (default: `opts.filter`).
    pub choose: Option<&'a dyn Fn(&Dataset) -> FilterChoice>,
    /// Per-object decisions of a tool driving the copy (skip, attributes,
    /// soft-link targets, per-dataset filter and chunks); default: copy all.
    pub policy: &'a dyn CopyPolicy,
    pub report: CopyReport,
    /// Collect [`CopyReport::digests`] of re-encoded datasets.
    pub digests: bool,
    /// Source header address → its copy.
    map: HashMap<u64, ObjectId>,
    pending: Vec<Pending>,
    objects: usize,
    /// Source header address of each committed datatype → its copy.
    types: HashMap<u64, DatatypeId>,
    /// Each copied dataset by its object handle.
    datasets: HashMap<ObjectId, DatasetId>,
    /// Datasets (attribute `None`) and attributes whose source datatype is the
    /// committed datatype at this source address: shared once the walk is over.
    shares: Vec<(ObjectId, Option<String>, u64)>,
    /// The group the copy starts in (anonymous committed datatypes are
    /// committed there, then unlinked).
    top: Option<GroupId>,
}

/// Creation-order flag bits (1 tracked, 2 indexed) of a link info or attribute
/// info message of `h` (byte 1 of either; 0 when absent); for attributes also
/// those of a version 2 header's flags (bits 2 and 3), which libhdf5 sets
/// even when the object has no attribute info message.
fn order_bits(file: &File, h: &ObjectHeader, mtype: u16) -> u8 {
    let msg = h
        .first(mtype)
        .and_then(|m| file.message_body(m).ok())
        .and_then(|b| b.get(1).copied())
        .map_or(0, |f| f & 3);
    let header = if mtype == types::ATTRIBUTE_INFO && h.version == 2 {
        (h.flags >> 2) & 3
    } else {
        0
    };
    msg | header
}

/// The source address of the committed datatype a dataset's datatype message
/// points at.
fn committed_type(file: &File, h: &ObjectHeader) -> Option<u64> {
    let m = h.first(types::DATATYPE).filter(|m| m.is_shared())?;
    match SharedRef::decode(&mut m.cursor("datatype message"), file.sizes()) {
        Ok(SharedRef::ObjectHeader(a)) => Some(a),
        _ => None,
    }
}

impl<'a> Copier<'a> {
    pub(super) fn new(src: &'a File, w: &'a mut FileWriter, opts: &'a CopyOptions) -> Self {
        Self::with_policy(src, w, opts, &KeepAll)
    }

    pub(super) fn with_policy(
        src: &'a File,
        w: &'a mut FileWriter,
        opts: &'a CopyOptions,
        policy: &'a dyn CopyPolicy,
    ) -> Self {
        Copier {
            src,
            w,
            opts,
            choose: None,
            policy,
            report: CopyReport::default(),
            digests: false,
            map: HashMap::new(),
            pending: Vec::new(),
            objects: 0,
            types: HashMap::new(),
            datasets: HashMap::new(),
            shares: Vec::new(),
            top: None,
        }
    }

    fn skip(&mut self, path: &str, why: impl std::fmt::Display) {
        self.report.skipped.push(format!("{path}: {why}"));
    }

    /// A dataset created but not filled: unlink it (no empty placeholder is
    /// left behind) and report it as skipped.
    fn drop_dataset(&mut self, path: &str, parent: GroupId, name: &str, why: Error) {
        if self.w.remove_link(parent, name).is_ok() {
            self.report.datasets = self.report.datasets.saturating_sub(1);
        }
        self.skip(path, format!("not copied ({why})"));
    }

    /// [`Copier::copy_dataset`]; on failure after the dataset was created its
    /// link is removed again, and the failure is reported as skipped.
    fn copy_dataset_or_drop(
        &mut self,
        ds: &Dataset,
        parent: GroupId,
        name: &str,
    ) -> Result<Option<DatasetId>> {
        let before = self.w.object_count();
        match self.copy_dataset(ds, parent, name) {
            Ok(d) => Ok(d),
            Err(e) => {
                if self.w.object_count() > before {
                    let _ = self.w.remove_link(parent, name);
                }
                self.skip(ds.path(), format!("not copied ({e})"));
                Ok(None)
            }
        }
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

    fn copy_attrs(
        &mut self,
        path: &str,
        mut attrs: Vec<AttributeEntry>,
        dst: ObjectId,
        extra: Vec<(String, AttrValue)>,
    ) {
        attrs.retain(|a| {
            let name = &a.attribute.name;
            self.policy.keep_attr(path, name) && !extra.iter().any(|(n, _)| n == name)
        });
        if attrs.iter().any(|a| has_reference(&a.attribute.dtype)) {
            self.pending.push(Pending::Attrs {
                path: path.to_string(),
                obj: dst,
                attrs,
                extra,
            });
            return;
        }
        self.write_attrs(path, dst, attrs, extra);
    }

    fn write_attrs(
        &mut self,
        path: &str,
        dst: ObjectId,
        attrs: Vec<AttributeEntry>,
        extra: Vec<(String, AttrValue)>,
    ) {
        for a in attrs {
            let where_ = format!("{path}@{}", a.attribute.name);
            if let Some(t) = a.committed_type {
                self.shares.push((dst, Some(a.attribute.name.clone()), t));
            }
            self.write_attr(&where_, dst, a.attribute);
        }
        for (name, value) in extra {
            match self.w.set_attr(dst, &name, value) {
                Ok(()) => self.report.attributes += 1,
                Err(e) => self.skip(&format!("{path}@{name}"), e),
            }
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
    pub(super) fn finish(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            match p {
                Pending::Attrs {
                    path,
                    obj,
                    attrs,
                    extra,
                } => self.write_attrs(&path, obj, attrs, extra),
                Pending::Data {
                    path,
                    dst,
                    src,
                    parent,
                    name,
                } => {
                    let res = src
                        .read_all_raw()
                        .and_then(|raw| self.values(&path, src.dtype(), raw))
                        .and_then(|v| match v {
                            AttrData::Elements(e) => self.w.set_data(dst, e),
                            AttrData::Raw(r) => self.w.set_data(dst, r),
                            _ => Ok(()),
                        });
                    if let Err(e) = res {
                        self.drop_dataset(&path, parent, &name, e);
                    }
                }
            }
        }
        // committed datatypes met after the objects using them exist now
        let shares = std::mem::take(&mut self.shares);
        for &(_, _, addr) in &shares {
            self.commit_anonymous(addr);
        }
        for (obj, attr, addr) in shares {
            let Some(&t) = self.types.get(&addr) else {
                self.note(format!(
                    "{obj:?}: committed datatype at {addr:#x} not reachable by a link: copied inline"
                ));
                continue;
            };
            let res = match &attr {
                Some(name) => self.w.share_attr_datatype(obj, name, t),
                None => match self.datasets.get(&obj) {
                    Some(&d) => self.w.share_datatype(d, t),
                    None => Ok(()),
                },
            };
            if let Err(e) = res {
                self.note(format!("committed datatype not shared: {e}"));
            }
        }
    }

    /// A committed datatype no link reaches (libhdf5's `H5Tcommit_anon`, or
    /// one whose links were all removed) but that datasets or attributes
    /// use: committed again, anonymous too (linked, then unlinked), so that
    /// its users stay committed rather than becoming inline.
    fn commit_anonymous(&mut self, addr: u64) {
        let Some(top) = self.top else { return };
        if self.types.contains_key(&addr) {
            return;
        }
        let dtype = match self.src.object_at(addr, String::new()) {
            Ok(Object::NamedDatatype(t)) => t.dtype,
            _ => return,
        };
        let name = format!(".purehdf-anonymous-datatype-{addr:x}");
        let made = self
            .w
            .commit_datatype(top, &name, dtype)
            .and_then(|t| self.w.remove_link(top, &name).map(|()| t));
        match made {
            Ok(t) => {
                self.types.insert(addr, t);
            }
            Err(e) => self.note(format!(
                "committed datatype at {addr:#x} (anonymous): {e}; copied inline"
            )),
        }
    }

    /// Copy the attributes of the object with header `h`, with their
    /// creation-order flags and order, then the policy's `extra` ones.
    fn attrs_of(
        &mut self,
        path: &str,
        h: &ObjectHeader,
        dst: ObjectId,
        extra: Vec<(String, AttrValue)>,
    ) {
        let bits = order_bits(self.src, h, types::ATTRIBUTE_INFO);
        if bits != 0 {
            if let Err(e) = self
                .w
                .set_attr_creation_order(dst, CreationOrder::from_bits(bits))
            {
                self.note(format!("{path}: attribute creation order: {e}"));
            }
        }
        match attribute::read_entries(self.src, h) {
            Ok(a) => self.copy_attrs(path, a, dst, extra),
            Err(e) => self.skip(path, format!("attributes: {e}")),
        }
    }

    /// The links of `g` in the order libhdf5 lists them (creation order when
    /// tracked), with the creation-order flags set on its copy `gd`.
    fn links_of(&mut self, g: &Group, gd: GroupId) -> Result<Vec<(String, Link)>> {
        let bits = order_bits(self.src, g.header(), types::LINK_INFO);
        if bits == 0 {
            return g.links();
        }
        self.w
            .set_link_creation_order(gd, CreationOrder::from_bits(bits))?;
        g.links_by_creation_order()
    }

    /// Copy the tree under `root` (already created as `dst`).
    pub(super) fn copy_tree(&mut self, root: Group, dst: GroupId) -> Result<()> {
        self.map.insert(root.address(), dst.into());
        self.top.get_or_insert(dst);
        self.attrs_of(root.path(), root.header(), dst.into(), Vec::new());
        // (group, its copy); a group is walked once, when first copied
        let mut stack = vec![(root, dst)];
        while let Some((g, gd)) = stack.pop() {
            let links = match self.links_of(&g, gd) {
                Ok(l) => l,
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
                        let target = self.policy.soft_target(&target);
                        match self.w.soft_link(gd, &name, &target) {
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
                    Link::UserDefined { kind, data } => {
                        // Carried through as stored: we cannot follow it, and
                        // neither can libhdf5 without the class's handler.
                        if let Err(e) = self.w.user_defined_link(gd, &name, kind, &data) {
                            self.skip(&path, e)
                        }
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
                                    self.policy.copied_group(&path, sd);
                                    stack.push((sub.clone(), sd));
                                    Some(sd.into())
                                }
                                Err(e) => {
                                    self.skip(&path, e);
                                    None
                                }
                            },
                            Object::Dataset(ds) => match self.copy_dataset_or_drop(ds, gd, &name) {
                                Ok(Some(d)) => {
                                    self.report.datasets += 1;
                                    if let Some(t) = committed_type(self.src, ds.header()) {
                                        self.shares.push((d.into(), None, t));
                                    }
                                    self.datasets.insert(d.into(), d);
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
                                        self.types.insert(addr, d);
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
                            let extra = self.policy.extra_attrs(&obj)?;
                            self.attrs_of(obj.path(), obj.header(), id, extra);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A virtual dataset stays virtual: its stored type, extent and fill value
    /// with its mappings (source files named as the policy says; nothing is
    /// read from the sources).
    fn copy_virtual(&mut self, ds: &Dataset, parent: GroupId, name: &str) -> Result<DatasetId> {
        let mut maps = crate::virtual_layout::mappings(ds)?;
        for m in &mut maps {
            m.source_file = self.policy.virtual_source(ds.path(), &m.source_file);
        }
        let dtype = ds.dtype().clone();
        let mut spec = DatasetSpec {
            dtype: dtype.clone(),
            shape: space_of(ds.dataspace()),
            layout: Layout::Contiguous,
            fill_value: None,
        };
        if let Some(f) = ds.fill_value().bytes() {
            if f.len() as u64 == dtype.size() && !dtype.has_vlen_or_ref() {
                spec.fill_value = Some(f.to_vec());
            }
        }
        let spec = crate::virtual_layout::encode::virtual_spec(spec, &maps)?;
        let d = self
            .w
            .create_dataset(parent, name, spec, DatasetData::None)?;
        self.report.virtual_datasets += 1;
        Ok(d)
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
            return self.copy_virtual(ds, parent, name).map(Some);
        }
        if ds.external_files().is_some() {
            self.note(format!("{path}: external storage copied into the file"));
        }
        let dtype = ds.dtype().clone();
        let plain = !dtype.has_vlen_or_ref();
        let space = space_of(ds.dataspace());
        let simple = space.kind == SpaceKind::Simple;
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
        // a tool's override (policy, then CopyOptions::datasets), else the
        // per-dataset chooser, else the options' filter
        let over = self
            .policy
            .dataset(ds)
            .or_else(|| self.opts.choice_for(&path).cloned());
        let choice = match (&over, self.choose) {
            (Some(c), _) => c.filter.clone(),
            (None, Some(f)) => f(ds),
            (None, None) => self.opts.filter.clone(),
        };
        let stored_chunks = raw::chunk_shape(ds);
        let src_chunks = match over.and_then(|c| c.chunk) {
            Some(c) => c,
            None => stored_chunks.clone(),
        };
        let esize = dtype.size();
        // keep + stored chunks copyable as they are
        if let (FilterChoice::Keep, Some(chunk), true, true) = (
            &choice,
            &src_chunks,
            raw::raw_copyable(ds),
            src_chunks == stored_chunks,
        ) {
            spec = spec.chunked_stored(chunk, ds.filters().to_vec());
            let d = self
                .w
                .create_dataset(parent, name, spec, DatasetData::None)?;
            let done = raw::copy_stored_chunks(self.src, ds, self.w, d)?;
            if done.outside > 0 {
                self.note(format!(
                    "{path}: {} chunk(s) outside the extent dropped",
                    done.outside
                ));
            }
            self.report.raw_chunks += done.chunks;
            return Ok(Some(d));
        }
        let pipeline: Vec<FilterSpec> = match &choice {
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
        // the source's own pipeline on the source's chunk shape: its client
        // data was completed by the library that wrote it and describes the
        // re-encoded chunks as it stands, so it is stored unchanged (no
        // set-local step: every id, flag, name and cd_values slot kept)
        let as_stored = matches!(choice, FilterChoice::Keep)
            && chunk.is_some()
            && chunk == stored_chunks
            && !pipeline.is_empty();
        match chunk {
            Some(c) => spec = spec.chunked_stored(&c, pipeline),
            None if ds.layout_kind() == "compact" => spec = spec.compact(),
            None => {}
        }
        let create = |w: &mut FileWriter, spec: DatasetSpec, data: DatasetData| {
            let d = w.create_dataset(parent, name, spec, data)?;
            if as_stored {
                keep_pipeline(ds, w, d)?;
            }
            Ok::<_, Error>(d)
        };
        if has_reference(&dtype) {
            // written once every object exists
            let d = create(self.w, spec, DatasetData::None)?;
            self.pending.push(Pending::Data {
                path,
                dst: d,
                src: Box::new(ds.clone()),
                parent,
                name: name.to_string(),
            });
            return Ok(Some(d));
        }
        if ds.storage_size()? == 0 && plain {
            // nothing stored: the copy reads as the fill value too
            return Ok(Some(create(self.w, spec, DatasetData::None)?));
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
            let target = Target::new(
                ds,
                chunk_dims,
                filters,
                spec.fill_value.as_deref(),
                as_stored,
            );
            let same_shape = stored_chunks.as_deref() == Some(chunk_dims.as_slice());
            let d = create(self.w, spec, DatasetData::None)?;
            let mut dig = self.digests.then(super::digest::DatasetDigest::default);
            let done = if same_shape {
                chunkwise::stored_chunks(ds, self.w, d, &target, dig.as_mut())?
            } else {
                chunkwise::by_rows(ds, self.w, d, &target, dig.as_mut())?
            };
            if let Some(g) = dig {
                self.report.digests.insert(path.clone(), g.finish());
            }
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
            let d = self
                .w
                .create_dataset(parent, name, spec, DatasetData::None)?;
            chunkwise::contiguous_by_slabs(ds, self.w, d, elem)?;
            return Ok(Some(d));
        }
        let raw = ds.read_all_raw()?;
        let data = match self.values(&path, &dtype, raw)? {
            AttrData::Elements(e) => DatasetData::Elements(e),
            AttrData::Raw(r) => DatasetData::Raw(r),
            _ => DatasetData::None,
        };
        Ok(Some(create(self.w, spec, data)?))
    }
}
