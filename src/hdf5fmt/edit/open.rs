//! Opening a file for editing: the superblock's geometry, the end of
//! allocation, and libhdf5's file lock (`flock`, exclusive, non-blocking;
//! `HDF5_USE_FILE_LOCKING` = `FALSE`/`0` skips it, `BEST_EFFORT` ignores a
//! file system without locks).

use std::path::Path;

use super::commit::{Durability, SuperblockInfo};
use super::space::FreeSpace;
use super::Editor;
use crate::error::{Error, Result};
use crate::file::File;

/// What `HDF5_USE_FILE_LOCKING` asks for (shared with the SWMR reader's lock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Locking {
    Off,
    On,
    BestEffort,
}

pub(crate) fn locking() -> Locking {
    match std::env::var("HDF5_USE_FILE_LOCKING") {
        Ok(v) if v.eq_ignore_ascii_case("false") || v == "0" => Locking::Off,
        Ok(v) if v.eq_ignore_ascii_case("best_effort") => Locking::BestEffort,
        _ => Locking::On,
    }
}

fn lock(fd: &std::fs::File, path: &Path) -> Result<()> {
    let mode = locking();
    if mode == Locking::Off {
        return Ok(());
    }
    match fd.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::io(
            path.display(),
            std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                "unable to lock file: it is open elsewhere (HDF5_USE_FILE_LOCKING=FALSE disables locking)",
            ),
        )),
        Err(std::fs::TryLockError::Error(e)) => {
            if mode == Locking::BestEffort && e.kind() == std::io::ErrorKind::Unsupported {
                Ok(())
            } else {
                Err(Error::io(path.display(), e))
            }
        }
    }
}

impl File {
    /// Open the HDF5 file at `path` for in-place editing (superblock versions
    /// 0–3, written by libhdf5 or by us). See [`Editor`].
    pub fn open_rw(path: impl AsRef<Path>) -> Result<Editor> {
        let path = path.as_ref().to_path_buf();
        let fd = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(path.display(), e))?;
        lock(&fd, &path)?;
        let reader = File::open_pread(&path)?;
        let sb = SuperblockInfo::of(&reader)?;
        let eoa = sb.stored_eoa;
        Ok(Editor {
            path,
            fd,
            reader,
            sb,
            eoa,
            free: FreeSpace::default(),
            owned: Default::default(),
            mine: Default::default(),
            indexes: Default::default(),
            durability: Durability::Sync,
            broken: None,
        })
    }
}
