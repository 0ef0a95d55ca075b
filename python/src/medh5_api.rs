//! The medh5 library calls behind `purehdf.medh5`'s reference-shaped API:
//! labelmap decoding, per-class voxel counts and boxes, patch draws from the
//! sampling index, collection members, `pack` and `recompress` — each a thin
//! call into `purehdf_medh5`, run with the GIL released.

use crate::errors::medh5_to_py;
use crate::read::NativeFile;
use purehdf_medh5::index::classes::ClassWeights;
use purehdf_medh5::index::draw::{Sampler, Strategy};
use purehdf_medh5::index::load::{build_annotation, voxel_annotations};
use purehdf_medh5::index::{IndexOptions, Rng};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyModule};
use std::path::PathBuf;

/// One voxel annotation: `(id, kind, class_ids, spatial shape)`.
type VoxelRow = (String, String, Vec<u16>, Vec<u64>);

/// Per-class statistics: `(class_ids, int64 counts, float32 boxes, spatial shape)`.
type ClassStats<'py> = (
    Vec<u16>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Vec<u64>,
);

/// `(id, kind, class_ids, spatial shape)` of every voxel annotation with
/// classes, in byte order of id.
#[pyfunction]
fn medh5_voxel_annotations(py: Python<'_>, f: &NativeFile) -> PyResult<Vec<VoxelRow>> {
    let file = &f.file;
    let v = py.detach(|| voxel_annotations(file)).map_err(medh5_to_py)?;
    Ok(v.into_iter()
        .map(|a| (a.id, a.kind, a.class_ids, a.spatial))
        .collect())
}

/// Annotation `ann` decoded to one uint16 label volume (little-endian
/// bytes), over the box `start .. start + count` when given; `priority`
/// lists the classes painted last, the last one winning. Returns `(bytes,
/// shape, voxels overwritten)`.
#[pyfunction]
#[pyo3(signature = (f, ann, start=None, count=None, priority=Vec::new()))]
fn medh5_labelmap<'py>(
    py: Python<'py>,
    f: &NativeFile,
    ann: &str,
    start: Option<Vec<u64>>,
    count: Option<Vec<u64>>,
    priority: Vec<u16>,
) -> PyResult<(Bound<'py, PyByteArray>, Vec<u64>, u64)> {
    let file = &f.file;
    let roi = match (&start, &count) {
        (Some(s), Some(c)) => Some((s.as_slice(), c.as_slice())),
        (None, None) => None,
        _ => return Err(PyValueError::new_err("start and count go together")),
    };
    let v = py
        .detach(|| purehdf_medh5::labelmap::decode(file, ann, roi, &priority))
        .map_err(medh5_to_py)?;
    let bytes = PyByteArray::new(py, &v.to_le_bytes());
    Ok((bytes, v.shape, v.overwritten))
}

/// Exact per-class statistics of annotation `ann`, as its sampling index
/// would store them: `(class_ids, voxel_counts as int64 bytes, class boxes as
/// float32 (C, S, 2) bytes, spatial shape)`.
#[pyfunction]
fn medh5_class_stats<'py>(py: Python<'py>, f: &NativeFile, ann: &str) -> PyResult<ClassStats<'py>> {
    let file = &f.file;
    let (a, e) = py
        .detach(|| {
            let a = voxel_annotations(file)?
                .into_iter()
                .find(|a| a.id == ann)
                .ok_or_else(|| {
                    purehdf_medh5::Error::invalid(format!(
                        "annotations/{ann} is not a voxel annotation with classes"
                    ))
                })?;
            let opts = IndexOptions {
                max_coords: 1,
                seed: 0,
                occupancy: 0,
            };
            let e = build_annotation(file, &a, &opts)?;
            Ok((a, e))
        })
        .map_err(medh5_to_py)?;
    Ok((
        a.class_ids,
        PyByteArray::new(py, &e.voxel_counts.bytes),
        PyByteArray::new(py, &e.class_bboxes.bytes),
        a.spatial,
    ))
}

/// One draw as Python values: `(start, stop, pad, center, strategy,
/// class_id, used_index)`.
type DrawTuple = (
    Vec<u64>,
    Vec<u64>,
    Vec<(u64, u64)>,
    Vec<u64>,
    &'static str,
    Option<u16>,
    Option<bool>,
);

/// Patch draws on annotation `ann`: for each seed list, `n` draws from one
/// generator seeded by it (`Rng::from_seeds`), so `[[seed, epoch, i]]` with
/// `n = 1` is the reference's `draw(..., rng=(seed, epoch, i))` and one list
/// with `n > 1` its `draws(..., n, rng=seed)`.
#[pyfunction]
#[pyo3(signature = (f, ann, patch, strategy, foreground_prob, seeds, n=1, classes=None, weights="uniform", weight_map=None))]
#[allow(clippy::too_many_arguments)]
fn medh5_draws(
    py: Python<'_>,
    f: &NativeFile,
    ann: &str,
    patch: Vec<u64>,
    strategy: &str,
    foreground_prob: f64,
    seeds: Vec<Vec<u64>>,
    n: usize,
    classes: Option<Vec<u16>>,
    weights: &str,
    weight_map: Option<Vec<(u16, f64)>>,
) -> PyResult<Vec<DrawTuple>> {
    let weights = match weight_map {
        Some(m) => ClassWeights::from_map(&m),
        None => ClassWeights::from_name(weights),
    }
    .map_err(medh5_to_py)?;
    let strategy = Strategy::from_name(strategy).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown strategy {strategy:?}: uniform, foreground or balanced"
        ))
    })?;
    if !foreground_prob.is_finite() || !(0.0..=1.0).contains(&foreground_prob) {
        return Err(PyValueError::new_err(format!(
            "foreground_prob {foreground_prob} is not in [0, 1]"
        )));
    }
    let file = &f.file;
    let draws = py
        .detach(|| {
            let mut sm = Sampler::open(file, ann, &patch, strategy)?;
            sm.set_foreground_prob(foreground_prob);
            sm.set_classes(classes);
            sm.set_class_weights(weights);
            let mut out = Vec::with_capacity(seeds.len().saturating_mul(n).min(1 << 20));
            for s in &seeds {
                let mut r = Rng::from_seeds(s);
                for _ in 0..n {
                    out.push(sm.draw_with(&mut r)?);
                }
            }
            Ok::<_, purehdf_medh5::Error>(out)
        })
        .map_err(medh5_to_py)?;
    Ok(draws
        .into_iter()
        .map(|p| {
            (
                p.start,
                p.stop,
                p.pad,
                p.center,
                p.strategy.name(),
                p.class_id,
                p.used_index,
            )
        })
        .collect())
}

/// The class a foreground draw seeded by `seeds` targets among `counts`
/// (class id to voxel count), weighted by `weights` / `weight_map` (the
/// reference's `PatchSampler._pick_class`).
#[pyfunction]
#[pyo3(signature = (counts, seeds, weights="uniform", weight_map=None))]
fn medh5_pick_class(
    counts: Vec<(u16, u64)>,
    seeds: Vec<u64>,
    weights: &str,
    weight_map: Option<Vec<(u16, f64)>>,
) -> PyResult<Option<u16>> {
    let w = match weight_map {
        Some(m) => ClassWeights::from_map(&m),
        None => ClassWeights::from_name(weights),
    }
    .map_err(medh5_to_py)?;
    Ok(w.pick(&counts, &mut Rng::from_seeds(&seeds)))
}

/// The sampling-index entries of `f` (`index/<annotation>`) whose
/// `source_digest` still matches their annotation (§6.8): `(entry, fresh)`.
#[pyfunction]
fn medh5_index_entries(py: Python<'_>, f: &NativeFile) -> PyResult<Vec<(String, bool)>> {
    use purehdf::Object;
    use purehdf_medh5::canonical_json::Json;
    let file = &f.file;
    py.detach(|| {
        let Ok(Object::Group(g)) = file.object("index") else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (name, _) in g.links()? {
            let Ok(Object::Group(e)) = file.object(&format!("index/{name}")) else {
                continue;
            };
            let declared = match e.attribute("source_digest") {
                Ok(a) => match purehdf_medh5::sample::attr_json(file, &a)? {
                    Json::Str(s) => Some(s),
                    _ => None,
                },
                Err(_) => None,
            };
            let actual = purehdf_medh5::index::build::source_digest(file, &name)?;
            let fresh = declared.is_some_and(|d| d.starts_with("sha256:") && Some(d) == actual);
            out.push((name, fresh));
        }
        out.sort();
        Ok::<_, purehdf_medh5::Error>(out)
    })
    .map_err(medh5_to_py)
}

/// The member samples of collection `f`: `(key, root address)`.
#[pyfunction]
fn medh5_members(py: Python<'_>, f: &NativeFile) -> PyResult<Vec<(String, u64)>> {
    let file = &f.file;
    py.detach(|| purehdf_medh5::collection::members(file))
        .map_err(medh5_to_py)
}

/// Member `key` of collection `f`, read as a sample.
#[pyfunction]
fn medh5_member(py: Python<'_>, f: &NativeFile, key: &str) -> PyResult<NativeFile> {
    let file = &f.file;
    let m = py
        .detach(|| purehdf_medh5::collection::open_member(file, key))
        .map_err(medh5_to_py)?;
    Ok(NativeFile { file: m })
}

/// Pack `sources` into the collection `out` (`keys`: one per source, or
/// empty for the default keys); the result as `pack --json` prints it.
#[pyfunction]
fn medh5_pack(
    py: Python<'_>,
    sources: Vec<PathBuf>,
    out: PathBuf,
    keys: Vec<String>,
) -> PyResult<String> {
    let p = py
        .detach(|| purehdf_medh5::collection::pack(&sources, &out, &keys))
        .map_err(medh5_to_py)?;
    Ok(p.to_json().to_string())
}

/// Re-encode the sample at `path` under `profile` (into `out`, or in place);
/// the result as `recompress --json` prints it.
#[pyfunction]
#[pyo3(signature = (path, profile, out=None, rechunk=false))]
fn medh5_recompress(
    py: Python<'_>,
    path: PathBuf,
    profile: &str,
    out: Option<PathBuf>,
    rechunk: bool,
) -> PyResult<String> {
    let profile = purehdf_medh5::Profile::from_name(Some(profile)).map_err(medh5_to_py)?;
    let opts = purehdf_medh5::recompress::RecompressOptions {
        profile,
        rechunk,
        out,
    };
    let display = path.display().to_string();
    let r = py
        .detach(|| purehdf_medh5::recompress::recompress_path(&path, &display, &opts))
        .map_err(medh5_to_py)?;
    Ok(r.to_json().to_string())
}

/// Add the functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(medh5_voxel_annotations, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_labelmap, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_class_stats, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_draws, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_pick_class, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_index_entries, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_members, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_member, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_pack, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_recompress, m)?)?;
    Ok(())
}
