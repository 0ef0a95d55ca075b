//! `h5 compare`: SSIM equals scikit-image's `structural_similarity` with the
//! esrf checker's parameters (uniform window min(H, W, 7) made odd, data range
//! of the original slice, K1 0.01, K2 0.03, sample covariance) within 1e-6 on
//! random slice pairs of several shapes and dtypes; a constant original slice
//! is reported as constant; `--metric exact` tells equal from different files.
//! Skipped when the oracle python has no scikit-image (install it outside the
//! repository and put it on `PYTHONPATH` to run this).

mod common;

use std::process::Command;

use purehdf::low_level::file::{File, Object};
use purehdf_cli::tools::compare::{compare_dataset, Metric, Slices};
use serde_json::Value;

const ORACLE: &str = r#"
import json, sys
import numpy as np, h5py
try:
    from skimage.metrics import structural_similarity
except ImportError:
    print("NO_SKIMAGE"); sys.exit(0)
out = sys.argv[1]
rng = np.random.default_rng(int(sys.argv[2]))
exp = {}
with h5py.File(out + "/a.h5", "w") as fa, h5py.File(out + "/b.h5", "w") as fb:
    for k in range(20):
        h, w = int(rng.integers(5, 90)), int(rng.integers(5, 90))
        dt = ["u2", "f4", "u1", "i2", "f8"][k % 5]
        a = rng.poisson(300, size=(2, h, w)).astype("f8")
        if dt == "u1":
            a = np.clip(a - 200, 0, 255)
        if dt == "i2":
            a = a - 350
        b = a + rng.normal(0, float(rng.uniform(1, 40)), size=a.shape)
        if dt[0] in "ui":
            lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
            b = np.clip(np.round(b), lo, hi)
        a, b = a.astype(dt), b.astype(dt)
        fa[f"d{k}"] = a
        fb[f"d{k}"] = b
        vals = []
        for z in range(2):
            x, y = a[z].astype("f8"), b[z].astype("f8")
            win = min(h, w, 7)
            if win % 2 == 0:
                win -= 1
            vals.append(structural_similarity(x, y, win_size=win, data_range=x.max() - x.min(),
                        gaussian_weights=False, use_sample_covariance=True, K1=0.01, K2=0.03))
        exp[f"/d{k}"] = vals
    c = np.full((1, 16, 16), 7, dtype="u2")
    fa["const"] = c
    fb["const"] = c + rng.integers(0, 3, size=c.shape).astype("u2")
json.dump(exp, open(out + "/expected.json", "w"))
"#;

#[test]
fn ssim_matches_scikit_image() {
    let Some(py) = common::oracle_python() else {
        println!("skipped: h5 compare ssim (no oracle python)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-h5cmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        % 100_000;
    let out = Command::new(&py)
        .args(["-c", ORACLE])
        .arg(&dir)
        .arg(seed.to_string())
        .output()
        .unwrap();
    if String::from_utf8_lossy(&out.stdout).contains("NO_SKIMAGE") {
        println!("skipped: h5 compare ssim (scikit-image not importable by the oracle python)");
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exp: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let (fa, fb) = (
        File::open(dir.join("a.h5")).unwrap(),
        File::open(dir.join("b.h5")).unwrap(),
    );
    let ds = |f: &File, p: &str| match f.object(p).unwrap() {
        Object::Dataset(d) => d,
        _ => panic!("{p}"),
    };
    let mut n = 0;
    let mut worst = 0f64;
    for (path, vals) in exp.as_object().unwrap() {
        let got = compare_dataset(
            &ds(&fa, path),
            &ds(&fb, path),
            Metric::Ssim,
            &Slices::List(vec![0, -1]),
        )
        .unwrap();
        for (g, e) in got.iter().zip(vals.as_array().unwrap()) {
            let e = e.as_f64().unwrap();
            let v = g.value.expect("a value");
            let d = (v - e).abs();
            worst = worst.max(d);
            assert!(
                d < 1e-6,
                "{path}[{}]: ours {v}, scikit-image {e} (seed {seed})",
                g.index
            );
            n += 1;
        }
    }
    let c = compare_dataset(
        &ds(&fa, "/const"),
        &ds(&fb, "/const"),
        Metric::Ssim,
        &Slices::All,
    )
    .unwrap();
    assert!(c.iter().all(|s| s.constant && s.value.is_none()));
    // the CLI: SSIM as JSON lines, a constant slice named, exact tells files apart
    let h5 = env!("CARGO_BIN_EXE_h5");
    let cli = Command::new(h5)
        .args(["compare", "--metric", "ssim", "--json"])
        .arg(dir.join("a.h5"))
        .arg(dir.join("b.h5"))
        .output()
        .unwrap();
    assert!(cli.status.success());
    let lines: Vec<Value> = String::from_utf8_lossy(&cli.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let konst = lines.iter().find(|l| l["path"] == "/const").unwrap();
    assert_eq!(konst["slices"][0]["constant"], Value::Bool(true));
    let d0 = lines.iter().find(|l| l["path"] == "/d0").unwrap();
    let e0 = exp["/d0"][1].as_f64().unwrap();
    assert!((d0["slices"][1]["value"].as_f64().unwrap() - e0).abs() < 1e-6);
    let same = Command::new(h5)
        .args(["compare"])
        .arg(dir.join("a.h5"))
        .arg(dir.join("a.h5"))
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(0));
    let differ = Command::new(h5)
        .args(["compare"])
        .arg(dir.join("a.h5"))
        .arg(dir.join("b.h5"))
        .output()
        .unwrap();
    assert_eq!(differ.status.code(), Some(1));
    println!(
        "h5 compare: SSIM of {n}/{n} random slice pairs equals scikit-image within 1e-6 \
(worst {worst:.1e}, seed {seed}); constant slice reported as constant"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
