//! Byte ranges fetched from elsewhere: the seam between the reader and remote
//! stores (object storage, HTTP, a JavaScript host's `fetch`).
//!
//! The reader never blocks on one small read at a time against a remote
//! object. [`RangeSource`] is the [`Source`](crate::source::Source) over a
//! remote object; it reads in three ways:
//!
//! - **Metadata** (superblock, object headers, B-trees, heaps: every read the
//!   reader makes outside a planned data read) is rounded to aligned blocks of
//!   [`RangeOptions::block_size`], kept in a least-recently-used cache of at
//!   most [`RangeOptions::cache_bytes`]. A read spanning several missing
//!   blocks fetches them in one call, contiguous missing blocks as one range.
//!   The first request asks for the object's head ([`RangeOptions::first_read`],
//!   superblock and root group) and its tail ([`RangeOptions::tail_read`]) as
//!   one batch of two ranges: both purehdf's writer and h5py (the reference
//!   medh5 writer) put metadata written last (the `/meta` document, root
//!   attributes, late object headers) at the end of the file. Measured on
//!   medh5 samples of 1.3–7.4 MB from either writer: opening and listing takes
//!   that one call (two ranges); without the tail it takes two calls.
//! - **Planned data.** A chunked or contiguous read first lists the stored
//!   ranges it needs (chunks the decoded-chunk cache holds left out) and hands
//!   them a window at a time ([`RangeOptions::window_bytes`]) to
//!   [`Source::prefetch`](crate::source::Source::prefetch): ranges already held
//!   are dropped, the rest [`coalesce`]d (ranges closer than
//!   [`RangeOptions::coalesce_gap`] joined while a request stays within
//!   [`RangeOptions::max_request`]) and fetched as one [`Fetch::fetch`] batch,
//!   which the implementation issues concurrently. The bytes wait in a staging
//!   area that serves the window's reads of any sub-range (a read may span two
//!   requests) and are dropped when the window is released. A full read thus
//!   takes about `stored bytes / max_request` requests; a patch, one request
//!   per run of chunks that lie close together in the file.
//! - **Large unplanned reads** (longer than a quarter of the cache) bypass the
//!   cache: one batch of requests of at most `max_request` bytes.
//!
//! Local sources ([`Source::wants_prefetch`](crate::source::Source::wants_prefetch)
//! false) skip all of this: the readers test that flag once per read and run
//! exactly as before.
//!
//! **Bounds.** Every size is checked arithmetic; a read is capped by
//! `limits::MAX_READ` before anything is allocated, whatever length the
//! object claims; a response of another length than its range is
//! [`Error::Remote`](crate::Error::Remote) naming the URL ([`Fetch::describe`])
//! and the range; errors of the fetcher itself (such as
//! [`Error::StaleSnapshot`](crate::Error::StaleSnapshot) for an object
//! replaced since it was opened) reach the caller unchanged. Memory held is
//! at most `cache_bytes` of blocks plus one window of staged data (a single
//! chunk larger than the window is a window of its own). Without a fetcher
//! (below) data kept for a retry adds at most one more window, and supplied
//! blocks one more, until the operation settles; one round asks for at most
//! a window of data (an operation reading several datasets gets the rest in
//! later rounds).
//!
//! **Without a fetcher** ([`RangeSource::without_fetcher`]): a host with no
//! blocking I/O (WebAssembly on a browser's main thread) drives the reads. A
//! read that misses returns [`Error::NeedBytes`](crate::Error::NeedBytes) with
//! every range it needs at once (block-aligned for metadata, all missing
//! requests of the window for planned data, so the host fetches them
//! concurrently); the host fetches them, hands them to
//! [`RangeSource::supply`], and runs the operation again from its start.
//! Restarting is safe because reads are idempotent: the object is pinned
//! (the host fetches one version) and nothing the reader caches depends on
//! how far an earlier attempt got, so the retried operation computes what one
//! uninterrupted run would; each round adds bytes, so it converges as long as
//! what one operation reads fits the budget. To make that so, data staged for
//! an operation is kept after its window is released and supplied metadata
//! blocks may grow the cache by one window, until [`RangeSource::settle`];
//! without a fetcher a planned read asks for all its data in one window, and
//! one over `window_bytes` is refused ([`Error::Limit`](crate::Error::Limit):
//! read smaller selections). A reader that tolerates a failed read (a damaged
//! link, an optional attribute) may swallow a `NeedBytes`, so the host checks
//! [`RangeSource::take_missed`] after every attempt, `Ok` or not;
//! [`Error::needed_ranges`](crate::Error::needed_ranges) finds the ranges
//! through wrapping errors. [`drive`] is that loop for Rust callers and tests
//! (at most [`DRIVE_ROUNDS`] rounds). Opening a file may take several rounds;
//! `File::from_source` holds no state until it succeeds, so it is retried the
//! same way.

mod block_cache;
pub(crate) mod byte_range;
mod drive;
mod fetcher;
pub(crate) mod pipeline;
pub mod plan;
mod range_source;
pub(crate) mod sibling;
mod staging;

pub use byte_range::ByteRange;
pub use drive::{drive, DRIVE_ROUNDS};
pub use fetcher::{Fetch, RangeOptions};
pub use plan::coalesce;
pub use range_source::RangeSource;

#[cfg(test)]
mod tests;
