//! The validation context of one sample root (`docs/medh5-format.md` §2, §9):
//! the open file, where the sample root is (the file root, or
//! `/samples/<key>` inside a collection), what the container rule read
//! (root attributes, version, profiles, the parsed `/meta`), and the
//! diagnostics found so far.

use serde_json::Value;

use super::report::{Diagnostic, Level};
use crate::canonical_json::Json;
use crate::sample::attrs_json;
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::messages::link::Link;

/// The codes a file of a later minor version reports as W913 instead: its
/// vocabulary may have grown in a minor this validator does not implement.
const PROJECTED: &[&str] = &[
    "E005", "E007", "E203", "E401", "E502", "E804", "E810", "E819",
];

/// One sample root being validated.
pub struct Ctx<'a> {
    /// The open file holding the sample (the sample itself, or a collection).
    pub file: &'a File,
    /// HDF5 path of the sample root without slashes (`""` or `samples/<key>`).
    pub base: String,
    /// Prefix of every location (`""` or `/samples/<key>:`).
    pub prefix: String,
    /// The level being validated at; rules of higher levels do not run.
    pub level: Level,
    /// Diagnostics emitted so far, in emission order (the report sorts them),
    /// with locations already prefixed.
    pub diags: Vec<crate::validate::Diagnostic>,
    /// Root attributes, decoded.
    pub root_attrs: Vec<(String, Json)>,
    /// `(major, minor)` of `medh5_version` when it parses.
    pub version: Option<(u64, u64)>,
    /// A higher minor than this validator implements: only its projection.
    pub projection: bool,
    /// The profiles the file declares, sorted.
    pub declared_profiles: Vec<String>,
    /// Profiles the caller holds the file to besides.
    pub extra_profiles: Vec<String>,
    /// The parsed `/meta` object, when it is one.
    pub doc: Option<Value>,
    /// Whether the `/meta` schema was checked.
    pub schema_checked: bool,
}

impl<'a> Ctx<'a> {
    /// A fresh context for the sample root at `base` (see [`Ctx::base`])
    /// whose locations start with `prefix` (see [`Ctx::prefix`]); nothing
    /// read yet, no diagnostics.
    pub fn new(file: &'a File, base: &str, prefix: &str, level: Level) -> Self {
        Ctx {
            file,
            base: base.to_string(),
            prefix: prefix.to_string(),
            level,
            diags: Vec::new(),
            root_attrs: Vec::new(),
            version: None,
            projection: false,
            declared_profiles: Vec::new(),
            extra_profiles: Vec::new(),
            doc: None,
            schema_checked: false,
        }
    }

    /// The HDF5 path of sample-relative `rel`.
    pub fn path(&self, rel: &str) -> String {
        let rel = rel.trim_start_matches('/');
        match (self.base.is_empty(), rel.is_empty()) {
            (true, _) => format!("/{rel}"),
            (false, true) => format!("/{}", self.base),
            (false, false) => format!("/{}/{rel}", self.base),
        }
    }

    /// The location string of sample-relative `rel` (`/images/CT`).
    pub fn loc(&self, rel: &str) -> String {
        format!("{}/{}", self.prefix, rel.trim_start_matches('/'))
    }

    /// Record a diagnostic at sample-relative location `rel` (already
    /// starting with `/` or holding a `#` pointer like `/meta#label_set`).
    pub fn emit(&mut self, code: &str, rel: &str, message: impl Into<String>) {
        self.emit_as(code, rel, message.into(), true);
    }

    /// [`Ctx::emit`] of an error a projection keeps an error (what a later
    /// minor cannot have made valid: a transform without any `kind`, say).
    pub fn emit_unprojected(&mut self, code: &str, rel: &str, message: impl Into<String>) {
        self.emit_as(code, rel, message.into(), false);
    }

    fn emit_as(&mut self, code: &str, rel: &str, mut message: String, projectable: bool) {
        let mut code = code.to_string();
        if projectable && self.projection && PROJECTED.contains(&code.as_str()) {
            message = format!(
                "{message} --- not defined by MEDH5 1.2, which this validator implements; a later minor may define it, so it is ignored in this projection ({code})"
            );
            code = "W913".into();
        }
        self.diags.push(Diagnostic {
            code,
            location: self.loc(rel),
            message,
        });
    }

    /// The object at sample-relative `rel` (links followed).
    pub fn object(&self, rel: &str) -> Option<Object> {
        self.file.object(&self.path(rel)).ok()
    }

    /// The links of the group at `rel` (byte order of names); `None` when it
    /// is not a readable group.
    pub fn links(&self, rel: &str) -> Option<Vec<(String, Link)>> {
        match self.object(rel)? {
            Object::Group(g) => g.links().ok(),
            _ => None,
        }
    }

    /// Names of the members of layout group `rel` (every link kind).
    pub fn member_names(&self, rel: &str) -> Vec<String> {
        self.links(rel)
            .map(|l| l.into_iter().map(|(n, _)| n).collect())
            .unwrap_or_default()
    }

    /// The decoded attributes of the object at `rel` (empty when unreadable).
    pub fn attrs(&self, rel: &str) -> Vec<(String, Json)> {
        match self.object(rel) {
            Some(o) => o
                .attributes()
                .ok()
                .and_then(|a| attrs_json(self.file, &a).ok())
                .unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// The root attribute `name`.
    pub fn root_attr(&self, name: &str) -> Option<&Json> {
        self.root_attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// Every profile the file is held to: declared plus the caller's.
    pub fn profiles(&self) -> Vec<String> {
        let mut v = self.declared_profiles.clone();
        for p in &self.extra_profiles {
            if !v.contains(p) {
                v.push(p.clone());
            }
        }
        v.sort();
        v
    }

    /// Whether the file is held to profile `p`, either because it declares it
    /// or because the caller asked for it.
    pub fn has_profile(&self, p: &str) -> bool {
        self.declared_profiles.iter().any(|x| x == p) || self.extra_profiles.iter().any(|x| x == p)
    }

    /// A member of the `/meta` document.
    pub fn doc_get(&self, key: &str) -> Option<&Value> {
        self.doc.as_ref().and_then(|d| d.get(key))
    }
}

/// The attribute `name` among decoded attributes.
pub fn attr<'j>(attrs: &'j [(String, Json)], name: &str) -> Option<&'j Json> {
    attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

/// A string attribute's value.
pub fn attr_str<'j>(attrs: &'j [(String, Json)], name: &str) -> Option<&'j str> {
    match attr(attrs, name)? {
        Json::Str(s) => Some(s),
        _ => None,
    }
}

/// A list of strings (a 1-D string attribute; a scalar string gives one).
pub fn json_strs(j: &Json) -> Option<Vec<String>> {
    match j {
        Json::Str(s) => Some(vec![s.clone()]),
        Json::Array(items) => items
            .iter()
            .map(|i| match i {
                Json::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// A flat list of integers (`None` when any element is not an integer).
pub fn json_ints(j: &Json) -> Option<Vec<i128>> {
    match j {
        Json::Int(i) => Some(vec![i128::from(*i)]),
        Json::UInt(u) => Some(vec![i128::from(*u)]),
        Json::Array(items) => {
            let mut out = Vec::new();
            for i in items {
                out.extend(json_ints(i)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// A flat list of numbers as f64 (integers widened).
pub fn json_floats(j: &Json) -> Option<Vec<f64>> {
    match j {
        Json::Int(i) => Some(vec![*i as f64]),
        Json::UInt(u) => Some(vec![*u as f64]),
        Json::Float(f) => Some(vec![*f]),
        Json::Array(items) => {
            let mut out = Vec::new();
            for i in items {
                out.extend(json_floats(i)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// Python-style rendering of a list of integers: `[1, 2, 3]`.
pub fn py_list<T: std::fmt::Display>(items: &[T]) -> String {
    let parts: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// Python-style rendering of a list of strings: `['a', 'b']`.
pub fn py_strs<S: AsRef<str>>(items: &[S]) -> String {
    let parts: Vec<String> = items.iter().map(|i| format!("'{}'", i.as_ref())).collect();
    format!("[{}]", parts.join(", "))
}

/// Python-style tuple of integers: `(16, 24, 24)`.
pub fn py_tuple(items: &[u64]) -> String {
    let parts: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    if parts.len() == 1 {
        format!("({},)", parts.join(", "))
    } else {
        format!("({})", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_renderings() {
        assert_eq!(py_list(&[1, 2, 4]), "[1, 2, 4]");
        assert_eq!(py_strs(&["quantum"]), "['quantum']");
        assert_eq!(py_tuple(&[16, 24, 25]), "(16, 24, 25)");
        assert_eq!(py_tuple(&[3]), "(3,)");
    }

    #[test]
    fn json_lists() {
        let j = Json::Array(vec![Json::Int(1), Json::UInt(65535)]);
        assert_eq!(json_ints(&j), Some(vec![1, 65535]));
        assert_eq!(
            json_strs(&Json::Str("a".into())),
            Some(vec!["a".to_string()])
        );
        assert_eq!(
            json_floats(&Json::Array(vec![Json::Int(2), Json::Float(0.5)])),
            Some(vec![2.0, 0.5])
        );
        assert_eq!(json_ints(&Json::Str("x".into())), None);
    }
}
