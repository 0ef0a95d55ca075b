//! The codec crate's error type: what a filter can say about the bytes it
//! was given. The HDF5 crate wraps these into its own `Error`, adding the
//! dataset path and chunk position.

use std::fmt;

/// Result alias of the codec crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything a codec can refuse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A valid feature of a codec's format that is not implemented.
    #[error("{structure} at offset {offset:#x}: unsupported {what}")]
    Unsupported {
        /// The structure being parsed.
        structure: &'static str,
        /// Offset in the codec's input where it went wrong.
        offset: u64,
        /// The feature.
        what: String,
    },
    /// A stored checksum does not match the bytes it covers.
    #[error("{structure} at offset {offset:#x}: checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    Checksum {
        /// The structure being checked.
        structure: &'static str,
        /// Offset in the codec's input.
        offset: u64,
        /// Checksum stored with the data.
        stored: u32,
        /// Checksum of the bytes.
        computed: u32,
    },
    /// A filter is not implemented (zfp, sz, jpeg, ...).
    #[error("unsupported filter {id} ({name})")]
    UnsupportedFilter {
        /// Registered filter id.
        id: u32,
        /// Its name.
        name: String,
    },
    /// A codec inside a container filter (Blosc) is not implemented.
    #[error("{filter}: unsupported codec {codec} ({name})")]
    UnsupportedCodec {
        /// The container filter.
        filter: &'static str,
        /// Codec id inside the container.
        codec: u32,
        /// Its name.
        name: String,
    },
    /// A filter failed to decode or encode its input.
    #[error("filter {id} ({name}): {reason}")]
    Filter {
        /// Registered filter id.
        id: u32,
        /// Its name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The caller asked for something inconsistent (wrong buffer size, bad
    /// parameter, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl Error {
    /// Shorthand for [`Error::Unsupported`].
    pub fn unsupported(structure: &'static str, offset: u64, what: impl fmt::Display) -> Self {
        Error::Unsupported {
            structure,
            offset,
            what: what.to_string(),
        }
    }

    /// Shorthand for [`Error::Filter`].
    pub fn filter(id: u32, name: &str, reason: impl fmt::Display) -> Self {
        Error::Filter {
            id,
            name: name.to_string(),
            reason: reason.to_string(),
        }
    }
}
