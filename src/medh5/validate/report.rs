//! The validation report (`docs/medh5-format.md` §9.1, §9.3): diagnostics
//! sorted errors first, then by code, then by location; counts at the level
//! (`strict` counts every warning as an error and reports it as promoted);
//! the JSON entry with the reference's key order, and the text form.

use serde_json::{json, Value};

/// A validation level (§9.1); each includes the checks of the ones before.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Container, document, geometry, images, annotations, bulk storage and
    /// clinical-table rules only: is the file shaped like a medh5 sample.
    Structural,
    /// Structural plus cross-references, label set, transforms, closure,
    /// multiscale, curation, splits, profiles and ontology bindings; the
    /// default of `medh5 validate`.
    #[default]
    Semantic,
    /// Semantic plus reading the stored bytes: digests, `content_id`, index
    /// currency, probmap values and clinical digests (§5.7).
    Integrity,
    /// Integrity with every warning counted as an error; diagnostics keep
    /// their table severity and [`Report::counts`] reports them as promoted.
    Strict,
}

impl Level {
    /// The level's name as the CLI's `--level` and the report JSON spell it
    /// (`"structural"`, `"semantic"`, `"integrity"`, `"strict"`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Structural => "structural",
            Level::Semantic => "semantic",
            Level::Integrity => "integrity",
            Level::Strict => "strict",
        }
    }

    /// The level named `s` (the inverse of [`Level::name`]; exact,
    /// lower-case match); `None` for any other string.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "structural" => Level::Structural,
            "semantic" => Level::Semantic,
            "integrity" => Level::Integrity,
            "strict" => Level::Strict,
            _ => return None,
        })
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The code from the code table (§9.2): `E…` for errors, `W…` for
    /// warnings, e.g. `"E701"`. Only the code is normative.
    pub code: String,
    /// Where the problem is: an HDF5 path (`/images/CT`) or a JSON pointer
    /// into the document (`/meta#label_set`); inside a collection it is
    /// prefixed with the member root (`/samples/<key>:/images/CT`).
    pub location: String,
    /// Human-readable explanation; informative only, not stable across
    /// versions.
    pub message: String,
}

impl Diagnostic {
    /// `error` for `E…` codes, `warning` for `W…` codes (the table's severity).
    pub fn severity(&self) -> &'static str {
        if self.code.starts_with('W') {
            "warning"
        } else {
            "error"
        }
    }

    /// Whether the code is an error (`E…`) by the table; a warning counted as
    /// an error under [`Level::Strict`] still answers `false`.
    pub fn is_error(&self) -> bool {
        !self.code.starts_with('W')
    }
}

/// Everything one validation pass found about one file.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The file as the caller named it (not canonicalised); the JSON `path`.
    pub path: String,
    /// The level the file was validated at.
    pub level: Level,
    /// Every profile the file was held to (declared plus requested), sorted;
    /// empty for a collection or an unreadable file.
    pub profiles: Vec<String>,
    /// The findings; in report order once [`Report::finish`] has run.
    pub diagnostics: Vec<Diagnostic>,
    /// What was checked, as the JSON `checked` object: `{"rules": [...],
    /// "schema_checked": bool}` for a sample, `{"samples": [...]}` for a
    /// collection, `{}` for an unreadable file (§9.3).
    pub checked: Value,
}

impl Report {
    /// An empty report (no diagnostics, `checked` = `{}`) for `path` at
    /// `level`, held to `profiles`.
    pub fn new(path: &str, level: Level, profiles: Vec<String>) -> Self {
        Report {
            path: path.to_string(),
            level,
            profiles,
            diagnostics: Vec::new(),
            checked: json!({}),
        }
    }

    /// The report of a file that cannot be opened: one E001 at `/`.
    pub fn unreadable(path: &str, level: Level, message: &str) -> Self {
        let mut r = Report::new(path, level, Vec::new());
        r.diagnostics.push(Diagnostic {
            code: "E001".into(),
            location: "/".into(),
            message: message.to_string(),
        });
        r
    }

    /// Sort (errors first, then code, then location) and drop exact duplicates.
    pub fn finish(&mut self) {
        self.diagnostics.sort_by(|a, b| {
            (!a.is_error(), &a.code, &a.location).cmp(&(!b.is_error(), &b.code, &b.location))
        });
        self.diagnostics.dedup();
    }

    /// `(errors, warnings, promoted)` counted at the report's level.
    pub fn counts(&self) -> (usize, usize, usize) {
        let e = self.diagnostics.iter().filter(|d| d.is_error()).count();
        let w = self.diagnostics.len() - e;
        if self.level == Level::Strict {
            (e + w, 0, w)
        } else {
            (e, w, 0)
        }
    }

    /// Whether the file passes at the report's level: no errors once
    /// [`Level::Strict`] has promoted the warnings (the JSON `ok`).
    pub fn ok(&self) -> bool {
        self.counts().0 == 0
    }

    /// The §9.3 JSON entry.
    pub fn to_json(&self) -> Value {
        let (e, w, p) = self.counts();
        let level = self.level.name();
        let diags: Vec<Value> = self
            .diagnostics
            .iter()
            .map(|d| {
                json!({"code": d.code, "severity": d.severity(), "location": d.location,
                       "message": d.message, "level": level})
            })
            .collect();
        json!({
            "path": self.path,
            "level": level,
            "profiles": self.profiles,
            "ok": e == 0,
            "errors": e,
            "warnings": w,
            "promoted": p,
            "diagnostics": diags,
            "checked": self.checked,
        })
    }

    /// The text form: a status line, then one line per diagnostic.
    pub fn to_text(&self) -> String {
        let (e, w, _) = self.counts();
        let profiles = if self.profiles.is_empty() {
            "-".to_string()
        } else {
            self.profiles.join(",")
        };
        let state = if e == 0 { "OK" } else { "FAILED" };
        let mut out = format!(
            "{}: {state} [{}] profiles={profiles} ({e} errors, {w} warnings)\n",
            self.path,
            self.level.name()
        );
        for d in &self.diagnostics {
            let sev = d.severity().to_uppercase();
            out.push_str(&format!(
                "  {sev:7} {} {}: {}\n",
                d.code, d.location, d.message
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(code: &str, loc: &str) -> Diagnostic {
        Diagnostic {
            code: code.into(),
            location: loc.into(),
            message: "m".into(),
        }
    }

    #[test]
    fn sorted_errors_first_then_code_then_location() {
        let mut r = Report::new("x", Level::Semantic, vec![]);
        r.diagnostics = vec![
            d("W903", "/meta#deidentification"),
            d("E702", "/"),
            d("E203", "/images/b"),
            d("E203", "/images/a"),
            d("E203", "/images/a"),
        ];
        r.finish();
        let got: Vec<(&str, &str)> = r
            .diagnostics
            .iter()
            .map(|d| (d.code.as_str(), d.location.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("E203", "/images/a"),
                ("E203", "/images/b"),
                ("E702", "/"),
                ("W903", "/meta#deidentification")
            ]
        );
    }

    #[test]
    fn strict_promotes_warnings_in_counts() {
        let mut r = Report::new("x", Level::Strict, vec!["core".into()]);
        r.diagnostics = vec![
            d("W903", "/meta#deidentification"),
            d("W912", "/meta#label_set"),
        ];
        assert_eq!(r.counts(), (2, 0, 2));
        assert!(!r.ok());
        let j = r.to_json();
        assert_eq!(j["errors"], 2);
        assert_eq!(j["promoted"], 2);
        assert_eq!(j["diagnostics"][0]["severity"], "warning");
        assert_eq!(j["diagnostics"][0]["level"], "strict");
        r.level = Level::Integrity;
        assert_eq!(r.counts(), (0, 2, 0));
        assert!(r.ok());
        let j = r.to_json();
        let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "path",
                "level",
                "profiles",
                "ok",
                "errors",
                "warnings",
                "promoted",
                "diagnostics",
                "checked"
            ]
        );
    }

    #[test]
    fn text_form_matches_reference_layout() {
        let mut r = Report::new("v1.medh5", Level::Integrity, vec!["core".into()]);
        r.diagnostics = vec![d("W903", "/meta#deidentification")];
        assert_eq!(
            r.to_text(),
            "v1.medh5: OK [integrity] profiles=core (0 errors, 1 warnings)\n  WARNING W903 /meta#deidentification: m\n"
        );
    }
}
