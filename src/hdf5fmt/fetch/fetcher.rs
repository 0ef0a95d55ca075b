//! The fetcher seam and its options: [`Fetch`], where the bytes of one remote
//! object come from, and [`RangeOptions`], how a
//! [`RangeSource`](super::RangeSource) groups its reads.

use super::byte_range::ByteRange;
use crate::error::Result;

/// Where the bytes of one remote object come from. Implementations pin the
/// object's version when they are created (ETag, generation) and fail a fetch
/// with [`Error::StaleSnapshot`](crate::Error::StaleSnapshot) when the object has been replaced since.
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

    /// Bytes fetched while opening the object (an implementation that pins
    /// the object with ranged GETs of its head and tail rather than a HEAD
    /// request), handed over once so the first reads need no request of
    /// their own; each buffer is exactly its range. None by default.
    fn take_opened(&self) -> Vec<(ByteRange, Vec<u8>)> {
        Vec::new()
    }

    /// Open another object by `url` (of the form [`Fetch::describe`] gives)
    /// on the same store with the same options, pinned as this one was: the
    /// files a virtual dataset, an external link or external raw storage
    /// names beside this object. A missing object is
    /// [`Error::NotFound`](crate::Error::NotFound). `None` when this fetcher
    /// cannot reach other objects (the default).
    fn open_other(&self, url: &str) -> Option<Result<std::sync::Arc<dyn Fetch>>> {
        let _ = url;
        None
    }
}

/// How a [`RangeSource`](super::RangeSource) groups its reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeOptions {
    /// Metadata block size in bytes (reads are rounded to whole blocks).
    pub block_size: u64,
    /// Bytes of metadata blocks kept; reads longer than a quarter of this
    /// bypass the cache.
    pub cache_bytes: u64,
    /// The first request's length: the superblock and root group, usually.
    pub first_read: u64,
    /// Bytes at the object's end fetched with the first request (in the same
    /// batch), for writers that put metadata last; 0 fetches none.
    pub tail_read: u64,
    /// Two data ranges closer than this many bytes are fetched as one.
    pub coalesce_gap: u64,
    /// No request is longer than this many bytes: coalesced runs are cut
    /// into requests of this size.
    pub max_request: u64,
    /// Requests issued at once (read by [`Fetch`] implementations; a batch
    /// may hold more ranges than this).
    pub in_flight: usize,
    /// Bytes of data fetched ahead of decoding at most (memory bound).
    pub window_bytes: u64,
    /// With a fetcher, a window is fetched in steps of at most this many
    /// stored bytes, up to [`in_flight`](Self::in_flight) steps at once on
    /// helper threads, each step decoded as soon as its bytes have arrived
    /// (so a full read costs about the longer of fetching and decoding, not
    /// their sum); 0 fetches each window whole before decoding it.
    pub pipeline_step: u64,
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
            pipeline_step: 8 << 20,
        }
    }
}
