//! Files and medh5 samples at URLs (`s3://`, `gs://`, `az://`,
//! `http(s)://`) for `purehdf.File(url)` and `purehdf.medh5.open(url)`:
//! the library's ranged, cached object reads (`purehdf::low_level::remote`).
//! Built with the crate's `remote` feature; without it the Python layer
//! says the wheel has no URL support.

use crate::errors::{medh5_to_py, IntoPy};
use crate::read::NativeFile;
use pyo3::prelude::*;
use pyo3::types::PyModule;

/// Open the HDF5 object at `url` (credentials and endpoint from the
/// environment, as the `h5` tool takes them).
#[pyfunction]
fn open_url(py: Python<'_>, url: &str) -> PyResult<NativeFile> {
    let file = py.detach(|| purehdf::File::open_url(url)).py_err()?;
    Ok(NativeFile { file })
}

/// Open the medh5 sample at `url`, refused unless self-contained.
#[pyfunction]
fn medh5_open_url(py: Python<'_>, url: &str) -> PyResult<NativeFile> {
    let s = py
        .detach(|| purehdf_medh5::open_url(url))
        .map_err(medh5_to_py)?;
    Ok(NativeFile { file: s.file })
}

/// Whether `s` is a URL the remote reader takes.
#[pyfunction]
fn is_url(s: &str) -> bool {
    purehdf::low_level::remote::is_url(s)
}

/// Add the URL functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open_url, m)?)?;
    m.add_function(wrap_pyfunction!(medh5_open_url, m)?)?;
    m.add_function(wrap_pyfunction!(is_url, m)?)?;
    Ok(())
}
