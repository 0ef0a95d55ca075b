//! Writing: a [`FileWriter`] driven by the Python layer's `File(path, "w")`,
//! which hands over each group, dataset (its whole values) and attribute and
//! commits atomically on close.

use crate::dtype::from_desc;
use crate::errors::IntoPy;
use purehdf::low_level::messages::dataspace::Dataspace;
use purehdf::low_level::write::AttrData;
use purehdf::{
    AttrValue, Blosc2Codec, Blosc2Shuffle, DatasetId, DatasetSpec, FileWriter, Filter, GroupId,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use std::sync::Mutex;

/// One object made so far.
#[derive(Clone, Copy)]
enum Made {
    Group(GroupId),
    Dataset(DatasetId),
}

struct State {
    w: Option<FileWriter>,
    made: Vec<Made>,
}

/// A file being written; nothing appears at the path before `commit`.
#[pyclass(module = "purehdf._native")]
pub(crate) struct NativeWriter {
    state: Mutex<State>,
}

fn closed() -> PyErr {
    PyValueError::new_err("the file is closed")
}

/// The filter pipeline of `(name, options)` pairs.
fn filters(list: &[(String, Vec<i64>)]) -> PyResult<Vec<Filter>> {
    let mut out = Vec::new();
    for (name, opts) in list {
        let o = |i: usize, d: i64| opts.get(i).copied().unwrap_or(d);
        let level = |i: usize, d: i64| u32::try_from(o(i, d)).map_err(|_| bad_level(name));
        let f = match name.as_str() {
            "gzip" | "deflate" => Filter::deflate(level(0, 4)?).py_err()?,
            "shuffle" => Filter::shuffle(),
            "fletcher32" => Filter::fletcher32(),
            "lzf" => Filter::lzf(),
            "lz4" => Filter::lz4(),
            "zstd" => {
                Filter::zstd(i32::try_from(o(0, 3)).map_err(|_| bad_level(name))?).py_err()?
            }
            "bzip2" => Filter::bzip2(level(0, 9)?).py_err()?,
            "bitshuffle" => Filter::bitshuffle(o(0, 0) != 0),
            "blosc2" => {
                let codec = match o(0, 1) {
                    0 => Blosc2Codec::BloscLz,
                    1 => Blosc2Codec::Lz4,
                    2 => Blosc2Codec::Lz4Hc,
                    4 => Blosc2Codec::Zlib,
                    5 => Blosc2Codec::Zstd,
                    _ => return Err(PyValueError::new_err("blosc2: unknown codec")),
                };
                let shuffle = match o(2, 1) {
                    0 => Blosc2Shuffle::None,
                    2 => Blosc2Shuffle::Bit,
                    _ => Blosc2Shuffle::Byte,
                };
                Filter::blosc2(codec, level(1, 5)?, shuffle).py_err()?
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown compression {other:?}"
                )))
            }
        };
        out.push(f);
    }
    Ok(out)
}

fn bad_level(name: &str) -> PyErr {
    PyValueError::new_err(format!("{name}: bad compression option"))
}

fn strings(list: &Bound<'_, PyList>) -> PyResult<Vec<String>> {
    list.iter()
        .map(|x| {
            if let Ok(b) = x.cast::<PyBytes>() {
                Ok(String::from_utf8_lossy(b.as_bytes()).into_owned())
            } else {
                x.extract::<String>()
            }
        })
        .collect()
}

impl NativeWriter {
    fn with<T>(
        &self,
        f: impl FnOnce(&mut FileWriter, &mut Vec<Made>) -> PyResult<T>,
    ) -> PyResult<T> {
        let mut s = self.state.lock().map_err(|_| closed())?;
        let State { w, made } = &mut *s;
        let w = w.as_mut().ok_or_else(closed)?;
        f(w, made)
    }
}

fn group(made: &[Made], id: usize) -> PyResult<GroupId> {
    match made.get(id) {
        Some(Made::Group(g)) => Ok(*g),
        _ => Err(PyTypeError::new_err("not a group")),
    }
}

#[pymethods]
impl NativeWriter {
    /// Start writing the file at `path` (object 0 is the root group).
    #[new]
    fn new(path: std::path::PathBuf) -> PyResult<Self> {
        let w = FileWriter::create(&path).py_err()?;
        let root = w.root();
        Ok(NativeWriter {
            state: Mutex::new(State {
                w: Some(w),
                made: vec![Made::Group(root)],
            }),
        })
    }

    /// Create group `name` in group `parent`; its object number.
    fn create_group(&self, parent: usize, name: &str) -> PyResult<usize> {
        self.with(|w, made| {
            let g = w.create_group(group(made, parent)?, name).py_err()?;
            made.push(Made::Group(g));
            Ok(made.len() - 1)
        })
    }

    /// Create dataset `name` in `parent` (`shape` None: a null dataspace),
    /// holding `data`: stored bytes (C order, the type's byte order), a list
    /// of strings (variable-length strings) or None (unwritten).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (parent, name, desc, shape, maxshape, chunks, pipeline, fill, data))]
    fn create_dataset(
        &self,
        parent: usize,
        name: &str,
        desc: &Bound<'_, PyAny>,
        shape: Option<Vec<u64>>,
        maxshape: Option<Vec<Option<u64>>>,
        chunks: Option<Vec<u64>>,
        pipeline: Vec<(String, Vec<i64>)>,
        fill: Option<Vec<u8>>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let dtype = from_desc(desc)?;
        let mut spec = match &shape {
            None => {
                let mut s = DatasetSpec::scalar(dtype);
                s.shape = Dataspace::null();
                s
            }
            Some(s) if s.is_empty() => DatasetSpec::scalar(dtype),
            Some(s) => DatasetSpec::new(dtype, s),
        };
        if let Some(m) = maxshape {
            spec = spec.with_maxshape(&m);
        }
        if let Some(c) = chunks {
            spec = spec.chunked(&c, filters(&pipeline)?);
        } else if !pipeline.is_empty() {
            return Err(PyValueError::new_err("filters need a chunked layout"));
        }
        if let Some(f) = fill {
            spec = spec.with_fill(f);
        }
        let payload: purehdf::low_level::write::DatasetData = if data.is_none() {
            purehdf::low_level::write::DatasetData::None
        } else if let Ok(b) = data.cast::<PyBytes>() {
            purehdf::low_level::write::DatasetData::Raw(b.as_bytes().to_vec())
        } else if let Ok(l) = data.cast::<PyList>() {
            purehdf::low_level::write::DatasetData::VarStrings(strings(l)?)
        } else {
            return Err(PyTypeError::new_err(
                "dataset values: bytes or a list of strings",
            ));
        };
        let py = data.py();
        let name = name.to_string();
        self.with(|w, made| {
            let p = group(made, parent)?;
            let d = py
                .detach(|| w.create_dataset(p, &name, spec, payload))
                .py_err()?;
            made.push(Made::Dataset(d));
            Ok(made.len() - 1)
        })
    }

    /// Set attribute `name` of object `obj`: `shape` None for a null
    /// dataspace, `data` stored bytes or a list of strings.
    fn set_attr(
        &self,
        obj: usize,
        name: &str,
        desc: &Bound<'_, PyAny>,
        shape: Option<Vec<u64>>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let value = attr_value(desc, shape, data)?;
        self.with(|w, made| match made.get(obj) {
            Some(Made::Group(g)) => w.set_attr(*g, name, value).py_err(),
            Some(Made::Dataset(d)) => w.set_attr(*d, name, value).py_err(),
            None => Err(PyValueError::new_err("no such object")),
        })
    }

    /// A soft link `name` in `parent` to `target`.
    fn soft_link(&self, parent: usize, name: &str, target: &str) -> PyResult<()> {
        self.with(|w, made| w.soft_link(group(made, parent)?, name, target).py_err())
    }

    /// An external link `name` in `parent` to `path` in `file`.
    fn external_link(&self, parent: usize, name: &str, file: &str, path: &str) -> PyResult<()> {
        self.with(|w, made| {
            w.external_link(group(made, parent)?, name, file, path)
                .py_err()
        })
    }

    /// A hard link `name` in `parent` to object `target`.
    fn hard_link(&self, parent: usize, name: &str, target: usize) -> PyResult<()> {
        self.with(|w, made| {
            let p = group(made, parent)?;
            match made.get(target) {
                Some(Made::Group(g)) => w.hard_link(p, name, *g).py_err(),
                Some(Made::Dataset(d)) => w.hard_link(p, name, *d).py_err(),
                None => Err(PyValueError::new_err("no such object")),
            }
        })
    }

    /// Write the file and put it at its path atomically (serialised with the
    /// GIL released).
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        let w = {
            let mut s = self.state.lock().map_err(|_| closed())?;
            s.w.take().ok_or_else(closed)?
        };
        py.detach(|| w.commit()).py_err()
    }

    /// Drop the file being written (the path is left untouched).
    fn abort(&self) -> PyResult<()> {
        let mut s = self.state.lock().map_err(|_| closed())?;
        s.w = None;
        Ok(())
    }
}

/// The attribute value the binding's writers take: `desc` the type, `shape`
/// None for a null dataspace, `data` stored bytes or a list of strings.
pub(crate) fn attr_value(
    desc: &Bound<'_, PyAny>,
    shape: Option<Vec<u64>>,
    data: &Bound<'_, PyAny>,
) -> PyResult<AttrValue> {
    let dtype = from_desc(desc)?;
    let space = match &shape {
        None => Dataspace::null(),
        Some(s) if s.is_empty() => Dataspace::scalar(),
        Some(s) => Dataspace::simple(s),
    };
    let data = if let Ok(b) = data.cast::<PyBytes>() {
        AttrData::Raw(b.as_bytes().to_vec())
    } else if let Ok(l) = data.cast::<PyList>() {
        AttrData::VarStrings(strings(l)?)
    } else {
        return Err(PyTypeError::new_err(
            "attribute values: bytes or a list of strings",
        ));
    };
    Ok(AttrValue {
        dtype,
        shape: space,
        data,
    })
}
