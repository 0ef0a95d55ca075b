//! The SWMR reader: [`File::open_swmr`] opens a file a SWMR writer (libhdf5
//! or ours) appends to, [`Dataset::refresh`] re-reads one dataset's object
//! header (and, on its next read, its chunk index) and nothing else, and
//! [`retry`] reads again what a concurrent write tore.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::lock::check_reader_flags;
use super::source::SwmrSource;
use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::file::File;
use crate::source::Source;

/// Attempts [`retry`] makes: libhdf5's default of
/// `H5F_ACS_METADATA_READ_ATTEMPTS` for SWMR reads.
pub const METADATA_READ_ATTEMPTS: u32 = 100;

/// Longest sleep between two attempts (they start at 1 ms and double).
const MAX_BACKOFF: Duration = Duration::from_millis(16);

/// Whether `e` can come from bytes a concurrent writer was changing (a
/// checksum, a signature, a length, a decode failure), rather than from the
/// request itself.
fn transient(e: &Error) -> bool {
    !matches!(
        e,
        Error::InvalidArgument(_)
            | Error::Conversion { .. }
            | Error::UnsupportedFilter { .. }
            | Error::UnsupportedCodec { .. }
            | Error::InvalidName { .. }
            | Error::Limit { .. }
            | Error::OverBudget { .. }
    )
}

/// Run `f` until it succeeds, at most [`METADATA_READ_ATTEMPTS`] times with
/// short growing sleeps between attempts (about 1.5 s in all), as libhdf5
/// retries a SWMR reader's metadata reads; the last error when every
/// attempt failed, or at once an error no retry can cure (a bad argument, a
/// conversion, an unsupported filter, a limit). `f` should re-read what it
/// depends on (call [`Dataset::refresh`] first), since an index read before
/// the writer's last flush can name chunks that were moved since.
pub fn retry<T>(mut f: impl FnMut() -> Result<T>) -> Result<T> {
    let mut pause = Duration::from_millis(1);
    let mut attempt = 1;
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if attempt < METADATA_READ_ATTEMPTS && transient(&e) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(MAX_BACKOFF);
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

impl File {
    /// Open `path` as a SWMR reader, as h5py's `File(path, "r",
    /// libver="latest", swmr=True)` does: a shared file lock (which a SWMR
    /// writer has dropped after opening; `HDF5_USE_FILE_LOCKING` as libhdf5
    /// reads it), the superblock's status flags checked as libhdf5 checks
    /// them (a file a plain writer holds is refused), and no end-of-file
    /// check (the writer moves the end on). Reads see the file as it grows:
    /// call [`Dataset::refresh`] to see a dataset's new shape and chunks.
    /// A superblock torn by a concurrent flush is read again ([`retry`]).
    pub fn open_swmr(path: impl AsRef<Path>) -> Result<File> {
        let path = path.as_ref();
        let src: Arc<dyn Source> = Arc::new(SwmrSource::open(path)?);
        let file =
            retry(|| File::from_source_checked(Arc::clone(&src), Some(path.to_path_buf()), false))?;
        check_reader_flags(file.superblock(), path)?;
        Ok(file)
    }
}

impl Dataset {
    /// Re-read this dataset's object header (dataspace, layout, chunk index
    /// address) from the file, as libhdf5's `H5Drefresh` does, dropping the
    /// handle's walked chunk index and decoded chunks: the next read walks
    /// the index afresh. Nothing else of the file is read again. A header
    /// torn by a concurrent flush is read again ([`retry`]). Returns whether
    /// the shape changed. Meant for files opened with [`File::open_swmr`];
    /// on others it re-reads the same bytes.
    pub fn refresh(&mut self) -> Result<bool> {
        let file = self.file().clone();
        let address = self.address();
        let path = self.path().to_string();
        let fresh = retry(|| {
            let header = Arc::new(file.header(address)?);
            Dataset::new(file.clone(), path.clone(), header)
        })?;
        let changed = fresh.shape() != self.shape();
        *self = fresh;
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_what_a_writer_can_tear_and_nothing_else() {
        // torn bytes: read again until they are whole
        let mut calls = 0;
        let v = retry(|| {
            calls += 1;
            if calls < 3 {
                Err(Error::malformed("object header", 8, "bad checksum"))
            } else {
                Ok(calls)
            }
        });
        assert_eq!(v.unwrap(), 3);
        // a bad request: at once
        let mut calls = 0;
        let e = retry(|| -> Result<()> {
            calls += 1;
            Err(Error::InvalidArgument("no".into()))
        });
        assert!(matches!(e, Err(Error::InvalidArgument(_))));
        assert_eq!(calls, 1);
        // never whole: the last typed error after the bounded attempts
        let mut calls = 0;
        let e = retry(|| -> Result<()> {
            calls += 1;
            Err(Error::malformed("chunk index", calls, "torn"))
        });
        assert_eq!(calls, u64::from(METADATA_READ_ATTEMPTS));
        assert!(matches!(e, Err(Error::Malformed { offset, .. }) if offset == calls));
    }
}
