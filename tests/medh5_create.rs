//! `medh5 create --from MANIFEST.json` and `medh5 demo` through the real binary,
//! and the atomicity of a sample commit that fails part-way.

mod common;
use common::oracle_bin;

use std::path::{Path, PathBuf};
use std::process::Command;

use purehdf::low_level::write::FileWriter;
use purehdf_medh5::create::{demo_sample, plan};
use purehdf_medh5::profiles::Profile;
use purehdf_medh5::verify::verify_path;
use purehdf_medh5::writer::{emit, write_plan};
use serde_json::Value;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-create-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn npy(path: &Path, descr: &str, shape: &[u64], data: &[u8]) {
    let mut f = std::fs::File::create(path).unwrap();
    purehdf_medh5::npy::write(&mut f, descr, shape, data).unwrap();
}

#[test]
fn create_from_manifest_writes_a_sample_the_reference_verifies() {
    let dir = tmp("manifest");
    let shape = [6u64, 10, 12];
    let n = (shape[0] * shape[1] * shape[2]) as usize;
    let ct: Vec<u8> = (0..n)
        .flat_map(|i| ((i as i16 % 400) - 200).to_le_bytes())
        .collect();
    let labels: Vec<u8> = (0..n).map(|i| (i % 4) as u8).collect();
    let liver: Vec<u8> = (0..n).map(|i| u8::from(i % 5 == 0)).collect();
    npy(&dir.join("ct.npy"), "<i2", &shape, &ct);
    npy(&dir.join("organs.npy"), "|u1", &shape, &labels);
    npy(&dir.join("liver.npy"), "|u1", &shape, &liver);
    let manifest = serde_json::json!({
        "sample_id": "m1", "subject_id": "SUBJ-M", "profile": "archive",
        "grids": {"ct": {"shape": shape, "spacing": [2.5, 0.75, 0.75],
                          "origin": [-10.0, 20.5, -5.25], "chunk_hint": [3, 5, 6]}},
        "images": {"CT": {"grid": "ct", "npy": "ct.npy", "modality": "CT"}},
        "label_sets": [{"id": "demo-organs", "keys": ["liver", "spleen", "kidney"]}],
        "annotations": {
            "organs": {"grid": "ct", "encoding": "labelmap", "npy": "organs.npy",
                        "label_values": {"1": "liver", "2": "spleen", "3": "kidney"}},
            "liver_bits": {"grid": "ct", "encoding": "bitmask", "masks": {"liver": "liver.npy"}}
        }
    });
    let mpath = dir.join("manifest.json");
    std::fs::write(&mpath, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let out = dir.join("m1.medh5");
    let run = Command::new(env!("CARGO_BIN_EXE_medh5"))
        .args([
            "create",
            out.to_str().unwrap(),
            "--from",
            mpath.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let printed: Value = serde_json::from_slice(&run.stdout).unwrap();
    let cid = printed["content_id"].as_str().unwrap().to_string();
    assert!(cid.starts_with("sha256:"), "{cid}");
    assert_eq!(printed["path"].as_str(), out.to_str());

    let report = verify_path(&out, out.to_str().unwrap(), None).unwrap();
    assert!(report.ok, "our verify: {report:?}");
    assert_eq!(
        report.checked, 4,
        "CT, organs/data, liver_bits/data and bit_class_ids"
    );

    match oracle_bin().map(|d| d.join("medh5")) {
        None => println!("skipped reference check: no oracle venv"),
        Some(bin) => {
            let v = Command::new(&bin)
                .args(["info", "--json", out.to_str().unwrap()])
                .output()
                .unwrap();
            assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
            let info: Value = serde_json::from_slice(&v.stdout).unwrap();
            assert_eq!(info["content_id"].as_str(), Some(cid.as_str()));
            let v = Command::new(&bin)
                .args(["verify", out.to_str().unwrap()])
                .output()
                .unwrap();
            assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
            println!("reference verifies the manifest sample: {cid}");
        }
    }
    // Usage errors exit 2; a bad manifest exits 1.
    let st = Command::new(env!("CARGO_BIN_EXE_medh5"))
        .args(["create", "x.medh5"])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(2));
    std::fs::write(&mpath, b"{\"sample_id\": \"m1\"}").unwrap();
    let st = Command::new(env!("CARGO_BIN_EXE_medh5"))
        .args([
            "create",
            dir.join("bad.medh5").to_str().unwrap(),
            "--from",
            mpath.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(1));
    assert!(!dir.join("bad.medh5").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demo_command_writes_reads_back_and_verifies() {
    let dir = tmp("demo");
    let out = dir.join("demo.medh5");
    let run = Command::new(env!("CARGO_BIN_EXE_medh5"))
        .args(["demo", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(text.contains("read back: 3 datasets identical"), "{text}");
    assert!(verify_path(&out, "demo", None).unwrap().ok);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failed_commit_leaves_the_previous_sample_and_no_temp_file() {
    let dir = tmp("atomic");
    let target = dir.join("s.medh5");
    let p = plan(demo_sample().unwrap(), Profile::Balanced, Some(32 << 20)).unwrap();
    write_plan(&p, &target).unwrap();
    let before = std::fs::read(&target).unwrap();
    for fail_at in [0u64, 100, 4096, 20_000] {
        let mut w = FileWriter::create(&target).unwrap();
        emit(&p, &mut w).unwrap();
        purehdf::low_level::write::inject_failure_after(&mut w, fail_at);
        assert!(
            w.commit().is_err(),
            "commit with a failure after {fail_at} bytes succeeded"
        );
        assert_eq!(
            std::fs::read(&target).unwrap(),
            before,
            "target changed (fail at {fail_at})"
        );
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "temporary file left behind: {names:?}");
    }
    assert!(verify_path(&target, "s", None).unwrap().ok);
    let _ = std::fs::remove_dir_all(&dir);
}
