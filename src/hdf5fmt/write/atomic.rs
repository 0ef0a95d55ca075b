//! Atomic replacement of a file: write to `<dir>/.<name>.<random>.tmp`, fsync,
//! rename over the target, fsync the directory. Dropping an uncommitted
//! [`TempFile`] removes the temporary file, leaving any old target untouched.

use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temporary file next to its final destination.
pub struct TempFile {
    tmp: PathBuf,
    target: PathBuf,
    done: bool,
}

fn random_suffix() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut x =
        nanos ^ (u64::from(std::process::id()) << 32) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // splitmix64 finaliser
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl TempFile {
    /// Create the temporary file for `target` (exclusively).
    pub fn create(target: &Path) -> Result<(TempFile, File)> {
        let name = target
            .file_name()
            .ok_or_else(|| {
                Error::InvalidArgument(format!("{} has no file name", target.display()))
            })?
            .to_string_lossy()
            .into_owned();
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        for _ in 0..16 {
            let tmp = dir.join(format!(".{name}.{:016x}.tmp", random_suffix()));
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(f) => {
                    return Ok((
                        TempFile {
                            tmp,
                            target: target.to_path_buf(),
                            done: false,
                        },
                        f,
                    ))
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(format!("create {}", tmp.display()), e)),
            }
        }
        Err(Error::InvalidArgument(
            "could not pick a temporary file name".into(),
        ))
    }

    /// Path of the temporary file.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// fsync `file`, rename it over the target and fsync the directory.
    pub fn commit(mut self, file: File) -> Result<()> {
        file.sync_all()
            .map_err(|e| Error::io(format!("fsync {}", self.tmp.display()), e))?;
        drop(file);
        std::fs::rename(&self.tmp, &self.target).map_err(|e| {
            Error::io(
                format!("rename {} -> {}", self.tmp.display(), self.target.display()),
                e,
            )
        })?;
        self.done = true;
        let dir = match self.target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // Directory fsync makes the rename durable; not every platform allows it.
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
