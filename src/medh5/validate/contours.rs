//! Contour nesting (`docs/medh5-format.md` §9.2 W919; spec §8.6): among the
//! polygons of one class in one plane, a polygon's depth is the number of the
//! others containing it; its `contour_role` (0 outer, 1 hole) should be its
//! depth's parity, which is what a reader takes.

use super::ctx::Ctx;
use super::values::read_floats;
use super::values::read_ints;
use purehdf::low_level::file::Object;

/// Whether 2-D point `p` lies inside polygon `poly` (even-odd rule).
pub fn inside(p: (f64, f64), poly: &[(f64, f64)]) -> bool {
    let mut c = false;
    let n = poly.len();
    for i in 0..n {
        let (Some(&(xi, yi)), Some(&(xj, yj))) = (poly.get(i), poly.get((i + n - 1) % n)) else {
            continue;
        };
        if (yi > p.1) != (yj > p.1) && p.0 < (xj - xi) * (p.1 - yi) / (yj - yi) + xi {
            c = !c;
        }
    }
    c
}

/// Depth of each polygon among those sharing its group key.
pub fn depths(polys: &[Vec<(f64, f64)>], keys: &[(i128, i128, i128)]) -> Vec<usize> {
    polys
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let Some(&first) = p.first() else {
                return 0;
            };
            polys
                .iter()
                .enumerate()
                .filter(|(j, q)| *j != i && keys.get(*j) == keys.get(i) && inside(first, q))
                .count()
        })
        .collect()
}

fn ints(ctx: &Ctx<'_>, rel: &str) -> Option<Vec<i128>> {
    match ctx.object(rel)? {
        Object::Dataset(ds) => read_ints(&ds),
        _ => None,
    }
}

/// W919 over every `contours` annotation (semantic).
pub fn check_contour_roles(ctx: &mut Ctx<'_>) {
    for id in ctx.member_names("annotations") {
        let rel = format!("annotations/{id}");
        let a = ctx.attrs(&rel);
        if super::ctx::attr_str(&a, "kind") != Some("contours") {
            continue;
        }
        let (Some(off), Some(roles), Some(classes), Some(planes)) = (
            ints(ctx, &format!("{rel}/contour_offsets")),
            ints(ctx, &format!("{rel}/contour_role")),
            ints(ctx, &format!("{rel}/contour_class_ids")),
            ints(ctx, &format!("{rel}/contour_plane")),
        ) else {
            continue;
        };
        let Some(Object::Dataset(vds)) = ctx.object(&format!("{rel}/vertices")) else {
            continue;
        };
        let dim = vds.shape().get(1).copied().unwrap_or(3) as usize;
        let Some(verts) = read_floats(&vds) else {
            continue;
        };
        let mut polys = Vec::new();
        let mut keys = Vec::new();
        for (i, w) in off.windows(2).enumerate() {
            let axis = planes.get(2 * i).copied().unwrap_or(0);
            let keep: Vec<usize> = (0..dim).filter(|&d| d as i128 != axis).collect();
            let (Some(&lo), Some(&hi)) = (w.first(), w.get(1)) else {
                continue;
            };
            let (Ok(a), Ok(b)) = (usize::try_from(lo), usize::try_from(hi)) else {
                continue;
            };
            let poly: Vec<(f64, f64)> = (a..b)
                .map(|v| {
                    let at = |d: usize| verts.get(v * dim + d).copied().unwrap_or(f64::NAN);
                    (
                        at(keep.first().copied().unwrap_or(0)),
                        at(keep.get(1).copied().unwrap_or(1)),
                    )
                })
                .collect();
            polys.push(poly);
            keys.push((
                classes.get(i).copied().unwrap_or(0),
                axis,
                planes.get(2 * i + 1).copied().unwrap_or(0),
            ));
        }
        let d = depths(&polys, &keys);
        let bad: Vec<(usize, i128, usize)> = roles
            .iter()
            .zip(&d)
            .enumerate()
            .filter(|(_, (r, dep))| matches!(r, 0 | 1) && **r != (**dep % 2) as i128)
            .map(|(i, (r, dep))| (i, *r, *dep))
            .collect();
        if let Some((i, r, dep)) = bad.first() {
            ctx.emit(
                "W919",
                &format!("/{rel}/contour_role"),
                format!("{} polygon(s) carry a contour_role that disagrees with their depth among their class's polygons in their plane, first polygon {i}: role {r} at depth {dep}; a reader takes the depth (§8.6)", bad.len()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_depths() {
        let outer = vec![(4.0, 4.0), (4.0, 9.0), (9.0, 9.0), (9.0, 4.0)];
        let hole = vec![(6.0, 6.0), (6.0, 7.0), (7.0, 7.0)];
        let apart = vec![(20.0, 20.0), (20.0, 21.0), (21.0, 21.0)];
        assert!(inside((6.0, 6.0), &outer));
        assert!(!inside((20.0, 20.0), &outer));
        let k = (1, 0, 4);
        assert_eq!(
            depths(&[outer.clone(), hole.clone(), apart], &[k, k, k]),
            vec![0, 1, 0]
        );
        // Another class does not nest.
        assert_eq!(depths(&[outer, hole], &[k, (2, 0, 4)]), vec![0, 0]);
    }
}
