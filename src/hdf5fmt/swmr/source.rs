//! The byte source of a SWMR reader: positional reads of a file that grows
//! while it is read. Its length is the file's length at each read (not at
//! open), and it has no identity, so no cache keyed by file identity keeps
//! metadata of it. It holds the reader's shared lock for its lifetime.

use crate::error::Result;
use crate::source::Source;

/// A file read with `pread`, its length taken afresh at each bounds check.
pub(crate) struct SwmrSource {
    file: std::fs::File,
}

impl SwmrSource {
    /// Read `path`, holding libhdf5's shared lock (see `lock`).
    pub(crate) fn open(path: &std::path::Path) -> Result<Self> {
        let file =
            std::fs::File::open(path).map_err(|e| crate::error::Error::io(path.display(), e))?;
        super::lock::lock_shared(&file, path)?;
        Ok(SwmrSource { file })
    }
}

impl Source for SwmrSource {
    fn len(&self) -> u64 {
        // A failed `fstat` reads as an empty file: every read is then a
        // typed out-of-bounds error, retried by the SWMR reader.
        self.file.metadata().map_or(0, |m| m.len())
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.read_exact_at(buf, offset)
    }
}
