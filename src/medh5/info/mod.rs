//! `medh5 info` and `medh5 tree` (`docs/medh5-format.md` §10, Appendix A):
//! a sample summary and its object tree, as JSON shaped like the reference
//! CLI's `--json` output, plus a plain-text rendering.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::canonical_json::Json;
use super::integrity::dtype_descr;
use super::sample::SampleFile;
use crate::error::{Error, Result};
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::selection::Selection;

mod clinical;
mod text;
mod transform;
mod tree;

pub use text::info_text;
pub use tree::{tree, tree_file, Node, Tree};

/// Cap on tree depth (cycle and abuse guard beyond address tracking).
const MAX_DEPTH: usize = 64;
/// Cap on the bytes read to count a mask's true voxels.
pub use crate::canonical_json::to_value;

const MAX_MASK_BYTES: u64 = 1 << 30;

/// Attributes of one object, looked up by name.
struct Attrs(Vec<(String, Json)>);

impl Attrs {
    fn get(&self, name: &str) -> Value {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map_or(Value::Null, |(_, v)| to_value(v))
    }
    fn or(&self, name: &str, default: Value) -> Value {
        match self.get(name) {
            Value::Null => default,
            v => v,
        }
    }
}

fn len_of(v: &Value) -> usize {
    v.as_array().map_or(0, Vec::len)
}

/// The `info --json` object of the sample at `path` (`display` is printed).
pub fn info(path: &Path, display: &str) -> Result<Value> {
    info_file(&crate::self_contained::open(path, display)?, display)
}

/// [`info`] of an open sample (a collection member, say). A sample with a
/// semantic error the reference's loader stops at is refused with that
/// error, as the reference does.
pub fn info_file(file: &File, display: &str) -> Result<Value> {
    super::validate::loader::refusal(file, display, super::validate::loader::Loader::Info)?;
    let s = SampleFile::from_file(file.clone());
    let root = Attrs(s.root_attrs()?);
    let meta_bytes = s.meta_bytes()?;
    let meta: Value = serde_json::from_slice(&meta_bytes).map_err(|e| Error::Code {
        code: "E004".into(),
        message: format!("meta is not JSON: {e}"),
    })?;
    let mut out = Map::new();
    out.insert("path".into(), json!(display));
    out.insert("version".into(), root.get("medh5_version"));
    out.insert("kind".into(), root.or("medh5_kind", json!("sample")));
    out.insert("profiles".into(), root.or("medh5_profiles", json!([])));
    out.insert("content_id".into(), root.get("content_id"));
    let identity = &meta["identity"];
    out.insert("sample_id".into(), identity["sample_id"].clone());
    out.insert("subject_id".into(), identity["subject_id"].clone());
    let tps: Vec<Value> = meta["timepoints"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| {
                    json!({"id": t["id"], "index": t["index"], "label": t["label"],
                           "days_from_baseline": t["days_from_baseline"]})
                })
                .collect()
        })
        .unwrap_or_default();
    out.insert("timepoints".into(), Value::Array(tps));
    let ls = &meta["label_set"];
    let label_set = if ls.is_object() {
        json!({"id": ls["id"], "version": ls["version"], "classes": len_of(&ls["classes"]), "form": ls["form"]})
    } else {
        Value::Null
    };
    out.insert("label_set".into(), label_set);
    let prov = &meta["provenance"];
    out.insert("agents".into(), json!(len_of(&prov["agents"])));
    out.insert("activities".into(), json!(len_of(&prov["activities"])));
    // quality records: a list, a `records` list, or an object keyed by
    // what each record judges (the reference's writer).
    let qn = match &meta["quality"] {
        Value::Array(a) => a.len(),
        Value::Object(m) => match m.get("records") {
            Some(Value::Array(r)) => r.len(),
            _ => m.len(),
        },
        _ => 0,
    };
    out.insert("quality_records".into(), json!(qn));
    out.insert(
        "deidentified".into(),
        json!(meta["deidentification"].is_object()),
    );

    // A grid without a `timepoint` attribute belongs to the only timepoint
    // (to none when there are several).
    let default_tp = match meta["timepoints"].as_array() {
        Some(t) if t.len() == 1 => t[0]["id"].clone(),
        _ => Value::Null,
    };
    let mut grid_tp = std::collections::HashMap::new();
    // (frame_uid, timepoint) of every grid, in listing order
    let mut frame_tp: Vec<(Value, Value)> = Vec::new();
    let mut grid_frame = std::collections::HashMap::new();
    let mut grids = Vec::new();
    for id in s.group_members("grids")? {
        let a = Attrs(s.object_attrs(&format!("grids/{id}"))?);
        let tp = a.or("timepoint", default_tp.clone());
        grid_tp.insert(id.clone(), tp.clone());
        frame_tp.push((a.get("frame_uid"), tp.clone()));
        grid_frame.insert(id.clone(), a.get("frame_uid"));
        grids.push(grid_json(&id, &a, tp));
    }
    out.insert("grids".into(), Value::Array(grids));
    let mut images = Vec::new();
    for id in s.members("images")? {
        let a = Attrs(s.object_attrs(&format!("images/{id}"))?);
        let ds = s.image(&id)?;
        let tp = a
            .get("grid")
            .as_str()
            .and_then(|g| grid_tp.get(g).cloned())
            .unwrap_or(Value::Null);
        images.push(image_json(&id, &a, &ds, tp));
    }
    out.insert("images".into(), Value::Array(images));
    let mut anns = Vec::new();
    for id in s.group_members("annotations")? {
        let a = Attrs(s.object_attrs(&format!("annotations/{id}"))?);
        let tps = match a.get("timepoints") {
            Value::Null => {
                let tp = a
                    .get("grid")
                    .as_str()
                    .and_then(|g| grid_tp.get(g).cloned())
                    .unwrap_or(Value::Null);
                if tp.is_null() {
                    json!([])
                } else {
                    json!([tp])
                }
            }
            v => v,
        };
        let frame = a
            .get("grid")
            .as_str()
            .and_then(|g| grid_frame.get(g).cloned())
            .unwrap_or(Value::Null);
        anns.push(annotation_json(&s.file, &id, &a, tps, frame, &meta)?);
    }
    out.insert("annotations".into(), Value::Array(anns));
    let mut transforms = Vec::new();
    for id in s.group_members("transforms")? {
        let a = Attrs(s.object_attrs(&format!("transforms/{id}"))?);
        transforms.push(transform::transform_json(file, &id, &a, &frame_tp));
    }
    out.insert("transforms".into(), Value::Array(transforms));
    out.insert("index".into(), json!(s.members("index")?));
    let clinical_profile = out["profiles"]
        .as_array()
        .is_some_and(|p| p.iter().any(|x| x == "clinical"));
    if let (true, Ok(Object::Group(_))) = (clinical_profile, file.object("clinical")) {
        out.insert("clinical".into(), clinical::clinical_json(file));
    }
    Ok(Value::Object(out))
}

fn grid_json(id: &str, a: &Attrs, timepoint: Value) -> Value {
    let shape = a.get("shape");
    let spacing = a.get("spacing");
    let kinds = a.get("axis_kinds");
    let dims: Vec<f64> = shape
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    let spatial: Vec<f64> = match kinds.as_array() {
        Some(k) => dims
            .iter()
            .zip(k)
            .filter(|(_, kind)| kind.as_str() == Some("spatial"))
            .map(|(d, _)| *d)
            .collect(),
        None => dims,
    };
    let physical: Vec<f64> = spatial
        .iter()
        .zip(spacing.as_array().map(Vec::as_slice).unwrap_or(&[]))
        .filter_map(|(d, s)| s.as_f64().map(|s| d * s))
        .collect();
    json!({"id": id, "shape": shape, "axis_names": a.get("axis_names"), "axis_kinds": kinds,
           "spacing": spacing, "origin": a.get("origin"), "direction": a.get("direction"),
           "coord_system": a.get("coord_system"), "units": a.get("units"),
           "timepoint": timepoint, "frame_uid": a.get("frame_uid"),
           "physical_size": physical})
}

fn image_json(id: &str, a: &Attrs, ds: &Dataset, timepoint: Value) -> Value {
    let nbytes = ds.num_elements().saturating_mul(ds.dtype().size());
    json!({"id": id, "grid": a.get("grid"), "timepoint": timepoint, "modality": a.get("modality"),
           "value_type": a.get("value_type"), "value_units": a.get("value_units"),
           "shape": ds.shape(), "dtype": dtype_descr(ds.dtype()),
           "chunks": ds.chunk_dims(), "levels": a.or("levels", json!(1)),
           "rescale": [a.or("rescale_slope", json!(1.0)), a.or("rescale_intercept", json!(0.0))],
           "nbytes": nbytes})
}

/// One `annotations` entry; `grid_frame` is the frame of its grid (what a
/// geometric annotation without a `frame_uid` of its own is in).
fn annotation_json(
    file: &File,
    id: &str,
    a: &Attrs,
    timepoints: Value,
    grid_frame: Value,
    meta: &Value,
) -> Result<Value> {
    let kind = a.get("kind");
    let class_ids = a.get("class_ids");
    let annotated = a.get("annotated_class_ids");
    let fully = {
        let mut c: Vec<i64> = class_ids
            .as_array()
            .map(|v| v.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default();
        let mut d: Vec<i64> = annotated
            .as_array()
            .map(|v| v.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default();
        c.sort_unstable();
        d.sort_unstable();
        c == d
    };
    let base = format!("annotations/{id}");
    let data = |name: &str| match file.object(&format!("{base}/{name}")) {
        Ok(Object::Dataset(ds)) => Some(ds),
        _ => None,
    };
    let first_dim = |name: &str| data(name).and_then(|d| d.shape().first().copied());
    let mut m = Map::new();
    m.insert("id".into(), json!(id));
    m.insert("kind".into(), kind.clone());
    m.insert("task".into(), a.get("task"));
    m.insert("grid".into(), a.get("grid"));
    // geometric kinds (§8): their space and frame, and how many objects
    let objects = match kind.as_str() {
        Some("boxes") => Some("boxes"),
        Some("obb") => Some("centers"),
        Some("keypoints" | "points") => Some("points"),
        Some("contours") => Some("contour_class_ids"),
        Some("polylines") => Some("polyline_class_ids"),
        Some("mesh") => Some("faces"),
        _ => None,
    };
    if let Some(name) = objects {
        m.insert("space".into(), a.or("space", json!("index")));
        m.insert("frame_uid".into(), a.or("frame_uid", grid_frame));
        m.insert("timepoints".into(), timepoints);
        m.insert("objects".into(), json!(first_dim(name).unwrap_or(0)));
        coverage_and_record(&mut m, a, &class_ids, &annotated, fully);
        return Ok(Value::Object(m));
    }
    if kind.as_str() == Some("classification") {
        // the class keys of the label set with each row's value (a later row
        // of a class replaces an earlier one), and how many rows
        let ids = data("class_ids").and_then(|d| d.read::<i64>().ok());
        let values = data("values").and_then(|d| d.read::<f64>().ok());
        let key_of = |cid: i64| {
            meta["label_set"]["classes"]
                .as_array()
                .and_then(|c| c.iter().find(|k| k["id"].as_i64() == Some(cid)))
                .and_then(|k| k["key"].as_str().map(str::to_string))
                .unwrap_or_else(|| cid.to_string())
        };
        let mut labels = Map::new();
        for (cid, v) in ids.iter().flatten().zip(values.iter().flatten()) {
            labels.insert(key_of(*cid), json!(v));
        }
        let n_tp = len_of(&timepoints);
        m.insert("scope".into(), a.get("scope"));
        m.insert("multilabel".into(), a.or("multilabel", json!(false)));
        m.insert("timepoints".into(), timepoints);
        m.insert("change_label".into(), json!(n_tp >= 2));
        m.insert("labels".into(), Value::Object(labels));
        m.insert("assertions".into(), json!(ids.as_ref().map_or(0, Vec::len)));
        coverage_and_record(&mut m, a, &class_ids, &annotated, fully);
        return Ok(Value::Object(m));
    }
    m.insert("timepoints".into(), timepoints);
    m.insert("classes".into(), json!(len_of(&class_ids)));
    m.insert("annotated_classes".into(), json!(len_of(&annotated)));
    m.insert("fully_covered".into(), json!(fully));
    m.insert("closure".into(), a.get("closure"));
    m.insert("quality".into(), a.get("quality"));
    m.insert("prov".into(), a.get("prov"));
    match kind.as_str() {
        Some("bitmask") => {
            m.insert("planes".into(), json!(first_dim("data")));
        }
        Some("layers") => {
            m.insert("layers".into(), json!(first_dim("data")));
        }
        Some("mask") => {
            let n = match data("data") {
                Some(ds) => count_true(&ds)?,
                None => 0,
            };
            m.insert("true_voxels".into(), json!(n));
        }
        Some("instances") => {
            let ids = match data("instance_ids") {
                Some(ds) => int_values(&ds)?,
                None => Vec::new(),
            };
            m.insert("objects".into(), json!(ids.len()));
            m.insert("has_masks".into(), json!(data("mask_data").is_some()));
            m.insert("instance_ids".into(), json!(ids));
        }
        Some("probmap") => {
            m.insert("normalized".into(), a.or("normalized", json!(false)));
            m.insert("threshold".into(), a.or("threshold", json!(0.5)));
        }
        _ => {}
    }
    Ok(Value::Object(m))
}

/// The closing fields of a geometric or classification entry: class counts,
/// full coverage, quality record and provenance.
fn coverage_and_record(
    m: &mut Map<String, Value>,
    a: &Attrs,
    class_ids: &Value,
    annotated: &Value,
    fully: bool,
) {
    m.insert("classes".into(), json!(len_of(class_ids)));
    m.insert("annotated_classes".into(), json!(len_of(annotated)));
    m.insert("fully_covered".into(), json!(fully));
    m.insert("quality".into(), a.get("quality"));
    m.insert("prov".into(), a.get("prov"));
}

fn read_all(ds: &Dataset) -> Result<Vec<u8>> {
    let n = ds.num_elements().saturating_mul(ds.dtype().size());
    if n > MAX_MASK_BYTES {
        return Err(Error::invalid(format!("{}: too large", ds.path())));
    }
    let mut buf = vec![0u8; usize::try_from(n).unwrap_or(0)];
    ds.read_raw(&Selection::All, &mut buf)?;
    Ok(buf)
}

fn count_true(ds: &Dataset) -> Result<u64> {
    let size = usize::try_from(ds.dtype().size()).unwrap_or(1).max(1);
    let buf = read_all(ds)?;
    Ok(buf
        .chunks_exact(size)
        .filter(|el| el.iter().any(|&b| b != 0))
        .count() as u64)
}

fn int_values(ds: &Dataset) -> Result<Vec<Value>> {
    let dt = ds.dtype();
    let size = usize::try_from(dt.size()).unwrap_or(1).max(1);
    let buf = read_all(ds)?;
    Ok(buf
        .chunks_exact(size)
        .map(|el| super::sample::scalar_json(dt, el).map_or(Value::Null, |j| to_value(&j)))
        .collect())
}
