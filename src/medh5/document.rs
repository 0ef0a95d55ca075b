//! The sample document stored in `/meta` (`docs/medh5-format.md`
//! §3): a typed model of the parts whose serialisation the reference fixes
//! (identity, timepoints, cohort, label set), raw JSON for the rest, the exact
//! meta serialisation (§3.3) and the label-set `sha256` (§3.4).

use super::canonical_json::Json;
use super::integrity::{hex_digest, DigestAlgo};
use crate::error::{Error, Result};

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

/// The document's `identity` object (§3.1): who and what the sample is.
///
/// Serialised (§3.3) as `sample_id`, `subject_id`, then `sex`, `laterality`,
/// `bodypart` when set, then [`extra`](Self::extra) in its original order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Identity {
    /// The sample's own id; required and non-empty (E005 otherwise).
    pub sample_id: String,
    /// Id of the subject the sample belongs to; required and non-empty. Several samples may share one subject.
    pub subject_id: String,
    /// Subject sex; the schema allows `F`, `M`, `O` or `unknown`.
    pub sex: Option<String>,
    /// `left`, `right` or `bilateral` for the imaged body side.
    pub laterality: Option<String>,
    /// Free-text name of the imaged body part.
    pub bodypart: Option<String>,
    /// Other members, in their original order.
    pub extra: Vec<(String, Json)>,
}

/// One entry of the document's `timepoints` array (§3.1), a visit or
/// acquisition time that grids can refer to by [`id`](Self::id).
///
/// Serialised (§3.3) as `id`, `index`, then each optional member only when set.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Timepoint {
    /// Timepoint id, matching `[A-Za-z0-9_.-]{1,128}` and not `meta`
    /// (E003); unique within the document (E108). Grids name it in their
    /// `timepoint` attribute.
    pub id: String,
    /// Chronological position; over the whole document the indexes must be
    /// exactly `0, 1, 2, …` in some order (E108).
    pub index: u64,
    /// Free-text display label (e.g. `baseline`).
    pub label: Option<String>,
    /// Acquisition date; a string the schema does not constrain further.
    pub date: Option<String>,
    /// Days since the baseline timepoint, a JSON number (int or float, kept
    /// as given); lets de-identified files keep intervals without dates.
    pub days_from_baseline: Option<Json>,
    /// DICOM Study Instance UID of the source study.
    pub study_uid: Option<String>,
    /// Subject age in years at this timepoint, a JSON number ≥ 0 kept as
    /// given (int or float).
    pub subject_age_years: Option<Json>,
    /// Free-text description.
    pub description: Option<String>,
    /// DICOM Series Instance UIDs of the source series: a JSON object mapping
    /// names to UID strings, kept as given.
    pub series_uids: Option<Json>,
}

/// One class of an inline label set (§3.3, §3.4).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LabelClass {
    /// Class id as stored in voxel data and `class_ids`: `1..=65534`
    /// (0 = background and 65535 = ignore are reserved, E303); unique in
    /// the set.
    pub id: u16,
    /// Short machine-readable key, unique in the set (e.g. `liver`).
    pub key: String,
    /// Human-readable name (e.g. `Liver`); defaults to the key when the
    /// stored class has none.
    pub name: String,
    /// Ids of parent classes in a class hierarchy; written only when
    /// non-empty.
    pub parents: Vec<u16>,
    /// Free-text grouping of the class (e.g. `organ`).
    pub category: Option<String>,
    /// Display colour: a JSON array of four integers 0–255 (RGBA), kept as given.
    pub color: Option<Json>,
    /// Ontology codes, each a JSON object `{"system", "code", "name"?}`
    /// (e.g. SNOMED CT); a used class without any gets W912.
    pub codes: Vec<Json>,
    /// `left`, `right` or `bilateral` when the class is sided.
    pub laterality: Option<String>,
    /// Free-form JSON object of further class properties; an empty object
    /// is not written.
    pub properties: Option<Json>,
}

/// A typed relation between two classes of an inline label set, read as
/// "`subject` `predicate` `object`". The derived order (subject, predicate,
/// object) is the order the label-set hash sorts them in (§3.4).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Relation {
    /// Id of the class the relation starts from.
    pub subject: u16,
    /// Relation name, free text; `is_a` (subject is a kind of object) is the
    /// one `closure = "implicit"` reads follow.
    pub predicate: String,
    /// Id of the class the relation points to.
    pub object: u16,
}

/// How a label set carries its classes: inline, or as a reference to an
/// external set pinned by hash (`form` = `"inline"` / `"ref"`, §3.4).
#[derive(Clone, Debug, PartialEq)]
pub enum LabelSetForm {
    /// `form: "inline"`: the classes are in the document.
    Inline {
        /// The classes, in document order.
        classes: Vec<LabelClass>,
        /// Class relations, in document order (sorted only for hashing).
        relations: Vec<Relation>,
        /// Keypoint skeletons as raw JSON objects `{"id", "keypoints",
        /// "edges"}`, in document order (sorted by `id` only for hashing).
        skeletons: Vec<Json>,
    },
    /// `form: "ref"`: the classes live elsewhere; both fields are required
    /// (E305).
    Ref {
        /// Where the external label set can be found.
        uri: String,
        /// Hex SHA-256 (no prefix) of the external set's canonical JSON.
        sha256: String,
    },
}

/// The document's `label_set` (§3.3, §3.4): the classes that annotation
/// `class_ids` refer to.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelSet {
    /// Label-set id (non-empty), e.g. `demo-organs`.
    pub id: String,
    /// Version of the set (non-empty free text, e.g. `1.0.0`).
    pub version: String,
    /// Inline classes or an external reference.
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

    /// The class as a JSON object in the reference's member order (§3.3):
    /// `id`, `key`, `name`, then the optional members only when set and
    /// non-empty. This is also the form hashed into the label-set `sha256`.
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
    /// The relation as `{"subject", "predicate", "object"}`.
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

    /// The `label_set` object as stored in `/meta` (§3.3): `id`, `version`,
    /// `sha256` (always written, computed by [`sha256`](Self::sha256) for
    /// an inline set), `form`, then `uri` for a ref set or `classes` and the
    /// non-empty `relations`/`skeletons` for an inline one.
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
    ///
    /// # Errors
    ///
    /// [`Error::Code`] with `E303` for a reserved class id (0 or 65535),
    /// `E005` for a repeated id or an empty key, `E305` for a ref set
    /// without `uri` or `sha256`.
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

/// The whole `/meta` sample document (§3): typed where the reference fixes
/// the serialisation, raw [`Json`] elsewhere. [`to_meta`](Self::to_meta)
/// gives the exact stored text and [`from_meta`](Self::from_meta) parses it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SampleDocument {
    /// Required `identity` object.
    pub identity: Identity,
    /// Required, non-empty `timepoints`; ids unique, indexes dense (E108).
    pub timepoints: Vec<Timepoint>,
    /// `cohort` members (written known keys first, then extras in order).
    pub cohort: Vec<(String, Json)>,
    /// The label set annotations' class ids refer to; needed by any
    /// non-`mask` voxel annotation under profile `seg` (E301).
    pub label_set: Option<LabelSet>,
    /// Provenance graph `{"agents": [...], "activities": [...]}` (the keys
    /// that `prov` attributes name, E601); not written when it holds only
    /// empty arrays or nulls.
    pub provenance: Option<Json>,
    /// Quality records: a JSON object mapping keys (named by `quality`
    /// attributes, E602) to `{"status", ...}` records.
    pub quality: Option<Json>,
    /// Dataset split assignments: a JSON array of `{"set_id", "partition",
    /// ...}` objects.
    pub splits: Option<Json>,
    /// Acquisition details: a JSON object mapping names to free-form objects.
    pub acquisition: Option<Json>,
    /// De-identification record (at least `method`); without it the
    /// validator warns W903, a failure under `strict`.
    pub deidentification: Option<Json>,
    /// Free-form JSON object for application data.
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
    /// A timepoint with only `id` and `index` set (not validated here).
    pub fn new(id: &str, index: u64) -> Self {
        Timepoint {
            id: id.to_string(),
            index,
            ..Timepoint::default()
        }
    }

    /// The timepoint as a JSON object in the reference's member order
    /// (§3.3): `id`, `index`, `label`, `date`, `days_from_baseline`,
    /// `study_uid`, `subject_age_years`, `description`, `series_uids`, each
    /// optional one only when set.
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
    ///
    /// # Errors
    ///
    /// [`Error::Code`] with `E005` (empty identity ids, no timepoints),
    /// `E003` (bad timepoint id), `E108` (repeated id, indexes not
    /// `0, 1, 2, …`) or the label set's code from [`LabelSet::validate`].
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

    /// Parse `/meta` text and [`validate`](Self::validate) it.
    ///
    /// # Errors
    ///
    /// `E004` when the text is not JSON or not an object; otherwise as
    /// [`from_json`](Self::from_json).
    pub fn from_meta(text: &str) -> Result<Self> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| Error::Code {
            code: "E004".into(),
            message: format!("meta is not JSON: {e}"),
        })?;
        Self::from_json(&Json::from_serde(&v))
    }

    /// Build from a JSON object and [`validate`](Self::validate) it. Member
    /// order inside `identity` extras and `cohort` is kept, so a parsed
    /// document re-serialises to the same text.
    ///
    /// # Errors
    ///
    /// [`Error::Code`] with `E004` when `v` is not an object, `E005` on a
    /// schema error (missing `identity`, unknown top-level or timepoint
    /// member, wrongly typed value, class id out of `u16` range), or any
    /// error of [`validate`](Self::validate).
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
