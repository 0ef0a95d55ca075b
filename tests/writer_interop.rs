//! Interop tests: files written by `purehdf::low_level::write` opened by libhdf5
//! (h5py via the oracle interpreter, and `h5dump`). Each file gets a JSON of
//! expectations next to it that `tests/interop/check_h5py.py` compares.

mod common;
use common::oracle_python;

use purehdf::low_level::datatype::{CharSet, CompoundMember, Datatype, EnumMember, StringPad};
use purehdf::low_level::write::{
    bool_type, to_bytes, vlen_string_type, AttrValue, DatasetData, DatasetSpec, Dataspace,
    FileWriter,
};
use purehdf_filters::FilterSpec;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The chunked and filtered cases of the matrix.
#[path = "writer_interop/layouts.rs"]
mod layouts;
use layouts::{chunked, filtered, spec};

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-interop-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn save(w: FileWriter, path: &Path, objects: Vec<Value>) {
    std::fs::write(path, w.finish().unwrap()).unwrap();
    let spec = json!({ "objects": objects });
    let mut j = path.as_os_str().to_owned();
    j.push(".json");
    std::fs::write(
        PathBuf::from(j),
        serde_json::to_string_pretty(&spec).unwrap(),
    )
    .unwrap();
}

fn check(files: &[PathBuf]) {
    match oracle_python() {
        None => println!("skipped: no oracle python"),
        Some(py) => {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/check_h5py.py");
            let out = Command::new(py).arg(script).args(files).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            println!("{text}{}", String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success(), "h5py check failed:\n{text}");
        }
    }
    let h5dump = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("h5dump"))
            .find(|p| p.exists())
    });
    match h5dump {
        None => println!("skipped: no h5dump"),
        Some(h5dump) => {
            let plugins = oracle_python().and_then(|py| {
                let out = Command::new(py)
                    .args(["-c", "import hdf5plugin; print(hdf5plugin.PLUGIN_PATH)"])
                    .output()
                    .ok()?;
                out.status
                    .success()
                    .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            });
            for f in files {
                let mut cmd = Command::new(&h5dump);
                if let Some(p) = &plugins {
                    cmd.env("HDF5_PLUGIN_PATH", p);
                }
                if f.to_string_lossy().contains("lzf") {
                    cmd.arg("-H");
                }
                let out = cmd.arg(f).output().unwrap();
                assert!(
                    out.status.success(),
                    "h5dump {} failed: {}",
                    f.display(),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

fn ints() -> (FileWriter, Vec<Value>) {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let mut exp = Vec::new();
    macro_rules! int_ds {
        ($t:ty, $name:expr, $dt:expr) => {{
            let v: Vec<$t> = vec![<$t>::MIN, 0, 1, <$t>::MAX];
            w.create_dataset(r, $name, DatasetSpec::new(<$t as purehdf::low_level::write::Element>::dtype(), &[4]), to_bytes(&v))
                .unwrap();
            exp.push(json!({"path": format!("/{}", $name), "kind": "dataset", "dtype": $dt, "shape": [4], "value": v}));
        }};
    }
    int_ds!(i8, "i8", "|i1");
    int_ds!(i16, "i16", "<i2");
    int_ds!(i32, "i32", "<i4");
    int_ds!(i64, "i64", "<i8");
    int_ds!(u8, "u8", "|u1");
    int_ds!(u16, "u16", "<u2");
    int_ds!(u32, "u32", "<u4");
    int_ds!(u64, "u64", "<u8");
    let f32s = vec![-1.5f32, 0.0, 3.25, f32::MAX];
    w.create_dataset(
        r,
        "f32",
        DatasetSpec::new(Datatype::float(4), &[2, 2]),
        to_bytes(&f32s),
    )
    .unwrap();
    exp.push(
        json!({"path": "/f32", "kind": "dataset", "dtype": "<f4", "shape": [2, 2],
        "value": [[-1.5, 0.0], [3.25, f32::MAX as f64]]}),
    );
    let f64s = vec![1e-300f64, -2.5, 1e300];
    w.create_dataset(
        r,
        "f64",
        DatasetSpec::new(Datatype::float(8), &[3]).compact(),
        to_bytes(&f64s),
    )
    .unwrap();
    exp.push(json!({"path": "/f64", "kind": "dataset", "dtype": "<f8", "value": f64s}));
    let f16 = vec![0x3C00u16, 0xC000]; // 1.0, -2.0
    w.create_dataset(
        r,
        "f16",
        DatasetSpec::new(Datatype::float(2), &[2]),
        to_bytes(&f16),
    )
    .unwrap();
    exp.push(json!({"path": "/f16", "kind": "dataset", "dtype": "<f2", "value": [1.0, -2.0]}));
    let b = vec![true, false, true];
    w.create_dataset(r, "bool", DatasetSpec::new(bool_type(), &[3]), to_bytes(&b))
        .unwrap();
    exp.push(json!({"path": "/bool", "kind": "dataset", "dtype": "|b1", "value": b}));
    // Scalar, null, zero-length.
    w.create_dataset(
        r,
        "scalar",
        DatasetSpec::scalar(Datatype::int(4, true)),
        to_bytes(&[42i32]),
    )
    .unwrap();
    exp.push(json!({"path": "/scalar", "kind": "dataset", "shape": [], "value": 42}));
    let mut null = DatasetSpec::scalar(Datatype::float(8));
    null.shape = Dataspace::null();
    w.create_dataset(r, "null", null, DatasetData::None)
        .unwrap();
    exp.push(json!({"path": "/null", "kind": "dataset", "shape": null, "null": true}));
    w.create_dataset(
        r,
        "empty",
        DatasetSpec::new(Datatype::int(2, false), &[0, 3]),
        Vec::<u8>::new(),
    )
    .unwrap();
    exp.push(json!({"path": "/empty", "kind": "dataset", "shape": [0, 3], "value": []}));
    // Unwritten contiguous dataset reads as the fill value.
    w.create_dataset(
        r,
        "filled",
        DatasetSpec::new(Datatype::int(4, true), &[3]).with_fill(to_bytes(&[-7i32])),
        DatasetData::None,
    )
    .unwrap();
    exp.push(json!({"path": "/filled", "kind": "dataset", "value": [-7, -7, -7]}));
    (w, exp)
}

fn strings_and_types() -> (FileWriter, Vec<Value>) {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let mut exp = Vec::new();
    let g = w.create_group(r, "grüße").unwrap();
    let vals: Vec<String> = vec!["".into(), "a".into(), "ünïcødé ✓".into(), "x".repeat(5000)];
    w.create_dataset(
        g,
        "vlen",
        DatasetSpec::new(vlen_string_type(CharSet::Utf8), &[4]),
        vals.clone(),
    )
    .unwrap();
    exp.push(
        json!({"path": "/grüße/vlen", "kind": "dataset", "dtype": "|O",
        "string": {"encoding": "utf-8", "length": null}, "value": vals}),
    );
    let many: Vec<String> = (0..3000).map(|i| format!("s{i}")).collect();
    w.create_dataset(
        g,
        "vlen_chunked",
        DatasetSpec::new(vlen_string_type(CharSet::Ascii), &[3000]).chunked(&[512], vec![]),
        many.clone(),
    )
    .unwrap();
    exp.push(json!({"path": "/grüße/vlen_chunked", "kind": "dataset",
        "string": {"encoding": "ascii", "length": null}, "value": many}));
    let fixed = Datatype::String {
        size: 6,
        pad: StringPad::NullPad,
        cset: CharSet::Ascii,
    };
    w.create_dataset(
        g,
        "fixed",
        DatasetSpec::new(fixed, &[2]),
        b"hello\0abcdef".to_vec(),
    )
    .unwrap();
    exp.push(
        json!({"path": "/grüße/fixed", "kind": "dataset", "dtype": "|S6",
        "value": ["hello", "abcdef"]}),
    );
    let fixed_utf8 = Datatype::String {
        size: 8,
        pad: StringPad::NullTerm,
        cset: CharSet::Utf8,
    };
    let mut bytes = "é✓".as_bytes().to_vec();
    bytes.resize(8, 0);
    w.create_dataset(g, "fixed_utf8", DatasetSpec::scalar(fixed_utf8), bytes)
        .unwrap();
    exp.push(json!({"path": "/grüße/fixed_utf8", "kind": "dataset",
        "string": {"encoding": "utf-8", "length": 8}, "value": "é✓"}));
    // Enum over u16.
    let en = Datatype::Enum {
        base: Box::new(Datatype::int(2, false)),
        members: vec![
            EnumMember {
                name: "RED".into(),
                value: to_bytes(&[1u16]),
            },
            EnumMember {
                name: "GREEN".into(),
                value: to_bytes(&[2u16]),
            },
            EnumMember {
                name: "BLUE".into(),
                value: to_bytes(&[300u16]),
            },
        ],
    };
    w.create_dataset(
        r,
        "enum",
        DatasetSpec::new(en, &[3]),
        to_bytes(&[300u16, 1, 2]),
    )
    .unwrap();
    exp.push(json!({"path": "/enum", "kind": "dataset", "dtype": "<u2",
        "enum": {"RED": 1, "GREEN": 2, "BLUE": 300}, "value": [300, 1, 2]}));
    // Compound {a: i32, b: f64, c: [u8; 3]} packed, size 15.
    let comp = Datatype::Compound {
        size: 15,
        members: vec![
            CompoundMember {
                name: "a".into(),
                offset: 0,
                dtype: Datatype::int(4, true),
            },
            CompoundMember {
                name: "b".into(),
                offset: 4,
                dtype: Datatype::float(8),
            },
            CompoundMember {
                name: "c".into(),
                offset: 12,
                dtype: Datatype::Array {
                    base: Box::new(Datatype::int(1, false)),
                    dims: vec![3],
                },
            },
        ],
    };
    let mut cb = Vec::new();
    for (a, b, c) in [(1i32, 0.5f64, [1u8, 2, 3]), (-2, 1e10, [7, 8, 9])] {
        cb.extend_from_slice(&a.to_le_bytes());
        cb.extend_from_slice(&b.to_le_bytes());
        cb.extend_from_slice(&c);
    }
    w.create_dataset(r, "compound", DatasetSpec::new(comp, &[2]), cb)
        .unwrap();
    exp.push(
        json!({"path": "/compound", "kind": "dataset", "fields": ["a", "b", "c"],
        "value": [[1, 0.5, [1, 2, 3]], [-2, 1e10, [7, 8, 9]]]}),
    );
    // Array datatype dataset: 2 elements of [i16; 2x2].
    let arr = Datatype::Array {
        base: Box::new(Datatype::int(2, true)),
        dims: vec![2, 2],
    };
    w.create_dataset(
        r,
        "array",
        DatasetSpec::new(arr, &[2]),
        to_bytes(&[1i16, 2, 3, 4, 5, 6, 7, 8]),
    )
    .unwrap();
    exp.push(json!({"path": "/array", "kind": "dataset", "shape": [2],
        "value": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]}));
    // Variable-length sequence of i32.
    let vs = Datatype::VarSequence {
        size: 16,
        base: Box::new(Datatype::int(4, true)),
    };
    w.create_dataset(
        r,
        "vlen_seq",
        DatasetSpec::new(vs, &[3]),
        DatasetData::VarSequences(vec![to_bytes(&[1i32, 2, 3]), Vec::new(), to_bytes(&[9i32])]),
    )
    .unwrap();
    exp.push(json!({"path": "/vlen_seq", "kind": "dataset", "value": [[1, 2, 3], [], [9]]}));
    // Committed datatype shared by a dataset, with an attribute of its own.
    let t = w.commit_datatype(r, "my_type", Datatype::float(4)).unwrap();
    w.set_attr(t, "doc", AttrValue::string("a named float"))
        .unwrap();
    w.create_dataset_with_type(
        r,
        "typed",
        DatasetSpec::new(Datatype::int(1, false), &[2]),
        t,
        to_bytes(&[0.5f32, -1.0]),
    )
    .unwrap();
    exp.push(
        json!({"path": "/my_type", "kind": "datatype", "dtype": "<f4",
        "attrs": {"doc": {"value": "a named float"}}}),
    );
    exp.push(json!({"path": "/typed", "kind": "dataset", "dtype": "<f4",
        "committed_type": true, "value": [0.5, -1.0]}));
    // Soft link.
    w.soft_link(r, "alias", "/enum").unwrap();
    exp.push(json!({"path": "/alias", "kind": "softlink", "target": "/enum"}));
    (w, exp)
}

fn attributes() -> (FileWriter, Vec<Value>) {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let mut exp = Vec::new();
    let g = w.create_group(r, "few").unwrap();
    w.set_attr(g, "i", AttrValue::scalar(-5i64)).unwrap();
    w.set_attr(g, "f", AttrValue::array(&[1.5f32, 2.5]))
        .unwrap();
    w.set_attr(g, "b", AttrValue::scalar(true)).unwrap();
    w.set_attr(g, "s", AttrValue::string("héllo")).unwrap();
    w.set_attr(g, "a", AttrValue::ascii("plain")).unwrap();
    w.set_attr(g, "ss", AttrValue::strings(&["x", "yÿ", ""], CharSet::Utf8))
        .unwrap();
    w.set_attr(
        g,
        "fs",
        AttrValue::fixed_string("abc", 4, StringPad::NullPad, CharSet::Ascii),
    )
    .unwrap();
    w.set_attr(
        g,
        "名前",
        AttrValue::raw(
            Datatype::int(2, false),
            Dataspace::simple(&[2, 2]),
            to_bytes(&[1u16, 2, 3, 4]),
        ),
    )
    .unwrap();
    exp.push(json!({"path": "/few", "kind": "group", "attrs": {
        "i": {"dtype": "<i8", "value": -5},
        "f": {"dtype": "<f4", "shape": [2], "value": [1.5, 2.5]},
        "b": {"dtype": "|b1", "value": true},
        "s": {"string": {"encoding": "utf-8", "length": null}, "value": "héllo"},
        "a": {"string": {"encoding": "ascii", "length": null}, "value": "plain"},
        "ss": {"shape": [3], "value": ["x", "yÿ", ""]},
        "fs": {"dtype": "|S4", "value": "abc"},
        "名前": {"shape": [2, 2], "value": [[1, 2], [3, 4]]},
    }}));
    // Dense: 20 attributes on a dataset.
    let d = w
        .create_dataset(
            r,
            "many",
            DatasetSpec::new(Datatype::int(1, false), &[2]),
            vec![1u8, 2],
        )
        .unwrap();
    let mut attrs = serde_json::Map::new();
    for i in 0..20 {
        let name = format!("attr_{i:02}");
        if i % 2 == 0 {
            w.set_attr(d, &name, AttrValue::scalar(i)).unwrap();
            attrs.insert(name, json!({"value": i}));
        } else {
            w.set_attr(d, &name, AttrValue::string(&format!("v{i}")))
                .unwrap();
            attrs.insert(name, json!({"value": format!("v{i}")}));
        }
    }
    exp.push(json!({"path": "/many", "kind": "dataset", "value": [1, 2], "attrs": attrs}));
    // Dense because one attribute is larger than a header message may be.
    let big: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
    let g2 = w.create_group(r, "bigattr").unwrap();
    w.set_attr(g2, "big", AttrValue::array(&big)).unwrap();
    w.set_attr(g2, "small", AttrValue::scalar(1u8)).unwrap();
    exp.push(json!({"path": "/bigattr", "kind": "group", "attrs": {
        "big": {"shape": [10000], "value": big}, "small": {"value": 1}}}));
    // Null-shaped attribute and empty array attribute.
    w.set_attr(
        r,
        "empty",
        AttrValue::raw(Datatype::int(4, true), Dataspace::simple(&[0]), Vec::new()),
    )
    .unwrap();
    exp.push(
        json!({"path": "/", "kind": "group", "attrs": {"empty": {"shape": [0], "value": []}}}),
    );
    (w, exp)
}

fn groups() -> (FileWriter, Vec<Value>) {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let mut exp = Vec::new();
    let g = w.create_group(r, "twelve").unwrap();
    let mut members = Vec::new();
    let mut sample = serde_json::Map::new();
    for i in 0..12 {
        let name = format!("d{i}");
        w.create_dataset(
            g,
            &name,
            DatasetSpec::scalar(Datatype::int(4, true)),
            to_bytes(&[i]),
        )
        .unwrap();
        sample.insert(name.clone(), json!(i));
        members.push(name);
    }
    let sub = w.create_group(g, "sub✓").unwrap();
    w.create_group(sub, "deeper").unwrap();
    members.push("sub✓".into());
    exp.push(json!({"path": "/twelve", "kind": "group", "members": members, "sample": sample}));
    exp.push(json!({"path": "/twelve/sub✓/deeper", "kind": "group", "nlinks": 0}));
    let big = w.create_group(r, "big").unwrap();
    let mut sample = serde_json::Map::new();
    for i in 0..10_000 {
        let name = format!("n{i:05}");
        let sub = w.create_group(big, &name).unwrap();
        if i % 1111 == 0 {
            let d = w
                .create_dataset(
                    sub,
                    "v",
                    DatasetSpec::scalar(Datatype::int(4, true)).compact(),
                    to_bytes(&[i]),
                )
                .unwrap();
            let _ = d;
            sample.insert(format!("{name}/v"), json!(i));
        }
    }
    exp.push(json!({"path": "/big", "kind": "group", "nlinks": 10000, "sample": sample}));
    (w, exp)
}

/// Link names over 64 KiB (link messages too big for a header: dense storage,
/// huge heap objects) and attributes over 64 KiB in a heap of huge objects.
fn long_links() -> (FileWriter, Vec<Value>) {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let mut exp = Vec::new();
    let long: String = (0..100_000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let g = w.create_group(r, &long).unwrap();
    w.create_dataset(
        g,
        "v",
        DatasetSpec::scalar(Datatype::int(4, true)),
        to_bytes(&[42i32]),
    )
    .unwrap();
    let also: String = format!("{long}-{long}");
    w.create_group(g, &also).unwrap();
    w.soft_link(r, &format!("soft-{long}"), "/grp1").unwrap();
    w.create_group(r, "grp1").unwrap();
    exp.push(json!({"path": "/", "kind": "group",
        "members": [long.clone(), format!("soft-{long}"), "grp1".to_string(), "bigattrs".to_string()]}));
    exp.push(json!({"path": format!("/{long}"), "kind": "group",
        "members": ["v", also.clone()], "sample": {"v": 42}}));
    exp.push(json!({"path": format!("/soft-{long}"), "kind": "softlink", "target": "/grp1"}));
    exp.push(json!({"path": format!("/{long}/{also}"), "kind": "group", "nlinks": 0}));
    // one 300 KB attribute, one 70 KB string, one small: dense, two huge objects
    let big: Vec<i32> = (0..75_000).collect();
    let d = w
        .create_dataset(
            r,
            "bigattrs",
            DatasetSpec::new(Datatype::int(1, false), &[1]),
            vec![1u8],
        )
        .unwrap();
    w.set_attr(d, "big", AttrValue::array(&big)).unwrap();
    w.set_attr(d, "text", AttrValue::string(&long[..70_000]))
        .unwrap();
    w.set_attr(d, "small", AttrValue::scalar(3u8)).unwrap();
    exp.push(
        json!({"path": "/bigattrs", "kind": "dataset", "value": [1], "attrs": {
        "big": {"dtype": "<i4", "shape": [75000], "value": big},
        "text": {"value": long[..70_000]},
        "small": {"value": 3}}}),
    );
    (w, exp)
}

#[test]
fn files_open_in_libhdf5() {
    let dir = out_dir("matrix");
    let mut files = Vec::new();
    let (fw, fexp, used) = filtered(|n| n != "lzf");
    // LZF lives inside h5py only (no plugin for h5dump): its own file, header-only dump.
    let (lw, lexp, lused) = filtered(|n| n == "lzf");
    let builders: Vec<(&str, (FileWriter, Vec<Value>))> = vec![
        ("ints", ints()),
        ("strings", strings_and_types()),
        ("attributes", attributes()),
        ("groups", groups()),
        ("long_links", long_links()),
        ("chunked", chunked()),
        ("filtered", (fw, fexp)),
        ("filtered_lzf", (lw, lexp)),
    ];
    println!("{} filter pipelines available", used + lused);
    for (name, (w, exp)) in builders {
        let path = dir.join(format!("{name}.h5"));
        save(w, &path, exp);
        files.push(path);
    }
    check(&files);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn committed_file_opens_in_libhdf5() {
    let dir = out_dir("commit");
    let path = dir.join("committed.h5");
    std::fs::write(&path, b"not hdf5").unwrap();
    let mut w = FileWriter::create(&path).unwrap();
    let r = w.root();
    w.create_dataset(
        r,
        "x",
        DatasetSpec::new(Datatype::float(8), &[2]),
        to_bytes(&[1.0f64, 2.0]),
    )
    .unwrap();
    w.commit().unwrap();
    let spec = json!({"objects": [{"path": "/x", "kind": "dataset", "value": [1.0, 2.0]}]});
    std::fs::write(dir.join("committed.h5.json"), spec.to_string()).unwrap();
    check(&[path]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hundred_thousand_links() {
    let dir = out_dir("links");
    let path = dir.join("links.h5");
    let t0 = std::time::Instant::now();
    let mut w = FileWriter::create(&path).unwrap();
    let g = w.create_group(w.root(), "g").unwrap();
    for i in 0..100_000u32 {
        w.create_dataset(
            g,
            &format!("d{i:06}"),
            DatasetSpec::scalar(Datatype::int(4, false)).compact(),
            to_bytes(&[i]),
        )
        .unwrap();
    }
    let built = t0.elapsed();
    w.commit().unwrap();
    let total = t0.elapsed();
    println!(
        "100000 links: build {:?}, build+serialize+commit {:?}, {} bytes",
        built,
        total,
        std::fs::metadata(&path).unwrap().len()
    );
    assert!(total.as_secs() < 30, "too slow: {total:?}");
    let spec = json!({"objects": [{"path": "/g", "kind": "group", "nlinks": 100_000,
        "sample": {"d000000": 0, "d054321": 54321, "d099999": 99999}}]});
    std::fs::write(dir.join("links.h5.json"), spec.to_string()).unwrap();
    match oracle_python() {
        None => println!("skipped: no oracle python"),
        Some(py) => {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/check_h5py.py");
            let out = Command::new(py).arg(script).arg(&path).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            println!("{text}");
            assert!(out.status.success(), "h5py check failed:\n{text}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Throughput of chunked writes through shuffle + deflate (run with `--ignored`).
#[test]
#[ignore]
fn encode_throughput() {
    let n = 8 * 1024 * 1024usize; // 32 MiB of f32
    let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.001).sin()).collect();
    let bytes = to_bytes(&v);
    let mut w = FileWriter::in_memory();
    let r = w.root();
    w.create_dataset(
        r,
        "x",
        DatasetSpec::new(Datatype::float(4), &[n as u64])
            .chunked_stored(&[256 * 1024], vec![spec(2, vec![]), spec(1, vec![4])]),
        bytes,
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let out = w.finish().unwrap();
    let dt = t0.elapsed();
    println!(
        "32 MiB f32 shuffle+deflate(4): {:?} ({:.1} MiB/s), {} bytes out",
        dt,
        32.0 / dt.as_secs_f64(),
        out.len()
    );
}
