//! Clinical link rules (format 1.1; `docs/medh5-format.md` §9.2 E813–E817):
//! link targets resolve in the sample (E813), text spans fall on UTF-8
//! character boundaries of their document (E814), every document is owned by
//! exactly one `document` event and owns no sibling (E815), revision chains do
//! not branch and a revision is not available before its predecessor (E816),
//! and a lesion assessment links the instance it assessed (E817).

use std::collections::BTreeMap;

use super::clinical_table::Table;
use super::ctx::Ctx;
use super::document::timepoint_ids;

fn ids(t: &Table, col: &str) -> Vec<String> {
    (0..t.rows())
        .map(|r| t.text(col, r).unwrap_or("").to_string())
        .collect()
}

/// Whether a byte offset of `text` falls on a character boundary.
pub fn on_boundary(text: &str, at: i128) -> bool {
    usize::try_from(at).is_ok_and(|a| text.is_char_boundary(a))
}

/// The link rules (semantic).
pub fn check_links(ctx: &mut Ctx<'_>, events: &Table, documents: &Table, links: &Table) {
    let event_ids = ids(events, "event_id");
    let doc_ids = ids(documents, "document_id");
    let images = ctx.member_names("images");
    let annotations = ctx.member_names("annotations");
    let tps = timepoint_ids(ctx);
    let kind_of = |e: &str| {
        event_ids
            .iter()
            .position(|x| x == e)
            .and_then(|r| events.text("kind", r))
            .unwrap_or("")
            .to_string()
    };
    let mut owners: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut superseded: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut assesses: Vec<String> = Vec::new();
    for row in 0..links.rows() {
        let loc = format!("/clinical/links#row={row}");
        let rel = links.text("relation", row).unwrap_or("");
        let (st, sid) = (
            links.text("source_type", row).unwrap_or(""),
            links.text("source_id", row).unwrap_or(""),
        );
        let (tt, tid) = (
            links.text("target_type", row).unwrap_or(""),
            links.text("target_id", row).unwrap_or(""),
        );
        let resolves = match tt {
            "image" => images.iter().any(|x| x == tid),
            "annotation" => annotations.iter().any(|x| x == tid),
            // without a readable document no timepoint can be looked up
            "timepoint" => ctx.doc.is_none() || tps.iter().any(|x| x == tid),
            "document" => doc_ids.iter().any(|x| x == tid),
            "event" => event_ids.iter().any(|x| x == tid),
            "instance" => links
                .text("target_annotation_id", row)
                .is_some_and(|a| annotations.iter().any(|x| x == a)),
            _ => true,
        };
        if !resolves {
            ctx.emit(
                "E813",
                &loc,
                format!("target {tt} '{tid}' does not resolve in this sample"),
            );
        }
        if st == "document" {
            if let (Some(a), Some(b)) =
                (links.int("source_start", row), links.int("source_end", row))
            {
                // An unreadable text is E806's; its spans are not judged.
                let text = doc_ids
                    .iter()
                    .position(|x| x == sid)
                    .and_then(|r| documents.text("text", r));
                let bad = text.is_some_and(|t| a > b || !on_boundary(t, a) || !on_boundary(t, b));
                if bad {
                    ctx.emit(
                        "E814",
                        &loc,
                        format!("span [{a}, {b}) splits a UTF-8 character of document '{sid}'"),
                    );
                }
            }
        }
        if rel == "describes" && st == "event" && tt == "document" && kind_of(sid) == "document" {
            owners
                .entry(tid.to_string())
                .or_default()
                .push(sid.to_string());
        }
        if rel == "supersedes" && st == "event" && tt == "event" {
            superseded
                .entry(tid.to_string())
                .or_default()
                .push(sid.to_string());
            let avail = |e: &str, col: &str| {
                event_ids
                    .iter()
                    .position(|x| x == e)
                    .and_then(|r| events.int(col, r))
            };
            if let (Some(new_hi), Some(old_lo)) =
                (avail(sid, "available_hi_us"), avail(tid, "available_lo_us"))
            {
                if new_hi < old_lo {
                    ctx.emit(
                        "E816",
                        &loc,
                        format!("'{sid}' was available by {new_hi} but supersedes '{tid}', available no earlier than {old_lo}"),
                    );
                }
            }
        }
        if rel == "assesses" && st == "event" {
            assesses.push(sid.to_string());
        }
    }
    // Ownership needs the events' kinds; an unreadable `kind` column is E806's.
    let kinds_known = events.col("kind").is_some();
    for d in &doc_ids {
        if kinds_known && !owners.contains_key(d) {
            ctx.emit(
                "E815",
                &format!("/clinical/documents#{d}"),
                format!("document '{d}' is described by no `document` event; the event owns its timing, status and provenance"),
            );
        }
    }
    let mut owned: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (d, evs) in &owners {
        for e in evs {
            owned.entry(e.as_str()).or_default().push(d.as_str());
        }
    }
    for (e, docs) in owned.iter().filter(|(_, d)| d.len() > 1) {
        ctx.emit(
            "E815",
            &format!("/clinical/events#{e}"),
            format!("document event '{e}' owns {} documents ({}); each text is a document of its own event", docs.len(), docs.join(", ")),
        );
    }
    for (old, news) in superseded.iter().filter(|(_, n)| n.len() > 1) {
        ctx.emit(
            "E816",
            "/clinical/links",
            format!(
                "event '{old}' is superseded by {} versions ({}): the chain branches",
                news.len(),
                news.join(", ")
            ),
        );
    }
    for (r, e) in event_ids.iter().enumerate() {
        let lesion = events.text("kind", r) == Some("assessment")
            && events
                .text("code", r)
                .is_some_and(|c| c.starts_with("lesion"));
        if lesion && !assesses.contains(e) {
            ctx.emit(
                "E817",
                &format!("/clinical/events#{e}"),
                "a lesion assessment links the instance it assessed by `assesses` (a disappearance links the known instance)",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_boundaries() {
        let t = "A 14 mm nodule ≈ 1.4 cm";
        assert!(on_boundary(t, 0));
        let at = t.find('≈').unwrap() as i128;
        assert!(on_boundary(t, at));
        assert!(!on_boundary(t, at + 1));
        assert!(on_boundary(t, t.len() as i128));
        assert!(!on_boundary(t, t.len() as i128 + 1));
        assert!(!on_boundary(t, -1));
    }
}
