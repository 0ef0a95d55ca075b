//! `medh5 info` and `info --json` against the reference on every sample of
//! its published conformance suite (`medh5 conformance publish`: valid
//! samples of every profile and annotation kind, transforms, clinical
//! histories, collections, and 102 invalid samples) and on the shared
//! vectors: the same stdout, byte for byte, and the same exit code. Needs the
//! oracle venv (`scripts/oracle-venv.sh`); skipped with a message without it.
//!
//! On invalid samples the reference's `info` loads the sample first and
//! refuses some (39 of the 102: exit 1, nothing on stdout); which ones is the
//! rule `validate::loader` states. The wording of the refusal on stderr is not
//! compared. `verify` is compared on three of the invalid samples too: a
//! missing and an unsupported `medh5_version` (refused with the reference's
//! words) and a malformed digest (its text line).

mod common;
use common::{medh5_files, oracle_bin, publish_conformance, run_ok, shared_dir};

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_medh5");

fn ours(args: &[&str]) -> (String, i32) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn info_equals_reference_on_the_conformance_suite_and_vectors() {
    let Some(venv) = oracle_bin() else {
        println!("skipped: medh5 info parity (no oracle venv)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-info-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut files = publish_conformance(&venv, &dir);
    match shared_dir().map(|d| d.join("vectors/medh5")) {
        Some(v) if v.is_dir() => files.extend(medh5_files(&v)),
        _ => println!("note: medh5 info parity: ../shared/vectors/medh5 absent"),
    }
    assert!(files.len() >= 175, "{} files published", files.len());
    let names: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/medh5_cli_dump.py");
    let out = run_ok(
        Command::new(venv.join("python"))
            .arg(&script)
            .arg("info,info --json")
            .args(&names),
    );
    let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut bad = Vec::new();
    let (mut refused, mut described) = (0, 0);
    for f in &names {
        for (key, args) in [
            ("text", vec!["info", f]),
            ("json", vec!["info", "--json", f]),
        ] {
            let (stdout, code) = ours(&args);
            let t = &theirs[format!("{}\t{f}", args[..args.len() - 1].join(" "))];
            let want = t["out"].as_str().unwrap();
            let want_code = t["code"].as_i64().unwrap();
            if stdout != want || i64::from(code) != want_code {
                bad.push(format!(
                    "{f} ({key}): exit {code} vs {want_code}\n--- ours\n{stdout}--- reference\n{want}"
                ));
            }
            if key == "text" {
                if want_code == 0 {
                    described += 1;
                } else {
                    refused += 1;
                }
            }
        }
    }
    println!(
        "medh5 info: {} files ({described} described, {refused} refused by the reference), {} differ",
        names.len(),
        bad.len()
    );
    // verify's refusals of a file without a 1.x version and its malformed
    // digest lines: the reference's words
    let mut verify_bad = Vec::new();
    for case in [
        "E001-missing-version",
        "E002-unsupported-major",
        "E703-digest-not-canonical",
    ] {
        let f = dir.join(format!("{case}.medh5"));
        let f = f.to_str().unwrap();
        for args in [vec!["verify", f], vec!["verify", "--json", f]] {
            let r = Command::new(venv.join("medh5"))
                .args(&args)
                .output()
                .unwrap();
            let (stdout, code) = ours(&args);
            if stdout.as_bytes() != r.stdout || Some(code) != r.status.code() {
                verify_bad.push(format!(
                    "{args:?}: ours (exit {code})\n{stdout}reference (exit {:?})\n{}",
                    r.status.code(),
                    String::from_utf8_lossy(&r.stdout)
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(verify_bad.is_empty(), "{}", verify_bad.join("\n"));
    assert!(
        bad.is_empty(),
        "{}",
        bad.iter().take(5).cloned().collect::<Vec<_>>().join("\n")
    );
}
