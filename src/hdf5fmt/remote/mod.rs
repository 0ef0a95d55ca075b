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
#[path = "options.rs"]
mod options;
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

use std::sync::Arc;

use crate::error::Result;
use crate::file::File;

pub use options::{default_options, set_default_options, RemoteOptions};
pub use store_fetch::StoreFetch;
pub use upload::upload_file;
pub use url::{is_url, RemoteUrl};

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
