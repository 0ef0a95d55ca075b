//! The `clinical` summary of `medh5 info --json` for a format 1.1 sample
//! with the clinical profile: its clock and the sizes of its tables.

use serde_json::{json, Map, Value};

use purehdf::low_level::file::{File, Object};

/// Bytes read from one clinical column at most (the tables of a sample are
/// small; a larger column is summarised as empty).
const MAX_CLINICAL_BYTES: u64 = 64 << 20;

/// A dataset of `clinical/` as numbers (`None`: absent, unreadable, too big).
fn clinical_numbers<T: purehdf::low_level::convert::H5Read>(
    file: &File,
    rel: &str,
) -> Option<Vec<T>> {
    match file.object(&format!("clinical/{rel}")).ok()? {
        Object::Dataset(ds)
            if ds.num_elements().saturating_mul(ds.dtype().size()) <= MAX_CLINICAL_BYTES =>
        {
            ds.read::<T>().ok()
        }
        _ => None,
    }
}

/// A string column of `clinical/` (`data` bytes cut at `offsets`).
fn clinical_strings(file: &File, rel: &str) -> Option<Vec<String>> {
    let data: Vec<u8> = clinical_numbers(file, &format!("{rel}/data"))?;
    let offsets: Vec<u64> = clinical_numbers(file, &format!("{rel}/offsets"))?;
    offsets
        .windows(2)
        .map(|w| {
            let (a, b) = (usize::try_from(w[0]).ok()?, usize::try_from(w[1]).ok()?);
            data.get(a..b)
                .map(|c| String::from_utf8_lossy(c).into_owned())
        })
        .collect()
}

/// The `clinical` summary of a format 1.1 sample: its clock, how many
/// events, records, documents and links, events per kind, and events whose
/// availability is unknown.
pub(super) fn clinical_json(file: &File) -> Value {
    // `clinical/meta`: one JSON string
    let meta: Value = match file.object("clinical/meta") {
        Ok(Object::Dataset(ds)) => ds
            .read::<String>()
            .ok()
            .and_then(|a| a.first().and_then(|t| serde_json::from_str(t).ok())),
        _ => None,
    }
    .unwrap_or(Value::Null);
    let c = &meta["clock"];
    let kinds_col = clinical_strings(file, "events/kind").unwrap_or_default();
    let mut kinds = std::collections::BTreeMap::new();
    for k in &kinds_col {
        *kinds.entry(k.clone()).or_insert(0u64) += 1;
    }
    let records: std::collections::BTreeSet<String> = clinical_strings(file, "events/record_id")
        .unwrap_or_default()
        .into_iter()
        .collect();
    let invalid = |col: &str| clinical_numbers::<u8>(file, &format!("events/valid/{col}"));
    let unknown = match (invalid("available_lo_us"), invalid("available_hi_us")) {
        (None, None) => 0,
        (lo, hi) => (0..kinds_col.len())
            .filter(|&i| {
                lo.as_ref().is_some_and(|v| v.get(i) == Some(&0))
                    || hi.as_ref().is_some_and(|v| v.get(i) == Some(&0))
            })
            .count(),
    };
    let rows = |table: &str, col: &str| {
        clinical_strings(file, &format!("{table}/{col}")).map_or(0, |v| v.len())
    };
    let links = clinical_numbers::<u64>(file, "links/source_start")
        .map_or_else(|| rows("links", "source_id"), |v| v.len());
    // the clock's fields in the reference's order, those present only
    let mut clock = Map::new();
    for k in ["id", "unit", "reference", "origin_description"] {
        if let Some(v) = c.get(k) {
            clock.insert(k.into(), v.clone());
        }
    }
    json!({
        "clock": clock,
        "events": kinds_col.len(),
        "records": records.len(),
        "kinds": kinds,
        "documents": rows("documents", "document_id"),
        "links": links,
        "unknown_availability": unknown,
    })
}
