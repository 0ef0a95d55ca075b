//! Stepped selections of chunked datasets against libhdf5 (h5py through the
//! oracle interpreter, `tests/strided_reads/oracle.py`): random starts,
//! stops and steps (below, at and above the chunk edge) over every chunk
//! index (B-tree v1, single chunk, implicit, fixed array, extensible array,
//! B-tree v2), edge chunks, unwritten chunks read as the fill value, deflate,
//! shuffle, Blosc2 and unfiltered data, 1- to 12-byte elements; each read
//! equals the bytes h5py reads, through the raw and the typed read, on a
//! fresh open and with the decoded-chunk cache warm, with one thread and
//! with the default pool. Prints `skipped:` without the oracle.
//! `PUREHDF_STRIDED_CASES` sets the number of selections (default 600),
//! `PUREHDF_STRIDED_SEED` the seed.

mod common;
use common::oracle_python;

use purehdf::{File, Slice, SliceArg};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn slice_of(v: &Value) -> Slice {
    let args = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| SliceArg::Range {
            start: r[0].as_i64().unwrap(),
            end: Some(r[1].as_i64().unwrap()),
            step: r[2].as_i64().unwrap(),
        })
        .collect();
    Slice::new(args)
}

fn tmp() -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-strided-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn stepped_selections_equal_h5py() {
    let Some(py) = oracle_python() else {
        println!("skipped: strided reads (no oracle python)");
        return;
    };
    let n = env_u64("PUREHDF_STRIDED_CASES", 600);
    let seed = env_u64("PUREHDF_STRIDED_SEED", 47);
    let d = tmp();
    let (h5, js, bin) = (d.join("s.h5"), d.join("s.json"), d.join("s.bin"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/strided_reads/oracle.py");
    let st = Command::new(&py)
        .arg(script)
        .arg("make")
        .args([&h5, &js, &bin])
        .args([seed.to_string(), n.to_string()])
        .status()
        .unwrap();
    assert!(st.success(), "oracle failed");
    let cases: Vec<Value> = serde_json::from_slice(&std::fs::read(&js).unwrap()).unwrap();
    let blob = std::fs::read(&bin).unwrap();
    assert_eq!(cases.len() as u64, n);
    let mut files: HashMap<String, File> = HashMap::new();
    let mut nonempty = 0;
    for (i, c) in cases.iter().enumerate() {
        let path = c["file"].as_str().unwrap();
        let name = c["dataset"].as_str().unwrap();
        let (off, len) = (
            c["offset"].as_u64().unwrap() as usize,
            c["len"].as_u64().unwrap() as usize,
        );
        let want = &blob[off..off + len];
        let sl = slice_of(&c["slice"]);
        // A fresh open (no decoded chunk kept) every other case, else the
        // file kept open, whose cache the earlier cases warmed.
        let fresh;
        let file = if i % 2 == 0 {
            fresh = File::open(path).unwrap();
            &fresh
        } else {
            files
                .entry(path.to_string())
                .or_insert_with(|| File::open(path).unwrap())
        };
        let ds = file.root().unwrap().dataset(name).unwrap();
        let h = ds.hyperslab(&sl).unwrap();
        let mut got = vec![0xA5u8; len];
        // A quarter of the cases on one thread (no pool), the rest on the
        // default pool.
        let one = i % 4 == 3;
        if one {
            purehdf::threads::set_threads(1).unwrap();
        }
        ds.read_hyperslab_raw(&h, &mut got).unwrap();
        if one {
            purehdf::threads::set_threads(0).unwrap();
        }
        assert!(got == want, "case {i}: {c}");
        if name == "v1_f4" || name == "btree2_f4_4d" {
            let typed: Vec<f32> = ds.read_slice(&sl).unwrap();
            let bytes: Vec<u8> = typed.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert!(bytes == want, "typed case {i}: {c}");
        }
        nonempty += usize::from(len > 0);
    }
    assert!(nonempty == cases.len(), "{nonempty} of {}", cases.len());
    println!("strided reads: {} selections equal h5py's", cases.len());
    let _ = std::fs::remove_dir_all(&d);
}
