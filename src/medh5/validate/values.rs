//! What several rules share: the layout's vocabulary (layout groups, voxel
//! annotation kinds), the annotations' kinds, and small numeric datasets read
//! as numbers (bounded by [`MAX_ELEMENTS`]).

use purehdf::low_level::dataset::Dataset;

use super::ctx::{attr_str, Ctx};
use crate::canonical_json::Json;
use crate::sample::scalar_json;

/// Layout groups whose members are identified objects.
pub const LAYOUT_GROUPS: &[&str] = &["grids", "images", "annotations", "transforms"];
/// Annotation kinds holding voxel data.
pub const VOXEL_KINDS: &[&str] = &[
    "labelmap",
    "layers",
    "bitmask",
    "instances",
    "probmap",
    "mask",
];

/// Cap on the elements read from one dataset by these checks.
pub const MAX_ELEMENTS: u64 = 1 << 24;

/// A small numeric dataset as f64 values.
pub fn read_floats(ds: &Dataset) -> Option<Vec<f64>> {
    if ds.num_elements() > MAX_ELEMENTS {
        return None;
    }
    let raw = ds.read_all_raw().ok()?;
    let size = usize::try_from(ds.dtype().size()).ok()?;
    if size == 0 {
        return None;
    }
    raw.chunks_exact(size)
        .map(|el| match scalar_json(ds.dtype(), el)? {
            Json::Float(f) => Some(f),
            Json::Int(i) => Some(i as f64),
            Json::UInt(u) => Some(u as f64),
            _ => None,
        })
        .collect()
}

/// Read a small integer dataset as i128 values (little- or big-endian).
pub fn read_ints(ds: &Dataset) -> Option<Vec<i128>> {
    let raw = ds.read_all_raw().ok()?;
    let dt = ds.dtype();
    let size = usize::try_from(dt.size()).ok()?;
    if size == 0 {
        return None;
    }
    raw.chunks_exact(size)
        .map(|el| match scalar_json(dt, el)? {
            Json::Int(i) => Some(i128::from(i)),
            Json::UInt(u) => Some(i128::from(u)),
            Json::Bool(b) => Some(i128::from(b)),
            _ => None,
        })
        .collect()
}

/// Kinds of the annotations (`(id, kind)`, unreadable kinds as `""`).
pub fn annotation_kinds(ctx: &Ctx<'_>) -> Vec<(String, String)> {
    ctx.member_names("annotations")
        .into_iter()
        .map(|id| {
            let attrs = ctx.attrs(&format!("annotations/{id}"));
            let kind = attr_str(&attrs, "kind").unwrap_or("").to_string();
            (id, kind)
        })
        .collect()
}
