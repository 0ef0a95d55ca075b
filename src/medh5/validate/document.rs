//! Document rules (`docs/medh5-format.md` §3, §9.2): the `/meta` schema
//! (E005), the timepoint list (E108), and the curation records — activity
//! types (E603), RFC 3339 timestamps (E604), declared agents (E605) and the
//! de-identification record (W903).

use serde_json::Value;

use super::ctx::{py_list, Ctx};
use super::schema::{self, ACTIVITY_TYPES};

/// `/meta` against the sample-document schema (E005).
pub fn check_document(ctx: &mut Ctx<'_>) {
    let Some(doc) = ctx.doc.clone() else {
        return;
    };
    ctx.schema_checked = true;
    for (ptr, msg) in schema::check_document(&doc) {
        let p = if ptr.is_empty() {
            "<root>".to_string()
        } else {
            ptr
        };
        // a later minor may add members, never drop a required one: a
        // missing member stays an error in a projection
        if msg.ends_with("is a required property") {
            ctx.emit_unprojected("E005", &format!("/meta#{p}"), msg);
        } else {
            ctx.emit("E005", &format!("/meta#{p}"), msg);
        }
    }
}

/// The timepoint list: ids unique, indexes dense from 0 (E108).
pub fn check_timepoints(ctx: &mut Ctx<'_>) {
    let Some(tps) = ctx.doc_get("timepoints").and_then(Value::as_array).cloned() else {
        return;
    };
    let mut ids: Vec<&str> = Vec::new();
    let mut idx: Vec<i64> = Vec::new();
    for tp in &tps {
        if let Some(id) = tp.get("id").and_then(Value::as_str) {
            if ids.contains(&id) {
                ctx.emit("E108", "/meta", format!("duplicate timepoint id '{id}'"));
            }
            ids.push(id);
        }
        if let Some(i) = tp.get("index").and_then(Value::as_i64) {
            idx.push(i);
        }
    }
    let mut sorted = idx.clone();
    sorted.sort_unstable();
    let dense = sorted.iter().enumerate().all(|(i, &v)| v == i as i64);
    if !dense {
        ctx.emit(
            "E108",
            "/meta",
            format!(
                "timepoint indices {} must be dense and start at 0",
                py_list(&sorted)
            ),
        );
    }
}

/// Whether `s` is an RFC 3339 date-time (`YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`).
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b.get(r.clone())
            .is_some_and(|x| x.len() == r.len() && x.iter().all(u8::is_ascii_digit))
    };
    let num =
        |r: std::ops::Range<usize>| -> u32 { s.get(r).and_then(|t| t.parse().ok()).unwrap_or(99) };
    let date_ok = digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10);
    let time_ok = matches!(b.get(10), Some(b'T' | b't' | b' '))
        && digits(11..13)
        && b.get(13) == Some(&b':')
        && digits(14..16)
        && b.get(16) == Some(&b':')
        && digits(17..19);
    if !(date_ok && time_ok) {
        return false;
    }
    if !(1..=12).contains(&num(5..7)) || !(1..=31).contains(&num(8..10)) {
        return false;
    }
    if num(11..13) > 23 || num(14..16) > 59 || num(17..19) > 60 {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            i + 6 == b.len()
                && digits(i + 1..i + 3)
                && b.get(i + 3) == Some(&b':')
                && digits(i + 4..i + 6)
        }
        _ => false,
    }
}

fn timestamp(ctx: &mut Ctx<'_>, what: &str, v: Option<&Value>) {
    if let Some(Value::String(s)) = v {
        if !is_rfc3339(s) {
            ctx.emit(
                "E604",
                "/meta",
                format!("{what}: '{s}' is not an RFC 3339 timestamp"),
            );
        }
    }
}

/// Curation records (E603, E604, E605, W903).
pub fn check_curation(ctx: &mut Ctx<'_>) {
    let Some(doc) = ctx.doc.clone() else {
        return;
    };
    if doc.get("deidentification").is_none() {
        ctx.emit(
            "W903",
            "/meta#deidentification",
            "no de-identification record; tooling must treat this file as potentially identifying",
        );
    }
    let prov = doc.get("provenance");
    let agents: Vec<&str> = prov
        .and_then(|p| p.get("agents"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.get("id").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let activities = prov
        .and_then(|p| p.get("activities"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for act in &activities {
        let id = act.get("id").and_then(Value::as_str).unwrap_or("?");
        if let Some(t) = act.get("type").and_then(Value::as_str) {
            if !ACTIVITY_TYPES.contains(&t) {
                let list: Vec<String> = ACTIVITY_TYPES.iter().map(|s| format!("'{s}'")).collect();
                ctx.emit(
                    "E603",
                    "/meta",
                    format!(
                        "activity '{id}': unknown type '{t}'; expected one of [{}]",
                        list.join(", ")
                    ),
                );
            }
        }
        if let Some(agent) = act.get("agent").and_then(Value::as_str) {
            if !agents.contains(&agent) {
                ctx.emit(
                    "E605",
                    &format!("/meta#provenance/activities/{id}"),
                    format!("names agent '{agent}', which is not declared"),
                );
            }
        }
        for field in ["started", "ended"] {
            timestamp(ctx, &format!("activity '{id}'.{field}"), act.get(field));
        }
    }
    if let Some(splits) = doc.get("splits").and_then(Value::as_array) {
        for s in splits {
            let id = s.get("set_id").and_then(Value::as_str).unwrap_or("?");
            timestamp(
                ctx,
                &format!("split '{id}'.assigned_at"),
                s.get("assigned_at"),
            );
        }
    }
    if let Some(d) = doc.get("deidentification") {
        timestamp(ctx, "deidentification.date", d.get("date"));
    }
    check_splits(ctx, &doc);
}

/// W906: one split set claimed against different manifests.
fn check_splits(ctx: &mut Ctx<'_>, doc: &Value) {
    let Some(splits) = doc.get("splits").and_then(Value::as_array) else {
        return;
    };
    let mut sets: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> =
        std::collections::BTreeMap::new();
    for s in splits {
        if let (Some(id), Some(m)) = (
            s.get("set_id").and_then(Value::as_str),
            s.get("manifest_sha256").and_then(Value::as_str),
        ) {
            sets.entry(id).or_default().insert(m);
        }
    }
    for (id, manifests) in sets {
        if manifests.len() > 1 {
            ctx.emit(
                "W906",
                "/meta#splits",
                format!(
                    "split set '{id}' is claimed against {} different manifests in one file",
                    manifests.len()
                ),
            );
        }
    }
}

/// Activity ids declared in `/meta#provenance`.
pub fn activity_ids(ctx: &Ctx<'_>) -> Vec<String> {
    ctx.doc_get("provenance")
        .and_then(|p| p.get("activities"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.get("id").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Declared timepoint ids.
pub fn timepoint_ids(ctx: &Ctx<'_>) -> Vec<String> {
    ctx.doc_get("timepoints")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.get("id").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_timestamps() {
        assert!(is_rfc3339("2000-01-01T00:00:00Z"));
        assert!(is_rfc3339("2024-02-29T12:30:45.123+01:00"));
        assert!(!is_rfc3339("yesterday"));
        assert!(!is_rfc3339("2024-13-01T00:00:00Z"));
        assert!(!is_rfc3339("2024-01-01T00:00:00"));
        assert!(!is_rfc3339("2024-01-01"));
    }
}
