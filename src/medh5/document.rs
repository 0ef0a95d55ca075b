//! The sample document stored in `/meta` (spec digest `shared/spec/medh5.md`
//! §3): a typed model of the parts whose serialisation the reference fixes
//! (identity, timepoints, cohort, label set), raw JSON for the rest, the exact
//! meta serialisation (§3.3) and the label-set `sha256` (§3.4).

use super::canonical_json::Json;
use super::integrity::{hex_digest, DigestAlgo};
use crate::medh5::error::{Error, Result};

fn e005(message: impl Into<String>) -> Error {
    Error::Code {
        code: "E005".to_string(),
        message: message.into(),
    }
}

/// Whether `id` is a valid object/timepoint id: `[A-Za-z0-9_.-]{1,128}`, not `meta`.
pub fn is_valid_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id != "meta"
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

/// `identity`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Identity {
    pub sample_id: String,
    pub subject_id: String,
    pub sex: Option<String>,
    pub laterality: Option<String>,
    pub bodypart: Option<String>,
    /// Other members, in their original order.
    pub extra: Vec<(String, Json)>,
}

/// One entry of `timepoints`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Timepoint {
    pub id: String,
    pub index: u64,
    pub label: Option<String>,
    pub date: Option<String>,
    /// A JSON number (int or float, kept as given).
    pub days_from_baseline: Option<Json>,
    pub study_uid: Option<String>,
    pub subject_age_years: Option<Json>,
    pub description: Option<String>,
    pub series_uids: Option<Json>,
}

/// One class of an inline label set.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LabelClass {
    pub id: u16,
    pub key: String,
    pub name: String,
    pub parents: Vec<u16>,
    pub category: Option<String>,
    pub color: Option<Json>,
    pub codes: Vec<Json>,
    pub laterality: Option<String>,
    pub properties: Option<Json>,
}

/// A relation between two classes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Relation {
    pub subject: u16,
    pub predicate: String,
    pub object: u16,
}

/// Inline classes or a reference to an external set.
#[derive(Clone, Debug, PartialEq)]
pub enum LabelSetForm {
    Inline {
        classes: Vec<LabelClass>,
        relations: Vec<Relation>,
        skeletons: Vec<Json>,
    },
    Ref {
        uri: String,
        sha256: String,
    },
}

/// `label_set`.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelSet {
    pub id: String,
    pub version: String,
    pub form: LabelSetForm,
}

impl LabelClass {
    /// A class whose name is the key capitalised (the reference's `from_keys`).
    pub fn from_key(id: u16, key: &str) -> Self {
        let mut chars = key.chars();
        let name = match chars.next() {
            Some(first) => first.to_uppercase().chain(chars).collect(),
            None => String::new(),
        };
        LabelClass {
            id,
            key: key.to_string(),
            name,
            ..LabelClass::default()
        }
    }

    pub fn to_json(&self) -> Json {
        let mut o = Json::object();
        o.push("id", Json::Int(i64::from(self.id)));
        o.push("key", Json::Str(self.key.clone()));
        o.push("name", Json::Str(self.name.clone()));
        if !self.parents.is_empty() {
            o.push(
                "parents",
                Json::Array(
                    self.parents
                        .iter()
                        .map(|&p| Json::Int(i64::from(p)))
                        .collect(),
                ),
            );
        }
        push_str(&mut o, "category", &self.category);
        if let Some(c) = &self.color {
            o.push("color", c.clone());
        }
        if !self.codes.is_empty() {
            o.push("codes", Json::Array(self.codes.clone()));
        }
        push_str(&mut o, "laterality", &self.laterality);
        if let Some(p) = &self.properties {
            if !matches!(p, Json::Object(m) if m.is_empty()) {
                o.push("properties", p.clone());
            }
        }
        o
    }
}

impl Relation {
    pub fn to_json(&self) -> Json {
        let mut o = Json::object();
        o.push("subject", Json::Int(i64::from(self.subject)));
        o.push("predicate", Json::Str(self.predicate.clone()));
        o.push("object", Json::Int(i64::from(self.object)));
        o
    }
}

impl LabelSet {
    /// An inline set of classes `1..=n` named by `keys` (`from_keys`).
    pub fn from_keys(id: &str, version: &str, keys: &[&str]) -> Self {
        LabelSet {
            id: id.to_string(),
            version: version.to_string(),
            form: LabelSetForm::Inline {
                classes: keys
                    .iter()
                    .enumerate()
                    .map(|(i, k)| LabelClass::from_key(i as u16 + 1, k))
                    .collect(),
                relations: Vec::new(),
                skeletons: Vec::new(),
            },
        }
    }

    /// The inline classes (empty for a `ref` set).
    pub fn classes(&self) -> &[LabelClass] {
        match &self.form {
            LabelSetForm::Inline { classes, .. } => classes,
            LabelSetForm::Ref { .. } => &[],
        }
    }

    /// The set's `sha256` (§3.4): stored for a `ref` set, computed for an
    /// inline one from the canonical JSON of `{id, version, classes,
    /// relations (sorted, if any), skeletons (sorted by id, if any)}`.
    pub fn sha256(&self) -> String {
        match &self.form {
            LabelSetForm::Ref { sha256, .. } => sha256.clone(),
            LabelSetForm::Inline {
                classes,
                relations,
                skeletons,
            } => {
                let mut o = Json::object();
                o.push("id", Json::Str(self.id.clone()));
                o.push("version", Json::Str(self.version.clone()));
                o.push(
                    "classes",
                    Json::Array(classes.iter().map(LabelClass::to_json).collect()),
                );
                if !relations.is_empty() {
                    let mut r = relations.clone();
                    r.sort();
                    o.push(
                        "relations",
                        Json::Array(r.iter().map(Relation::to_json).collect()),
                    );
                }
                if !skeletons.is_empty() {
                    let mut s = skeletons.clone();
                    s.sort_by_key(|k| k.get("id").map(Json::to_canonical).unwrap_or_default());
                    o.push("skeletons", Json::Array(s));
                }
                hex_digest(DigestAlgo::Sha256, o.to_canonical().as_bytes())
            }
        }
    }

    pub fn to_json(&self) -> Json {
        let mut o = Json::object();
        o.push("id", Json::Str(self.id.clone()));
        o.push("version", Json::Str(self.version.clone()));
        o.push("sha256", Json::Str(self.sha256()));
        match &self.form {
            LabelSetForm::Ref { uri, .. } => {
                o.push("form", "ref".into());
                o.push("uri", Json::Str(uri.clone()));
            }
            LabelSetForm::Inline {
                classes,
                relations,
                skeletons,
            } => {
                o.push("form", "inline".into());
                o.push(
                    "classes",
                    Json::Array(classes.iter().map(LabelClass::to_json).collect()),
                );
                if !relations.is_empty() {
                    o.push(
                        "relations",
                        Json::Array(relations.iter().map(Relation::to_json).collect()),
                    );
                }
                if !skeletons.is_empty() {
                    o.push("skeletons", Json::Array(skeletons.clone()));
                }
            }
        }
        o
    }

    /// Validate class ids (1..=65534, unique, E303/E306) and keys.
    pub fn validate(&self) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for c in self.classes() {
            if c.id == 0 || c.id == u16::MAX {
                return Err(Error::Code {
                    code: "E303".into(),
                    message: format!("class id {} is reserved", c.id),
                });
            }
            if !seen.insert(c.id) {
                return Err(e005(format!("class id {} appears twice", c.id)));
            }
            if c.key.is_empty() {
                return Err(e005(format!("class {} has an empty key", c.id)));
            }
        }
        if let LabelSetForm::Ref { uri, sha256 } = &self.form {
            if uri.is_empty() || sha256.is_empty() {
                return Err(Error::Code {
                    code: "E305".into(),
                    message: "a ref label set needs uri and sha256".into(),
                });
            }
        }
        Ok(())
    }
}

fn push_str(o: &mut Json, key: &str, v: &Option<String>) {
    if let Some(s) = v {
        o.push(key, Json::Str(s.clone()));
    }
}

/// The whole `/meta` document.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SampleDocument {
    pub identity: Identity,
    pub timepoints: Vec<Timepoint>,
    /// `cohort` members (written known keys first, then extras in order).
    pub cohort: Vec<(String, Json)>,
    pub label_set: Option<LabelSet>,
    pub provenance: Option<Json>,
    pub quality: Option<Json>,
    pub splits: Option<Json>,
    pub acquisition: Option<Json>,
    pub deidentification: Option<Json>,
    pub extra: Option<Json>,
}

const COHORT_ORDER: [&str; 5] = [
    "dataset_id",
    "site_id",
    "scanner_id",
    "group_id",
    "acquisition_protocol",
];

impl Timepoint {
    pub fn new(id: &str, index: u64) -> Self {
        Timepoint {
            id: id.to_string(),
            index,
            ..Timepoint::default()
        }
    }

    pub fn to_json(&self) -> Json {
        let mut o = Json::object();
        o.push("id", Json::Str(self.id.clone()));
        o.push("index", Json::Int(self.index as i64));
        push_str(&mut o, "label", &self.label);
        push_str(&mut o, "date", &self.date);
        if let Some(v) = &self.days_from_baseline {
            o.push("days_from_baseline", v.clone());
        }
        push_str(&mut o, "study_uid", &self.study_uid);
        if let Some(v) = &self.subject_age_years {
            o.push("subject_age_years", v.clone());
        }
        push_str(&mut o, "description", &self.description);
        if let Some(v) = &self.series_uids {
            o.push("series_uids", v.clone());
        }
        o
    }
}

fn is_empty_json(v: &Json) -> bool {
    match v {
        Json::Object(m) => m.iter().all(|(_, x)| is_empty_json(x)),
        Json::Array(a) => a.is_empty(),
        Json::Null => true,
        _ => false,
    }
}

impl SampleDocument {
    /// A document with one implicit timepoint `tp0` (index 0).
    pub fn new(sample_id: &str, subject_id: &str) -> Self {
        SampleDocument {
            identity: Identity {
                sample_id: sample_id.to_string(),
                subject_id: subject_id.to_string(),
                ..Identity::default()
            },
            timepoints: vec![Timepoint::new("tp0", 0)],
            ..SampleDocument::default()
        }
    }

    /// The document as JSON in the reference's member order (§3.3).
    pub fn to_json(&self) -> Json {
        let mut doc = Json::object();
        let mut id = Json::object();
        id.push("sample_id", Json::Str(self.identity.sample_id.clone()));
        id.push("subject_id", Json::Str(self.identity.subject_id.clone()));
        push_str(&mut id, "sex", &self.identity.sex);
        push_str(&mut id, "laterality", &self.identity.laterality);
        push_str(&mut id, "bodypart", &self.identity.bodypart);
        for (k, v) in &self.identity.extra {
            id.push(k.clone(), v.clone());
        }
        doc.push("identity", id);
        doc.push(
            "timepoints",
            Json::Array(self.timepoints.iter().map(Timepoint::to_json).collect()),
        );
        if !self.cohort.is_empty() {
            let mut c = Json::object();
            for key in COHORT_ORDER {
                if let Some((_, v)) = self.cohort.iter().find(|(k, _)| k == key) {
                    c.push(key, v.clone());
                }
            }
            for (k, v) in &self.cohort {
                if !COHORT_ORDER.contains(&k.as_str()) {
                    c.push(k.clone(), v.clone());
                }
            }
            doc.push("cohort", c);
        }
        if let Some(ls) = &self.label_set {
            doc.push("label_set", ls.to_json());
        }
        if let Some(p) = &self.provenance {
            if !is_empty_json(p) {
                doc.push("provenance", p.clone());
            }
        }
        for (key, v) in [
            ("quality", &self.quality),
            ("splits", &self.splits),
            ("acquisition", &self.acquisition),
            ("deidentification", &self.deidentification),
            ("extra", &self.extra),
        ] {
            if let Some(v) = v {
                doc.push(key, v.clone());
            }
        }
        doc
    }

    /// The exact `/meta` string (§3.3).
    pub fn to_meta(&self) -> String {
        self.to_json().to_meta()
    }

    /// Schema checks this model can make: ids, non-empty identity, timepoints
    /// non-empty, unique and dense (E108), label set (E303/E305).
    pub fn validate(&self) -> Result<()> {
        if self.identity.sample_id.is_empty() || self.identity.subject_id.is_empty() {
            return Err(e005("identity needs non-empty sample_id and subject_id"));
        }
        if self.timepoints.is_empty() {
            return Err(e005("timepoints must not be empty"));
        }
        let mut indexes: Vec<u64> = Vec::new();
        for (i, tp) in self.timepoints.iter().enumerate() {
            if !is_valid_id(&tp.id) {
                return Err(Error::Code {
                    code: "E003".into(),
                    message: format!("bad timepoint id {:?}", tp.id),
                });
            }
            if self.timepoints[..i].iter().any(|t| t.id == tp.id) {
                return Err(Error::Code {
                    code: "E108".into(),
                    message: format!("timepoint id {:?} repeated", tp.id),
                });
            }
            indexes.push(tp.index);
        }
        indexes.sort_unstable();
        if indexes.iter().enumerate().any(|(i, &x)| x != i as u64) {
            return Err(Error::Code {
                code: "E108".into(),
                message: format!("timepoint indexes {indexes:?} are not 0,1,2,…"),
            });
        }
        if let Some(ls) = &self.label_set {
            ls.validate()?;
        }
        Ok(())
    }

    /// Parse `/meta` text.
    pub fn from_meta(text: &str) -> Result<Self> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| Error::Code {
            code: "E004".into(),
            message: format!("meta is not JSON: {e}"),
        })?;
        Self::from_json(&Json::from_serde(&v))
    }

    /// Build from a JSON object (E004 when not an object, E005 on schema errors).
    pub fn from_json(v: &Json) -> Result<Self> {
        let Json::Object(members) = v else {
            return Err(Error::Code {
                code: "E004".into(),
                message: "meta is not a JSON object".into(),
            });
        };
        let mut doc = SampleDocument::default();
        let mut have_identity = false;
        for (k, val) in members {
            match k.as_str() {
                "identity" => {
                    doc.identity = parse_identity(val)?;
                    have_identity = true;
                }
                "timepoints" => {
                    let Json::Array(items) = val else {
                        return Err(e005("timepoints must be an array"));
                    };
                    doc.timepoints = items.iter().map(parse_timepoint).collect::<Result<_>>()?;
                }
                "cohort" => match val {
                    Json::Object(m) => doc.cohort = m.clone(),
                    _ => return Err(e005("cohort must be an object")),
                },
                "label_set" => doc.label_set = Some(parse_label_set(val)?),
                "provenance" => doc.provenance = Some(val.clone()),
                "quality" => doc.quality = Some(val.clone()),
                "splits" => doc.splits = Some(val.clone()),
                "acquisition" => doc.acquisition = Some(val.clone()),
                "deidentification" => doc.deidentification = Some(val.clone()),
                "extra" => doc.extra = Some(val.clone()),
                other => return Err(e005(format!("unknown top-level member {other:?}"))),
            }
        }
        if !have_identity {
            return Err(e005("identity is required"));
        }
        doc.validate()?;
        Ok(doc)
    }
}

fn as_str(v: &Json, what: &str) -> Result<String> {
    match v {
        Json::Str(s) => Ok(s.clone()),
        _ => Err(e005(format!("{what} must be a string"))),
    }
}

fn as_u16(v: &Json, what: &str) -> Result<u16> {
    match v {
        Json::Int(i) => u16::try_from(*i).map_err(|_| e005(format!("{what} {i} out of range"))),
        _ => Err(e005(format!("{what} must be an integer"))),
    }
}

fn parse_identity(v: &Json) -> Result<Identity> {
    let Json::Object(m) = v else {
        return Err(e005("identity must be an object"));
    };
    let mut id = Identity::default();
    for (k, val) in m {
        match k.as_str() {
            "sample_id" => id.sample_id = as_str(val, "sample_id")?,
            "subject_id" => id.subject_id = as_str(val, "subject_id")?,
            "sex" => id.sex = Some(as_str(val, "sex")?),
            "laterality" => id.laterality = Some(as_str(val, "laterality")?),
            "bodypart" => id.bodypart = Some(as_str(val, "bodypart")?),
            _ => id.extra.push((k.clone(), val.clone())),
        }
    }
    Ok(id)
}

fn parse_timepoint(v: &Json) -> Result<Timepoint> {
    let Json::Object(m) = v else {
        return Err(e005("a timepoint must be an object"));
    };
    let mut tp = Timepoint::default();
    let mut have = (false, false);
    for (k, val) in m {
        match k.as_str() {
            "id" => {
                tp.id = as_str(val, "timepoint id")?;
                have.0 = true;
            }
            "index" => {
                tp.index = match val {
                    Json::Int(i) if *i >= 0 => *i as u64,
                    _ => return Err(e005("timepoint index must be an integer >= 0")),
                };
                have.1 = true;
            }
            "label" => tp.label = Some(as_str(val, "label")?),
            "date" => tp.date = Some(as_str(val, "date")?),
            "days_from_baseline" => tp.days_from_baseline = Some(val.clone()),
            "study_uid" => tp.study_uid = Some(as_str(val, "study_uid")?),
            "subject_age_years" => tp.subject_age_years = Some(val.clone()),
            "description" => tp.description = Some(as_str(val, "description")?),
            "series_uids" => tp.series_uids = Some(val.clone()),
            other => return Err(e005(format!("unknown timepoint member {other:?}"))),
        }
    }
    if !(have.0 && have.1) {
        return Err(e005("a timepoint needs id and index"));
    }
    Ok(tp)
}

fn parse_label_set(v: &Json) -> Result<LabelSet> {
    let get = |k: &str| v.get(k);
    let id = as_str(
        get("id").ok_or_else(|| e005("label_set.id missing"))?,
        "label_set.id",
    )?;
    let version = as_str(
        get("version").ok_or_else(|| e005("label_set.version missing"))?,
        "label_set.version",
    )?;
    let form = match get("form") {
        Some(Json::Str(f)) => f.as_str(),
        None => "inline",
        _ => return Err(e005("label_set.form must be a string")),
    };
    let form = if form == "ref" {
        LabelSetForm::Ref {
            uri: get("uri")
                .map(|u| as_str(u, "uri"))
                .transpose()?
                .unwrap_or_default(),
            sha256: get("sha256")
                .map(|u| as_str(u, "sha256"))
                .transpose()?
                .unwrap_or_default(),
        }
    } else {
        let classes = match get("classes") {
            Some(Json::Array(a)) => a.iter().map(parse_class).collect::<Result<Vec<_>>>()?,
            None => Vec::new(),
            _ => return Err(e005("classes must be an array")),
        };
        let relations = match get("relations") {
            Some(Json::Array(a)) => a
                .iter()
                .map(|r| {
                    Ok(Relation {
                        subject: as_u16(r.get("subject").unwrap_or(&Json::Null), "subject")?,
                        predicate: as_str(r.get("predicate").unwrap_or(&Json::Null), "predicate")?,
                        object: as_u16(r.get("object").unwrap_or(&Json::Null), "object")?,
                    })
                })
                .collect::<Result<Vec<_>>>()?,
            _ => Vec::new(),
        };
        let skeletons = match get("skeletons") {
            Some(Json::Array(a)) => a.clone(),
            _ => Vec::new(),
        };
        LabelSetForm::Inline {
            classes,
            relations,
            skeletons,
        }
    };
    Ok(LabelSet { id, version, form })
}

fn parse_class(v: &Json) -> Result<LabelClass> {
    let mut c = LabelClass {
        id: as_u16(v.get("id").unwrap_or(&Json::Null), "class id")?,
        key: as_str(v.get("key").unwrap_or(&Json::Null), "class key")?,
        ..LabelClass::default()
    };
    c.name = match v.get("name") {
        Some(n) => as_str(n, "class name")?,
        None => c.key.clone(),
    };
    if let Some(Json::Array(p)) = v.get("parents") {
        c.parents = p
            .iter()
            .map(|x| as_u16(x, "parent"))
            .collect::<Result<_>>()?;
    }
    c.category = v
        .get("category")
        .map(|x| as_str(x, "category"))
        .transpose()?;
    c.color = v.get("color").cloned();
    if let Some(Json::Array(codes)) = v.get("codes") {
        c.codes = codes.clone();
    }
    c.laterality = v
        .get("laterality")
        .map(|x| as_str(x, "laterality"))
        .transpose()?;
    c.properties = v.get("properties").cloned();
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn meta_text_round_trips(sample in "\\PC{1,12}", subject in any::<String>().prop_filter("non-empty", |s| !s.is_empty()),
                                 sex in proptest::option::of(any::<String>()), days in proptest::option::of(any::<i32>()),
                                 age in proptest::option::of(-1e6f64..1e6), n_tp in 1usize..4) {
            let mut d = SampleDocument::new(&sample, &subject);
            d.identity.sex = sex;
            d.timepoints = (0..n_tp).map(|i| Timepoint::new(&format!("tp{i}"), i as u64)).collect();
            d.timepoints[0].days_from_baseline = days.map(|v| Json::Int(i64::from(v)));
            d.timepoints[0].subject_age_years = age.map(Json::Float);
            d.label_set = Some(LabelSet::from_keys("ls", "1", &["a", "b"]));
            let text = d.to_meta();
            let back = SampleDocument::from_meta(&text).unwrap();
            prop_assert_eq!(&back, &d);
            prop_assert_eq!(back.to_meta(), text);
        }
    }

    #[test]
    fn minimal_documents_match_spec() {
        let d = SampleDocument::new("v1", "SUBJ-1");
        assert_eq!(
            d.to_meta(),
            r#"{"identity": {"sample_id": "v1", "subject_id": "SUBJ-1"}, "timepoints": [{"id": "tp0", "index": 0}]}"#
        );
        let mut d = SampleDocument::new("v1b", "SUBJ-1");
        d.label_set = Some(LabelSet::from_keys(
            "demo-organs",
            "1.0.0",
            &["liver", "spleen", "kidney"],
        ));
        assert_eq!(
            d.to_meta(),
            r#"{"identity": {"sample_id": "v1b", "subject_id": "SUBJ-1"}, "timepoints": [{"id": "tp0", "index": 0}], "label_set": {"id": "demo-organs", "version": "1.0.0", "sha256": "bf37ae41671b4a2426d88d7205b779597043c3e258dc7e4d065188fb639d9b93", "form": "inline", "classes": [{"id": 1, "key": "liver", "name": "Liver"}, {"id": 2, "key": "spleen", "name": "Spleen"}, {"id": 3, "key": "kidney", "name": "Kidney"}]}}"#
        );
        assert_eq!(
            hex_digest(DigestAlgo::Sha256, d.to_meta().as_bytes()),
            "7f41422b109317d813f02c792957d2be5a9a4d8abfdc7bd5b19ffc17d170d0bd"
        );
    }

    #[test]
    fn validation_errors() {
        let mut d = SampleDocument::new("a", "b");
        d.timepoints.push(Timepoint::new("tp1", 2));
        assert!(matches!(d.validate(), Err(Error::Code { code, .. }) if code == "E108"));
        let mut d = SampleDocument::new("a", "");
        assert!(d.validate().is_err());
        d.identity.subject_id = "b".into();
        d.timepoints[0].id = "meta".into();
        assert!(d.validate().is_err());
        assert!(SampleDocument::from_meta("[1]").is_err());
        assert!(SampleDocument::from_meta("{\"identity\": {\"sample_id\": \"a\", \"subject_id\": \"b\"}, \"timepoints\": [{\"id\": \"t\", \"index\": 0}], \"bogus\": 1}").is_err());
        assert!(is_valid_id("CT_tp0.v-1"));
        assert!(!is_valid_id("a/b"));
        assert!(!is_valid_id(""));
    }

    #[test]
    fn meta_round_trips() {
        let text = r#"{"identity": {"sample_id": "s", "subject_id": "u", "sex": "F", "x": [1, 2.5]}, "timepoints": [{"id": "tp0", "index": 0, "days_from_baseline": 3}], "extra": {"k": "é\n"}}"#;
        let d = SampleDocument::from_meta(text).unwrap();
        assert_eq!(d.to_meta(), text);
    }
}
