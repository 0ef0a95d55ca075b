//! Single-writer/multiple-reader (SWMR) access shared with libhdf5: a reader
//! ([`crate::File::open_swmr`], [`crate::Dataset::refresh`]) that follows a
//! file another process appends to, as libhdf5's SWMR readers do.
//!
//! libhdf5's SWMR rules (HDF5 1.10+ `H5F_open`, `H5Drefresh`): the writer
//! opens the file with an exclusive lock, sets the superblock's
//! write-access and SWMR-write status flags, flushes the superblock and
//! drops the lock; a SWMR reader takes a shared lock and refuses a version 3
//! superblock whose two flags disagree (a plain writer has the file). The
//! writer flushes raw data before the chunk index and the index before the
//! object header that points at it, so a reader that re-reads a dataset's
//! object header and then its index sees a consistent dataset; a metadata
//! block read while the writer rewrites it fails its checksum and is read
//! again (`H5F_ACS_METADATA_READ_ATTEMPTS`, 100 for SWMR reads), never
//! trusted.
//!
//! The writer ([`crate::File::open_swmr_writer`], [`SwmrWriter`](crate::low_level::swmr::SwmrWriter)) appends
//! through the in-place editor in that order, never reusing freed space.
//!
//! One job per file: `source` (a positional-read source whose length follows
//! the growing file, holding the shared lock), `lock` (`HDF5_USE_FILE_LOCKING`
//! and the status flags), `read` (open, refresh and the bounded retries), `write` (the writer).

mod lock;
mod read;
mod source;
mod write;

pub use lock::{status_flags, StatusFlags};
pub use read::{retry, METADATA_READ_ATTEMPTS};
pub use write::SwmrWriter;
