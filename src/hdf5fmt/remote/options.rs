//! How remote objects are reached and read ([`RemoteOptions`]), and the
//! process-wide defaults that `File::open_url` uses.

use std::sync::RwLock;
use std::time::Duration;

use crate::fetch::RangeOptions;

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

/// Make `options` the ones [`File::open_url`](crate::File::open_url) uses in this process (a command
/// line's `--endpoint`, for instance).
pub fn set_default_options(options: RemoteOptions) {
    let mut d = DEFAULTS.write().unwrap_or_else(|p| p.into_inner());
    *d = Some(options);
}

/// The options [`File::open_url`](crate::File::open_url) uses: those last given to
/// [`set_default_options`], else [`RemoteOptions::default`].
pub fn default_options() -> RemoteOptions {
    let d = DEFAULTS.read().unwrap_or_else(|p| p.into_inner());
    d.clone().unwrap_or_default()
}
