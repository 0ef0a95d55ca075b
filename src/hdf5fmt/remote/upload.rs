//! Uploading a local file to an object URL with a multipart upload: parts
//! sent concurrently, the upload aborted on any error, so the object appears
//! whole (when the store completes the upload) or not at all.

use std::io::Read;
use std::path::Path;

use object_store::{ObjectStoreExt, WriteMultipart};

use super::runtime::block_on;
use super::store::store_for;
use super::RemoteOptions;
use crate::error::{Error, Result};

/// Bytes per part (S3's minimum for all parts but the last is 5 MiB).
const PART: usize = 8 << 20;
/// Parts in flight at once.
const PARTS_IN_FLIGHT: usize = 4;

/// Upload the file at `local` to `url`; returns the bytes sent. Any failure
/// (reading the file, a part, completing) aborts the multipart upload.
pub fn upload_file(local: &Path, url: &str, opts: &RemoteOptions) -> Result<u64> {
    let (store, path) = store_for(url, opts)?;
    let fail = |reason: String| Error::Remote {
        url: url.to_string(),
        range: "-".to_string(),
        reason,
    };
    let mut file = std::fs::File::open(local)?;
    block_on(async {
        let upload = store
            .put_multipart(&path)
            .await
            .map_err(|e| fail(format!("cannot start the upload: {e}")))?;
        let mut w = WriteMultipart::new_with_chunk_size(upload, PART);
        let mut sent = 0u64;
        let mut buf = vec![0u8; PART];
        let outcome: Result<()> = async {
            loop {
                let n = file.read(&mut buf)?;
                if n == 0 {
                    return Ok(());
                }
                w.wait_for_capacity(PARTS_IN_FLIGHT)
                    .await
                    .map_err(|e| fail(format!("uploading a part: {e}")))?;
                w.write(&buf[..n]);
                sent += n as u64;
            }
        }
        .await;
        match outcome {
            Ok(()) => {
                w.finish()
                    .await
                    .map_err(|e| fail(format!("completing the upload: {e}")))?;
                Ok(sent)
            }
            Err(e) => {
                // The object never appears; the abort's own failure is secondary.
                let _ = w.abort().await;
                Err(e)
            }
        }
    })?
}

/// Write an output to `out`: when `out` is a URL, `write` writes a local
/// temporary file (named like the object, in a fresh directory under the
/// system temporary directory) which is then uploaded with [`upload_file`]
/// and removed; otherwise `write` writes `out` itself. Nothing appears at the
/// URL unless `write` and the whole upload succeed.
pub fn write_then_upload<T, E>(
    out: &str,
    opts: &RemoteOptions,
    write: impl FnOnce(&Path) -> std::result::Result<T, E>,
) -> std::result::Result<T, E>
where
    E: From<Error>,
{
    if !super::url::is_url(out) {
        return write(Path::new(out));
    }
    super::url::parse(out)?;
    let name = out.rsplit('/').next().unwrap_or("upload").to_string();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("purehdf-upload-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(Error::from)?;
    let local = dir.join(&name);
    let result = write(&local).and_then(|v| {
        upload_file(&local, out, opts)?;
        Ok(v)
    });
    let _ = std::fs::remove_dir_all(&dir);
    result
}
