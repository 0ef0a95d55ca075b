//! Verification of a recompressed file before anything is replaced
//! (`shared/spec/neighbours.md` row E7): both files are described with
//! `h5 dump --json` (every group, dataset, attribute value, link and hard-link
//! alias, and a SHA-256 of every dataset's *decoded* data, which decodes every
//! stored chunk of the output), and the descriptions must be equal apart from
//! each dataset's storage (layout, chunk shape, filter ids). A dataset the
//! source cannot decode (a lossy codec we do not implement) must have been
//! kept as stored: its stored chunks (offsets, filter masks, bytes) are hashed
//! on both sides instead and must be equal. Datasets too large for the dump's
//! hash (over 2 GiB) are hashed here, one 64 MiB slab at a time.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::dump::canonical::hex;
use crate::dump::walk::dump_file;
use crate::error::{Error, Result};
use crate::hdf5fmt::chunk_index;
use crate::hdf5fmt::file::{File, Object};
use crate::hdf5fmt::selection::Selection;

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
    let a = dump_file(orig)?;
    let b = dump_file(out)?;
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
