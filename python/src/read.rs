//! Reading: the file, its links and objects, datasets and attributes, as
//! the Python layer (`purehdf/_hl.py`) asks for them.

use crate::convert::{all_to_py, convert_all, has_objects, same_layout};
use crate::dtype::describe;
use crate::errors::{to_py, IntoPy};
use crate::read_fill as fill;
use numpy::{PyArray1, PyArrayMethods};
use purehdf::low_level::attribute::read_entries;
use purehdf::low_level::messages::link_info::LinkInfo;
use purehdf::low_level::messages::types;
use purehdf::low_level::object_header::ObjectHeader;
use purehdf::{Datatype, File, Hyperslab, Link, Object};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// An open HDF5 file (read-only).
#[pyclass(module = "purehdf._native", frozen)]
pub(crate) struct NativeFile {
    pub(crate) file: File,
}

/// The values of `raw` (stored elements of `dt`) for numpy: `("arr",
/// uint8 array)` in numpy layout, or `("obj", list)` of Python values.
pub(crate) fn values<'py>(
    py: Python<'py>,
    file: &File,
    dt: &Datatype,
    raw: Vec<u8>,
    make: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    if has_objects(dt) {
        return Ok(("obj", all_to_py(py, file, dt, &raw, make)?)
            .into_pyobject(py)?
            .into_any());
    }
    let n = raw.len() / (dt.size().max(1) as usize);
    let isz = dt
        .numpy_itemsize()
        .ok_or_else(|| PyTypeError::new_err(format!("no numpy dtype for {dt}")))?;
    let len = n
        .checked_mul(isz as usize)
        .ok_or_else(|| PyValueError::new_err("values too large"))?;
    let out = fresh_array(py, len);
    {
        let mut rw = out.readwrite();
        let buf = rw.as_slice_mut()?;
        if same_layout(dt) {
            buf.copy_from_slice(&raw[..len]);
        } else {
            convert_all(dt, &raw, buf)?;
        }
    }
    Ok(("arr", out).into_pyobject(py)?.into_any())
}

/// A fresh numpy array of `n` bytes from numpy's own allocator: `calloc`,
/// so the kernel hands over zeroed pages as they are first written (no
/// zero-filling pass), and huge pages for large arrays (numpy asks for them).
/// The reader then writes every byte, on the pool's threads for large
/// reads, so the first-touch page faults are spread over the cores too.
fn fresh_array(py: Python<'_>, n: usize) -> Bound<'_, PyArray1<u8>> {
    PyArray1::<u8>::zeros(py, n, false)
}

fn link_tuple<'py>(py: Python<'py>, name: &str, link: &Link) -> PyResult<Bound<'py, PyAny>> {
    let t = match link {
        Link::Hard(a) => (name, "hard", a.to_string(), "").into_pyobject(py)?,
        Link::Soft(p) => (name, "soft", p.clone(), "").into_pyobject(py)?,
        Link::External { file, path } => {
            (name, "external", file.clone(), path.clone()).into_pyobject(py)?
        }
        Link::UserDefined { kind, .. } => (name, "user", kind.to_string(), "").into_pyobject(py)?,
    };
    Ok(t.into_any())
}

/// Whether a group's header tracks link creation order (h5py then lists
/// links in that order).
fn tracks_order(file: &File, h: &ObjectHeader) -> bool {
    h.first(types::LINK_INFO)
        .and_then(|m| LinkInfo::decode(&mut m.cursor("link info message"), file.sizes()).ok())
        .is_some_and(|i| i.max_creation_order.is_some())
}

fn header_of(o: &Object) -> &ObjectHeader {
    o.header()
}

impl NativeFile {
    fn object(&self, path: &str) -> PyResult<Object> {
        self.file.object(path).py_err()
    }
}

#[pymethods]
impl NativeFile {
    /// Open `src`: a path (str) or the file's bytes.
    #[new]
    fn new(py: Python<'_>, src: &Bound<'_, PyAny>) -> PyResult<Self> {
        let file = if let Ok(b) = src.cast::<PyBytes>() {
            let v = b.as_bytes().to_vec();
            py.detach(|| File::from_bytes(v)).py_err()?
        } else {
            let p: std::path::PathBuf = src.extract()?;
            py.detach(|| File::open(&p)).py_err()?
        };
        Ok(NativeFile { file })
    }

    /// The kind of the object at `path`: `group`, `dataset` or `datatype`.
    fn kind(&self, path: &str) -> PyResult<&'static str> {
        Ok(match self.object(path)? {
            Object::Group(_) => "group",
            Object::Dataset(_) => "dataset",
            Object::NamedDatatype(_) => "datatype",
        })
    }

    /// Header address of the object at `path` (its identity).
    fn address(&self, path: &str) -> PyResult<u64> {
        Ok(self.object(path)?.address())
    }

    /// The kind of the object whose header is at `address`.
    fn kind_at(&self, address: u64) -> PyResult<&'static str> {
        Ok(
            match self.file.object_at(address, String::new()).py_err()? {
                Object::Group(_) => "group",
                Object::Dataset(_) => "dataset",
                Object::NamedDatatype(_) => "datatype",
            },
        )
    }

    /// The group's links `(name, kind, a, b)` in h5py's order.
    fn links<'py>(&self, py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyList>> {
        let Object::Group(g) = self.object(path)? else {
            return Err(PyTypeError::new_err(format!("{path} is not a group")));
        };
        let links = if tracks_order(&self.file, g.header()) {
            g.links_by_creation_order()
        } else {
            g.links()
        }
        .py_err()?;
        let out = PyList::empty(py);
        for (name, link) in &links {
            out.append(link_tuple(py, name, link)?)?;
        }
        Ok(out)
    }

    /// One link of the group at `path`.
    fn link<'py>(&self, py: Python<'py>, path: &str, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let Object::Group(g) = self.object(path)? else {
            return Err(PyTypeError::new_err(format!("{path} is not a group")));
        };
        link_tuple(py, name, &g.link(name).py_err()?)
    }

    /// h5py's `visit`: `(relative path, kind)` of every object below the
    /// group at `path`, hard links only, each object once.
    fn visit<'py>(&self, py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyList>> {
        let Object::Group(g) = self.object(path)? else {
            return Err(PyTypeError::new_err(format!("{path} is not a group")));
        };
        let mut v = Vec::new();
        g.visit(|p, o| {
            v.push((p.to_string(), o.kind_name()));
            Ok(())
        })
        .py_err()?;
        PyList::new(py, v)
    }

    /// A path that names the object at `address` (`None` when no hard-link
    /// walk from the root reaches it).
    fn path_of(&self, address: u64) -> PyResult<Option<String>> {
        let root = self.file.root().py_err()?;
        if root.address() == address {
            return Ok(Some("/".into()));
        }
        let mut found = None;
        let r = root.visit(|p, o| {
            if o.address() == address {
                found = Some(format!("/{p}"));
                return Err(purehdf::Error::NotFound("stop".into()));
            }
            Ok(())
        });
        match (found, r) {
            (Some(p), _) => Ok(Some(p)),
            (None, Ok(())) => Ok(None),
            (None, Err(e)) => Err(to_py(e)),
        }
    }

    /// The dataset at `path`.
    fn dataset(&self, path: &str) -> PyResult<NativeDataset> {
        match self.object(path)? {
            Object::Dataset(d) => Ok(NativeDataset { ds: *d }),
            _ => Err(PyTypeError::new_err(format!("{path} is not a dataset"))),
        }
    }

    /// The descriptor of the committed datatype at `path`.
    fn datatype<'py>(&self, py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.object(path)? {
            Object::NamedDatatype(t) => describe(py, &t.dtype),
            _ => Err(PyTypeError::new_err(format!("{path} is not a datatype"))),
        }
    }

    /// The attribute names of the object at `path`, in h5py's order.
    fn attr_names(&self, path: &str) -> PyResult<Vec<String>> {
        let o = self.object(path)?;
        let entries = read_entries(&self.file, header_of(&o)).py_err()?;
        Ok(entries.into_iter().map(|e| e.attribute.name).collect())
    }

    /// One attribute: `(descriptor, shape or None, values)` (values as in
    /// [`values`]).
    fn attr<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        name: &str,
        make: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let o = self.object(path)?;
        let a = match o {
            Object::Group(g) => g.attribute(name),
            Object::Dataset(d) => d.attribute(name),
            Object::NamedDatatype(t) => t.attributes().and_then(|v| {
                v.into_iter()
                    .find(|a| a.name == name)
                    .ok_or_else(|| purehdf::Error::NotFound(format!("attribute {name}")))
            }),
        }
        .py_err()?;
        let shape = match a.space_kind() {
            purehdf::low_level::messages::dataspace::SpaceKind::Null => None,
            _ => Some(a.shape().to_vec()),
        };
        let n = a.num_elements();
        let need = n.saturating_mul(a.dtype.size());
        if (a.data.len() as u64) < need {
            return Err(crate::errors::CorruptFileError::new_err(format!(
                "attribute {name}: {} bytes stored, {need} needed",
                a.data.len()
            )));
        }
        let raw = a.data[..need as usize].to_vec();
        let desc = describe(py, &a.dtype)?;
        let vals = if shape.is_none() || has_numpy(&a.dtype) {
            values(py, &self.file, &a.dtype, raw, make)?
        } else {
            py.None().into_bound(py)
        };
        Ok((desc, shape, vals).into_pyobject(py)?.into_any())
    }

    /// Whether the file's bytes changed since it was opened.
    fn is_replaced(&self) -> bool {
        self.file.is_replaced()
    }
}

fn has_numpy(dt: &Datatype) -> bool {
    dt.numpy_itemsize().is_some()
}

/// One dataset of an open file.
#[pyclass(module = "purehdf._native", frozen)]
pub(crate) struct NativeDataset {
    pub(crate) ds: purehdf::Dataset,
}

#[pymethods]
impl NativeDataset {
    /// Shape, maximum shape, chunks, type, filters and fill value.
    fn info<'py>(&self, py: Python<'py>, make: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let ds = &self.ds;
        let d = PyDict::new(py);
        let null = matches!(
            ds.space_kind(),
            purehdf::low_level::messages::dataspace::SpaceKind::Null
        );
        d.set_item("null", null)?;
        d.set_item("path", ds.path())?;
        d.set_item("address", ds.address())?;
        d.set_item("dtype", describe(py, ds.dtype())?)?;
        d.set_item("shape", ds.shape().to_vec())?;
        let max: Vec<Option<u64>> = ds.maxshape().to_vec();
        d.set_item("maxshape", max)?;
        d.set_item("chunks", ds.chunk_dims().map(|c| c.to_vec()))?;
        d.set_item("layout", ds.layout_kind())?;
        let filters = PyList::empty(py);
        for f in ds.filters() {
            filters.append((f.id, f.flags, f.cd_values.clone()))?;
        }
        d.set_item("filters", filters)?;
        let fill = match ds.fill_value().bytes() {
            Some(b) if has_numpy(ds.dtype()) && b.len() as u64 == ds.dtype().size() => {
                Some(values(py, ds.file(), ds.dtype(), b.to_vec(), make)?)
            }
            _ => None,
        };
        d.set_item("fill", fill)?;
        Ok(d)
    }

    /// Read the hyperslab `start + k*step, k < count` per dimension (empty
    /// lists for a scalar): values as in [`values`]. The GIL is released while
    /// reading and decoding.
    fn read<'py>(
        &self,
        py: Python<'py>,
        start: Vec<u64>,
        count: Vec<u64>,
        step: Vec<u64>,
        make: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ds = &self.ds;
        let dt = ds.dtype();
        let rank = ds.shape().len();
        if start.len() != rank || count.len() != rank || step.len() != rank {
            return Err(PyValueError::new_err(
                "selection rank differs from the dataset's",
            ));
        }
        if step.contains(&0) {
            return Err(PyValueError::new_err("step must be at least 1"));
        }
        for d in 0..rank {
            let last = if count[d] == 0 {
                Some(start[d])
            } else {
                (count[d] - 1)
                    .checked_mul(step[d])
                    .and_then(|x| x.checked_add(start[d]))
                    .map(|x| x + 1)
            };
            if last.is_none_or(|l| l > ds.shape()[d]) {
                return Err(PyValueError::new_err(format!(
                    "selection out of range along axis {d}"
                )));
            }
        }
        let h = Hyperslab {
            indexed: vec![false; rank],
            start,
            count,
            step,
        };
        let n = h
            .num_elements()
            .and_then(|n| n.checked_mul(dt.size()))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| PyValueError::new_err("selection too large"))?;
        // what the file makes us allocate: the selection, within the budget
        purehdf::low_level::limits::check_budget(
            ds.path(),
            "selection",
            n as u64,
            ds.file().source().len(),
        )
        .py_err()?;
        if !has_objects(dt) && same_layout(dt) {
            let whole = h.start.iter().all(|&s| s == 0)
                && h.step.iter().all(|&s| s == 1)
                && h.count.as_slice() == ds.shape();
            let arr = fresh_array(py, n);
            {
                let mut rw = arr.readwrite();
                let out = rw.as_slice_mut()?;
                py.detach(|| {
                    if whole && fill::whole_contiguous(ds, out)? {
                        return Ok(());
                    }
                    ds.read_hyperslab_raw(&h, out)
                })
                .py_err()?;
            }
            return Ok(("arr", arr).into_pyobject(py)?.into_any());
        }
        let raw = py
            .detach(|| {
                let mut raw = vec![0u8; n];
                ds.read_hyperslab_raw(&h, &mut raw).map(|_| raw)
            })
            .py_err()?;
        values(py, ds.file(), dt, raw, make)
    }

    /// The attribute names, in h5py's order.
    fn attr_names(&self) -> PyResult<Vec<String>> {
        let entries = read_entries(self.ds.file(), self.ds.header()).py_err()?;
        Ok(entries.into_iter().map(|e| e.attribute.name).collect())
    }
}
