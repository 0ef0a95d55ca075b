//! In-place editing: the library's [`Editor`] (`File::open_rw`) driven by
//! the Python layer's `File(path, "r+" | "a")` — attributes set, replaced
//! and deleted, groups and soft links created, links deleted and moved,
//! and box writes into compact or contiguous datasets. Every operation is
//! committed when it returns; reads see the refreshed file.

use crate::errors::IntoPy;
use crate::read::NativeFile;
use purehdf::{Editor, File};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::Mutex;

/// A file open for in-place editing (holds the file's lock until closed).
#[pyclass(module = "purehdf._native")]
pub(crate) struct NativeEditor {
    ed: Mutex<Option<Editor>>,
}

impl NativeEditor {
    fn with<T>(&self, f: impl FnOnce(&mut Editor) -> PyResult<T>) -> PyResult<T> {
        let mut g = self
            .ed
            .lock()
            .map_err(|_| PyValueError::new_err("editor poisoned"))?;
        match g.as_mut() {
            Some(e) => f(e),
            None => Err(PyValueError::new_err("file is closed")),
        }
    }
}

#[pymethods]
impl NativeEditor {
    /// Open `path` for editing (an error when another process holds it).
    #[new]
    fn new(path: std::path::PathBuf) -> PyResult<Self> {
        let ed = File::open_rw(&path).py_err()?;
        Ok(NativeEditor {
            ed: Mutex::new(Some(ed)),
        })
    }

    /// The file as it is now, read-only.
    fn file(&self) -> PyResult<NativeFile> {
        self.with(|e| {
            Ok(NativeFile {
                file: e.file().clone(),
            })
        })
    }

    /// Set attribute `name` of the object at `path` (`shape` None for a null
    /// dataspace; `data` stored bytes or a list of strings).
    fn set_attr(
        &self,
        path: &str,
        name: &str,
        desc: &Bound<'_, PyAny>,
        shape: Option<Vec<u64>>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let value = crate::write::attr_value(desc, shape, data)?;
        self.with(|e| e.set_attr(path, name, &value).py_err())
    }

    /// Delete attribute `name` of the object at `path`.
    fn delete_attr(&self, path: &str, name: &str) -> PyResult<()> {
        self.with(|e| e.delete_attr(path, name).py_err())
    }

    /// Create an empty group at `path`.
    fn create_group(&self, path: &str) -> PyResult<()> {
        self.with(|e| e.create_group(path).py_err())
    }

    /// A soft link at `path` to `target`.
    fn soft_link(&self, target: &str, path: &str) -> PyResult<()> {
        self.with(|e| e.soft_link(target, path).py_err())
    }

    /// A hard link at `path` to the object at `target`.
    fn hard_link(&self, target: &str, path: &str) -> PyResult<()> {
        self.with(|e| e.hard_link(target, path).py_err())
    }

    /// Delete the link at `path`.
    fn delete(&self, path: &str) -> PyResult<()> {
        self.with(|e| e.delete(path).py_err())
    }

    /// Move the link at `src` to `dst`.
    fn rename(&self, src: &str, dst: &str) -> PyResult<()> {
        self.with(|e| e.rename(src, dst).py_err())
    }

    /// Write stored element bytes into the box `start`/`count` of the
    /// dataset at `path` (compact, contiguous or chunked: touched chunks are
    /// re-encoded with the dataset's own filters).
    fn write_slab(
        &self,
        py: Python<'_>,
        path: &str,
        start: Vec<u64>,
        count: Vec<u64>,
        data: &Bound<'_, PyBytes>,
    ) -> PyResult<()> {
        let bytes = data.as_bytes();
        self.with(|e| {
            py.detach(|| e.write_slab(path, &start, &count, bytes))
                .py_err()
        })
    }

    /// Change the extent of the chunked dataset at `path` (within its
    /// maximum shape; shrinking drops the chunks outside).
    fn resize(&self, py: Python<'_>, path: &str, shape: Vec<u64>) -> PyResult<()> {
        self.with(|e| py.detach(|| e.resize(path, &shape)).py_err())
    }

    /// Release the file (and its lock). Safe to call twice.
    fn close(&self) -> PyResult<()> {
        let mut g = self
            .ed
            .lock()
            .map_err(|_| PyValueError::new_err("editor poisoned"))?;
        g.take();
        Ok(())
    }
}
