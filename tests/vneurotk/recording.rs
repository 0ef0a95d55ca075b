//! A VneuroTK recording as a user of this crate would read and write it:
//! the header gate and normalisers of schemas 0 and 1, the schema-0 layout
//! of VneuroTK 0.0.1 written with `FileWriter`, and the values VneuroTK's
//! reader derives from a file (for `tests/neighbours_vneurotk.rs`).

#![allow(dead_code)]

use std::path::Path;

use purehdf::scalar_seq::{self, Scalar};
use purehdf::{
    AttrValue, Attribute, CharSet, ChunkPolicy, DatasetSpec, Datatype, File, FileWriter, GroupId,
    HeaderGate, HeaderOutcome, Normalisers, Result,
};
use serde_json::{json, Map, Value};

/// The magic attribute.
pub(crate) const FORMAT: &str = "vneurotk_format";
/// The version attribute.
pub(crate) const VERSION: &str = "vneurotk_schema_version";

/// VneuroTK's reader gate: magic `recording`, schema 0..=1, no header =
/// schema 0, `writer_version` required from schema 1.
pub(crate) fn gate() -> HeaderGate {
    HeaderGate::new(VERSION, 0..=1)
        .magic(FORMAT, "recording")
        .legacy(0)
        .required_from(1, "writer_version")
}

/// `data_mode` per schema: schema 0 fixes its typo and a missing mode,
/// schema 1 must name a valid mode.
pub(crate) fn modes() -> Normalisers<String> {
    Normalisers::new()
        .on(0..=0, |m: &mut String| {
            if m.is_empty() || m == "continues" {
                *m = "continuous".into();
            }
            Ok(())
        })
        .on(1..=1, |m: &mut String| match m.as_str() {
            "continuous" | "epochs" | "patterns" => Ok(()),
            other => Err(format!("invalid data_mode {other:?}")),
        })
}

fn text_attr(f: &File, name: &str) -> Result<Option<String>> {
    match f.root()?.attribute(name) {
        Ok(a) => Ok(Some(a.read_scalar::<String>()?)),
        Err(purehdf::Error::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The recording's `data_mode`, gated and normalised.
pub(crate) fn load_mode(path: &Path) -> Result<String> {
    let f = File::open(path)?;
    let outcome = gate().check(&f.root()?)?;
    let mut mode = text_attr(&f, "data_mode")?.unwrap_or_default();
    modes().apply(outcome, "data_mode", &mut mode)?;
    Ok(mode)
}

/// Read every attribute and dataset of the file.
pub(crate) fn read_everything(path: &Path) -> Result<()> {
    let f = File::open(path)?;
    let root = f.root()?;
    root.attributes()?;
    root.visit(|_, obj| {
        if let purehdf::Object::Dataset(d) = obj {
            d.read_all_raw()?;
        }
        obj.attributes().map(drop)
    })
}

fn v1_header(w: &mut FileWriter, mode: &str) -> Result<()> {
    let root = w.root();
    w.set_attr(root, FORMAT, AttrValue::string("recording"))?;
    w.set_attr(root, VERSION, AttrValue::scalar(1i64))?;
    w.set_attr(root, "writer_version", AttrValue::string("purehdf"))?;
    w.set_attr(root, "data_mode", AttrValue::string(mode))
}

/// A schema-1 header with `data_mode = mode` and a small `neuro`.
pub(crate) fn write_v1_header_only(path: &Path, mode: &str) -> Result<()> {
    let mut w = FileWriter::create(path)?;
    v1_header(&mut w, mode)?;
    let root = w.root();
    w.write_dataset(
        root,
        "neuro",
        DatasetSpec::of::<f32>(&[2, 2]),
        &[1f32, 2., 3., 4.],
    )?;
    w.commit()
}

/// The V2 matrix, written by our writer (names as the oracle script's).
pub(crate) fn write_mutants(dir: &Path) -> Result<()> {
    type Edit = fn(&mut FileWriter, GroupId) -> Result<()>;
    let cases: [(&str, Edit); 11] = [
        ("no_magic", |w, r| {
            w.set_attr(r, VERSION, AttrValue::scalar(1i64))?;
            w.set_attr(r, "writer_version", AttrValue::string("x"))
        }),
        ("no_version", |w, r| {
            w.set_attr(r, FORMAT, AttrValue::string("recording"))?;
            w.set_attr(r, "writer_version", AttrValue::string("x"))
        }),
        ("wrong_magic", |w, r| {
            full(w, r)?;
            w.set_attr(r, FORMAT, AttrValue::string("dataset"))
        }),
        ("version_text", |w, r| {
            full(w, r)?;
            w.set_attr(r, VERSION, AttrValue::string("one"))
        }),
        ("version_2", |w, r| {
            full(w, r)?;
            w.set_attr(r, VERSION, AttrValue::scalar(2i64))
        }),
        ("version_bool", |w, r| {
            full(w, r)?;
            w.set_attr(r, VERSION, AttrValue::scalar(true))
        }),
        ("version_array", |w, r| {
            full(w, r)?;
            w.set_attr(r, VERSION, AttrValue::array(&[1i64]))
        }),
        ("no_writer_version", |w, r| {
            w.set_attr(r, FORMAT, AttrValue::string("recording"))?;
            w.set_attr(r, VERSION, AttrValue::scalar(1i64))
        }),
        ("version_float", |w, r| {
            full(w, r)?;
            w.set_attr(r, VERSION, AttrValue::scalar(1.0f64))
        }),
        ("version_u8", |w, r| {
            full(w, r)?;
            w.set_attr(r, VERSION, AttrValue::scalar(1u8))
        }),
        ("magic_fixed_ascii", |w, r| {
            full(w, r)?;
            w.set_attr(
                r,
                FORMAT,
                AttrValue::fixed_string(
                    "recording",
                    9,
                    purehdf::StringPad::NullPad,
                    CharSet::Ascii,
                ),
            )
        }),
    ];
    fn full(w: &mut FileWriter, r: GroupId) -> Result<()> {
        w.set_attr(r, FORMAT, AttrValue::string("recording"))?;
        w.set_attr(r, VERSION, AttrValue::scalar(1i64))?;
        w.set_attr(r, "writer_version", AttrValue::string("x"))
    }
    for (name, edit) in cases {
        let mut w = FileWriter::create(dir.join(format!("{name}.h5")))?;
        let r = w.root();
        edit(&mut w, r)?;
        w.commit()?;
    }
    let mut w = FileWriter::create(dir.join("legacy.h5"))?;
    let r = w.root();
    w.write_dataset(r, "neuro", DatasetSpec::of::<f64>(&[3, 2]), &[0f64; 6])?;
    w.set_attr(r, "data_mode", AttrValue::string("continues"))?;
    w.commit()
}

/// `neuro` of `shape` with values `f(i)`, chunked by VneuroTK's policy
/// (1 MiB, gzip 4 + shuffle).
pub(crate) fn write_neuro(path: &Path, shape: &[u64], f: impl Fn(u64) -> f32) -> Result<()> {
    let n: u64 = shape.iter().product();
    let data: Vec<f32> = (0..n).map(f).collect();
    let mut w = FileWriter::create(path)?;
    let root = w.root();
    let spec = DatasetSpec::of::<f32>(shape).with_chunk_policy(&ChunkPolicy::default())?;
    w.write_dataset(root, "neuro", spec, &data)?;
    w.commit()
}

/// A `bytes`-byte float32 dataset `big` of noisy values (slow to re-encode).
pub(crate) fn write_big(path: &Path, bytes: u64) -> Result<()> {
    let n = bytes / 4;
    let mut x: u32 = 0x1234_5678;
    let data: Vec<f32> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 8) as f32
        })
        .collect();
    let mut w = FileWriter::create(path)?;
    let root = w.root();
    let spec = DatasetSpec::of::<f32>(&[n]).chunked(&[1 << 18], vec![]);
    w.write_dataset(root, "big", spec, &data)?;
    w.commit()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn vstr(w: &mut FileWriter, g: GroupId, name: &str, v: Vec<String>) -> Result<()> {
    let n = v.len() as u64;
    w.create_dataset(
        g,
        name,
        DatasetSpec::new(
            purehdf::low_level::write::vlen_string_type(CharSet::Utf8),
            &[n],
        ),
        v,
    )?;
    Ok(())
}

/// A schema-0 dense recording as VneuroTK 0.0.1 saves it (its layout, our
/// writer): continuous `neuro` (200, 4) float32, string stimulus labels, the
/// trial arrays, `neuro_info`, `vision_info`, `trial_info`, `trial_meta`.
pub(crate) fn write_v0_dense(path: &Path, mode: &str) -> Result<()> {
    let mut w = FileWriter::create(path)?;
    let root = w.root();
    let neuro: Vec<f32> = (0..800).map(|i| (i as f32) * 0.5 - 7.0).collect();
    w.write_dataset(root, "neuro", DatasetSpec::of::<f32>(&[200, 4]), &neuro)?;
    w.set_attr(root, "neuro_format", AttrValue::string("dense"))?;
    let mut labels = vec![String::new(); 200];
    for (i, l) in [(20, "cat"), (90, "dog"), (150, "cat")] {
        labels[i] = l.to_string();
    }
    vstr(&mut w, root, "stim_labels", labels)?;
    w.set_attr(root, "stim_labels_is_str", AttrValue::scalar(true))?;
    w.set_attr(root, "stim_labels_shape", AttrValue::array(&[200i64]))?;
    let trial: Vec<f64> = (0..200)
        .map(|i| match i {
            15..=39 => 0.0,
            85..=109 => 1.0,
            145..=169 => 2.0,
            _ => f64::NAN,
        })
        .collect();
    w.write_dataset(root, "trial", DatasetSpec::of::<f64>(&[200]), &trial)?;
    w.write_dataset(
        root,
        "trial_starts",
        DatasetSpec::of::<i64>(&[3]),
        &[15i64, 85, 145],
    )?;
    w.write_dataset(
        root,
        "trial_ends",
        DatasetSpec::of::<i64>(&[3]),
        &[40i64, 110, 170],
    )?;
    w.write_dataset(
        root,
        "vision_onsets",
        DatasetSpec::of::<i64>(&[3]),
        &[20i64, 90, 150],
    )?;
    w.set_attr(root, "data_mode", AttrValue::string(mode))?;
    let ni = w.create_group(root, "neuro_info")?;
    w.set_attr(ni, "sfreq", AttrValue::scalar(100.0f64))?;
    w.set_attr(
        ni,
        "ch_names",
        AttrValue::strings(&["a", "b", "c", "d"], CharSet::Utf8),
    )?;
    w.set_attr(ni, "highpass", AttrValue::scalar(0.1f64))?;
    let vi = w.create_group(root, "vision_info")?;
    w.set_attr(vi, "n_stim", AttrValue::scalar(2i64))?;
    vstr(&mut w, vi, "stim_ids", strs(&["cat", "dog"]))?;
    let ti = w.create_group(root, "trial_info")?;
    w.set_attr(ti, "baseline", AttrValue::array(&[5i64, 0]))?;
    w.set_attr(ti, "trial_window", AttrValue::array(&[-5i64, 20]))?;
    let tm = w.create_group(root, "trial_meta")?;
    w.write_dataset(
        tm,
        "rt",
        DatasetSpec::of::<f64>(&[3]),
        &[0.5f64, 0.25, 0.125],
    )?;
    w.write_dataset(
        tm,
        "correct",
        DatasetSpec::of::<bool>(&[3]),
        &[true, false, true],
    )?;
    vstr(&mut w, tm, "cond", strs(&["a", "b", "\u{fc}"]))?;
    w.commit()
}

/// A schema-1 style typed sequence of stimulus IDs (for callers that want one).
pub(crate) fn write_ids(w: &mut FileWriter, g: GroupId, ids: &[Scalar]) -> Result<GroupId> {
    scalar_seq::write(w, g, "stim_ids", ids)
}

fn is_bool(d: &Datatype) -> bool {
    matches!(d, Datatype::Enum { members, .. } if members.iter().any(|m| m.name == "TRUE"))
}

fn num(v: f64) -> Value {
    if v.is_nan() {
        json!("nan")
    } else {
        json!(v)
    }
}

/// Values of `dtype` from a reader of each kind, as the oracle script's
/// `norm` gives them.
fn flat_values(
    dtype: &Datatype,
    strings: impl FnOnce() -> Result<Vec<String>>,
    ints: impl FnOnce() -> Result<Vec<i64>>,
    floats: impl FnOnce() -> Result<Vec<f64>>,
) -> Result<Vec<Value>> {
    Ok(match dtype {
        d if d.is_string() => strings()?.into_iter().map(Value::String).collect(),
        d if is_bool(d) => ints()?.into_iter().map(|i| json!(i != 0)).collect(),
        Datatype::Integer { .. } => ints()?.into_iter().map(|i| json!(i)).collect(),
        _ => floats()?.into_iter().map(num).collect(),
    })
}

fn nest(flat: Vec<Value>, shape: &[u64]) -> Value {
    match shape {
        [] => flat.into_iter().next().unwrap_or(Value::Null),
        [_] => Value::Array(flat),
        [_, rest @ ..] => {
            let step = rest.iter().product::<u64>().max(1) as usize;
            let mut out = Vec::new();
            let mut it = flat.into_iter().peekable();
            while it.peek().is_some() {
                out.push(nest(it.by_ref().take(step).collect(), rest));
            }
            Value::Array(out)
        }
    }
}

fn attr_json(a: &Attribute) -> Result<Value> {
    let flat = flat_values(&a.dtype, || a.read(), || a.read(), || a.read())?;
    Ok(nest(flat, a.shape()))
}

fn dataset_json(d: &purehdf::Dataset) -> Result<Value> {
    let flat = flat_values(d.dtype(), || d.read(), || d.read(), || d.read())?;
    Ok(nest(flat, d.shape()))
}

fn attrs_json(g: &purehdf::Group) -> Result<Map<String, Value>> {
    let mut m = Map::new();
    for a in g.attributes()? {
        m.insert(a.name.clone(), attr_json(&a)?);
    }
    Ok(m)
}

fn numpy_name(d: &Datatype) -> String {
    match d {
        Datatype::Float { size, .. } => format!("float{}", size * 8),
        Datatype::Integer { size, signed, .. } => {
            format!("{}int{}", if *signed { "" } else { "u" }, size * 8)
        }
        other => other.to_string(),
    }
}

fn sha_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What VneuroTK's reader makes of the recording at `path` (schema 0 as
/// 0.0.1 reads it), as the oracle script's `vtk_values` prints it.
pub(crate) fn values(path: &Path) -> Result<Value> {
    let f = File::open(path)?;
    let root = f.root()?;
    let outcome = gate().check(&root)?;
    assert_eq!(outcome, HeaderOutcome::Legacy(0), "0.0.1 reads schema 0");
    let mut mode = text_attr(&f, "data_mode")?.unwrap_or_default();
    modes().apply(outcome, "data_mode", &mut mode)?;
    let format = text_attr(&f, "neuro_format")?.unwrap_or_else(|| "dense".into());
    let (shape, dtype, sha) = if format == "coo" {
        let shape = root.attribute("neuro_shape")?.read::<u64>()?;
        let dtype = root.attribute("neuro_dtype")?.read_scalar::<String>()?;
        let rows = root.dataset("neuro_row")?.read::<u64>()?;
        let cols = root.dataset("neuro_col")?.read::<u64>()?;
        let data = root.dataset("neuro_data")?.read::<f64>()?;
        let (n, width) = (shape.iter().product::<u64>(), shape[2]);
        let mut dense = vec![0f64; n as usize];
        for ((r, c), v) in rows.iter().zip(&cols).zip(&data) {
            dense[(r * width + c) as usize] += v;
        }
        let bytes: Vec<u8> = match dtype.as_str() {
            "float32" => dense
                .iter()
                .flat_map(|v| (*v as f32).to_le_bytes())
                .collect(),
            _ => dense.iter().flat_map(|v| v.to_le_bytes()).collect(),
        };
        (shape, dtype, sha_hex(&bytes))
    } else {
        let d = root.dataset("neuro")?;
        (
            d.shape().to_vec(),
            numpy_name(d.dtype()),
            sha_hex(&d.read_all_raw()?),
        )
    };
    let mut neuro_info = match root.group("neuro_info") {
        Ok(g) => attrs_json(&g)?,
        Err(_) => Map::new(),
    };
    neuro_info
        .entry("shape")
        .or_insert_with(|| json!(shape.clone()));
    let lazy = neuro_info["shape"].clone();
    let labels = match root.dataset("stim_labels") {
        Ok(d) => {
            let is_str = root
                .attribute("stim_labels_is_str")
                .and_then(|a| a.read_scalar::<i64>())
                .unwrap_or(0)
                != 0;
            if is_str {
                let v = d.read::<String>()?;
                json!(v
                    .into_iter()
                    .map(|s| if s.is_empty() { json!("nan") } else { json!(s) })
                    .collect::<Vec<_>>())
            } else {
                json!(d.read::<f64>()?.into_iter().map(num).collect::<Vec<_>>())
            }
        }
        Err(_) => Value::Null,
    };
    let mut vision_info = Map::new();
    if let Ok(g) = root.group("vision_info") {
        vision_info = attrs_json(&g)?;
        if let Ok(d) = g.dataset("stim_ids") {
            vision_info.insert("stim_ids".into(), dataset_json(&d)?);
        }
    }
    let trial_info = match root.group("trial_info") {
        Ok(g) => Value::Object(attrs_json(&g)?),
        Err(_) => json!({}),
    };
    let ds = |name: &str| -> Result<Value> {
        match root.dataset(name) {
            Ok(d) => dataset_json(&d),
            Err(_) => Ok(Value::Null),
        }
    };
    let trial_meta = match root.group("trial_meta") {
        Ok(g) => {
            let mut m = Map::new();
            for d in g.datasets()? {
                let name = d.path().rsplit('/').next().unwrap_or("").to_string();
                m.insert(name, dataset_json(&d)?);
            }
            Value::Object(m)
        }
        Err(_) => Value::Null,
    };
    Ok(json!({
        "lazy_shape": lazy,
        "neuro_shape": shape,
        "neuro_dtype": dtype,
        "neuro_sha": sha,
        "data_mode": mode,
        "neuro_info": neuro_info,
        "stim_labels": labels,
        "vision_info": vision_info,
        "trial_info": trial_info,
        "trial": ds("trial")?,
        "trial_starts": ds("trial_starts")?,
        "trial_meta": trial_meta,
    }))
}
