//! The crate's one error type. Every failure that file bytes can cause names the
//! structure being parsed and the file offset where it went wrong.

use std::fmt;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong reading, decoding or writing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A structure runs past the end of the file (or of its enclosing block).
    #[error("{structure} at offset {offset:#x}: truncated (needs {needed} bytes, {available} available)")]
    Truncated {
        /// The structure being parsed.
        structure: &'static str,
        /// File offset where it went wrong.
        offset: u64,
        /// Bytes the structure needs.
        needed: u64,
        /// Bytes there are.
        available: u64,
    },
    /// A field holds a value the format does not allow.
    #[error("{structure} at offset {offset:#x}: {reason}")]
    Malformed {
        /// The structure being parsed.
        structure: &'static str,
        /// File offset where it went wrong.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A valid feature this crate does not (yet) implement.
    #[error("{structure} at offset {offset:#x}: unsupported {what}")]
    Unsupported {
        /// The structure being parsed.
        structure: &'static str,
        /// File offset where it went wrong.
        offset: u64,
        /// The feature.
        what: String,
    },
    /// A stored checksum does not match the bytes it covers.
    #[error("{structure} at offset {offset:#x}: checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    Checksum {
        /// The structure being parsed.
        structure: &'static str,
        /// File offset where it went wrong.
        offset: u64,
        /// Checksum stored in the file.
        stored: u32,
        /// Checksum of the bytes.
        computed: u32,
    },
    /// A record of a record store does not match its stored CRC-32
    /// (`low_level::records`).
    #[error("record {record} of {store} (data offset {offset}): crc32 mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    RecordChecksum {
        /// Path of the record store's group.
        store: String,
        /// Index of the record.
        record: u64,
        /// Offset of the record in the store's `data` dataset.
        offset: u64,
        /// CRC-32 stored in the `crc32` column.
        stored: u32,
        /// CRC-32 of the stored bytes.
        computed: u32,
    },
    /// Arithmetic on sizes or offsets read from the file overflowed.
    #[error("{structure} at offset {offset:#x}: arithmetic overflow computing {what}")]
    Overflow {
        /// The structure being parsed.
        structure: &'static str,
        /// File offset where it went wrong.
        offset: u64,
        /// The quantity being computed.
        what: &'static str,
    },
    /// A file-driven quantity exceeds an explicit safety cap.
    #[error("{structure} at offset {offset:#x}: {what} = {value} exceeds the limit {limit}")]
    Limit {
        /// The structure being parsed.
        structure: &'static str,
        /// File offset where it went wrong.
        offset: u64,
        /// The capped quantity.
        what: &'static str,
        /// The value found.
        value: u64,
        /// The cap.
        limit: u64,
    },
    /// An object asks for more bytes than the data budget allows (see
    /// `PUREHDF_DATA_BUDGET`).
    #[error("{object}: {what} of {size} bytes exceeds the data budget of {budget} bytes (PUREHDF_DATA_BUDGET)")]
    OverBudget {
        /// Path of the object.
        object: String,
        /// What was being produced.
        what: &'static str,
        /// Bytes asked for.
        size: u64,
        /// The budget in bytes.
        budget: u64,
    },
    /// A graph walk came back to a node it had already visited.
    #[error("{structure} at offset {offset:#x}: cycle detected")]
    Cycle {
        /// The structure being parsed.
        structure: &'static str,
        /// File offset where it went wrong.
        offset: u64,
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
    /// A chunk could not be decoded; wraps the filter error with the chunk position.
    #[error("chunk {coords:?} of {dataset}: {source}")]
    Chunk {
        /// Path of the dataset.
        dataset: String,
        /// Chunk offset in elements along each dimension.
        coords: Vec<u64>,
        /// The underlying error.
        #[source]
        source: Box<Error>,
    },
    /// A read of a virtual dataset touches a mapping whose source file or
    /// dataset cannot be opened (libhdf5 would return the fill value; ask for
    /// that with `VirtualOptions::fill_missing`, `h5 ... --fill-missing`).
    #[error("virtual dataset {dataset}: missing source {source_file}:{source_dataset} ({reason}); use --fill-missing to read the fill value instead")]
    MissingVdsSource {
        /// Path of the virtual dataset.
        dataset: String,
        /// The source file name as stored in the mapping.
        source_file: String,
        /// The source dataset name as stored in the mapping.
        source_dataset: String,
        /// Why it cannot be opened.
        reason: String,
    },
    /// An object's header or messages could not be decoded: the decode error
    /// (which names the structure and offset) with the path the object was
    /// opened by.
    #[error("{path}: {source}")]
    InObject {
        /// Path of the object.
        path: String,
        /// The underlying error.
        #[source]
        source: Box<Error>,
    },
    /// A path, attribute or object that does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The caller asked for something inconsistent (wrong buffer size, bad selection...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A typed read could not convert the stored values to the requested
    /// Rust type: a value out of range, or a stored type that does not convert.
    #[error("{object}: cannot read as {target}: {reason}")]
    Conversion {
        /// Path of the object.
        object: String,
        /// The requested Rust type.
        target: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// Operating-system I/O error, with the path when known.
    #[error("{context}: {source}")]
    Io {
        /// What was being done (the path when known).
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file changed underneath a reader (truncated while mapped): bytes read
    /// from it can no longer be trusted to be the file's.
    #[error("source changed: {0}")]
    SourceChanged(String),
    /// A re-open by path found another file than the one first opened (device,
    /// inode, size or times differ): refused rather than mixing two snapshots.
    #[error("stale snapshot: {0}")]
    StaleSnapshot(String),
    /// The file is shorter than the end-of-file address its superblock
    /// stores (a copy cut short, a writer killed): refused at open as libhdf5
    /// refuses it, unless the caller asked to read what is there
    /// ([`crate::File::open_truncated`]).
    #[error("truncated file: eof = {eof}, sblock->base_addr = {base}, stored_eof = {stored_eof} (the file has {len} bytes, its superblock says it ends at {stored_eof})")]
    TruncatedFile {
        /// The file's length seen from the base address (libhdf5's `eof`).
        eof: u64,
        /// The superblock's base address.
        base: u64,
        /// The end-of-file address stored in the superblock.
        stored_eof: u64,
        /// The file's length in bytes.
        len: u64,
    },
    /// A remote object could not be read: the request named by `url` and
    /// `range` failed (status, refusal, short or oversized response, retries
    /// exhausted).
    #[error("{url} bytes {range}: {reason}")]
    Remote {
        /// The object's URL.
        url: String,
        /// The byte range asked for (`start-end`, end exclusive), or `-` for the whole object.
        range: String,
        /// What went wrong.
        reason: String,
    },
    /// A read from a source without a fetcher (a host with no blocking I/O)
    /// needs these byte ranges first: fetch them, supply them to the source
    /// and retry the read.
    #[error("needs {} byte range(s) first", .0.len())]
    NeedBytes(Vec<crate::fetch::byte_range::ByteRange>),
    /// A format-header gate refused the file: `attribute` is missing, of the
    /// wrong type or value, or out of range ([`crate::HeaderGate`]).
    #[error("header attribute `{attribute}`: {reason}")]
    Header {
        /// The attribute at fault.
        attribute: String,
        /// Why it was refused.
        reason: crate::HeaderReason,
    },
    /// A name or string the writer refuses: a link name that is empty, `.`,
    /// or contains `/` or NUL, or a variable-length string holding a NUL byte
    /// (C readers would cut it there).
    #[error("invalid {what} {name:?}: {reason}")]
    InvalidName {
        /// What was named (`link name`, `attribute name`, `string`).
        what: &'static str,
        /// The name or string as given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// JSON (de)serialisation.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
}

impl Error {
    /// Shorthand for [`Error::Malformed`].
    pub fn malformed(structure: &'static str, offset: u64, reason: impl fmt::Display) -> Self {
        Error::Malformed {
            structure,
            offset,
            reason: reason.to_string(),
        }
    }

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

    /// The byte ranges a read from a source without a fetcher needs first
    /// ([`Error::NeedBytes`]), looked for through the variants that wrap
    /// another error ([`Error::Chunk`], and an [`Error::Io`] whose source is
    /// this crate's error); `None` for every other error.
    pub fn needed_ranges(&self) -> Option<&[crate::fetch::byte_range::ByteRange]> {
        match self {
            Error::NeedBytes(r) => Some(r),
            Error::Chunk { source, .. } => source.needed_ranges(),
            Error::InObject { source, .. } => source.needed_ranges(),
            Error::Io { source, .. } => source
                .get_ref()
                .and_then(|e| e.downcast_ref::<Error>())
                .and_then(Error::needed_ranges),
            _ => None,
        }
    }

    /// Wrap an I/O error with what was being done.
    pub fn io(context: impl fmt::Display, source: std::io::Error) -> Self {
        Error::Io {
            context: context.to_string(),
            source,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(source: std::io::Error) -> Self {
        Error::Io {
            context: "i/o".to_string(),
            source,
        }
    }
}

impl From<purehdf_filters::Error> for Error {
    fn from(e: purehdf_filters::Error) -> Self {
        use purehdf_filters::Error as F;
        match e {
            F::Unsupported {
                structure,
                offset,
                what,
            } => Error::Unsupported {
                structure,
                offset,
                what,
            },
            F::Checksum {
                structure,
                offset,
                stored,
                computed,
            } => Error::Checksum {
                structure,
                offset,
                stored,
                computed,
            },
            F::UnsupportedFilter { id, name } => Error::UnsupportedFilter { id, name },
            F::UnsupportedCodec {
                filter,
                codec,
                name,
            } => Error::UnsupportedCodec {
                filter,
                codec,
                name,
            },
            F::Filter { id, name, reason } => Error::Filter { id, name, reason },
            F::InvalidArgument(s) => Error::InvalidArgument(s),
            other => Error::InvalidArgument(other.to_string()),
        }
    }
}
