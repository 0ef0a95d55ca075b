//! Label-set rules (`docs/medh5-format.md` §3.1, §3.4, §9.2 E301–E306, E402,
//! W912): a label set where `seg` needs one (E301), unique class ids (E302),
//! an acyclic hierarchy of known parents (E304, E306), a `ref` set with a uri
//! (E305), annotation classes in the set (E402), and ontology codes on every
//! class an annotation uses (W912).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::ctx::{attr, json_ints, py_list, Ctx};

/// A class of an inline label set.
#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    /// The class id, the value its voxels carry (1–65534 by the schema).
    pub id: i64,
    /// The class's machine key (`liver`); `""` when missing.
    pub key: String,
    /// Ids of the classes this one is a sub-class of (`parents`); non-integer
    /// entries are skipped.
    pub parents: Vec<i64>,
    /// Whether the class has a non-empty `codes` list (ontology bindings);
    /// a used class without one is W912.
    pub has_codes: bool,
}

/// The classes of an inline label set value.
pub fn classes(ls: &Value) -> Vec<Class> {
    ls.get("classes")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter_map(|c| {
                    Some(Class {
                        id: c.get("id")?.as_i64()?,
                        key: c
                            .get("key")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        parents: c
                            .get("parents")
                            .and_then(Value::as_array)
                            .map(|p| p.iter().filter_map(Value::as_i64).collect())
                            .unwrap_or_default(),
                        has_codes: c
                            .get("codes")
                            .and_then(Value::as_array)
                            .is_some_and(|v| !v.is_empty()),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A cycle in the `parents` graph, as the keys along it (first repeated).
pub fn find_cycle(classes: &[Class]) -> Option<Vec<String>> {
    let by_id: BTreeMap<i64, &Class> = classes.iter().map(|c| (c.id, c)).collect();
    // 0 = unvisited, 1 = on the stack, 2 = done.
    let mut state: BTreeMap<i64, u8> = BTreeMap::new();
    for start in classes {
        if state.get(&start.id).copied().unwrap_or(0) != 0 {
            continue;
        }
        let mut stack: Vec<(i64, usize)> = vec![(start.id, 0)];
        state.insert(start.id, 1);
        while let Some((id, next)) = stack.last().copied() {
            let parents = by_id.get(&id).map(|c| c.parents.as_slice()).unwrap_or(&[]);
            match parents.get(next) {
                None => {
                    state.insert(id, 2);
                    stack.pop();
                }
                Some(&p) => {
                    if let Some(top) = stack.last_mut() {
                        top.1 += 1;
                    }
                    match state.get(&p).copied().unwrap_or(0) {
                        1 => {
                            let pos = stack.iter().position(|(x, _)| *x == p).unwrap_or(0);
                            let key =
                                |x: i64| by_id.get(&x).map_or(x.to_string(), |c| c.key.clone());
                            let mut path: Vec<String> = stack
                                .get(pos..)
                                .unwrap_or(&[])
                                .iter()
                                .map(|(x, _)| key(*x))
                                .collect();
                            path.push(key(p));
                            return Some(path);
                        }
                        0 if by_id.contains_key(&p) => {
                            state.insert(p, 1);
                            stack.push((p, 0));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    None
}

fn annotation_class_ids(ctx: &Ctx<'_>) -> Vec<(String, String, Vec<i128>)> {
    ctx.member_names("annotations")
        .into_iter()
        .map(|id| {
            let a = ctx.attrs(&format!("annotations/{id}"));
            let kind = super::ctx::attr_str(&a, "kind").unwrap_or("").to_string();
            let ids = attr(&a, "class_ids")
                .and_then(json_ints)
                .unwrap_or_default();
            (id, kind, ids)
        })
        .collect()
}

/// The label-set rule (semantic).
pub fn check_label_set(ctx: &mut Ctx<'_>) {
    let anns = annotation_class_ids(ctx);
    let Some(ls) = ctx.doc_get("label_set").cloned() else {
        if ctx.doc.is_some() && ctx.has_profile("seg") {
            ctx.emit(
                "E301",
                "/meta#label_set",
                "profile(s) ['seg'] require a label set",
            );
        }
        return;
    };
    let set_id = ls
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let form = ls.get("form").and_then(Value::as_str).unwrap_or("inline");
    if form == "ref" {
        if ls
            .get("uri")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            ctx.emit(
                "E305",
                "/meta",
                format!("label set '{set_id}': form 'ref' requires a uri"),
            );
        }
        return;
    }
    let cs = classes(&ls);
    let mut seen = BTreeSet::new();
    let mut dups = BTreeSet::new();
    for c in &cs {
        if !seen.insert(c.id) {
            dups.insert(c.id);
        }
    }
    if !dups.is_empty() {
        let d: Vec<i64> = dups.into_iter().collect();
        ctx.emit(
            "E302",
            "/meta",
            format!("label set '{set_id}': duplicate class ids {}", py_list(&d)),
        );
    }
    for c in &cs {
        for p in c.parents.iter().filter(|p| !seen.contains(p)) {
            ctx.emit(
                "E306",
                "/meta",
                format!(
                    "label set '{set_id}': class '{}' names unknown parent id {p}",
                    c.key
                ),
            );
        }
    }
    if let Some(cycle) = find_cycle(&cs) {
        ctx.emit(
            "E304",
            "/meta",
            format!(
                "label set '{set_id}': hierarchy cycle {}",
                cycle.join(" -> ")
            ),
        );
    }
    for (id, _, ids) in &anns {
        let missing: Vec<i128> = ids
            .iter()
            .copied()
            .filter(|c| !(0..=i128::from(i64::MAX)).contains(c) || !seen.contains(&(*c as i64)))
            .collect();
        if !missing.is_empty() {
            ctx.emit(
                "E402",
                &format!("/annotations/{id}"),
                format!(
                    "class ids {} are not in label set '{set_id}'",
                    py_list(&missing)
                ),
            );
        }
    }
}

/// The class ids of an inline label set (`None` without one).
pub fn label_class_ids(ctx: &Ctx<'_>) -> Option<BTreeSet<i128>> {
    let ls = ctx.doc_get("label_set")?;
    if ls.get("form").and_then(Value::as_str) == Some("ref") {
        return None;
    }
    Some(classes(ls).into_iter().map(|c| i128::from(c.id)).collect())
}

/// W912: classes annotations use that carry no ontology code (not judged
/// while the label set itself is broken).
pub fn check_ontology_bindings(ctx: &mut Ctx<'_>) {
    let Some(ls) = ctx.doc_get("label_set").cloned() else {
        return;
    };
    let broken = ctx.diags.iter().any(|d| {
        d.location.starts_with(&ctx.prefix)
            && matches!(d.code.as_str(), "E302" | "E304" | "E305" | "E306")
    });
    if broken {
        return;
    }
    let cs = classes(&ls);
    let used: BTreeSet<i128> = annotation_class_ids(ctx)
        .into_iter()
        .flat_map(|(_, _, ids)| ids)
        .collect();
    let unbound: Vec<i128> = used
        .into_iter()
        .filter(|u| cs.iter().any(|c| i128::from(c.id) == *u && !c.has_codes))
        .collect();
    if !unbound.is_empty() {
        ctx.emit(
            "W912",
            "/meta#label_set",
            format!(
                "{} class(es) used by annotations have no ontology binding: {}",
                unbound.len(),
                py_list(&unbound)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cycle_is_found_with_keys() {
        let ls = json!({"classes": [
            {"id": 1, "key": "liver", "name": "L", "parents": [3]},
            {"id": 2, "key": "spleen", "name": "S"},
            {"id": 3, "key": "lesion", "name": "X", "parents": [1]}]});
        let cs = classes(&ls);
        assert_eq!(cs.len(), 3);
        assert_eq!(
            find_cycle(&cs),
            Some(vec![
                "liver".to_string(),
                "lesion".to_string(),
                "liver".to_string()
            ])
        );
        let ok = json!({"classes": [{"id": 1, "key": "a", "name": "A"}, {"id": 2, "key": "b", "name": "B", "parents": [1]}]});
        assert_eq!(find_cycle(&classes(&ok)), None);
    }

    #[test]
    fn codes_flag() {
        let ls = json!({"classes": [{"id": 1, "key": "a", "name": "A", "codes": [{"system": "S", "code": "1"}]},
                                    {"id": 2, "key": "b", "name": "B", "codes": []}]});
        let cs = classes(&ls);
        assert!(cs[0].has_codes);
        assert!(!cs[1].has_codes);
    }
}
