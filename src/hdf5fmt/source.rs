//! Byte sources the reader parses from: a memory map, an in-memory buffer (the
//! WASM path), and positional reads for files that may change under the reader.
//!
//! All sources are read-only. Reads are bounds-checked against the source's
//! length and capped by [`crate::hdf5fmt::limits::MAX_READ`]; a source that holds
//! its bytes in memory hands out borrowed slices (zero copy).

use std::borrow::Cow;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::hdf5fmt::limits;

/// A read-only, random-access byte source.
pub trait Source: Send + Sync {
    /// Total length in bytes.
    fn len(&self) -> u64;

    /// True when the source holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole source as one slice, when it lives in memory (map or buffer).
    fn as_slice(&self) -> Option<&[u8]> {
        None
    }

    /// Copy `buf.len()` bytes starting at `offset` into `buf`.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()>;

    /// `len` bytes at `offset`, borrowed when possible. `structure` names what is
    /// being read, for the error.
    fn read(&self, structure: &'static str, offset: u64, len: u64) -> Result<Cow<'_, [u8]>> {
        let total = self.len();
        let end = offset.checked_add(len).ok_or(Error::Overflow {
            structure,
            offset,
            what: "end of read",
        })?;
        if end > total {
            return Err(Error::Truncated {
                structure,
                offset,
                needed: len,
                available: total.saturating_sub(offset),
            });
        }
        if let Some(all) = self.as_slice() {
            let (s, e) = (usize::try_from(offset), usize::try_from(end));
            return match (s, e) {
                (Ok(s), Ok(e)) => all.get(s..e).map(Cow::Borrowed).ok_or(Error::Truncated {
                    structure,
                    offset,
                    needed: len,
                    available: 0,
                }),
                _ => Err(Error::Overflow {
                    structure,
                    offset,
                    what: "read range",
                }),
            };
        }
        let n = crate::hdf5fmt::cursor::bounded(
            len,
            limits::MAX_READ,
            structure,
            offset,
            "read length",
        )?;
        let mut buf = vec![0u8; n];
        self.read_exact_at(offset, &mut buf)
            .map_err(|e| Error::io(format!("{structure} at offset {offset:#x}"), e))?;
        Ok(Cow::Owned(buf))
    }

    /// Up to `len` bytes at `offset`, fewer when the source ends first.
    fn read_upto(&self, structure: &'static str, offset: u64, len: u64) -> Result<Cow<'_, [u8]>> {
        let avail = self.len().saturating_sub(offset);
        self.read(structure, offset, len.min(avail))
    }
}

/// An owned in-memory buffer: the source for WASM and for tests.
#[derive(Clone)]
pub struct MemSource(Arc<[u8]>);

impl MemSource {
    pub fn new(bytes: impl Into<Arc<[u8]>>) -> Self {
        MemSource(bytes.into())
    }
}

impl Source for MemSource {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(&self.0)
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        copy_from_slice(&self.0, offset, buf)
    }
}

/// A borrowed slice with a static lifetime (e.g. `include_bytes!`).
impl Source for &'static [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        copy_from_slice(self, offset, buf)
    }
}

fn copy_from_slice(all: &[u8], offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    let start = usize::try_from(offset).map_err(|_| eof())?;
    let end = start.checked_add(buf.len()).ok_or_else(eof)?;
    let src = all.get(start..end).ok_or_else(eof)?;
    buf.copy_from_slice(src);
    Ok(())
}

fn eof() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "read past end of source")
}

/// A read-only memory map of a file.
#[cfg(feature = "mmap")]
pub struct MmapSource {
    map: memmap2::Mmap,
}

#[cfg(feature = "mmap")]
impl MmapSource {
    /// Map `path` read-only.
    pub fn open(path: &std::path::Path) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path.display(), e))?;
        // SAFETY: the map is read-only and private to this process; a file truncated by
        // another process while mapped may fault (SIGBUS) — callers that must survive
        // concurrent writers use `PreadSource` instead, as the docs of `File::open` say.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path.display(), e))?;
        Ok(MmapSource { map })
    }
}

#[cfg(feature = "mmap")]
impl Source for MmapSource {
    fn len(&self) -> u64 {
        self.map.len() as u64
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(&self.map)
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        copy_from_slice(&self.map, offset, buf)
    }
}

/// Positional reads (`pread`) on an open file: safe against files that change.
pub struct PreadSource {
    file: std::fs::File,
    len: u64,
}

impl PreadSource {
    pub fn open(path: &std::path::Path) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path.display(), e))?;
        let len = file
            .metadata()
            .map_err(|e| Error::io(path.display(), e))?
            .len();
        Ok(PreadSource { file, len })
    }
}

impl Source for PreadSource {
    fn len(&self) -> u64 {
        self.len
    }
    #[cfg(unix)]
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.read_exact_at(buf, offset)
    }
    #[cfg(not(unix))]
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = &self.file;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_source_bounds() {
        let s = MemSource::new(vec![1u8, 2, 3, 4]);
        assert_eq!(&*s.read("t", 1, 2).unwrap(), &[2, 3]);
        assert!(matches!(s.read("t", 3, 2), Err(Error::Truncated { .. })));
        assert!(matches!(
            s.read("t", u64::MAX, 2),
            Err(Error::Overflow { .. })
        ));
        assert_eq!(&*s.read_upto("t", 2, 10).unwrap(), &[3, 4]);
    }

    #[test]
    fn pread_matches_mem() {
        let dir = std::env::temp_dir().join(format!("purehdf-src-{}", std::process::id()));
        std::fs::write(&dir, b"hello world").unwrap();
        let p = PreadSource::open(&dir).unwrap();
        assert_eq!(&*p.read("t", 6, 5).unwrap(), b"world");
        assert!(p.read("t", 7, 5).is_err());
        std::fs::remove_file(&dir).unwrap();
    }
}
