//! A schema-1 VneuroTK recording written with `FileWriter` (V8): header,
//! dense or COO `neuro`, typed-scalar labels and IDs, `stimuli_db` images and
//! a `pandas_v1` `trial_meta` with numeric, categorical, tz-aware datetime and
//! datetime-categorical columns; and what a schema-1 reader makes of it, in
//! the JSON `tests/interop/vneurotk_schema1.py` prints from h5py + pandas.
//!
//! The seed documents which groups exist, not every byte: the `trial_meta`
//! column encodings follow the h5py schema-1 file of
//! `tests/interop/vneurotk_oracle.py` (`kind` = `numpy` / `categorical`,
//! typed-scalar `categories`, int8 `codes`), and datetimes are our reading of
//! "timezone-aware datetime columns": `kind = "datetime"`, attribute `tz`
//! (empty = naive), int64 `values` in UTC nanoseconds with `NaT` as i64::MIN.

use std::path::Path;

use purehdf::scalar_seq::{self, Scalar};
use purehdf::{AttrValue, ChunkPolicy, DatasetSpec, File, FileWriter, GroupId, Result};
use serde_json::{json, Map, Value};

/// pandas' `NaT` in int64 nanoseconds.
const NAT: i64 = i64::MIN;

/// The `neuro` values, shape (2, 30, 4): mostly zero so COO is natural.
fn neuro() -> Vec<f32> {
    (0..240)
        .map(|i| {
            if i % 7 == 0 {
                i as f32 * 0.25 - 3.0
            } else {
                0.0
            }
        })
        .collect()
}

const SHAPE: [u64; 3] = [2, 30, 4];

/// Write a schema-1 recording at `path`, `neuro` dense or as COO.
pub(crate) fn write_v1(path: &Path, coo: bool) -> Result<()> {
    let mut w = FileWriter::create(path)?;
    let r = w.root();
    w.set_attr(r, "vneurotk_format", AttrValue::string("recording"))?;
    w.set_attr(r, "vneurotk_schema_version", AttrValue::scalar(1i64))?;
    w.set_attr(r, "writer_version", AttrValue::string("purehdf"))?;
    w.set_attr(r, "data_mode", AttrValue::string("epochs"))?;
    let data = neuro();
    if coo {
        w.set_attr(r, "neuro_format", AttrValue::string("coo"))?;
        // rows index the first two axes flattened, columns the last
        let nz: Vec<(i64, i64, f32)> = data
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != 0.0)
            .map(|(i, v)| ((i / 4) as i64, (i % 4) as i64, *v))
            .collect();
        let n = nz.len() as u64;
        let rows: Vec<i64> = nz.iter().map(|t| t.0).collect();
        let cols: Vec<i64> = nz.iter().map(|t| t.1).collect();
        let vals: Vec<f32> = nz.iter().map(|t| t.2).collect();
        w.write_dataset(r, "neuro_row", DatasetSpec::of::<i64>(&[n]), &rows)?;
        w.write_dataset(r, "neuro_col", DatasetSpec::of::<i64>(&[n]), &cols)?;
        w.write_dataset(r, "neuro_data", DatasetSpec::of::<f32>(&[n]), &vals)?;
        w.set_attr(r, "neuro_shape", AttrValue::array(&SHAPE.map(|v| v as i64)))?;
        w.set_attr(r, "neuro_dtype", AttrValue::string("float32"))?;
    } else {
        w.set_attr(r, "neuro_format", AttrValue::string("dense"))?;
        let spec = DatasetSpec::of::<f32>(&SHAPE).with_chunk_policy(&ChunkPolicy::default())?;
        w.write_dataset(r, "neuro", spec, &data)?;
    }
    let ni = w.create_group(r, "neuro_info")?;
    w.set_attr(ni, "shape", AttrValue::array(&SHAPE.map(|v| v as i64)))?;
    w.set_attr(ni, "sfreq", AttrValue::scalar(1000.0f64))?;
    for (name, v) in [
        ("trial", [0i64, 1]),
        ("trial_starts", [0, 30]),
        ("trial_ends", [30, 60]),
        ("vision_onsets", [5, 35]),
    ] {
        w.write_dataset(r, name, DatasetSpec::of::<i64>(&[2]), &v)?;
    }
    let ids = [Scalar::Int(7), Scalar::Str("7".into())];
    w.set_attr(
        r,
        "stim_labels_encoding",
        AttrValue::string("typed_scalars"),
    )?;
    w.set_attr(r, "stim_labels_shape", AttrValue::array(&[2i64]))?;
    scalar_seq::write(&mut w, r, "stim_labels", &ids)?;
    let vi = w.create_group(r, "vision_info")?;
    w.set_attr(vi, "n_stim", AttrValue::scalar(2i64))?;
    scalar_seq::write(&mut w, vi, "stim_ids", &ids)?;
    w.set_attr(r, "has_images", AttrValue::scalar(true))?;
    let db = w.create_group(r, "stimuli_db")?;
    w.set_attr(db, "encoding", AttrValue::string("ordered_entries_v1"))?;
    for (i, id) in ids.iter().enumerate() {
        let e = w.create_group(db, &i.to_string())?;
        scalar_seq::write(&mut w, e, "id", std::slice::from_ref(id))?;
        let img: Vec<u8> = (0..48).map(|k| (k * 5 + i * 100) as u8).collect();
        let d = w.write_dataset(e, "image", DatasetSpec::of::<u8>(&[4, 4, 3]), &img)?;
        w.set_attr(d, "kind", AttrValue::string("array"))?;
    }
    write_trial_meta(&mut w, r)?;
    w.commit()
}

fn write_trial_meta(w: &mut FileWriter, r: GroupId) -> Result<()> {
    let tm = w.create_group(r, "trial_meta")?;
    w.set_attr(tm, "encoding", AttrValue::string("pandas_v1"))?;
    let names = ["rt", "cond", "when", "session"].map(|s| Scalar::Str(s.into()));
    scalar_seq::write(w, tm, "column_index", &names)?;
    scalar_seq::write(
        w,
        tm,
        "index",
        &[Scalar::Int(0), Scalar::Int(1), Scalar::Int(2)],
    )?;
    let cols = w.create_group(tm, "columns")?;
    let c0 = w.create_group(cols, "0")?;
    w.set_attr(c0, "kind", AttrValue::string("numpy"))?;
    w.write_dataset(
        c0,
        "values",
        DatasetSpec::of::<f64>(&[3]),
        &[0.5f64, 0.75, 0.125],
    )?;
    // a categorical of strings with a missing value (code -1)
    let c1 = w.create_group(cols, "1")?;
    w.set_attr(c1, "kind", AttrValue::string("categorical"))?;
    w.set_attr(c1, "ordered", AttrValue::scalar(false))?;
    let cats = [Scalar::Str("a".into()), Scalar::Str("b".into())];
    scalar_seq::write(w, c1, "categories", &cats)?;
    w.write_dataset(c1, "codes", DatasetSpec::of::<i8>(&[3]), &[1i8, -1, 0])?;
    // a tz-aware datetime column with a NaT: 2024-03-31 00:30 and 01:30 UTC
    // (either side of the Paris DST switch)
    let c2 = w.create_group(cols, "2")?;
    datetime(
        w,
        c2,
        "Europe/Paris",
        &[1_711_845_000_000_000_000, NAT, 1_711_848_600_000_000_000],
    )?;
    // an ordered categorical whose categories are tz-aware datetimes
    let c3 = w.create_group(cols, "3")?;
    w.set_attr(c3, "kind", AttrValue::string("categorical"))?;
    w.set_attr(c3, "ordered", AttrValue::scalar(true))?;
    let cg = w.create_group(c3, "categories")?;
    datetime(
        w,
        cg,
        "UTC",
        &[1_700_000_000_000_000_000, 1_710_000_000_000_000_000],
    )?;
    w.write_dataset(c3, "codes", DatasetSpec::of::<i8>(&[3]), &[0i8, 1, 1])?;
    Ok(())
}

fn datetime(w: &mut FileWriter, g: GroupId, tz: &str, ns: &[i64]) -> Result<()> {
    w.set_attr(g, "kind", AttrValue::string("datetime"))?;
    w.set_attr(g, "tz", AttrValue::string(tz))?;
    w.set_attr(g, "unit", AttrValue::string("ns"))?;
    w.write_dataset(g, "values", DatasetSpec::of::<i64>(&[ns.len() as u64]), ns)?;
    Ok(())
}

fn scalar_json(s: &Scalar) -> Value {
    match s {
        Scalar::Bool(b) => json!(b),
        Scalar::Int(i) => json!(i64::try_from(*i).ok()),
        Scalar::Float(f) => json!(f),
        Scalar::Str(t) => json!(t),
        _ => Value::Null,
    }
}

fn seq(g: &purehdf::Group, name: &str) -> Result<Value> {
    let v = scalar_seq::read(&g.group(name)?)?;
    Ok(Value::Array(v.iter().map(scalar_json).collect()))
}

fn text(g: &purehdf::Group, name: &str) -> Result<String> {
    g.attribute(name)?.read_scalar::<String>()
}

fn sha_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A datetime column: pandas' dtype name and the UTC nanoseconds (null = NaT).
fn datetime_json(g: &purehdf::Group) -> Result<Value> {
    let tz = text(g, "tz")?;
    let ns = g.dataset("values")?.read::<i64>()?;
    let dtype = if tz.is_empty() {
        "datetime64[ns]".to_string()
    } else {
        format!("datetime64[ns, {tz}]")
    };
    let ns: Vec<Value> = ns
        .into_iter()
        .map(|v| if v == NAT { Value::Null } else { json!(v) })
        .collect();
    Ok(json!({"dtype": dtype, "ns": ns}))
}

fn column_json(c: &purehdf::Group) -> Result<Value> {
    Ok(match text(c, "kind")?.as_str() {
        "numpy" => {
            let d = c.dataset("values")?;
            json!({"dtype": d.dtype().to_string(), "values": d.read::<f64>()?})
        }
        "datetime" => datetime_json(c)?,
        "categorical" => {
            let cg = c.group("categories")?;
            let cats = if cg.attribute("encoding").is_ok() {
                seq(c, "categories")?
            } else {
                datetime_json(&cg)?
            };
            let ordered = c.attribute("ordered")?.read_scalar::<i64>()? != 0;
            json!({"dtype": "category", "ordered": ordered, "categories": cats,
                   "codes": c.dataset("codes")?.read::<i64>()?})
        }
        other => json!({"unknown kind": other}),
    })
}

/// What a schema-1 reader makes of the recording: the same JSON as the
/// Python script's `read`.
pub(crate) fn read_v1(path: &Path) -> Result<Value> {
    let f = File::open(path)?;
    let root = f.root()?;
    let mut out = Map::new();
    for a in [
        "vneurotk_format",
        "writer_version",
        "data_mode",
        "neuro_format",
    ] {
        out.insert(a.into(), json!(text(&root, a)?));
    }
    out.insert(
        "schema".into(),
        json!(root
            .attribute("vneurotk_schema_version")?
            .read_scalar::<i64>()?),
    );
    let shape = root
        .group("neuro_info")?
        .attribute("shape")?
        .read::<u64>()?;
    let dense: Vec<f32> = if text(&root, "neuro_format")? == "coo" {
        let nshape = root.attribute("neuro_shape")?.read::<u64>()?;
        assert_eq!(nshape, shape, "neuro_shape equals neuro_info/shape");
        let rows = root.dataset("neuro_row")?.read::<u64>()?;
        let cols = root.dataset("neuro_col")?.read::<u64>()?;
        let vals = root.dataset("neuro_data")?.read::<f32>()?;
        let mut d = vec![0f32; shape.iter().product::<u64>() as usize];
        for ((r, c), v) in rows.iter().zip(&cols).zip(&vals) {
            d[(r * shape[2] + c) as usize] += v;
        }
        d
    } else {
        let n = root.dataset("neuro")?;
        assert_eq!(
            n.shape(),
            &shape[..],
            "neuro_info/shape equals the dataset's"
        );
        n.read::<f32>()?
    };
    let bytes: Vec<u8> = dense.iter().flat_map(|v| v.to_le_bytes()).collect();
    out.insert(
        "neuro".into(),
        json!({"shape": shape, "dtype": "float32", "sha256": sha_hex(&bytes)}),
    );
    for t in ["trial", "trial_starts", "trial_ends", "vision_onsets"] {
        out.insert(t.into(), json!(root.dataset(t)?.read::<i64>()?));
    }
    out.insert("stim_labels".into(), seq(&root, "stim_labels")?);
    out.insert(
        "stim_ids".into(),
        seq(&root.group("vision_info")?, "stim_ids")?,
    );
    let db = root.group("stimuli_db")?;
    let mut images = Vec::new();
    for i in 0.. {
        let Ok(e) = db.group(&i.to_string()) else {
            break;
        };
        let img = e.dataset("image")?;
        images.push(json!({"id": seq(&e, "id")?[0], "shape": img.shape(),
                           "kind": img.attribute("kind")?.read_scalar::<String>()?,
                           "sha256": sha_hex(&img.read_all_raw()?)}));
    }
    out.insert("images".into(), json!(images));
    let tm = root.group("trial_meta")?;
    let names = seq(&tm, "column_index")?;
    let cols = tm.group("columns")?;
    let mut columns = Map::new();
    for (i, n) in names.as_array().into_iter().flatten().enumerate() {
        let c = cols.group(&i.to_string())?;
        columns.insert(n.as_str().unwrap_or_default().into(), column_json(&c)?);
    }
    out.insert(
        "trial_meta".into(),
        json!({"columns": names, "index": seq(&tm, "index")?, "data": columns}),
    );
    Ok(Value::Object(out))
}
