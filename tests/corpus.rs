//! The real-world corpus test: dumps every file of the shared corpus
//! (`../shared/corpus`, 846 HDF5 files from other projects) in-process and compares
//! each with libhdf5's expected description, as `check_dump.py` does.
//!
//! Scopes (as check_dump.py): `contiguous` — h5py reads every dataset and no dataset
//! is chunked; `inscope` — h5py reads every dataset and every filter is one purehdf
//! supports; `all` — every file, checked only for no crash and no hang.
//!
//! The match floors below start at what works when they were set; **the integrator
//! raises them as the reader improves** so that a regression fails the test.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{corpus_dir, dump_with_limit, load_json, read_manifest, Outcome};
use purehdf_cli::dump::compare::compare;

/// Minimum number of matching files in scope `contiguous` (raise as the reader improves).
const FLOOR_CONTIGUOUS: usize = 546;
/// Minimum number of matching files in scope `inscope` (raise as the reader improves).
const FLOOR_INSCOPE: usize = 786;
/// Time limit per file.
const LIMIT: Duration = Duration::from_secs(10);

const SUPPORTED: [&str; 13] = [
    "deflate",
    "shuffle",
    "fletcher32",
    "szip",
    "nbit",
    "scaleoffset",
    "lzf",
    "blosc",
    "blosc2",
    "bitshuffle",
    "lz4",
    "zstd",
    "bzip2",
];

fn set(s: &str) -> BTreeSet<&str> {
    s.split(',').filter(|x| !x.is_empty()).collect()
}

#[derive(Default)]
struct Tally {
    total: usize,
    matched: usize,
    crashes: usize,
    hangs: usize,
}

#[test]
fn corpus_matches_libhdf5() {
    let Some(dir) = corpus_dir() else {
        println!("skipped: ../shared/corpus absent");
        return;
    };
    let rows = read_manifest(&dir);
    let started = Instant::now();
    let (mut contiguous, mut inscope, mut all) =
        (Tally::default(), Tally::default(), Tally::default());
    let mut mismatches: Vec<(String, String)> = Vec::new();
    let mut crashes: Vec<(String, String)> = Vec::new();
    for r in &rows {
        let rel = r.get("path").cloned().unwrap_or_default();
        let readable = r.get("h5py_reads_all").map(String::as_str) == Some("yes");
        let layouts = set(r.get("layouts").map(String::as_str).unwrap_or(""));
        let filters = set(r.get("filters").map(String::as_str).unwrap_or(""));
        let in_contiguous = readable
            && layouts
                .iter()
                .all(|l| *l == "contiguous" || *l == "compact");
        let in_inscope = readable && filters.iter().all(|f| SUPPORTED.contains(f));
        let outcome = dump_with_limit(&dir.join(&rel), LIMIT);
        let verdict: Result<(), String> = match &outcome {
            Outcome::Crash(m) => Err(format!("crash: {m}")),
            Outcome::Hang => Err("hang".into()),
            Outcome::OpenError(e) => Err(format!("no JSON (cannot open: {e})")),
            Outcome::Dumped(doc) => {
                let exp = load_json(&dir.join("expected").join(format!("{rel}.json")));
                match exp {
                    None => Err("expected JSON missing".into()),
                    Some(exp) => {
                        let d = compare(&exp, doc);
                        if d.is_empty() {
                            Ok(())
                        } else {
                            Err(d.into_iter().take(3).collect::<Vec<_>>().join("; "))
                        }
                    }
                }
            }
        };
        let crashed = matches!(outcome, Outcome::Crash(_));
        let hung = matches!(outcome, Outcome::Hang);
        for (in_scope, t) in [
            (in_contiguous, &mut contiguous),
            (in_inscope, &mut inscope),
            (true, &mut all),
        ] {
            if !in_scope {
                continue;
            }
            t.total += 1;
            t.crashes += usize::from(crashed);
            t.hangs += usize::from(hung);
        }
        all.matched += usize::from(!crashed && !hung);
        if crashed || hung {
            crashes.push((rel.clone(), verdict.clone().err().unwrap_or_default()));
        }
        match verdict {
            Ok(()) => {
                contiguous.matched += usize::from(in_contiguous);
                inscope.matched += usize::from(in_inscope);
            }
            Err(why) => {
                if in_contiguous || in_inscope {
                    mismatches.push((rel, why));
                }
            }
        }
    }
    println!("first mismatches (of {}):", mismatches.len());
    for (p, why) in mismatches.iter().take(20) {
        println!("  {p}: {why}");
    }
    for (p, why) in &crashes {
        println!("  CRASH/HANG {p}: {why}");
    }
    println!(
        "corpus: {}/{} contiguous files match, {} crashes, {} hangs",
        contiguous.matched, contiguous.total, contiguous.crashes, contiguous.hangs
    );
    println!(
        "corpus: {}/{} inscope files match, {} crashes, {} hangs",
        inscope.matched, inscope.total, inscope.crashes, inscope.hangs
    );
    println!(
        "corpus: {}/{} all files without crash or hang, {} crashes, {} hangs ({:.1} s)",
        all.matched,
        all.total,
        all.crashes,
        all.hangs,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(all.crashes, 0, "crashes: {crashes:?}");
    assert_eq!(all.hangs, 0, "hangs: {crashes:?}");
    assert!(
        contiguous.matched >= FLOOR_CONTIGUOUS,
        "contiguous matches fell below the floor"
    );
    assert!(
        inscope.matched >= FLOOR_INSCOPE,
        "inscope matches fell below the floor"
    );
}
