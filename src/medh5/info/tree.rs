//! `medh5 tree` (`docs/medh5-format.md` §10, Appendix A): the object tree
//! of a sample with each top-level object's role in the spec.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::MAX_DEPTH;
use crate::canonical_json::Json;
use crate::error::{Error, Result};
use crate::integrity::dtype_descr;
use crate::profiles::describe_pipeline;
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::Datatype;
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::messages::link::Link;

/// One node of the object tree.
///
/// Hard and soft links are followed (a soft link that names nothing is
/// listed as a group without members); external links are not listed (a
/// sample with one is refused before its tree is built).
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
    /// A soft link that names no object: listed as a group, with no
    /// `children` in the JSON.
    pub dangling: bool,
}

/// The `tree` of a sample.
#[derive(Clone, Debug)]
pub struct Tree {
    /// The file as the caller named it.
    pub path: String,
    /// The root's members, `meta` first, then in byte order of names.
    pub objects: Vec<Node>,
}

/// The role of a top-level object; `clinical` is the clinical history
/// only when the sample declares that profile.
fn role(name: &str, clinical: bool) -> &'static str {
    match name {
        "clinical" if !clinical => "extension object (\u{a7}16)",
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
    // NumPy reads a fixed-length string as bytes (`|S4`), a vlen one as `|O`
    let fixed_string = matches!(ds.dtype(), Datatype::String { .. });
    let descr = if fixed_string {
        format!("|S{}", ds.dtype().size())
    } else {
        dtype_descr(ds.dtype()).unwrap_or_else(|| format!("|V{}", ds.dtype().size()))
    };
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
    let dtype = if fixed_string {
        descr.clone()
    } else if matches!(ds.dtype(), Datatype::VarString { .. }) {
        "object".to_string()
    } else {
        numpy_name(&descr)
    };
    // without filters the reference names the layout
    let pipeline = if ds.filters().is_empty() && ds.chunk_dims().is_some() {
        "chunked".to_string()
    } else {
        describe_pipeline(ds.filters())
    };
    Node {
        describe: format!("{shape_txt} {descr} {pipeline}"),
        path,
        name,
        group: false,
        role: None,
        shape,
        dtype,
        children: Vec::new(),
        dangling: false,
    }
}

/// Cap on the nodes one tree lists: hard and soft links may name one group
/// from many places, so a small file can describe a tree exponentially
/// large; past this budget the tree is refused.
const MAX_NODES: usize = 1 << 18;

fn build(
    file: &File,
    path: &str,
    seen: &mut Vec<u64>,
    depth: usize,
    left: &mut usize,
) -> Result<Vec<Node>> {
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
        *left = left.checked_sub(1).ok_or_else(|| {
            Error::invalid(format!("{path}: more than {MAX_NODES} objects to list"))
        })?;
        let child = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}/{name}")
        };
        // A soft link is listed as the object it names; one that names
        // nothing as a group without members (the reference's listing).
        let (addr, obj) = match link {
            Link::Hard(addr) => (addr, file.object_at(addr, format!("/{child}"))?),
            Link::Soft(_) => match file.object(&child) {
                Ok(obj) => (obj.address(), obj),
                Err(_) => {
                    nodes.push(Node {
                        path: child,
                        name,
                        group: true,
                        describe: "group".into(),
                        role: None,
                        shape: Vec::new(),
                        dtype: String::new(),
                        children: Vec::new(),
                        dangling: true,
                    });
                    continue;
                }
            },
            _ => continue,
        };
        match obj {
            Object::Dataset(ds) => nodes.push(dataset_node(child, name, &ds)),
            Object::Group(grp) => {
                let kind = crate::sample::attrs_json(file, &grp.attributes()?)?
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
                    let c = build(file, &child, seen, depth + 1, left)?;
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
                    dangling: false,
                });
            }
            Object::NamedDatatype(_) => {}
        }
    }
    // At every level `meta` first, then the rest in byte order, as the
    // reference's JSON lists them (its text does so at the top level only:
    // see `Node::render`).
    nodes.sort_by_key(|n| n.name != "meta");
    if depth == 0 {
        let clinical = crate::sample::attrs_json(file, &g.attributes()?)
            .is_ok_and(|a| crate::verify::declares_clinical(&a));
        // top-level nodes get a role
        for n in &mut nodes {
            n.role = Some(role(&n.name, clinical));
        }
    }
    Ok(nodes)
}

/// The object tree of the sample at `path`.
pub fn tree(path: &Path, display: &str) -> Result<Tree> {
    let file = crate::self_contained::open(path, display)?;
    crate::verify::check_version(&file, display)?;
    if crate::validate::collection::is_collection(&file) {
        crate::collection::members_shown(&file, display)?;
    }
    tree_file(&file, display)
}

/// [`tree`] of an open sample (a collection member, say).
pub fn tree_file(file: &File, display: &str) -> Result<Tree> {
    let file = file.clone();
    let root = file.root()?.address();
    let mut left = MAX_NODES;
    let objects = build(&file, "", &mut vec![root], 0, &mut left)?;
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
        if self.group && !self.dangling {
            m.insert(
                "children".into(),
                Value::Array(self.children.iter().map(Node::to_json).collect()),
            );
        } else if !self.group {
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
        // below the top level the text lists members in byte order, `meta`
        // among them
        let mut children: Vec<&Node> = self.children.iter().collect();
        children.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        for c in children {
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
