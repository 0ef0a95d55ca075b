//! `verify` (`docs/medh5-format.md` §5.7): recompute every stamped object
//! digest (§5.2) from the file's bytes, recompute `content_id` from the stored
//! digests (§5.4), judge unattested paths and stale index entries (§6.8).

use std::collections::HashMap;
use std::path::Path;

use super::canonical_json::Json;
use super::integrity::{
    self, canonical_attrs, covered_names, dtype_descr, group_digest, parse_digest,
    to_little_endian, ContentIdInput, DatasetHasher, DigestAlgo,
};
use super::sample::{attr_json, attrs_json, read_scalar_string, string_element};
use crate::error::{Error, Result};
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::Datatype;
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::link_walk::LinkWalk;
use purehdf::low_level::messages::link::Link;
use purehdf::low_level::selection::Selection;
use purehdf_filters::zstd_decode::libzstd_decodes;

/// Bytes read per slab when streaming a dataset into its digest: small enough
/// that hashing one slab overlaps decoding the next, large enough to keep
/// every core decoding.
const SLAB_BYTES: u64 = 4 << 20;
/// Cap on the objects visited in one walk.
const MAX_OBJECTS: usize = 1 << 20;
/// The groups whose every path `content_id` must attest.
const ATTESTED_GROUPS: &[&str] = &["grids", "images", "annotations", "transforms"];

/// One file's verify entry (§5.7).
///
/// Every path list holds sample-relative dataset paths without a leading `/`
/// (`images/CT`), sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// The file as the caller named it.
    pub path: String,
    /// Whether the file verifies: nothing mismatched, malformed or
    /// unattested, and `content_id_ok` not `Some(false)`. Undigested,
    /// unverifiable and stale-index entries do not fail it.
    pub ok: bool,
    /// How many digests were recomputed (matching or mismatched).
    pub checked: usize,
    /// Datasets whose stored `digest` differs from the one recomputed from
    /// their bytes (E701).
    pub mismatched: Vec<String>,
    /// Datasets (outside `index/` and `meta`) that carry no `digest`.
    pub undigested: Vec<String>,
    /// Paths inside `grids`, `images`, `annotations` or `transforms` that no
    /// `content_id` line attests: soft, external or repeated hard links, and,
    /// when the root declares a `content_id`, undigested datasets there.
    pub unattested: Vec<String>,
    /// Datasets whose `digest` is not a canonical `ALGO:HEX` string (E703);
    /// with `--partial`, also named paths that carry no digest or do not exist.
    pub malformed: Vec<String>,
    /// `Some(true)`/`Some(false)`: the root's `content_id` recomputed from the
    /// stored digests (§5.4) matches / does not (a non-string `content_id` is
    /// `Some(false)`); `None` when the root has none or under `--partial`.
    pub content_id_ok: Option<bool>,
    /// Ids of the sampling-index entries whose `source_digest` no longer
    /// matches their annotation (§6.8, W905); not a failure.
    pub stale_index: Vec<String>,
    /// Datasets carrying a `digest` whose datatype has no defined digest
    /// (§5.2), so it could not be recomputed; not a failure.
    pub unverifiable: Vec<String>,
}

impl VerifyReport {
    /// The reference's JSON entry (keys in its order).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "path": self.path,
            "ok": self.ok,
            "checked": self.checked,
            "mismatched": self.mismatched,
            "undigested": self.undigested,
            "unattested": self.unattested,
            "malformed": self.malformed,
            "content_id_ok": self.content_id_ok,
            "stale_index": self.stale_index,
            "unverifiable": self.unverifiable,
        })
    }

    /// The reference's text lines for this entry, `shown` being the name the
    /// user gave (a path, or `PATH::KEY` for a collection member).
    pub fn to_text(&self, shown: &str) -> String {
        let cid = match self.content_id_ok {
            Some(true) => "content_id ok",
            Some(false) => "content_id MISMATCH",
            None => "content_id not verified",
        };
        let state = if self.ok { "OK" } else { "FAILED" };
        let mut out = format!("{shown}: {state}  {} objects, {cid}\n", self.checked);
        for m in &self.mismatched {
            out.push_str(&format!("  MISMATCH  {m}\n"));
        }
        for m in &self.malformed {
            out.push_str(&format!(
                "  MALFORMED {m} (no digest of the form ALGO:HEX at this path)\n"
            ));
        }
        for m in &self.unattested {
            out.push_str(&format!(
                "  UNSIGNED  {m} (no line of content_id covers it at this path)\n"
            ));
        }
        for m in &self.stale_index {
            out.push_str(&format!(
                "  STALE     index/{m} (rebuild with `medh5 index build`)\n"
            ));
        }
        out
    }
}

/// The reference's first check of a sample: it declares a `medh5_version`
/// of major version 1 (a 0.x file needs `medh5 migrate`, a 2.x file a newer
/// reader); otherwise it is refused with the reference's words.
/// Returns the root attributes.
pub(crate) fn check_version(file: &File, display: &str) -> Result<Vec<(String, Json)>> {
    use super::version_gate::{check, Verdict};
    let attrs = super::sample::SampleFile::from_file(file.clone()).root_attrs()?;
    match check(file)? {
        Verdict::Missing => Err(Error::Refused(format!(
            "'{display}' declares no `medh5_version`; a 0.x file must be converted with `medh5 migrate`"
        ))),
        Verdict::OtherMajor(v) => Err(Error::Refused(format!(
            "'{display}' is MEDH5 {v}; this reader implements 1.2"
        ))),
        Verdict::Supported | Verdict::NewerMinor(_) | Verdict::NotText => Ok(attrs),
    }
}

/// The reference's refusals, with its words, before it checks the digests
/// of a whole file (not under `--partial`): a root `digest_algo` outside
/// §2.1 (E703: its digests can be neither checked nor kept), and a `/meta`
/// that is not a string dataset (the `content_id` input, §5.4).
fn check_whole_file(file: &File, display: &str, root_attrs: &[(String, Json)]) -> Result<()> {
    if let Some((_, v)) = root_attrs.iter().find(|(n, _)| n == "digest_algo") {
        let name = match v {
            Json::Str(s) => s.clone(),
            other => other.to_canonical(),
        };
        if DigestAlgo::from_name(&name).is_none() {
            return Err(Error::Refused(format!(
                "[E703] '{display}' declares digest_algo '{name}': unsupported digest algorithm \
                 '{name}'; §2.1 permits sha256, sha512 and blake2b, so its digests can be neither \
                 checked nor kept. Re-attest it deliberately with `medh5 fix --rewrite-digests \
                 --reason ...`, which restamps it in sha256 and records the reason in the file's \
                 provenance"
            )));
        }
    }
    match file.object("meta") {
        Ok(Object::Dataset(ds)) if ds.dtype().is_string() => Ok(()),
        Ok(Object::Dataset(ds)) => Err(Error::Refused(format!(
            "/meta holds {}, not strings",
            super::helpers::dtype_name(ds.dtype())
        ))),
        _ => Err(Error::Refused(
            "\"Unable to synchronously open object (object 'meta' doesn't exist)\"".into(),
        )),
    }
}

/// A dataset found by the walk, at its first path.
struct Found {
    path: String,
    ds: Dataset,
    digest: Option<String>,
}

/// What the depth-first walk of §5.3 finds.
#[derive(Default)]
struct Walk {
    datasets: Vec<Found>,
    /// Paths that are not their object's first path, soft and external links.
    aliases: Vec<String>,
}

/// A dataset's `digest` attribute: `None` without one, `""` when it is not
/// text (then malformed).
fn stored_digest(file: &File, ds: &Dataset) -> Result<Option<String>> {
    Ok(match ds.attribute("digest") {
        Ok(a) => match attr_json(file, &a)? {
            Json::Str(s) => Some(s),
            _ => Some(String::new()),
        },
        Err(_) => None,
    })
}

fn walk(file: &File) -> Result<Walk> {
    let mut out = Walk::default();
    let mut seen: HashMap<u64, String> = HashMap::new();
    let root = file.root()?;
    seen.insert(root.address(), String::new());
    // depth first in byte order, each group entered at its first path
    let mut walk = LinkWalk::new(&root)?;
    while let Some((path, link)) = walk.next_link() {
        let addr = match link {
            Link::Hard(a) => a,
            // A soft link that resolves is a second path to an object; one
            // that resolves to nothing names no object at all, and the
            // reference passes over it (as over links it cannot follow).
            Link::Soft(_) => {
                if file.object(&path).is_ok() {
                    out.aliases.push(path);
                }
                continue;
            }
            _ => continue,
        };
        if seen.contains_key(&addr) {
            out.aliases.push(path);
            continue;
        }
        if seen.len() >= MAX_OBJECTS {
            return Err(Error::invalid("too many objects"));
        }
        seen.insert(addr, path.clone());
        match file.object_at(addr, format!("/{path}"))? {
            Object::Group(g) => walk.enter(path, &g)?,
            Object::Dataset(ds) => {
                let digest = stored_digest(file, &ds)?;
                out.datasets.push(Found {
                    path,
                    ds: *ds,
                    digest,
                });
            }
            Object::NamedDatatype(_) => {}
        }
    }
    Ok(out)
}

/// Whether `path` lies in a group whose every path `content_id` must
/// attest (the group's own name included: an `images` that is a dataset is
/// judged too); `clinical` when the sample declares that profile.
fn in_attested(path: &str, clinical: bool) -> bool {
    path.split('/')
        .next()
        .is_some_and(|top| ATTESTED_GROUPS.contains(&top) || (clinical && top == "clinical"))
}

/// Whether the root's `medh5_profiles` declares the clinical profile.
pub(crate) fn declares_clinical(root_attrs: &[(String, Json)]) -> bool {
    root_attrs
        .iter()
        .find(|(n, _)| n == "medh5_profiles")
        .is_some_and(|(_, v)| match v {
            Json::Array(items) => items
                .iter()
                .any(|i| matches!(i, Json::Str(s) if s == "clinical")),
            Json::Str(s) => s == "clinical",
            _ => false,
        })
}

/// Recompute the digest of `ds` at sample-relative `path` in `algo`;
/// `Ok(None)` when its type has no digest.
pub fn compute_digest(
    file: &File,
    ds: &Dataset,
    path: &str,
    algo: DigestAlgo,
) -> Result<Option<String>> {
    let dt = ds.dtype();
    let Some(descr) = dtype_descr(dt) else {
        return Ok(None);
    };
    ds.check_budget()?;
    let shape = ds.shape().to_vec();
    let mut h = DatasetHasher::new(algo, path, &descr, &shape);
    if shape.contains(&0) {
        return Ok(Some(h.finish()));
    }
    let elem = dt.size().max(1);
    let is_string = matches!(dt, Datatype::String { .. } | Datatype::VarString { .. });
    // Slabs along the first axis (scalar: one element).
    let (rows, row_elems) = match shape.split_first() {
        None => (1u64, 1u64),
        Some((&n, rest)) => (
            n,
            rest.iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .ok_or_else(|| too_large(path))?,
        ),
    };
    let row_bytes = row_elems.checked_mul(elem).ok_or_else(|| too_large(path))?;
    let per_slab = slab_rows(ds, row_bytes);
    let slab = |r: u64, buf: &mut Vec<u8>| -> Result<()> {
        let n = per_slab.min(rows - r);
        let len = n.checked_mul(row_bytes).ok_or_else(|| too_large(path))?;
        let len = purehdf::low_level::cursor::bounded(
            len,
            purehdf::low_level::limits::MAX_DECODED,
            "dataset slab",
            ds.address(),
            "slab size",
        )?;
        let sel = if shape.is_empty() {
            Selection::All
        } else {
            let mut start = vec![0u64; shape.len()];
            let mut count = shape.clone();
            if let (Some(s), Some(c)) = (start.first_mut(), count.first_mut()) {
                *s = r;
                *c = n;
            }
            Selection::Hyperslab { start, count }
        };
        // One pass over the data: no decoded chunk is worth keeping. The two
        // slab buffers are reused, so they are zeroed only when they grow.
        buf.resize(len, 0);
        Ok(ds.read_raw_uncached(&sel, buf)?)
    };
    let hash = |h: &mut DatasetHasher, buf: &mut Vec<u8>| -> Result<()> {
        if is_string {
            for el in buf.chunks_exact(elem as usize) {
                h.update_string(&string_element(file, dt, el)?);
            }
        } else {
            to_little_endian(dt, buf);
            h.update(buf);
        }
        Ok(())
    };
    // Hash slab i while slab i + 1 is read and decoded.
    let (mut cur, mut next) = (Vec::new(), Vec::new());
    slab(0, &mut cur)?;
    let mut r = per_slab.min(rows);
    while r < rows {
        let (read, hashed) = join(|| slab(r, &mut next), || hash(&mut h, &mut cur));
        read?;
        hashed?;
        std::mem::swap(&mut cur, &mut next);
        r += per_slab.min(rows - r);
    }
    hash(&mut h, &mut cur)?;
    Ok(Some(h.finish()))
}

/// Rows (along the first axis) per slab: about [`SLAB_BYTES`]; for chunked
/// data that must be decoded whole, a multiple of the chunk's first extent so
/// no chunk is decoded twice (Blosc2 chunks are read block by block, any
/// slab boundary costs at most one block row).
fn slab_rows(ds: &Dataset, row_bytes: u64) -> u64 {
    let rows = (SLAB_BYTES / row_bytes.max(1)).max(1);
    let blosc2 = matches!(ds.filters(), [f] if f.id == purehdf_filters::ids::BLOSC2);
    match ds.chunk_dims().and_then(|c| c.first()) {
        Some(&c0) if c0 > 0 && !blosc2 => rows.div_ceil(c0) * c0,
        _ => rows,
    }
}

/// Run two closures, in parallel with the `parallel` feature.
fn join<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    purehdf_filters::threads::join(a, b)
}

fn too_large(path: &str) -> Error {
    Error::invalid(format!("{path}: too large"))
}

/// Outcome of checking one digested dataset.
enum Check {
    Ok,
    Mismatch,
    Malformed,
    Unverifiable,
}

fn check_one(file: &File, f: &Found, stored: &str) -> Result<Check> {
    let Ok((algo, _)) = parse_digest(stored) else {
        return Ok(Check::Malformed);
    };
    // As the reference: bytes that cannot be read fail the whole file, with
    // the object named in the error; but a stream that libzstd decodes
    // anyway (into other bytes) is data that reads differently there, so the
    // reference reports a mismatch, and so do we.
    let fresh = match compute_digest(file, &f.ds, &f.path, algo) {
        Err(e) if libzstd_decodes(&e) => return Ok(Check::Mismatch),
        r => r.map_err(|e| Error::Code {
            code: "E701".into(),
            message: format!("{}: {e}", f.path),
        })?,
    };
    Ok(match fresh {
        None => Check::Unverifiable,
        Some(d) if d == stored => Check::Ok,
        Some(_) => Check::Mismatch,
    })
}

fn check_all(file: &File, items: &[(&Found, &str)]) -> Vec<Result<Check>> {
    #[cfg(feature = "parallel")]
    if purehdf_filters::threads::parallel() {
        use rayon::prelude::*;
        return items
            .par_iter()
            .map(|(f, d)| check_one(file, f, d))
            .collect();
    }
    items.iter().map(|(f, d)| check_one(file, f, d)).collect()
}

/// Verify the file at `path`; `display` is the path printed in the report.
pub fn verify_path(path: &Path, display: &str, partial: Option<&[String]>) -> Result<VerifyReport> {
    let file = super::self_contained::open(path, display)?;
    verify_file(&file, display, partial)
}

/// Files verified together by [`verify_paths`] before their reports are handed on.
const VERIFY_BATCH: usize = 64;

/// Verify many files, in parallel when the thread pool is on (each file
/// with [`verify_path`], `display` = its path as given), handing each
/// report to `each` in the order of `paths`. Files go in batches, so the
/// first reports arrive while later files are still to be read.
pub fn verify_paths(
    paths: &[String],
    partial: Option<&[String]>,
    mut each: impl FnMut(&str, Result<VerifyReport>),
) {
    for batch in paths.chunks(VERIFY_BATCH) {
        let one = |p: &String| verify_path(Path::new(p), p, partial);
        #[cfg(feature = "parallel")]
        let reports: Vec<Result<VerifyReport>> =
            if purehdf_filters::threads::parallel() && batch.len() > 1 {
                use rayon::prelude::*;
                batch.par_iter().map(one).collect()
            } else {
                batch.iter().map(one).collect()
            };
        #[cfg(not(feature = "parallel"))]
        let reports: Vec<Result<VerifyReport>> = batch.iter().map(one).collect();
        for (p, r) in batch.iter().zip(reports) {
            each(p, r);
        }
    }
}

/// The reference's refusals of a whole file before any digest is read, in
/// its order: a version it does not read, a `digest_algo` outside §2.1, a
/// `/meta` that is not a string dataset.
pub(crate) fn preflight(file: &File, display: &str) -> Result<()> {
    let root_attrs = check_version(file, display)?;
    check_whole_file(file, display, &root_attrs)
}

/// Verify an open sample file (§5.7). `partial`: only these dataset paths are
/// recomputed and `content_id` is not judged.
pub fn verify_file(file: &File, display: &str, partial: Option<&[String]>) -> Result<VerifyReport> {
    let root_attrs = check_version(file, display)?;
    if partial.is_none() {
        check_whole_file(file, display, &root_attrs)?;
    }

    let w = walk(file)?;
    let mut rep = VerifyReport {
        path: display.to_string(),
        ..Default::default()
    };
    let by_path: HashMap<&str, &Found> = w.datasets.iter().map(|f| (f.path.as_str(), f)).collect();
    let mut items: Vec<(&Found, &str)> = Vec::new();
    if let Some(names) = partial {
        for n in names {
            let key = n.trim_start_matches('/');
            match by_path
                .get(key)
                .and_then(|f| f.digest.as_deref().map(|d| (*f, d)))
            {
                Some(it) => items.push(it),
                None => rep.malformed.push(key.to_string()),
            }
        }
    } else {
        for f in &w.datasets {
            let top_index = f.path == "index" || f.path.starts_with("index/");
            if top_index || f.path == "meta" {
                continue;
            }
            match f.digest.as_deref() {
                Some(d) => items.push((f, d)),
                None if dtype_descr(f.ds.dtype()).is_some() => rep.undigested.push(f.path.clone()),
                None => {}
            }
        }
    }
    for ((f, _), res) in items.iter().zip(check_all(file, &items)) {
        match res? {
            Check::Ok => rep.checked += 1,
            Check::Mismatch => {
                rep.checked += 1;
                rep.mismatched.push(f.path.clone());
            }
            Check::Malformed => rep.malformed.push(f.path.clone()),
            Check::Unverifiable => rep.unverifiable.push(f.path.clone()),
        }
    }
    if partial.is_none() {
        let clinical = declares_clinical(&root_attrs);
        rep.unattested = w
            .aliases
            .iter()
            .filter(|p| in_attested(p, clinical))
            .cloned()
            .collect();
        rep.content_id_ok = content_id_ok(file, &w)?;
        // Under a declared content_id, a dataset without digest inside an
        // attested group is bound by no line: the reference lists it as
        // unattested too, and the file fails.
        if rep.content_id_ok.is_some() {
            for p in &rep.undigested {
                if in_attested(p, clinical) && !rep.unattested.contains(p) {
                    rep.unattested.push(p.clone());
                }
            }
        }
        rep.stale_index = stale_index(file, &w)?;
    }
    for v in [
        &mut rep.mismatched,
        &mut rep.undigested,
        &mut rep.unattested,
        &mut rep.malformed,
        &mut rep.unverifiable,
    ] {
        v.sort();
    }
    rep.ok = rep.mismatched.is_empty()
        && rep.malformed.is_empty()
        && rep.unattested.is_empty()
        && rep.content_id_ok != Some(false);
    Ok(rep)
}

/// The root's `digest_algo` (sha256 when absent or unknown).
fn root_algo(root_attrs: &[(String, Json)]) -> DigestAlgo {
    root_attrs
        .iter()
        .find(|(n, _)| n == "digest_algo")
        .and_then(|(_, v)| match v {
            Json::Str(s) => DigestAlgo::from_name(s),
            _ => None,
        })
        .unwrap_or_default()
}

/// Recompute `content_id` from the stored digests (§5.4).
pub fn compute_content_id(file: &File) -> Result<String> {
    let w = walk(file)?;
    Ok(content_id_input(file, &w)?.content_id())
}

fn content_id_input(file: &File, w: &Walk) -> Result<ContentIdInput> {
    let root_attrs = attrs_json(file, &file.root()?.attributes()?)?;
    let algo = root_algo(&root_attrs);
    let meta = match file.object("meta")? {
        Object::Dataset(ds) => read_scalar_string(file, &ds)?,
        _ => Vec::new(),
    };
    let datasets = w
        .datasets
        .iter()
        .filter_map(|f| f.digest.clone().map(|d| (f.path.clone(), d)))
        .collect();
    let mut attribute_objects = vec![(
        String::new(),
        canonical_attrs(integrity::ROOT_COVERED, &root_attrs),
    )];
    // The members of each attested group, listed from the group itself (a
    // group first reached through an alias elsewhere still has them).
    let mut members = Vec::new();
    for g in ATTESTED_GROUPS {
        if let Ok(Object::Group(grp)) = file.object(g) {
            members.extend(grp.links()?.into_iter().map(|(n, _)| format!("{g}/{n}")));
        }
    }
    for m in &members {
        let Some(covered) = covered_names(m) else {
            continue;
        };
        let Ok(obj) = file.object(m) else { continue };
        let attrs = attrs_json(file, &obj.attributes()?)?;
        attribute_objects.push((m.clone(), canonical_attrs(covered, &attrs)));
    }
    Ok(ContentIdInput {
        algo,
        datasets,
        meta,
        attribute_objects,
    })
}

fn content_id_ok(file: &File, w: &Walk) -> Result<Option<bool>> {
    let declared = match file.root()?.attribute("content_id") {
        Ok(a) => match attr_json(file, &a)? {
            Json::Str(s) => s,
            _ => return Ok(Some(false)),
        },
        Err(_) => return Ok(None),
    };
    Ok(Some(content_id_input(file, w)?.content_id() == declared))
}

/// The sampling-index entries that declare a `source_digest`, as
/// `(entry name, declared digest)`; a non-string value reads as "".
pub(crate) fn index_source_digests(file: &File) -> Result<Vec<(String, String)>> {
    let Ok(Object::Group(index)) = file.object("index") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (name, _) in index.links()? {
        let Ok(entry) = index.open(&name) else {
            continue;
        };
        let Some(a) = entry
            .attributes()?
            .into_iter()
            .find(|a| a.name == "source_digest")
        else {
            continue;
        };
        let declared = match attr_json(file, &a)? {
            Json::Str(s) => s,
            _ => String::new(),
        };
        out.push((name, declared));
    }
    Ok(out)
}

/// Index entries whose `source_digest` no longer matches their annotation.
fn stale_index(file: &File, w: &Walk) -> Result<Vec<String>> {
    let mut stale = Vec::new();
    for (name, declared) in index_source_digests(file)? {
        let fresh = match parse_digest(&declared) {
            Ok((algo, _)) => annotation_group_digest(file, w, &name, algo)?,
            Err(_) => None,
        };
        if fresh.as_deref() != Some(declared.as_str()) {
            stale.push(name);
        }
    }
    stale.sort();
    Ok(stale)
}

fn annotation_group_digest(
    file: &File,
    w: &Walk,
    ann: &str,
    algo: DigestAlgo,
) -> Result<Option<String>> {
    let prefix = format!("annotations/{ann}/");
    let Ok(Object::Group(_)) = file.object(&format!("annotations/{ann}")) else {
        return Ok(None);
    };
    // The group's own datasets, each under its name here, whatever path
    // reached it first in the file (an alias elsewhere, say).
    let mut children = Vec::new();
    for f in &w.datasets {
        let Some(name) = f.path.strip_prefix(&prefix) else {
            continue;
        };
        if name.contains('/') {
            continue;
        }
        children.push((name.to_string(), f.ds.clone(), f.digest.clone()));
    }
    for alias in &w.aliases {
        let Some(name) = alias.strip_prefix(&prefix) else {
            continue;
        };
        if name.contains('/') {
            continue;
        }
        if let Ok(Object::Dataset(ds)) = file.object(alias) {
            let digest = stored_digest(file, &ds)?;
            children.push((name.to_string(), *ds, digest));
        }
    }
    children.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut digests = Vec::new();
    for (name, ds, digest) in children {
        let d = match digest {
            Some(d) => d,
            None => match compute_digest(file, &ds, &format!("{prefix}{name}"), algo)? {
                Some(d) => d,
                None => continue,
            },
        };
        digests.push((name, d));
    }
    Ok(Some(group_digest(algo, &digests)))
}

impl super::sample::SampleFile {
    /// Recompute every digest and the `content_id` from the file's bytes
    /// (`medh5 verify`); `report.ok` tells whether everything matched.
    pub fn verify(&self) -> Result<VerifyReport> {
        verify_file(&self.file, "sample", None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::medh5_vector;

    #[test]
    fn vectors_verify_ok() {
        let Ok(rd) = std::fs::read_dir(medh5_vector("")) else {
            return;
        };
        let mut n = 0;
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().and_then(|s| s.to_str()) != Some("medh5") {
                continue;
            }
            let r = verify_path(&p, "x", None).unwrap();
            assert!(r.ok, "{}: {r:?}", p.display());
            assert_eq!(r.content_id_ok, Some(true));
            assert!(r.checked >= 1);
            n += 1;
        }
        assert_eq!(n, 7);
    }

    #[test]
    fn v3_counts_and_content_id() {
        let p = medh5_vector("v3_stacked_index.medh5");
        if !p.exists() {
            return;
        }
        let r = verify_path(&p, "v3", None).unwrap();
        assert_eq!(r.checked, 13);
        let f = File::open(&p).unwrap();
        assert_eq!(
            compute_content_id(&f).unwrap(),
            "sha256:e4c4ac56afdaa8c234ceb90cc20a5ea939529193ed76b505b7c97b2ad0da4b68"
        );
    }

    #[test]
    fn partial_unknown_path_is_malformed() {
        let p = medh5_vector("v1_minimal.medh5");
        if !p.exists() {
            return;
        }
        let names = vec!["images/CT".to_string(), "images/nope".to_string()];
        let r = verify_path(&p, "v1", Some(&names)).unwrap();
        assert_eq!(r.checked, 1);
        assert_eq!(r.malformed, vec!["images/nope".to_string()]);
        assert_eq!(r.content_id_ok, None);
        assert!(!r.ok);
    }
}
