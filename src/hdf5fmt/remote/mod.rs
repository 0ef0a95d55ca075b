//! Remote objects: S3 (and S3-compatible servers), GCS, Azure and HTTP(S)
//! read by range requests through object_store, and uploads to them.
//!
//! [`File::open_url`] opens `s3://bucket/key`, `gs://bucket/key`,
//! `az://container/key` or `https://host/path`: two concurrent ranged GETs
//! of its head and tail (the first bytes the reader needs) pin the object's
//! size and ETag (one HEAD when they fail), and every later range request is
//! conditional on that ETag
//! and checked on arrival, so a replaced object ends a read in
//! [`Error::StaleSnapshot`](crate::Error::StaleSnapshot), never in mixed
//! bytes. Credentials and endpoints are read as the cloud command lines read
//! them ([`credentials`]); plain `http://` is allowed for loopback hosts only.

#[path = "credentials.rs"]
pub mod credentials;
#[path = "runtime.rs"]
mod runtime;
#[path = "store.rs"]
mod store;
#[path = "store_fetch.rs"]
pub mod store_fetch;
#[path = "upload.rs"]
pub mod upload;
#[path = "url.rs"]
pub mod url;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use crate::error::Result;
use crate::fetch::RangeOptions;
use crate::file::File;

pub use store_fetch::StoreFetch;
pub use upload::upload_file;
pub use url::{is_url, RemoteUrl};

/// How remote objects are reached and read.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteOptions {
    /// Endpoint of an S3-compatible server (or an Azure/GCS emulator); when
    /// `None`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL` or the AWS profile's
    /// `endpoint_url` for `s3://`. Plain `http://` only on loopback.
    pub endpoint: Option<String>,
    /// How reads are grouped (block cache, coalescing, requests in flight).
    pub range: RangeOptions,
    /// Retries of one request after a 5xx, a reset, a timeout or a short or
    /// oversized body.
    pub retries: usize,
    /// First wait before a retry (doubling after each).
    pub backoff: Duration,
    /// Total time one request may take, body included.
    pub timeout: Duration,
    /// Time to establish a connection.
    pub connect_timeout: Duration,
    /// Time the retries of one request may take together.
    pub retry_timeout: Duration,
    /// Send no credentials (public buckets).
    pub anonymous: bool,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            endpoint: None,
            range: RangeOptions::default(),
            retries: 5,
            backoff: Duration::from_millis(100),
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            retry_timeout: Duration::from_secs(120),
            anonymous: false,
        }
    }
}

impl RemoteOptions {
    /// These options with `endpoint` (a command line's `--endpoint`) as the
    /// endpoint when it is `Some`.
    pub fn with_endpoint(mut self, endpoint: Option<&str>) -> Self {
        if let Some(e) = endpoint {
            self.endpoint = Some(e.to_string());
        }
        self
    }
}

static DEFAULTS: RwLock<Option<RemoteOptions>> = RwLock::new(None);

/// Make `options` the ones [`File::open_url`] uses in this process (a command
/// line's `--endpoint`, for instance).
pub fn set_default_options(options: RemoteOptions) {
    let mut d = DEFAULTS.write().unwrap_or_else(|p| p.into_inner());
    *d = Some(options);
}

/// The options [`File::open_url`] uses: those last given to
/// [`set_default_options`], else [`RemoteOptions::default`].
pub fn default_options() -> RemoteOptions {
    let d = DEFAULTS.read().unwrap_or_else(|p| p.into_inner());
    d.clone().unwrap_or_default()
}

/// Open `path`: the remote object when it is a URL ([`is_url`]), else the
/// local file ([`File::open`]).
pub fn open_path_or_url(path: &std::path::Path) -> Result<File> {
    match path.to_str() {
        Some(s) if is_url(s) => File::open_url(s),
        _ => File::open(path),
    }
}

impl File {
    /// Open the object at `url` (`s3://`, `gs://`, `az://`, `abfs[s]://`,
    /// `http(s)://`) with the process's [`default_options`].
    pub fn open_url(url: &str) -> Result<File> {
        Self::open_url_with(url, &default_options())
    }

    /// Open the object at `url` as `options` say.
    pub fn open_url_with(url: &str, options: &RemoteOptions) -> Result<File> {
        let fetch = StoreFetch::open(url, options)?;
        File::open_fetch(Arc::new(fetch), options.range.clone())
    }
}
