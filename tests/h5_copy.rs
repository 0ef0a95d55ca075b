//! `h5 copy` over the shared corpus: every file h5py reads whole (except those
//! with virtual datasets, whose copies land in another folder where their
//! relative sources do not resolve (tests/neighbours_esrf.rs e4 copies them
//! beside their sources and reads them through h5py), and those whose root
//! header libhdf5 cannot read) is copied with `keep` and with
//! `blosc2:zstd:3:shuffle`, re-read with our reader and compared with the
//! oracle's `expected/<path>.json` (tree, shapes, dtypes, attributes, data hashes).

mod common;
use common::oracle_python;

use std::path::{Path, PathBuf};

use purehdf::low_level::copy::{copy_file, parse_filter, CopyOptions};
use purehdf_cli::dump::compare::compare;
use purehdf_cli::dump::dump_file;
use serde_json::Value;

fn corpus() -> Option<PathBuf> {
    let rel = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if rel.join("MANIFEST.tsv").is_file() {
        return Some(rel);
    }
    println!("skipped: ../shared/corpus absent");
    None
}

fn expected(root: &Path, rel: &str) -> Option<Value> {
    let p = root.join("expected").join(format!("{rel}.json"));
    serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
}

/// Corpus files h5py reads whole, minus features the copy cannot carry.
fn candidates(root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (c_path, c_reads, c_layouts) = (col("path"), col("h5py_reads_all"), col("layouts"));
    let mut out = Vec::new();
    let mut virt = 0;
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        let get = |i: usize| f.get(i).copied().unwrap_or("");
        if get(c_reads) != "yes" {
            continue;
        }
        // external links are copied as links, external raw storage into the
        // file; virtual datasets are written, but their relative sources
        // would not resolve from the copy's folder
        if get(c_layouts).contains("virtual") {
            virt += 1;
        } else {
            out.push(get(c_path).to_string());
        }
    }
    println!(
        "h5 copy corpus: {} candidates; left out: {virt} with virtual datasets",
        out.len()
    );
    out
}

/// The oracle could not read the root group's header at all (a file whose
/// writer never flushed it: all zeros, "bad object header version"): there
/// is nothing to copy.
fn source_root_unreadable(exp: &Value) -> bool {
    exp.get("errors")
        .and_then(Value::as_array)
        .is_some_and(|errs| {
            errs.iter().any(|e| {
                let field = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
                field("path") == "/"
                    && field("what") == "object_info"
                    && field("error").contains("bad object header version")
            })
        })
}

/// Hash checks by h5py + hdf5plugin: `pairs` of (copy, expected json).
const ORACLE: &str = r#"
import sys, json, hashlib
import h5py, hdf5plugin, numpy as np
bad = 0; checked = 0
for line in sys.stdin:
    copy, exp = line.rstrip('\n').split('\t')
    want = {o['path']: o for o in json.load(open(exp))['objects']}
    with h5py.File(copy, 'r') as f:
        def visit(name, obj):
            global bad, checked
            if not isinstance(obj, h5py.Dataset): return
            o = want.get('/' + name)
            if not o or o.get('hash_kind') != 'raw-le-packed' or not o.get('sha256'): return
            if obj.dtype.fields is not None or obj.dtype.subdtype is not None: return  # packing rules differ
            a = obj[()]
            a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder('<') if a.dtype.byteorder == '>' else a.dtype)
            checked += 1
            if hashlib.sha256(a.tobytes()).hexdigest() != o['sha256']:
                bad += 1; print('MISMATCH', copy, name, file=sys.stderr)
        f.visititems(visit)
print(checked, bad)
"#;

#[test]
fn h5_copy_corpus() {
    let Some(root) = corpus() else { return };
    let files = candidates(&root);
    let tmp = std::env::temp_dir().join(format!("purehdf-h5copy-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let modes = [("keep", "keep"), ("blosc2", "blosc2:zstd:3:shuffle")];
    let mut eligible = 0usize;
    let mut ok = [0usize; 2];
    let mut oracle_pairs: Vec<String> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut root_unreadable = 0usize;
    for (i, rel) in files.iter().enumerate() {
        let Some(exp) = expected(&root, rel) else {
            continue;
        };
        if source_root_unreadable(&exp) {
            root_unreadable += 1;
            continue;
        }
        let src = root.join(rel);
        // only files our reader already matches the oracle on
        let Ok(base) = dump_file(&src) else { continue };
        if !compare(&exp, &base.doc).is_empty() {
            continue;
        }
        eligible += 1;
        for (m, (label, filter)) in modes.iter().enumerate() {
            let opts = CopyOptions {
                filter: parse_filter(filter).unwrap(),
                threads: 0,
                ..Default::default()
            };
            let dst = tmp.join(format!("{i}-{label}.h5"));
            let res = copy_file(&src, &dst, &opts).and_then(|_| dump_file(&dst));
            match res {
                Err(e) => failures.push(format!("{label} {rel}: {e}")),
                Ok(d) => {
                    let diffs = compare(&exp, &d.doc);
                    if diffs.is_empty() {
                        ok[m] += 1;
                        if i % 7 == 0 {
                            oracle_pairs.push(format!(
                                "{}\t{}",
                                dst.display(),
                                root.join("expected").join(format!("{rel}.json")).display()
                            ));
                        }
                    } else {
                        failures.push(format!("{label} {rel}: {}", diffs.join("; ")));
                    }
                }
            }
        }
    }
    for f in &failures {
        println!("  {}", f.chars().take(240).collect::<String>());
    }
    println!(
        "h5 copy: left out {root_unreadable} whose source root is unreadable (libhdf5 reports errors on '/'; nothing to copy)"
    );
    println!("h5 copy keep: {} of {eligible}", ok[0]);
    println!("h5 copy blosc2: {} of {eligible}", ok[1]);
    if let Some(py) = oracle_python() {
        use std::io::Write;
        let mut child = std::process::Command::new(py)
            .arg("-c")
            .arg(ORACLE)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(oracle_pairs.join("\n").as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        println!(
            "h5py oracle on {} copies: checked, mismatched = {text}",
            oracle_pairs.len()
        );
        let nums: Vec<usize> = text
            .split_whitespace()
            .filter_map(|t| t.parse().ok())
            .collect();
        assert!(out.status.success(), "oracle failed");
        assert_eq!(nums.get(1), Some(&0), "h5py disagrees with some copies");
        assert!(
            nums.first().is_some_and(|&c| c > 0),
            "oracle checked nothing"
        );
    } else {
        println!("skipped oracle check: no oracle python (PUREHDF_ORACLE_PYTHON or .oracle-venv)");
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(eligible >= 700, "only {eligible} eligible files");
    // measured 778 of 778 in both modes (2 left out: root header never
    // written; 9 with virtual datasets). tlonglinks.h5 needs link messages over
    // 64 KiB in dense storage (huge heap objects); tbigdims.h5 (a 4 GiB dataset
    // with 2 stored chunks) needs chunk-by-chunk re-encoding.
    assert!(
        ok[0] >= 778 && ok[0] == eligible,
        "keep: {} of {eligible}",
        ok[0]
    );
    assert!(
        ok[1] >= 778 && ok[1] == eligible,
        "blosc2: {} of {eligible}",
        ok[1]
    );
}
