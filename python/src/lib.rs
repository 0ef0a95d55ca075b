//! purehdf's Python extension module (`purehdf._native`): the file, dataset
//! and writer handles the pure-Python layer (`python/purehdf`) wraps in
//! h5py's shapes, and the medh5 sample calls. No libhdf5, no C.

mod codecs;
mod convert;
mod dtype;
mod edit;
mod errors;
mod medh5;
mod medh5_api;
mod medh5_write;
mod read;
mod read_fill;
#[cfg(feature = "remote")]
mod remote;
mod swmr;
mod write;

use pyo3::prelude::*;

/// Use `n` threads for decoding and encoding (0: back to the default, the
/// `MEDH5_THREADS` / `RAYON_NUM_THREADS` environment variables, then every core).
#[pyfunction]
fn set_threads(n: usize) -> PyResult<()> {
    purehdf::set_threads(n).map_err(errors::to_py)
}

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(set_threads, m)?)?;
    m.add_class::<read::NativeFile>()?;
    m.add_class::<read::NativeDataset>()?;
    m.add_class::<write::NativeWriter>()?;
    m.add_class::<edit::NativeEditor>()?;
    m.add(
        "CorruptFileError",
        py.get_type::<errors::CorruptFileError>(),
    )?;
    m.add(
        "UnsupportedError",
        py.get_type::<errors::UnsupportedError>(),
    )?;
    m.add("LimitError", py.get_type::<errors::LimitError>())?;
    m.add("Medh5Error", py.get_type::<errors::Medh5Error>())?;
    medh5::register(m)?;
    medh5_api::register(m)?;
    medh5_write::register(m)?;
    codecs::register(m)?;
    swmr::register(m)?;
    #[cfg(feature = "remote")]
    remote::register(m)?;
    Ok(())
}
