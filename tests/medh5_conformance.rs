//! medh5 validator conformance: the reference publishes its conformance suite
//! (`medh5 conformance publish`), our validator (`purehdf_medh5::validate`)
//! checks each case at its declared level, and the reference's scorer
//! (`medh5 conformance score`) judges the results. The 41 storage, integrity
//! and collection cases must all pass; the full 175-case suite is scored
//! informatively (with a floor). A third test compares our diagnostics
//! (code and location) with the reference's on the shared test vectors at
//! `semantic` and `integrity` level. Needs the oracle venv
//! (`scripts/oracle-venv.sh`); skipped with a message when it is absent.

mod common;
use common::oracle_bin;

use std::path::{Path, PathBuf};
use std::process::Command;

use purehdf_medh5::validate::{validate_path, Level, Options};
use serde_json::{json, Value};

/// The 41 cases of the §12 table of `docs/medh5-format.md`.
const CASES_41: &[&str] = &[
    "core-minimal",
    "E001-missing-version",
    "E001-dangling-image",
    "E001-non-numeric-image",
    "E002-unsupported-major",
    "E003-bad-identifier",
    "E004-meta-not-json",
    "E004-meta-not-a-dataset",
    "E005-meta-schema",
    "E006-missing-kind",
    "E007-unknown-profile",
    "E008-missing-grids",
    "E008-dangling-images",
    "E008-images-not-a-group",
    "E201-no-images",
    "E202-shape-mismatch",
    "E205-missing-image-attribute",
    "E109-missing-grid-attribute",
    "E111-empty-grids",
    "W902-uncompressed-bulk",
    "W903-no-deidentification",
    "training-index",
    "W905-stale-index",
    "integrity-index-sha512",
    "E701-digest-mismatch",
    "E702-content-id-mismatch",
    "E703-malformed-digest",
    "E703-unknown-digest-algo",
    "E703-every-digest-malformed",
    "E703-digest-not-canonical",
    "E704-aliased-attested-path",
    "integrity-later-alias",
    "W901-no-digests",
    "W915-undigested-attested-dataset",
    "collection-two-samples",
    "E010-collection-member-without-content-id",
    "E003-collection-bad-sample-key",
    "E008-collection-without-samples-group",
    "collection-mixed-versions",
    "E011-collection-version-below-member",
    "W913-higher-minor-projection",
];

/// The lowest full-suite score accepted (raise it as the validator grows).
const FLOOR_ALL: u64 = 175;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-conf-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn medh5(bin: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(bin.join("medh5"))
        .args(args)
        .output()
        .expect("run the reference medh5");
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Validate every case of a published suite at its level; write the results
/// file; return the scorer's JSON.
fn score_suite(bin: &Path, suite: &Path) -> Value {
    let expected: Value =
        serde_json::from_slice(&std::fs::read(suite.join("expected.json")).expect("expected.json"))
            .expect("expected.json parses");
    let cases = expected["cases"].as_array().expect("cases");
    let mut results = Vec::new();
    for case in cases {
        let file = case["file"].as_str().expect("file");
        let level =
            Level::from_name(case["level"].as_str().unwrap_or("semantic")).expect("known level");
        let opts = Options {
            level,
            ..Default::default()
        };
        let rep = validate_path(&suite.join(file), &opts);
        let diags: Vec<Value> = rep
            .diagnostics
            .iter()
            .map(|d| json!({"code": d.code, "severity": d.severity()}))
            .collect();
        results.push(json!({"file": file, "diagnostics": diags}));
    }
    let results_path = suite.join("results.json");
    std::fs::write(&results_path, serde_json::to_vec(&results).expect("json")).expect("write");
    let (_, out) = medh5(
        bin,
        &[
            "conformance",
            "score",
            suite.to_str().expect("utf-8 path"),
            results_path.to_str().expect("utf-8 path"),
            "--json",
        ],
    );
    serde_json::from_str(&out).expect("score --json parses")
}

fn print_failures(score: &Value) {
    for f in score["failures"].as_array().into_iter().flatten() {
        println!(
            "  FAIL {}: missing {} unexpected {}",
            f["name"], f["missing"], f["unexpected"]
        );
    }
}

#[test]
fn storage_integrity_collection_cases_all_pass() {
    let Some(bin) = oracle_bin() else {
        println!("skipped: oracle venv absent (PUREHDF_ORACLE_PYTHON or .oracle-venv)");
        return;
    };
    let dir = scratch("41");
    let mut args: Vec<&str> = vec!["conformance", "publish", dir.to_str().expect("utf-8")];
    for c in CASES_41 {
        args.push("--case");
        args.push(c);
    }
    let (rc, _) = medh5(&bin, &args);
    assert_eq!(rc, 0, "conformance publish failed");
    let score = score_suite(&bin, &dir);
    let passed = score["passed"].as_u64().unwrap_or(0);
    let cases = score["cases"].as_u64().unwrap_or(0);
    println!("medh5 conformance: {passed}/{cases} storage/integrity/collection cases");
    print_failures(&score);
    assert_eq!(cases, 41);
    assert_eq!(passed, 41, "{score}");
    assert!(score["changed"].as_array().is_none_or(Vec::is_empty));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn full_suite_score() {
    let Some(bin) = oracle_bin() else {
        println!("skipped: oracle venv absent (PUREHDF_ORACLE_PYTHON or .oracle-venv)");
        return;
    };
    let dir = scratch("all");
    let (rc, _) = medh5(
        &bin,
        &["conformance", "publish", dir.to_str().expect("utf-8")],
    );
    assert_eq!(rc, 0, "conformance publish failed");
    let score = score_suite(&bin, &dir);
    let passed = score["passed"].as_u64().unwrap_or(0);
    let cases = score["cases"].as_u64().unwrap_or(0);
    println!("medh5 conformance (all cases): {passed}/{cases}");
    print_failures(&score);
    assert_eq!(cases, 175);
    assert!(
        passed >= FLOOR_ALL,
        "score {passed} below the floor {FLOOR_ALL}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `(code, location)` of each diagnostic of a `validate --json` entry.
fn code_locations(entry: &Value) -> Vec<(String, String)> {
    entry["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_string(),
                d["location"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn vectors_match_the_reference_at_semantic_and_integrity() {
    let Some(bin) = oracle_bin() else {
        println!("skipped: oracle venv absent (PUREHDF_ORACLE_PYTHON or .oracle-venv)");
        return;
    };
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(vec_dir) = Some(here.join("../shared/vectors/medh5")).filter(|p| p.is_dir()) else {
        println!("skipped: ../shared/vectors/medh5 absent");
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&vec_dir)
        .expect("read vectors")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "medh5"))
        .collect();
    files.sort();
    assert!(files.len() >= 7, "expected the 7 vector files");
    let mut compared = 0;
    let mut w912 = 0;
    for f in &files {
        for level in ["semantic", "integrity"] {
            let path = f.to_str().expect("utf-8 path");
            let (_, out) = medh5(&bin, &["validate", "--json", "--level", level, path]);
            let reference: Value = serde_json::from_str(&out).expect("reference json");
            let ours = validate_path(
                f,
                &Options {
                    level: Level::from_name(level).expect("level"),
                    ..Default::default()
                },
            )
            .to_json();
            let (want, got) = (code_locations(&reference[0]), code_locations(&ours));
            assert_eq!(got, want, "{path} at {level}");
            assert_eq!(ours["ok"], reference[0]["ok"], "{path} at {level}");
            assert_eq!(ours["profiles"], reference[0]["profiles"], "{path}");
            assert_eq!(ours["checked"], reference[0]["checked"], "{path}");
            // Messages of the two warnings every vector carries match too.
            for (o, r) in ours["diagnostics"]
                .as_array()
                .into_iter()
                .flatten()
                .zip(reference[0]["diagnostics"].as_array().into_iter().flatten())
            {
                if o["code"] == "W912" || o["code"] == "W903" {
                    assert_eq!(o["message"], r["message"], "{path}");
                }
            }
            w912 += got.iter().filter(|(c, _)| c == "W912").count();
            compared += 1;
        }
    }
    println!("medh5 validate: {compared} vector reports identical to the reference in codes and locations ({w912} W912)");
    assert!(w912 >= 10, "W912 expected on the labelled vectors");
}
