//! [`Fetch`] over an object store: the object's size and ETag (or version)
//! pinned by one HEAD at open, every range GET conditional on them and
//! checked on arrival, ranges issued concurrently, transient failures retried
//! with backoff, every failure a typed error naming the URL and the range.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    /// The head and tail fetched at open, until taken.
    opened: Mutex<Vec<(ByteRange, Vec<u8>)>>,
    /// When the open began.
    started: Instant,
    /// Nanoseconds from `started` to the end of the last response body.
    last_byte: AtomicU64,
    /// The options it was opened with (for the objects named beside it).
    options: RemoteOptions,
}

impl Drop for StoreFetch {
    /// With `PUREHDF_REMOTE_STATS` set, one line on stderr: requests, body
    /// bytes and the time from the open to the last byte received (what the
    /// fetching alone took, decoding aside).
    fn drop(&mut self) {
        if std::env::var_os("PUREHDF_REMOTE_STATS").is_some() {
            eprintln!(
                "remote stats: {}: {} requests, {} bytes, last byte {:.4} s after open",
                self.url,
                self.requests(),
                self.bytes_received(),
                self.time_to_last_byte().as_secs_f64()
            );
        }
    }
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
    /// Open `url`: two concurrent ranged GETs of the object's head and tail
    /// (the first reads [`RangeSource`](crate::fetch::RangeSource) makes,
    /// see [`RangeOptions::first_read`](crate::fetch::RangeOptions::first_read))
    /// pin its size and ETag (or version) and keep their bytes for those
    /// reads ([`Fetch::take_opened`]): one round trip, no HEAD. When they
    /// fail or disagree (an empty object, a server without ranged GETs, an
    /// object replaced between the two) one HEAD pins it instead.
    pub fn open(url: &str, opts: &RemoteOptions) -> Result<Self> {
        let started = Instant::now();
        let (store, path) = store_for(url, opts)?;
        let b = opts.range.block_size.max(1);
        let head = opts.range.first_read.div_ceil(b).saturating_mul(b);
        // Azure refuses suffix ranges: there the tail comes with the first
        // reads, once the size is known.
        let azure = matches!(
            super::url::parse(url),
            Ok(super::url::RemoteUrl::Azure { .. })
        );
        let tail = match opts.range.tail_read {
            _ if azure => 0,
            0 => 0,
            t => t.saturating_add(b),
        };
        let got = block_on(open_by_get(&store, &path, head, tail))?;
        let (requests, meta, opened) = match got {
            Ok((meta, opened)) => (opened.len() as u64, meta, opened),
            Err(sent) => {
                let meta: ObjectMeta =
                    block_on(store.head(&path))?.map_err(|e| map_err(url, "-", None, e))?;
                (sent + 1, meta, Vec::new())
            }
        };
        let received = opened.iter().map(|(_, d)| d.len() as u64).sum();
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
            requests: AtomicU64::new(requests),
            bytes: AtomicU64::new(received),
            opened: Mutex::new(opened),
            last_byte: AtomicU64::new(nanos_since(started)),
            started,
            options: opts.clone(),
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

    /// Time from the start of the open to the end of the last response body
    /// received so far.
    pub fn time_to_last_byte(&self) -> Duration {
        Duration::from_nanos(self.last_byte.load(Ordering::Relaxed))
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
        self.last_byte
            .fetch_max(nanos_since(self.started), Ordering::Relaxed);
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

/// Nanoseconds since `t`, saturating.
fn nanos_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// One unconditional ranged GET at open: the object's metadata, the range
/// served and its bytes (at most `cap`).
async fn get_at_open(
    store: &Arc<dyn ObjectStore>,
    path: &StorePath,
    range: GetRange,
    cap: u64,
) -> std::result::Result<(ObjectMeta, ByteRange, Vec<u8>), ()> {
    let opts = GetOptions {
        range: Some(range),
        ..GetOptions::default()
    };
    let res = store.get_opts(path, opts).await.map_err(|_| ())?;
    let (meta, served) = (res.meta.clone(), res.range.clone());
    let want = served.end.checked_sub(served.start).filter(|&n| n <= cap);
    let want = want.ok_or(())?;
    let mut buf = Vec::with_capacity(want as usize);
    let mut body = res.into_stream();
    while let Some(part) = body.next().await {
        let part = part.map_err(|_| ())?;
        if (buf.len() + part.len()) as u64 > want {
            return Err(());
        }
        buf.extend_from_slice(&part);
    }
    if buf.len() as u64 != want || served.end > meta.size {
        return Err(());
    }
    Ok((meta, ByteRange::new(served.start, want), buf))
}

/// The GETs of the object's first `head` and last `tail` bytes, issued
/// together; their metadata (equal in both) and bytes. `Err` holds the
/// requests sent, when either failed or they disagree.
async fn open_by_get(
    store: &Arc<dyn ObjectStore>,
    path: &StorePath,
    head: u64,
    tail: u64,
) -> std::result::Result<(ObjectMeta, Vec<(ByteRange, Vec<u8>)>), u64> {
    let mut gets = Vec::new();
    if head > 0 {
        gets.push((GetRange::Bounded(0..head), head));
    }
    if tail > 0 {
        gets.push((GetRange::Suffix(tail), tail));
    }
    let sent = gets.len() as u64;
    if sent == 0 {
        return Err(0);
    }
    let answers = futures::future::join_all(
        gets.into_iter()
            .map(|(range, cap)| get_at_open(store, path, range, cap)),
    )
    .await;
    let mut meta: Option<ObjectMeta> = None;
    let mut opened = Vec::new();
    for a in answers {
        let (m, r, d) = a.map_err(|_| sent)?;
        if let Some(first) = &meta {
            if first.size != m.size || first.e_tag != m.e_tag || first.version != m.version {
                return Err(sent);
            }
        } else {
            meta = Some(m);
        }
        opened.push((r, d));
    }
    meta.map(|m| (m, opened)).ok_or(sent)
}

impl Fetch for StoreFetch {
    fn len(&self) -> u64 {
        self.size
    }

    fn describe(&self) -> String {
        self.url.clone()
    }

    fn take_opened(&self) -> Vec<(ByteRange, Vec<u8>)> {
        std::mem::take(&mut *self.opened.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn open_other(&self, url: &str) -> Option<Result<Arc<dyn Fetch>>> {
        Some(match StoreFetch::open(url, &self.options) {
            Ok(f) => Ok(Arc::new(f)),
            Err(Error::Remote { reason, .. }) if reason.starts_with("not found") => {
                Err(Error::NotFound(format!("remote object {url}")))
            }
            Err(e) => Err(e),
        })
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
