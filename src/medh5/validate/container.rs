//! Container rules (`docs/medh5-format.md` §2, §2.1, §2.2, §4, §9.2 E001–E011,
//! W913): root attributes (`medh5_version`, `medh5_kind`, `medh5_profiles`),
//! the layout groups, identifier syntax of layout members, `/meta` as a scalar
//! UTF-8 JSON object; and the profile requirements (E009).

use super::values::{annotation_kinds, LAYOUT_GROUPS, VOXEL_KINDS};
use crate::canonical_json::Json;
use crate::document::is_valid_id;
use crate::sample::{attrs_json, read_scalar_string};
use purehdf::low_level::file::Object;
use purehdf::low_level::messages::link::Link;

use super::ctx::{attr, json_strs, py_strs, Ctx};

/// Profiles format 1.x defines.
pub const KNOWN_PROFILES: &[&str] = &[
    "core",
    "seg",
    "det",
    "cls",
    "reg",
    "curation",
    "multiscale",
    "training",
    "longitudinal",
    "clinical",
];
/// The highest minor version of format 1 this validator implements (one
/// number for the whole engine, kept by the version gate below).
pub use crate::version_gate::MAX_MINOR;

/// Parse `major.minor` as the reference does: major is the text before the
/// first `.`; a missing minor reads 0; an unparseable minor is `None`.
pub fn parse_version(v: &str) -> Option<(u64, Option<u64>)> {
    let (major, minor) = match v.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (v, None),
    };
    let major = major.trim().parse::<u64>().ok()?;
    let minor = match minor {
        None => Some(0),
        Some(m) => m.trim().parse::<u64>().ok(),
    };
    Some((major, minor))
}

/// The container rule; `false` when the file is of another major version and
/// no other rule may run.
pub fn check_container(ctx: &mut Ctx<'_>) -> bool {
    let root = match ctx.object("") {
        Some(o) => o,
        None => {
            ctx.emit("E001", "/", "the sample root cannot be read");
            return false;
        }
    };
    ctx.root_attrs = root
        .attributes()
        .ok()
        .and_then(|a| attrs_json(ctx.file, &a).ok())
        .unwrap_or_default();
    read_profiles(ctx);
    if !check_version(ctx) {
        return false;
    }
    check_kind(ctx);
    check_layout(ctx);
    check_meta(ctx);
    true
}

fn read_profiles(ctx: &mut Ctx<'_>) {
    match ctx.root_attr("medh5_profiles").cloned() {
        None => ctx.emit("E007", "/", "root has no `medh5_profiles` attribute"),
        Some(j) => match json_strs(&j) {
            None => ctx.emit("E007", "/", "`medh5_profiles` is not a list of strings"),
            Some(mut list) => {
                list.sort();
                list.dedup();
                ctx.declared_profiles = list;
            }
        },
    }
}

fn check_unknown_profiles(ctx: &mut Ctx<'_>) {
    let mut unknown: Vec<String> = ctx
        .profiles()
        .into_iter()
        .filter(|p| !KNOWN_PROFILES.contains(&p.as_str()))
        .collect();
    unknown.sort();
    if !unknown.is_empty() {
        ctx.emit(
            "E007",
            "/",
            format!("unknown profile(s) {}", py_strs(&unknown)),
        );
    }
}

fn check_version(ctx: &mut Ctx<'_>) -> bool {
    let v = match ctx.root_attr("medh5_version") {
        None => {
            ctx.emit("E001", "/", "root has no `medh5_version` attribute");
            check_unknown_profiles(ctx);
            return true;
        }
        Some(Json::Str(s)) if !s.trim().is_empty() => s.clone(),
        Some(_) => {
            ctx.emit("E001", "/", "`medh5_version` is empty or not text");
            check_unknown_profiles(ctx);
            return true;
        }
    };
    match parse_version(&v) {
        Some((1, Some(minor))) => {
            ctx.version = Some((1, minor));
            if minor > MAX_MINOR {
                ctx.projection = true;
                ctx.emit(
                    "W913",
                    "/",
                    format!("declares MEDH5 {v}; this validator implements up to 1.{MAX_MINOR}: only the supported projection was validated, which is not conformance to {v}, and the file must not be amended by this engine"),
                );
            }
        }
        Some((1, None)) => {
            ctx.version = Some((1, u64::MAX));
            ctx.projection = true;
            ctx.emit(
                "W913",
                "/",
                format!("declares MEDH5 {v}; only the supported projection was validated"),
            );
        }
        Some((major, _)) => {
            ctx.emit(
                "E002",
                "/",
                format!("declares MEDH5 {v}; this validator implements 1.x"),
            );
            let _ = major;
            return false;
        }
        None => {
            ctx.emit("E002", "/", format!("`medh5_version` {v:?} does not parse"));
            return false;
        }
    }
    check_unknown_profiles(ctx);
    true
}

fn check_kind(ctx: &mut Ctx<'_>) {
    match ctx.root_attr("medh5_kind") {
        None => ctx.emit("E006", "/", "root has no `medh5_kind` attribute"),
        Some(Json::Str(s)) if s == "sample" => {}
        Some(other) => {
            let shown = match other {
                Json::Str(s) => s.clone(),
                j => j.to_canonical(),
            };
            ctx.emit(
                "E006",
                "/",
                format!("`medh5_kind` is '{shown}', not 'sample' or 'collection'"),
            );
        }
    }
}

/// What a top-level link leads to.
enum Top {
    Absent,
    Group,
    Dataset,
    Dangling(String),
    Other(String),
}

fn top_level(ctx: &Ctx<'_>, name: &str) -> Top {
    let Some(links) = ctx.links("") else {
        return Top::Absent;
    };
    let Some((_, link)) = links.iter().find(|(n, _)| n == name) else {
        return Top::Absent;
    };
    let resolved = ctx.object(name);
    match (link, resolved) {
        (_, Some(Object::Group(_))) => Top::Group,
        (_, Some(Object::Dataset(_))) => Top::Dataset,
        (_, Some(Object::NamedDatatype(_))) => Top::Other("a named datatype".into()),
        (Link::Soft(target), None) => Top::Dangling(target.clone()),
        (Link::External { file, path }, None) => {
            Top::Other(format!("an external link to {file}:{path}"))
        }
        (_, None) => Top::Other("unreadable".into()),
    }
}

fn check_layout(ctx: &mut Ctx<'_>) {
    for name in LAYOUT_GROUPS {
        let required = *name == "grids" || *name == "images";
        let loc = format!("/{name}");
        match top_level(ctx, name) {
            Top::Group => check_members(ctx, name),
            Top::Absent if required => {
                ctx.emit("E008", &loc, format!("required group `{name}` is absent"))
            }
            Top::Absent => {}
            Top::Dataset => ctx.emit(
                "E008",
                &loc,
                format!("`{name}` is a dataset; the layout makes it a group (§2.3)"),
            ),
            Top::Dangling(t) => ctx.emit(
                "E008",
                &loc,
                format!("`{name}` is a soft link to '{t}', which names no object; the layout makes it a group (§2.3)"),
            ),
            Top::Other(what) => ctx.emit(
                "E008",
                &loc,
                format!("`{name}` is {what}; the layout makes it a group (§2.3)"),
            ),
        }
    }
}

fn check_members(ctx: &mut Ctx<'_>, group: &str) {
    let Some(links) = ctx.links(group) else {
        return;
    };
    for (name, link) in links {
        let rel = format!("{group}/{name}");
        let loc = format!("/{rel}");
        if !is_valid_id(&name) {
            ctx.emit(
                "E003",
                &loc,
                format!("identifier '{name}' does not match [A-Za-z0-9_.-]{{1,128}}"),
            );
        }
        if ctx.object(&rel).is_none() {
            let why = match &link {
                Link::Soft(t) => format!("is a soft link to '{t}', which names no object, so nothing it should hold can be read or checked"),
                Link::External { file, path } => format!("is an external link to {file}:{path}; a sample is self-contained, so nothing it should hold can be read or checked"),
                _ => "cannot be read, so nothing it should hold can be checked".to_string(),
            };
            ctx.emit("E001", &loc, why);
        }
    }
}

fn check_meta(ctx: &mut Ctx<'_>) {
    let ds = match ctx.object("meta") {
        None => {
            ctx.emit("E004", "/meta", "required dataset `meta` is absent");
            return;
        }
        Some(Object::Dataset(ds)) => ds,
        Some(o) => {
            ctx.emit(
                "E004",
                "/meta",
                format!(
                    "`meta` is a {}; §2.4 makes it a dataset holding one UTF-8 JSON string",
                    o.kind_name()
                ),
            );
            return;
        }
    };
    if !ds.dtype().is_string() {
        ctx.emit(
            "E004",
            "/meta",
            format!(
                "`meta` is a dataset of {}; §2.4 makes it one UTF-8 JSON string",
                crate::helpers::dtype_name(ds.dtype())
            ),
        );
        return;
    }
    if !ds.shape().is_empty() {
        ctx.emit("E004", "/meta", "`meta` is not a scalar dataset");
        return;
    }
    let bytes = match read_scalar_string(ctx.file, &ds) {
        Ok(b) => b,
        Err(e) => {
            ctx.emit("E004", "/meta", format!("`meta` cannot be read: {e}"));
            return;
        }
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        ctx.emit("E004", "/meta", "`meta` is not valid UTF-8");
        return;
    };
    match serde_json::from_str::<serde_json::Value>(text) {
        Err(e) => ctx.emit("E004", "/meta", format!("`meta` is not valid JSON: {e}")),
        Ok(v) if !v.is_object() => ctx.emit("E004", "/meta", "`meta` is not a JSON object"),
        Ok(v) => ctx.doc = Some(v),
    }
}

/// Profile requirements (E009, semantic level).
pub fn check_profiles(ctx: &mut Ctx<'_>) {
    let minor = ctx.version.map(|v| v.1);
    // a file that declares no version is not a 1.1 file either
    if ctx.has_profile("clinical") && (minor == Some(0) || ctx.version.is_none()) {
        let v = match ctx.root_attr("medh5_version") {
            Some(Json::Str(s)) => s.clone(),
            _ => String::new(),
        };
        ctx.emit(
            "E009",
            "/",
            format!("profile `clinical` is a MEDH5 1.1 profile, but the file declares MEDH5 '{v}'"),
        );
    }
    let kinds = annotation_kinds(ctx);
    if ctx.has_profile("seg")
        && !kinds
            .iter()
            .any(|(_, k)| VOXEL_KINDS.contains(&k.as_str()) && k != "mask")
    {
        ctx.emit(
            "E009",
            "/",
            "profile `seg` requires a voxel annotation, and none is present",
        );
    }
    // (judged against a readable document with a sound label set: the
    // reference passes over it when either is broken)
    let document_broken = ctx.doc.is_none()
        || ctx.diags.iter().any(|d| {
            matches!(
                d.code.as_str(),
                "E004" | "E005" | "E302" | "E303" | "E304" | "E305" | "E306"
            )
        });
    if ctx.has_profile("curation") && !document_broken {
        for id in ctx.member_names("annotations") {
            let rel = format!("annotations/{id}");
            if ctx.object(&rel).is_some() && attr(&ctx.attrs(&rel), "quality").is_none() {
                ctx.emit(
                    "E009",
                    &format!("/{rel}"),
                    "the `curation` profile requires `quality` on every annotation",
                );
            }
        }
    }
    if ctx.has_profile("multiscale") {
        for id in ctx.member_names("images") {
            let rel = format!("images/{id}");
            if matches!(ctx.object(&rel), Some(Object::Dataset(_))) {
                ctx.emit(
                    "E009",
                    &format!("/{rel}"),
                    "profile `multiscale` lays out every image as a §4.3 pyramid, and this image is single-scale",
                );
            }
        }
    }
    if ctx.has_profile("training") && ctx.member_names("index").is_empty() {
        ctx.emit(
            "E009",
            "/",
            "profile `training` requires a sampling index entry, and `/index` holds none",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_like_the_reference() {
        assert_eq!(parse_version("1.0"), Some((1, Some(0))));
        assert_eq!(parse_version("1"), Some((1, Some(0))));
        assert_eq!(parse_version("1.3"), Some((1, Some(3))));
        assert_eq!(parse_version("2.0"), Some((2, Some(0))));
        assert_eq!(parse_version("1.x"), Some((1, None)));
        assert_eq!(parse_version("one"), None);
    }
}
