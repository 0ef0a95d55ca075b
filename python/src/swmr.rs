//! SWMR reads from Python: `purehdf.File(path, "r", swmr=True)` opens with
//! the library's SWMR reader ([`purehdf::File::open_swmr`]: a writer's flags
//! checked, no end-of-file check, torn reads retried) and
//! `Dataset.refresh()` re-reads one dataset's header as h5py's does.

use crate::errors::IntoPy;
use crate::read::{NativeDataset, NativeFile};
use pyo3::prelude::*;
use std::path::PathBuf;

/// Open `path` as a SWMR reader (h5py's `File(path, "r", swmr=True)`).
#[pyfunction]
fn open_swmr(py: Python<'_>, path: PathBuf) -> PyResult<NativeFile> {
    let file = py.detach(|| purehdf::File::open_swmr(&path)).py_err()?;
    Ok(NativeFile { file })
}

/// The dataset with its object header (shape, layout, chunk index) read
/// again from the file, as h5py's `Dataset.refresh()` does: its reads walk
/// the chunk index afresh. Returns the fresh handle and whether the shape
/// changed.
#[pyfunction]
fn dataset_refresh(py: Python<'_>, ds: &NativeDataset) -> PyResult<(NativeDataset, bool)> {
    let mut fresh = ds.ds.clone();
    let changed = py.detach(|| fresh.refresh()).py_err()?;
    Ok((NativeDataset { ds: fresh }, changed))
}

/// Add the SWMR functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open_swmr, m)?)?;
    m.add_function(wrap_pyfunction!(dataset_refresh, m)?)?;
    Ok(())
}
