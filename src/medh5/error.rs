//! medh5's error type: the container's own refusals, each with its reference
//! error code (`E004`, `E701`, ... — `docs/medh5-format.md` §9.2), and every
//! HDF5-level error of the crate wrapped unchanged. Its messages are the
//! crate's: `E004: meta is not JSON: ...` for a coded error, the wrapped
//! error's own text otherwise.

use std::fmt;

/// Result alias used throughout medh5.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in medh5.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A medh5-level problem (document, profiles, integrity, collection) with
    /// its reference error code.
    #[error("{code}: {message}")]
    Code {
        /// Reference error code (`E004`, ...).
        code: String,
        /// What happened.
        message: String,
    },
    /// An error of the HDF5 layer (reading, writing, filters, I/O).
    #[error(transparent)]
    Hdf5(#[from] purehdf::Error),
    /// A file the reference refuses before it looks further, with the
    /// reference's words (a version this reader does not read, say).
    #[error("{0}")]
    Refused(String),
}

impl Error {
    /// A medh5 error with its reference `code`.
    pub fn code(code: &str, message: impl Into<String>) -> Self {
        Error::Code {
            code: code.to_string(),
            message: message.into(),
        }
    }

    /// The reference error code, for a coded error.
    pub fn code_str(&self) -> Option<&str> {
        match self {
            Error::Code { code, .. } => Some(code),
            Error::Hdf5(_) | Error::Refused(_) => None,
        }
    }

    /// Shorthand for the crate's [`purehdf::Error::InvalidArgument`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Hdf5(purehdf::Error::InvalidArgument(message.into()))
    }

    /// Shorthand for the crate's [`purehdf::Error::NotFound`].
    pub fn not_found(what: impl Into<String>) -> Self {
        Error::Hdf5(purehdf::Error::NotFound(what.into()))
    }

    /// Wrap an I/O error with what was being done (the crate's [`purehdf::Error::Io`]).
    pub fn io(context: impl fmt::Display, source: std::io::Error) -> Self {
        Error::Hdf5(purehdf::Error::io(context, source))
    }

    /// Shorthand for the crate's [`purehdf::Error::malformed`].
    pub fn malformed(structure: &'static str, offset: u64, reason: impl fmt::Display) -> Self {
        Error::Hdf5(purehdf::Error::malformed(structure, offset, reason))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Hdf5(e.into())
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Hdf5(e.into())
    }
}
