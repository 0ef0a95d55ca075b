//! Tree selection of `h5 recompress` (`docs/neighbours.md` row E5 and
//! "details that are easy to get wrong" 1–4 of §001): walk the given
//! directories for HDF5 files, evaluate `--where KEY:VALUE` conditions on the
//! *decoded* value of the dataset at `KEY` below each top-level group, follow
//! the virtual datasets of each group to their source files, and merge
//! everything into one row per file with all its reasons. A file holding
//! virtual datasets (a container) found in a walk is never rewritten, so it
//! stays byte-identical; its matching groups select their sources instead.
//! A container named on the command line is rewritten with its virtual
//! datasets carried through (mappings kept). With neither a
//! condition nor `--all`, a directory selects nothing and says so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::dump::json::{attr_value, AttrData};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::messages::link::Link;
use purehdf::low_level::virtual_layout;
use purehdf::{Error, Result};

use super::plan::datasets_of;

/// Most files one walk collects.
const MAX_FILES: usize = 1_000_000;
/// Deepest directory nesting followed.
const MAX_DEPTH: usize = 64;
/// File name endings taken for HDF5.
const EXTENSIONS: [&str; 6] = ["h5", "hdf5", "hdf", "nxs", "nx5", "he5"];

/// One `--where` condition: the text of the value at `key` (below a top-level
/// group) contains `value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// Path of the value below each top-level group, without leading or trailing `/` (e.g.
    /// `sample/name`).
    pub key: String,
    /// Text the value must contain (surrounding quotes stripped).
    pub value: String,
}

impl Condition {
    /// `KEY:VALUE` (esrf's spelling) or `KEY contains VALUE`.
    pub fn parse(text: &str) -> Result<Condition> {
        let (k, v) = match text.split_once(" contains ") {
            Some(kv) => kv,
            None => text.split_once(':').ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "--where {text:?}: expected KEY:VALUE or 'KEY contains VALUE'"
                ))
            })?,
        };
        let key = k.trim().trim_matches('/').to_string();
        if key.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "--where {text:?}: empty key"
            )));
        }
        Ok(Condition {
            key,
            value: v.trim().trim_matches(|c| c == '\'' || c == '"').to_string(),
        })
    }
}

/// One file of the selection with every reason it got.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// The file's canonical path.
    pub path: PathBuf,
    /// Reasons to compress it.
    pub select: Vec<String>,
    /// Reasons it is left alone (any one wins over `select`).
    pub block: Vec<String>,
    /// Reasons a condition did not select it (informative).
    pub other: Vec<String>,
}

impl Row {
    /// True when some reason selects the file and none blocks it.
    pub fn selected(&self) -> bool {
        !self.select.is_empty() && self.block.is_empty()
    }
}

/// What to select.
#[derive(Clone, Debug, Default)]
pub struct Query {
    /// The `--where` conditions; a top-level group is selected when any one matches.
    pub conditions: Vec<Condition>,
    /// `--all`: select every walked file (and every VDS source it names), conditions or not.
    pub all: bool,
}

/// Rows by canonical path.
#[derive(Debug, Default)]
pub struct Rows {
    /// One row per file seen (walked, or named as a VDS source), keyed by canonical path.
    pub rows: BTreeMap<PathBuf, Row>,
    /// Warnings (absolute VDS source paths...).
    pub warnings: Vec<String>,
}

impl Rows {
    fn row(&mut self, path: &Path) -> &mut Row {
        let key = canonical(path);
        self.rows.entry(key.clone()).or_insert_with(|| Row {
            path: key,
            ..Row::default()
        })
    }
}

/// `path` made absolute and canonical when it exists.
pub fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    })
}

fn is_hdf5_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if name.starts_with('.') {
        return false;
    }
    p.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| EXTENSIONS.contains(&e.as_str()))
}

/// Every HDF5-named file below `dir`, sorted.
pub fn walk_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, depth)) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| Error::io(d.display(), e))?;
        for e in entries {
            let e = e.map_err(|e| Error::io(d.display(), e))?;
            let p = e.path();
            let ft = e.file_type().map_err(|e| Error::io(p.display(), e))?;
            if ft.is_dir() && depth < MAX_DEPTH {
                stack.push((p, depth + 1));
            } else if ft.is_file() && is_hdf5_name(&p) {
                out.push(p);
                if out.len() > MAX_FILES {
                    return Err(Error::Limit {
                        structure: "h5 recompress tree",
                        offset: 0,
                        what: "files",
                        value: out.len() as u64,
                        limit: MAX_FILES as u64,
                    });
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The decoded text of the dataset at `path` (strings as text, never `b'..'`).
fn value_text(file: &File, path: &str) -> Result<String> {
    let Object::Dataset(ds) = file.object(path)? else {
        return Err(Error::InvalidArgument(format!("{path} is not a dataset")));
    };
    let data = ds.read_all_raw()?;
    let resolve = |el: &[u8]| file.vlen_bytes(el);
    let v = attr_value(ds.dtype(), Some(ds.shape()), &data, &resolve)?;
    Ok(match v {
        AttrData::Value(Value::String(s)) => s,
        AttrData::Value(v) => flat_text(&v),
        AttrData::Hash { sha256, .. } => sha256,
    })
}

fn flat_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(flat_text).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

/// The source files (resolved) of the virtual datasets below `group`, and
/// whether any mapping names an absolute path.
fn vds_sources(file: &File, group_prefix: &str, container: &Path) -> Vec<(PathBuf, bool)> {
    let dir = container.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    let Ok(all) = datasets_of(file) else {
        return out;
    };
    for (ds, paths) in all {
        if ds.layout_kind() != "virtual" {
            continue;
        }
        let inside = paths.iter().any(|p| {
            p.strip_prefix(group_prefix)
                .is_some_and(|r| r.is_empty() || r.starts_with('/'))
        });
        if !inside {
            continue;
        }
        if let Ok(maps) = virtual_layout::mappings(&ds) {
            for m in maps {
                if m.source_file == "." || m.source_file.contains('%') {
                    continue;
                }
                let p = Path::new(&m.source_file);
                out.push((dir.join(p), p.is_absolute()));
            }
        }
        // printf-style names: the sources that resolve
        if let Ok(Some(plan)) = ds.virtual_plan() {
            for piece in &plan.pieces {
                if let Some(p) = piece.source.dataset.file().path() {
                    if canonical(p) != canonical(container) {
                        out.push((p.to_path_buf(), false));
                    }
                }
            }
        }
    }
    out
}

/// Evaluate the query over explicit files and walked directories.
pub fn select(files: &[PathBuf], dirs: &[PathBuf], q: &Query) -> Result<Rows> {
    let mut rows = Rows::default();
    for f in files {
        rows.row(f).select.push("named on the command line".into());
    }
    let roots: Vec<PathBuf> = dirs.iter().map(|d| canonical(d)).collect();
    let mut walked = Vec::new();
    for d in dirs {
        walked.extend(walk_dir(d)?);
    }
    for f in files {
        walked.push(f.clone());
    }
    for path in &walked {
        let explicit = files.contains(path);
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) => {
                rows.row(path).block.push(format!("cannot open: {e}"));
                continue;
            }
        };
        let has_vds = datasets_of(&file)
            .map(|d| d.iter().any(|(ds, _)| ds.layout_kind() == "virtual"))
            .unwrap_or(false);
        // a container met in a walk keeps its bytes (its matching groups
        // select their sources); named on the command line it is rewritten,
        // its virtual datasets carried through with their mappings
        if has_vds && !explicit {
            rows.row(path)
                .block
                .push("holds virtual datasets: container kept byte-identical".into());
        }
        if q.all && !explicit {
            rows.row(path).select.push("--all".into());
        }
        if q.conditions.is_empty() {
            if !q.all && !explicit {
                rows.row(path)
                    .other
                    .push("no --where condition and no --all: nothing selected".into());
            }
            if !q.all {
                continue;
            }
        }
        let groups: Vec<String> = match file.root().and_then(|r| r.links()) {
            Ok(l) => l
                .into_iter()
                .filter(|(_, l)| matches!(l, Link::Hard(_)))
                .map(|(n, _)| n)
                .collect(),
            Err(e) => {
                rows.row(path)
                    .block
                    .push(format!("cannot list groups: {e}"));
                continue;
            }
        };
        for g in groups {
            if !matches!(file.object(&format!("/{g}")), Ok(Object::Group(_))) {
                continue;
            }
            let (mut hit, mut miss) = (None, Vec::new());
            for c in &q.conditions {
                let key = format!("/{g}/{}", c.key);
                match value_text(&file, &key) {
                    Ok(t) if t.contains(&c.value) => {
                        hit = Some(format!("{g}/{} contains {:?}", c.key, c.value));
                        break;
                    }
                    Ok(t) => miss.push(format!("{g}/{}={t:?}", c.key)),
                    Err(_) => miss.push(format!("{g}/{} missing", c.key)),
                }
            }
            let name = path.display().to_string();
            for (src, absolute) in vds_sources(&file, &format!("/{g}"), path) {
                if absolute {
                    rows.warnings.push(format!(
                        "{name}:/{g}: virtual dataset source {} is an absolute path",
                        src.display()
                    ));
                }
                let r = rows.row(&src);
                match (&hit, q.all) {
                    (Some(h), _) => r.select.push(format!("VDS source of {name}:/{g} ({h})")),
                    (None, true) => r.select.push(format!("VDS source of {name}:/{g} (--all)")),
                    (None, false) => r
                        .other
                        .push(format!("VDS source of {name}:/{g} ({})", miss.join(", "))),
                }
            }
            let r = rows.row(path);
            match hit {
                Some(h) => r.select.push(h),
                None if !q.conditions.is_empty() => r.other.extend(miss),
                None => {}
            }
        }
    }
    // sources that do not exist, or lie outside every walked directory
    for r in rows.rows.values_mut() {
        for v in [&mut r.select, &mut r.block, &mut r.other] {
            let mut seen = std::collections::HashSet::new();
            v.retain(|x| seen.insert(x.clone()));
        }
        if r.select.is_empty() {
            continue;
        }
        if !r.path.is_file() {
            r.block.push("missing".into());
        } else if !roots.is_empty()
            && !roots.iter().any(|d| r.path.starts_with(d))
            && !files.iter().any(|f| canonical(f) == r.path)
        {
            r.block.push("outside the selected tree".into());
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_parse() {
        let c = Condition::parse("technique/scan:tomo").unwrap();
        assert_eq!(c.key, "technique/scan");
        assert_eq!(c.value, "tomo");
        let c = Condition::parse("/technique/scan contains 'a b'").unwrap();
        assert_eq!(c.key, "technique/scan");
        assert_eq!(c.value, "a b");
        assert!(Condition::parse("nothing").is_err());
        assert!(Condition::parse(":x").is_err());
    }

    #[test]
    fn hdf5_names() {
        assert!(is_hdf5_name(Path::new("/a/b.h5")));
        assert!(is_hdf5_name(Path::new("x.NXS")));
        assert!(!is_hdf5_name(Path::new("/a/.b.h5")));
        assert!(!is_hdf5_name(Path::new("/a/b.h5.bak")));
    }
}
