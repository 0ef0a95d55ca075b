//! Issue 44: random edit programs. Each seed draws a base file (written by
//! h5py, or by our writer) and a program of edits (attribute churn, groups
//! and datasets created, links deleted, renamed, moved, soft and hard
//! links, slabs written into contiguous and chunked datasets of every chunk
//! index type and several filter stacks, chunked datasets resized); h5py applies the program to one copy and `File::open_rw` to
//! another, and the oracle (`tests/edit_oracle.py`) requires equal full
//! dumps, `h5dump -H` accepting ours, and h5py editing ours afterwards.
//! `PUREHDF_EDIT_PROGRAMS` sets the count (default 100), `PUREHDF_EDIT_SEED`
//! the first seed.

use std::path::{Path, PathBuf};
use std::process::Command;

use purehdf::low_level::write::Element;
use purehdf::{AttrValue, DatasetSpec, File, FileWriter};
use serde_json::Value;

mod common;
use common::Rng;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-edit-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn oracle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/edit_oracle.py")
}

/// A base file from our writer: a few groups, datasets and attributes.
fn our_base(path: &Path, seed: u64) {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut w = FileWriter::create(path).unwrap();
    let mut groups = vec![w.root()];
    for i in 0..1 + r.below(4) {
        let p = groups[r.below(groups.len() as u64) as usize];
        let g = w.create_group(p, &format!("g{i}")).unwrap();
        for j in 0..r.below(4) {
            w.set_attr(g, &format!("a{j}"), AttrValue::scalar(r.below(1000) as i64))
                .unwrap();
        }
        groups.push(g);
    }
    for i in 0..1 + r.below(4) {
        let p = groups[r.below(groups.len() as u64) as usize];
        let n = 1 + r.below(40);
        let vals: Vec<f64> = (0..n).map(|v| v as f64 * 0.5).collect();
        let mut spec = DatasetSpec::new(f64::dtype(), &[n]);
        if r.below(2) == 0 {
            spec = spec.chunked(&[n.div_ceil(2)], vec![]);
        }
        let d = w
            .create_dataset(
                p,
                &format!("d{i}"),
                spec,
                purehdf::low_level::write::to_bytes(&vals),
            )
            .unwrap();
        if r.below(2) == 0 {
            w.set_attr(d, "units", AttrValue::string("mm")).unwrap();
        }
    }
    w.set_attr(w.root(), "title", AttrValue::string("ours"))
        .unwrap();
    w.commit().unwrap();
}

fn value(kind: &str, v: &Value) -> AttrValue {
    match kind {
        "int" => AttrValue::scalar(v.as_i64().unwrap()),
        "float" => AttrValue::scalar(v.as_f64().unwrap()),
        "str" => AttrValue::string(v.as_str().unwrap()),
        "ints" => AttrValue::array(
            &v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect::<Vec<_>>(),
        ),
        "floats" => AttrValue::array(
            &v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect::<Vec<_>>(),
        ),
        k => panic!("unknown value kind {k}"),
    }
}

/// Apply one program op with the editor.
fn apply(ed: &mut purehdf::Editor, op: &Value) -> purehdf::Result<()> {
    let s = |k: &str| op[k].as_str().unwrap().to_string();
    match op["op"].as_str().unwrap() {
        "set_attr" => ed.set_attr(
            &s("path"),
            &s("name"),
            &value(op["kind"].as_str().unwrap(), &op["value"]),
        ),
        "del_attr" => ed.delete_attr(&s("path"), &s("name")),
        "create_group" => ed.create_group(&s("path")),
        "create_dataset" => {
            let n = op["n"].as_u64().unwrap();
            let mul = op["mul"].as_i64().unwrap();
            let vals: Vec<i64> = (0..n as i64).map(|i| i * mul).collect();
            ed.create_dataset(
                &s("path"),
                DatasetSpec::new(i64::dtype(), &[n]),
                purehdf::low_level::write::to_bytes(&vals),
            )
        }
        "write" => {
            let list = |k: &str| -> Vec<u64> {
                op[k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .collect()
            };
            let (start, count) = (list("start"), list("count"));
            let n: u64 = count.iter().product();
            let mul = op["mul"].as_i64().unwrap();
            let vals = (0..n as i64).map(|i| i * mul + 1);
            let bytes: Vec<u8> = match op["dtype"].as_str().unwrap() {
                "<i4" => vals.flat_map(|v| (v as i32).to_le_bytes()).collect(),
                "<i8" => vals.flat_map(i64::to_le_bytes).collect(),
                "<f8" => vals.flat_map(|v| (v as f64).to_le_bytes()).collect(),
                d => panic!("dtype {d}"),
            };
            ed.write_slab(&s("path"), &start, &count, &bytes)
        }
        "resize" => {
            let shape: Vec<u64> = op["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            ed.resize(&s("path"), &shape)
        }
        "delete" => ed.delete(&s("path")),
        "rename" => ed.rename(&s("from"), &s("to")),
        "soft" => ed.soft_link(&s("target"), &s("path")),
        "hard" => ed.hard_link(&s("target"), &s("path")),
        o => panic!("unknown op {o}"),
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_edit_programs_match_h5py() {
    let Some(py) = common::oracle_python() else {
        eprintln!("skipped: no oracle python (.oracle-venv)");
        return;
    };
    let n = env_u64("PUREHDF_EDIT_PROGRAMS", 100);
    let first = env_u64("PUREHDF_EDIT_SEED", 1);
    let dir = scratch("random");
    let seeds: Vec<u64> = (first..first + n).collect();
    // odd seeds start from our own files, even ones from h5py's
    let (ours, theirs): (Vec<u64>, Vec<u64>) = seeds.iter().partition(|s| *s % 2 == 1);
    for &s in &ours {
        our_base(&dir.join(format!("base_{s}.h5")), s);
    }
    for (flag, list) in [("1", &ours), ("0", &theirs)] {
        if list.is_empty() {
            continue;
        }
        let out = Command::new(&py)
            .arg(oracle())
            .args(["gen-many", dir.to_str().unwrap(), flag])
            .args(list.iter().map(u64::to_string))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut ops = 0usize;
    let mut refused = Vec::new();
    for &s in &seeds {
        let prog: Value =
            serde_json::from_slice(&std::fs::read(dir.join(format!("prog_{s}.json"))).unwrap())
                .unwrap();
        let us = dir.join(format!("us_{s}.h5"));
        std::fs::copy(dir.join(format!("base_{s}.h5")), &us).unwrap();
        let mut ed = File::open_rw(&us).unwrap();
        ed.set_durability(purehdf::Durability::Ordered);
        for op in prog["ops"].as_array().unwrap() {
            if let Err(e) = apply(&mut ed, op) {
                refused.push(format!("seed {s} ({}): {op}: {e}", prog["libver"]));
                break;
            }
            ops += 1;
        }
    }
    let out = Command::new(&py)
        .arg(oracle())
        .args(["check", dir.to_str().unwrap()])
        .args(seeds.iter().map(u64::to_string))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut bad = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        if r["ok"] != Value::Bool(true) {
            bad.push(line.to_string());
        }
    }
    eprintln!(
        "edit programs: {} seeds from {first}, {ops} ops applied, {} refused, {} differing",
        seeds.len(),
        refused.len(),
        bad.len()
    );
    assert!(refused.is_empty(), "refused: {refused:#?}");
    assert!(bad.is_empty(), "{} differ:\n{}", bad.len(), bad.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}
