//! The corpus oracle's comparison of a dump with an expected description (a port of
//! `compare()` and `same_value()` of the shared corpus's `check_dump.py`): groups and
//! datasets must exist with the same kind; readable datasets must have the same
//! shape, dtype and data hash; attribute names must match, and every attribute value
//! or hash that both sides have must agree (floats to 1e-12 relative).

use serde_json::Value;

/// A JSON number or boolean as Python would compare it (`True == 1`).
fn as_num(v: &Value) -> Option<(f64, Option<i128>, bool)> {
    match v {
        Value::Bool(b) => Some((f64::from(u8::from(*b)), Some(i128::from(*b)), false)),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some((i as f64, Some(i128::from(i)), false))
            } else if let Some(u) = n.as_u64() {
                Some((u as f64, Some(i128::from(u)), false))
            } else {
                Some((n.as_f64().unwrap_or(f64::NAN), None, true))
            }
        }
        _ => None,
    }
}

/// `same_value(a, b)` of check_dump.py.
pub fn same_value(a: &Value, b: &Value) -> bool {
    if let (Some((fa, ia, float_a)), Some((fb, ib, float_b))) = (as_num(a), as_num(b)) {
        if matches!(a, Value::Bool(_)) || matches!(b, Value::Bool(_)) || !(float_a || float_b) {
            return match (ia, ib) {
                (Some(x), Some(y)) => x == y,
                _ => fa == fb,
            };
        }
        if fa.is_nan() && fb.is_nan() {
            return true;
        }
        return fa == fb || (fa - fb).abs() <= 1e-12 * fa.abs().max(fb.abs());
    }
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.keys().all(|k| y.contains_key(k))
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

fn show(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "None".into(),
        Some(v) => v.to_string(),
    }
}

/// Differences between the oracle's description `exp` and a dump `got` (empty =
/// match), worded like check_dump.py.
pub fn compare(exp: &Value, got: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    let empty = Vec::new();
    let ours: std::collections::HashMap<&str, &Value> = got
        .get("objects")
        .and_then(Value::as_array)
        .unwrap_or(&empty)
        .iter()
        .filter_map(|o| Some((o.get("path")?.as_str()?, o)))
        .collect();
    for o in exp
        .get("objects")
        .and_then(Value::as_array)
        .unwrap_or(&empty)
    {
        let kind = o.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind != "group" && kind != "dataset" {
            continue;
        }
        let p = o.get("path").and_then(Value::as_str).unwrap_or("");
        let Some(g) = ours.get(p) else {
            diffs.push(format!("{p}: missing"));
            continue;
        };
        let gkind = g.get("kind").and_then(Value::as_str);
        if gkind != Some(kind) {
            diffs.push(format!("{p}: kind {} != {kind}", gkind.unwrap_or("None")));
            continue;
        }
        let read_ok = o.get("read_ok").and_then(Value::as_bool).unwrap_or(false);
        if kind == "dataset" && read_ok {
            for key in ["shape", "dtype"] {
                let (gv, ev) = (g.get(key), o.get(key));
                let gv_n = gv.filter(|v| !v.is_null());
                let ev_n = ev.filter(|v| !v.is_null());
                if gv_n != ev_n {
                    diffs.push(format!("{p}: {key} {} != {}", show(gv), show(ev)));
                }
            }
            if let Some(es) = o.get("sha256").and_then(Value::as_str) {
                if g.get("sha256").and_then(Value::as_str) != Some(es) {
                    let hk = o.get("hash_kind").and_then(Value::as_str).unwrap_or("None");
                    diffs.push(format!("{p}: data sha256 differs ({hk})"));
                }
            }
        }
        let empty_map = serde_json::Map::new();
        let ea = o
            .get("attrs")
            .and_then(Value::as_object)
            .unwrap_or(&empty_map);
        let ga = g
            .get("attrs")
            .and_then(Value::as_object)
            .unwrap_or(&empty_map);
        let mut sym: Vec<&String> = ea
            .keys()
            .filter(|k| !ga.contains_key(*k))
            .chain(ga.keys().filter(|k| !ea.contains_key(*k)))
            .collect();
        if !sym.is_empty() {
            sym.sort();
            sym.truncate(5);
            diffs.push(format!("{p}: attrs {sym:?} differ"));
            continue;
        }
        for (name, ev) in ea {
            let Some(gv) = ga.get(name) else { continue };
            if !ev.get("read_ok").and_then(Value::as_bool).unwrap_or(true) {
                continue;
            }
            match (ev.get("value"), gv.get("value")) {
                (Some(x), Some(y)) => {
                    if !same_value(x, y) {
                        diffs.push(format!("{p}@{name}: value differs"));
                    }
                }
                _ => {
                    if let (Some(es), Some(gs)) = (
                        ev.get("sha256").and_then(Value::as_str),
                        gv.get("sha256")
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty()),
                    ) {
                        if es != gs {
                            diffs.push(format!("{p}@{name}: sha256 differs"));
                        }
                    }
                }
            }
        }
    }
    diffs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn same_value_follows_python_equality() {
        assert!(same_value(&json!(true), &json!(1)));
        assert!(!same_value(&json!(false), &json!(1)));
        assert!(same_value(&json!(1), &json!(1.0)));
        assert!(same_value(&json!(0.1), &json!(0.1 + 1e-17)));
        assert!(!same_value(&json!(0.1), &json!(0.1001)));
        assert!(!same_value(&json!(2), &json!(3)));
        assert!(same_value(&json!([1, [2.5, "a"]]), &json!([1, [2.5, "a"]])));
        assert!(!same_value(&json!([1, 2]), &json!([1, 2, 3])));
        assert!(same_value(
            &json!({"a": 1, "b": 2}),
            &json!({"b": 2, "a": 1})
        ));
        assert!(!same_value(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!same_value(&json!("nan"), &json!("inf")));
        assert!(same_value(&json!(u64::MAX), &json!(u64::MAX)));
    }

    #[test]
    fn compare_reports_like_check_dump() {
        let exp = json!({"objects": [
            {"path": "/", "kind": "group", "attrs": {"a": {"value": 1, "read_ok": true}}},
            {"path": "/d", "kind": "dataset", "read_ok": true, "shape": [2], "dtype": "<i4",
             "sha256": "ab", "hash_kind": "raw-le-packed", "attrs": {}},
            {"path": "/x", "kind": "soft_link"},
            {"path": "/gone", "kind": "group"},
            {"path": "/bad", "kind": "dataset", "read_ok": false, "attrs": {"q": {"read_ok": false, "value": 3}}}
        ]});
        let got = json!({"objects": [
            {"path": "/", "kind": "group", "attrs": {"a": {"value": true}}},
            {"path": "/d", "kind": "dataset", "shape": [2], "dtype": ">i4", "sha256": "cd", "attrs": {}},
            {"path": "/bad", "kind": "dataset", "attrs": {"q": {"value": 4}}}
        ]});
        let d = compare(&exp, &got);
        assert_eq!(
            d,
            vec![
                "/d: dtype \">i4\" != \"<i4\"".to_string(),
                "/d: data sha256 differs (raw-le-packed)".to_string(),
                "/gone: missing".to_string(),
            ]
        );
        let got2 = json!({"objects": [
            {"path": "/", "kind": "dataset", "attrs": {}},
        ]});
        let d2 = compare(&exp, &got2);
        assert_eq!(d2[0], "/: kind dataset != group");
        let got3 = json!({"objects": [{"path": "/", "kind": "group", "attrs": {"b": {}}}]});
        assert_eq!(compare(&exp, &got3)[0], "/: attrs [\"a\", \"b\"] differ");
    }
}
