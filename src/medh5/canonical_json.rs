//! JSON values and the two serialisations medh5 hashes (see
//! `docs/medh5-format.md` §0, §3.3, §5.5, §5.6):
//!
//! * canonical JSON — keys sorted in byte order, no whitespace, non-ASCII raw,
//!   floats in Python repr (= `json.dumps(v, sort_keys=True, separators=(",", ":"),
//!   ensure_ascii=False)`);
//! * meta JSON — members in insertion order, separators `", "` and `": "`
//!   (= `json.dumps(doc, ensure_ascii=False)`).

use super::pyfloat;

/// A JSON value whose objects keep their member order and whose numbers keep
/// their Python type (int or float), so that both serialisations are exact.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null` (Python `None`).
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A Python `int` that fits in `i64`.
    Int(i64),
    /// A Python `int` above `i64::MAX`.
    UInt(u64),
    /// A Python `float` (non-finite values render `NaN`/`Infinity`).
    Float(f64),
    /// A string; serialised with only `"`, `\` and control characters
    /// escaped, non-ASCII raw.
    Str(String),
    /// An array, elements in order.
    Array(Vec<Json>),
    /// Members in insertion order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// An empty object.
    pub fn object() -> Self {
        Json::Object(Vec::new())
    }

    /// Append a member to an object (no effect on other values).
    pub fn push(&mut self, key: impl Into<String>, value: Json) {
        if let Json::Object(members) = self {
            members.push((key.into(), value));
        }
    }

    /// The member named `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Canonical JSON text (sorted keys, compact).
    pub fn to_canonical(&self) -> String {
        let mut out = String::new();
        write_value(&mut out, self, Style::Canonical);
        out
    }

    /// Meta JSON text (insertion order, `", "` / `": "`).
    pub fn to_meta(&self) -> String {
        let mut out = String::new();
        write_value(&mut out, self, Style::Meta);
        out
    }

    /// Convert from a `serde_json` value (object order as parsed; integers stay
    /// integers, every other number becomes a float).
    pub fn from_serde(v: &serde_json::Value) -> Self {
        match v {
            serde_json::Value::Null => Json::Null,
            serde_json::Value::Bool(b) => Json::Bool(*b),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Json::Int(i)
                } else if let Some(u) = n.as_u64() {
                    Json::UInt(u)
                } else {
                    Json::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            serde_json::Value::String(s) => Json::Str(s.clone()),
            serde_json::Value::Array(a) => Json::Array(a.iter().map(Json::from_serde).collect()),
            serde_json::Value::Object(o) => Json::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), Json::from_serde(v)))
                    .collect(),
            ),
        }
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Self {
        Json::Str(s.to_string())
    }
}
impl From<String> for Json {
    fn from(s: String) -> Self {
        Json::Str(s)
    }
}
impl From<i64> for Json {
    fn from(v: i64) -> Self {
        Json::Int(v)
    }
}
impl From<f64> for Json {
    fn from(v: f64) -> Self {
        Json::Float(v)
    }
}
impl From<bool> for Json {
    fn from(v: bool) -> Self {
        Json::Bool(v)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Canonical,
    Meta,
}

/// Append `s` as a JSON string the way Python's `json.dumps(..., ensure_ascii=False)`
/// does: `"` and `\` escaped, `\n \r \t \b \f` short forms, other control
/// characters below 0x20 as `\u00XX` (lowercase hex), everything else raw.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_value(out: &mut String, v: &Json, style: Style) {
    let (item_sep, key_sep) = match style {
        Style::Canonical => (",", ":"),
        Style::Meta => (", ", ": "),
    };
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(i) => out.push_str(&i.to_string()),
        Json::UInt(u) => out.push_str(&u.to_string()),
        Json::Float(f) => out.push_str(&pyfloat::json_repr(*f)),
        Json::Str(s) => write_string(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                write_value(out, item, style);
            }
            out.push(']');
        }
        Json::Object(members) => {
            let mut refs: Vec<&(String, Json)> = members.iter().collect();
            if style == Style::Canonical {
                // Byte order of UTF-8 = code point order = Rust `str` order.
                refs.sort_by(|a, b| a.0.cmp(&b.0));
            }
            out.push('{');
            for (i, (k, val)) in refs.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                write_string(out, k);
                out.push_str(key_sep);
                write_value(out, val, style);
            }
            out.push('}');
        }
    }
}

/// A [`Json`] value as a `serde_json` value (non-finite floats become null).
pub fn to_value(j: &Json) -> serde_json::Value {
    match j {
        Json::Null => serde_json::Value::Null,
        Json::Bool(b) => serde_json::Value::Bool(*b),
        Json::Int(i) => serde_json::json!(i),
        Json::UInt(u) => serde_json::json!(u),
        Json::Float(f) => serde_json::Number::from_f64(*f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        Json::Str(s) => serde_json::Value::String(s.clone()),
        Json::Array(a) => serde_json::Value::Array(a.iter().map(to_value).collect()),
        Json::Object(m) => {
            serde_json::Value::Object(m.iter().map(|(k, v)| (k.clone(), to_value(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_json() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(Json::Int),
            (i64::MAX as u64 + 1..=u64::MAX).prop_map(Json::UInt),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Json::Float),
            any::<String>().prop_map(Json::Str),
        ];
        leaf.prop_recursive(3, 24, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
                proptest::collection::vec((any::<String>(), inner), 0..5).prop_map(|m| {
                    let mut seen = std::collections::BTreeSet::new();
                    Json::Object(
                        m.into_iter()
                            .filter(|(k, _)| seen.insert(k.clone()))
                            .collect(),
                    )
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn serialisations_parse_back(v in arb_json()) {
            // Both texts are JSON that serde_json reads back to the same value.
            let meta: serde_json::Value = serde_json::from_str(&v.to_meta()).unwrap();
            prop_assert_eq!(Json::from_serde(&meta).to_meta(), v.to_meta());
            let canon: serde_json::Value = serde_json::from_str(&v.to_canonical()).unwrap();
            prop_assert_eq!(Json::from_serde(&canon).to_canonical(), v.to_canonical());
        }
    }

    fn obj(members: Vec<(&str, Json)>) -> Json {
        Json::Object(
            members
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    #[test]
    fn canonical_sorts_and_compacts() {
        let v = obj(vec![
            ("medh5_version", "1.0".into()),
            ("medh5_kind", "sample".into()),
            (
                "medh5_profiles",
                Json::Array(vec!["core".into(), "seg".into()]),
            ),
        ]);
        assert_eq!(
            v.to_canonical(),
            r#"{"medh5_kind":"sample","medh5_profiles":["core","seg"],"medh5_version":"1.0"}"#
        );
        assert_eq!(
            v.to_meta(),
            r#"{"medh5_version": "1.0", "medh5_kind": "sample", "medh5_profiles": ["core", "seg"]}"#
        );
    }

    #[test]
    fn escapes_like_python() {
        let v = Json::Str("a\"b\\c\nd\te\u{1}f\u{7f}é\u{2028}😀\u{8}\u{c}\r".to_string());
        assert_eq!(
            v.to_canonical(),
            "\"a\\\"b\\\\c\\nd\\te\\u0001f\u{7f}é\u{2028}😀\\b\\f\\r\""
        );
    }

    #[test]
    fn numbers() {
        let v = Json::Array(vec![
            Json::Int(-3),
            Json::UInt(u64::MAX),
            Json::Float(2.0),
            Json::Float(0.8),
            Json::Float(f64::NAN),
            Json::Float(1e-5),
            Json::Null,
            Json::Bool(true),
        ]);
        assert_eq!(
            v.to_meta(),
            "[-3, 18446744073709551615, 2.0, 0.8, NaN, 1e-05, null, true]"
        );
    }

    #[test]
    fn sorting_is_byte_order() {
        let v = obj(vec![
            ("é", Json::Int(1)),
            ("z", Json::Int(2)),
            ("Z", Json::Int(3)),
        ]);
        assert_eq!(v.to_canonical(), r#"{"Z":3,"z":2,"é":1}"#);
    }

    #[test]
    fn from_serde_keeps_order_and_int_float() {
        let parsed: serde_json::Value =
            serde_json::from_str(r#"{"b": 1, "a": 1.0, "c": [true, null, "x"]}"#).unwrap();
        let v = Json::from_serde(&parsed);
        assert_eq!(v.to_meta(), r#"{"b": 1, "a": 1.0, "c": [true, null, "x"]}"#);
    }
}
