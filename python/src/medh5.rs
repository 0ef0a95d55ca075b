pub(crate) fn register(_m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> { Ok(()) }
