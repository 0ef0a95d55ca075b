//! Image rules (`docs/medh5-format.md` §2.4, §6.2, §9.2 E101, E201–E205,
//! W902): every image is a numeric dataset (or a multiscale group) on an
//! existing grid with the grid's shape, carries `grid`, `modality` and
//! `value_type`, a known `value_type`, `channel_names` matching the channel
//! axis; and bulk datasets are chunked and filtered (W902).

use std::collections::BTreeMap;

pub use crate::helpers::dtype_name;
use crate::integrity::is_bool_enum;
use crate::profiles::is_w902;
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::Datatype;
use purehdf::low_level::file::Object;

use super::ctx::{attr, attr_str, json_floats, json_strs, py_tuple, Ctx};
use super::geometry::{grids, GridInfo};
use super::integrity::walk;

/// Known `value_type`s.
pub const VALUE_TYPES: &[&str] = &[
    "intensity",
    "quantitative",
    "rgb",
    "probability",
    "displacement",
    "mask",
];
/// Annotation kinds whose `data` is stacked along a leading axis.
const STACKED_KINDS: &[&str] = &["layers", "bitmask", "probmap"];

/// Whether `dt` holds numbers (integers, floats, or the bool enum).
pub fn is_numeric(dt: &Datatype) -> bool {
    match dt {
        Datatype::Integer { .. } | Datatype::Float { .. } => true,
        Datatype::Enum { base, members } => is_bool_enum(base, members) || is_numeric(base),
        _ => false,
    }
}

/// The image rule (structural).
pub fn check_images(ctx: &mut Ctx<'_>) {
    let ids = ctx.member_names("images");
    if matches!(ctx.object("images"), Some(Object::Group(_))) {
        if ids.is_empty() {
            ctx.emit(
                "E201",
                "/images",
                "a sample must contain at least one image",
            );
        } else if !ids
            .iter()
            .any(|id| ctx.object(&format!("images/{id}")).is_some())
        {
            ctx.emit(
                "E201",
                "/images",
                "a sample must contain at least one image, and no member of `images` is one",
            );
        }
    }
    let grids = grids(ctx);
    for id in ids {
        let rel = format!("images/{id}");
        let loc = format!("/{rel}");
        let (data, levels) = match ctx.object(&rel) {
            Some(Object::Dataset(ds)) => (Some(*ds), false),
            Some(Object::Group(g)) => (g.dataset("0").ok(), true),
            _ => continue,
        };
        let a = ctx.attrs(&rel);
        for req in ["grid", "modality", "value_type"] {
            if attr(&a, req).is_none() {
                ctx.emit("E205", &loc, format!("missing required attribute '{req}'"));
            }
        }
        if let Some(vt) = attr_str(&a, "value_type") {
            if !VALUE_TYPES.contains(&vt) {
                ctx.emit("E203", &loc, format!("unknown value_type '{vt}'"));
            }
        }
        let grid = attr_str(&a, "grid").map(str::to_string);
        let info = match &grid {
            Some(g) => match grids.get(g) {
                Some(info) => Some(info.clone()),
                None => {
                    ctx.emit(
                        "E101",
                        &loc,
                        format!("names grid '{g}', which does not exist"),
                    );
                    None
                }
            },
            None => None,
        };
        let Some(ds) = data else {
            if levels {
                let missing: Vec<&str> = ["levels", "grid_levels", "downsample_factors"]
                    .into_iter()
                    .filter(|n| attr(&a, n).is_none())
                    .collect();
                // (an image without `grid` is not looked into for levels)
                if grid.is_some() {
                    ctx.emit(
                        "E105",
                        &loc,
                        "multiscale image has no level-0 dataset `0` (§4.3)",
                    );
                }
                if !missing.is_empty() {
                    ctx.emit(
                        "E105",
                        &loc,
                        format!(
                            "multiscale image needs `levels`, `grid_levels` and \
                             `downsample_factors`; missing {}",
                            super::ctx::py_strs(&missing)
                        ),
                    );
                }
            }
            continue;
        };
        if !is_numeric(ds.dtype()) {
            let what = match ds.dtype() {
                Datatype::String { .. } | Datatype::VarString { .. } => "strings",
                _ => "values that are not numbers",
            };
            ctx.emit(
                "E001",
                &loc,
                format!("stores {what}; an image's samples are numbers (§4.2), so no reader can read it"),
            );
            continue;
        }
        if let (Some(info), Some(g)) = (&info, &grid) {
            if !levels && ds.shape() != info.shape.as_slice() {
                ctx.emit(
                    "E202",
                    &loc,
                    format!(
                        "shape {} != grid '{g}' shape {}",
                        py_tuple(ds.shape()),
                        py_tuple(&info.shape)
                    ),
                );
            }
            check_channels(ctx, &a, info, &loc);
        }
        if !levels {
            float_storage(ctx, &ds, &a, &loc);
        }
    }
}

fn check_channels(
    ctx: &mut Ctx<'_>,
    a: &[(String, crate::canonical_json::Json)],
    info: &GridInfo,
    loc: &str,
) {
    let Some(names) = attr(a, "channel_names") else {
        return;
    };
    let names = json_strs(names).unwrap_or_default();
    match info.channel_extent() {
        None => ctx.emit(
            "E204",
            loc,
            "`channel_names` on a grid with no channel axis",
        ),
        Some(c) if c != names.len() as u64 => ctx.emit(
            "E204",
            loc,
            format!(
                "{} `channel_names` for a channel axis of extent {c}",
                names.len()
            ),
        ),
        Some(_) => {}
    }
}

/// Cap on the elements read to judge W907.
const MAX_W907_ELEMENTS: u64 = 1 << 26;

/// W907: a float image whose every value is an integer in int16 range.
fn float_storage(
    ctx: &mut Ctx<'_>,
    ds: &Dataset,
    a: &[(String, crate::canonical_json::Json)],
    loc: &str,
) {
    if !matches!(ds.dtype(), Datatype::Float { .. }) || ds.num_elements() > MAX_W907_ELEMENTS {
        return;
    }
    // an image without `value_type` (E205) is not judged for storage
    if matches!(
        attr_str(a, "value_type"),
        None | Some("probability" | "displacement" | "mask")
    ) {
        return;
    }
    let Some(values) = super::values::read_floats(ds) else {
        return;
    };
    let fits = !values.is_empty()
        && values
            .iter()
            .all(|v| v.fract() == 0.0 && (-32768.0..=32767.0).contains(v));
    if fits {
        ctx.emit(
            "W907",
            loc,
            format!("stored as {} but every value is an integer within int16 range; int16 + rescale is lossless and ~3x smaller", dtype_name(ds.dtype())),
        );
    }
}

/// Human size as the reference prints it (`1.1 MiB`).
pub fn human_size(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", units.get(u).copied().unwrap_or("B"))
    }
}

/// Stored bytes per element as W902 counts them (vlen strings: 8).
fn element_size(ds: &Dataset) -> u64 {
    match ds.dtype() {
        Datatype::VarString { .. } => 8,
        dt => dt.size(),
    }
}

/// Bulk storage (W902): bulk datasets chunked and filtered, stacked
/// annotation data chunked `(1, …)`.
pub fn check_bulk_storage(ctx: &mut Ctx<'_>) {
    let kinds: BTreeMap<String, String> =
        super::values::annotation_kinds(ctx).into_iter().collect();
    let Ok(w) = walk(ctx) else {
        return;
    };
    for f in &w.datasets {
        let stacked = f
            .path
            .strip_prefix("annotations/")
            .and_then(|r| r.strip_suffix("/data"))
            .and_then(|id| kinds.get(id))
            .is_some_and(|k| STACKED_KINDS.contains(&k.as_str()));
        let chunks = f.ds.chunk_dims();
        let filtered = !f.ds.filters().is_empty();
        let esize = element_size(&f.ds);
        if is_w902(&f.path, f.ds.shape(), esize, chunks, filtered, stacked) {
            let bytes =
                f.ds.shape()
                    .iter()
                    .try_fold(esize, |a, &d| a.checked_mul(d))
                    .unwrap_or(u64::MAX);
            let why = match chunks {
                None => "is unchunked".to_string(),
                Some(c) if stacked && c.first().is_some_and(|&x| x != 1) => {
                    format!(
                        "is a stacked encoding chunked {} (the first chunk extent must be 1)",
                        py_tuple(c)
                    )
                }
                Some(_) => "is chunked but unfiltered".to_string(),
            };
            ctx.emit(
                "W902",
                &format!("/{}", f.path),
                format!("{} dataset {why}", human_size(bytes)),
            );
        }
    }
}

/// Multiscale pyramids (E105, semantic): level `k` lies on its own grid with
/// spacing `spacing₀·f` and origin `origin₀ + D·((f − 1)/2·spacing₀)`, and its
/// dataset has that grid's shape.
pub fn check_multiscale(ctx: &mut Ctx<'_>) {
    let grid_attrs = |ctx: &Ctx<'_>, g: &str| {
        let a = ctx.attrs(&format!("grids/{g}"));
        let get = |n: &str| attr(&a, n).and_then(json_floats).unwrap_or_default();
        let dir: Vec<Vec<f64>> = match attr(&a, "direction") {
            Some(crate::canonical_json::Json::Array(rows)) => {
                rows.iter().filter_map(json_floats).collect()
            }
            _ => Vec::new(),
        };
        (get("spacing"), get("origin"), dir)
    };
    for id in ctx.member_names("images") {
        let rel = format!("images/{id}");
        let Some(Object::Group(g)) = ctx.object(&rel) else {
            continue;
        };
        let a = ctx.attrs(&rel);
        let levels = attr(&a, "grid_levels")
            .and_then(json_strs)
            .unwrap_or_default();
        let factors: Vec<Vec<f64>> = match attr(&a, "downsample_factors") {
            Some(crate::canonical_json::Json::Array(rows)) => {
                rows.iter().filter_map(json_floats).collect()
            }
            _ => Vec::new(),
        };
        let Some(base) = levels.first() else {
            continue;
        };
        let (sp0, or0, dir) = grid_attrs(ctx, base);
        // direction[i][j], the identity where the grid does not give it
        let dir_at = |i: usize, j: usize| {
            dir.get(i)
                .and_then(|r| r.get(j))
                .copied()
                .unwrap_or(if i == j { 1.0 } else { 0.0 })
        };
        let loc = format!("/{rel}");
        for (k, lg) in levels.iter().enumerate().skip(1) {
            let Some(f) = factors.get(k) else {
                continue;
            };
            let (sp, or, _) = grid_attrs(ctx, lg);
            if sp.len() != sp0.len() || or.len() != or0.len() || f.len() != sp0.len() {
                continue;
            }
            let shift: Vec<f64> = f
                .iter()
                .zip(&sp0)
                .map(|(f, s)| (f - 1.0) / 2.0 * s)
                .collect();
            let want: Vec<f64> = (0..or0.len())
                .map(|i| {
                    let moved: f64 = (0..shift.len())
                        .map(|j| dir_at(i, j) * shift.get(j).copied().unwrap_or(0.0))
                        .sum();
                    or0.get(i).copied().unwrap_or(0.0) + moved
                })
                .collect();
            let off = or
                .iter()
                .zip(&want)
                .zip(&sp)
                .any(|((o, w), s)| (o - w).abs() > 1e-3 * s.abs().max(1e-9));
            if off {
                // the reference prints these numbers shortest, `0` for 0.0
                let show = |v: &[f64]| {
                    let p: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
                    format!("({})", p.join(", "))
                };
                // the miss in voxels of this level along each of its axes:
                // (direction^T (origin - wanted)) / spacing
                let miss: Vec<f64> = (0..sp.len())
                    .map(|j| {
                        let along: f64 = (0..or.len())
                            .map(|i| {
                                dir_at(i, j)
                                    * (or.get(i).copied().unwrap_or(0.0)
                                        - want.get(i).copied().unwrap_or(0.0))
                            })
                            .sum();
                        along / sp.get(j).copied().unwrap_or(1.0)
                    })
                    .collect();
                ctx.emit(
                    "E105",
                    &loc,
                    format!(
                        "level {k}: origin {} != {}, {} of a voxel off along its axes \
                         (half-voxel shift missing?)",
                        show(&or),
                        show(&want),
                        show(&miss)
                    ),
                );
            }
            let sp_off = sp
                .iter()
                .zip(f.iter().zip(&sp0))
                .any(|(s, (f, s0))| (s - f * s0).abs() > 1e-6 * s.abs().max(1.0));
            if sp_off {
                ctx.emit(
                    "E105",
                    &loc,
                    format!(
                        "level {k}: spacing is not the base spacing times the downsample factor"
                    ),
                );
            }
            if let (Ok(ds), Some(info)) = (g.dataset(&k.to_string()), grids(ctx).get(lg)) {
                if ds.shape() != info.shape.as_slice() {
                    ctx.emit(
                        "E105",
                        &loc,
                        format!(
                            "level {k}: shape {} != grid '{lg}' shape {}",
                            py_tuple(ds.shape()),
                            py_tuple(&info.shape)
                        ),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_sizes() {
        assert_eq!(dtype_name(&Datatype::int(2, true)), "int16");
        assert_eq!(dtype_name(&Datatype::int(1, false)), "uint8");
        assert_eq!(dtype_name(&Datatype::float(4)), "float32");
        assert_eq!(human_size(1_179_648), "1.1 MiB");
        assert_eq!(human_size(512), "512 B");
        assert!(is_numeric(&Datatype::float(2)));
    }
}
