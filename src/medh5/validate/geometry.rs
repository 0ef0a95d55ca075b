//! Geometry rules (`docs/medh5-format.md` §2.3, §9.2 E102–E111): each grid's
//! attributes — presence and lengths (E109), axis kinds (E110, E103),
//! spacing (E104), direction orthonormal to 1e-4 (E102), time values; an empty
//! `grids` (E111); and at semantic level the grids' timepoints (E106, E107).

use std::collections::BTreeMap;

use crate::canonical_json::Json;
use crate::pyfloat;
use purehdf::low_level::file::Object;

use super::ctx::{attr, attr_str, json_floats, json_ints, json_strs, py_strs, Ctx};
use super::document::timepoint_ids;

/// Attributes every grid carries.
pub const REQUIRED: &[&str] = &[
    "shape",
    "axis_names",
    "axis_kinds",
    "spacing",
    "origin",
    "direction",
    "coord_system",
    "units",
];
const AXIS_KINDS: &[&str] = &["spatial", "channel", "time", "other"];
const UNITS: &[&str] = &["mm", "um", "m", "px"];
/// Orthonormality tolerance of `direction`.
pub const ORTHO_TOL: f64 = 1e-4;

/// What the other rules need to know of a grid.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GridInfo {
    /// The grid's `shape` attribute, one extent per axis (empty when missing
    /// or not integers; a negative extent reads as 0).
    pub shape: Vec<u64>,
    /// The `axis_kinds` attribute (`spatial`, `channel`, `time`, `other`),
    /// parallel to `shape`; a 2-D or 3-D grid without it is all `spatial`.
    pub kinds: Vec<String>,
    /// The `units` attribute of the spatial axes (`mm`, `um`, `m`, `px`),
    /// when it is a string.
    pub units: Option<String>,
    /// The id of the timepoint the grid belongs to (`timepoint` attribute).
    pub timepoint: Option<String>,
    /// The frame of reference the grid's world coordinates are in
    /// (`frame_uid` attribute), when given.
    pub frame_uid: Option<String>,
    /// The `coord_system` attribute (`LPS`, `RAS`, ...), when a string.
    pub coord_system: Option<String>,
}

impl GridInfo {
    /// The spatial extents (axes of kind `spatial`).
    pub fn spatial_shape(&self) -> Vec<u64> {
        self.shape
            .iter()
            .zip(&self.kinds)
            .filter(|(_, k)| *k == "spatial")
            .map(|(s, _)| *s)
            .collect()
    }

    /// The channel extent, when the grid has a channel axis.
    pub fn channel_extent(&self) -> Option<u64> {
        self.shape
            .iter()
            .zip(&self.kinds)
            .find(|(_, k)| *k == "channel")
            .map(|(s, _)| *s)
    }
}

/// Every readable grid group, by id.
pub fn grids(ctx: &Ctx<'_>) -> BTreeMap<String, GridInfo> {
    let mut out = BTreeMap::new();
    for id in ctx.member_names("grids") {
        let rel = format!("grids/{id}");
        if !matches!(ctx.object(&rel), Some(Object::Group(_))) {
            continue;
        }
        let a = ctx.attrs(&rel);
        let shape: Vec<u64> = attr(&a, "shape")
            .and_then(json_ints)
            .map(|v| {
                v.into_iter()
                    .map(|x| u64::try_from(x).unwrap_or(0))
                    .collect()
            })
            .unwrap_or_default();
        let mut kinds = attr(&a, "axis_kinds")
            .and_then(json_strs)
            .unwrap_or_default();
        if kinds.is_empty() && (shape.len() == 2 || shape.len() == 3) {
            kinds = vec!["spatial".to_string(); shape.len()];
        }
        out.insert(
            id,
            GridInfo {
                shape,
                kinds,
                units: attr_str(&a, "units").map(str::to_string),
                timepoint: attr_str(&a, "timepoint").map(str::to_string),
                frame_uid: attr_str(&a, "frame_uid").map(str::to_string),
                coord_system: attr_str(&a, "coord_system").map(str::to_string),
            },
        );
    }
    out
}

/// The largest `|D·Dᵀ − I|` element of a square matrix given as rows.
pub fn ortho_residual(rows: &[Vec<f64>]) -> f64 {
    let n = rows.len();
    let mut worst: f64 = 0.0;
    for i in 0..n {
        for j in 0..n {
            let (Some(a), Some(b)) = (rows.get(i), rows.get(j)) else {
                continue;
            };
            let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            let target = if i == j { 1.0 } else { 0.0 };
            let r = (dot - target).abs();
            if r.is_nan() {
                return f64::INFINITY;
            }
            worst = worst.max(r);
        }
    }
    worst
}

/// Whether the spatial axes (indexes) are contiguous and trailing among `n` axes.
pub fn spatial_trailing(kinds: &[String]) -> Result<(), (Vec<usize>, Vec<usize>)> {
    let at: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| *k == "spatial")
        .map(|(i, _)| i)
        .collect();
    let expect: Vec<usize> = (kinds.len() - at.len()..kinds.len()).collect();
    if at == expect {
        Ok(())
    } else {
        Err((at, expect))
    }
}

fn tuple(v: &[usize]) -> String {
    let p: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("({})", p.join(", "))
}

fn float_list(v: &[f64]) -> String {
    let p: Vec<String> = v.iter().map(|x| pyfloat::repr(*x)).collect();
    format!("[{}]", p.join(", "))
}

/// The geometry rule (structural).
pub fn check_geometry(ctx: &mut Ctx<'_>) {
    let ids = ctx.member_names("grids");
    if ids.is_empty() && matches!(ctx.object("grids"), Some(Object::Group(_))) {
        ctx.emit("E111", "/grids", "a sample must declare at least one grid");
    }
    for id in ids {
        let rel = format!("grids/{id}");
        let loc = format!("/{rel}");
        match ctx.object(&rel) {
            Some(Object::Group(_)) => check_grid(ctx, &rel, &loc),
            Some(o) => ctx.emit(
                "E109",
                &loc,
                format!(
                    "is a {}; a grid is a group whose attributes hold its geometry (§3.2)",
                    o.kind_name()
                ),
            ),
            None => {}
        }
    }
}

fn check_grid(ctx: &mut Ctx<'_>, rel: &str, loc: &str) {
    let a = ctx.attrs(rel);
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|n| attr(&a, n).is_none())
        .collect();
    if !missing.is_empty() {
        ctx.emit(
            "E109",
            loc,
            format!("missing required attribute(s) {}", py_strs(&missing)),
        );
    }
    let shape = attr(&a, "shape").map(|s| json_ints(s).unwrap_or_default());
    if let Some(shape) = &shape {
        if shape.is_empty() || shape.iter().any(|&d| d <= 0) {
            ctx.emit("E109", loc, "`shape` must be a list of positive integers");
        }
    }
    let ndim = shape.as_ref().map(Vec::len);
    let kinds = attr(&a, "axis_kinds").and_then(json_strs);
    let mut spatial = None;
    if let Some(kinds) = &kinds {
        if ndim.is_some_and(|n| n != kinds.len()) {
            ctx.emit(
                "E109",
                loc,
                "`axis_kinds` length differs from the grid's dimensionality",
            );
        } else if let Some(bad) = kinds.iter().find(|k| !AXIS_KINDS.contains(&k.as_str())) {
            ctx.emit("E109", loc, format!("unknown axis kind '{bad}'"));
        } else {
            let count = |k: &str| kinds.iter().filter(|x| *x == k).count();
            let s = count("spatial");
            let mut ok = true;
            if !(2..=3).contains(&s) {
                ctx.emit(
                    "E110",
                    loc,
                    format!("{s} spatial axes; the spec allows 2 or 3"),
                );
                ok = false;
            }
            if count("time") > 1 || count("channel") > 1 {
                ctx.emit(
                    "E110",
                    loc,
                    "at most one `time` and one `channel` axis are allowed",
                );
                ok = false;
            }
            if ok {
                if let Err((at, expect)) = spatial_trailing(kinds) {
                    ctx.emit(
                        "E103",
                        loc,
                        format!(
                            "spatial axes at {} must be contiguous and trailing (expected {})",
                            tuple(&at),
                            tuple(&expect)
                        ),
                    );
                } else {
                    spatial = Some(s);
                }
            }
            if ok && count("time") == 1 && attr(&a, "time_values").is_none() {
                ctx.emit("E109", loc, "grid has a `time` axis but no `time_values`; §3.2 requires one acquisition time per frame");
            }
        }
    }
    if let Some(names) = attr(&a, "axis_names").map(|n| json_strs(n).unwrap_or_default()) {
        if ndim.is_some_and(|n| n != names.len()) {
            ctx.emit(
                "E109",
                loc,
                "`axis_names` length differs from the grid's dimensionality",
            );
        }
    }
    if let Some(s) = spatial {
        check_spatial(ctx, &a, loc, s);
    }
    if let Some(u) = attr(&a, "units") {
        match u {
            Json::Str(s) if UNITS.contains(&s.as_str()) => {}
            other => ctx.emit(
                "E109",
                loc,
                format!("unknown units {}", other.to_canonical()),
            ),
        }
    }
}

fn check_spatial(ctx: &mut Ctx<'_>, a: &[(String, Json)], loc: &str, s: usize) {
    if let Some(sp) = attr(a, "spacing") {
        match json_floats(sp) {
            Some(v) if v.len() == s => {
                if v.iter().any(|x| !x.is_finite() || *x <= 0.0) {
                    ctx.emit(
                        "E104",
                        loc,
                        format!("spacing {} must be finite and > 0", float_list(&v)),
                    );
                }
            }
            _ => ctx.emit("E109", loc, format!("`spacing` must hold {s} numbers")),
        }
    }
    if let Some(o) = attr(a, "origin") {
        match json_floats(o) {
            Some(v) if v.len() == s && v.iter().all(|x| x.is_finite()) => {}
            _ => ctx.emit(
                "E109",
                loc,
                format!("`origin` must hold {s} finite numbers"),
            ),
        }
    }
    if let Some(d) = attr(a, "direction") {
        let rows: Option<Vec<Vec<f64>>> = match d {
            Json::Array(rows) => rows.iter().map(json_floats).collect(),
            _ => None,
        };
        match rows {
            Some(r) if r.len() == s && r.iter().all(|x| x.len() == s) => {
                let res = ortho_residual(&r);
                if res > ORTHO_TOL {
                    let shown = (res * 1e6).round() / 1e6;
                    ctx.emit(
                        "E102",
                        loc,
                        format!(
                            "`direction` is not orthonormal (max residual {})",
                            pyfloat::repr(shown)
                        ),
                    );
                }
            }
            _ => ctx.emit("E109", loc, format!("`direction` must be a {s}x{s} matrix")),
        }
    }
}

/// Grids' timepoints (E106, E107; semantic).
pub fn check_grid_timepoints(ctx: &mut Ctx<'_>) {
    let declared = timepoint_ids(ctx);
    // a grid that is not a group (E109) is judged by its attributes too, as
    // the reference does
    let mut timepoints: BTreeMap<String, Option<String>> = grids(ctx)
        .into_iter()
        .map(|(id, g)| (id, g.timepoint))
        .collect();
    for id in ctx.member_names("grids") {
        let rel = format!("grids/{id}");
        if matches!(ctx.object(&rel), Some(Object::Dataset(_))) {
            let tp = attr_str(&ctx.attrs(&rel), "timepoint").map(str::to_string);
            timepoints.insert(id, tp);
        }
    }
    for (id, timepoint) in timepoints {
        let loc = format!("/grids/{id}");
        match &timepoint {
            None if declared.len() > 1 => ctx.emit(
                "E106",
                &loc,
                format!(
                    "grid has no `timepoint`, but the sample declares {} timepoints",
                    declared.len()
                ),
            ),
            Some(tp) if ctx.doc.is_some() && !declared.contains(tp) => ctx.emit(
                "E107",
                &loc,
                format!(
                    "`timepoint` '{tp}' is not declared (declared: {})",
                    py_strs(&declared)
                ),
            ),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residual_of_a_sheared_direction() {
        let d = vec![
            vec![1.0, 0.4, 0.0],
            vec![0.0, 1.0, 0.0],
            vec![0.0, 0.0, 1.0],
        ];
        assert!((ortho_residual(&d) - 0.4).abs() < 1e-12);
        let id = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
        assert_eq!(ortho_residual(&id), 0.0);
        let rot = vec![vec![0.6, -0.8], vec![0.8, 0.6]];
        assert!(ortho_residual(&rot) < 1e-12);
    }

    #[test]
    fn spatial_axes_must_trail() {
        let k = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(spatial_trailing(&k(&["time", "spatial", "spatial", "spatial"])).is_ok());
        assert_eq!(
            spatial_trailing(&k(&["spatial", "spatial", "channel"])),
            Err((vec![0, 1], vec![1, 2]))
        );
    }

    #[test]
    fn spatial_shape_and_channels() {
        let g = GridInfo {
            shape: vec![3, 32, 32],
            kinds: vec!["channel".into(), "spatial".into(), "spatial".into()],
            ..Default::default()
        };
        assert_eq!(g.spatial_shape(), vec![32, 32]);
        assert_eq!(g.channel_extent(), Some(3));
    }
}
