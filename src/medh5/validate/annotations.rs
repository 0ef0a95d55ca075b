//! Annotation rules (`docs/medh5-format.md` §2.5, §9.2 E401–E413, W904): the
//! header attributes and their vocabularies (E412, E401), class-id sets
//! (E303, E403), the datasets each voxel kind requires (E410) with their
//! dtypes (E411) and shapes (E405), layer assignments (E404); and at semantic
//! level the references an annotation makes — timepoints (E409), masks and
//! sources (E413), provenance and quality records (E601, E602) — and partial
//! coverage without an ignore region (W904).

use std::collections::BTreeSet;

use crate::canonical_json::Json;
use purehdf::low_level::file::Object;

use super::ctx::{attr, attr_str, json_ints, json_strs, py_list, py_strs, py_tuple, Ctx};
use super::document::{activity_ids, timepoint_ids};
use super::geometry::grids;
use super::values::{read_ints, VOXEL_KINDS};
use crate::helpers::dtype_name;

/// Every annotation kind format 1.x defines (polylines from 1.2).
pub const KINDS: &[&str] = &[
    "labelmap",
    "layers",
    "bitmask",
    "instances",
    "probmap",
    "mask",
    "boxes",
    "obb",
    "keypoints",
    "points",
    "contours",
    "mesh",
    "classification",
    "polylines",
];
/// Kinds placed by coordinates (they need a `space`).
pub const GEOMETRIC_KINDS: &[&str] = &[
    "boxes",
    "obb",
    "keypoints",
    "points",
    "contours",
    "mesh",
    "polylines",
];
const TASKS: &[&str] = &[
    "segmentation",
    "detection",
    "classification",
    "registration",
    "other",
];
const CLOSURES: &[&str] = &["explicit", "implicit"];
/// The ignore class id.
pub const IGNORE_ID: i128 = 65535;

/// The datasets a kind requires (E410).
pub fn required_datasets(kind: &str) -> &'static [&'static str] {
    match kind {
        "labelmap" | "probmap" | "mask" => &["data"],
        "layers" => &["data", "layer_class_ids"],
        "bitmask" => &["data", "bit_class_ids"],
        "instances" => &["boxes", "class_ids", "instance_ids"],
        _ => &[],
    }
}

/// The `data` dtypes a voxel kind allows (E411).
pub fn allowed_dtypes(kind: &str) -> &'static [&'static str] {
    match kind {
        "labelmap" | "layers" => &["uint8", "uint16"],
        "bitmask" => &["uint64"],
        "probmap" => &["float16", "float32"],
        "mask" => &["bool", "uint8"],
        _ => &[],
    }
}

/// Integer ids of an attribute (empty when absent or not integers).
fn ids(a: &[(String, Json)], name: &str) -> Vec<i128> {
    attr(a, name).and_then(json_ints).unwrap_or_default()
}

/// The annotation rule (structural).
pub fn check_annotations(ctx: &mut Ctx<'_>) {
    let grids = grids(ctx);
    for id in ctx.member_names("annotations") {
        let rel = format!("annotations/{id}");
        let loc = format!("/{rel}");
        match ctx.object(&rel) {
            Some(Object::Group(_)) => {}
            Some(o) => {
                // the reference reads an annotation's header from whatever
                // object holds it: without a `kind` that is what it reports
                let message = if attr(&ctx.attrs(&rel), "kind").is_none() {
                    "missing required attribute `kind`".to_string()
                } else {
                    format!("annotation is a {}, not a group", o.kind_name())
                };
                ctx.emit("E412", &loc, message);
                continue;
            }
            None => continue,
        }
        let a = ctx.attrs(&rel);
        let Some(kind) = header(ctx, &a, &loc) else {
            continue;
        };
        let voxel = VOXEL_KINDS.contains(&kind.as_str());
        let grid = attr_str(&a, "grid").map(str::to_string);
        if voxel && grid.is_none() {
            ctx.emit(
                "E412",
                &loc,
                format!("kind '{kind}' requires a `grid` attribute"),
            );
        }
        if let Some(g) = &grid {
            if !grids.contains_key(g) {
                ctx.emit(
                    "E101",
                    &loc,
                    format!("names grid '{g}', which does not exist"),
                );
            }
        }
        let class_ids = ids(&a, "class_ids");
        if kind != "mask" {
            check_class_sets(ctx, &a, &loc, &class_ids);
        }
        for ds in required_datasets(&kind) {
            if !matches!(ctx.object(&format!("{rel}/{ds}")), Some(Object::Dataset(_))) {
                ctx.emit(
                    "E410",
                    &loc,
                    format!("kind '{kind}' requires dataset '{ds}'"),
                );
            }
        }
        if voxel && kind != "instances" {
            let spatial = grid
                .as_ref()
                .and_then(|g| grids.get(g))
                .map(|g| g.spatial_shape());
            check_voxel_data(ctx, &rel, &kind, &class_ids, &a, spatial.as_deref());
        }
        if kind == "layers" {
            check_layers(ctx, &rel, &class_ids);
        }
        if GEOMETRIC_KINDS.contains(&kind.as_str()) {
            check_geometric(
                ctx,
                &kind,
                &a,
                &loc,
                grid.as_ref().and_then(|g| grids.get(g)),
            );
        }
    }
}

/// Header vocabulary; the kind when it is known.
fn header(ctx: &mut Ctx<'_>, a: &[(String, Json)], loc: &str) -> Option<String> {
    // without a `kind` nothing else of the header is judged (the reference's
    // order)
    if attr(a, "kind").is_none() {
        ctx.emit("E412", loc, "missing required attribute `kind`");
        return None;
    }
    // the kind first: an unknown one ends the header's judgement
    let kind = attr_str(a, "kind")?.to_string();
    // a file that declares no version (E001) is not judged by minor
    let minor = ctx.version.map_or(u64::MAX, |v| v.1);
    if kind == "rle" {
        ctx.emit(
            "E401",
            loc,
            "kind 'rle' is reserved by spec §16 and must not appear in a 1.0 or 1.1 file",
        );
        return None;
    }
    if kind == "polylines" && minor < 2 {
        let declared = match ctx.root_attr("medh5_version") {
            Some(Json::Str(v)) => v.clone(),
            _ => String::new(),
        };
        ctx.emit(
            "E401",
            loc,
            format!(
                "annotation kind '{kind}' is defined by MEDH5 1.2, and this file declares \
                 {declared}; a sample holding it is written at 1.2 or later"
            ),
        );
        return None;
    }
    if !KINDS.contains(&kind.as_str()) {
        ctx.emit("E401", loc, format!("unknown annotation kind '{kind}'"));
        return None;
    }
    for req in ["task", "closure"] {
        if attr(a, req).is_none() {
            ctx.emit("E412", loc, format!("missing required attribute `{req}`"));
        }
    }
    if let Some(t) = attr_str(a, "task") {
        if !TASKS.contains(&t) {
            ctx.emit("E412", loc, format!("unknown task '{t}'"));
        }
    }
    if let Some(c) = attr_str(a, "closure") {
        if !CLOSURES.contains(&c) {
            ctx.emit("E412", loc, format!("unknown closure '{c}'"));
        }
    }
    Some(kind)
}

fn check_class_sets(ctx: &mut Ctx<'_>, a: &[(String, Json)], loc: &str, class_ids: &[i128]) {
    if attr(a, "class_ids").is_none() {
        ctx.emit("E412", loc, "missing `class_ids`");
    }
    if attr(a, "annotated_class_ids").is_none() {
        ctx.emit(
            "E412",
            loc,
            "missing `annotated_class_ids`; the coverage contract is required",
        );
    }
    let reserved: Vec<i128> = class_ids
        .iter()
        .copied()
        .filter(|&c| c == 0 || c == IGNORE_ID)
        .collect();
    if !reserved.is_empty() {
        ctx.emit(
            "E303",
            loc,
            format!("class_ids uses reserved id(s) {}", py_list(&reserved)),
        );
    }
    let outside: Vec<i128> = class_ids
        .iter()
        .copied()
        .filter(|&c| !(0..=IGNORE_ID).contains(&c))
        .collect();
    if !outside.is_empty() {
        ctx.emit(
            "E306",
            loc,
            format!("class_ids {} are outside 1..65534", py_list(&outside)),
        );
    }
    let annotated = ids(a, "annotated_class_ids");
    let extra: Vec<i128> = annotated
        .iter()
        .copied()
        .filter(|c| !class_ids.contains(c))
        .collect();
    if !extra.is_empty() {
        ctx.emit(
            "E403",
            loc,
            format!(
                "annotated_class_ids {} are not in class_ids",
                py_list(&extra)
            ),
        );
    }
}

fn check_voxel_data(
    ctx: &mut Ctx<'_>,
    rel: &str,
    kind: &str,
    class_ids: &[i128],
    a: &[(String, Json)],
    spatial: Option<&[u64]>,
) {
    let data_rel = format!("{rel}/data");
    let Some(Object::Dataset(ds)) = ctx.object(&data_rel) else {
        return;
    };
    let loc = format!("/{data_rel}");
    let name = dtype_name(ds.dtype());
    let allowed = allowed_dtypes(kind);
    if !allowed.contains(&name.as_str()) {
        ctx.emit(
            "E411",
            &loc,
            format!(
                "dtype {name} is not permitted for kind '{kind}' (expected one of {})",
                py_strs(allowed)
            ),
        );
        return;
    }
    if let Some(sp) = spatial {
        let shape = ds.shape();
        let tail = if matches!(kind, "layers" | "bitmask" | "probmap") {
            shape.get(1..).unwrap_or(&[])
        } else {
            shape
        };
        if tail != sp {
            let g = attr_str(a, "grid").unwrap_or("");
            ctx.emit(
                "E405",
                &loc,
                format!(
                    "spatial shape {} != grid '{g}' spatial shape {}",
                    py_tuple(tail),
                    py_tuple(sp)
                ),
            );
        }
    }
    if kind == "labelmap" && name == "uint16" {
        let max = class_ids.iter().copied().max().unwrap_or(0);
        let ignore = ignore_id(a);
        let painted = read_ints(&ds).is_some_and(|v| v.contains(&ignore));
        if max <= 254 && !painted {
            ctx.emit(
                "E411",
                &loc,
                "stored as uint16 although max(class_ids) is at most 254 and no ignore voxel is present; §7.1 requires uint8",
            );
        }
    }
}

fn ignore_id(a: &[(String, Json)]) -> i128 {
    ids(a, "ignore_id").first().copied().unwrap_or(IGNORE_ID)
}

fn check_layers(ctx: &mut Ctx<'_>, rel: &str, class_ids: &[i128]) {
    let lrel = format!("{rel}/layer_class_ids");
    let Some(Object::Dataset(ds)) = ctx.object(&lrel) else {
        return;
    };
    let Some(values) = read_ints(&ds) else {
        return;
    };
    let width = ds.shape().get(1).copied().unwrap_or(1).max(1) as usize;
    let mut layer_of: Vec<(i128, usize)> = Vec::new();
    let loc = format!("/{rel}");
    for (l, row) in values.chunks(width).enumerate() {
        for &c in row.iter().filter(|&&c| c != 0) {
            if let Some((_, first)) = layer_of.iter().find(|(x, _)| *x == c) {
                let first = *first;
                ctx.emit(
                    "E404",
                    &loc,
                    format!("class {c} appears in layers {first} and {l}; every class must be in exactly one layer"),
                );
            } else {
                layer_of.push((c, l));
            }
        }
    }
    let unassigned: Vec<i128> = class_ids
        .iter()
        .copied()
        .filter(|c| !layer_of.iter().any(|(x, _)| x == c))
        .collect();
    if !unassigned.is_empty() {
        ctx.emit(
            "E404",
            &loc,
            format!(
                "class_ids {} are not assigned to any layer",
                py_list(&unassigned)
            ),
        );
    }
    let mut stray: Vec<i128> = layer_of
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| !class_ids.contains(c))
        .collect();
    stray.sort_unstable();
    if !stray.is_empty() {
        ctx.emit(
            "E404",
            &format!("/{lrel}"),
            format!("class id(s) {} in `layer_class_ids` are not in the `class_ids` attribute, which declares every class the annotation can express (§6.2)", py_list(&stray)),
        );
    }
}

fn check_geometric(
    ctx: &mut Ctx<'_>,
    kind: &str,
    a: &[(String, Json)],
    loc: &str,
    grid: Option<&super::geometry::GridInfo>,
) {
    let Some(space) = attr_str(a, "space") else {
        ctx.emit(
            "E412",
            loc,
            format!("kind '{kind}' requires a `space` attribute"),
        );
        return;
    };
    if let Some(g) = grid {
        if g.units.as_deref() == Some("px") && space != "index" {
            let id = attr_str(a, "grid").unwrap_or("");
            ctx.emit(
                "E414",
                loc,
                format!("grid '{id}' is uncalibrated (units='px'), so a geometric annotation on it must use space='index'"),
            );
        }
    }
}

/// References annotations and images make (semantic).
pub fn check_references(ctx: &mut Ctx<'_>) {
    let tps = timepoint_ids(ctx);
    let acts = activity_ids(ctx);
    let quality: Vec<String> = ctx
        .doc_get("quality")
        .and_then(|q| q.as_object())
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let kinds: Vec<(String, String)> = super::values::annotation_kinds(ctx);
    let kind_of = |id: &str| kinds.iter().find(|(i, _)| i == id).map(|(_, k)| k.clone());
    for id in ctx.member_names("annotations") {
        let rel = format!("annotations/{id}");
        let loc = format!("/{rel}");
        let a = ctx.attrs(&rel);
        if let Some(list) = attr(&a, "timepoints")
            .and_then(json_strs)
            .filter(|_| ctx.doc.is_some())
        {
            for t in list.iter().filter(|t| !tps.contains(t)) {
                ctx.emit("E409", &loc, format!("undeclared timepoint '{t}'"));
            }
        }
        if let Some(m) = attr_str(&a, "ignore_mask") {
            mask_ref(ctx, &loc, "ignore_mask", m, kind_of(m));
        }
        if let Some(list) = attr(&a, "derived_from").and_then(json_strs) {
            for d in list.iter().filter(|d| kind_of(d).is_none()) {
                ctx.emit(
                    "E413",
                    &loc,
                    format!("`derived_from` names annotation '{d}', which does not exist"),
                );
            }
        }
        prov_ref(ctx, &a, &loc, &acts);
        // without a readable document there is no label set to look in
        if let Some(sk) = attr_str(&a, "skeleton").filter(|_| ctx.doc.is_some()) {
            let known = ctx
                .doc_get("label_set")
                .and_then(|l| l.get("skeletons"))
                .and_then(|s| s.as_array())
                .is_some_and(|s| {
                    s.iter()
                        .any(|x| x.get("id").and_then(|i| i.as_str()) == Some(sk))
                });
            if !known {
                ctx.emit(
                    "E413",
                    &loc,
                    format!("`skeleton` names '{sk}', which the label set does not declare"),
                );
            }
        }
        if let Some(q) = attr_str(&a, "quality").filter(|_| ctx.doc.is_some()) {
            if !quality.iter().any(|k| k == q) {
                ctx.emit(
                    "E602",
                    &loc,
                    format!("`quality` names unknown record '{q}'"),
                );
            }
        }
        coverage(ctx, &rel, &a);
    }
    for id in ctx.member_names("images") {
        let rel = format!("images/{id}");
        let loc = format!("/{rel}");
        let a = ctx.attrs(&rel);
        if let Some(m) = attr_str(&a, "valid_mask") {
            mask_ref(ctx, &loc, "valid_mask", m, kind_of(m));
        }
        prov_ref(ctx, &a, &loc, &acts);
    }
    for id in ctx.member_names("transforms") {
        let loc = format!("/transforms/{id}");
        let a = ctx.attrs(&format!("transforms/{id}"));
        prov_ref(ctx, &a, &loc, &acts);
        if let Some(q) = attr_str(&a, "metrics").filter(|_| ctx.doc.is_some()) {
            if !quality.iter().any(|k| k == q) {
                ctx.emit(
                    "E602",
                    &loc,
                    format!("`metrics` names unknown record '{q}'"),
                );
            }
        }
    }
}

fn mask_ref(ctx: &mut Ctx<'_>, loc: &str, what: &str, target: &str, kind: Option<String>) {
    match kind {
        None => ctx.emit("E413", loc, format!("`{what}` names annotation '{target}', which does not exist")),
        Some(k) if k != "mask" => ctx.emit(
            "E413",
            loc,
            format!("`{what}` names '{target}', whose kind is '{k}'; §4.4 and §7.7 require a `mask` annotation"),
        ),
        Some(_) => {}
    }
}

fn prov_ref(ctx: &mut Ctx<'_>, a: &[(String, Json)], loc: &str, acts: &[String]) {
    if ctx.doc.is_none() {
        return;
    }
    if let Some(p) = attr_str(a, "prov") {
        if !acts.iter().any(|x| x == p) {
            ctx.emit("E601", loc, format!("`prov` names unknown activity '{p}'"));
        }
    }
}

/// W904: classes encodable but not annotated, with no ignore region.
fn coverage(ctx: &mut Ctx<'_>, rel: &str, a: &[(String, Json)]) {
    let Some(kind) = attr_str(a, "kind") else {
        return;
    };
    if !VOXEL_KINDS.contains(&kind) || kind == "mask" {
        return;
    }
    let in_set = super::labels::label_class_ids(ctx);
    let class_ids: BTreeSet<i128> = ids(a, "class_ids")
        .into_iter()
        .filter(|c| *c != 0 && *c != IGNORE_ID)
        .filter(|c| in_set.as_ref().is_none_or(|s| s.contains(c)))
        .collect();
    let annotated: BTreeSet<i128> = ids(a, "annotated_class_ids").into_iter().collect();
    // coverage is not judged where it is already wrong (E403: annotated ids
    // outside `class_ids`)
    let declared: BTreeSet<i128> = ids(a, "class_ids").into_iter().collect();
    if !annotated.is_subset(&declared) {
        return;
    }
    let missing = class_ids.difference(&annotated).count();
    if missing == 0 || attr(a, "ignore_mask").is_some() {
        return;
    }
    if matches!(kind, "labelmap" | "layers") {
        if let Some(Object::Dataset(ds)) = ctx.object(&format!("{rel}/data")) {
            if read_ints(&ds).is_some_and(|v| v.contains(&ignore_id(a))) {
                return;
            }
        }
    }
    ctx.emit(
        "W904",
        &format!("/{rel}"),
        format!("{missing} class(es) are encodable but not annotated, and there is no ignore region; `0` cannot be read as a verified negative for them"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_tables() {
        assert_eq!(required_datasets("layers"), &["data", "layer_class_ids"]);
        assert_eq!(required_datasets("boxes"), &[] as &[&str]);
        assert!(allowed_dtypes("bitmask").contains(&"uint64"));
        assert!(!allowed_dtypes("labelmap").contains(&"int32"));
    }
}
