//! The Python exceptions of the package and the mapping from the library's
//! errors onto them (h5py's shapes: `KeyError`, `OSError`, `ValueError`,
//! `TypeError`).

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyError, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    _native,
    CorruptFileError,
    PyOSError,
    "A file's bytes are not valid HDF5 (truncated, malformed, bad checksum, ...)."
);
create_exception!(
    _native,
    UnsupportedError,
    PyOSError,
    "A valid HDF5 feature (or filter) this package cannot read."
);
create_exception!(
    _native,
    LimitError,
    PyOSError,
    "A file-driven size exceeds a safety limit or the data budget (PUREHDF_DATA_BUDGET)."
);
create_exception!(
    _native,
    Medh5Error,
    PyValueError,
    "A medh5 sample is invalid or a medh5 operation failed."
);

/// The Python exception for a library error.
pub(crate) fn to_py(e: purehdf::Error) -> PyErr {
    use purehdf::Error as E;
    let msg = e.to_string();
    match e {
        E::NotFound(_) => PyKeyError::new_err(msg),
        E::InvalidArgument(_) => PyValueError::new_err(msg),
        E::InvalidName { .. } | E::Header { .. } => PyValueError::new_err(msg),
        E::Conversion { .. } => PyTypeError::new_err(msg),
        E::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => pyo3::exceptions::PyFileNotFoundError::new_err(msg),
            std::io::ErrorKind::PermissionDenied => {
                pyo3::exceptions::PyPermissionError::new_err(msg)
            }
            std::io::ErrorKind::AlreadyExists => pyo3::exceptions::PyFileExistsError::new_err(msg),
            _ => PyOSError::new_err(msg),
        },
        E::Unsupported { .. } | E::UnsupportedFilter { .. } | E::UnsupportedCodec { .. } => {
            UnsupportedError::new_err(msg)
        }
        E::Limit { .. } | E::OverBudget { .. } => LimitError::new_err(msg),
        _ => CorruptFileError::new_err(msg),
    }
}

/// The Python exception for a medh5 error.
pub(crate) fn medh5_to_py(e: purehdf_medh5::Error) -> PyErr {
    match e {
        purehdf_medh5::Error::Hdf5(h) => to_py(h),
        other => Medh5Error::new_err(other.to_string()),
    }
}

/// `r` with its error mapped to a Python exception.
pub(crate) trait IntoPy<T> {
    /// The value, or the Python exception for the error.
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for purehdf::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
