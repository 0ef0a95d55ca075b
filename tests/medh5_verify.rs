//! `medh5 verify`, `info` and `tree` end to end: the reference's vector files,
//! files we write, tampered copies, and agreement with the reference CLI.

mod common;
use common::oracle_bin;

use std::path::{Path, PathBuf};
use std::process::Command;

use purehdf::low_level::chunk_index::list_chunks;
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::messages::layout::Layout;
use purehdf_medh5::verify::verify_path;

/// The medh5 vectors of the shared material (`../shared/vectors/medh5`).
fn vectors_dir() -> PathBuf {
    common::shared_dir()
        .unwrap_or_else(|| PathBuf::from("../shared"))
        .join("vectors/medh5")
}
const BIN: &str = env!("CARGO_BIN_EXE_medh5");

fn vector_files() -> Vec<PathBuf> {
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

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("purehdf-medh5-verify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn run(bin: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let out = Command::new(bin).args(args).output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

/// Flip one byte in the middle of `images/CT`'s stored bytes (its largest chunk
/// when chunked).
fn tamper_ct(src: &Path, dst: &Path) {
    let file = File::open(src).unwrap();
    let Object::Dataset(ds) = file.object("images/CT").unwrap() else {
        panic!("images/CT is not a dataset")
    };
    let (addr, size) = match ds.layout() {
        Layout::Contiguous {
            address: Some(a),
            size: Some(s),
        } => (*a, *s),
        Layout::Chunked { .. } => {
            let params = ds.chunk_params().unwrap();
            let chunks = list_chunks(file.source(), file.sizes(), &params).unwrap();
            let c = chunks.iter().max_by_key(|c| c.size).unwrap();
            (c.address, c.size)
        }
        other => panic!("unexpected layout {other:?}"),
    };
    let mut bytes = std::fs::read(src).unwrap();
    let at = usize::try_from(addr + size / 2).unwrap();
    bytes[at] ^= 0x5a;
    std::fs::write(dst, bytes).unwrap();
}

#[test]
fn vectors_verify_ok() {
    let files = vector_files();
    if files.is_empty() {
        println!("skipped: no vectors");
        return;
    }
    assert_eq!(files.len(), 7);
    for f in &files {
        let r = verify_path(f, "x", None).unwrap();
        assert!(r.ok, "{}: {r:?}", f.display());
        assert_eq!(r.content_id_ok, Some(true));
        assert!(r.mismatched.is_empty() && r.unattested.is_empty());
    }
}

#[test]
fn written_files_verify_ok() {
    for profile in ["balanced", "training", "archive", "portable"] {
        let p = scratch(&format!("demo_{profile}.medh5"));
        let ps = p.to_str().unwrap();
        let st = Command::new(BIN)
            .args(["demo", ps, "--profile", profile])
            .output()
            .unwrap();
        assert!(st.status.success(), "demo {profile}");
        let (code, v) = run(Path::new(BIN), &["verify", "--json", ps]);
        assert_eq!(code, 0, "{profile}: {v}");
        assert_eq!(v[0]["ok"], true);
        assert!(v[0]["checked"].as_u64().unwrap() >= 2);
    }
}

#[test]
fn flipped_byte_is_a_mismatch() {
    let files = vector_files();
    if files.is_empty() {
        println!("skipped: no vectors");
        return;
    }
    for name in [
        "v1b_dense_label.medh5",
        "v2_portable.medh5",
        "v2_balanced.medh5",
    ] {
        let dst = scratch(&format!("flip_{name}"));
        tamper_ct(&vectors_dir().join(name), &dst);
        let (code, v) = run(Path::new(BIN), &["verify", "--json", dst.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}: {v}");
        assert_eq!(v[0]["ok"], false);
        // Either the bytes decode and hash differently, or (a corrupted
        // compressed chunk) the read fails with an error naming the object,
        // exactly as the reference reports it.
        match v[0]["error"].as_str() {
            None => {
                assert_eq!(
                    v[0]["mismatched"],
                    serde_json::json!(["images/CT"]),
                    "{name}"
                );
                assert_eq!(v[0]["content_id_ok"], true, "{name}");
            }
            Some(e) => assert!(e.contains("images/CT"), "{name}: {e}"),
        }
        if let Some(o) = oracle_bin().map(|d| d.join("medh5")) {
            let (ocode, ov) = run(&o, &["verify", "--json", dst.to_str().unwrap()]);
            assert_eq!(ocode, code, "{name}: {ov}");
            assert_eq!(
                v[0].get("error").is_some(),
                ov[0].get("error").is_some(),
                "{name}: {ov}"
            );
            for k in ["ok", "mismatched", "content_id_ok"] {
                assert_eq!(v[0].get(k), ov[0].get(k), "{name} {k}");
            }
        }
    }
}

#[test]
fn edited_covered_attribute_breaks_content_id() {
    let src = vectors_dir().join("v1b_dense_label.medh5");
    if !src.exists() {
        println!("skipped: no vectors");
        return;
    }
    // `modality` = "CT" is stored as a vlen string in the global heap; change
    // the heap copy of "CT" that follows the attribute's name to "MR".
    let mut bytes = std::fs::read(&src).unwrap();
    let file = File::open(&src).unwrap();
    let attr = file.object("images/CT").unwrap().attributes().unwrap();
    let modality = attr.iter().find(|a| a.name == "modality").unwrap();
    assert_eq!(file.vlen_bytes(&modality.data).unwrap(), b"CT");
    // Locate heap objects holding exactly "CT": a global-heap object header is
    // index(2) refcount(2) reserved(4) size(8) then the data.
    let mut changed = 0;
    for i in 0..bytes.len().saturating_sub(18) {
        if bytes[i + 8..i + 16] == 2u64.to_le_bytes() && &bytes[i + 16..i + 18] == b"CT" {
            let dst = scratch("probe.medh5");
            let mut copy = bytes.clone();
            copy[i + 16..i + 18].copy_from_slice(b"MR");
            std::fs::write(&dst, &copy).unwrap();
            let f2 = File::open(&dst).unwrap();
            let a2 = f2.object("images/CT").unwrap().attributes().unwrap();
            let m2 = a2.iter().find(|a| a.name == "modality").unwrap();
            if f2.vlen_bytes(&m2.data).unwrap() == b"MR" {
                bytes = copy;
                changed += 1;
                break;
            }
        }
    }
    assert_eq!(changed, 1, "could not locate the modality string");
    let dst = scratch("attr_tamper.medh5");
    std::fs::write(&dst, &bytes).unwrap();
    let (code, v) = run(Path::new(BIN), &["verify", "--json", dst.to_str().unwrap()]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v[0]["content_id_ok"], false);
    assert_eq!(v[0]["mismatched"], serde_json::json!([]));
    if let Some(o) = oracle_bin().map(|d| d.join("medh5")) {
        let (ocode, ov) = run(&o, &["verify", "--json", dst.to_str().unwrap()]);
        assert_eq!(ocode, 1);
        for k in ["ok", "checked", "mismatched", "content_id_ok"] {
            assert_eq!(v[0][k], ov[0][k], "{k}");
        }
    }
}

#[test]
fn agrees_with_reference() {
    let Some(o) = oracle_bin().map(|d| d.join("medh5")) else {
        println!("skipped: no oracle");
        return;
    };
    let files = vector_files();
    for f in &files {
        let fs = f.to_str().unwrap();
        let (code, ours) = run(Path::new(BIN), &["verify", "--json", fs]);
        let (ocode, theirs) = run(&o, &["verify", "--json", fs]);
        assert_eq!(code, ocode, "{fs}");
        for k in ["ok", "checked", "mismatched", "content_id_ok"] {
            assert_eq!(ours[0][k], theirs[0][k], "{fs} {k}");
        }
        for cmd in ["info", "tree"] {
            let (c1, a) = run(Path::new(BIN), &[cmd, fs, "--json"]);
            let (c2, b) = run(&o, &[cmd, fs, "--json"]);
            assert_eq!((c1, c2), (0, 0), "{cmd} {fs}");
            assert_eq!(a, b, "{cmd} {fs}");
        }
        let text = |bin: &Path| {
            Command::new(bin)
                .args(["tree", fs])
                .output()
                .unwrap()
                .stdout
        };
        assert_eq!(
            String::from_utf8(text(Path::new(BIN))).unwrap(),
            String::from_utf8(text(&o)).unwrap(),
            "tree text {fs}"
        );
    }
}

#[test]
fn unreadable_file_exits_1_and_usage_exits_2() {
    let p = scratch("garbage.medh5");
    std::fs::write(&p, b"not an hdf5 file at all").unwrap();
    let (code, _) = run(Path::new(BIN), &["verify", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    let (code, _) = run(Path::new(BIN), &["info", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    let (code, _) = run(Path::new(BIN), &["verify", "--bogus"]);
    assert_eq!(code, 2);
}

/// Many files in one call (verified in parallel batches): the reports come
/// in the order given, a broken file in the middle is reported in its place
/// and makes the exit code 1, with one and two threads alike.
#[test]
fn many_files_report_in_order() {
    let good = scratch("many_good.medh5");
    let gs = good.to_str().unwrap().to_string();
    let st = Command::new(BIN)
        .args(["demo", &gs, "--profile", "training"])
        .output()
        .unwrap();
    assert!(st.status.success());
    let bad = scratch("many_bad.medh5");
    std::fs::write(&bad, b"not an HDF5 file").unwrap();
    let bs = bad.to_str().unwrap().to_string();
    let mut args: Vec<String> = vec!["verify".into(), "--json".into()];
    let n = 70; // more than one batch
    for i in 0..n {
        args.push(if i == 37 { bs.clone() } else { gs.clone() });
    }
    for threads in ["1", "2"] {
        let out = Command::new(BIN)
            .args(&args)
            .env("MEDH5_THREADS", threads)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "threads {threads}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let arr = v.as_array().unwrap();
        assert_eq!(arr.len(), n);
        for (i, e) in arr.iter().enumerate() {
            if i == 37 {
                assert_eq!(e["path"], bs.as_str());
                assert_eq!(e["ok"], false, "{e}");
            } else {
                assert_eq!(e["path"], gs.as_str(), "{i}: {e}");
                assert_eq!(e["ok"], true, "{i}: {e}");
            }
        }
    }
}
