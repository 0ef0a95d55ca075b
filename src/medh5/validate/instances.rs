//! Instance and geometric-annotation data rules (`docs/medh5-format.md` §2.5,
//! §9.2 E406, E408, W909): boxes with `lo ≤ hi` and finite bounds (E406),
//! offsets that never decrease and delimit their data (E408), and an instance
//! id that keeps one class across annotations (W909).

use std::collections::BTreeMap;

use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::file::Object;

use super::ctx::{attr_str, py_strs, Ctx};
use super::values::{read_floats, read_ints};

fn dataset(ctx: &Ctx<'_>, rel: &str) -> Option<Dataset> {
    match ctx.object(rel)? {
        Object::Dataset(ds) => Some(*ds),
        _ => None,
    }
}

/// Count the boxes `(N, S, 2)` whose `lo > hi` or with a non-finite bound.
pub fn bad_boxes(values: &[f64]) -> usize {
    values
        .chunks_exact(2)
        .filter(|p| match p {
            [lo, hi] => !lo.is_finite() || !hi.is_finite() || lo > hi,
            _ => false,
        })
        .count()
}

/// Whether a row-major 3x3 matrix is orthonormal with determinant +1 (to 1e-3).
pub fn proper_rotation(m: &[f64]) -> bool {
    let Ok(r) = <[f64; 9]>::try_from(m) else {
        return false;
    };
    let row = |i: usize| [r[3 * i], r[3 * i + 1], r[3 * i + 2]];
    for i in 0..3 {
        for j in 0..3 {
            let (a, b) = (row(i), row(j));
            let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
            let want = if i == j { 1.0 } else { 0.0 };
            if (dot - want).abs() > 1e-3 || dot.is_nan() {
                return false;
            }
        }
    }
    let det = r[0] * (r[4] * r[8] - r[5] * r[7]) - r[1] * (r[3] * r[8] - r[5] * r[6])
        + r[2] * (r[3] * r[7] - r[4] * r[6]);
    (det - 1.0).abs() <= 1e-3
}

/// Whether offsets never decrease.
pub fn monotonic(offsets: &[i128]) -> bool {
    offsets.windows(2).all(|w| w.first() <= w.get(1))
}

/// Data checks of every annotation (structural).
pub fn check_instance_data(ctx: &mut Ctx<'_>) {
    for id in ctx.member_names("annotations") {
        let rel = format!("annotations/{id}");
        let a = ctx.attrs(&rel);
        let Some(kind) = attr_str(&a, "kind").map(str::to_string) else {
            continue;
        };
        let loc = format!("/{rel}");
        if matches!(kind.as_str(), "instances" | "boxes") {
            if let Some(ds) = dataset(ctx, &format!("{rel}/boxes")) {
                if let Some(v) = read_floats(&ds) {
                    let n = v.chunks_exact(2).count();
                    let bad = bad_boxes(&v);
                    let _ = n;
                    if bad > 0 {
                        ctx.emit(
                            "E406",
                            &loc,
                            format!("{bad} box(es) have lo > hi or a bound that is not finite"),
                        );
                    }
                }
            }
        }
        if kind == "instances" {
            if let Some(ds) = dataset(ctx, &format!("{rel}/mask_offsets")) {
                if let Some(off) = read_ints(&ds) {
                    let oloc = format!("{loc}/mask_offsets");
                    if !monotonic(&off) {
                        ctx.emit("E408", &oloc, "`mask_offsets` are not monotonic");
                    } else if let Some(data) = dataset(ctx, &format!("{rel}/mask_data")) {
                        let len = i128::from(data.shape().first().copied().unwrap_or(0));
                        if off.first().is_some_and(|&f| f != 0)
                            || off.last().is_some_and(|&l| l != len)
                        {
                            ctx.emit(
                                "E408",
                                &oloc,
                                format!(
                                    "`mask_offsets` do not delimit `mask_data` of length {len}"
                                ),
                            );
                        }
                    }
                }
            }
        }
        if kind == "obb" {
            if let Some(r) = dataset(ctx, &format!("{rel}/rotations")).and_then(|d| read_floats(&d))
            {
                let bad: Vec<usize> = r
                    .chunks_exact(9)
                    .enumerate()
                    .filter(|(_, m)| !proper_rotation(m))
                    .map(|(i, _)| i)
                    .collect();
                if let Some(first) = bad.first() {
                    ctx.emit("E407", &loc, format!("{} rotation(s) are not proper rotations (orthonormal with det = +1); first at index {first}", bad.len()));
                }
            }
        }
        if kind == "contours" {
            if let Some(roles) =
                dataset(ctx, &format!("{rel}/contour_role")).and_then(|d| read_ints(&d))
            {
                let bad: Vec<(usize, i128)> = roles
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| !matches!(r, 0 | 1))
                    .map(|(i, r)| (i, *r))
                    .collect();
                if let Some((i, r)) = bad.first() {
                    ctx.emit("E404", &format!("{loc}/contour_role"), format!("{} polygon(s) carry a contour_role other than 0 (outer) or 1 (hole), first polygon {i} with {r}", bad.len()));
                }
            }
        }
        if kind == "polylines" {
            if let Some(off) =
                dataset(ctx, &format!("{rel}/polyline_offsets")).and_then(|d| read_ints(&d))
            {
                let short: Vec<(usize, i128)> = off
                    .windows(2)
                    .enumerate()
                    .filter_map(|(i, w)| match w {
                        [a, b] if b - a < 2 && b >= a => Some((i, b - a)),
                        _ => None,
                    })
                    .collect();
                if let Some((i, n)) = short.first() {
                    ctx.emit("E404", &loc, format!("{} polyline(s) span fewer than two vertices, first polyline {i} with {n}; a polyline joins each vertex to the next, so it has at least two (1.2 §3)", short.len()));
                }
            }
        }
        for (offs, verts) in [
            ("contour_offsets", "vertices"),
            ("polyline_offsets", "vertices"),
        ] {
            let (Some(o), Some(v)) = (
                dataset(ctx, &format!("{rel}/{offs}")),
                dataset(ctx, &format!("{rel}/{verts}")),
            ) else {
                continue;
            };
            let Some(off) = read_ints(&o) else {
                continue;
            };
            let len = i128::from(v.shape().first().copied().unwrap_or(0));
            let oloc = format!("{loc}/{offs}");
            if !monotonic(&off) {
                ctx.emit("E408", &oloc, format!("`{offs}` are not monotonic"));
            } else if let Some(&last) = off.last() {
                if last != len {
                    ctx.emit(
                        "E408",
                        &oloc,
                        format!("last offset {last} != {verts} length {len}"),
                    );
                }
            }
        }
    }
}

/// W909: an instance id carrying several classes across annotations.
pub fn check_instance_identity(ctx: &mut Ctx<'_>) {
    // instance id -> class id -> annotations
    let mut seen: BTreeMap<i128, BTreeMap<i128, Vec<String>>> = BTreeMap::new();
    for id in ctx.member_names("annotations") {
        let rel = format!("annotations/{id}");
        let (Some(iids), Some(cids)) = (
            dataset(ctx, &format!("{rel}/instance_ids")).and_then(|d| read_ints(&d)),
            dataset(ctx, &format!("{rel}/class_ids")).and_then(|d| read_ints(&d)),
        ) else {
            continue;
        };
        for (i, c) in iids.iter().zip(&cids) {
            let anns = seen.entry(*i).or_default().entry(*c).or_default();
            if !anns.contains(&id) {
                anns.push(id.clone());
            }
        }
    }
    for (iid, classes) in seen {
        if classes.len() > 1 {
            let parts: Vec<String> = classes
                .iter()
                .map(|(c, anns)| format!("class {c} in {}", py_strs(anns)))
                .collect();
            ctx.emit(
                "W909",
                "/annotations",
                format!("instance id {iid} carries several class ids across annotations ({}); the longitudinal join treats these as one object", parts.join(", ")),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_and_offsets() {
        assert_eq!(bad_boxes(&[0.0, 1.0, 2.0, 1.0, f64::NAN, 3.0]), 2);
        assert_eq!(bad_boxes(&[-0.5, 3.5]), 0);
        assert!(monotonic(&[0, 8, 8, 9]));
        assert!(!monotonic(&[0, 8, 3]));
        let id = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        assert!(proper_rotation(&id));
        let mirror = [-1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        assert!(!proper_rotation(&mirror));
        let shear = [1.0, 0.7, 0.0, 0.0, 0.809, -0.588, 0.0, 0.588, 0.809];
        assert!(!proper_rotation(&shear));
    }
}
