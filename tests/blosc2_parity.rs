//! Corruption parity with C-Blosc2 / C-Blosc (h5py + hdf5plugin 7.1): every
//! byte outside the codec payloads of small chunks of each kind (B2ND frames
//! like the medh5 profiles, plain 1-D frames, special-value frames, Blosc1
//! chunks) is flipped (xor 0x01 and 0xFF) by `tests/interop/blosc_parity.py`,
//! which classes what h5py reads: `same` (the original values), `diff` (other
//! values) or `err`. We class the same copies read through the library, both
//! as a dataset (the B2ND window path included) and through the filter
//! pipeline API, and require the same class as C, but for the commented
//! allow-list below.
//!
//! Needs `PUREHDF_ORACLE_PYTHON` (a Python with h5py and hdf5plugin);
//! without it the test prints `skipped: ...` and passes.

use purehdf::low_level::file::File;
use purehdf_filters::{self as filters, ChunkContext, FilterSpec};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Disagreements we keep, by kind prefix, field, C's class and ours.
const ALLOWED: &[(&str, &str, &str, &str, &str)] = &[
    // The dictionary bit of a data chunk: C reads a dictionary (size after
    // the block starts) and decodes with it; we do not support dictionaries.
    (
        "b2nd_",
        "chunk.blosc2_flags",
        "same",
        "err",
        "dictionary chunks unsupported",
    ),
    (
        "plain_",
        "chunk.blosc2_flags",
        "same",
        "err",
        "dictionary chunks unsupported",
    ),
    // A block shape whose padded chunk is larger than the special (zeros)
    // chunk: C copies the missing part from uninitialised memory; we give
    // zeros.
    (
        "b2nd_zeros",
        "frame.metalayers",
        "diff",
        "same",
        "C reads uninitialised memory",
    ),
    // A frame block size that leaves the one-block special chunk with two
    // blocks: C still reads it.
    (
        "b2nd_zeros",
        "frame.blocksize",
        "same",
        "err",
        "special chunk block count",
    ),
    // A special-value chunk whose nbytes shrinks: HDF5 takes the short
    // filter output; our reader refuses a chunk that decodes short.
    (
        "plain_const",
        "chunk.nbytes",
        "diff",
        "err",
        "short filter output",
    ),
];

fn oracle() -> Option<PathBuf> {
    std::env::var_os("PUREHDF_ORACLE_PYTHON").map(PathBuf::from)
}

fn class(got: Option<&[u8]>, want: &[u8]) -> &'static str {
    match got {
        None => "err",
        Some(v) if v.len() < want.len() => "err",
        Some(v) if &v[..want.len()] == want => "same",
        Some(_) => "diff",
    }
}

#[test]
fn blosc2_parity() {
    let Some(py) = oracle() else {
        println!("skipped: PUREHDF_ORACLE_PYTHON not set");
        return;
    };
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("purehdf_blosc2_parity_{}", std::process::id()));
    let status = Command::new(&py)
        .arg(here.join("tests/interop/blosc_parity.py"))
        .arg(&out)
        .status()
        .expect("run the oracle");
    assert!(status.success(), "blosc_parity.py failed");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(out.join("parity.json")).unwrap()).unwrap();
    let file = File::open(out.join("flips.h5")).unwrap();
    let root = file.root().unwrap();
    let (mut n, mut agree) = (0usize, 0usize);
    let mut kept: BTreeMap<String, usize> = BTreeMap::new();
    let mut bad = Vec::new();
    for k in doc["kinds"].as_array().unwrap() {
        let name = k["name"].as_str().unwrap();
        let chunk = std::fs::read(out.join(format!("{name}.chunk"))).unwrap();
        let want = std::fs::read(out.join(format!("{name}.raw"))).unwrap();
        let spec = FilterSpec {
            id: k["filter"].as_u64().unwrap() as u32,
            flags: 1,
            cd_values: k["cd_values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u32)
                .collect(),
            name: None,
        };
        let ctx = ChunkContext::new(k["dtype_size"].as_u64().unwrap() as usize, want.len());
        let mask = k["mask"].as_u64().unwrap() as u32;
        for f in k["flips"].as_array().unwrap() {
            let (ds, pos, x) = (
                f[0].as_str().unwrap(),
                f[1].as_u64().unwrap() as usize,
                f[2].as_u64().unwrap() as u8,
            );
            let (c, field) = (f[3].as_str().unwrap(), f[4].as_str().unwrap());
            let mut flipped = chunk.clone();
            flipped[pos] ^= x;
            let api = filters::decode_pipeline(std::slice::from_ref(&spec), mask, &ctx, &flipped);
            let via_api = class(api.as_deref().ok(), &want);
            let read = root.dataset(ds).and_then(|d| d.read_all_raw());
            let via_file = class(read.as_deref().ok(), &want);
            n += 1;
            if via_api != via_file {
                bad.push(format!(
                    "{ds} ({field}): filter API {via_api}, dataset read {via_file}"
                ));
                continue;
            }
            if via_api == c {
                agree += 1;
                continue;
            }
            let allowed = ALLOWED.iter().find(|(kp, fl, ac, ao, _)| {
                name.starts_with(kp) && *fl == field && *ac == c && *ao == via_api
            });
            match allowed {
                Some((_, _, _, _, why)) => {
                    *kept
                        .entry(format!("{name} {field} C {c} ours {via_api}: {why}"))
                        .or_default() += 1
                }
                None => {
                    let why = match (&api, &read) {
                        (Err(e), _) => e.to_string(),
                        (_, Err(e)) => e.to_string(),
                        _ => String::new(),
                    };
                    bad.push(format!("{ds} ({field}): C {c}, ours {via_api} {why}"));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    println!("blosc2 parity: {n} flips, {agree} agree");
    for (k, v) in &kept {
        println!("  allowed: {v} x {k}");
    }
    assert!(
        bad.is_empty(),
        "{} disagreements:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
