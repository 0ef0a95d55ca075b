//! What a copy is asked to do and what it reports: [`CopyOptions`] (the
//! filter choice, for all datasets or per dataset as a [`DatasetChoice`]), the `--filter` argument's parser,
//! and [`CopyReport`].

use crate::error::{Error, Result};
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

/// Options of [`copy_file`](super::copy_file).
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
    /// With [`copy_file_digested`](super::copy_file_digested): source path of every re-encoded chunked
    /// dataset → its [`digest::DatasetDigest`](super::digest::DatasetDigest) (taken from the decoded source
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

pub(super) fn spec(id: u32, cd_values: Vec<u32>) -> FilterSpec {
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

/// How one dataset is copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetChoice {
    /// What to do with this dataset's filter pipeline (keep, drop, or a new pipeline).
    pub filter: FilterChoice,
    /// `None`: the stored chunk shape; `Some(None)`: contiguous;
    /// `Some(Some(c))`: chunks of shape `c`.
    pub chunk: Option<Option<Vec<u64>>>,
}
