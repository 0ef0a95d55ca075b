//! Differential round trips on seeded random h5py files (issue 13): for every
//! file `tests/interop/gen_random_h5.py` writes, our read (`h5 dump --json`)
//! must equal libhdf5's description (`make_expected.py` of the shared corpus),
//! and `h5 copy` (stored chunks kept, and re-encoded with deflate) must give a
//! file that h5py describes like the source on more than values — link kinds
//! and targets, hard-link identity and reference counts, listing order,
//! creation-order flags, committed types, maxshape, layout, chunk shape,
//! filters and their parameters, fill values, attribute types and shapes —
//! that libhdf5 can edit (delete an alias, add a dataset, add 30 attributes)
//! and read back, and that `h5dump -H` accepts whenever it accepts the source.
//!
//! `PUREHDF_ROUNDTRIP_SEEDS` (comma separated, default `1,2,3`) and
//! `PUREHDF_ROUNDTRIP_COUNT` (files per seed, default 100) set the size.
//!
//! Where libhdf5/h5py themselves misbehave, and what we decided:
//! - h5py reads vlen sequences of big-endian numbers byte-swapped (it labels
//!   the file-order bytes native): the generator writes vlen sequences of
//!   little-endian bases only; our dump hashes such data as h5py reads it
//!   (see `dump::canonical::vlen_keeps_file_order`).
//! - hdf5plugin's `set_local` for a pipeline holding bitshuffle twice
//!   rewrites the first stage's client data twice and leaves the second as
//!   given; libhdf5 reads the first as plain bitshuffle (compression code 4
//!   is unknown to the plugin) and the second stage, which failed on write,
//!   is skipped by the filter mask. We read such chunks the same way
//!   (`chunk_index::read::as_plugins_read`).
//! - Unwritten chunks of a dataset without a fill value read as zeros in
//!   both; data never written under `H5D_FILL_TIME_NEVER` is uninitialised
//!   in libhdf5, so the generator never sets that fill time.
//! - Allocation and fill times are not compared: the writer chooses them
//!   per layout (early for compact, late for contiguous, incremental for
//!   chunked), as h5py's defaults do, and libhdf5 reads both the same.
//! - A copy is re-encoded with deflate: its layout, chunk shape and filters
//!   may differ from the source by design and are not compared in that mode.
//! - Object header modification/access times are not kept (the writer
//!   never tracks times), so they are not compared.
//! - libhdf5 leaves shuffle's client data empty for variable-length types,
//!   so the stage fails on every chunk and, being optional, is skipped by
//!   the filter mask; the writer does the same (same pipeline listed, same
//!   masks), rather than completing the parameters.
//! - libhdf5 frees an object only with its last link and counts datasets and
//!   attributes using a committed datatype as references to it: the copy's
//!   reference counts are compared with the source's.
//!
//! What the comparison still cannot express (not generated): user-defined
//! links and virtual datasets (written with their mappings: tests/neighbours_esrf.rs), shared
//! object header messages (SOHM tables), partial edge chunks stored
//! unfiltered (h5py cannot ask for them; the copier re-encodes such
//! datasets), external raw storage, the targets of external links (never
//! opened), region references beyond their selection type, point count and
//! bounds, and the exact stored bytes or chunk index types of a copy (only
//! what h5py reports is compared).

mod common;
use common::{oracle_python, shared_dir};

use std::path::{Path, PathBuf};
use std::process::Command;

use purehdf::low_level::copy::{copy_file, parse_filter, CopyOptions};
use purehdf_cli::dump::compare::compare;
use purehdf_cli::dump::dump_file;
use serde_json::Value;

fn generator() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/gen_random_h5.py")
}

fn env_list(name: &str, default: &str) -> Vec<u64> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

fn run_py(py: &Path, args: &[String]) -> Value {
    let out = Command::new(py)
        .arg(generator())
        .args(args)
        .output()
        .expect("run the generator");
    assert!(
        out.status.success(),
        "generator {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or("");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("generator output {last:?}: {e}"))
}

#[test]
fn random_h5py_files_round_trip() {
    let Some(py) = oracle_python() else {
        println!("skipped: h5 roundtrip (no oracle python)");
        return;
    };
    let make_expected = shared_dir()
        .map(|d| d.join("corpus/make_expected.py"))
        .filter(|p| p.is_file());
    if make_expected.is_none() {
        println!("note: h5 roundtrip: ../shared/corpus/make_expected.py absent, our read is not compared");
    }
    let seeds = env_list("PUREHDF_ROUNDTRIP_SEEDS", "1,2,3");
    let count = env_list("PUREHDF_ROUNDTRIP_COUNT", "100")
        .first()
        .copied()
        .unwrap_or(100);
    let tmp = std::env::temp_dir().join(format!("purehdf-roundtrip-{}", std::process::id()));
    let modes = [("keep", "keep"), ("enc", "deflate:1")];
    let mut files = 0usize;
    let mut read_equal = 0usize;
    let mut problems: Vec<String> = Vec::new();
    let mut copies = 0usize;
    for &seed in &seeds {
        let dir = tmp.join(format!("seed{seed}"));
        let mut args = vec![
            "gen".to_string(),
            "--seed".into(),
            seed.to_string(),
            "--count".into(),
            count.to_string(),
            "--out".into(),
            dir.display().to_string(),
        ];
        if let Some(m) = &make_expected {
            args.push("--expected".into());
            args.push(m.display().to_string());
        }
        run_py(&py, &args);
        for i in 0..count {
            let src = dir.join(format!("f{i:03}.h5"));
            files += 1;
            let tag = format!("seed {seed} f{i:03}");
            if make_expected.is_some() {
                let exp = common::load_json(&dir.join(format!("f{i:03}.exp.json")))
                    .expect("expected description");
                match dump_file(&src) {
                    Err(e) => problems.push(format!("{tag}: dump: {e}")),
                    Ok(d) => {
                        let diffs = compare(&exp, &d.doc);
                        if diffs.is_empty() {
                            read_equal += 1;
                        } else {
                            problems.push(format!("{tag}: read: {}", diffs.join("; ")));
                        }
                    }
                }
            }
            for (label, filter) in modes {
                // `..default()`: other branches add fields to CopyOptions
                #[allow(clippy::needless_update)]
                let opts = CopyOptions {
                    filter: parse_filter(filter).expect("filter"),
                    threads: 1,
                    ..CopyOptions::default()
                };
                let dst = dir.join(format!("f{i:03}.{label}.h5"));
                match copy_file(&src, &dst, &opts) {
                    Err(e) => problems.push(format!("{tag} {label}: copy: {e}")),
                    Ok(r) => {
                        copies += 1;
                        if !r.skipped.is_empty() {
                            problems.push(format!("{tag} {label}: skipped {:?}", r.skipped));
                        }
                    }
                }
            }
        }
        let check = run_py(
            &py,
            &[
                "check".into(),
                "--seed".into(),
                seed.to_string(),
                "--count".into(),
                count.to_string(),
                "--out".into(),
                dir.display().to_string(),
            ],
        );
        for p in check
            .get("problems")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            problems.push(format!("seed {seed} {}", p.as_str().unwrap_or("?")));
        }
    }
    for p in problems.iter().take(40) {
        println!("  {}", p.chars().take(400).collect::<String>());
    }
    println!(
        "h5 roundtrip: {files} random files over {} seeds, {read_equal} read equal to libhdf5, \
{copies} copies, {} problem(s)",
        seeds.len(),
        problems.len()
    );
    if problems.is_empty() {
        let _ = std::fs::remove_dir_all(&tmp);
    } else {
        println!("h5 roundtrip: files kept in {}", tmp.display());
    }
    assert!(problems.is_empty(), "{} problem(s)", problems.len());
    if make_expected.is_some() {
        assert_eq!(read_equal, files);
    }
}
