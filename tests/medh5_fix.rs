//! `medh5 fix` against the reference CLI on mutated copies of the test vectors
//! (`../shared/vectors/medh5`): a flipped bit in a chunk of `images/CT`, an
//! edited covered attribute, a stale `content_id`. The diagnosis (`--json` and
//! text, exit code) must equal the reference's; after
//! `--rewrite-digests --reason`, the reference must verify and validate our
//! file, h5py must read every dataset with the same bytes as in the file the
//! reference itself repaired, and the recorded provenance must be the
//! reference's (up to the software agent's name and version).
//! Skipped (with a printed reason) without the oracle venv.

mod common;
use common::oracle_bin;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The medh5 vectors of the shared material (`../shared/vectors/medh5`).
fn vectors_dir() -> PathBuf {
    common::shared_dir()
        .unwrap_or_else(|| PathBuf::from("../shared"))
        .join("vectors/medh5")
}
const BIN: &str = env!("CARGO_BIN_EXE_medh5");
const REASON: &str = "restored from the archive copy";

fn vectors() -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(vectors_dir()) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().and_then(|s| s.to_str()) == Some("medh5"))
        .collect();
    v.sort();
    v
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(bin: &Path, args: &[&str], cwd: &Path) -> Out {
    let o = Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or(Value::Null)
}

/// Mutated copies in `dir`: `<stem>.<kind>.medh5` for kinds flip, attr, cid,
/// plus a clean copy `<stem>.clean.medh5`.
fn mutate(venv: &Path, dir: &Path, srcs: &[PathBuf]) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop");
    let mut prog = format!(
        "import sys; sys.path.insert(0, {:?})\nimport medh5_mutate as m\n",
        script.to_str().unwrap()
    );
    let mut names = Vec::new();
    for s in srcs {
        let stem = s.file_stem().unwrap().to_str().unwrap();
        let src = s.to_str().unwrap();
        let at = |k: &str| format!("{stem}.{k}.medh5");
        prog.push_str(&format!("m.copy({src:?}, {:?})\n", dir.join(at("clean"))));
        // (where no sampled flip decodes, deflate, flip edits one element through
        // h5py instead; a file where neither changes the data is skipped)
        prog.push_str(&format!(
            "try:\n    m.flip({src:?}, {:?}, 'images/CT')\nexcept SystemExit:\n    import os; os.remove({:?})\n",
            dir.join(at("flip")),
            dir.join(at("flip"))
        ));
        prog.push_str(&format!(
            "m.attr({src:?}, {:?}, 'images/CT', 'modality', 'MR')\n",
            dir.join(at("attr"))
        ));
        prog.push_str(&format!(
            "m.stale_cid({src:?}, {:?})\n",
            dir.join(at("cid"))
        ));
        for k in ["clean", "flip", "attr", "cid"] {
            names.push(at(k));
        }
    }
    let st = Command::new(venv.join("python"))
        .args(["-c", &prog])
        .status()
        .unwrap();
    assert!(st.success(), "mutation script failed");
    names.retain(|n| dir.join(n).exists());
    names
}

fn setup(tag: &str) -> Option<(PathBuf, PathBuf, Vec<String>)> {
    let Some(venv) = oracle_bin() else {
        println!("skipped: oracle venv (reference medh5 + h5py) not found");
        return None;
    };
    let srcs = vectors();
    if srcs.is_empty() {
        println!("skipped: {} absent", vectors_dir().display());
        return None;
    }
    let dir = std::env::temp_dir().join(format!("purehdf-medh5-fix-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let names = mutate(&venv, &dir, &srcs);
    Some((venv, dir, names))
}

/// The mutation kind of a file name `<stem>.<kind>.medh5`.
fn kind_of(name: &str) -> &str {
    name.rsplit('.').nth(1).unwrap_or("")
}

#[test]
fn diagnosis_equals_reference() {
    let Some((venv, dir, names)) = setup("diag") else {
        return;
    };
    let reference = venv.join("medh5");
    let mut agree = 0;
    // The reference starts slowly: one call per mutation kind (every file of
    // a kind has the same expected exit code), ours once per file.
    for kind in ["clean", "flip", "attr", "cid"] {
        let group: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| kind_of(n) == kind)
            .collect();
        let mut args = vec!["fix", "--json"];
        args.extend(&group);
        let theirs_json = run(&reference, &args, &dir);
        args.remove(1);
        let theirs_text = run(&reference, &args, &dir);
        let expect_code = i32::from(kind != "clean");
        assert_eq!(
            theirs_json.code, expect_code,
            "{kind}: {}",
            theirs_json.stdout
        );
        assert_eq!(theirs_text.code, expect_code);
        let entries = json(&theirs_json.stdout);
        let mut our_text = String::new();
        for (k, n) in group.iter().enumerate() {
            let ours = run(Path::new(BIN), &["fix", "--json", n], &dir);
            let t = &entries[k];
            assert_eq!(ours.code, expect_code, "{n}: {}", ours.stdout);
            assert_eq!(json(&ours.stdout)[0], *t, "{n}: fix --json");
            // the expected verdicts, as the reference gives them
            let d = &t["diagnosis"];
            let (mism, cid) = match kind {
                "clean" | "cid" | "attr" => (serde_json::json!([]), kind == "clean"),
                _ => (serde_json::json!(["images/CT"]), true),
            };
            assert_eq!(d["mismatched"], mism, "{n}");
            assert_eq!(d["content_id_ok"], Value::Bool(cid), "{n}");
            let text = run(Path::new(BIN), &["fix", n], &dir);
            assert_eq!(text.code, expect_code);
            our_text.push_str(&text.stdout);
            agree += 1;
        }
        assert_eq!(our_text, theirs_text.stdout, "{kind}: fix text output");
    }
    println!(
        "medh5 fix diagnosis: {agree}/{} files agree with the reference",
        names.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rewrite_digests_is_accepted_by_the_reference() {
    let Some((venv, dir, names)) = setup("rewrite") else {
        return;
    };
    let reference = venv.join("medh5");
    let ours_files: Vec<String> = names
        .iter()
        .filter(|n| !n.contains(".clean."))
        .cloned()
        .collect();
    let ref_files: Vec<String> = ours_files.iter().map(|n| format!("ref.{n}")).collect();
    for (n, r) in ours_files.iter().zip(&ref_files) {
        std::fs::copy(dir.join(n), dir.join(r)).unwrap();
    }
    let mut args = vec!["fix", "--rewrite-digests", "--reason", REASON, "--json"];
    args.extend(ref_files.iter().map(String::as_str));
    let theirs = run(&reference, &args, &dir);
    assert_eq!(theirs.code, 0, "{}{}", theirs.stdout, theirs.stderr);
    let theirs = json(&theirs.stdout);
    for (k, n) in ours_files.iter().enumerate() {
        let ours = run(
            Path::new(BIN),
            &["fix", "--rewrite-digests", "--reason", REASON, "--json", n],
            &dir,
        );
        assert_eq!(ours.code, 0, "{n}: {}{}", ours.stdout, ours.stderr);
        // same report, but for the path and the new content_id (the agent differs)
        let mut a = json(&ours.stdout)[0].clone();
        let mut b = theirs[k].clone();
        for v in [&mut a, &mut b] {
            v["path"] = Value::Null;
            v["diagnosis"]["path"] = Value::Null;
            assert!(v["content_id"].as_str().unwrap().starts_with("sha256:"));
            v["content_id"] = Value::Null;
        }
        assert_eq!(a, b, "{n}: fix --rewrite-digests --json");
    }
    // The reference verifies and validates every file we repaired.
    let mut args = vec!["verify", "--json"];
    args.extend(ours_files.iter().map(String::as_str));
    let v = run(&reference, &args, &dir);
    assert_eq!(v.code, 0, "{}", v.stdout);
    for e in json(&v.stdout).as_array().unwrap() {
        assert_eq!(e["ok"], Value::Bool(true), "{e}");
        assert_eq!(e["content_id_ok"], Value::Bool(true), "{e}");
    }
    let mut args = vec!["validate", "--level", "integrity", "--json"];
    args.extend(ours_files.iter().map(String::as_str));
    let v = run(&reference, &args, &dir);
    assert_eq!(v.code, 0, "{}", v.stdout);
    // Same bytes, attributes and provenance as the reference's own repair.
    let dump_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/medh5_dump.py");
    let mut args: Vec<String> = vec![dump_script.to_str().unwrap().to_string()];
    args.extend(ours_files.iter().cloned());
    args.extend(ref_files.iter().cloned());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let d = run(&venv.join("python"), &argv, &dir);
    assert_eq!(d.code, 0, "{}", d.stderr);
    let dumps = json(&d.stdout);
    for (o, r) in ours_files.iter().zip(&ref_files) {
        let (a, b) = (&dumps[o.as_str()], &dumps[r.as_str()]);
        assert_eq!(
            a["objects"], b["objects"],
            "{o}: datasets or attributes differ"
        );
        for k in [
            "medh5_version",
            "medh5_kind",
            "medh5_profiles",
            "digest_algo",
        ] {
            assert_eq!(a["root"][k], b["root"][k], "{o}: root {k}");
        }
        let (mut ma, mut mb) = (a["meta"].clone(), b["meta"].clone());
        let prov = &ma["provenance"];
        let agent = &prov["agents"][0];
        assert_eq!(agent["type"], "software");
        assert_eq!(agent["name"], "purehdf");
        let act = &prov["activities"][0];
        assert_eq!(act["params"]["reason"], REASON);
        assert_eq!(act["tool"], "medh5 fix --rewrite-digests");
        for m in [&mut ma, &mut mb] {
            m["provenance"]["agents"][0]["name"] = Value::Null;
            m["provenance"]["agents"][0]["version"] = Value::Null;
        }
        assert_eq!(ma, mb, "{o}: /meta after the repair");
    }
    println!(
        "medh5 fix --rewrite-digests: {} repaired files verified and validated by the reference, same bytes and provenance as its own repair",
        ours_files.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reason_is_required() {
    let Some((venv, dir, names)) = setup("reason") else {
        return;
    };
    let reference = venv.join("medh5");
    let n = names.iter().find(|n| n.contains(".flip.")).unwrap();
    let before = std::fs::read(dir.join(n)).unwrap();
    for args in [
        vec!["fix", "--rewrite-digests", n.as_str()],
        vec!["fix", "--rewrite-digests", "--reason", "", n.as_str()],
    ] {
        let ours = run(Path::new(BIN), &args, &dir);
        let theirs = run(&reference, &args, &dir);
        assert_eq!(ours.code, theirs.code, "{args:?}");
        assert_ne!(ours.code, 0);
        assert_eq!(std::fs::read(dir.join(n)).unwrap(), before, "file changed");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
