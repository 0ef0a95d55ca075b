//! libhdf5's file lock and superblock status flags as SWMR uses them: a
//! shared `flock` for readers (`HDF5_USE_FILE_LOCKING` = `FALSE`/`0` skips
//! it, `BEST_EFFORT` ignores a file system without locks), and the version 3
//! superblock's write-access and SWMR-write-access flags.

use std::path::Path;

use crate::edit::open::{locking, Locking};
use crate::error::{Error, Result};
use crate::superblock::Superblock;

/// The superblock's status flags that SWMR reads and writes (the low byte
/// of the superblock's file consistency flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusFlags {
    /// `H5F_SUPER_WRITE_ACCESS` (bit 0): a writer has the file open.
    pub write_access: bool,
    /// `H5F_SUPER_SWMR_WRITE_ACCESS` (bit 2): that writer is a SWMR writer.
    pub swmr_write_access: bool,
}

/// Bit 0 of the status flags: the file is open for writing.
pub(crate) const WRITE_ACCESS: u32 = 0x01;
/// Bit 2 of the status flags: the file is open for SWMR writing.
pub(crate) const SWMR_WRITE_ACCESS: u32 = 0x04;

/// The status flags of `sb`.
pub fn status_flags(sb: &Superblock) -> StatusFlags {
    StatusFlags {
        write_access: sb.flags & WRITE_ACCESS != 0,
        swmr_write_access: sb.flags & SWMR_WRITE_ACCESS != 0,
    }
}

/// libhdf5's check for a SWMR reader (`H5F_open`): from superblock version
/// 3 on, the write and SWMR-write flags must be both set (a SWMR writer has
/// the file) or both clear (nobody writes it).
pub(crate) fn check_reader_flags(sb: &Superblock, path: &Path) -> Result<()> {
    if sb.version < 3 {
        return Ok(());
    }
    let f = status_flags(sb);
    if f.write_access != f.swmr_write_access {
        return Err(Error::io(
            path.display(),
            std::io::Error::other(
                "file is not already open for SWMR writing (it is open for plain writing)",
            ),
        ));
    }
    Ok(())
}

/// Take libhdf5's shared lock on `fd` (non-blocking), as its SWMR readers
/// do: it conflicts only with a writer that still holds its exclusive lock
/// (a plain writer, or a SWMR writer in the moment of opening).
pub(crate) fn lock_shared(fd: &std::fs::File, path: &Path) -> Result<()> {
    let mode = locking();
    if mode == Locking::Off {
        return Ok(());
    }
    match fd.try_lock_shared() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::io(
            path.display(),
            std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                "unable to lock file: a writer holds it (HDF5_USE_FILE_LOCKING=FALSE disables locking)",
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
