//! medh5 interop: samples we write, for every codec profile and several dtypes and
//! shapes, are accepted by the reference engine (`medh5 verify`, `medh5 validate
//! --level integrity`), which reports our content_id, and h5py reads every dataset
//! with the values we wrote. Needs the oracle venv (`scripts/oracle-venv.sh`); skipped
//! by name when it is absent.

mod common;
use common::oracle_bin;

use std::path::Path;
use std::process::Command;

use purehdf_medh5::create::{demo_sample, plan};
use purehdf_medh5::document::LabelSet;
use purehdf_medh5::model::{Annotation, ArrayData, Encoding, Grid, Image, NumDtype, Sample};
use purehdf_medh5::plan::{PlanData, PlanStep, WritePlan};
use purehdf_medh5::profiles::Profile;
use purehdf_medh5::writer::write_plan;
use serde_json::Value;
use sha2::{Digest, Sha256};

fn run(cmd: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(cmd).args(args).output().expect("run oracle");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    (out.status.code().unwrap_or(-1), text)
}

/// A sample with several images of different dtypes and a uint16 labelmap.
fn mixed_sample(shape: [u64; 3]) -> Sample {
    let n = (shape[0] * shape[1] * shape[2]) as usize;
    let mut s = Sample::new("mixed-1", "SUBJ-9");
    s.grids.push(Grid::new("g", &shape, &[1.5, 0.5, 0.5]));
    let u8s: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
    let f32s: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 100.0).collect();
    let u16s: Vec<u16> = (0..n).map(|i| (i * 7 % 4000) as u16).collect();
    let labels: Vec<u8> = (0..n).map(|i| ((i / 97) % 3) as u8).collect();
    s.images.push(Image::new(
        "T1",
        "g",
        "MR",
        ArrayData::from_slice(&shape, &u16s).unwrap(),
    ));
    s.images.push(Image::new(
        "PET",
        "g",
        "PT",
        ArrayData::from_slice(&shape, &f32s).unwrap(),
    ));
    s.images.push(Image::new(
        "US",
        "g",
        "US",
        ArrayData::from_slice(&shape, &u8s).unwrap(),
    ));
    s.document.label_set = Some(LabelSet::from_keys("tissues", "1.0.0", &["grey", "white"]));
    s.annotations.push(Annotation::new(
        "tissue",
        "g",
        &[1, 2],
        Encoding::Labelmap {
            data: ArrayData::from_bytes(NumDtype::U8, shape.to_vec(), labels).unwrap(),
        },
    ));
    s
}

fn planned_hashes(p: &WritePlan) -> Vec<(String, String)> {
    p.steps
        .iter()
        .filter_map(|s| match s {
            PlanStep::Dataset(d) => {
                let bytes = match &d.data {
                    PlanData::Bytes(b) => b.clone(),
                    PlanData::Strings(v) => v.join("\0").into_bytes(),
                };
                Some((d.path.clone(), hex(&Sha256::digest(&bytes))))
            }
            _ => None,
        })
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn reference_accepts_our_samples() {
    let Some(bin) = oracle_bin() else {
        println!("skipped: no oracle venv with the reference medh5");
        return;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-medh5-interop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/medh5_read.py");
    let mut checked = 0;
    for profile in [
        Profile::Training,
        Profile::Balanced,
        Profile::Archive,
        Profile::Portable,
    ] {
        let cases: Vec<(&str, Sample)> = vec![
            ("demo", demo_sample().unwrap()),
            ("mixed", mixed_sample([20, 33, 47])),
            ("small", mixed_sample([3, 5, 7])),
        ];
        for (name, sample) in cases {
            let p = plan(sample, profile, Some(32 << 20)).unwrap();
            let path = dir.join(format!("{name}-{}.medh5", profile.name()));
            write_plan(&p, &path).unwrap();
            let ps = path.to_str().unwrap();

            let (rc, out) = run(&bin.join("medh5"), &["verify", "--json", ps]);
            let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
            assert_eq!(rc, 0, "reference verify failed on {ps}: {out}");
            assert_eq!(v[0]["ok"], Value::Bool(true), "{out}");
            assert_eq!(v[0]["content_id_ok"], Value::Bool(true), "{out}");

            let (rc, out) = run(
                &bin.join("medh5"),
                &["validate", "--level", "integrity", "--json", ps],
            );
            assert_eq!(rc, 0, "reference validate failed on {ps}: {out}");

            let (rc, out) = run(&bin.join("medh5"), &["info", "--json", ps]);
            assert_eq!(rc, 0, "{out}");
            let info: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(info["content_id"].as_str(), Some(p.content_id.as_str()));

            let (rc, out) = run(&bin.join("python"), &[script.to_str().unwrap(), ps]);
            assert_eq!(rc, 0, "{out}");
            let read: Value = serde_json::from_str(&out).unwrap();
            for (path, sha) in planned_hashes(&p) {
                assert_eq!(
                    read[&path]["sha256"].as_str(),
                    Some(sha.as_str()),
                    "{ps}{path}: h5py reads other values"
                );
            }
            checked += 1;
        }
    }
    println!("medh5 interop: {checked}/12 samples accepted by the reference with our content_id");
    assert_eq!(checked, 12);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The reference refuses a uint16 labelmap whose classes fit in uint8 (E411); so do we.
#[test]
fn wide_labelmap_is_refused_like_the_reference() {
    let mut s = mixed_sample([3, 5, 7]);
    let n = 3 * 5 * 7;
    let labels: Vec<u8> = (0..n)
        .flat_map(|i: u16| ((i / 10) % 3).to_le_bytes())
        .collect();
    s.annotations[0].encoding = Encoding::Labelmap {
        data: ArrayData::from_bytes(NumDtype::U16, vec![3, 5, 7], labels).unwrap(),
    };
    let e = plan(s, Profile::Balanced, Some(32 << 20)).unwrap_err();
    assert!(e.to_string().contains("E411"), "{e}");
}
