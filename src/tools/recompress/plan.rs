//! The per-file plan of `h5 recompress` (`docs/neighbours.md` rows E4,
//! E5): which datasets are re-encoded and which keep their stored chunks, with
//! the reason. "Already compressed" is decided by the *effective* codec read
//! from the first stored chunk (for Blosc/Blosc2 the chunk header's codec byte
//! and filter slots, never the cd_values, which may lie), and lossy codecs
//! (JPEG 2000 inside Blosc2, ZFP, SZ, ...) are never re-encoded: their chunks
//! are kept as stored.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use purehdf::low_level::chunk_index;
use purehdf::low_level::copy::{DatasetChoice, FilterChoice};
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::group::Group;
use purehdf::low_level::link::join_path;
use purehdf::low_level::messages::dataspace::SpaceKind;
use purehdf::low_level::messages::link::Link;
use purehdf::{Error, Result};
use purehdf_filters::blosc2::chunk::{filter as bfilter, Header};
use purehdf_filters::blosc2::codec::name_of;
use purehdf_filters::blosc2::frame::{is_frame, ChunkRef, Frame};
use purehdf_filters::{filter_name, ids, FilterSpec};

/// Most objects one plan visits.
const MAX_OBJECTS: usize = 1_000_000;

/// Blosc2 codec ids of JPEG 2000 / HTJ2K plugins (lossy).
const LOSSY_BLOSC2_CODECS: [u8; 4] = [36, 37, 39, 40];
/// HDF5 filter ids of lossy codecs (zfp, sz, jpeg, sz3, sperr, htj2k).
const LOSSY_FILTERS: [u32; 6] = [32013, 32017, 32019, 32024, 32028, 32033];

/// What the user asked for, as it applies to datasets.
#[derive(Clone, Debug)]
pub struct Rules {
    /// The new pipeline (as `h5 copy` spells it, parsed).
    pub pipeline: Vec<FilterSpec>,
    /// Path globs a dataset must match (any of them); empty = all.
    pub select: Vec<String>,
    /// `--ndim`: ranks a dataset must have (any of them); empty = all.
    pub ndim: Vec<usize>,
    /// `--dtype`: numpy type strings a dataset must have (`<u2`, or `u2` for
    /// either byte order; any of them); empty = all.
    pub dtype: Vec<String>,
    /// Datasets with fewer logical bytes keep their storage.
    pub min_size: u64,
    /// `--rechunk`: chunk shape for re-encoded datasets of that rank.
    pub rechunk: Option<Vec<u64>>,
}

/// True when the numpy type string `have` (`<u2`) is the one `want` names:
/// exactly, or without its byte-order character (`u2`).
fn dtype_matches(want: &str, have: &str) -> bool {
    want == have || have.get(1..).is_some_and(|rest| rest == want)
}

/// What happens to one dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetPlan {
    /// Every hard-linked name, first (walk order) first.
    pub paths: Vec<String>,
    /// Current dataset dimensions in elements.
    pub shape: Vec<u64>,
    /// Stored chunked now.
    pub chunked: bool,
    /// Logical size in bytes: element count times element size (what `--min-size` compares).
    pub bytes: u64,
    /// Re-encoded (true) or kept as stored.
    pub encode: bool,
    /// Effective codec now (`none`, `shuffle+deflate`, `blosc2:zstd:shuffle`...).
    pub codec: String,
    /// Why the dataset is kept (e.g. "already compressed (…)", "not matched by --select") or, when
    /// re-encoded, `old -> new` codec.
    pub reason: String,
}

/// The plan of one file.
#[derive(Clone, Debug, Default)]
pub struct FilePlan {
    /// The non-virtual datasets in walk order, one entry per object (hard links merged into
    /// `paths`).
    pub datasets: Vec<DatasetPlan>,
    /// Paths of the virtual datasets in the file.
    pub virtual_datasets: Vec<String>,
}

impl FilePlan {
    /// Datasets to re-encode.
    pub fn to_encode(&self) -> impl Iterator<Item = &DatasetPlan> {
        self.datasets.iter().filter(|d| d.encode)
    }

    /// Logical bytes of the datasets to re-encode.
    pub fn encode_bytes(&self) -> u64 {
        self.to_encode().map(|d| d.bytes).sum()
    }

    /// The per-dataset choices for the copier: selected datasets get the new
    /// pipeline (and chunk shape), every other dataset keeps its storage.
    pub fn choices(&self, rules: &Rules) -> BTreeMap<String, DatasetChoice> {
        let mut out = BTreeMap::new();
        for d in &self.datasets {
            let choice = if d.encode {
                let chunks = match &rules.rechunk {
                    Some(c) => clamp_chunks(c, &d.shape),
                    None if !d.chunked => frame_chunks(&d.shape, d.bytes),
                    None => None,
                };
                DatasetChoice {
                    filter: FilterChoice::Pipeline(rules.pipeline.clone()),
                    chunk: chunks.map(Some),
                }
            } else {
                DatasetChoice {
                    filter: FilterChoice::Keep,
                    chunk: None,
                }
            };
            for p in &d.paths {
                out.insert(p.clone(), choice.clone());
            }
        }
        out
    }
}

/// The chunk shape of a contiguous dataset of rank >= 3 that becomes chunked:
/// one frame (the last two axes) per chunk when a frame holds 64 KiB to
/// 16 MiB (detector stacks, as the esrf compressor writes them); `None`
/// leaves the copier's choice (h5py's `guess_chunk`).
pub fn frame_chunks(shape: &[u64], bytes: u64) -> Option<Vec<u64>> {
    let rank = shape.len();
    let n = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))?;
    if rank < 3 || n == 0 {
        return None;
    }
    let esize = bytes / n;
    let frame = shape
        .get(rank - 2..)?
        .iter()
        .product::<u64>()
        .checked_mul(esize)?;
    if !(64 << 10..=16 << 20).contains(&frame) {
        return None;
    }
    let mut c = vec![1u64; rank];
    c[rank - 2] = shape[rank - 2];
    c[rank - 1] = shape[rank - 1];
    Some(c)
}

/// `--rechunk` fitted to a dataset: each extent at most the dimension (and at
/// least 1); `None` when the ranks differ.
pub fn clamp_chunks(chunks: &[u64], shape: &[u64]) -> Option<Vec<u64>> {
    if chunks.len() != shape.len() || shape.is_empty() {
        return None;
    }
    Some(
        chunks
            .iter()
            .zip(shape)
            .map(|(&c, &d)| c.min(d.max(1)).max(1))
            .collect(),
    )
}

/// Shell-style match: `*` any run of characters (`/` included), `?` one.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || Some(&c) == t.get(ti) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&c| c == '*'))
}

/// The canonical codec name of a pipeline the user asked for.
pub fn pipeline_codec(p: &[FilterSpec]) -> String {
    if p.is_empty() {
        return "none".into();
    }
    p.iter()
        .map(|f| match f.id {
            ids::BLOSC2 | ids::BLOSC => {
                let codec = f.cd_values.get(6).copied().unwrap_or(0);
                let shuffle = match f.cd_values.get(5).copied().unwrap_or(1) {
                    0 => "noshuffle",
                    2 => "bitshuffle",
                    _ => "shuffle",
                };
                format!("{}:{}:{shuffle}", filter_name(f.id), name_of(codec))
            }
            id => filter_name(id).to_string(),
        })
        .collect::<Vec<_>>()
        .join("+")
}

/// The effective codec of a Blosc/Blosc2 chunk, from its header.
fn blosc_codec(filter: &str, bytes: &[u8]) -> Result<(String, bool)> {
    let head = if is_frame(bytes) {
        let max = usize::try_from(purehdf::low_level::limits::MAX_DECODED).unwrap_or(usize::MAX);
        let frame = Frame::parse(bytes, max)?;
        if frame.nchunks() == 0 {
            return Ok((format!("{filter}:empty"), false));
        }
        match frame.chunk(0)? {
            ChunkRef::Data(c) => Header::parse(c)?,
            ChunkRef::Special { .. } => return Ok((format!("{filter}:special"), false)),
        }
    } else {
        Header::parse(bytes)?
    };
    if head.special() != 0 {
        return Ok((format!("{filter}:special"), false));
    }
    let shuffle = if head.filters.contains(&bfilter::BITSHUFFLE) {
        "bitshuffle"
    } else if head.filters.contains(&bfilter::SHUFFLE) {
        "shuffle"
    } else {
        "noshuffle"
    };
    let lossy = LOSSY_BLOSC2_CODECS.contains(&head.codec);
    let name = match name_of(u32::from(head.codec)) {
        "unknown" => format!("codec {}", head.codec),
        n => n.to_string(),
    };
    Ok((format!("{filter}:{name}:{shuffle}"), lossy))
}

/// The effective codec of `ds` read from its first stored chunk (`None`: no
/// chunk stored) and whether it is lossy.
pub fn effective_codec(ds: &Dataset) -> Result<Option<(String, bool)>> {
    let filters = ds.filters();
    if filters.iter().any(|f| LOSSY_FILTERS.contains(&f.id)) {
        return Ok(Some((pipeline_codec(filters), true)));
    }
    let Some(params) = ds.chunk_params() else {
        return Ok(Some((pipeline_codec(filters), false)));
    };
    let file = ds.file();
    let recs = chunk_index::chunks(file.source(), file.sizes(), &params)?;
    let Some(first) = recs.first() else {
        return Ok(None);
    };
    let mut names = Vec::with_capacity(filters.len());
    let mut lossy = false;
    for (k, f) in filters.iter().enumerate() {
        let outermost = k + 1 == filters.len();
        match f.id {
            ids::BLOSC2 | ids::BLOSC if outermost => {
                let bytes = chunk_index::stored_bytes(file.source(), first)?;
                let (n, l) = blosc_codec(filter_name(f.id), &bytes).map_err(|e| Error::Chunk {
                    dataset: ds.path().to_string(),
                    coords: first.offset.clone(),
                    source: Box::new(e),
                })?;
                lossy |= l;
                names.push(n);
            }
            id => names.push(filter_name(id).to_string()),
        }
    }
    if names.is_empty() {
        names.push("none".into());
    }
    Ok(Some((names.join("+"), lossy)))
}

/// Walk every object of `file` once (hard links: one object, every name).
/// Returns datasets in walk order with all their names.
pub fn datasets_of(file: &File) -> Result<Vec<(Dataset, Vec<String>)>> {
    let root = file.root()?;
    let mut seen: HashSet<u64> = HashSet::new();
    seen.insert(root.address());
    let mut index: HashMap<u64, usize> = HashMap::new();
    let mut out: Vec<(Dataset, Vec<String>)> = Vec::new();
    let mut stack: Vec<Group> = vec![root];
    while let Some(g) = stack.pop() {
        let mut sub = Vec::new();
        for (name, link) in g.links()? {
            let Link::Hard(addr) = link else { continue };
            let path = join_path(g.path(), &name);
            if let Some(&i) = index.get(&addr) {
                if let Some((_, names)) = out.get_mut(i) {
                    names.push(path);
                }
                continue;
            }
            if !seen.insert(addr) {
                continue;
            }
            if seen.len() > MAX_OBJECTS {
                return Err(Error::Limit {
                    structure: "h5 recompress",
                    offset: addr,
                    what: "objects",
                    value: seen.len() as u64,
                    limit: MAX_OBJECTS as u64,
                });
            }
            match file.object_at(addr, path.clone())? {
                Object::Group(cg) => sub.push(cg),
                Object::Dataset(ds) => {
                    index.insert(addr, out.len());
                    out.push((*ds, vec![path]));
                }
                Object::NamedDatatype(_) => {}
            }
        }
        stack.extend(sub.into_iter().rev());
    }
    Ok(out)
}

/// Decide, for every dataset of `file`, re-encode or keep.
pub fn plan_file(file: &File, rules: &Rules) -> Result<FilePlan> {
    let target = pipeline_codec(&rules.pipeline);
    let mut plan = FilePlan::default();
    for (ds, paths) in datasets_of(file)? {
        let bytes = ds.num_elements().saturating_mul(ds.dtype().size());
        let first = paths.first().cloned().unwrap_or_default();
        if ds.layout_kind() == "virtual" {
            plan.virtual_datasets.push(first);
            continue;
        }
        let (shape, chunked) = (ds.shape().to_vec(), ds.chunk_dims().is_some());
        let keep = |codec: String, why: String| DatasetPlan {
            paths: paths.clone(),
            shape: shape.clone(),
            chunked,
            bytes,
            encode: false,
            codec,
            reason: why,
        };
        let plain = !ds.dtype().has_vlen_or_ref();
        let d = if !plain {
            keep(String::new(), "variable-length or reference values".into())
        } else if ds.space_kind() != SpaceKind::Simple || ds.shape().is_empty() {
            keep(String::new(), "scalar or empty dataspace".into())
        } else if bytes < rules.min_size {
            keep(
                String::new(),
                format!("{bytes} bytes, under --min-size {}", rules.min_size),
            )
        } else if !rules.select.is_empty()
            && !paths
                .iter()
                .any(|p| rules.select.iter().any(|g| glob_match(g, p)))
        {
            keep(String::new(), "not matched by --select".into())
        } else if !rules.ndim.is_empty() && !rules.ndim.contains(&shape.len()) {
            keep(String::new(), format!("rank {} not in --ndim", shape.len()))
        } else if !rules.dtype.is_empty()
            && !ds
                .dtype()
                .numpy_str()
                .is_some_and(|t| rules.dtype.iter().any(|w| dtype_matches(w, &t)))
        {
            keep(String::new(), "type not in --dtype".into())
        } else {
            match effective_codec(&ds) {
                Err(e) => keep(
                    String::new(),
                    format!("codec unreadable, kept as stored: {e}"),
                ),
                Ok(None) => keep(String::new(), "no chunk stored".into()),
                Ok(Some((c, true))) => {
                    let why = format!("lossy codec {c}: kept as stored");
                    keep(c, why)
                }
                Ok(Some((c, false))) if c == target => {
                    keep(c.clone(), format!("already compressed ({c})"))
                }
                Ok(Some((c, false))) => DatasetPlan {
                    paths: paths.clone(),
                    shape: shape.clone(),
                    chunked,
                    bytes,
                    encode: true,
                    reason: format!("{c} -> {target}"),
                    codec: c,
                },
            }
        };
        plan.datasets.push(d);
    }
    Ok(plan)
}

/// Plan the file at `path`.
pub fn plan_path(path: &Path, rules: &Rules) -> Result<FilePlan> {
    plan_file(&File::open(path)?, rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_selector_with_or_without_byte_order() {
        assert!(dtype_matches("<u2", "<u2"));
        assert!(dtype_matches("u2", ">u2"));
        assert!(!dtype_matches("u2", "<u4"));
        assert!(!dtype_matches("<u2", ">u2"));
    }

    #[test]
    fn globs() {
        assert!(glob_match("*", "/a/b"));
        assert!(glob_match("/entry*/data", "/entry_0000/data"));
        assert!(glob_match("*/data", "/x/y/data"));
        assert!(!glob_match("*/data", "/x/y/data2"));
        assert!(glob_match("/a?c", "/abc"));
        assert!(!glob_match("/a?c", "/ac"));
    }

    #[test]
    fn rechunk_fits_the_shape() {
        assert_eq!(
            clamp_chunks(&[1, 512, 512], &[10, 100, 600]),
            Some(vec![1, 100, 512])
        );
        assert_eq!(clamp_chunks(&[1, 512], &[10, 100, 600]), None);
        assert_eq!(
            frame_chunks(&[100, 256, 512], 100 * 256 * 512 * 2),
            Some(vec![1, 256, 512])
        );
        assert_eq!(frame_chunks(&[100, 8, 8], 100 * 64 * 2), None);
        assert_eq!(frame_chunks(&[256, 512], 256 * 512 * 2), None);
    }

    #[test]
    fn codec_names() {
        let p = purehdf::low_level::copy::parse_filter("shuffle+deflate:4").unwrap();
        let purehdf::low_level::copy::FilterChoice::Pipeline(p) = p else {
            panic!()
        };
        assert_eq!(pipeline_codec(&p), "shuffle+deflate");
        let FilterChoice::Pipeline(b) =
            purehdf::low_level::copy::parse_filter("blosc2:zstd:3:bitshuffle").unwrap()
        else {
            panic!()
        };
        assert_eq!(pipeline_codec(&b), "blosc2:zstd:bitshuffle");
    }
}
