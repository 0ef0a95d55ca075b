//! The SWMR writer ([`File::open_swmr_writer`], [`SwmrWriter`]): appends
//! to chunked datasets of a version 3 superblock file while SWMR readers
//! (libhdf5's or ours) follow it.
//!
//! Opening mirrors libhdf5: an exclusive lock, a refusal when the status
//! flags say a writer already has the file, the write-access and
//! SWMR-write-access flags set and synced, then the lock dropped so SWMR
//! readers can take their shared one; closing clears the flags. Each append
//! is one in-place edit ([`crate::Editor`]) in libhdf5's flush-dependency
//! order: the re-encoded chunks and a complete new chunk index are written
//! past the end of the file and synced, then the object header's dataspace
//! and layout messages are rewritten together and synced. Space freed by an
//! append is never reused while the writer is open, since a reader may still
//! hold the old index or chunks.

use std::os::unix::fs::FileExt;
use std::path::Path;

use super::lock::{status_flags, SWMR_WRITE_ACCESS, WRITE_ACCESS};
use crate::checksum::metadata_checksum;
use crate::edit::Editor;
use crate::error::{Error, Result};
use crate::file::File;

/// A file open for SWMR writing ([`File::open_swmr_writer`]). The superblock
/// says so until [`SwmrWriter::close`] (or drop) clears its flags.
pub struct SwmrWriter {
    ed: Editor,
    open: bool,
}

/// Rewrite the status flags byte of the version 3 superblock of `f` (opened
/// from `path`) to `flags`, its checksum with it, and sync.
fn write_flags(f: &File, path: &Path, flags: u8) -> Result<()> {
    let sb = f.superblock();
    if sb.version < 3 {
        return Err(Error::unsupported(
            "superblock",
            sb.offset,
            format!(
                "SWMR writing needs superblock version 3 (libver=\"latest\"), this one is {}",
                sb.version
            ),
        ));
    }
    let o = u64::from(sb.sizes.offset);
    let checked = usize::try_from(12 + 4 * o)
        .map_err(|_| Error::malformed("superblock", sb.offset, "size"))?;
    let io = |e| Error::io(path.display(), e);
    let fd = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io)?;
    let mut b = vec![0u8; checked + 4];
    fd.read_exact_at(&mut b, sb.offset).map_err(io)?;
    if metadata_checksum(&b[..checked]).to_le_bytes() != b[checked..] {
        return Err(Error::malformed("superblock", sb.offset, "checksum"));
    }
    b[11] = flags;
    let sum = metadata_checksum(&b[..checked]);
    b[checked..].copy_from_slice(&sum.to_le_bytes());
    fd.write_all_at(&b, sb.offset).map_err(io)?;
    fd.sync_data().map_err(io)
}

/// Write `bytes` (stored element bytes, C order) into the box
/// `start`/`count` of the chunked dataset at `path` while growing it to
/// `shape`, in one commit: chunks and the new index first, then the
/// header's dataspace and layout together, so a reader sees the old
/// dataset or the grown and written one, never the new extent over
/// unwritten chunks. `start`/`count` must lie inside `shape`, and
/// `shape` within the maximum dimensions and not below the current ones.
fn grow_and_write(
    ed: &mut Editor,
    path: &str,
    shape: &[u64],
    start: &[u64],
    count: &[u64],
    bytes: &[u8],
) -> Result<()> {
    let crate::Object::Dataset(ds) = ed.file().object(path)? else {
        return Err(Error::InvalidArgument(format!("{path} is not a dataset")));
    };
    let old = ds.shape();
    let esize = ds.dtype().size();
    let rank_ok = shape.len() == old.len() && start.len() == old.len() && count.len() == old.len();
    let grows = rank_ok
        && shape.iter().zip(old).all(|(n, o)| n >= o)
        && shape
            .iter()
            .zip(ds.maxshape())
            .all(|(n, m)| m.is_none_or(|m| *n <= m));
    let inside = rank_ok
        && (0..shape.len()).all(|d| {
            start[d]
                .checked_add(count[d])
                .is_some_and(|e| e <= shape[d])
        });
    let n = count.iter().try_fold(esize, |a, &c| a.checked_mul(c));
    if !grows || !inside || n != Some(bytes.len() as u64) {
        return Err(Error::InvalidArgument(format!(
            "{path}: cannot grow {old:?} to {shape:?} and write {start:?}+{count:?} ({} bytes)",
            bytes.len()
        )));
    }
    if !matches!(ds.layout(), crate::messages::layout::Layout::Chunked { .. }) {
        return Err(Error::InvalidArgument(format!(
            "{path}: only chunked datasets can grow"
        )));
    }
    ed.write_chunked(&ds, shape, start, count, bytes)
}

impl File {
    /// Open `path` (superblock version 3: written with `libver="latest"`,
    /// by h5py or by [`crate::FileWriter`]) as a SWMR writer, as libhdf5's
    /// `H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE` does: refused while the status
    /// flags say another writer has it; the write and SWMR-write flags set;
    /// the file lock dropped so SWMR readers ([`File::open_swmr`], h5py's
    /// `swmr=True`) can open it. See [`SwmrWriter`].
    pub fn open_swmr_writer(path: impl AsRef<Path>) -> Result<SwmrWriter> {
        let path = path.as_ref();
        let mut ed = File::open_rw(path)?;
        let f = ed.file();
        let flags = status_flags(f.superblock());
        if flags.write_access || flags.swmr_write_access {
            return Err(Error::io(
                path.display(),
                std::io::Error::other(
                    "file is already open for write/SWMR write (its superblock status flags are set)",
                ),
            ));
        }
        let byte = (f.superblock().flags as u8) | (WRITE_ACCESS | SWMR_WRITE_ACCESS) as u8;
        write_flags(f, path, byte)?;
        ed.forget_freed();
        ed.unlock()?;
        ed.refresh_view()?;
        Ok(SwmrWriter { ed, open: true })
    }
}

impl SwmrWriter {
    /// The file as last committed, read-only.
    pub fn file(&self) -> &File {
        self.ed.file()
    }

    /// Append `bytes` (stored element bytes, C order: `rows` slabs of the
    /// dataset's other dimensions) along the first dimension of the chunked
    /// dataset at `path`, whose first dimension must be able to grow; returns
    /// the new length of that dimension. Visible to readers when it returns.
    pub fn append(&mut self, path: &str, rows: u64, bytes: &[u8]) -> Result<u64> {
        let crate::Object::Dataset(ds) = self.ed.file().object(path)? else {
            return Err(Error::InvalidArgument(format!("{path} is not a dataset")));
        };
        let old = ds.shape().to_vec();
        if old.is_empty() || rows == 0 {
            return Err(Error::InvalidArgument(format!(
                "{path}: append needs a dataset of rank 1 or more and at least one row"
            )));
        }
        let mut shape = old.clone();
        shape[0] = old[0]
            .checked_add(rows)
            .ok_or_else(|| Error::InvalidArgument("length overflow".into()))?;
        let mut start = vec![0; old.len()];
        start[0] = old[0];
        let mut count = old.clone();
        count[0] = rows;
        grow_and_write(&mut self.ed, path, &shape, &start, &count, bytes)?;
        self.ed.forget_freed();
        Ok(shape[0])
    }

    /// Clear the superblock's write and SWMR-write flags (as libhdf5 does on
    /// close) and release the file.
    pub fn close(mut self) -> Result<()> {
        self.clear()
    }

    fn clear(&mut self) -> Result<()> {
        if !self.open {
            return Ok(());
        }
        self.open = false;
        self.ed.refresh_view()?;
        let f = self.ed.file();
        let byte = (f.superblock().flags as u8) & !((WRITE_ACCESS | SWMR_WRITE_ACCESS) as u8);
        write_flags(f, self.ed.path(), byte)
    }
}

impl Drop for SwmrWriter {
    fn drop(&mut self) {
        // best effort: `close` reports the error
        let _ = self.clear();
    }
}
