//! The object-graph copier (`h5 copy`, and medh5 recompress, amend, pack and fix): re-create every group, dataset, attribute and soft link of one HDF5
//! file in a new one through [`FileWriter`] (HDF5 File Format Specification III–IV:
//! objects are rebuilt, not byte-copied), optionally changing the filter pipeline
//! (IV.A.2.l). With [`FilterChoice::Keep`] stored chunks are copied as they are,
//! filter masks included; any other choice decodes and re-encodes, chunk by
//! chunk (only stored chunks when the chunk shape is kept; one row of chunks
//! at a time when a dataset becomes chunked), so memory stays bounded.
//!
//! Every object is created once: a second hard link to it stays a second link
//! to the same object (reference counts follow). Soft and external links are
//! copied as links (never followed), named datatypes are committed again and
//! shared by the datasets and attributes that used them, link and attribute
//! creation order (flags and order) is kept, and object, region and
//! revised references (in datasets and attributes, at any depth inside
//! compounds, arrays and variable-length data) point at the copied objects.
//! Hard links back to an ancestor group (cycles) are kept too. Virtual datasets
//! stay virtual: type, extent, fill value and mappings (source file names as
//! the policy rewrites them, [`hook::CopyPolicy::virtual_source`]); their
//! sources are not read. User-defined links are carried through as stored
//! (class and link information).

use std::path::Path;

use crate::datatype::Datatype;
use crate::error::{Error, Result};
use crate::file::File;
use crate::messages::dataspace::Dataspace;
use crate::write::FileWriter;
use purehdf_filters::{ids, FilterSpec};

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
    /// Filter pipeline choice for every dataset not named in `datasets`.
    pub filter: FilterChoice,
    /// Worker threads for encoding chunks (with the `parallel` feature; 0 = all cores).
    pub threads: usize,
    /// Per-dataset overrides of `filter` by source path (`h5 recompress`: the
    /// selected datasets re-encoded, the rest kept). List every name of a
    /// hard-linked dataset: the copy creates it at the first one it reaches.
    /// Empty (the default): `filter` for every dataset.
    pub datasets: std::collections::BTreeMap<String, DatasetChoice>,
}

impl CopyOptions {
    /// The override for the dataset at `path`, if [`CopyOptions::datasets`] names it.
    pub fn choice_for(&self, path: &str) -> Option<&DatasetChoice> {
        self.datasets.get(path)
    }
}

impl Default for CopyOptions {
    fn default() -> Self {
        CopyOptions {
            filter: FilterChoice::Keep,
            threads: 0,
            datasets: Default::default(),
        }
    }
}

/// What a copy did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// Groups created in the destination (the group the copy starts from not counted).
    pub groups: usize,
    /// Datasets created in the destination (hard-linked aliases counted once).
    pub datasets: usize,
    /// Attributes written, copied ones and any a policy added or replaced.
    pub attributes: usize,
    /// Soft links written.
    pub soft_links: usize,
    /// External links written.
    pub external_links: usize,
    /// Second (and later) names of an object already copied.
    pub hard_links: usize,
    /// Virtual datasets written with their mappings.
    pub virtual_datasets: usize,
    /// Chunks copied without decoding.
    pub raw_chunks: usize,
    /// Chunks decoded and encoded again, one at a time.
    pub encoded_chunks: usize,
    /// Objects, links or attributes not copied, with the reason.
    pub skipped: Vec<String>,
    /// Other things worth knowing (aliases copied twice, lossy strings...).
    pub notes: Vec<String>,
    /// With [`copy_file_digested`]: source path of every re-encoded chunked
    /// dataset → its [`digest::DatasetDigest`] (taken from the decoded source
    /// bytes as they were encoded).
    pub digests: std::collections::BTreeMap<String, String>,
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
/// The writer's dataspace for a reader's dataspace.
fn space_of(ds: &Dataspace) -> Dataspace {
    ds.clone()
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

/// Copy `src` to `dst` (written atomically) and say what was copied and skipped.
pub fn copy_file(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    opts: &CopyOptions,
) -> Result<CopyReport> {
    copy_file_as(src.as_ref(), dst.as_ref(), opts, false)
}

/// [`copy_file`], also taking a digest of every re-encoded dataset's decoded
/// source bytes as it encodes them ([`CopyReport::digests`]): what `h5
/// recompress` checks the output against.
pub fn copy_file_digested(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    opts: &CopyOptions,
) -> Result<CopyReport> {
    copy_file_as(src.as_ref(), dst.as_ref(), opts, true)
}

fn copy_file_as(src: &Path, dst: &Path, opts: &CopyOptions, digests: bool) -> Result<CopyReport> {
    let file = File::open(src)?;
    let root = file.root()?;
    let mut w = FileWriter::create(dst)?;
    let rd = w.root();
    let report = {
        let mut c = Copier::new(&file, &mut w, opts);
        c.digests = digests;
        c.copy_tree(root, rd)?;
        c.finish();
        c.report
    };
    w.commit()?;
    Ok(report)
}

/// The one object-graph copier, for tools that write a file of their own
/// (`h5 copy`, recompress, amend, pack): copy everything reachable from group
/// `from` of `src` into group `into` of `w` — `from`'s attributes onto `into`,
/// every group, dataset, committed datatype and attribute below it created
/// once (later hard links to an object become links to its copy; reference
/// counts follow), soft and external links as links, object/region/revised
/// references rewritten to the copies, link and attribute creation order and
/// committed-datatype sharing kept. `choose` decides for each dataset:
/// [`FilterChoice::Keep`] copies its stored chunks as they are, filter masks
/// included (when [`raw::raw_copyable`]; otherwise the data is re-encoded with
/// the same pipeline), any other choice re-encodes chunk by chunk. A dataset
/// that cannot be copied is left out (no placeholder) and listed in
/// [`CopyReport::skipped`]. Nothing is committed: the caller adds more and
/// commits `w`.
pub fn copy_graph(
    src: &File,
    from: crate::group::Group,
    w: &mut FileWriter,
    into: crate::write::GroupId,
    choose: &dyn Fn(&crate::dataset::Dataset) -> FilterChoice,
) -> Result<CopyReport> {
    let opts = CopyOptions::default();
    let mut c = Copier::new(src, w, &opts);
    c.choose = Some(choose);
    c.copy_tree(from, into)?;
    c.finish();
    Ok(c.report)
}

/// [`copy_file`] with chunk encoding on `opts.threads` threads (the writer encodes
/// chunks in parallel when the `parallel` feature is on).
pub fn copy_with_threads(src: &str, dst: &str, opts: &CopyOptions) -> Result<CopyReport> {
    if opts.threads > 0 {
        purehdf_filters::threads::set_threads(opts.threads)?;
    }
    copy_file(src, dst, opts)
}

#[cfg(test)]
mod bytes_check_tests;
mod chunkwise;
mod copier;
pub mod digest;
mod hook;
pub mod raw;
#[cfg(test)]
mod tests;
mod values;

use copier::Copier;
pub use hook::{copy_group_into, CopyPolicy, DatasetChoice, KeepAll};

/// Mark the pipeline of `dst` (a copy of `ds` with its stored pipeline) as
/// stored, with the source's own message body when it lies in the dataset's
/// header (a shared message is re-encoded from its decoded stages).
fn keep_pipeline(
    ds: &crate::dataset::Dataset,
    w: &mut FileWriter,
    dst: crate::write::DatasetId,
) -> Result<()> {
    match ds
        .header()
        .first(crate::messages::types::FILTER_PIPELINE)
        .filter(|m| !m.is_shared())
    {
        Some(m) => w.keep_pipeline_message(dst, m.data.clone()),
        None => w.keep_pipeline_as_stored(dst),
    }
}
