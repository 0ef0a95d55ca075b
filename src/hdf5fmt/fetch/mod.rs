//! Byte ranges fetched from elsewhere: the seam between the reader and remote
//! stores (object storage, HTTP, a JavaScript host's `fetch`).
//!
//! The reader never blocks on one small read at a time against a remote
//! object. Metadata reads go through a block cache; data reads are planned
//! first (the chunks a selection needs, adjacent ranges coalesced) and handed
//! to [`Fetch::fetch`] as one batch, which an implementation issues
//! concurrently. A host without blocking I/O (WebAssembly on a browser's main
//! thread) uses no fetcher at all: a read that misses returns
//! [`Error::NeedBytes`](crate::Error) with the ranges it needs, the host
//! fetches them and [`RangeSource::supply`]s them, and the read is retried.

mod block_cache;
pub mod plan;
mod range_source;
mod staging;

pub use plan::coalesce;
pub use range_source::{drive, RangeSource, DRIVE_ROUNDS};

use crate::error::Result;

/// `len` bytes at `offset` of a remote object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteRange {
    /// First byte.
    pub offset: u64,
    /// Number of bytes.
    pub len: u64,
}

impl ByteRange {
    /// `len` bytes at `offset`.
    pub fn new(offset: u64, len: u64) -> Self {
        ByteRange { offset, len }
    }

    /// One past the last byte, `None` on overflow.
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.len)
    }
}

/// Where the bytes of one remote object come from. Implementations pin the
/// object's version when they are created (ETag, generation) and fail a fetch
/// with [`Error::StaleSnapshot`] when the object has been replaced since.
pub trait Fetch: Send + Sync {
    /// Length of the object, as pinned when it was opened.
    fn len(&self) -> u64;

    /// True when the object holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What to name the object in errors (its URL).
    fn describe(&self) -> String;

    /// Fetch every range, concurrently as far as the implementation can; the
    /// result holds one buffer per range, in order, each exactly `len` bytes.
    /// Ranges arrive already coalesced and inside the object.
    fn fetch(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>>;
}

/// How a [`RangeSource`] groups its reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeOptions {
    /// Metadata block size in bytes (reads are rounded to whole blocks).
    pub block_size: u64,
    /// Bytes of metadata blocks kept.
    pub cache_bytes: u64,
    /// The first request's length: the superblock and root group, usually.
    pub first_read: u64,
    /// Bytes at the object's end fetched with the first request (in the same
    /// batch), for writers that put metadata last; 0 fetches none.
    pub tail_read: u64,
    /// Two data ranges closer than this many bytes are fetched as one.
    pub coalesce_gap: u64,
    /// No coalesced request grows beyond this many bytes.
    pub max_request: u64,
    /// Requests issued at once.
    pub in_flight: usize,
    /// Bytes of data fetched ahead of decoding at most (memory bound).
    pub window_bytes: u64,
}

impl Default for RangeOptions {
    fn default() -> Self {
        RangeOptions {
            block_size: 64 << 10,
            cache_bytes: 64 << 20,
            first_read: 256 << 10,
            tail_read: 256 << 10,
            coalesce_gap: 64 << 10,
            max_request: 8 << 20,
            in_flight: 16,
            window_bytes: 256 << 20,
        }
    }
}
