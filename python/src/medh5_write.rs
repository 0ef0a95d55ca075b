//! The medh5 writers behind `purehdf.medh5.create` and `amend`: the Python
//! `SampleWriter` collects a manifest (document, grids, images, annotations)
//! and its arrays, and these calls build the sample with
//! `purehdf_medh5::create::sample_from_manifest_with`, then write it fresh
//! (`create::plan` + `writer::write_plan_owned`, atomic) or amend the
//! existing file copy-on-write (`amend::Amend`). No medh5 logic lives here.

use crate::errors::medh5_to_py;
use purehdf_medh5::amend::{Amend, NewDataset};
use purehdf_medh5::chunking::{detect_l3_bytes, writer_chunk_shape};
use purehdf_medh5::create::{num_dtype, plan, sample_from_manifest_with};
use purehdf_medh5::model::ArrayData;
use purehdf_medh5::profiles::{is_contiguous, Role};
use purehdf_medh5::{Error, Result};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyModule};
use std::collections::HashMap;
use std::path::PathBuf;

/// One array the manifest names: `(name, numpy descr, shape, C-order bytes)`.
type ArrayRow<'py> = (String, String, Vec<u64>, Bound<'py, PyBytes>);

/// The arrays by name: `(numpy descr, shape, C-order bytes)`.
type Arrays = HashMap<String, (String, Vec<u64>, Vec<u8>)>;

/// The arrays by name, copied out of the Python bytes (with the GIL held).
fn collect(arrays: Vec<ArrayRow<'_>>) -> PyResult<Arrays> {
    let mut out = HashMap::with_capacity(arrays.len());
    for (name, descr, shape, bytes) in arrays {
        out.insert(name, (descr, shape, bytes.as_bytes().to_vec()));
    }
    Ok(out)
}

/// The loader `sample_from_manifest_with` calls: each named array, moved out.
fn loader(mut arrays: Arrays) -> impl FnMut(&str) -> Result<ArrayData> {
    move |name| {
        let (descr, shape, bytes) = arrays
            .remove(name)
            .ok_or_else(|| Error::invalid(format!("no array {name:?} was given")))?;
        let dt = num_dtype(&descr)
            .ok_or_else(|| Error::invalid(format!("{name}: unsupported dtype {descr}")))?;
        ArrayData::from_bytes(dt, shape, bytes)
    }
}

fn parse(manifest: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(manifest)
        .map_err(|e| PyValueError::new_err(format!("writer manifest: {e}")))
}

/// Write a new sample at `path` from `manifest` (JSON) and its `arrays`;
/// atomic (nothing at `path` until the rename). Returns the `content_id`.
#[pyfunction]
fn medh5_create(
    py: Python<'_>,
    path: PathBuf,
    manifest: &str,
    arrays: Vec<ArrayRow<'_>>,
) -> PyResult<String> {
    let m = parse(manifest)?;
    let arrays = collect(arrays)?;
    py.detach(move || -> Result<String> {
        let (sample, profile) = sample_from_manifest_with(&m, &mut loader(arrays))?;
        let p = plan(sample, profile, None)?;
        let id = p.content_id.clone();
        purehdf_medh5::writer::write_plan_owned(p, &path)?;
        Ok(id)
    })
    .map_err(medh5_to_py)
}

/// A dataset of an added object, stored as a fresh write stores it
/// (`plan.rs`): contiguous below 64 KiB, else chunked by its grid (`chunk`;
/// the file's derivation when the grid gave none) with `profile`'s codec.
fn new_dataset(
    src: &purehdf::low_level::file::File,
    rel: &str,
    data: ArrayData,
    chunk: Option<Vec<u64>>,
    role: Role,
    profile: purehdf_medh5::profiles::Profile,
    attrs: Vec<(String, purehdf_medh5::attribute::AttrValue)>,
) -> Result<NewDataset> {
    let item = data.dtype.size();
    let chunked = if is_contiguous(&data.shape, u64::from(item)) {
        None
    } else {
        let chunk =
            chunk.unwrap_or_else(|| writer_chunk_shape(src, rel, &data.shape, u64::from(item)));
        let pipeline = profile.codec(role).pipeline(item, &chunk)?;
        Some((chunk, pipeline))
    };
    Ok(NewDataset {
        dtype: data.dtype.datatype(),
        shape: data.shape,
        chunked,
        data: data.bytes,
        attrs,
    })
}

/// Amend the sample at `path` copy-on-write: remove the `removed`
/// sample-relative paths, then add the images and annotations `manifest`
/// lists (its `document` becomes `/meta`; its grids are the file's, for
/// the annotations' shapes). Returns the new `content_id`.
#[pyfunction]
fn medh5_amend(
    py: Python<'_>,
    path: PathBuf,
    manifest: &str,
    arrays: Vec<ArrayRow<'_>>,
    removed: Vec<String>,
) -> PyResult<String> {
    let m = parse(manifest)?;
    let arrays = collect(arrays)?;
    py.detach(move || -> Result<String> {
        let (sample, profile) = sample_from_manifest_with(&m, &mut loader(arrays))?;
        let mut a = Amend::open(&path)?;
        for r in &removed {
            a.remove(r)?;
        }
        if m.get("document").is_some() {
            // the typed document's serialisation: the reference's member order
            *a.document_mut() = sample.document.to_json();
        }
        for p in &sample.declared_profiles {
            a.add_profile(p);
        }
        let l3 = detect_l3_bytes();
        for image in &sample.images {
            // chunked by its grid in the file, as `create` chunks it
            a.add_image(image, profile)?;
        }
        for ann in sample.annotations {
            let rel = format!("annotations/{}", ann.id);
            a.add_group(&rel, ann.attrs())?;
            let grid = sample.grids.iter().find(|g| g.id == ann.grid);
            for (name, data) in ann.encoding.into_datasets() {
                let drel = format!("{rel}/{name}");
                let item = u64::from(data.dtype.size());
                let chunk = match (name, grid) {
                    ("data", Some(g)) => Some(g.annotation_chunks(&data.shape, item, l3)?),
                    _ => None,
                };
                let ds = new_dataset(a.source(), &drel, data, chunk, Role::Label, profile, vec![])?;
                a.add_dataset(&drel, ds)?;
            }
        }
        a.commit()
    })
    .map_err(medh5_to_py)
}

/// Add the writer functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(medh5_create, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_amend, m)?)?;
    Ok(())
}
