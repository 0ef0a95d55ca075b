//! Transform rules (`docs/medh5-format.md` §9.2 E501–E506, W910, W911,
//! W917; spec §10): known kinds (E502), affine last row (E504), mutual
//! inverses (E505), composite chains (E501), displacement field grids in the
//! source frame (E503), one unit for the transform and its grids (E506); and
//! the frames of reference across timepoints (W910, W911) and dimensionalities
//! (W917).

use std::collections::BTreeMap;

use crate::canonical_json::Json;
use crate::pyfloat;
use purehdf::low_level::file::Object;

use super::ctx::{attr_str, json_strs, py_strs, Ctx};
use super::document::timepoint_ids;
use super::geometry::{grids, GridInfo};

const KINDS: &[&str] = &["identity", "affine", "displacement", "bspline", "composite"];

/// A transform's header.
#[derive(Clone, Debug, Default)]
struct Tf {
    kind: String,
    /// Whether the transform has a `kind` attribute at all.
    has_kind: bool,
    from_frame: Option<String>,
    to_frame: Option<String>,
    from_grid: Option<String>,
    to_grid: Option<String>,
    units: Option<String>,
    inverse_id: Option<String>,
    field_grid: Option<String>,
    components: Vec<String>,
}

fn transforms(ctx: &Ctx<'_>) -> BTreeMap<String, Tf> {
    let mut out = BTreeMap::new();
    for id in ctx.member_names("transforms") {
        let rel = format!("transforms/{id}");
        // a link that names no object is E001's; it is no transform
        if ctx.object(&rel).is_none() {
            continue;
        }
        let a = ctx.attrs(&rel);
        let s = |n: &str| attr_str(&a, n).map(str::to_string);
        out.insert(
            id,
            Tf {
                kind: s("kind").unwrap_or_default(),
                has_kind: super::ctx::attr(&a, "kind").is_some(),
                from_frame: s("from_frame"),
                to_frame: s("to_frame"),
                from_grid: s("from_grid"),
                to_grid: s("to_grid"),
                units: s("units"),
                inverse_id: s("inverse_id"),
                field_grid: s("field_grid"),
                components: super::ctx::attr(&a, "components")
                    .and_then(json_strs)
                    .unwrap_or_default(),
            },
        );
    }
    out
}

/// The timepoint a frame of reference belongs to (through the grids).
fn frame_timepoint(grids: &BTreeMap<String, GridInfo>, frame: &str) -> Option<String> {
    grids
        .values()
        .find(|g| g.frame_uid.as_deref() == Some(frame))
        .and_then(|g| g.timepoint.clone())
}

/// The transform rule (semantic).
pub fn check_transforms(ctx: &mut Ctx<'_>) {
    let grids = grids(ctx);
    let tfs = transforms(ctx);
    for (id, t) in &tfs {
        let loc = format!("/transforms/{id}");
        if !t.has_kind {
            ctx.emit_unprojected("E502", &loc, "transform has no `kind` attribute");
        } else if !KINDS.contains(&t.kind.as_str()) {
            let list: Vec<String> = KINDS.iter().map(|k| format!("'{k}'")).collect();
            ctx.emit(
                "E502",
                &loc,
                format!(
                    "unknown transform kind '{}'; expected one of [{}]",
                    t.kind,
                    list.join(", ")
                ),
            );
            continue;
        }
        if t.kind == "affine" {
            check_affine(ctx, id, &loc);
        }
        if let Some(inv) = &t.inverse_id {
            check_inverse(ctx, &tfs, id, t, inv, &loc);
        }
        if t.kind == "composite" {
            check_chain(ctx, &tfs, t, &loc);
        }
        if let (Some(fg), Some(from)) = (&t.field_grid, &t.from_frame) {
            if let Some(g) = grids.get(fg) {
                if let Some(f) = &g.frame_uid {
                    if f != from {
                        ctx.emit("E503", &loc, format!("field_grid '{fg}' is in frame '{f}' but the transform starts in '{from}'; the field is sampled in the source frame"));
                    }
                }
            }
        }
        check_units(ctx, &grids, t, &loc);
    }
    let tps = timepoint_ids(ctx);
    let bad_timepoints = ctx
        .diags
        .iter()
        .any(|d| d.code == "E108" && d.location.starts_with(&ctx.prefix));
    if tps.len() >= 2 && !bad_timepoints {
        let relates = tfs.values().any(|t| {
            let side = |frame: &Option<String>, grid: &Option<String>| {
                grid.as_ref()
                    .and_then(|g| grids.get(g))
                    .and_then(|g| g.timepoint.clone())
                    .or_else(|| frame.as_ref().and_then(|f| frame_timepoint(&grids, f)))
            };
            match (
                side(&t.from_frame, &t.from_grid),
                side(&t.to_frame, &t.to_grid),
            ) {
                (Some(a), Some(b)) => a != b,
                _ => false,
            }
        });
        if !relates {
            ctx.emit(
                "W911",
                "/transforms",
                format!(
                    "the sample declares {} timepoints but no transform relates any two of them",
                    tps.len()
                ),
            );
        }
    }
    check_frames(ctx, &grids);
}

fn check_affine(ctx: &mut Ctx<'_>, id: &str, loc: &str) {
    let Some(Object::Dataset(ds)) = ctx.object(&format!("transforms/{id}/matrix")) else {
        return;
    };
    let shape = ds.shape().to_vec();
    let (Some(&r), Some(&c)) = (shape.first(), shape.get(1)) else {
        return;
    };
    let Ok(raw) = ds.read_all_raw() else {
        return;
    };
    let size = ds.dtype().size() as usize;
    if size == 0 || r == 0 {
        return;
    }
    let vals: Vec<f64> = raw
        .chunks_exact(size)
        .filter_map(|el| match crate::sample::scalar_json(ds.dtype(), el) {
            Some(Json::Float(f)) => Some(f),
            Some(Json::Int(i)) => Some(i as f64),
            _ => None,
        })
        .collect();
    let start = ((r - 1) * c) as usize;
    let Some(last) = vals.get(start..start + c as usize) else {
        return;
    };
    let want = |i: usize| if i + 1 == last.len() { 1.0 } else { 0.0 };
    if last
        .iter()
        .enumerate()
        .any(|(i, v)| (v - want(i)).abs() > 1e-9)
    {
        let shown: Vec<String> = last.iter().map(|v| pyfloat::repr(*v)).collect();
        ctx.emit(
            "E504",
            loc,
            format!("last row must be [0 … 0 1], got [{}]", shown.join(", ")),
        );
    }
}

fn check_inverse(
    ctx: &mut Ctx<'_>,
    tfs: &BTreeMap<String, Tf>,
    id: &str,
    t: &Tf,
    inv: &str,
    loc: &str,
) {
    let Some(other) = tfs.get(inv) else {
        ctx.emit(
            "E505",
            loc,
            format!("`inverse_id` names '{inv}', which does not exist"),
        );
        return;
    };
    if other.inverse_id.as_deref() != Some(id) {
        ctx.emit(
            "E505",
            loc,
            format!(
                "'{inv}' names '{}' as its inverse, not '{id}'; the relation must be mutual",
                other.inverse_id.as_deref().unwrap_or("")
            ),
        );
    }
    if other.from_frame != t.to_frame || other.to_frame != t.from_frame {
        ctx.emit(
            "E505",
            loc,
            format!(
                "`inverse_id` names '{inv}', which maps '{}' -> '{}'; an inverse must map '{}' -> '{}'",
                other.from_frame.as_deref().unwrap_or(""),
                other.to_frame.as_deref().unwrap_or(""),
                t.to_frame.as_deref().unwrap_or(""),
                t.from_frame.as_deref().unwrap_or("")
            ),
        );
    }
}

fn check_chain(ctx: &mut Ctx<'_>, tfs: &BTreeMap<String, Tf>, t: &Tf, loc: &str) {
    let mut at = t.from_frame.clone();
    for c in &t.components {
        let Some(comp) = tfs.get(c) else {
            ctx.emit("E501", loc, format!("component '{c}' does not exist"));
            return;
        };
        if comp.from_frame != at {
            ctx.emit(
                "E501",
                loc,
                format!("component '{c}' does not start where the chain is"),
            );
            return;
        }
        at = comp.to_frame.clone();
    }
    if at != t.to_frame {
        ctx.emit(
            "E501",
            loc,
            format!(
                "last component ends in '{}' but the composite declares '{}'",
                at.unwrap_or_default(),
                t.to_frame.clone().unwrap_or_default()
            ),
        );
    }
}

fn check_units(ctx: &mut Ctx<'_>, grids: &BTreeMap<String, GridInfo>, t: &Tf, loc: &str) {
    let Some(units) = &t.units else {
        return;
    };
    let mut named: Vec<String> = Vec::new();
    for g in [&t.from_grid, &t.to_grid].into_iter().flatten() {
        if !named.contains(g) {
            named.push(g.clone());
        }
    }
    let bad: Vec<String> = named
        .iter()
        .filter_map(|g| {
            let u = grids.get(g)?.units.clone()?;
            (u != *units && u != "px").then(|| format!("grid '{g}' is in '{u}'"))
        })
        .collect();
    if !bad.is_empty() {
        ctx.emit(
            "E506",
            loc,
            format!("is in '{units}', and {}: a transform maps coordinates in one unit, and none maps between two (§10.1)", bad.join(", ")),
        );
    }
}

/// W910 (a frame shared across timepoints), W917 (a plane and a volume in one frame).
fn check_frames(ctx: &mut Ctx<'_>, grids: &BTreeMap<String, GridInfo>) {
    // frames are judged with the document's timepoints: not without one
    if ctx.doc.is_none() {
        return;
    }
    let mut by_frame: BTreeMap<&str, Vec<(&String, &GridInfo)>> = BTreeMap::new();
    for (id, g) in grids {
        if let Some(f) = &g.frame_uid {
            by_frame.entry(f.as_str()).or_default().push((id, g));
        }
    }
    for (frame, gs) in by_frame {
        let mut tps: Vec<String> = gs.iter().filter_map(|(_, g)| g.timepoint.clone()).collect();
        tps.sort();
        tps.dedup();
        if tps.len() > 1 {
            ctx.emit(
                "W910",
                "/grids",
                format!("frame_uid '{frame}' is shared by timepoints {}; follow-up imaging is a new frame unless the subject was never repositioned", py_strs(&tps)),
            );
        }
        // each pair of grids (in id order) whose spatial ranks differ
        for (i, (a, ga)) in gs.iter().enumerate() {
            for (b, gb) in gs.iter().skip(i + 1) {
                let (da, db) = (ga.spatial_shape().len(), gb.spatial_shape().len());
                if da == db {
                    continue;
                }
                let cs = |g: &GridInfo| g.coord_system.clone().unwrap_or_else(|| "?".into());
                ctx.emit(
                    "W917",
                    "/grids",
                    format!(
                        "grids '{a}' ({da}-D, {}) and '{b}' ({db}-D, {}) name one frame '{frame}': \
                         §3.3 compares neither with the other; give the plane its own frame, or \
                         store it as a one-slice 3-D grid where it lies (§3.6)",
                        cs(ga),
                        cs(gb)
                    ),
                );
            }
        }
    }
}
