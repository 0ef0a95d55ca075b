//! The sample-document schema (`docs/medh5-format.md` §3.1, §9.2 E005): the
//! structure the `/meta` JSON object must have, written as Rust data (required
//! members, allowed members, member types, vocabularies, id patterns), and a
//! checker that reports each violation with a JSON pointer (`<root>` for the
//! document itself), as `/meta#<pointer>`.

use serde_json::{Map, Value};

/// A member type.
#[derive(Debug)]
pub enum T {
    /// Any JSON value; nothing is checked.
    Any,
    /// A string (possibly empty).
    Str,
    /// A string of at least one character.
    NonEmptyStr,
    /// `[A-Za-z0-9_.-]{1,128}`.
    Id,
    /// `^[0-9a-f]{64}$`.
    Hex64,
    /// `^[a-z0-9][a-z0-9_]*$`.
    ClassKey,
    /// An integer within the inclusive bounds `(min, max)` (`None`: no bound);
    /// as in JSON Schema, a number with no fractional part such as `2.0`
    /// counts as an integer.
    Int(Option<i64>, Option<i64>),
    /// Any JSON number within the inclusive bounds `(min, max)`.
    Num(Option<f64>, Option<f64>),
    /// `true` or `false`.
    Bool,
    /// One of the strings of the vocabulary (case-sensitive).
    Enum(&'static [&'static str]),
    /// A string of the vocabulary, or null.
    EnumOrNull(&'static [&'static str]),
    /// An object checked against the nested [`Spec`].
    Obj(&'static Spec),
    /// Any object.
    AnyObj,
    /// An object whose every member has this type.
    MapOf(&'static T),
    /// An array of items, with optional length bounds.
    Arr(&'static T, Option<usize>, Option<usize>),
    /// An object whose member names are 1–5 decimal digits, values numbers.
    PerClass,
}

/// An object type.
#[derive(Debug)]
pub struct Spec {
    /// Members that must be present (reported as `'<name>' is a required
    /// property` at the object's pointer).
    pub required: &'static [&'static str],
    /// The known members and the type each must have when present.
    pub props: &'static [(&'static str, T)],
    /// Whether members not in `props` are allowed (and left unchecked);
    /// when `false` they are reported together as additional properties.
    pub additional: bool,
}

const CLASS_ID: T = T::Int(Some(1), Some(65534));

/// The top-level `/meta` object of a sample (§3.1): `identity` and
/// `timepoints` required, the other members optional, nothing else allowed.
pub static DOCUMENT: Spec = Spec {
    required: &["identity", "timepoints"],
    additional: false,
    props: &[
        ("identity", T::Obj(&IDENTITY)),
        ("timepoints", T::Arr(&T::Obj(&TIMEPOINT), Some(1), None)),
        ("cohort", T::Obj(&COHORT)),
        ("label_set", T::Obj(&LABEL_SET)),
        ("provenance", T::Obj(&PROVENANCE)),
        ("quality", T::MapOf(&T::Obj(&QUALITY))),
        ("splits", T::Arr(&T::Obj(&SPLIT), None, None)),
        ("acquisition", T::MapOf(&T::AnyObj)),
        ("deidentification", T::Obj(&DEIDENTIFICATION)),
        ("extra", T::AnyObj),
    ],
};

static IDENTITY: Spec = Spec {
    required: &["sample_id", "subject_id"],
    additional: true,
    props: &[
        ("sample_id", T::NonEmptyStr),
        ("subject_id", T::NonEmptyStr),
        ("sex", T::EnumOrNull(&["F", "M", "O", "unknown"])),
        ("laterality", T::EnumOrNull(&["left", "right", "bilateral"])),
        ("bodypart", T::Str),
    ],
};

static TIMEPOINT: Spec = Spec {
    required: &["id", "index"],
    additional: false,
    props: &[
        ("id", T::Id),
        ("index", T::Int(Some(0), None)),
        ("label", T::Str),
        ("date", T::Str),
        ("days_from_baseline", T::Num(None, None)),
        ("study_uid", T::Str),
        ("series_uids", T::MapOf(&T::Str)),
        ("subject_age_years", T::Num(Some(0.0), None)),
        ("description", T::Str),
    ],
};

static COHORT: Spec = Spec {
    required: &[],
    additional: true,
    props: &[
        ("dataset_id", T::Str),
        ("site_id", T::Str),
        ("scanner_id", T::Str),
        ("group_id", T::Str),
        ("acquisition_protocol", T::Str),
    ],
};

static LABEL_SET: Spec = Spec {
    required: &["id", "version", "form"],
    additional: false,
    props: &[
        ("id", T::NonEmptyStr),
        ("version", T::NonEmptyStr),
        ("sha256", T::Hex64),
        ("uri", T::Str),
        ("form", T::Enum(&["inline", "ref"])),
        ("classes", T::Arr(&T::Obj(&LABEL_CLASS), None, None)),
        ("relations", T::Arr(&T::Obj(&RELATION), None, None)),
        ("skeletons", T::Arr(&T::Obj(&SKELETON), None, None)),
    ],
};

static LABEL_CLASS: Spec = Spec {
    required: &["id", "key", "name"],
    additional: false,
    props: &[
        ("id", CLASS_ID),
        ("key", T::ClassKey),
        ("name", T::NonEmptyStr),
        ("parents", T::Arr(&CLASS_ID, None, None)),
        ("category", T::Str),
        ("laterality", T::EnumOrNull(&["left", "right", "bilateral"])),
        (
            "color",
            T::Arr(&T::Int(Some(0), Some(255)), Some(4), Some(4)),
        ),
        ("codes", T::Arr(&T::Obj(&ONTOLOGY_CODE), None, None)),
        ("properties", T::AnyObj),
    ],
};

static ONTOLOGY_CODE: Spec = Spec {
    required: &["system", "code"],
    additional: false,
    props: &[("system", T::Str), ("code", T::Str), ("name", T::Str)],
};

static RELATION: Spec = Spec {
    required: &["subject", "predicate", "object"],
    additional: false,
    props: &[
        ("subject", CLASS_ID),
        ("predicate", T::Str),
        ("object", CLASS_ID),
    ],
};

static SKELETON: Spec = Spec {
    required: &["id", "keypoints", "edges"],
    additional: false,
    props: &[
        ("id", T::Id),
        ("keypoints", T::Arr(&CLASS_ID, None, None)),
        (
            "edges",
            T::Arr(&T::Arr(&CLASS_ID, Some(2), Some(2)), None, None),
        ),
    ],
};

static PROVENANCE: Spec = Spec {
    required: &["agents", "activities"],
    additional: false,
    props: &[
        ("agents", T::Arr(&T::Obj(&AGENT), None, None)),
        ("activities", T::Arr(&T::Obj(&ACTIVITY), None, None)),
    ],
};

static AGENT: Spec = Spec {
    required: &["id", "type", "name"],
    additional: false,
    props: &[
        ("id", T::Id),
        ("type", T::Enum(&["person", "software", "organization"])),
        ("name", T::NonEmptyStr),
        ("version", T::Str),
        (
            "role",
            T::Enum(&[
                "annotator",
                "reviewer",
                "arbiter",
                "converter",
                "predictor",
                "curator",
                "other",
            ]),
        ),
        ("qualification", T::Str),
        ("organization", T::Id),
    ],
};

/// Activity types (§9.2 E603).
pub const ACTIVITY_TYPES: &[&str] = &[
    "import",
    "annotate",
    "review",
    "predict",
    "resample",
    "register",
    "derive",
    "deidentify",
    "transcode",
    "other",
];

static ACTIVITY: Spec = Spec {
    required: &["id", "type", "agent"],
    additional: false,
    props: &[
        ("id", T::Id),
        ("type", T::Enum(ACTIVITY_TYPES)),
        ("agent", T::Id),
        ("started", T::Str),
        ("ended", T::Str),
        ("tool", T::Str),
        ("inputs", T::Arr(&T::Str, None, None)),
        ("outputs", T::Arr(&T::Str, None, None)),
        ("params", T::AnyObj),
    ],
};

static QUALITY: Spec = Spec {
    required: &["status"],
    additional: false,
    props: &[
        (
            "status",
            T::Enum(&[
                "draft",
                "submitted",
                "reviewed",
                "approved",
                "rejected",
                "deprecated",
            ]),
        ),
        ("confidence", T::Num(Some(0.0), Some(1.0))),
        ("reviewed_by", T::Arr(&T::Id, None, None)),
        ("agreement", T::Arr(&T::Obj(&AGREEMENT), None, None)),
        ("issues", T::Arr(&T::Obj(&ISSUE), None, None)),
        ("edit_effort_s", T::Num(Some(0.0), None)),
    ],
};

static AGREEMENT: Spec = Spec {
    required: &["metric", "value", "against"],
    additional: false,
    props: &[
        ("metric", T::Str),
        ("value", T::Num(None, None)),
        ("against", T::Str),
        ("per_class", T::PerClass),
    ],
};

static ISSUE: Spec = Spec {
    required: &["code", "severity"],
    additional: false,
    props: &[
        ("code", T::Str),
        ("severity", T::Enum(&["info", "warning", "error"])),
        ("class_ids", T::Arr(&CLASS_ID, None, None)),
        ("note", T::Str),
    ],
};

static SPLIT: Spec = Spec {
    required: &["set_id", "partition"],
    additional: false,
    props: &[
        ("set_id", T::NonEmptyStr),
        ("partition", T::Str),
        ("fold", T::Int(Some(0), None)),
        ("assigned_by", T::Str),
        ("assigned_at", T::Str),
        ("manifest_sha256", T::Hex64),
    ],
};

static DEIDENTIFICATION: Spec = Spec {
    required: &["method"],
    additional: false,
    props: &[
        ("method", T::Str),
        ("profile", T::Str),
        ("date_shift_days", T::Int(None, None)),
        ("id_mapping", T::Enum(&["external", "irreversible", "none"])),
        ("performed_by", T::Id),
        ("date", T::Str),
        ("burned_in_annotation_checked", T::Bool),
    ],
};

/// One schema violation: JSON pointer (no leading `/`, `""` for the root)
/// and message.
pub type Violation = (String, String);

/// Check `doc` against the sample-document schema.
pub fn check_document(doc: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    check_obj(doc, &DOCUMENT, "", &mut out);
    // The label set's form decides its further required members.
    if let Some(ls) = doc.get("label_set").and_then(Value::as_object) {
        let need: &[&str] = match ls.get("form").and_then(Value::as_str) {
            Some("inline") => &["classes"],
            Some("ref") => &["uri", "sha256"],
            _ => &[],
        };
        for n in need {
            if !ls.contains_key(*n) {
                out.push((
                    "label_set".to_string(),
                    format!("'{n}' is a required property"),
                ));
            }
        }
    }
    out
}

fn join(ptr: &str, key: &str) -> String {
    if ptr.is_empty() {
        key.to_string()
    } else {
        format!("{ptr}/{key}")
    }
}

fn py_repr(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        other => other.to_string(),
    }
}

fn is_integer(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => {
            let f = n.as_f64()?;
            (n.is_i64() || n.is_u64() || f.fract() == 0.0).then_some(f)
        }
        _ => None,
    }
}

fn check_obj(v: &Value, spec: &Spec, ptr: &str, out: &mut Vec<Violation>) {
    let Some(map) = v.as_object() else {
        out.push((
            ptr.to_string(),
            format!("{} is not of type 'object'", py_repr(v)),
        ));
        return;
    };
    for r in spec.required {
        if !map.contains_key(*r) {
            out.push((ptr.to_string(), format!("'{r}' is a required property")));
        }
    }
    let mut extra = Vec::new();
    for (k, val) in map {
        match spec.props.iter().find(|(n, _)| n == k) {
            Some((_, t)) => check(val, t, &join(ptr, k), out),
            None if !spec.additional => extra.push(format!("'{k}'")),
            None => {}
        }
    }
    if !extra.is_empty() {
        let verb = if extra.len() == 1 { "was" } else { "were" };
        out.push((
            ptr.to_string(),
            format!(
                "Additional properties are not allowed ({} {verb} unexpected)",
                extra.join(", ")
            ),
        ));
    }
}

fn check_map(map: &Map<String, Value>, t: &T, ptr: &str, out: &mut Vec<Violation>) {
    for (k, v) in map {
        check(v, t, &join(ptr, k), out);
    }
}

fn check(v: &Value, t: &T, ptr: &str, out: &mut Vec<Violation>) {
    let mut bad = |why: String| out.push((ptr.to_string(), why));
    match t {
        T::Any => {}
        T::Str => {
            if !v.is_string() {
                bad(format!("{} is not of type 'string'", py_repr(v)));
            }
        }
        T::NonEmptyStr => match v.as_str() {
            None => bad(format!("{} is not of type 'string'", py_repr(v))),
            Some("") => bad("'' should be non-empty".into()),
            Some(_) => {}
        },
        T::Id => match v.as_str() {
            None => bad(format!("{} is not of type 'string'", py_repr(v))),
            Some(s) if !pattern_id(s) => {
                bad(format!("'{s}' does not match '^[A-Za-z0-9_.-]{{1,128}}$'"))
            }
            Some(_) => {}
        },
        T::Hex64 => match v.as_str() {
            None => bad(format!("{} is not of type 'string'", py_repr(v))),
            Some(s)
                if !(s.len() == 64
                    && s.bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))) =>
            {
                bad(format!("'{s}' does not match '^[0-9a-f]{{64}}$'"))
            }
            Some(_) => {}
        },
        T::ClassKey => match v.as_str() {
            None => bad(format!("{} is not of type 'string'", py_repr(v))),
            Some(s) if !pattern_key(s) => {
                bad(format!("'{s}' does not match '^[a-z0-9][a-z0-9_]*$'"))
            }
            Some(_) => {}
        },
        T::Int(lo, hi) => match is_integer(v) {
            None => bad(format!("{} is not of type 'integer'", py_repr(v))),
            Some(f) => bounds(f, lo.map(|x| x as f64), hi.map(|x| x as f64), v, &mut bad),
        },
        T::Num(lo, hi) => match v.as_f64() {
            None => bad(format!("{} is not of type 'number'", py_repr(v))),
            Some(f) => bounds(f, *lo, *hi, v, &mut bad),
        },
        T::Bool => {
            if !v.is_boolean() {
                bad(format!("{} is not of type 'boolean'", py_repr(v)));
            }
        }
        T::Enum(vocab) => {
            if !v.as_str().is_some_and(|s| vocab.contains(&s)) {
                let list: Vec<String> = vocab.iter().map(|s| format!("'{s}'")).collect();
                bad(format!(
                    "{} is not one of [{}]",
                    py_repr(v),
                    list.join(", ")
                ));
            }
        }
        T::EnumOrNull(vocab) => {
            if !(v.is_null() || v.as_str().is_some_and(|s| vocab.contains(&s))) {
                let list: Vec<String> = vocab.iter().map(|s| format!("'{s}'")).collect();
                bad(format!(
                    "{} is not one of [{}, None]",
                    py_repr(v),
                    list.join(", ")
                ));
            }
        }
        T::Obj(spec) => check_obj(v, spec, ptr, out),
        T::AnyObj => {
            if !v.is_object() {
                bad(format!("{} is not of type 'object'", py_repr(v)));
            }
        }
        T::MapOf(inner) => match v.as_object() {
            None => bad(format!("{} is not of type 'object'", py_repr(v))),
            Some(m) => check_map(m, inner, ptr, out),
        },
        T::Arr(inner, min, max) => match v.as_array() {
            None => bad(format!("{} is not of type 'array'", py_repr(v))),
            Some(items) => {
                if min.is_some_and(|m| items.len() < m) {
                    bad(format!("{} should be non-empty or longer", v));
                }
                if max.is_some_and(|m| items.len() > m) {
                    bad(format!("{v} is too long"));
                }
                for (i, item) in items.iter().enumerate() {
                    check(item, inner, &join(ptr, &i.to_string()), out);
                }
            }
        },
        T::PerClass => match v.as_object() {
            None => bad(format!("{} is not of type 'object'", py_repr(v))),
            Some(m) => {
                for (k, val) in m {
                    let key_ok =
                        (1..=5).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_digit());
                    if !key_ok {
                        out.push((
                            ptr.to_string(),
                            format!("Additional properties are not allowed ('{k}' was unexpected)"),
                        ));
                    } else if !val.is_number() {
                        out.push((
                            join(ptr, k),
                            format!("{} is not of type 'number'", py_repr(val)),
                        ));
                    }
                }
            }
        },
    }
}

fn bounds(f: f64, lo: Option<f64>, hi: Option<f64>, v: &Value, bad: &mut impl FnMut(String)) {
    if lo.is_some_and(|l| f < l) {
        bad(format!(
            "{v} is less than the minimum of {}",
            lo.unwrap_or_default()
        ));
    }
    if hi.is_some_and(|h| f > h) {
        bad(format!(
            "{v} is greater than the maximum of {}",
            hi.unwrap_or_default()
        ));
    }
}

fn pattern_id(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

fn pattern_key(s: &str) -> bool {
    let mut b = s.bytes();
    match b.next() {
        Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit() => {}
        _ => return false,
    }
    b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn minimal_document_passes() {
        let d = json!({"identity": {"sample_id": "v1", "subject_id": "SUBJ-1"}, "timepoints": [{"id": "tp0", "index": 0}]});
        assert!(check_document(&d).is_empty());
    }

    #[test]
    fn violations_carry_pointers() {
        let d = json!({"timepoints": [{"id": "tp 0", "index": -1}], "future_member": 1,
            "provenance": {"agents": [], "activities": [{"id": "a", "type": "vibecheck", "agent": "x"}]},
            "label_set": {"id": "x", "version": "1", "form": "ref"}});
        let v = check_document(&d);
        let ptrs: Vec<&str> = v.iter().map(|(p, _)| p.as_str()).collect();
        assert!(v.contains(&("".into(), "'identity' is a required property".into())));
        assert!(v.contains(&(
            "".into(),
            "Additional properties are not allowed ('future_member' was unexpected)".into()
        )));
        assert!(ptrs.contains(&"timepoints/0/id"));
        assert!(ptrs.contains(&"timepoints/0/index"));
        assert!(ptrs.contains(&"provenance/activities/0/type"));
        assert!(v.contains(&("label_set".into(), "'uri' is a required property".into())));
        assert!(v.contains(&("label_set".into(), "'sha256' is a required property".into())));
    }

    #[test]
    fn integral_floats_are_integers_and_keys_follow_the_pattern() {
        let d = json!({"identity": {"sample_id": "a", "subject_id": "b"}, "timepoints": [{"id": "t", "index": 0.0}],
            "label_set": {"id": "l", "version": "1", "form": "inline", "classes": [{"id": 1, "key": "Liver", "name": "L"}]}});
        let v = check_document(&d);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].0, "label_set/classes/0/key");
    }
}
