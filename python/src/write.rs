#[pyo3::pyclass] pub(crate) struct NativeWriter {}
