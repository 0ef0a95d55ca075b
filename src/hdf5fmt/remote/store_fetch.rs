//! [`Fetch`] over an object store: the object's size and ETag (or version)
//! pinned by one HEAD at open, every range GET conditional on them and
//! checked on arrival, ranges issued concurrently, transient failures retried
//! with backoff, every failure a typed error naming the URL and the range.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{self, StreamExt, TryStreamExt};
use object_store::path::Path as StorePath;
use object_store::{GetOptions, GetRange, ObjectMeta, ObjectStore, ObjectStoreExt};

use super::runtime::block_on;
use super::store::store_for;
use super::RemoteOptions;
use crate::error::{Error, Result};
use crate::fetch::{ByteRange, Fetch};

/// One remote object, pinned at open (size and ETag, or version).
pub struct StoreFetch {
    store: Arc<dyn ObjectStore>,
    path: StorePath,
    url: String,
    size: u64,
    e_tag: Option<String>,
    version: Option<String>,
    in_flight: usize,
    retries: usize,
    backoff: Duration,
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl std::fmt::Debug for StoreFetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreFetch")
            .field("url", &self.url)
            .field("size", &self.size)
            .field("e_tag", &self.e_tag)
            .field("version", &self.version)
            .finish()
    }
}

/// `start-end` (end exclusive) as errors name a range.
fn range_name(r: &ByteRange) -> String {
    format!("{}-{}", r.offset, r.offset.saturating_add(r.len))
}

/// An object_store error as ours: a failed precondition is a replaced
/// object, the rest name the URL and the range.
fn map_err(url: &str, range: &str, pinned: Option<&str>, e: object_store::Error) -> Error {
    let remote = |reason: String| Error::Remote {
        url: url.to_string(),
        range: range.to_string(),
        reason,
    };
    match e {
        object_store::Error::Precondition { .. } => Error::StaleSnapshot(format!(
            "{url}: the object was replaced since it was opened (pinned ETag {}); reopen it to read the new version",
            pinned.unwrap_or("-")
        )),
        object_store::Error::NotFound { .. } => remote("not found (HTTP 404)".into()),
        object_store::Error::PermissionDenied { source, .. } => {
            remote(format!("access denied (HTTP 403): {source}"))
        }
        object_store::Error::Unauthenticated { source, .. } => remote(format!(
            "not authenticated (HTTP 401), check the credentials: {source}"
        )),
        other => remote(other.to_string()),
    }
}

/// What went wrong with one attempt at a range: retried or not.
enum Attempt {
    /// Worth another try (a body cut short or oversized; object_store has
    /// already retried the request itself on 5xx, resets and timeouts).
    Transient(String),
    /// Final (stale, 403, 404, ...).
    Fatal(Error),
}

impl StoreFetch {
    /// Open `url`: one HEAD pins its size and ETag (or version).
    pub fn open(url: &str, opts: &RemoteOptions) -> Result<Self> {
        let (store, path) = store_for(url, opts)?;
        let meta: ObjectMeta =
            block_on(store.head(&path))?.map_err(|e| map_err(url, "-", None, e))?;
        Ok(StoreFetch {
            store,
            path,
            url: url.to_string(),
            size: meta.size,
            e_tag: meta.e_tag,
            version: meta.version,
            in_flight: opts.range.in_flight.max(1),
            retries: opts.retries,
            backoff: opts.backoff,
            requests: AtomicU64::new(1),
            bytes: AtomicU64::new(0),
        })
    }

    /// The ETag pinned at open, if the server gave one.
    pub fn e_tag(&self) -> Option<&str> {
        self.e_tag.as_deref()
    }

    /// Requests issued so far (the HEAD at open included; retries counted).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Body bytes received so far.
    pub fn bytes_received(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// One conditional GET of `r`, its answer checked against the pin.
    async fn attempt(&self, r: ByteRange, end: u64) -> std::result::Result<Vec<u8>, Attempt> {
        let name = range_name(&r);
        let opts = GetOptions {
            if_match: self.e_tag.clone(),
            version: if self.e_tag.is_none() {
                self.version.clone()
            } else {
                None
            },
            range: Some(GetRange::Bounded(r.offset..end)),
            ..GetOptions::default()
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        let res = match self.store.get_opts(&self.path, opts).await {
            Ok(res) => res,
            // object_store has retried 5xx, resets and timeouts with backoff.
            Err(e) => {
                return Err(Attempt::Fatal(map_err(
                    &self.url,
                    &name,
                    self.e_tag.as_deref(),
                    e,
                )))
            }
        };
        let stale = |what: String| {
            Attempt::Fatal(Error::StaleSnapshot(format!(
                "{}: the object was replaced since it was opened ({what}); reopen it to read the new version",
                self.url
            )))
        };
        if let (Some(pinned), Some(got)) = (&self.e_tag, &res.meta.e_tag) {
            if pinned != got {
                return Err(stale(format!("ETag {got}, pinned {pinned}")));
            }
        }
        if res.meta.size != self.size {
            return Err(stale(format!(
                "size {}, pinned {}",
                res.meta.size, self.size
            )));
        }
        if res.range != (r.offset..end) {
            return Err(Attempt::Fatal(Error::Remote {
                url: self.url.clone(),
                range: name,
                reason: format!(
                    "the server answered bytes {}-{}",
                    res.range.start, res.range.end
                ),
            }));
        }
        // Stream the body: never hold more than the range asked for.
        let want = r.len as usize;
        let mut buf = Vec::with_capacity(want);
        let mut body = res.into_stream();
        while let Some(part) = body.next().await {
            let part = part.map_err(|e| {
                Attempt::Transient(format!(
                    "short response: the body failed after {} of {want} bytes: {e}",
                    buf.len()
                ))
            })?;
            self.bytes.fetch_add(part.len() as u64, Ordering::Relaxed);
            if buf.len() + part.len() > want {
                return Err(Attempt::Transient(format!(
                    "oversized response: more than the {want} bytes asked for"
                )));
            }
            buf.extend_from_slice(&part);
        }
        if buf.len() != want {
            return Err(Attempt::Transient(format!(
                "short response: {} of {want} bytes",
                buf.len()
            )));
        }
        Ok(buf)
    }

    /// One range, retried with backoff on transient failures.
    async fn get_range(&self, r: ByteRange) -> Result<Vec<u8>> {
        let end = r
            .end()
            .filter(|&e| e <= self.size)
            .ok_or_else(|| Error::Remote {
                url: self.url.clone(),
                range: range_name(&r),
                reason: format!("outside the object ({} bytes)", self.size),
            })?;
        if r.len == 0 {
            return Ok(Vec::new());
        }
        let mut delay = self.backoff;
        let mut tries = 0usize;
        loop {
            match self.attempt(r, end).await {
                Ok(b) => return Ok(b),
                Err(Attempt::Fatal(e)) => return Err(e),
                Err(Attempt::Transient(reason)) => {
                    if tries >= self.retries {
                        return Err(Error::Remote {
                            url: self.url.clone(),
                            range: range_name(&r),
                            reason: format!("{reason} (after {} attempts)", tries + 1),
                        });
                    }
                    tries += 1;
                    tokio::time::sleep(delay).await;
                    delay = delay.saturating_mul(2).min(Duration::from_secs(5));
                }
            }
        }
    }
}

impl Fetch for StoreFetch {
    fn len(&self) -> u64 {
        self.size
    }

    fn describe(&self) -> String {
        self.url.clone()
    }

    fn fetch(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>> {
        block_on(async {
            stream::iter(ranges.iter().copied())
                .map(|r| self.get_range(r))
                .buffered(self.in_flight)
                .try_collect::<Vec<_>>()
                .await
        })?
    }
}
