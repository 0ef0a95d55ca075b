//! Collection rules (`docs/medh5-format.md` §7, §9.2 E003, E008, E010, E011):
//! a `samples` group holding at least one member, keys matching
//! `[A-Za-z0-9_.-]{1,255}`, each member with its own `content_id`, the
//! collection's version at least each member's; every member is validated as
//! a sample with locations prefixed `/samples/<key>:`.

use crate::canonical_json::Json;
use crate::sample::attrs_json;
use purehdf::low_level::file::{File, Object};

use super::container::parse_version;
use super::ctx::{attr_str, Ctx};
use super::report::{Diagnostic, Report};
use super::{run_sample, Options};

/// Whether the file's root declares `medh5_kind = "collection"`.
pub fn is_collection(file: &File) -> bool {
    file.root()
        .ok()
        .and_then(|r| r.attributes().ok())
        .and_then(|a| attrs_json(file, &a).ok())
        .is_some_and(|a| attr_str(&a, "medh5_kind") == Some("collection"))
}

/// Whether `key` is a valid collection sample key.
pub fn is_valid_key(key: &str) -> bool {
    (1..=255).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

fn version_of(attrs: &[(String, Json)]) -> Option<(u64, u64)> {
    let (major, minor) = parse_version(attr_str(attrs, "medh5_version")?)?;
    Some((major, minor.unwrap_or(u64::MAX)))
}

/// Validate a collection file.
pub fn validate_collection(file: &File, display: &str, opts: &Options) -> Report {
    let mut rep = Report::new(display, opts.level, Vec::new());
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut push = |code: &str, loc: String, msg: String| {
        diags.push(Diagnostic {
            code: code.into(),
            location: loc,
            message: msg,
        })
    };
    let root_attrs = file
        .root()
        .ok()
        .and_then(|r| r.attributes().ok())
        .and_then(|a| attrs_json(file, &a).ok())
        .unwrap_or_default();
    let coll_version = version_of(&root_attrs).unwrap_or((1, 0));
    let mut samples = Vec::new();
    let links = match file.object("/samples") {
        Ok(Object::Group(g)) => g.links().unwrap_or_default(),
        Ok(_) => {
            push("E008", "/samples".into(), "`samples` is not a group".into());
            Vec::new()
        }
        Err(_) => {
            push(
                "E008",
                "/samples".into(),
                "a `collection` requires a `samples` group".into(),
            );
            Vec::new()
        }
    };
    if links.is_empty() && file.object("/samples").is_ok() {
        push(
            "E008",
            "/samples".into(),
            "a collection holds at least one sample".into(),
        );
    }
    let mut members = Vec::new();
    for (key, _) in links {
        let loc = format!("/samples/{key}");
        samples.push(loc.clone());
        if !is_valid_key(&key) {
            push(
                "E003",
                loc.clone(),
                format!("sample key '{key}' does not match [A-Za-z0-9_.-]{{1,255}}"),
            );
        }
        let attrs = match file.object(&loc) {
            Ok(Object::Group(g)) => g
                .attributes()
                .ok()
                .and_then(|a| attrs_json(file, &a).ok())
                .unwrap_or_default(),
            _ => {
                push(
                    "E001",
                    loc.clone(),
                    "the member is not a readable group".into(),
                );
                continue;
            }
        };
        if attr_str(&attrs, "content_id").is_none() {
            push("E010", loc.clone(), "a sample root in a collection carries its own `content_id`, so extracting it yields an identifiable sample".into());
        }
        if let Some(v) = version_of(&attrs) {
            if v > coll_version {
                let shown = attr_str(&attrs, "medh5_version").unwrap_or("");
                let cv = attr_str(&root_attrs, "medh5_version").unwrap_or("1.0");
                push("E011", loc.clone(), format!("member '{key}' is MEDH5 {shown}, but the collection declares {cv}; a collection declares the highest version of the samples it holds"));
            }
        }
        members.push(key);
    }
    for key in members {
        let mut ctx = Ctx::new(
            file,
            &format!("samples/{key}"),
            &format!("/samples/{key}:"),
            opts.level,
        );
        run_sample(&mut ctx, &opts.profiles);
        diags.append(&mut ctx.diags);
    }
    rep.diagnostics = diags;
    rep.checked = serde_json::json!({ "samples": samples });
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert!(is_valid_key("case.0"));
        assert!(is_valid_key("meta"));
        assert!(!is_valid_key("not a key"));
        assert!(!is_valid_key(""));
        assert!(!is_valid_key(&"a".repeat(256)));
    }
}
