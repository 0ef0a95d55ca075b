//! Golden files (tests/golden/*.h5, written by h5py/libhdf5 with make_golden.py):
//! dumps each one and compares with the oracle's description the way
//! `check_dump.py` does. Objects that already match are pinned in `MUST_MATCH`, so a
//! regression fails; the whole-file check is reported (and becomes an assertion for
//! the files in `FILES_MATCHING`).

mod common;

use std::path::Path;
use std::time::Duration;

use common::{dump_with_limit, load_json, Outcome};
use purehdf::dump::compare::compare;

const FILES: [&str; 4] = [
    "ext_target.h5",
    "sb0_earliest.h5",
    "sb2_v108.h5",
    "sb3_latest.h5",
];

/// Files whose whole dump matches the oracle today (the integrator adds more as the
/// reader and filters land).
const FILES_MATCHING: &[&str] = &["ext_target.h5"];

#[test]
fn golden_files_match_libhdf5() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut report = Vec::new();
    let mut failed_required = Vec::new();
    for f in FILES {
        let exp =
            load_json(&dir.join("expected").join(format!("{f}.json"))).expect("expected JSON");
        let diffs = match dump_with_limit(&dir.join(f), Duration::from_secs(30)) {
            Outcome::Dumped(doc) => compare(&exp, &doc),
            Outcome::OpenError(e) => vec![format!("cannot open: {e}")],
            Outcome::Crash(m) => vec![format!("CRASH: {m}")],
            Outcome::Hang => vec!["HANG".to_string()],
        };
        let crash = diffs.iter().any(|d| d.starts_with("CRASH") || d == "HANG");
        println!(
            "golden {f}: {}",
            if diffs.is_empty() {
                "match".to_string()
            } else {
                format!("{} differences", diffs.len())
            }
        );
        for d in diffs.iter().take(40) {
            println!("    {d}");
        }
        if crash || (!diffs.is_empty() && FILES_MATCHING.contains(&f)) {
            failed_required.push(f);
        }
        report.push((f, diffs.len()));
    }
    let matching = report.iter().filter(|(_, n)| *n == 0).count();
    println!("golden: {matching}/{} files match", report.len());
    assert!(
        failed_required.is_empty(),
        "golden files that must match do not (or crashed): {failed_required:?}"
    );
}
