//! In-place editing of an existing HDF5 file ([`Editor`](crate::Editor), from
//! [`crate::File::open_rw`]): attributes, links, new objects, written by
//! append-then-repoint so that a process killed at any moment leaves the file
//! in its state before or after each committed operation.
//!
//! Every operation encodes what it needs with the writer's encoders
//! (`crate::write`), appends it past the end of the file (or into space freed
//! by an earlier operation of the session), syncs, moves the superblock's
//! end-of-file address, syncs, and only then repoints: it rewrites the first
//! chunk of one object header (the bytes that changed, in one positional
//! write within one page for every header libhdf5 and we write), whose old
//! continuation chunks become free space for the next operation.
//!
//! One job per file: `open` (open and lock), `space` (free-space tracking),
//! `commit` (ordering, superblock end of file), `header` (object header
//! rewrite), `attrs` (attributes), `links` (links and new objects), `data`
//! (dataset writes), `chunked` (chunked writes and resizes), `btree1_chunks`
//! (version 1 B-tree chunk indexes), `stab` (links of symbol-table groups).

mod attrs;
mod btree1_chunks;
mod chunked;
mod commit;
mod data;
mod dense;
mod dense_attrs;
mod dense_links;
mod header;
mod links;
pub(crate) mod open;
mod space;
mod stab;

use std::path::PathBuf;

use crate::file::File;

pub use commit::Durability;

/// A file opened for reading and writing ([`File::open_rw`]).
///
/// Reads go through [`Editor::file`], a read-only view refreshed after every
/// operation. The editor holds an exclusive lock on the file (as libhdf5
/// does, unless `HDF5_USE_FILE_LOCKING` is `FALSE`) until it is dropped.
pub struct Editor {
    path: PathBuf,
    fd: std::fs::File,
    reader: File,
    sb: commit::SuperblockInfo,
    /// End of the allocated space (relative to the base address).
    eoa: u64,
    free: space::FreeSpace,
    /// Global heap blocks this session wrote for one attribute each (object
    /// header address, name): freed when the attribute is replaced or
    /// deleted.
    owned: std::collections::HashMap<(u64, String), (u64, u64)>,
    /// Addresses of the blocks this session allocated (their lengths are
    /// rounded up to the alignment when they are freed).
    mine: std::collections::HashSet<u64>,
    /// Chunk indexes this session wrote, by dataset header address: the
    /// layout message body pointing at one, and its blocks (freed when the
    /// dataset's index is replaced again while that body is still current).
    indexes: std::collections::HashMap<u64, chunked::WrittenIndex>,
    durability: Durability,
    /// An operation failed after writing: later operations are refused.
    broken: Option<String>,
}

impl Editor {
    /// The current content, read-only (refreshed after every operation).
    pub fn file(&self) -> &File {
        &self.reader
    }

    /// The path the editor writes.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// End of the allocated space, as the superblock records it (relative
    /// to the base address).
    pub fn end_of_allocation(&self) -> u64 {
        self.eoa
    }

    /// Bytes freed by this session's operations and not reused yet.
    pub fn free_bytes(&self) -> u64 {
        self.free.total()
    }

    /// How each operation is made durable (default: [`Durability::Sync`]).
    pub fn set_durability(&mut self, d: Durability) {
        self.durability = d;
    }

    /// Read the file afresh into [`Editor::file`] (after a change made
    /// beside the editor, such as the superblock's status flags).
    pub(crate) fn refresh_view(&mut self) -> crate::Result<()> {
        self.reader = File::open_pread(&self.path)?;
        Ok(())
    }

    /// Forget the space freed so far, so that no later operation reuses it
    /// (a SWMR reader may still hold the structures that lay there).
    pub(crate) fn forget_freed(&mut self) {
        self.free = space::FreeSpace::default();
    }

    /// Drop the file lock while the editor stays open (a SWMR writer does,
    /// once the superblock says it writes, so SWMR readers can open).
    pub(crate) fn unlock(&self) -> crate::Result<()> {
        self.fd
            .unlock()
            .map_err(|e| crate::Error::io(self.path.display(), e))
    }
}
