//! libhdf5 must be able to edit every file we write.
//!
//! `tests/interop/libhdf5_edit.py` writes a small tree with h5py (seed 0:
//! the regression case of the issue, a compact scalar object reference and
//! a committed integer type; other seeds: random groups, datasets of compact,
//! contiguous and chunked layouts with filters and maxshape, few and many
//! attributes, long and Unicode names, references, aliases). `h5 copy`'s
//! library (`copy_file`) rewrites it with our writer, stored chunks kept and
//! re-encoded with deflate and with blosc2; then libhdf5 (h5py `r+`) edits
//! each copy — new groups and datasets, 32 attributes on every object
//! interleaved with the root's (compact to dense, and headers that cannot
//! grow in place at the end of the file, so libhdf5 adds continuation
//! chunks), deleted links, chunked datasets extended along maxshape — and
//! the edited copy must reopen with every untouched value equal to what it
//! held before. The same edit of the h5py-written source is the control:
//! `h5dump` must accept the edited copy whenever it accepts the edited
//! source (the installed h5dump 1.10 refuses some files h5py 2.0 writes).
//!
//! `PUREHDF_EDIT_COUNT` (default 20) sets how many random trees (seeds
//! 1..=N) are checked.

mod common;
use common::oracle_python;

use std::path::{Path, PathBuf};
use std::process::Command;

use purehdf::low_level::copy::{copy_file, parse_filter, CopyOptions};
use serde_json::Value;

const MODES: [(&str, &str); 3] = [
    ("keep", "keep"),
    ("deflate", "deflate:4"),
    ("blosc2", "blosc2:zstd:3:shuffle"),
];

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/libhdf5_edit.py")
}

fn python(py: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(py)
        .arg(script())
        .args(args)
        .output()
        .map_err(|e| format!("run python: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "python {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn edit(py: &Path, seed: u64, file: &Path, header_only: bool) -> Result<Value, String> {
    let s = seed.to_string();
    let f = file.to_string_lossy();
    let mut args = vec!["edit", "--seed", &s, "--file", &f];
    if header_only {
        args.push("--header-only");
    }
    let out = python(py, &args)?;
    serde_json::from_str(out.trim()).map_err(|e| format!("edit output {out:?}: {e}"))
}

fn scratch(tag: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("purehdf-libhdf5-edit-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Generate seed `seed`, copy it every way, let libhdf5 edit source and
/// copies; the problems found.
fn check_seed(py: &Path, dir: &Path, seed: u64) -> Vec<String> {
    let mut problems = Vec::new();
    let src = dir.join(format!("s{seed}.h5"));
    let s = seed.to_string();
    if let Err(e) = python(py, &["gen", "--seed", &s, "--out", &src.to_string_lossy()]) {
        return vec![format!("seed {seed}: generate: {e}")];
    }
    // the control: libhdf5 editing its own file
    let ctl = dir.join(format!("s{seed}.edit.h5"));
    std::fs::copy(&src, &ctl).expect("copy source");
    let control = match edit(py, seed, &ctl, false) {
        Ok(v) => v,
        Err(e) => {
            println!("seed {seed}: control edit of the source failed ({e}); skipped");
            return problems;
        }
    };
    let ctl_problems = control["problems"].as_array().map_or(0, Vec::len);
    if ctl_problems != 0 {
        println!(
            "seed {seed}: libhdf5 edits its own file with problems {}; skipped",
            control["problems"]
        );
        return problems;
    }
    for (label, filter) in MODES {
        // `..default()`: other branches add fields to CopyOptions
        #[allow(clippy::needless_update)]
        let opts = CopyOptions {
            filter: parse_filter(filter).expect("filter"),
            threads: 1,
            ..CopyOptions::default()
        };
        let dst = dir.join(format!("s{seed}.{label}.h5"));
        match copy_file(&src, &dst, &opts) {
            Err(e) => {
                problems.push(format!("seed {seed} {label}: copy: {e}"));
                continue;
            }
            Ok(r) if !r.skipped.is_empty() => {
                problems.push(format!("seed {seed} {label}: skipped {:?}", r.skipped));
            }
            Ok(_) => {}
        }
        // blosc2 data cannot be read by the installed h5dump (no plugin)
        let header_only = label == "blosc2";
        let ctl_dump = if header_only {
            edit_dump_header(&ctl)
        } else {
            control["h5dump"].as_bool()
        };
        match edit(py, seed, &dst, header_only) {
            Err(e) => problems.push(format!("seed {seed} {label}: libhdf5 edit: {e}")),
            Ok(v) => {
                if let Some(ps) = v["problems"].as_array() {
                    problems.extend(ps.iter().map(|p| format!("seed {seed} {label}: {p}")));
                }
                if ctl_dump == Some(true) && v["h5dump"].as_bool() != Some(true) {
                    problems.push(format!(
                        "seed {seed} {label}: h5dump refuses the edited copy (accepts the edited source): {}",
                        v["h5dump_err"]
                    ));
                }
            }
        }
        let _ = std::fs::remove_file(&dst);
    }
    let _ = std::fs::remove_file(&ctl);
    let _ = std::fs::remove_file(&src);
    problems
}

fn edit_dump_header(path: &Path) -> Option<bool> {
    Command::new("h5dump")
        .arg("-H")
        .arg(path)
        .output()
        .ok()
        .map(|o| o.status.success())
}

#[test]
fn compact_reference_survives_a_libhdf5_edit() {
    let Some(py) = oracle_python() else {
        println!("skipped: libhdf5 edit (no oracle python)");
        return;
    };
    let dir = scratch("regression");
    let problems = check_seed(&py, &dir, 0);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn random_trees_survive_libhdf5_edits() {
    let Some(py) = oracle_python() else {
        println!("skipped: libhdf5 edit (no oracle python)");
        return;
    };
    let count: u64 = std::env::var("PUREHDF_EDIT_COUNT")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(20);
    let dir = scratch("random");
    let mut problems = Vec::new();
    for seed in 1..=count {
        problems.extend(check_seed(&py, &dir, seed));
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "libhdf5 edit: {count} random trees x {} copies, {} problem(s)",
        MODES.len(),
        problems.len()
    );
    assert!(problems.is_empty(), "{problems:#?}");
}
