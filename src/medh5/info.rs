//! `medh5 info` and `medh5 tree` (`shared/spec/medh5.md` §10, Appendix A):
//! a sample summary and its object tree, as JSON shaped like the reference
//! CLI's `--json` output, plus a plain-text rendering.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::canonical_json::Json;
use super::integrity::dtype_descr;
use super::profiles::describe_pipeline;
use super::sample::SampleFile;
use crate::hdf5fmt::dataset::Dataset;
use crate::hdf5fmt::datatype::Datatype;
use crate::hdf5fmt::file::{File, Object};
use crate::hdf5fmt::messages::link::Link;
use crate::hdf5fmt::selection::Selection;
use crate::medh5::error::{Error, Result};

/// Cap on tree depth (cycle and abuse guard beyond address tracking).
const MAX_DEPTH: usize = 64;
/// Cap on the bytes read to count a mask's true voxels.
const MAX_MASK_BYTES: u64 = 1 << 30;

/// A [`Json`] value as a `serde_json` value (non-finite floats become null).
pub fn to_value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Int(i) => json!(i),
        Json::UInt(u) => json!(u),
        Json::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Json::Str(s) => Value::String(s.clone()),
        Json::Array(a) => Value::Array(a.iter().map(to_value).collect()),
        Json::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), to_value(v))).collect()),
    }
}

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
    info_file(&File::open(path)?, display)
}

/// [`info`] of an open sample (a collection member, say).
pub fn info_file(file: &File, display: &str) -> Result<Value> {
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
    out.insert("kind".into(), root.get("medh5_kind"));
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
    let q = &meta["quality"];
    let qn = if q.is_array() {
        len_of(q)
    } else {
        len_of(&q["records"])
    };
    out.insert("quality_records".into(), json!(qn));
    out.insert(
        "deidentified".into(),
        json!(meta["deidentification"].is_object()),
    );

    // A grid without a `timepoint` attribute belongs to the first timepoint.
    let default_tp = meta["timepoints"][0]["id"].clone();
    let mut grid_tp = std::collections::HashMap::new();
    let mut grids = Vec::new();
    for id in s.members("grids")? {
        let a = Attrs(s.object_attrs(&format!("grids/{id}"))?);
        let tp = a.or("timepoint", default_tp.clone());
        grid_tp.insert(id.clone(), tp.clone());
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
    for id in s.members("annotations")? {
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
        anns.push(annotation_json(&s.file, &id, &a, tps)?);
    }
    out.insert("annotations".into(), Value::Array(anns));
    let mut transforms = Vec::new();
    for id in s.members("transforms")? {
        let a = Attrs(s.object_attrs(&format!("transforms/{id}"))?);
        transforms.push(
            json!({"id": id, "kind": a.get("kind"), "from_frame": a.get("from_frame"),
                                "to_frame": a.get("to_frame")}),
        );
    }
    out.insert("transforms".into(), Value::Array(transforms));
    out.insert("index".into(), json!(s.members("index")?));
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

fn annotation_json(file: &File, id: &str, a: &Attrs, timepoints: Value) -> Result<Value> {
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
    let mut m = Map::new();
    m.insert("id".into(), json!(id));
    m.insert("kind".into(), kind.clone());
    m.insert("task".into(), a.get("task"));
    m.insert("grid".into(), a.get("grid"));
    m.insert("timepoints".into(), timepoints);
    m.insert("classes".into(), json!(len_of(&class_ids)));
    m.insert("annotated_classes".into(), json!(len_of(&annotated)));
    m.insert("fully_covered".into(), json!(fully));
    m.insert("closure".into(), a.get("closure"));
    m.insert("quality".into(), a.get("quality"));
    m.insert("prov".into(), a.get("prov"));
    let base = format!("annotations/{id}");
    let data = |name: &str| match file.object(&format!("{base}/{name}")) {
        Ok(Object::Dataset(ds)) => Some(ds),
        _ => None,
    };
    let first_dim = |name: &str| data(name).and_then(|d| d.shape().first().copied());
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

/// Plain-text rendering of an `info` object.
pub fn info_text(v: &Value) -> String {
    let mut t = String::new();
    let s = |x: &Value| match x {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    };
    t.push_str(&format!("{}\n", s(&v["path"])));
    t.push_str(&format!(
        "  format      {} ({})\n",
        s(&v["version"]),
        s(&v["kind"])
    ));
    let profiles: Vec<String> = v["profiles"]
        .as_array()
        .map(|a| a.iter().map(s).collect())
        .unwrap_or_default();
    t.push_str(&format!("  profiles    {}\n", profiles.join(", ")));
    t.push_str(&format!(
        "  sample      {}  subject {}\n",
        s(&v["sample_id"]),
        s(&v["subject_id"])
    ));
    t.push_str(&format!("  content_id  {}\n", s(&v["content_id"])));
    for section in ["grids", "images", "annotations"] {
        let ids: Vec<String> = v[section]
            .as_array()
            .map(|a| a.iter().map(|o| s(&o["id"])).collect())
            .unwrap_or_default();
        t.push_str(&format!("  {section:<11} {}\n", ids.join(", ")));
    }
    t
}

/// One node of the object tree.
///
/// Only hard links are followed; soft and external links are not listed.
#[derive(Clone, Debug)]
pub struct Node {
    /// Path from the file root without a leading `/` (`annotations/organs/data`).
    pub path: String,
    /// The link name (last component of `path`).
    pub name: String,
    /// `true` for a group, `false` for a dataset.
    pub group: bool,
    /// One-line summary as the reference prints it: for a dataset shape,
    /// NumPy type string and filter pipeline (`8x16x16 |u1 contiguous`,
    /// `scalar |O contiguous`); for a group `group`, or `group kind=<kind>`
    /// when it has a string `kind` attribute.
    pub describe: String,
    /// For top-level objects only, what the object is for in the spec
    /// (`geometry (§3.2)`; anything unknown is an extension object).
    pub role: Option<&'static str>,
    /// A dataset's dimensions (empty for a scalar or a group).
    pub shape: Vec<u64>,
    /// A dataset's NumPy dtype name (`uint8`, `int16`, `object` for
    /// strings); empty for a group.
    pub dtype: String,
    /// A group's members: `meta` first, then in byte order of names. Empty
    /// for a dataset, and for a group already open higher up the path (a
    /// hard-link cycle).
    pub children: Vec<Node>,
}

/// The `tree` of a sample.
#[derive(Clone, Debug)]
pub struct Tree {
    /// The file as the caller named it.
    pub path: String,
    /// The root's members, `meta` first, then in byte order of names.
    pub objects: Vec<Node>,
}

fn role(name: &str) -> &'static str {
    match name {
        "meta" => "sample document (\u{a7}2.4)",
        "annotations" => "ground truth (\u{a7}6-\u{a7}9)",
        "grids" => "geometry (\u{a7}3.2)",
        "images" => "image data (\u{a7}4)",
        "index" => "derived sampling caches (\u{a7}14.3)",
        "transforms" => "spatial mappings (\u{a7}10)",
        "clinical" => "clinical history (1.1 \u{a7}3)",
        "samples" => "collection members (\u{a7}2.2)",
        _ => "extension object (\u{a7}16)",
    }
}

/// NumPy's name of a dtype string (`<i2` → `int16`).
fn numpy_name(descr: &str) -> String {
    let kind = descr.get(1..2).unwrap_or("");
    let size: u32 = descr.get(2..).and_then(|s| s.parse().ok()).unwrap_or(0);
    match kind {
        "b" => "bool".into(),
        "i" => format!("int{}", size * 8),
        "u" => format!("uint{}", size * 8),
        "f" => format!("float{}", size * 8),
        "O" => "object".into(),
        "V" => format!("void{}", size * 8),
        _ => descr.to_string(),
    }
}

fn dataset_node(path: String, name: String, ds: &Dataset) -> Node {
    let descr = dtype_descr(ds.dtype()).unwrap_or_else(|| format!("|V{}", ds.dtype().size()));
    let shape = ds.shape().to_vec();
    let shape_txt = if shape.is_empty() {
        "scalar".to_string()
    } else {
        shape
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join("x")
    };
    let dtype = if matches!(
        ds.dtype(),
        Datatype::VarString { .. } | Datatype::String { .. }
    ) {
        "object".to_string()
    } else {
        numpy_name(&descr)
    };
    Node {
        describe: format!("{shape_txt} {descr} {}", describe_pipeline(ds.filters())),
        path,
        name,
        group: false,
        role: None,
        shape,
        dtype,
        children: Vec::new(),
    }
}

fn build(file: &File, path: &str, seen: &mut Vec<u64>, depth: usize) -> Result<Vec<Node>> {
    if depth > MAX_DEPTH {
        return Err(Error::invalid(format!("{path}: tree too deep")));
    }
    let g = if path.is_empty() {
        file.root()?
    } else {
        match file.object(path)? {
            Object::Group(g) => g,
            _ => return Ok(Vec::new()),
        }
    };
    let mut links = g.links()?;
    links.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut nodes = Vec::new();
    for (name, link) in links {
        let child = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}/{name}")
        };
        let Link::Hard(addr) = link else { continue };
        let obj = file.object_at(addr, format!("/{child}"))?;
        match obj {
            Object::Dataset(ds) => nodes.push(dataset_node(child, name, &ds)),
            Object::Group(grp) => {
                let kind = super::sample::attrs_json(file, &grp.attributes()?)?
                    .into_iter()
                    .find(|(n, _)| n == "kind");
                let describe = match kind {
                    Some((_, Json::Str(k))) => format!("group kind={k}"),
                    _ => "group".to_string(),
                };
                let children = if seen.contains(&addr) {
                    Vec::new()
                } else {
                    seen.push(addr);
                    let c = build(file, &child, seen, depth + 1)?;
                    seen.pop();
                    c
                };
                nodes.push(Node {
                    path: child,
                    name,
                    group: true,
                    describe,
                    role: None,
                    shape: Vec::new(),
                    dtype: String::new(),
                    children,
                });
            }
            Object::NamedDatatype(_) => {}
        }
    }
    // At every level `meta` first, then the rest in byte order (as the
    // reference lists a sample, a collection and each of its members).
    nodes.sort_by_key(|n| n.name != "meta");
    if depth == 0 {
        // top-level nodes get a role
        for n in &mut nodes {
            n.role = Some(role(&n.name));
        }
    }
    Ok(nodes)
}

/// The object tree of the sample at `path`.
pub fn tree(path: &Path, display: &str) -> Result<Tree> {
    tree_file(&File::open(path)?, display)
}

/// [`tree`] of an open sample (a collection member, say).
pub fn tree_file(file: &File, display: &str) -> Result<Tree> {
    let file = file.clone();
    let root = file.root()?.address();
    let objects = build(&file, "", &mut vec![root], 0)?;
    Ok(Tree {
        path: display.to_string(),
        objects,
    })
}

impl Node {
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("path".into(), json!(self.path));
        m.insert("name".into(), json!(self.name));
        m.insert(
            "kind".into(),
            json!(if self.group { "group" } else { "dataset" }),
        );
        m.insert("describe".into(), json!(self.describe));
        if let Some(r) = self.role {
            m.insert("role".into(), json!(r));
        }
        if self.group {
            m.insert(
                "children".into(),
                Value::Array(self.children.iter().map(Node::to_json).collect()),
            );
        } else {
            m.insert("shape".into(), json!(self.shape));
            m.insert("dtype".into(), json!(self.dtype));
        }
        Value::Object(m)
    }

    /// The reference pads a top-level name to 23 characters and a name at
    /// depth `d >= 1` to `25 - 4d` (at least one space follows).
    fn render(&self, prefix: &str, depth: usize, out: &mut String) {
        let head = format!("{prefix}\u{251c}\u{2500}\u{2500} ");
        let top = prefix.is_empty();
        let mut name = self.name.clone();
        if top && self.group {
            name.push('/');
        }
        let width = if top {
            23
        } else {
            25usize.saturating_sub(4 * depth)
        };
        let pad = width.saturating_sub(name.chars().count()).max(1);
        let line = match (top, self.group, self.role) {
            (true, true, Some(r)) => format!("{head}{name}{}# {r}", " ".repeat(pad)),
            (_, _, Some(r)) => format!("{head}{name}{}{}   # {r}", " ".repeat(pad), self.describe),
            _ => format!("{head}{name}{}{}", " ".repeat(pad), self.describe),
        };
        out.push_str(line.trim_end());
        out.push('\n');
        // The reference's text tree shows three levels (the JSON has all).
        if depth >= 2 {
            return;
        }
        let inner = format!("{prefix}\u{2502}   ");
        for c in &self.children {
            c.render(&inner, depth + 1, out);
        }
    }
}

impl Tree {
    /// The reference's `tree --json` object.
    pub fn to_json(&self) -> Value {
        json!({"path": self.path,
               "objects": self.objects.iter().map(Node::to_json).collect::<Vec<_>>()})
    }

    /// The text tree.
    pub fn to_text(&self) -> String {
        let mut out = format!("{}\n", self.path);
        for n in &self.objects {
            n.render("", 0, &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_names() {
        assert_eq!(numpy_name("<i2"), "int16");
        assert_eq!(numpy_name("|b1"), "bool");
        assert_eq!(numpy_name("<f2"), "float16");
        assert_eq!(numpy_name("<u8"), "uint64");
    }

    #[test]
    fn v1b_tree_matches_appendix() {
        let p = crate::test_support::medh5_vector("v1b_dense_label.medh5");
        if !p.exists() {
            return;
        }
        let t = tree(&p, "v1b_dense_label.medh5").unwrap().to_json();
        let expected: Value = serde_json::from_str(r#"{"path": "v1b_dense_label.medh5", "objects": [{"path": "meta", "name": "meta", "kind": "dataset", "describe": "scalar |O contiguous", "role": "sample document (\u00a72.4)", "shape": [], "dtype": "object"}, {"path": "annotations", "name": "annotations", "kind": "group", "describe": "group", "role": "ground truth (\u00a76-\u00a79)", "children": [{"path": "annotations/organs", "name": "organs", "kind": "group", "describe": "group kind=labelmap", "children": [{"path": "annotations/organs/data", "name": "data", "kind": "dataset", "describe": "8x16x16 |u1 contiguous", "shape": [8, 16, 16], "dtype": "uint8"}]}]}, {"path": "grids", "name": "grids", "kind": "group", "describe": "group", "role": "geometry (\u00a73.2)", "children": [{"path": "grids/ct", "name": "ct", "kind": "group", "describe": "group", "children": []}]}, {"path": "images", "name": "images", "kind": "group", "describe": "group", "role": "image data (\u00a74)", "children": [{"path": "images/CT", "name": "CT", "kind": "dataset", "describe": "8x16x16 <i2 contiguous", "shape": [8, 16, 16], "dtype": "int16"}]}]}"#).unwrap();
        assert_eq!(t, expected);
    }
}
