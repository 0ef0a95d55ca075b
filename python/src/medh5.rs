//! The medh5 calls the Python `purehdf.medh5` module makes: opening a
//! sample (refused unless self-contained), verifying it and recomputing its
//! `content_id`, all through `purehdf_medh5`.

use crate::errors::medh5_to_py;
use crate::read::NativeFile;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyModule};

/// Open the medh5 sample at `path` as a file handle (a medh5 error when it
/// is not a self-contained sample).
#[pyfunction]
fn medh5_open(py: Python<'_>, path: std::path::PathBuf) -> PyResult<NativeFile> {
    let s = py
        .detach(|| purehdf_medh5::open(&path))
        .map_err(medh5_to_py)?;
    Ok(NativeFile { file: s.file })
}

/// Verify the sample (§5.7): the report's fields as a dict; `partial`
/// recomputes only the named dataset paths.
#[pyfunction]
#[pyo3(signature = (f, display, partial=None))]
fn medh5_verify<'py>(
    py: Python<'py>,
    f: &NativeFile,
    display: &str,
    partial: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyDict>> {
    let file = &f.file;
    let r = py
        .detach(|| purehdf_medh5::verify::verify_file(file, display, partial.as_deref()))
        .map_err(medh5_to_py)?;
    let d = PyDict::new(py);
    d.set_item("ok", r.ok)?;
    d.set_item("checked_count", r.checked)?;
    d.set_item("mismatched", r.mismatched)?;
    d.set_item("undigested", r.undigested)?;
    d.set_item("unattested", r.unattested)?;
    d.set_item("malformed", r.malformed)?;
    d.set_item("content_id_ok", r.content_id_ok)?;
    d.set_item("stale_index", r.stale_index)?;
    d.set_item("unverifiable", r.unverifiable)?;
    Ok(d)
}

/// Recompute the sample's `content_id` from its stored digests (§5.4).
#[pyfunction]
fn medh5_compute_content_id(py: Python<'_>, f: &NativeFile) -> PyResult<String> {
    let file = &f.file;
    py.detach(|| purehdf_medh5::verify::compute_content_id(file))
        .map_err(medh5_to_py)
}

/// Add the medh5 functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(medh5_open, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_verify, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_compute_content_id, m)?)?;
    Ok(())
}
