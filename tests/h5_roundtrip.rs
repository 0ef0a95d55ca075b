//! Differential round trips on seeded random h5py files (issue 13): for every
//! file `tests/interop/gen_random_h5.py` writes, our read (`h5 dump --json`)
//! must equal libhdf5's description (`make_expected.py` of the shared corpus),
//! and `h5 copy` (stored chunks kept, and re-encoded with deflate) must give a
//! file that h5py describes like the source on more than values — link kinds
//! and targets, hard-link identity and reference counts, listing order,
//! creation-order flags, committed types, maxshape, layout, chunk shape,
//! filters and their parameters, fill values, attribute types and shapes —
//! that libhdf5 can edit (`libhdf5_edit.py`'s edit: links deleted, groups,
//! datasets and 12 attributes per object added — compact to dense —, chunked
//! datasets extended and their new rows written) with every untouched value
//! read back unchanged, and that `h5dump -H` accepts whenever it accepts the
//! source. The files draw long and Unicode names, deep trees, many links
//! and attributes per object (compact to dense and back).
//!
//! Size: 1,000 files by default, in batches of `PUREHDF_ROUNDTRIP_COUNT`
//! (default 50) files per seed, over fresh seeds drawn from the clock
//! (printed; `PUREHDF_ROUNDTRIP_SEED` fixes the first), `PUREHDF_ROUNDTRIP_FILES`
//! sets the total; `PUREHDF_ROUNDTRIP_SEEDS` (comma separated) lists the seeds
//! instead. Batches run on `PUREHDF_ROUNDTRIP_JOBS` workers (default: the
//! cores). A problem names its seed and file, and the line to reproduce it.
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

fn run_py(py: &Path, args: &[String]) -> Result<Value, String> {
    let out = Command::new(py)
        .arg(generator())
        .args(args)
        .output()
        .map_err(|e| format!("run the generator: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(6).collect();
        return Err(format!("{} failed: {}", args[0], tail.join(" | ")));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or("");
    serde_json::from_str(last).map_err(|e| format!("generator output {last:?}: {e}"))
}

/// The seeds to run: the listed ones, or `files / count` consecutive seeds
/// from `PUREHDF_ROUNDTRIP_SEED` or the clock.
fn plan(count: u64) -> Vec<u64> {
    if std::env::var("PUREHDF_ROUNDTRIP_SEEDS").is_ok() {
        return env_list("PUREHDF_ROUNDTRIP_SEEDS", "");
    }
    let files = env_list("PUREHDF_ROUNDTRIP_FILES", "1000")
        .first()
        .copied()
        .unwrap_or(1000);
    let first = env_list("PUREHDF_ROUNDTRIP_SEED", "")
        .first()
        .copied()
        .unwrap_or_else(|| {
            // fresh per run: seconds since the epoch, spaced so that the
            // batches of two runs a second apart do not overlap
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            (t % 1_000_000_000) * 1000
        });
    (0..files.div_ceil(count.max(1)))
        .map(|k| first + k)
        .collect()
}

/// What one batch (one seed) found.
#[derive(Default)]
struct Batch {
    files: usize,
    read_equal: usize,
    copies: usize,
    problems: Vec<String>,
    notes: Vec<String>,
}

/// Generate seed `seed`'s `count` files in `dir`, compare our read with
/// libhdf5's, copy each both ways, and let the checker describe, compare
/// and edit the copies.
fn run_batch(py: &Path, make_expected: Option<&Path>, seed: u64, count: u64, dir: &Path) -> Batch {
    let mut b = Batch::default();
    let mut args = vec![
        "gen".to_string(),
        "--seed".into(),
        seed.to_string(),
        "--count".into(),
        count.to_string(),
        "--out".into(),
        dir.display().to_string(),
    ];
    if let Some(m) = make_expected {
        args.push("--expected".into());
        args.push(m.display().to_string());
    }
    if let Err(e) = run_py(py, &args) {
        b.problems.push(format!("seed {seed}: generate: {e}"));
        return b;
    }
    let modes = [("keep", "keep"), ("enc", "deflate:1")];
    for i in 0..count {
        let src = dir.join(format!("f{i:03}.h5"));
        b.files += 1;
        let tag = format!("seed {seed} f{i:03}");
        if make_expected.is_some() {
            let exp = common::load_json(&dir.join(format!("f{i:03}.exp.json")))
                .expect("expected description");
            match dump_file(&src) {
                Err(e) => b.problems.push(format!("{tag}: dump: {e}")),
                Ok(d) => {
                    let diffs = compare(&exp, &d.doc);
                    if diffs.is_empty() {
                        b.read_equal += 1;
                    } else {
                        b.problems
                            .push(format!("{tag}: read: {}", diffs.join("; ")));
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
                Err(e) => b.problems.push(format!("{tag} {label}: copy: {e}")),
                Ok(r) => {
                    b.copies += 1;
                    if !r.skipped.is_empty() {
                        b.problems
                            .push(format!("{tag} {label}: skipped {:?}", r.skipped));
                    }
                }
            }
        }
    }
    let check = [
        "check".to_string(),
        "--seed".into(),
        seed.to_string(),
        "--count".into(),
        count.to_string(),
        "--out".into(),
        dir.display().to_string(),
    ];
    match run_py(py, &check) {
        Err(e) => b.problems.push(format!("seed {seed}: check: {e}")),
        Ok(v) => {
            let list = |k: &str| -> Vec<String> {
                v.get(k)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|p| format!("seed {seed} {}", p.as_str().unwrap_or("?")))
                    .collect()
            };
            b.problems.extend(list("problems"));
            b.notes.extend(list("notes"));
        }
    }
    b
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
    let count = env_list("PUREHDF_ROUNDTRIP_COUNT", "50")
        .first()
        .copied()
        .unwrap_or(50);
    let seeds = plan(count);
    let jobs = env_list("PUREHDF_ROUNDTRIP_JOBS", "")
        .first()
        .map(|&j| j as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    println!(
        "h5 roundtrip: seeds {:?}..={:?} x {count} files, {jobs} workers",
        seeds.first(),
        seeds.last()
    );
    let tmp = std::env::temp_dir().join(format!("purehdf-roundtrip-{}", std::process::id()));
    let t0 = std::time::Instant::now();
    let queue = std::sync::Mutex::new(seeds.clone());
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let Some(seed) = queue.lock().unwrap().pop() else {
                    break;
                };
                let dir = tmp.join(format!("seed{seed}"));
                let b = run_batch(&py, make_expected.as_deref(), seed, count, &dir);
                if b.problems.is_empty() {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                done.lock().unwrap().push((seed, b));
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(s, _)| *s);
    let (mut files, mut read_equal, mut copies) = (0, 0, 0);
    let mut problems: Vec<String> = Vec::new();
    for (seed, b) in &done {
        files += b.files;
        read_equal += b.read_equal;
        copies += b.copies;
        for n in &b.notes {
            println!("  note: {}", n.chars().take(300).collect::<String>());
        }
        if !b.problems.is_empty() {
            println!(
                "  reproduce: PUREHDF_ROUNDTRIP_SEEDS={seed} PUREHDF_ROUNDTRIP_COUNT={count} \
cargo test --release --test h5_roundtrip -- --nocapture"
            );
        }
        problems.extend(b.problems.iter().cloned());
    }
    for p in problems.iter().take(40) {
        println!("  {}", p.chars().take(400).collect::<String>());
    }
    println!(
        "h5 roundtrip: {files} random files over {} seeds, {read_equal} read equal to libhdf5, \
{copies} copies (each edited by libhdf5), {} problem(s), {:.1} s",
        seeds.len(),
        problems.len(),
        t0.elapsed().as_secs_f64()
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
