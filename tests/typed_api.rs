//! The typed facade against libhdf5 (h5py + hdf5plugin through the oracle
//! interpreter): files h5py writes in many stored types and both byte orders
//! read typed and strided-sliced equal numpy's values; files the facade
//! writes (chunked, every filter constructor, slab by slab, attributes) read
//! back in h5py equal what was written. Prints `skipped:` without the oracle.

mod common;
use common::oracle_python;

use purehdf::{
    AttrValue, Blosc2Codec, Blosc2Shuffle, DatasetSpec, Error, File, FileWriter, Filter, Slice,
    SliceArg,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/typed_api/oracle.py")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-typed-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn slice_of(v: &Value) -> Slice {
    let args = v
        .as_array()
        .unwrap()
        .iter()
        .map(|a| match a.as_array() {
            Some(r) => SliceArg::Range {
                start: r[0].as_i64().unwrap(),
                end: Some(r[1].as_i64().unwrap()),
                step: r[2].as_i64().unwrap(),
            },
            None => SliceArg::Index(a.as_i64().unwrap()),
        })
        .collect();
    Slice::new(args)
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn h5py_files_read_typed_and_sliced() {
    let Some(py) = oracle_python() else {
        println!("skipped: typed api reads (no oracle python)");
        return;
    };
    let (h5, js) = (tmp("oracle.h5"), tmp("oracle.json"));
    let st = Command::new(&py)
        .arg(script())
        .args(["make".as_ref(), h5.as_os_str(), js.as_os_str()])
        .status()
        .unwrap();
    assert!(st.success());
    let cases: Vec<Value> = serde_json::from_slice(&std::fs::read(&js).unwrap()).unwrap();
    let file = File::open(&h5).unwrap();
    let root = file.root().unwrap();
    let mut ok = 0;
    for c in &cases {
        let ds = root.dataset(c["dataset"].as_str().unwrap()).unwrap();
        if let Some(sl) = c.get("slice") {
            let sl = slice_of(sl);
            let want = numbers(&c["values"]);
            let got: Vec<f64> = ds.read_slice(&sl).unwrap();
            assert_eq!(got, want, "{c}");
            // integers also read exactly as i64 and into a caller's buffer
            if want.iter().all(|x| x.fract() == 0.0) {
                let mut buf = vec![0i64; want.len()];
                ds.read_slice_into(&sl, &mut buf).unwrap();
                assert_eq!(buf, want.iter().map(|&x| x as i64).collect::<Vec<_>>());
            }
        } else if let Some(field) = c.get("field") {
            let field = field.as_str().unwrap();
            if field == "tag" {
                let got: Vec<String> = ds.read_field(field).unwrap();
                let want: Vec<String> = serde_json::from_value(c["values"].clone()).unwrap();
                assert_eq!(got, want);
            } else {
                assert_eq!(ds.read_field::<f64>(field).unwrap(), numbers(&c["values"]));
            }
        } else {
            let want: Vec<String> = serde_json::from_value(c["strings"].clone()).unwrap();
            assert_eq!(ds.read::<String>().unwrap(), want, "{c}");
        }
        ok += 1;
    }
    // conversions that do not fit are typed errors
    let u4 = root.dataset("le_u4").unwrap();
    assert!(matches!(u4.read::<i32>(), Err(Error::Conversion { .. })));
    assert_eq!(u4.read::<u32>().unwrap()[9], 3_600_000_000);
    assert!(root.dataset("be_i8").unwrap().read::<i16>().is_err());
    assert_eq!(
        root.dataset("be_i8").unwrap().read::<i32>().unwrap()[11],
        -1_358_024_679
    );
    assert!(root.dataset("f2").unwrap().read::<String>().is_err());
    // attributes: scalar, big-endian array, vlen and fixed strings
    let f8 = root.dataset("be_f8").unwrap();
    assert_eq!(
        f8.attribute("scale").unwrap().read_scalar::<f32>().unwrap(),
        0.125
    );
    assert_eq!(
        f8.attribute("dims").unwrap().read::<u64>().unwrap(),
        vec![4, 5]
    );
    assert_eq!(
        f8.attribute("units")
            .unwrap()
            .read_scalar::<String>()
            .unwrap(),
        "mm"
    );
    assert_eq!(
        f8.attribute("code")
            .unwrap()
            .read_scalar::<String>()
            .unwrap(),
        "XYZ"
    );
    // raw chunks with Fletcher-32 verification on an h5py file
    let f2 = root.dataset("f2").unwrap();
    let r = f2.chunk_reader().unwrap();
    let batch = r.raw_chunks(&[[1u64], [0]], true).unwrap();
    assert!(batch.iter().all(|c| c.as_ref().unwrap().verified));
    println!(
        "typed api: {ok}/{} h5py slices, strings and compound fields equal numpy's",
        cases.len()
    );
}

#[test]
fn facade_writes_read_back_in_h5py() {
    let Some(py) = oracle_python() else {
        println!("skipped: typed api writes (no oracle python)");
        return;
    };
    let path = tmp("written.h5");
    let mut w = FileWriter::create(&path).unwrap();
    let root = w.root();
    let img: Vec<i16> = (0..6 * 8 * 10).map(|i| (i * 7 - 2000) as i16).collect();
    let pipelines = [
        (
            "deflate",
            vec![Filter::shuffle(), Filter::deflate(6).unwrap()],
        ),
        (
            "blosc2",
            vec![Filter::blosc2(Blosc2Codec::Zstd, 3, Blosc2Shuffle::Byte).unwrap()],
        ),
        (
            "blosc2_bit",
            vec![Filter::blosc2(Blosc2Codec::Lz4, 5, Blosc2Shuffle::Bit).unwrap()],
        ),
        ("zstd", vec![Filter::zstd(5).unwrap()]),
        ("lz4", vec![Filter::lz4()]),
        (
            "bzip2_f32",
            vec![Filter::bzip2(9).unwrap(), Filter::fletcher32()],
        ),
        ("lzf", vec![Filter::lzf()]),
        ("bitshuffle", vec![Filter::bitshuffle(true)]),
    ];
    for (name, p) in &pipelines {
        let spec = DatasetSpec::of::<i16>(&[6, 8, 10]).chunked(&[3, 4, 5], p.clone());
        let d = w.write_dataset(root, name, spec, &img).unwrap();
        w.set_attr(d, "filter", AttrValue::string(name)).unwrap();
    }
    let slab_spec =
        DatasetSpec::of::<f64>(&[9, 4]).chunked(&[2, 4], vec![Filter::deflate(4).unwrap()]);
    let s = w.create_chunked(root, "slabs", slab_spec).unwrap();
    let vals: Vec<f64> = (0..36).map(|i| f64::from(i) * 0.5).collect();
    for r in (0..9).step_by(4) {
        let end = (r + 4).min(9);
        w.write_slab(s, r as u64, &vals[r * 4..end * 4]).unwrap();
    }
    w.set_attr(s, "spacing", AttrValue::array(&[0.5f32, 0.25]))
        .unwrap();
    w.commit().unwrap();
    // the stored pipelines (client data completed by the writer) display as
    // the constructors did
    let mine = File::open(&path).unwrap();
    for (name, p) in &pipelines {
        let stored = mine
            .root()
            .unwrap()
            .dataset(name)
            .unwrap()
            .filter_pipeline();
        assert_eq!(stored.len(), p.len());
        for (s, f) in stored.iter().zip(p) {
            assert_eq!(s.to_string(), f.to_string(), "{name}");
        }
    }
    let out = Command::new(&py)
        .arg(script())
        .arg("readback")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back: Value = serde_json::from_slice(&out.stdout).unwrap();
    let want_img: Vec<f64> = img.iter().map(|&v| f64::from(v)).collect();
    let mut ok = 0;
    for (name, _) in &pipelines {
        assert_eq!(numbers(&back["datasets"][name]), want_img, "{name}");
        assert_eq!(back["attrs"][format!("{name}@filter")], *name);
        ok += 1;
    }
    assert_eq!(numbers(&back["datasets"]["slabs"]), vals);
    assert_eq!(numbers(&back["attrs"]["slabs@spacing"]), vec![0.5, 0.25]);
    ok += 1;
    println!(
        "typed api: {ok}/{} facade-written datasets (every filter constructor, slabs) equal in h5py",
        pipelines.len() + 1
    );
}

/// Types, attribute values, filter pipelines and the walk as h5py shows
/// them, on a file h5py wrote: `Datatype`'s `Display` against h5py's dtype,
/// `Attribute`'s against Python's print of `attrs[name]`, `filter_pipeline`
/// against the constructors h5py's options correspond to, `visit` against
/// `visititems`.
#[test]
fn h5py_types_attributes_filters_show_as_h5py() {
    let Some(py) = oracle_python() else {
        println!("skipped: typed api display (no oracle python)");
        return;
    };
    let (h5, js) = (tmp("shown.h5"), tmp("shown.json"));
    let st = Command::new(&py)
        .arg(script())
        .args(["shown".as_ref(), h5.as_os_str(), js.as_os_str()])
        .status()
        .unwrap();
    assert!(st.success());
    let want: Value = serde_json::from_slice(&std::fs::read(&js).unwrap()).unwrap();
    let file = File::open(&h5).unwrap();
    let root = file.root().unwrap();
    let mut n = 0;
    for (path, dt) in want["dtypes"].as_object().unwrap() {
        let ds = root.dataset(path).unwrap();
        assert_eq!(ds.dtype().to_string(), dt.as_str().unwrap(), "{path}");
        n += 1;
    }
    let attrs = root.group("attrs").unwrap();
    for (name, shown) in want["attrs"].as_object().unwrap() {
        let a = attrs.attribute(name).unwrap();
        assert_eq!(a.to_string(), shown.as_str().unwrap(), "attribute {name}");
        n += 1;
    }
    for (path, stages) in want["filters"].as_object().unwrap() {
        let got: Vec<String> = root
            .dataset(path)
            .unwrap()
            .filter_pipeline()
            .iter()
            .map(|f| f.to_string())
            .collect();
        let stages: Vec<String> = serde_json::from_value(stages.clone()).unwrap();
        assert_eq!(got, stages, "{path}");
        n += 1;
    }
    // h5py's visititems: hard links only, each object once (the hard links
    // back to the root and to `/links` close cycles)
    let mut visited = Vec::new();
    root.visit(|path, _| {
        visited.push(path.to_string());
        Ok(())
    })
    .unwrap();
    let want_visit: Vec<String> = serde_json::from_value(want["visit"].clone()).unwrap();
    assert!(want_visit.contains(&"types/a_named".to_string()));
    assert_eq!(visited, want_visit);
    n += 1;
    println!(
        "typed api: {n} dtypes, attribute values, filter pipelines and the walk show as in h5py"
    );
}
