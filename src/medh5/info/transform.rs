//! The `transforms` entries of `medh5 info --json` (`docs/medh5-format.md`
//! §10): what every transform kind has, then each kind's own fields.

use serde_json::{json, Map, Value};

use super::Attrs;
use crate::integrity::dtype_descr;
use purehdf::low_level::file::{File, Object};

/// Largest side of an affine's stored matrix read for its Jacobian.
const MAX_MATRIX: usize = 16;

/// One `transforms` entry: what every kind has, then the kind's own fields.
/// `timepoints` are those of the grids in its two frames, `from` first.
pub(super) fn transform_json(
    file: &File,
    id: &str,
    a: &Attrs,
    frame_tp: &[(Value, Value)],
) -> Value {
    let mut tps: Vec<Value> = Vec::new();
    for frame in [a.get("from_frame"), a.get("to_frame")] {
        for (f, tp) in frame_tp {
            if !frame.is_null() && *f == frame && !tp.is_null() && !tps.contains(tp) {
                tps.push(tp.clone());
            }
        }
    }
    let kind = a.get("kind");
    let mut m = Map::new();
    m.insert("id".into(), json!(id));
    m.insert("kind".into(), kind.clone());
    m.insert("from_frame".into(), a.get("from_frame"));
    m.insert("to_frame".into(), a.get("to_frame"));
    m.insert("units".into(), a.get("units"));
    m.insert("timepoints".into(), Value::Array(tps));
    // an affine is invertible unless it says otherwise; other kinds only
    // when they say so
    let affine = kind.as_str() == Some("affine");
    m.insert("invertible".into(), a.or("invertible", json!(affine)));
    m.insert("inverse_id".into(), a.get("inverse_id"));
    m.insert("metrics".into(), a.get("metrics"));
    m.insert("prov".into(), a.get("prov"));
    let data = |name: &str| match file.object(&format!("transforms/{id}/{name}")) {
        Ok(Object::Dataset(ds)) => Some(ds),
        _ => None,
    };
    match kind.as_str() {
        Some("affine") => {
            let det = data("matrix").and_then(|ds| {
                let n = usize::try_from(*ds.shape().first()?).ok()?;
                // a homogeneous matrix of a 2-D or 3-D transform; anything
                // larger is not read for a determinant
                if n > MAX_MATRIX {
                    return None;
                }
                let v = ds.read::<f64>().ok()?;
                (n >= 2 && v.len() == n * n).then(|| determinant(&v, n, n - 1))
            });
            m.insert("jacobian_determinant".into(), json!(det));
        }
        Some("bspline") => {
            m.insert("cp_grid".into(), a.get("cp_grid"));
            m.insert("order".into(), a.get("order"));
            m.insert("vector_space".into(), a.get("vector_space"));
            m.insert(
                "cp_shape".into(),
                json!(data("control_points").map(|d| d.shape().to_vec())),
            );
        }
        Some("displacement") => {
            m.insert("field_grid".into(), a.get("field_grid"));
            m.insert("vector_space".into(), a.get("vector_space"));
            m.insert("interpolation".into(), a.get("interpolation"));
            let field = data("field");
            m.insert(
                "field_shape".into(),
                json!(field.as_ref().map(|d| d.shape().to_vec())),
            );
            m.insert(
                "field_dtype".into(),
                json!(field.and_then(|d| dtype_descr(d.dtype()))),
            );
        }
        Some("composite") => {
            let comps = a.get("components");
            // every step's target frame is the next one's source, from the
            // composite's source to its target
            let mut at = a.get("from_frame");
            let mut ok = comps.as_array().is_some_and(|c| !c.is_empty());
            for c in comps.as_array().into_iter().flatten() {
                let step = c
                    .as_str()
                    .and_then(|c| file.object(&format!("transforms/{c}")).ok())
                    .and_then(|o| match o {
                        Object::Group(g) => g.attributes().ok(),
                        _ => None,
                    });
                let frame = |name: &str| {
                    step.as_ref().and_then(|attrs| {
                        attrs
                            .iter()
                            .find(|x| x.name == name)
                            .and_then(|x| x.read_string_in(file).ok())
                    })
                };
                if frame("from_frame").map(Value::String) != Some(at.clone()) {
                    ok = false;
                }
                at = frame("to_frame").map_or(Value::Null, Value::String);
            }
            ok &= at == a.get("to_frame");
            m.insert("components".into(), comps);
            m.insert("chain_ok".into(), json!(ok));
        }
        _ => {}
    }
    Value::Object(m)
}

/// Determinant of the top-left `k` x `k` block of the row-major `n` x `n`
/// matrix `v` (Gaussian elimination with partial pivoting).
fn determinant(v: &[f64], n: usize, k: usize) -> f64 {
    let mut a: Vec<Vec<f64>> = (0..k).map(|r| v[r * n..r * n + k].to_vec()).collect();
    let mut det = 1.0;
    for c in 0..k {
        let Some(p) = (c..k).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs())) else {
            return 0.0;
        };
        if a[p][c] == 0.0 {
            return 0.0;
        }
        if p != c {
            a.swap(p, c);
            det = -det;
        }
        det *= a[c][c];
        let (top, rest) = a.split_at_mut(c + 1);
        let pivot = &top[c];
        for row in rest {
            let f = row[c] / pivot[c];
            for (x, p) in row[c..k].iter_mut().zip(&pivot[c..k]) {
                *x -= f * p;
            }
        }
    }
    det
}

#[cfg(test)]
mod tests {
    use super::determinant;

    #[test]
    fn determinant_of_the_linear_part() {
        // 4x4 homogeneous affine: the top-left 3x3 block only
        let m = [
            2.0, 0.0, 0.0, 5.0, //
            0.0, 3.0, 1.0, -1.0, //
            0.0, 1.0, 1.0, 0.5, //
            0.0, 0.0, 0.0, 1.0,
        ];
        assert!((determinant(&m, 4, 3) - 4.0).abs() < 1e-12);
        // a row swap flips the sign; a singular block gives 0
        let swapped = [0.0, 1.0, 1.0, 0.0];
        assert!((determinant(&swapped, 2, 2) + 1.0).abs() < 1e-12);
        assert_eq!(determinant(&[1.0, 2.0, 2.0, 4.0], 2, 2), 0.0);
    }
}
