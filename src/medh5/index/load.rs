//! What an index is built from (`docs/medh5-format.md` §2.5,
//! §6.8): the voxel annotations of a sample file (every voxel kind but
//! `mask`) with their classes and spatial shape, opened as a streaming
//! [`Volume`] for the dense encodings or decoded whole for `instances`
//! (sparse by construction), and the entry built from either.

use super::scan::{build_volume, Planes, Volume};
use super::{build_entry, IndexEntry, IndexOptions};
use crate::canonical_json::Json;
use crate::create::num_dtype;
use crate::error::{Error, Result};
use crate::integrity::{dtype_descr, to_little_endian};
use crate::model::annotation::Encoding;
use crate::model::half::{f16_to_f64, f32_to_f16};
use crate::model::ArrayData;
use crate::sample::attr_json;
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::file::{File, Object};

/// Voxel kinds an index is built for.
pub const INDEXED_KINDS: [&str; 5] = ["labelmap", "layers", "bitmask", "instances", "probmap"];

/// One voxel annotation of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VoxelAnnotation {
    /// The annotation id (its group name under `annotations/`).
    pub id: String,
    /// Its `kind`, one of [`INDEXED_KINDS`].
    pub kind: String,
    /// The annotation's `class_ids`, ascending.
    pub class_ids: Vec<u16>,
    /// Spatial extents of its grid.
    pub spatial: Vec<u64>,
}

fn bad(msg: String) -> Error {
    Error::Code {
        code: "E001".into(),
        message: msg,
    }
}

fn json_attr(
    file: &File,
    attrs: &[purehdf::low_level::attribute::Attribute],
    name: &str,
) -> Result<Option<Json>> {
    match attrs.iter().find(|a| a.name == name) {
        Some(a) => Ok(Some(attr_json(file, a)?)),
        None => Ok(None),
    }
}

fn ints(j: Option<Json>) -> Vec<i64> {
    match j {
        Some(Json::Array(v)) => v
            .into_iter()
            .filter_map(|x| match x {
                Json::Int(i) => Some(i),
                _ => None,
            })
            .collect(),
        Some(Json::Int(i)) => vec![i],
        _ => Vec::new(),
    }
}

/// The strings of a string or string-list attribute value.
pub(crate) fn strings(j: Option<Json>) -> Vec<String> {
    match j {
        Some(Json::Array(v)) => v
            .into_iter()
            .filter_map(|x| match x {
                Json::Str(s) => Some(s),
                _ => None,
            })
            .collect(),
        Some(Json::Str(s)) => vec![s],
        _ => Vec::new(),
    }
}

fn text(j: Option<Json>) -> Option<String> {
    match j {
        Some(Json::Str(s)) => Some(s),
        _ => None,
    }
}

/// The spatial extents of grid `id`: its `shape` on the axes `axis_kinds`
/// calls spatial (every axis when that attribute is absent).
fn grid_spatial(file: &File, id: &str) -> Result<Vec<u64>> {
    let g = file.object(&format!("grids/{id}"))?;
    let attrs = g.attributes()?;
    let shape = ints(json_attr(file, &attrs, "shape")?);
    let kinds = strings(json_attr(file, &attrs, "axis_kinds")?);
    let out: Vec<u64> = shape
        .iter()
        .enumerate()
        .filter(|(i, _)| kinds.get(*i).is_none_or(|k| k == "spatial"))
        .map(|(_, &d)| u64::try_from(d).unwrap_or(0))
        .collect();
    if out.is_empty() || out.len() > purehdf::low_level::limits::MAX_RANK {
        return Err(bad(format!("grid {id:?} has no usable spatial shape")));
    }
    Ok(out)
}

/// The voxel annotations with at least one class, in byte order of id.
pub fn voxel_annotations(file: &File) -> Result<Vec<VoxelAnnotation>> {
    let Ok(Object::Group(anns)) = file.object("annotations") else {
        return Ok(Vec::new());
    };
    let mut names: Vec<String> = anns.links()?.into_iter().map(|(n, _)| n).collect();
    names.sort();
    let mut out = Vec::new();
    for id in names {
        let Ok(obj) = anns.open(&id) else { continue };
        let attrs = obj.attributes()?;
        let Some(kind) = text(json_attr(file, &attrs, "kind")?) else {
            continue;
        };
        if !INDEXED_KINDS.contains(&kind.as_str()) {
            continue;
        }
        let mut class_ids: Vec<u16> = ints(json_attr(file, &attrs, "class_ids")?)
            .into_iter()
            .filter_map(|c| u16::try_from(c).ok())
            .collect();
        class_ids.sort_unstable();
        class_ids.dedup();
        if class_ids.is_empty() {
            continue;
        }
        let grid = text(json_attr(file, &attrs, "grid")?)
            .ok_or_else(|| bad(format!("annotations/{id} names no grid")))?;
        let spatial = grid_spatial(file, &grid)?;
        out.push(VoxelAnnotation {
            id,
            kind,
            class_ids,
            spatial,
        });
    }
    Ok(out)
}

fn dataset(file: &File, path: &str) -> Result<Dataset> {
    match file.object(path)? {
        Object::Dataset(d) => Ok(*d),
        _ => Err(bad(format!("{path} is not a dataset"))),
    }
}

/// A whole small dataset as [`ArrayData`] (little-endian).
pub fn read_array(ds: &Dataset) -> Result<ArrayData> {
    let dt = num_dtype(&dtype_descr(ds.dtype()).unwrap_or_default())
        .ok_or_else(|| bad(format!("{}: not a numeric dataset", ds.path())))?;
    let mut raw = ds.read_all_raw()?;
    to_little_endian(ds.dtype(), &mut raw);
    ArrayData::from_bytes(dt, ds.shape().to_vec(), raw)
}

/// Most lookup-table entries (planes × values) one volume may need.
const MAX_LUT: u64 = 1 << 26;

fn class_lut(values: &[u16], class_ids: &[u16], wide: bool) -> Vec<u32> {
    let mut lut = vec![u32::MAX; if wide { 1 << 16 } else { 1 << 8 }];
    for &v in values {
        if let (Some(k), Some(slot)) = (
            class_ids.iter().position(|&c| c == v),
            lut.get_mut(usize::from(v)),
        ) {
            *slot = k as u32;
        }
    }
    lut
}

fn shape_check(ds: &Dataset, lead: bool, spatial: &[u64]) -> Result<u64> {
    let shape = ds.shape();
    let (planes, rest) = if lead {
        match shape.split_first() {
            Some((&p, rest)) => (p, rest),
            None => return Err(bad(format!("{}: scalar label data", ds.path()))),
        }
    } else {
        (1, shape)
    };
    if rest != spatial {
        return Err(bad(format!(
            "{}: shape {shape:?} does not fit the grid's {spatial:?}",
            ds.path()
        )));
    }
    Ok(planes)
}

/// Build the entry of one voxel annotation.
pub fn build_annotation(
    file: &File,
    a: &VoxelAnnotation,
    opts: &IndexOptions,
) -> Result<IndexEntry> {
    let base = format!("annotations/{}", a.id);
    let cids = &a.class_ids;
    let wide_of = |ds: &Dataset| match ds.dtype().size() {
        1 => Ok(false),
        2 => Ok(true),
        _ => Err(bad(format!(
            "{}: label data must be 8 or 16 bit",
            ds.path()
        ))),
    };
    match a.kind.as_str() {
        "labelmap" | "layers" => {
            let ds = dataset(file, &format!("{base}/data"))?;
            let lead = a.kind == "layers";
            let planes = shape_check(&ds, lead, &a.spatial)?;
            let wide = wide_of(&ds)?;
            let lut_entries = planes.saturating_mul(if wide { 1 << 16 } else { 1 << 8 });
            if lut_entries > MAX_LUT {
                return Err(Error::Hdf5(purehdf::Error::Limit {
                    structure: "medh5 index",
                    offset: 0,
                    what: "label layers",
                    value: planes,
                    limit: MAX_LUT >> 16,
                }));
            }
            let luts = if lead {
                let rows = read_array(&dataset(file, &format!("{base}/layer_class_ids"))?)?;
                let width = rows.shape.get(1).copied().unwrap_or(0) as usize;
                (0..planes as usize)
                    .map(|l| {
                        let members: Vec<u16> = (0..width)
                            .filter_map(|j| rows.get_u64(l * width + j))
                            .filter_map(|v| u16::try_from(v).ok())
                            .filter(|&v| v != 0)
                            .collect();
                        class_lut(&members, cids, wide)
                    })
                    .collect()
            } else {
                vec![class_lut(cids, cids, wide)]
            };
            let vol = Volume {
                planes,
                has_plane_axis: lead,
                spatial: a.spatial.clone(),
                map: Planes::Values { luts, wide },
                classes: cids.len(),
                slab_bytes: super::scan::SLAB_BYTES,
                ds: &ds,
            };
            build_volume(&vol, cids, opts)
        }
        "bitmask" => {
            let ds = dataset(file, &format!("{base}/data"))?;
            let planes = shape_check(&ds, true, &a.spatial)?;
            let bit_ids = read_array(&dataset(file, &format!("{base}/bit_class_ids"))?)?;
            let bits: Vec<u32> = (0..bit_ids.len())
                .map(|k| {
                    bit_ids
                        .get_u64(k)
                        .and_then(|v| cids.iter().position(|&c| u64::from(c) == v))
                        .map_or(u32::MAX, |p| p as u32)
                })
                .collect();
            let vol = Volume {
                planes,
                has_plane_axis: true,
                spatial: a.spatial.clone(),
                map: Planes::Bits { bits },
                classes: cids.len(),
                slab_bytes: super::scan::SLAB_BYTES,
                ds: &ds,
            };
            build_volume(&vol, cids, opts)
        }
        "probmap" => {
            let ds = dataset(file, &format!("{base}/data"))?;
            let planes = shape_check(&ds, true, &a.spatial)?;
            if planes != cids.len() as u64 {
                return Err(bad(format!(
                    "{base}/data: {planes} planes for {} classes",
                    cids.len()
                )));
            }
            let attrs = file.object(&base)?.attributes()?;
            let t = match json_attr(file, &attrs, "threshold")? {
                Some(Json::Float(x)) => x,
                Some(Json::Int(i)) => i as f64,
                _ => 0.5,
            };
            let half = ds.dtype().size() == 2;
            let threshold = if half {
                f16_to_f64(f32_to_f16(t as f32))
            } else {
                f64::from(t as f32)
            };
            let vol = Volume {
                planes,
                has_plane_axis: true,
                spatial: a.spatial.clone(),
                map: Planes::Probs { half, threshold },
                classes: cids.len(),
                slab_bytes: super::scan::SLAB_BYTES,
                ds: &ds,
            };
            build_volume(&vol, cids, opts)
        }
        "instances" => {
            let arr = |n: &str| -> Result<ArrayData> {
                read_array(&dataset(file, &format!("{base}/{n}"))?)
            };
            let masks = match file.object(&format!("{base}/mask_data")) {
                Ok(_) => Some(Box::new((
                    arr("mask_offsets")?,
                    arr("mask_shapes")?,
                    arr("mask_data")?,
                ))),
                Err(_) => None,
            };
            let enc = Encoding::Instances {
                boxes: arr("boxes")?,
                object_class_ids: arr("class_ids")?,
                instance_ids: ArrayData::from_slice::<u32>(&[0], &[])?,
                masks,
            };
            let n = crate::model::array::element_count(&a.spatial).unwrap_or(u64::MAX);
            if n > purehdf::low_level::limits::MAX_ELEMENTS {
                return Err(Error::Hdf5(purehdf::Error::Limit {
                    structure: "medh5 index",
                    offset: 0,
                    what: "instances grid voxels",
                    value: n,
                    limit: purehdf::low_level::limits::MAX_ELEMENTS,
                }));
            }
            build_entry(&enc, cids, &a.spatial, opts)
        }
        other => Err(bad(format!("{base}: kind {other:?} is not indexed"))),
    }
}
