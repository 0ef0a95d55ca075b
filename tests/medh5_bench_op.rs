//! Smoke test of `medh5 bench-op` (the bench protocol, `shared/bench/README.md`):
//! every implemented op runs once (`--repeats 1 --warmup 0`) on a small
//! generated sample and prints a JSON last line with the protocol's keys; the
//! bytes the bench reader returns (whole image and labels, patches, with one
//! handle and with fresh ones) equal what h5py reads from the same file. Not a
//! timed test. The h5py part needs the oracle venv and is skipped, with the
//! reason printed, when it is absent.

mod common;
use common::oracle_python;

use std::path::{Path, PathBuf};
use std::process::Command;

use purehdf_medh5::bench::{Reader, What};
use purehdf_medh5::sample::SampleFile;
use serde_json::Value;

const SHAPE: [u64; 3] = [40, 72, 80];

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-bench-op-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn npy(path: &Path, descr: &str, data: &[u8]) {
    let mut b = Vec::new();
    purehdf_medh5::npy::write(&mut b, descr, &SHAPE, data).unwrap();
    std::fs::write(path, b).unwrap();
}

/// A CT-like int16 volume (noise on a body disc) and a uint8 labelmap of three blobs.
fn inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let [nz, ny, nx] = SHAPE.map(|v| v as usize);
    let mut img = Vec::with_capacity(nz * ny * nx * 2);
    let mut lab = Vec::with_capacity(nz * ny * nx);
    let mut seed = 12345u32;
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                let (fy, fx) = (y as f64 - 36.0, x as f64 - 40.0);
                let inside = fy * fy + fx * fx < 30.0 * 30.0;
                let v: i16 = if inside {
                    40 + ((seed >> 16) % 25) as i16
                } else {
                    -1000
                };
                img.extend_from_slice(&v.to_le_bytes());
                let l = if !inside {
                    0
                } else if (z / 10 + y / 24 + x / 27) % 4 == 1 {
                    1 + ((z + y / 8) % 3) as u8
                } else {
                    0
                };
                lab.push(l);
            }
        }
    }
    let (ip, lp) = (dir.join("image.npy"), dir.join("label.npy"));
    npy(&ip, "<i2", &img);
    npy(&lp, "|u1", &lab);
    (ip, lp)
}

fn bench_op(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_medh5"))
        .arg("bench-op")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "bench-op {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {last:?}"))
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

const POSITIONS: [[u64; 3]; 5] = [[0, 0, 0], [5, 13, 27], [8, 40, 16], [3, 8, 48], [5, 13, 27]];
const PATCH: u64 = 32;

#[test]
fn every_op_prints_the_protocol_json() {
    let dir = scratch();
    let (ip, lp) = inputs(&dir);
    let pos = dir.join("positions.json");
    std::fs::write(&pos, serde_json::to_vec(&POSITIONS).unwrap()).unwrap();
    let (ip, lp, pos) = (
        ip.to_str().unwrap(),
        lp.to_str().unwrap(),
        pos.to_str().unwrap(),
    );
    let raw = SHAPE.iter().product::<u64>();
    for profile in ["training", "balanced", "portable"] {
        let f = dir.join(format!("{profile}.medh5"));
        let f = f.to_str().unwrap();
        let w = bench_op(&[
            "write",
            "--image",
            ip,
            "--label",
            lp,
            "--profile",
            profile,
            "--out",
            f,
            "--repeats",
            "1",
            "--warmup",
            "0",
        ]);
        assert_eq!(
            keys(&w),
            [
                "op",
                "times_ms",
                "bytes",
                "file_bytes",
                "content_id",
                "chunks",
                "profile"
            ]
        );
        assert_eq!(w["bytes"], raw * 3);
        assert_eq!(w["profile"], profile);
        assert_eq!(w["times_ms"].as_array().unwrap().len(), 1);
        assert!(w["content_id"].as_str().unwrap().starts_with("sha256:"));
        for (what, per) in [("image", 2), ("label", 1), ("label_raw", 1)] {
            let r = bench_op(&[
                "read-full",
                f,
                "--what",
                what,
                "--repeats",
                "1",
                "--warmup",
                "0",
            ]);
            assert_eq!(keys(&r), ["op", "what", "times_ms", "bytes"]);
            assert_eq!(r["bytes"], raw * per);
        }
        for fresh in [None, Some("--fresh")] {
            let mut a = vec!["read-patches", f, "--what", "image", "--size", "32"];
            a.extend(["--positions", pos, "--warmup", "1"]);
            a.extend(fresh);
            let r = bench_op(&a);
            assert_eq!(
                keys(&r),
                ["op", "what", "size", "fresh", "times_ms", "bytes"]
            );
            assert_eq!(r["times_ms"].as_array().unwrap().len(), POSITIONS.len() - 1);
            assert_eq!(r["bytes"], PATCH.pow(3) * 2);
            assert_eq!(r["fresh"], fresh.is_some());
        }
        let r = bench_op(&[
            "open-first-patch",
            f,
            "--size",
            "32",
            "--positions",
            pos,
            "--warmup",
            "0",
        ]);
        assert_eq!(keys(&r), ["op", "size", "times_ms"]);
        assert_eq!(r["times_ms"].as_array().unwrap().len(), POSITIONS.len());
        let v = bench_op(&["verify", f, "--repeats", "1", "--warmup", "0"]);
        assert_eq!(keys(&v), ["op", "partial", "times_ms", "bytes", "ok"]);
        assert_eq!(v["ok"], true);
        assert_eq!(v["bytes"], raw * 3);
        let v = bench_op(&[
            "verify",
            f,
            "--partial",
            "images/CT",
            "--repeats",
            "1",
            "--warmup",
            "0",
        ]);
        assert_eq!(v["ok"], true);
        assert_eq!(v["bytes"], raw * 2);
    }
    // An op on a missing file fails with a message, not silently.
    let out = Command::new(env!("CARGO_BIN_EXE_medh5"))
        .args(["bench-op", "collection-ids", "no-such-file.medh5c"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&out.stderr).trim().is_empty());
    check_against_h5py(&dir);
    std::fs::remove_dir_all(&dir).ok();
}

/// Our reader's bytes (whole volumes, patches through one handle, twice so
/// the second pass comes from cached chunks, and through fresh handles) equal
/// h5py's.
fn check_against_h5py(dir: &Path) {
    let Some(py) = oracle_python() else {
        eprintln!("SKIP h5py comparison: no oracle venv (set PUREHDF_ORACLE_PYTHON)");
        return;
    };
    let script = r#"
import sys, json, h5py, hdf5plugin, numpy as np
d = sys.argv[1]
pos = json.load(open(d + "/positions.json"))
for prof in ("training", "balanced", "portable"):
    with h5py.File(f"{d}/{prof}.medh5", "r") as f:
        for name, ds in (("image", f["images/CT"]), ("label", f["annotations/seg/data"])):
            ds[()].astype(ds.dtype.newbyteorder("<")).tofile(f"{d}/{prof}.{name}.full")
            parts = [ds[z:z+32, y:y+32, x:x+32] for z, y, x in pos]
            np.concatenate([p.ravel() for p in parts]).astype(ds.dtype.newbyteorder("<")).tofile(f"{d}/{prof}.{name}.patches")
"#;
    let out = Command::new(&py)
        .args(["-c", script, dir.to_str().unwrap()])
        .output()
        .unwrap();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("ModuleNotFoundError") {
            eprintln!("SKIP h5py comparison: {err}");
            return;
        }
        panic!("h5py script failed: {err}");
    }
    for prof in ["training", "balanced", "portable"] {
        let sf = SampleFile::open(dir.join(format!("{prof}.medh5"))).unwrap();
        for (name, what) in [("image", What::Image), ("label", What::LabelRaw)] {
            let full = std::fs::read(dir.join(format!("{prof}.{name}.full"))).unwrap();
            let patches = std::fs::read(dir.join(format!("{prof}.{name}.patches"))).unwrap();
            let rd = Reader::new(&sf, what).unwrap();
            assert_eq!(rd.read(None, &[]).unwrap(), full, "{prof} {name} whole");
            if what == What::LabelRaw {
                let lm = Reader::new(&sf, What::Label).unwrap();
                assert_eq!(lm.read(None, &[]).unwrap(), full, "{prof} labelmap");
            }
            for pass in 0..2 {
                let mut got = Vec::new();
                for p in POSITIONS {
                    got.extend(rd.read(Some(&p), &[PATCH; 3]).unwrap());
                }
                assert_eq!(got, patches, "{prof} {name} patches, pass {pass}");
            }
            let mut got = Vec::new();
            for p in POSITIONS {
                let fresh = SampleFile::open(dir.join(format!("{prof}.medh5"))).unwrap();
                got.extend(
                    Reader::new(&fresh, what)
                        .unwrap()
                        .read(Some(&p), &[PATCH; 3])
                        .unwrap(),
                );
            }
            assert_eq!(got, patches, "{prof} {name} fresh patches");
        }
    }
}
