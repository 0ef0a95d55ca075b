//! `medh5 create --from MANIFEST.json` and `medh5 demo`: build a [`Sample`] from a
//! JSON manifest that mirrors the reference's Python writer (npy paths relative to
//! the manifest), or from a built-in synthetic CT with organ labels, then write it
//! atomically through the HDF5 writer.

use std::path::Path;

use serde_json::Value;

use super::canonical_json::Json;
use super::document::{LabelSet, SampleDocument};
use super::model::{encode, Annotation, ArrayData, Encoding, Grid, Image, NumDtype, Sample};
use super::plan::{WriteOptions, WritePlan};
use super::profiles::Profile;
use crate::error::{Error, Result};
pub use crate::helpers::now_utc;

fn bad(msg: impl std::fmt::Display) -> Error {
    Error::invalid(format!("manifest: {msg}"))
}

/// The NumPy dtype strings a manifest's `.npy` files may use.
pub fn num_dtype(descr: &str) -> Option<NumDtype> {
    Some(match descr {
        "|b1" => NumDtype::Bool,
        "|i1" => NumDtype::I8,
        "|u1" => NumDtype::U8,
        "<i2" => NumDtype::I16,
        "<u2" => NumDtype::U16,
        "<i4" => NumDtype::I32,
        "<u4" => NumDtype::U32,
        "<i8" => NumDtype::I64,
        "<u8" => NumDtype::U64,
        "<f2" => NumDtype::F16,
        "<f4" => NumDtype::F32,
        "<f8" => NumDtype::F64,
        _ => return None,
    })
}

/// Load a little-endian C-order `.npy` file as [`ArrayData`].
pub fn load_npy(path: &Path) -> Result<ArrayData> {
    let (h, data) = crate::npy::read_file(path).map_err(|e| match e {
        purehdf::Error::Io { source, .. } => Error::io(path.display(), source),
        e => Error::from(e),
    })?;
    let dt = num_dtype(&h.descr)
        .ok_or_else(|| bad(format!("{}: unsupported dtype {}", path.display(), h.descr)))?;
    ArrayData::from_bytes(dt, h.shape, data)
}

fn f64s(v: &Value, what: &str) -> Result<Vec<f64>> {
    v.as_array()
        .ok_or_else(|| bad(format!("{what} must be a list")))?
        .iter()
        .map(|x| {
            x.as_f64()
                .ok_or_else(|| bad(format!("{what}: not a number")))
        })
        .collect()
}

fn u64s(v: &Value, what: &str) -> Result<Vec<u64>> {
    v.as_array()
        .ok_or_else(|| bad(format!("{what} must be a list")))?
        .iter()
        .map(|x| {
            x.as_u64()
                .ok_or_else(|| bad(format!("{what}: not a non-negative integer")))
        })
        .collect()
}

fn i64s(v: &Value, what: &str) -> Result<Vec<i64>> {
    v.as_array()
        .ok_or_else(|| bad(format!("{what} must be a list")))?
        .iter()
        .map(|x| {
            x.as_i64()
                .ok_or_else(|| bad(format!("{what}: not an integer")))
        })
        .collect()
}

fn string(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn obj<'v>(v: &'v Value, key: &str) -> Result<Vec<(&'v String, &'v Value)>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => Ok(m.iter().collect()),
        Some(_) => Err(bad(format!("{key} must be an object"))),
    }
}

fn parse_grid(id: &str, g: &Value) -> Result<Grid> {
    let shape = u64s(
        g.get("shape")
            .ok_or_else(|| bad(format!("grid {id}: no shape")))?,
        "shape",
    )?;
    let spacing = match g.get("spacing") {
        Some(s) => f64s(s, "spacing")?,
        None => vec![1.0; shape.len()],
    };
    let mut grid = Grid::new(id, &shape, &spacing);
    if let Some(o) = g.get("origin") {
        grid.origin = f64s(o, "origin")?;
    }
    if let Some(d) = g.get("direction") {
        let flat: Vec<f64> = match d.as_array() {
            Some(rows) if rows.iter().all(Value::is_array) => {
                let mut out = Vec::new();
                for r in rows {
                    out.extend(f64s(r, "direction")?);
                }
                out
            }
            _ => f64s(d, "direction")?,
        };
        grid.direction = flat;
    }
    if let Some(n) = g.get("axis_names").and_then(Value::as_array) {
        grid.axis_names = n
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
    }
    if let Some(s) = string(g, "coord_system") {
        grid.coord_system = s;
    }
    if let Some(s) = string(g, "units") {
        grid.units = s;
    }
    grid.timepoint = string(g, "timepoint");
    grid.frame_uid = string(g, "frame_uid");
    if let Some(h) = g.get("chunk_hint") {
        grid.chunk_hint = Some(i64s(h, "chunk_hint")?);
    }
    if let Some(h) = g.get("patch_hint") {
        grid.patch_hint = Some(i64s(h, "patch_hint")?);
    }
    Ok(grid)
}

/// Build a sample from a manifest (see the README); `.npy` paths are relative to `base`.
pub fn sample_from_manifest(m: &Value, base: &Path) -> Result<(Sample, Profile)> {
    sample_from_manifest_with(m, &mut |p| load_npy(&base.join(p)))
}

/// [`sample_from_manifest`] with the arrays the manifest names (its `npy`,
/// `masks` and `probabilities` strings) supplied by `load` — the Python
/// writer hands over its in-memory arrays this way. A manifest `document`
/// (a whole sample document, as `/meta` holds it) replaces `sample_id`,
/// `subject_id` and `label_sets`; `profiles` lists declared profiles.
pub fn sample_from_manifest_with(
    m: &Value,
    load: &mut dyn FnMut(&str) -> Result<ArrayData>,
) -> Result<(Sample, Profile)> {
    let profile = Profile::from_name(m.get("profile").and_then(Value::as_str))?;
    let mut s = match m.get("document") {
        Some(doc) => {
            let document = SampleDocument::from_json(&Json::from_serde(doc))?;
            Sample {
                document,
                ..Sample::default()
            }
        }
        None => {
            let sid = string(m, "sample_id").ok_or_else(|| bad("no sample_id"))?;
            let subj = string(m, "subject_id").ok_or_else(|| bad("no subject_id"))?;
            Sample::new(&sid, &subj)
        }
    };
    if let Some(p) = m.get("profiles").and_then(Value::as_array) {
        s.declared_profiles = p
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad("profiles: not a string"))
            })
            .collect::<Result<_>>()?;
    }
    for (id, g) in obj(m, "grids")? {
        s.grids.push(parse_grid(id, g)?);
    }
    if let Some(sets) = m.get("label_sets").and_then(Value::as_array) {
        if sets.len() > 1 {
            return Err(bad("one label set per sample"));
        }
        if let Some(ls) = sets.first() {
            let id = string(ls, "id").ok_or_else(|| bad("label set without id"))?;
            let version = string(ls, "version").unwrap_or_else(|| "1.0.0".to_string());
            let keys: Vec<String> = ls
                .get("keys")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("label set without keys"))?
                .iter()
                .map(|k| {
                    k.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| bad("label key not a string"))
                })
                .collect::<Result<_>>()?;
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            s.document.label_set = Some(LabelSet::from_keys(&id, &version, &refs));
        }
    }
    let class_of = |key: &str, s: &Sample| -> Result<u16> {
        s.document
            .label_set
            .as_ref()
            .and_then(|ls| ls.classes().iter().find(|c| c.key == key).map(|c| c.id))
            .ok_or_else(|| bad(format!("label {key:?} is not in the label set")))
    };
    for (id, im) in obj(m, "images")? {
        let grid = string(im, "grid").ok_or_else(|| bad(format!("image {id}: no grid")))?;
        let npy = string(im, "npy").ok_or_else(|| bad(format!("image {id}: no npy")))?;
        let modality = string(im, "modality").unwrap_or_else(|| "OT".to_string());
        let mut image = Image::new(id, &grid, &modality, load(&npy)?);
        if let Some(v) = string(im, "value_type") {
            image.value_type = v;
        }
        image.value_units = string(im, "value_units");
        image.rescale_slope = im.get("rescale_slope").and_then(Value::as_f64);
        image.rescale_intercept = im.get("rescale_intercept").and_then(Value::as_f64);
        if let Some(w) = im.get("window_center") {
            image.window_center = Some(f64s(w, "window_center")?);
        }
        if let Some(w) = im.get("window_width") {
            image.window_width = Some(f64s(w, "window_width")?);
        }
        if let Some(n) = im.get("channel_names").and_then(Value::as_array) {
            image.channel_names = Some(
                n.iter()
                    .map(|x| {
                        x.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| bad("channel_names: not a string"))
                    })
                    .collect::<Result<_>>()?,
            );
        }
        image.valid_mask = string(im, "valid_mask");
        image.prov = string(im, "prov");
        s.images.push(image);
    }
    for (id, a) in obj(m, "annotations")? {
        let grid_id = string(a, "grid").ok_or_else(|| bad(format!("annotation {id}: no grid")))?;
        let spatial = s
            .grid(&grid_id)
            .map(Grid::spatial_shape)
            .ok_or_else(|| bad(format!("annotation {id}: unknown grid {grid_id}")))?;
        let enc = string(a, "encoding").unwrap_or_else(|| "labelmap".to_string());
        let (classes, encoding) = match enc.as_str() {
            "labelmap" if a.get("npy").is_some() => {
                let npy =
                    string(a, "npy").ok_or_else(|| bad(format!("annotation {id}: no npy")))?;
                let mut classes = Vec::new();
                for (value, key) in obj(a, "label_values")? {
                    let key = key
                        .as_str()
                        .ok_or_else(|| bad("label_values: not a string"))?;
                    let cid = class_of(key, &s)?;
                    if value.parse::<u16>().ok() != Some(cid) {
                        return Err(bad(format!(
                            "annotation {id}: voxel value {value} must equal the class id {cid} of {key:?}"
                        )));
                    }
                    classes.push(cid);
                }
                (classes, Encoding::Labelmap { data: load(&npy)? })
            }
            "labelmap" | "layers" | "bitmask" | "mask" => {
                let mut loaded: Vec<(u16, Vec<bool>)> = Vec::new();
                for (key, p) in obj(a, "masks")? {
                    let p = p.as_str().ok_or_else(|| bad("masks: path not a string"))?;
                    let arr = load(p)?;
                    let n = arr.len();
                    let bits = (0..n).map(|i| arr.get_u64(i).unwrap_or(0) != 0).collect();
                    let cid = if enc == "mask" { 0 } else { class_of(key, &s)? };
                    loaded.push((cid, bits));
                }
                let masks: Vec<(u16, &[bool])> =
                    loaded.iter().map(|(c, b)| (*c, b.as_slice())).collect();
                let classes: Vec<u16> = masks.iter().map(|m| m.0).collect();
                let e = match enc.as_str() {
                    "labelmap" => encode::encode_labelmap(&masks, &spatial)?,
                    "layers" => encode::encode_layers(&masks, &spatial)?,
                    "bitmask" => encode::encode_bitmask(&masks, &spatial)?,
                    _ => {
                        let (_, bits) = masks.first().ok_or_else(|| bad("mask needs one mask"))?;
                        encode::encode_mask(bits, &spatial)?
                    }
                };
                (classes, e)
            }
            "probmap" => {
                let mut planes: Vec<(u16, Vec<f32>)> = Vec::new();
                for (key, p) in obj(a, "probabilities")? {
                    let p = p
                        .as_str()
                        .ok_or_else(|| bad("probabilities: path not a string"))?;
                    let arr = load(p)?;
                    let vals: Vec<f32> = match arr.dtype {
                        NumDtype::F32 => arr
                            .bytes
                            .chunks_exact(4)
                            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                            .collect(),
                        NumDtype::F64 => arr
                            .bytes
                            .chunks_exact(8)
                            .map(|c| {
                                f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                                    as f32
                            })
                            .collect(),
                        d => {
                            return Err(bad(format!(
                                "probabilities must be float32/64, got {}",
                                d.descr()
                            )))
                        }
                    };
                    planes.push((class_of(key, &s)?, vals));
                }
                let refs: Vec<(u16, &[f32])> =
                    planes.iter().map(|(c, v)| (*c, v.as_slice())).collect();
                let dtype = match a.get("dtype").and_then(Value::as_str) {
                    Some("float16") => NumDtype::F16,
                    _ => NumDtype::F32,
                };
                let normalized = a
                    .get("normalized")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let threshold = a.get("threshold").and_then(Value::as_f64);
                let classes = refs.iter().map(|r| r.0).collect();
                (
                    classes,
                    encode::encode_probmap(&refs, &spatial, dtype, normalized, threshold)?,
                )
            }
            other => return Err(bad(format!("annotation {id}: unknown encoding {other:?}"))),
        };
        s.annotations
            .push(Annotation::new(id, &grid_id, &classes, encoding));
    }
    Ok((s, profile))
}

/// Plan a sample for writing with `profile`.
pub fn plan(sample: Sample, profile: Profile, l3_bytes: Option<u64>) -> Result<WritePlan> {
    plan_at(sample, profile, l3_bytes, &now_utc())
}

/// [`plan`] with the root `created` time (`YYYY-MM-DDTHH:MM:SSZ`) passed by
/// the caller: no clock is read, as on `wasm32-unknown-unknown`, which has none.
pub fn plan_at(
    sample: Sample,
    profile: Profile,
    l3_bytes: Option<u64>,
    created: &str,
) -> Result<WritePlan> {
    let opts = WriteOptions {
        profile,
        created: created.to_string(),
        l3_bytes,
        ..WriteOptions::default()
    };
    sample.into_plan(opts)
}

/// The demo sample: a 32×64×64 int16 CT-like phantom (body ellipse, liver,
/// spleen and kidney blobs) with a labelmap of the three organs.
pub fn demo_sample() -> Result<Sample> {
    let shape = [32u64, 64, 64];
    let n = (shape[0] * shape[1] * shape[2]) as usize;
    let mut ct = vec![-1000i16; n];
    let mut labels = vec![0u8; n];
    let blobs: [(f64, f64, f64, f64, i16, u8); 3] = [
        (16.0, 30.0, 22.0, 10.0, 60, 1), // liver
        (16.0, 30.0, 44.0, 6.0, 45, 2),  // spleen
        (12.0, 42.0, 32.0, 4.0, 30, 3),  // kidney
    ];
    for z in 0..shape[0] {
        for y in 0..shape[1] {
            for x in 0..shape[2] {
                let i = ((z * shape[1] + y) * shape[2] + x) as usize;
                let (fy, fx) = ((y as f64 - 32.0) / 28.0, (x as f64 - 32.0) / 30.0);
                if fy * fy + fx * fx <= 1.0 {
                    // Soft tissue with a deterministic texture.
                    ct[i] = 20 + ((x * 7 + y * 13 + z * 3) % 17) as i16;
                }
                for &(cz, cy, cx, r, hu, lab) in &blobs {
                    let (dz, dy, dx) = (z as f64 - cz, y as f64 - cy, x as f64 - cx);
                    if (dz * dz) / 4.0 + dy * dy + dx * dx <= r * r {
                        ct[i] = hu + ((x + y + z) % 5) as i16;
                        labels[i] = lab;
                    }
                }
            }
        }
    }
    let mut s = Sample::new("demo", "DEMO-1");
    let mut grid = Grid::new("ct", &shape, &[2.5, 0.75, 0.75]);
    grid.origin = vec![-40.0, -24.0, -24.0];
    s.grids.push(grid);
    s.images.push(Image::new(
        "CT",
        "ct",
        "CT",
        ArrayData::from_slice(&shape, &ct)?,
    ));
    s.document.label_set = Some(LabelSet::from_keys(
        "demo-organs",
        "1.0.0",
        &["liver", "spleen", "kidney"],
    ));
    s.annotations.push(Annotation::new(
        "organs",
        "ct",
        &[1, 2, 3],
        Encoding::Labelmap {
            data: ArrayData::from_slice(&shape, &labels)?,
        },
    ));
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_time_format() {
        let t = now_utc();
        assert_eq!(t.len(), 20);
        assert!(t.starts_with("20") && t.ends_with('Z'));
    }

    #[test]
    fn demo_plans() {
        let p = plan(demo_sample().unwrap(), Profile::Balanced, Some(32 << 20)).unwrap();
        assert!(p.content_id.starts_with("sha256:"), "{}", p.content_id);
        assert!(p.dataset("/images/CT").is_some());
        assert!(p.dataset("/annotations/organs/data").is_some());
    }

    #[test]
    fn manifest_errors_are_typed() {
        let m: Value = serde_json::json!({"sample_id": "x"});
        assert!(sample_from_manifest(&m, Path::new(".")).is_err());
        let m: Value = serde_json::json!({"sample_id": "x", "subject_id": "y", "profile": "nope"});
        assert!(sample_from_manifest(&m, Path::new(".")).is_err());
    }
}
