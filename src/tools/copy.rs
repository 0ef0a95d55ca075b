//! `h5 copy`: re-create every group, dataset, attribute and soft link of one HDF5
//! file in a new one through [`FileWriter`] (HDF5 File Format Specification III–IV:
//! objects are rebuilt, not byte-copied), optionally changing the filter pipeline
//! (IV.A.2.l). With [`FilterChoice::Keep`] stored chunks are copied as they are,
//! filter masks included; any other choice decodes and re-encodes.
//!
//! What the writer cannot express is skipped and reported: external and
//! user-defined links, named datatypes, references, nested variable-length data.
//! Hard-link aliases (one object reached by several paths) are copied once per path.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::filters::{ids, FilterSpec};
use crate::hdf5fmt::attribute::Attribute;
use crate::hdf5fmt::chunk_index;
use crate::hdf5fmt::dataset::Dataset;
use crate::hdf5fmt::datatype::Datatype;
use crate::hdf5fmt::file::{File, Object};
use crate::hdf5fmt::group::Group;
use crate::hdf5fmt::link::join_path;
use crate::hdf5fmt::messages::dataspace::{Dataspace, SpaceKind};
use crate::hdf5fmt::messages::link::Link;
use crate::hdf5fmt::write::{
    AttrData, AttrValue, DatasetData, DatasetId, DatasetSpec, FileWriter, GroupId, Space,
};

/// Most objects one copy creates (hard-link aliases are copied once per path).
pub const MAX_OBJECTS: usize = 1_000_000;

/// What to do with each dataset's filter pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilterChoice {
    /// Same layout and pipeline; stored chunks copied without decoding.
    Keep,
    /// No filters (chunked datasets stay chunked, others keep their layout).
    None,
    /// This pipeline on every dataset (unfiltered datasets get chunked).
    Pipeline(Vec<FilterSpec>),
}

/// Options of [`copy_file`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyOptions {
    pub filter: FilterChoice,
    /// Worker threads for encoding chunks (with the `parallel` feature; 0 = all cores).
    pub threads: usize,
}

impl Default for CopyOptions {
    fn default() -> Self {
        CopyOptions {
            filter: FilterChoice::Keep,
            threads: 0,
        }
    }
}

/// What a copy did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyReport {
    pub groups: usize,
    pub datasets: usize,
    pub attributes: usize,
    pub soft_links: usize,
    /// Chunks copied without decoding.
    pub raw_chunks: usize,
    /// Objects, links or attributes not copied, with the reason.
    pub skipped: Vec<String>,
    /// Other things worth knowing (aliases copied twice, lossy strings...).
    pub notes: Vec<String>,
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}

fn num(text: &str, what: &str) -> Result<i64> {
    text.trim()
        .parse()
        .map_err(|_| bad(format!("bad {what} {text:?}")))
}

fn spec(id: u32, cd_values: Vec<u32>) -> FilterSpec {
    FilterSpec {
        id,
        // h5py marks the filters it adds as optional
        flags: 1,
        cd_values,
        name: None,
    }
}

/// One stage of a `--filter` pipeline: `shuffle`, `deflate:L`, `zstd:L`, `lz4`,
/// `blosc2:CODEC:L:SHUFFLE`. The client data is what h5py/hdf5plugin pass; the
/// writer completes it (set-local) as the plugins do.
fn parse_stage(text: &str) -> Result<FilterSpec> {
    let parts: Vec<&str> = text.split(':').collect();
    match parts.as_slice() {
        ["shuffle"] => Ok(spec(ids::SHUFFLE, Vec::new())),
        ["deflate" | "gzip"] => Ok(spec(ids::DEFLATE, vec![4])),
        ["deflate" | "gzip", l] => {
            let l = num(l, "deflate level")?;
            if !(0..=9).contains(&l) {
                return Err(bad("deflate level must be 0-9"));
            }
            Ok(spec(ids::DEFLATE, vec![l as u32]))
        }
        ["zstd"] => Ok(spec(ids::ZSTD, vec![3])),
        ["zstd", l] => {
            let l = num(l, "zstd level")?;
            if !(-131_072..=22).contains(&l) {
                return Err(bad("zstd level out of range"));
            }
            Ok(spec(ids::ZSTD, vec![l as i32 as u32]))
        }
        ["lz4"] => Ok(spec(ids::LZ4, vec![0])),
        ["blosc2", rest @ ..] => {
            let codec = match rest.first().copied().unwrap_or("blosclz") {
                "blosclz" => 0,
                "lz4" => 1,
                "lz4hc" => 2,
                "zlib" => 4,
                "zstd" => 5,
                c => return Err(bad(format!("unknown blosc2 codec {c:?}"))),
            };
            let level = match rest.get(1) {
                Some(l) => num(l, "blosc2 level")?,
                None => 5,
            };
            if !(0..=9).contains(&level) {
                return Err(bad("blosc2 level must be 0-9"));
            }
            let shuffle = match rest.get(2).copied().unwrap_or("shuffle") {
                "noshuffle" | "none" => 0,
                "shuffle" => 1,
                "bitshuffle" => 2,
                s => return Err(bad(format!("unknown blosc2 shuffle {s:?}"))),
            };
            if rest.len() > 3 {
                return Err(bad(format!("bad blosc2 filter {text:?}")));
            }
            Ok(spec(
                ids::BLOSC2,
                vec![0, 0, 0, 0, level as u32, shuffle, codec],
            ))
        }
        _ => Err(bad(format!("unknown filter {text:?}"))),
    }
}

/// Parse a `--filter` argument: `keep`, `none`, or stages joined by `+`.
pub fn parse_filter(text: &str) -> Result<FilterChoice> {
    match text.trim() {
        "keep" => Ok(FilterChoice::Keep),
        "none" => Ok(FilterChoice::None),
        t => Ok(FilterChoice::Pipeline(
            t.split('+').map(parse_stage).collect::<Result<_>>()?,
        )),
    }
}

/// h5py's `guess_chunk`: halve dimensions in turn until a chunk is near a target
/// size that grows with the dataset (8 KiB to 1 MiB).
pub fn guess_chunk(shape: &[u64], type_size: u64) -> Vec<u64> {
    const BASE: f64 = 16.0 * 1024.0;
    const MIN: f64 = 8.0 * 1024.0;
    const MAX: f64 = 1024.0 * 1024.0;
    let mut chunks: Vec<f64> = shape
        .iter()
        .map(|&d| if d == 0 { 1024.0 } else { d as f64 })
        .collect();
    if chunks.is_empty() {
        return Vec::new();
    }
    let ts = type_size.max(1) as f64;
    let dset_size = chunks.iter().product::<f64>() * ts;
    let target = (BASE * 2f64.powf((dset_size / (1024.0 * 1024.0)).log10())).clamp(MIN, MAX);
    let n = chunks.len();
    let mut idx = 0usize;
    loop {
        let count: f64 = chunks.iter().product();
        let bytes = count * ts;
        if (bytes < target || (bytes - target).abs() / target < 0.5) && bytes < MAX {
            break;
        }
        if count <= 1.0 {
            break;
        }
        if let Some(c) = chunks.get_mut(idx % n) {
            *c = (*c / 2.0).ceil();
        }
        idx += 1;
    }
    chunks.iter().map(|&c| c.max(1.0) as u64).collect()
}

/// The writer's dataspace for a reader's dataspace (`fixed`: drop maximum sizes
/// equal to the current ones).
fn space_of(ds: &Dataspace) -> Space {
    match ds.kind {
        SpaceKind::Scalar => Space::Scalar,
        SpaceKind::Null => Space::Null,
        SpaceKind::Simple => {
            let fixed = ds.max_dims.len() != ds.dims.len()
                || ds
                    .max_dims
                    .iter()
                    .zip(&ds.dims)
                    .all(|(m, d)| *m == Some(*d));
            Space::Simple {
                dims: ds.dims.clone(),
                max: if fixed {
                    Vec::new()
                } else {
                    ds.max_dims.clone()
                },
            }
        }
    }
}

fn has_reference(dt: &Datatype) -> bool {
    match dt {
        Datatype::Reference { .. } => true,
        Datatype::Compound { members, .. } => members.iter().any(|m| has_reference(&m.dtype)),
        Datatype::Array { base, .. }
        | Datatype::Enum { base, .. }
        | Datatype::VarSequence { base, .. } => has_reference(base),
        _ => false,
    }
}

/// How the values of a datatype can be carried over.
enum Values {
    /// Fixed-size bytes, copied as stored.
    Raw,
    /// Variable-length strings (re-stored in the new file's global heap).
    Strings(Datatype),
    /// Variable-length sequences of a fixed-size base.
    Sequences(Datatype),
}

fn values_kind(dt: &Datatype) -> std::result::Result<Values, String> {
    if has_reference(dt) {
        return Err("references are not rewritten".into());
    }
    match dt {
        Datatype::VarString { pad, cset, .. } => Ok(Values::Strings(Datatype::VarString {
            size: 16,
            pad: *pad,
            cset: *cset,
        })),
        Datatype::VarSequence { base, .. } => {
            if base.has_vlen_or_ref() {
                Err("nested variable-length data".into())
            } else {
                Ok(Values::Sequences(Datatype::VarSequence {
                    size: 16,
                    base: base.clone(),
                }))
            }
        }
        d if d.has_vlen_or_ref() => Err("variable-length data inside a compound or array".into()),
        _ => Ok(Values::Raw),
    }
}

/// Resolve each `elem`-byte element of `data` through the global heap.
fn vlen_elements(file: &File, data: &[u8], elem: usize) -> Result<Vec<Vec<u8>>> {
    if elem == 0 {
        return Ok(Vec::new());
    }
    data.chunks_exact(elem)
        .map(|e| file.vlen_bytes(e))
        .collect()
}

fn strings(raw: Vec<Vec<u8>>, lossy: &mut usize) -> Vec<String> {
    raw.into_iter()
        .map(|b| {
            // the writer stores Rust strings: text that is not UTF-8 is replaced
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            match String::from_utf8(b.get(..end).unwrap_or_default().to_vec()) {
                Ok(s) => s,
                Err(e) => {
                    *lossy += 1;
                    String::from_utf8_lossy(e.as_bytes()).into_owned()
                }
            }
        })
        .collect()
}

/// The copy in progress.
struct Copier<'a> {
    src: &'a File,
    w: FileWriter,
    opts: &'a CopyOptions,
    report: CopyReport,
    /// First path of each object already copied, by header address.
    seen: HashMap<u64, String>,
    objects: usize,
}

impl Copier<'_> {
    fn skip(&mut self, path: &str, why: impl std::fmt::Display) {
        self.report.skipped.push(format!("{path}: {why}"));
    }

    fn copy_attrs(
        &mut self,
        path: &str,
        attrs: Vec<Attribute>,
        dst: crate::hdf5fmt::write::ObjectId,
    ) {
        for a in attrs {
            let where_ = format!("{path}@{}", a.name);
            let value = match values_kind(&a.dtype) {
                Err(why) => {
                    self.skip(&where_, why);
                    continue;
                }
                Ok(Values::Raw) => AttrValue::raw(a.dtype.clone(), space_of(&a.space), a.data),
                Ok(Values::Strings(dt)) => {
                    let elem = a.dtype.size() as usize;
                    match vlen_elements(self.src, &a.data, elem) {
                        Err(e) => {
                            self.skip(&where_, e);
                            continue;
                        }
                        Ok(v) => {
                            let mut lossy = 0;
                            let s = strings(v, &mut lossy);
                            if lossy > 0 {
                                self.report.notes.push(format!(
                                    "{where_}: {lossy} non-UTF-8 string(s) replaced"
                                ));
                            }
                            AttrValue {
                                dtype: dt,
                                shape: space_of(&a.space),
                                data: AttrData::VarStrings(s),
                            }
                        }
                    }
                }
                Ok(Values::Sequences(dt)) => {
                    let elem = a.dtype.size() as usize;
                    match vlen_elements(self.src, &a.data, elem) {
                        Err(e) => {
                            self.skip(&where_, e);
                            continue;
                        }
                        Ok(v) => AttrValue {
                            dtype: dt,
                            shape: space_of(&a.space),
                            data: AttrData::VarSequences(v),
                        },
                    }
                }
            };
            match self.w.set_attr(dst, &a.name, value) {
                Ok(()) => self.report.attributes += 1,
                Err(e) => self.skip(&where_, e),
            }
        }
    }

    /// Copy the tree under `root` (already created as `dst`).
    fn copy_tree(&mut self, root: Group, dst: GroupId) -> Result<()> {
        self.seen.insert(root.address(), root.path().to_string());
        match root.attributes() {
            Ok(a) => self.copy_attrs(root.path(), a, dst.into()),
            Err(e) => self.skip(root.path(), format!("attributes: {e}")),
        }
        // (group, its copy, header addresses of the group and its ancestors)
        let mut stack = vec![(root, dst, Vec::<u64>::new())];
        while let Some((g, gd, mut ancestors)) = stack.pop() {
            ancestors.push(g.address());
            let links = match g.links() {
                Ok(l) => l,
                Err(e) => {
                    self.skip(g.path(), format!("links: {e}"));
                    continue;
                }
            };
            for (name, link) in links {
                let path = join_path(g.path(), &name);
                match link {
                    Link::Soft(target) => match self.w.soft_link(gd, &name, &target) {
                        Ok(()) => self.report.soft_links += 1,
                        Err(e) => self.skip(&path, e),
                    },
                    Link::External { file, path: p } => self.skip(
                        &path,
                        format!("external link to {file}:{p} (writer has none)"),
                    ),
                    Link::UserDefined { kind, .. } => {
                        self.skip(&path, format!("user-defined link type {kind}"))
                    }
                    Link::Hard(addr) => {
                        if ancestors.contains(&addr) {
                            self.skip(&path, "hard link to an ancestor group (cycle)");
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
                        if let Some(first) = self.seen.get(&addr) {
                            self.report.notes.push(format!(
                                "{path}: hard link to {first}, copied again (writer has no hard links)"
                            ));
                        } else {
                            self.seen.insert(addr, path.clone());
                        }
                        let obj = match self.src.object_at(addr, path.clone()) {
                            Ok(o) => o,
                            Err(e) => {
                                self.skip(&path, e);
                                continue;
                            }
                        };
                        match obj {
                            Object::Group(sub) => match self.w.create_group(gd, &name) {
                                Ok(sd) => {
                                    self.report.groups += 1;
                                    match sub.attributes() {
                                        Ok(a) => self.copy_attrs(&path, a, sd.into()),
                                        Err(e) => self.skip(&path, format!("attributes: {e}")),
                                    }
                                    stack.push((sub, sd, ancestors.clone()));
                                }
                                Err(e) => self.skip(&path, e),
                            },
                            Object::Dataset(ds) => match self.copy_dataset(&ds, gd, &name) {
                                Ok(Some(d)) => {
                                    self.report.datasets += 1;
                                    match ds.attributes() {
                                        Ok(a) => self.copy_attrs(&path, a, d.into()),
                                        Err(e) => self.skip(&path, format!("attributes: {e}")),
                                    }
                                }
                                Ok(None) => {}
                                Err(e) => self.skip(&path, e),
                            },
                            Object::NamedDatatype(_) => {
                                self.skip(&path, "named datatype (writer has none)")
                            }
                        }
                    }
                }
            }
        }
        Ok(())
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
            self.report
                .notes
                .push(format!("{path}: external storage copied into the file"));
        }
        let values = match values_kind(ds.dtype()) {
            Ok(v) => v,
            Err(why) => {
                self.skip(&path, why);
                return Ok(None);
            }
        };
        let dtype = match &values {
            Values::Raw => ds.dtype().clone(),
            Values::Strings(d) | Values::Sequences(d) => d.clone(),
        };
        let space = space_of(ds.dataspace());
        let simple = matches!(space, Space::Simple { .. });
        let mut spec = DatasetSpec {
            dtype,
            shape: space,
            layout: crate::hdf5fmt::write::Layout::Contiguous,
            fill_value: None,
        };
        if let (Values::Raw, Some(f)) = (&values, ds.fill_value().bytes()) {
            if f.len() as u64 == ds.dtype().size() {
                spec.fill_value = Some(f.to_vec());
            }
        }
        let src_chunks = ds.chunk_dims().map(|c| {
            let rank = ds.shape().len();
            c.get(..rank).unwrap_or(c).to_vec()
        });
        let esize = ds.dtype().size();
        // keep + chunked + fixed-size values: copy stored chunks as they are
        if let (FilterChoice::Keep, Some(chunk), Values::Raw) =
            (&self.opts.filter, &src_chunks, &values)
        {
            spec = spec.chunked(chunk, ds.filters().to_vec());
            let d = self
                .w
                .create_dataset(parent, name, spec, DatasetData::None)?;
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
                        self.report.notes.push(format!(
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
        let pipeline: Vec<FilterSpec> = match &self.opts.filter {
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
        let raw = ds.read_all_raw()?;
        let data = match values {
            Values::Raw => DatasetData::Raw(raw),
            Values::Strings(_) => {
                let mut lossy = 0;
                let s = strings(vlen_elements(self.src, &raw, esize as usize)?, &mut lossy);
                if lossy > 0 {
                    self.report
                        .notes
                        .push(format!("{path}: {lossy} non-UTF-8 string(s) replaced"));
                }
                DatasetData::VarStrings(s)
            }
            Values::Sequences(_) => {
                DatasetData::VarSequences(vlen_elements(self.src, &raw, esize as usize)?)
            }
        };
        Ok(Some(self.w.create_dataset(parent, name, spec, data)?))
    }
}

/// Copy `src` to `dst` (written atomically) and say what was copied and skipped.
pub fn copy_file(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    opts: &CopyOptions,
) -> Result<CopyReport> {
    let file = File::open(src.as_ref())?;
    let root = file.root()?;
    let w = FileWriter::create(dst.as_ref())?;
    let mut c = Copier {
        src: &file,
        w,
        opts,
        report: CopyReport::default(),
        seen: HashMap::new(),
        objects: 0,
    };
    let rd = c.w.root();
    c.copy_tree(root, rd)?;
    let Copier { w, report, .. } = c;
    w.commit()?;
    Ok(report)
}

/// [`copy_file`] with chunk encoding on `opts.threads` threads (the writer encodes
/// chunks in parallel when the `parallel` feature is on).
pub fn copy_with_threads(src: &str, dst: &str, opts: &CopyOptions) -> Result<CopyReport> {
    #[cfg(feature = "parallel")]
    if opts.threads > 0 {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(opts.threads)
            .build()
            .map_err(|e| bad(format!("thread pool: {e}")))?;
        return pool.install(|| copy_file(src, dst, opts));
    }
    copy_file(src, dst, opts)
}

/// `h5 copy SRC DST [--filter F] [--threads N]`. Returns the exit code.
pub fn run(args: &[String]) -> u8 {
    const USAGE: &str = "usage: h5 copy SRC DST [--filter keep|none|deflate:4|shuffle+deflate:4|\
blosc2:zstd:3:shuffle|blosc2:lz4:1:bitshuffle|zstd:3|lz4] [--threads N]";
    let mut pos = Vec::new();
    let mut opts = CopyOptions::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--filter" => match it.next().map(|f| parse_filter(f)) {
                Some(Ok(f)) => opts.filter = f,
                Some(Err(e)) => {
                    eprintln!("h5 copy: {e}");
                    return 2;
                }
                None => {
                    eprintln!("{USAGE}");
                    return 2;
                }
            },
            "--threads" => match it.next().and_then(|n| n.parse::<usize>().ok()) {
                Some(n) if n >= 1 => opts.threads = n,
                _ => {
                    eprintln!("{USAGE}");
                    return 2;
                }
            },
            _ => pos.push(a.clone()),
        }
    }
    let [src, dst] = pos.as_slice() else {
        eprintln!("{USAGE}");
        return 2;
    };
    match copy_with_threads(src, dst, &opts) {
        Err(e) => {
            eprintln!("h5 copy: {e}");
            2
        }
        Ok(r) => {
            for s in &r.skipped {
                eprintln!("h5 copy: skipped {s}");
            }
            for n in &r.notes {
                eprintln!("h5 copy: note: {n}");
            }
            println!(
                "copied {} group(s), {} dataset(s), {} attribute(s), {} soft link(s), {} raw chunk(s); {} skipped",
                r.groups,
                r.datasets,
                r.attributes,
                r.soft_links,
                r.raw_chunks,
                r.skipped.len()
            );
            u8::from(!r.skipped.is_empty())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hdf5fmt::write::to_bytes;

    #[test]
    fn guess_chunk_matches_h5py() {
        // values from h5py._hl.filters.guess_chunk
        assert_eq!(guess_chunk(&[100, 100], 8), vec![25, 50]);
        assert_eq!(guess_chunk(&[1000], 4), vec![1000]);
        assert_eq!(guess_chunk(&[10, 50, 100], 2), vec![3, 25, 50]);
        assert_eq!(guess_chunk(&[0, 7], 4), vec![512, 4]);
        assert_eq!(guess_chunk(&[1024, 1024], 4), vec![64, 128]);
        assert_eq!(guess_chunk(&[7], 1), vec![7]);
    }

    #[test]
    fn filters_parse_to_plugin_cd_values() {
        assert_eq!(parse_filter("keep").unwrap(), FilterChoice::Keep);
        assert_eq!(parse_filter("none").unwrap(), FilterChoice::None);
        let FilterChoice::Pipeline(p) = parse_filter("blosc2:zstd:3:shuffle").unwrap() else {
            panic!("not a pipeline")
        };
        assert_eq!(
            (p[0].id, p[0].cd_values.clone()),
            (ids::BLOSC2, vec![0, 0, 0, 0, 3, 1, 5])
        );
        let FilterChoice::Pipeline(p) = parse_filter("blosc2:lz4:1:bitshuffle").unwrap() else {
            panic!("not a pipeline")
        };
        assert_eq!(p[0].cd_values, vec![0, 0, 0, 0, 1, 2, 1]);
        let FilterChoice::Pipeline(p) = parse_filter("shuffle+deflate:4").unwrap() else {
            panic!("not a pipeline")
        };
        assert_eq!(
            p.iter().map(|f| f.id).collect::<Vec<_>>(),
            vec![ids::SHUFFLE, ids::DEFLATE]
        );
        assert_eq!(p[1].cd_values, vec![4]);
        let FilterChoice::Pipeline(p) = parse_filter("zstd:-5").unwrap() else {
            panic!("not a pipeline")
        };
        assert_eq!(p[0].cd_values, vec![4294967291]);
        assert!(parse_filter("deflate:12").is_err());
        assert!(parse_filter("blosc2:snappy:1").is_err());
        assert!(parse_filter("bogus").is_err());
    }

    fn source_file(dir: &Path) -> PathBuf {
        let p = dir.join("src.h5");
        let mut w = FileWriter::create(&p).unwrap();
        let r = w.root();
        let g = w.create_group(r, "g").unwrap();
        let vals: Vec<i32> = (0..1000).collect();
        let spec = DatasetSpec::new(Datatype::int(4, true), &[10, 100])
            .chunked(&[4, 30], vec![spec(ids::DEFLATE, vec![6])])
            .with_maxshape(&[None, Some(100)]);
        let d = w.create_dataset(g, "x", spec, to_bytes(&vals)).unwrap();
        w.set_attr(d, "units", AttrValue::string("mm")).unwrap();
        w.set_attr(g, "n", AttrValue::array(&[1.5f64, 2.5]))
            .unwrap();
        let strs: Vec<String> = vec!["a".into(), "bcd".into()];
        let vs = DatasetSpec::new(
            crate::hdf5fmt::write::vlen_string_type(crate::hdf5fmt::datatype::CharSet::Utf8),
            &[2],
        );
        w.create_dataset(r, "s", vs, strs).unwrap();
        w.soft_link(r, "alias", "/g/x").unwrap();
        w.commit().unwrap();
        p
    }

    use std::path::PathBuf;

    #[test]
    fn copies_read_back_equal() {
        let dir = std::env::temp_dir().join(format!("purehdf-copy-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = source_file(&dir);
        let want = File::open(&src).unwrap();
        let Object::Dataset(wx) = want.object("/g/x").unwrap() else {
            panic!()
        };
        let wdata = wx.read_all_raw().unwrap();
        for (i, f) in [
            "keep",
            "none",
            "blosc2:lz4:1:bitshuffle",
            "shuffle+deflate:4",
            "zstd:3",
            "lz4",
        ]
        .iter()
        .enumerate()
        {
            let dst = dir.join(format!("dst{i}.h5"));
            let opts = CopyOptions {
                filter: parse_filter(f).unwrap(),
                threads: 0,
            };
            let rep = copy_file(&src, &dst, &opts).unwrap();
            assert!(rep.skipped.is_empty(), "{f}: {:?}", rep.skipped);
            assert_eq!(
                (rep.groups, rep.datasets, rep.soft_links, rep.attributes),
                (1, 2, 1, 2),
                "{f}"
            );
            let got = File::open(&dst).unwrap();
            let Object::Dataset(x) = got.object("/g/x").unwrap() else {
                panic!()
            };
            assert_eq!(x.read_all_raw().unwrap(), wdata, "{f}");
            assert_eq!(x.maxshape(), &[None, Some(100)], "{f}");
            assert_eq!(
                x.chunk_dims().map(|c| c[..2].to_vec()),
                Some(vec![4, 30]),
                "{f}"
            );
            let first = x.filters().first().map(|s| s.id);
            match *f {
                "keep" => assert_eq!(first, Some(ids::DEFLATE)),
                "none" => assert_eq!(first, None),
                "blosc2:lz4:1:bitshuffle" => {
                    assert_eq!(first, Some(ids::BLOSC2));
                    assert_eq!(
                        x.filters()[0].cd_values,
                        vec![1, 0, 4, 480, 1, 2, 1, 2, 4, 30]
                    );
                }
                _ => assert!(first.is_some()),
            }
            let Object::Dataset(s) = got.object("/s").unwrap() else {
                panic!()
            };
            let raw = s.read_all_raw().unwrap();
            let texts: Vec<Vec<u8>> = raw.chunks(16).map(|e| got.vlen_bytes(e).unwrap()).collect();
            assert_eq!(texts, vec![b"a".to_vec(), b"bcd".to_vec()]);
            let Object::Dataset(a) = got.object("/alias").unwrap() else {
                panic!()
            };
            assert_eq!(a.read_all_raw().unwrap(), wdata);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
