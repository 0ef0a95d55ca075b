//! Verification of a recompressed file before anything is replaced
//! (`docs/neighbours.md` row E7): both files are described with
//! `h5 dump --json` (every group, dataset, attribute value, link and hard-link
//! alias, and a SHA-256 of every dataset's *decoded* data, which decodes every
//! stored chunk of the output), and the descriptions must be equal apart from
//! each dataset's storage (layout, chunk shape, filter ids). A dataset the
//! source cannot decode (a lossy codec we do not implement) must have been
//! kept as stored: its stored chunks (offsets, filter masks, bytes) are hashed
//! on both sides instead and must be equal. Datasets too large for the dump's
//! hash (over 2 GiB) are hashed here, one 64 MiB slab at a time.
//!
//! [`verify_copy`] proves the same of an output whose copier took digests
//! ([`purehdf::low_level::copy::copy_file_digested`]) at less cost: the
//! descriptions are compared without reading data; the copier decoded every
//! chunk it encoded and compared it with the source bytes, and took a digest
//! of the encoded chunks (`copy::digest`), so every re-encoded dataset's
//! stored chunks are read back (in parallel) and their digest, bound to the
//! output's own pipeline and chunk shape, must equal the copier's; a dataset whose
//! stored chunks were moved as they are (same chunk shape and pipeline) must
//! have byte-identical stored chunks (else its decoded SHA-256 is compared);
//! every other dataset is hashed as [`verify`] does.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::dump::canonical::hex;
use crate::dump::walk::{dump_file, dump_file_with};
use purehdf::low_level::chunk_index;
use purehdf::low_level::chunk_index::read::as_plugins_read;
use purehdf::low_level::copy::digest::{chunk_sha, DatasetDigest};
use purehdf::low_level::copy::raw;
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::selection::Selection;
use purehdf::{Error, Result};

/// Fields of a dataset record that describe storage, not content.
const STORAGE_FIELDS: [&str; 3] = ["layout", "chunks", "filters"];

/// What a verification checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verified {
    /// Objects compared.
    pub objects: usize,
    /// Datasets whose decoded SHA-256 matched.
    pub decoded: usize,
    /// Datasets undecodable at the source, compared chunk by chunk as stored.
    pub stored: usize,
}

fn refused(why: String) -> Error {
    Error::InvalidArgument(format!("verification failed: {why}"))
}

/// SHA-256 of a whole file, streamed.
pub fn file_sha256(path: &Path) -> Result<String> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path.display(), e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| Error::io(path.display(), e))?;
        if n == 0 {
            break;
        }
        h.update(buf.get(..n).unwrap_or_default());
    }
    Ok(hex(&h.finalize()))
}

/// SHA-256 over the stored chunks of the dataset at `path`, in offset order.
pub fn stored_chunks_sha256(file: &File, path: &str) -> Result<String> {
    let Object::Dataset(ds) = file.object(path)? else {
        return Err(Error::InvalidArgument(format!("{path} is not a dataset")));
    };
    let mut h = Sha256::new();
    if let Some(params) = ds.chunk_params() {
        let mut recs = chunk_index::chunks(file.source(), file.sizes(), &params)?;
        recs.sort_by(|a, b| a.offset.cmp(&b.offset));
        for r in &recs {
            for o in &r.offset {
                h.update(o.to_le_bytes());
            }
            h.update(r.filter_mask.to_le_bytes());
            let bytes = chunk_index::stored_bytes(file.source(), r)?;
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
    } else {
        h.update(ds.read_all_raw()?);
    }
    Ok(hex(&h.finalize()))
}

/// SHA-256 of the decoded bytes of the dataset at `path`, read in slabs along
/// the first axis (for datasets the dump does not hash: over 2 GiB).
pub fn decoded_sha256(file: &File, path: &str) -> Result<String> {
    let Object::Dataset(ds) = file.object(path)? else {
        return Err(Error::InvalidArgument(format!("{path} is not a dataset")));
    };
    let shape = ds.shape().to_vec();
    let mut h = Sha256::new();
    let Some((&rows, rest)) = shape.split_first() else {
        h.update(ds.read_all_raw()?);
        return Ok(hex(&h.finalize()));
    };
    let row_bytes = rest
        .iter()
        .try_fold(ds.dtype().size(), |a, &d| a.checked_mul(d))
        .ok_or_else(|| Error::InvalidArgument(format!("{path}: size overflows")))?;
    let step = ((64u64 << 20) / row_bytes.max(1)).max(1);
    let mut start = 0u64;
    while start < rows {
        let n = step.min(rows - start);
        let mut st = vec![0u64; shape.len()];
        let mut count = shape.clone();
        if let (Some(s), Some(c)) = (st.first_mut(), count.first_mut()) {
            *s = start;
            *c = n;
        }
        h.update(ds.read_raw_vec_uncached(&Selection::Hyperslab { start: st, count })?);
        start += n;
    }
    Ok(hex(&h.finalize()))
}

/// The file in `slot`, opened at first use.
fn open_once<'a>(slot: &'a mut Option<File>, p: &Path) -> Result<&'a File> {
    if slot.is_none() {
        *slot = Some(File::open(p)?);
    }
    slot.as_ref()
        .ok_or_else(|| Error::InvalidArgument("file not open".into()))
}

fn objects(doc: &Value) -> HashMap<String, &Value> {
    doc.get("objects")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|o| Some((o.get("path")?.as_str()?.to_string(), o)))
                .collect()
        })
        .unwrap_or_default()
}

fn content(rec: &Value) -> Value {
    let mut r = rec.clone();
    if let Value::Object(m) = &mut r {
        for k in STORAGE_FIELDS {
            m.remove(k);
        }
        // error texts name file offsets, which differ between the files
        m.remove("error");
    }
    r
}

/// Check that `out` holds the same tree, attributes and decoded data as `orig`.
pub fn verify(orig: &Path, out: &Path) -> Result<Verified> {
    compare_dumps(orig, out, dump_file(orig)?, dump_file(out)?)
}

/// The effective fill value of `ds` (one element; zeros when none is stored).
fn fill_of(ds: &Dataset) -> Vec<u8> {
    let size = usize::try_from(ds.dtype().size()).unwrap_or(0);
    match ds.fill_value().bytes() {
        Some(b) if b.len() == size => b.to_vec(),
        _ => vec![0; size],
    }
}

/// Same pipeline: ids, flags and client data, in order.
fn same_filters(a: &Dataset, b: &Dataset) -> bool {
    let (fa, fb) = (a.filters(), b.filters());
    fa.len() == fb.len()
        && fa
            .iter()
            .zip(fb)
            .all(|(x, y)| x.id == y.id && x.flags == y.flags && x.cd_values == y.cd_values)
}

/// The [`DatasetDigest`] of a chunked dataset of the output: the SHA-256 of
/// every stored chunk's bytes (read in parallel) with its filter mask, bound
/// to the output's own pipeline (as the filter plugins read it), chunk shape
/// and element size.
pub fn output_digest(ds: &Dataset) -> Result<String> {
    let (Some(params), Some(chunk)) = (ds.chunk_params(), raw::chunk_shape(ds)) else {
        return Err(refused(format!(
            "{} is not chunked in the output",
            ds.path()
        )));
    };
    let file = ds.file();
    let recs = chunk_index::chunks(file.source(), file.sizes(), &params)?;
    let elem = usize::try_from(ds.dtype().size()).unwrap_or(0);
    let shas = purehdf_filters::threads::try_map(&recs, |r| {
        let coords: Vec<u64> = r
            .offset
            .iter()
            .zip(&chunk)
            .map(|(&o, &c)| o / c.max(1))
            .collect();
        let stored = chunk_index::stored_bytes(file.source(), r)?;
        Ok::<_, Error>((coords, r.filter_mask, chunk_sha(&stored)))
    })?;
    let mut d = DatasetDigest::default();
    d.bind(&as_plugins_read(ds.filters()), &chunk, elem);
    for (c, mask, s) in shas {
        d.push(c, mask, s);
    }
    Ok(d.finish())
}

/// [`verify`] for an output whose copier took `digests` (source path →
/// digest of each re-encoded dataset, [`purehdf::low_level::copy::CopyReport::digests`]).
pub fn verify_copy(
    orig: &Path,
    out: &Path,
    digests: &BTreeMap<String, String>,
) -> Result<Verified> {
    let (fa, fb) = (File::open(orig)?, File::open(out)?);
    let mut fast: HashSet<String> = HashSet::new();
    let mut by_digest: Vec<(Dataset, &String)> = Vec::new();
    let mut as_stored: Vec<(Dataset, Dataset)> = Vec::new();
    for (db, names) in super::plan::datasets_of(&fb)? {
        let Some(first) = names.first() else { continue };
        let Ok(Object::Dataset(da)) = fa.object(first) else {
            // missing or of another kind: the description check says so
            continue;
        };
        let da = *da;
        if fill_of(&da) != fill_of(&db) {
            return Err(refused(format!("{first}: fill value differs")));
        }
        if let Some(want) = names.iter().find_map(|n| digests.get(n)) {
            fast.extend(names.iter().cloned());
            by_digest.push((db, want));
        } else if raw::raw_copyable(&da)
            && db.chunk_dims().is_some()
            && raw::chunk_shape(&da) == raw::chunk_shape(&db)
            && same_filters(&da, &db)
        {
            fast.extend(names.iter().cloned());
            as_stored.push((da, db));
        }
    }
    let hash = |p: &str| !fast.contains(p);
    let mut v = compare_dumps(
        orig,
        out,
        dump_file_with(orig, &hash)?,
        dump_file_with(out, &hash)?,
    )?;
    for (da, db) in &as_stored {
        let p = db.path();
        if stored_chunks_sha256(&fa, p)? != stored_chunks_sha256(&fb, p)? {
            // not moved as stored after all (chunks outside the extent
            // dropped...): the decoded data must still be equal
            if decoded_sha256(&fa, da.path())? != decoded_sha256(&fb, p)? {
                return Err(refused(format!("{p}: decoded data differs")));
            }
            v.decoded += 1;
        } else {
            v.stored += 1;
        }
    }
    for (db, want) in &by_digest {
        if output_digest(db)? != **want {
            return Err(refused(format!(
                "{}: decoded output chunks differ from the source",
                db.path()
            )));
        }
        v.decoded += 1;
    }
    Ok(v)
}

/// Compare two descriptions of [`dump_file`] (or [`dump_file_with`]).
fn compare_dumps(
    orig: &Path,
    out: &Path,
    a: crate::dump::walk::Dump,
    b: crate::dump::walk::Dump,
) -> Result<Verified> {
    let (oa, ob) = (objects(&a.doc), objects(&b.doc));
    if oa.len() != ob.len() {
        return Err(refused(format!(
            "{} objects in the source, {} in the output",
            oa.len(),
            ob.len()
        )));
    }
    let mut v = Verified::default();
    let (mut fa, mut fb) = (None, None);
    for (path, ra) in &oa {
        let Some(rb) = ob.get(path) else {
            return Err(refused(format!("{path} missing from the output")));
        };
        v.objects += 1;
        let is_ds = ra.get("kind").and_then(Value::as_str) == Some("dataset");
        let ok_a = ra.get("read_ok").and_then(Value::as_bool).unwrap_or(true);
        let ok_b = rb.get("read_ok").and_then(Value::as_bool).unwrap_or(true);
        if is_ds && !ok_a {
            // undecodable at the source: must be kept as stored
            let (fa, fb) = (open_once(&mut fa, orig)?, open_once(&mut fb, out)?);
            let (ha, hb) = (
                stored_chunks_sha256(fa, path)?,
                stored_chunks_sha256(fb, path)?,
            );
            if ha != hb {
                return Err(refused(format!(
                    "{path}: undecodable at the source and its stored chunks changed"
                )));
            }
            if content(ra) != content(rb) {
                return Err(refused(format!("{path}: description differs")));
            }
            v.stored += 1;
            continue;
        }
        if rb.get("error").is_some() || !ok_b {
            let why = rb
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("read failed");
            return Err(refused(format!("{path} unreadable in the output: {why}")));
        }
        if ra.get("error").is_some() {
            return Err(refused(format!("{path} unreadable in the source")));
        }
        if content(ra) != content(rb) {
            return Err(refused(format!("{path}: description or data differs")));
        }
        if is_ds && ra.get("read_skipped").is_some() {
            // too large for the dump's hash: hash both here
            let (fa, fb) = (open_once(&mut fa, orig)?, open_once(&mut fb, out)?);
            if decoded_sha256(fa, path)? != decoded_sha256(fb, path)? {
                return Err(refused(format!("{path}: decoded data differs")));
            }
            v.decoded += 1;
        } else if is_ds && ra.get("sha256").is_some() {
            v.decoded += 1;
        }
    }
    Ok(v)
}
