//! Clinical profile rules (format 1.1; `docs/medh5-format.md` §9.2, codes
//! E801–E819, W914), the subset this validator implements: clinical content
//! needs the profile (E803); `clinical/meta` is canonical JSON (E801) with a
//! well-formed clock (E802); tables carry no attributes (E819) and only
//! defined event columns (E804); time bounds are 1-D int64 (E805); string
//! columns have sound offsets and UTF-8 rows (E806); null cells are empty
//! (E807); numbers are finite (E808); event ids are unique (E809) of a known
//! kind (E810); time bounds are paired and ordered (E811); observations with a
//! value name their code (E812) and unit (W914); and at integrity level every
//! clinical dataset carries a digest (E818).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::canonical_json::Json;
use crate::sample::read_scalar_string;
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::Datatype;
use purehdf::low_level::file::Object;

use super::clinical_table::{Column, Table};
use super::ctx::Ctx;
use super::values::read_floats;
use super::values::read_ints;

/// Columns of `clinical/events` this validator knows.
pub const EVENT_COLUMNS: &[&str] = &[
    "available_hi_us",
    "available_lo_us",
    "code",
    "code_system",
    "code_version",
    "effective_end_hi_us",
    "effective_end_lo_us",
    "effective_start_hi_us",
    "effective_start_lo_us",
    "event_id",
    "kind",
    "missing_reason",
    "prov",
    "record_id",
    "status",
    "temporal_type",
    "timepoint_id",
    "unit",
    "valid",
    "value_num",
    "value_text",
];
/// Event kinds.
pub const EVENT_KINDS: &[&str] = &[
    "imaging",
    "document",
    "observation",
    "diagnosis",
    "medication_order",
    "medication_administration",
    "procedure",
    "assessment",
    "other",
];
const TABLES: &[&str] = &["events", "documents", "links"];
/// Cap on the rows read from one column.
const MAX_ROWS: u64 = 1 << 24;

fn dataset(ctx: &Ctx<'_>, rel: &str) -> Option<Dataset> {
    match ctx.object(rel)? {
        Object::Dataset(ds) => Some(*ds),
        _ => None,
    }
}

/// Read a string column (`data` bytes + `offsets`), reporting E806.
fn text_column(ctx: &mut Ctx<'_>, rel: &str) -> Option<Vec<Option<String>>> {
    let data = dataset(ctx, &format!("{rel}/data"))?;
    let offsets = dataset(ctx, &format!("{rel}/offsets")).and_then(|d| read_ints(&d))?;
    if data.num_elements() > MAX_ROWS * 64 {
        return None;
    }
    let bytes = data.read_all_raw().ok()?;
    let len = bytes.len() as i128;
    let sound = offsets.first() == Some(&0)
        && offsets.windows(2).all(|w| w.first() <= w.get(1))
        && offsets.last() == Some(&len);
    if !sound {
        ctx.emit(
            "E806",
            &format!("/{rel}/offsets"),
            format!(
                "offsets must start at 0, never decrease and end at the byte length {len} (they run {} .. {})",
                offsets.first().copied().unwrap_or(0),
                offsets.last().copied().unwrap_or(0)
            ),
        );
        return None;
    }
    let mut rows = Vec::new();
    for (i, w) in offsets.windows(2).enumerate() {
        let (Some(&a), Some(&b)) = (w.first(), w.get(1)) else {
            continue;
        };
        let cell = bytes.get(a as usize..b as usize).unwrap_or(&[]);
        match std::str::from_utf8(cell) {
            Ok(s) => rows.push(Some(s.to_string())),
            Err(_) => {
                let col = rel.rsplit('/').next().unwrap_or("");
                ctx.emit(
                    "E806",
                    &format!("/{rel}#row={i}"),
                    format!("row {i} of `{col}` is not valid UTF-8"),
                );
                rows.push(None);
            }
        }
    }
    Some(rows)
}

fn read_table(ctx: &mut Ctx<'_>, name: &str) -> Option<Table> {
    let rel = format!("clinical/{name}");
    let links = ctx.links(&rel)?;
    let mut t = Table {
        name: name.to_string(),
        columns: Vec::new(),
        valid: Vec::new(),
    };
    for (col, _) in links {
        let crel = format!("{rel}/{col}");
        if col == "valid" {
            for (v, _) in ctx.links(&crel).unwrap_or_default() {
                if let Some(vals) = dataset(ctx, &format!("{crel}/{v}")).and_then(|d| read_ints(&d))
                {
                    t.valid.push((v, vals));
                }
            }
            continue;
        }
        match ctx.object(&crel) {
            Some(Object::Group(_)) => {
                if let Some(rows) = text_column(ctx, &crel) {
                    t.columns.push((col, Column::Text(rows)));
                }
            }
            Some(Object::Dataset(ds)) => {
                if ds.num_elements() > MAX_ROWS {
                    continue;
                }
                let int64 = matches!(
                    ds.dtype(),
                    Datatype::Integer {
                        size: 8,
                        signed: true,
                        ..
                    }
                );
                if col.ends_with("_us") && (!int64 || ds.shape().len() != 1) {
                    let what = crate::helpers::dtype_name(ds.dtype());
                    ctx.emit(
                        "E805",
                        &format!("/{crel}"),
                        format!(
                            "`{col}` must be a 1-D int64 dataset, not {}-D {what}",
                            ds.shape().len()
                        ),
                    );
                }
                let column = match ds.dtype() {
                    Datatype::Float { .. } => read_floats(&ds).map(Column::Floats),
                    _ => read_ints(&ds).map(Column::Ints),
                };
                if let Some(c) = column {
                    t.columns.push((col, c));
                }
            }
            _ => {}
        }
    }
    Some(t)
}

/// Whether the sample holds clinical content.
pub fn has_clinical(ctx: &Ctx<'_>) -> bool {
    ctx.member_names("").iter().any(|n| n == "clinical")
}

/// The clinical rule (structural).
pub fn check_clinical(ctx: &mut Ctx<'_>) {
    if !has_clinical(ctx) {
        return;
    }
    if !ctx.has_profile("clinical") {
        ctx.emit("E803", "/clinical", "the sample holds clinical content but does not declare the `clinical` profile in `medh5_profiles`");
        // undeclared, the tables are not judged further
        return;
    }
    check_meta(ctx);
    for name in ctx.member_names("clinical") {
        if name != "meta" && !TABLES.contains(&name.as_str()) {
            ctx.emit(
                "E804",
                &format!("/clinical/{name}"),
                format!("'{name}' is not a member the clinical profile defines"),
            );
        }
    }
    for t in TABLES {
        let rel = format!("clinical/{t}");
        for (name, _) in ctx.attrs(&rel) {
            ctx.emit(
                "E819",
                &format!("/{rel}@{name}"),
                format!("attribute '{name}' is not defined by the clinical profile, whose facts live in its columns"),
            );
        }
    }
    for col in ctx.member_names("clinical/events") {
        if !EVENT_COLUMNS.contains(&col.as_str()) {
            if ctx.projection {
                ctx.emit("W913", &format!("/clinical/events/{col}"), format!("'{col}' is not defined by the clinical profile this engine implements; ignored in this projection"));
            } else {
                ctx.emit(
                    "E804",
                    &format!("/clinical/events/{col}"),
                    format!("'{col}' is not a column the clinical profile defines"),
                );
            }
        }
    }
    let Some(events) = read_table(ctx, "events") else {
        return;
    };
    let documents = read_table(ctx, "documents");
    let links = read_table(ctx, "links");
    check_cells(ctx, &events);
    check_events(ctx, &events);
    if ctx.level >= super::Level::Semantic {
        if let (Some(d), Some(l)) = (&documents, &links) {
            super::clinical_links::check_links(ctx, &events, d, l);
        }
    }
}

fn check_meta(ctx: &mut Ctx<'_>) {
    let Some(Object::Dataset(ds)) = ctx.object("clinical/meta") else {
        return;
    };
    let Ok(bytes) = read_scalar_string(ctx.file, &ds) else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        ctx.emit("E801", "/clinical/meta", "`clinical/meta` is not JSON");
        return;
    };
    if Json::from_serde(&v).to_canonical() != text {
        ctx.emit("E801", "/clinical/meta", "`clinical/meta` is not canonical JSON (sorted keys, no whitespace; 1.0 §5.1), so equal descriptors would digest differently");
    }
    let Some(clock) = v.get("clock") else {
        ctx.emit("E802", "/clinical/meta", "'clock' is a required property");
        return;
    };
    match clock.get("reference").and_then(Value::as_str) {
        Some("relative") if clock.get("origin_description").is_none() => {
            ctx.emit(
                "E802",
                "/clinical/meta#clock",
                "'origin_description' is a required property",
            );
        }
        Some("shifted_utc") if ctx.doc.is_some() && ctx.doc_get("deidentification").is_none() => {
            ctx.emit("E802", "/clinical/meta", "a `shifted_utc` clock is shifted by the de-identification `/meta` declares, and `/meta` declares none");
        }
        _ => {}
    }
}

/// E807 (null cells hold nothing) and E808 (finite numbers).
fn check_cells(ctx: &mut Ctx<'_>, t: &Table) {
    for (col, c) in &t.columns {
        let loc = |row: usize| format!("/clinical/{}/{col}#row={row}", t.name);
        let has_mask = t.valid.iter().any(|(v, _)| v == col);
        for row in 0..t.rows() {
            let valid = t.is_valid(col, row);
            let empty = match c {
                Column::Text(v) => v
                    .get(row)
                    .is_none_or(|s| s.as_deref().is_none_or(str::is_empty)),
                Column::Ints(v) => v.get(row).is_none_or(|&x| x == 0),
                Column::Floats(v) => v.get(row).is_none_or(|&x| x == 0.0),
            };
            if has_mask && !valid && !empty {
                ctx.emit("E807", &loc(row), format!("row {row} of `{col}` is null but its cell is not empty (a null number is 0, a null string has no bytes)"));
            }
            if let Column::Floats(v) = c {
                if let Some(x) = v.get(row).filter(|x| valid && !x.is_finite()) {
                    let what = if x.is_nan() {
                        "NaN".to_string()
                    } else {
                        x.to_string()
                    };
                    ctx.emit(
                        "E808",
                        &loc(row),
                        format!("row {row} of `{col}` is {what}; clinical values are finite"),
                    );
                }
            }
        }
    }
}

fn check_events(ctx: &mut Ctx<'_>, t: &Table) {
    let mut seen = BTreeSet::new();
    for row in 0..t.rows() {
        let id = t.text("event_id", row).unwrap_or("").to_string();
        let loc = format!("/clinical/events#{id}");
        if !seen.insert(id.clone()) {
            ctx.emit("E809", &loc, format!("`event_id` '{id}' is not unique"));
        }
        let kind = t.text("kind", row).unwrap_or("");
        if t.col("kind").is_some() && !EVENT_KINDS.contains(&kind) {
            let list: Vec<String> = EVENT_KINDS.iter().map(|k| format!("'{k}'")).collect();
            ctx.emit(
                "E810",
                &loc,
                format!("`kind` is '{kind}', not one of [{}]", list.join(", ")),
            );
        }
        let pair = |lo: &str, hi: &str| (t.int(lo, row), t.int(hi, row));
        let start = pair("effective_start_lo_us", "effective_start_hi_us");
        let end = pair("effective_end_lo_us", "effective_end_hi_us");
        for (name, p) in [("effective_start", start), ("effective_end", end)] {
            if p.0.is_some() != p.1.is_some() {
                ctx.emit(
                    "E811",
                    &loc,
                    format!("`{name}_lo_us` and `{name}_hi_us` are both valid or both null"),
                );
            }
        }
        let temporal = t.text("temporal_type", row).unwrap_or("");
        if temporal == "point" && (start.0.is_none() || start.1.is_none()) {
            ctx.emit("E811", &loc, "a `point` event needs effective start bounds");
        }
        if let (Some(end_hi), Some(start_lo)) = (end.1, start.0) {
            if end_hi < start_lo {
                ctx.emit("E811", &loc, format!("the interval ends (at most {end_hi}) before it can start (at least {start_lo})"));
            }
        }
        if kind == "observation" {
            let numeric = t.is_valid("value_num", row) && t.col("value_num").is_some();
            let has_value = numeric || t.text("value_text", row).is_some();
            let coded = t.text("code_system", row).is_some() && t.text("code", row).is_some();
            if has_value && !coded {
                ctx.emit("E812", &loc, "an observation with a value names what was measured (`code_system` and `code`; a local concept will do)");
            }
            if numeric && t.text("unit", row).is_none() {
                ctx.emit("W914", &loc, "a numeric value carries no unit (`1` is dimensionless); converters never invent one");
            }
        }
    }
}

/// E818: every dataset under `clinical/` carries a digest (integrity).
pub fn check_clinical_digests(ctx: &mut Ctx<'_>) {
    if !has_clinical(ctx) {
        return;
    }
    let Ok(w) = super::integrity::walk(ctx) else {
        return;
    };
    for f in w
        .datasets
        .iter()
        .filter(|f| f.path.starts_with("clinical/"))
    {
        if f.digest.is_none() {
            ctx.emit("E818", &format!("/{}", f.path), "every dataset under `clinical/` carries its digest --- buffers, offsets, masks and the descriptor alike --- so a change to any of them is detectable");
        }
    }
}
