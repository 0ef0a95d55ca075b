//! Semantic annotation rules on values (`docs/medh5-format.md` §2.5, §9.2
//! E404, W908, W916, W918): one positive class per scope unit of a
//! single-label classification (E404), implicit closure that contradicts a
//! negative ancestor (W916) or sits on a voxel annotation (W918), and layers
//! beyond what a greedy colouring of the overlap graph needs (W908).

use std::collections::{BTreeMap, BTreeSet};

use crate::canonical_json::Json;
use crate::model::encode::greedy_colour;
use purehdf::low_level::file::Object;

use super::annotations::IGNORE_ID;
use super::ctx::{attr, attr_str, py_list, Ctx};
use super::labels::classes;
use super::values::read_floats;
use super::values::read_ints;
use super::values::VOXEL_KINDS;

/// Cap on the voxels read to build a layer overlap graph.
const MAX_LAYER_ELEMENTS: u64 = 1 << 26;

fn ints(ctx: &Ctx<'_>, rel: &str) -> Option<Vec<i128>> {
    match ctx.object(rel)? {
        Object::Dataset(ds) => read_ints(&ds),
        _ => None,
    }
}

fn floats(ctx: &Ctx<'_>, rel: &str) -> Option<Vec<f64>> {
    match ctx.object(rel)? {
        Object::Dataset(ds) => read_floats(&ds),
        _ => None,
    }
}

/// `is_a` ancestors of every class of the inline label set.
fn ancestors(ctx: &Ctx<'_>) -> BTreeMap<i64, BTreeSet<i64>> {
    let cs = ctx.doc_get("label_set").map(classes).unwrap_or_default();
    let parents: BTreeMap<i64, Vec<i64>> = cs.iter().map(|c| (c.id, c.parents.clone())).collect();
    let mut out = BTreeMap::new();
    for c in &cs {
        let mut seen = BTreeSet::new();
        let mut stack = c.parents.clone();
        while let Some(p) = stack.pop() {
            if seen.insert(p) {
                stack.extend(parents.get(&p).cloned().unwrap_or_default());
            }
        }
        out.insert(c.id, seen);
    }
    out
}

fn key_of(ctx: &Ctx<'_>, id: i64) -> String {
    ctx.doc_get("label_set")
        .map(classes)
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.id == id)
        .map_or_else(|| id.to_string(), |c| c.key)
}

/// The closure and classification rule (semantic).
pub fn check_implicit_closure(ctx: &mut Ctx<'_>) {
    let anc = ancestors(ctx);
    for id in ctx.member_names("annotations") {
        let rel = format!("annotations/{id}");
        let loc = format!("/{rel}");
        let a = ctx.attrs(&rel);
        let kind = attr_str(&a, "kind").unwrap_or("").to_string();
        let implicit = attr_str(&a, "closure") == Some("implicit");
        if implicit && VOXEL_KINDS.contains(&kind.as_str()) {
            ctx.emit("W918", &loc, "a voxel annotation declares closure='implicit': readers include every `is_a` descendant's voxels in each ancestor's reads (§5.4); writers SHOULD use 'explicit' for voxel annotations");
        }
        if kind == "classification" {
            classification(ctx, &rel, &loc, &a, implicit, &anc);
        }
        if kind == "layers" {
            layers(ctx, &rel, &loc);
        }
    }
}

fn classification(
    ctx: &mut Ctx<'_>,
    rel: &str,
    loc: &str,
    a: &[(String, Json)],
    implicit: bool,
    anc: &BTreeMap<i64, BTreeSet<i64>>,
) {
    let (Some(cids), Some(values)) = (
        ints(ctx, &format!("{rel}/class_ids")),
        floats(ctx, &format!("{rel}/values")),
    ) else {
        return;
    };
    let units = ints(ctx, &format!("{rel}/scope_ids")).unwrap_or_else(|| vec![0; cids.len()]);
    let multilabel = matches!(attr(a, "multilabel"), Some(Json::Bool(true)));
    if !multilabel {
        let mut positives: BTreeMap<i128, usize> = BTreeMap::new();
        for (u, v) in units.iter().zip(&values) {
            if *v >= 0.5 {
                *positives.entry(*u).or_default() += 1;
            }
        }
        let several: Vec<i128> = positives
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(u, _)| u)
            .collect();
        if !several.is_empty() {
            ctx.emit(
                "E404",
                loc,
                format!("multilabel=false allows one positive class per scope unit, but unit(s) {} carry several", py_list(&several)),
            );
        }
    }
    if !implicit {
        return;
    }
    let rows: Vec<(i128, i64, f64)> = units
        .iter()
        .zip(&cids)
        .zip(&values)
        .filter_map(|((u, c), v)| Some((*u, i64::try_from(*c).ok()?, *v)))
        .collect();
    for &(u, neg, nv) in rows.iter().filter(|r| r.2 < 0.5) {
        for &(_, pos, _) in rows.iter().filter(|r| r.0 == u && r.2 >= 0.5) {
            if anc.get(&pos).is_some_and(|s| s.contains(&neg)) {
                ctx.emit(
                    "W916",
                    loc,
                    format!(
                        "class '{}' ({neg}) is asserted negative ({}) in the annotation, where its `is_a` descendant '{}' ({pos}) is asserted positive: under closure='implicit' readers answer it positive (§5.4, §9)",
                        key_of(ctx, neg),
                        crate::pyfloat::repr(nv),
                        key_of(ctx, pos)
                    ),
                );
            }
        }
    }
}

/// W908: more layers than a greedy colouring of the overlap graph needs.
fn layers(ctx: &mut Ctx<'_>, rel: &str, loc: &str) {
    let Some(Object::Dataset(ds)) = ctx.object(&format!("{rel}/data")) else {
        return;
    };
    let shape = ds.shape().to_vec();
    let Some((&l, rest)) = shape.split_first() else {
        return;
    };
    if l < 2 || ds.num_elements() > MAX_LAYER_ELEMENTS {
        return;
    }
    let Some(data) = read_ints(&ds) else {
        return;
    };
    let plane = rest.iter().product::<u64>() as usize;
    let mut edges: BTreeSet<(u16, u16)> = BTreeSet::new();
    let mut present: BTreeSet<u16> = BTreeSet::new();
    let mut here: Vec<u16> = Vec::new();
    for v in 0..plane {
        here.clear();
        for layer in 0..l as usize {
            let c = data.get(layer * plane + v).copied().unwrap_or(0);
            if c != 0 && c != IGNORE_ID {
                here.push(u16::try_from(c).unwrap_or(u16::MAX));
            }
        }
        for (i, &x) in here.iter().enumerate() {
            present.insert(x);
            for &y in here.iter().skip(i + 1) {
                if x != y {
                    edges.insert((x.min(y), x.max(y)));
                }
            }
        }
    }
    let ids: Vec<u16> = present.into_iter().collect();
    let edges: Vec<(u16, u16)> = edges.into_iter().collect();
    let colours = greedy_colour(&ids, &edges);
    let needed = colours.values().copied().max().map_or(1, |m| m + 1) as u64;
    if l > needed {
        let cut = 100 - needed * 100 / l;
        ctx.emit(
            "W908",
            loc,
            format!("{l} layers where a greedy colouring of the overlap graph needs {needed}; transcoding would cut the label volume by {cut}%"),
        );
    }
}
