//! Byte sources the reader parses from: a memory map, an in-memory buffer (the
//! WASM path), and positional reads for files that may change under the reader.
//!
//! All sources are read-only. Reads are bounds-checked against the source's
//! length and capped by [`crate::limits::MAX_READ`]; a source that holds
//! its bytes in memory hands out borrowed slices (zero copy).
//!
//! Files that change underneath a reader (issue 16 item 1, README "When a file
//! changes underneath a reader"): a map keeps the inode it opened, so a file
//! replaced by rename reads as it was; a map of a file truncated in place is
//! guarded by [`crate::mapguard`] (zero pages instead of SIGBUS, then
//! [`Error::SourceChanged`] from [`Source::check`]); positional reads past a
//! shrunken end fail with a typed I/O error. Sources opened from a path record
//! the [`Identity`] of the descriptor they opened.

use std::borrow::Cow;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::limits;

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

    /// `Err(Error::SourceChanged)` once the bytes handed out so far may not be
    /// the file's (a mapped page faulted because the file shrank). Readers call
    /// it after copying data out, so such bytes never reach a caller as data.
    fn check(&self) -> Result<()> {
        Ok(())
    }

    /// Identity of the opened file (device, inode, size, times), when the
    /// source is a file opened from a path.
    fn identity(&self) -> Option<Identity> {
        None
    }

    /// `out.len()` bytes at `offset` straight into `out` (no temporary for
    /// positional reads), bounds-checked like [`Source::read`].
    fn read_into(&self, structure: &'static str, offset: u64, out: &mut [u8]) -> Result<()> {
        read_into_default(self, structure, offset, out)
    }

    /// `len` bytes at `offset`, borrowed when possible. `structure` names what is
    /// being read, for the error.
    fn read(&self, structure: &'static str, offset: u64, len: u64) -> Result<Cow<'_, [u8]>> {
        read_default(self, structure, offset, len)
    }

    /// True when reads should be planned ahead ([`Source::prefetch`]): remote
    /// sources, where one request per chunk would cost a round trip each.
    /// Local sources say no, and readers then skip planning entirely.
    fn wants_prefetch(&self) -> bool {
        false
    }

    /// Bytes of stored data a planned read asks [`Source::prefetch`] for at
    /// once at most (a single larger range is asked for alone).
    fn prefetch_window(&self) -> u64 {
        u64::MAX
    }

    /// When a planned read should fetch its window in steps of this many
    /// bytes, the next step fetched (on another thread) while the last one
    /// decodes; `None` (local sources, hosts that supply bytes themselves)
    /// fetches each window whole first.
    fn pipeline_step(&self) -> Option<u64> {
        None
    }

    /// With [`Source::pipeline_step`], how many steps a planned read keeps
    /// fetching (or holds fetched) at once, each decoded as it arrives.
    fn pipeline_depth(&self) -> usize {
        2
    }

    /// Fetch `ranges` ahead of the reads that follow (coalesced and issued as
    /// one batch by remote sources); they stay available until
    /// [`Source::release`]d. A no-op for local sources.
    fn prefetch(&self, ranges: &[crate::fetch::ByteRange]) -> Result<()> {
        let _ = ranges;
        Ok(())
    }

    /// Let go of ranges a [`Source::prefetch`] fetched.
    fn release(&self, ranges: &[crate::fetch::ByteRange]) {
        let _ = ranges;
    }

    /// Up to `len` bytes at `offset`, fewer when the source ends first.
    fn read_upto(&self, structure: &'static str, offset: u64, len: u64) -> Result<Cow<'_, [u8]>> {
        let avail = self.len().saturating_sub(offset);
        self.read(structure, offset, len.min(avail))
    }
}

/// What [`Source::read_into`] does unless a source says otherwise (wrappers
/// call it to keep the default for the sources they wrap).
pub(crate) fn read_into_default<S: Source + ?Sized>(
    src: &S,
    structure: &'static str,
    offset: u64,
    out: &mut [u8],
) -> Result<()> {
    let len = out.len() as u64;
    if src.as_slice().is_some() {
        let b = src.read(structure, offset, len)?;
        out.copy_from_slice(&b);
        return src.check();
    }
    in_bounds(structure, offset, len, src.len())?;
    src.read_exact_at(offset, out)
        .map_err(|e| Error::io(format!("{structure} at offset {offset:#x}"), e))
}

/// What [`Source::read`] does unless a source says otherwise.
pub(crate) fn read_default<'s, S: Source + ?Sized>(
    src: &'s S,
    structure: &'static str,
    offset: u64,
    len: u64,
) -> Result<Cow<'s, [u8]>> {
    src.check()?;
    let end = in_bounds(structure, offset, len, src.len())?;
    if let Some(all) = src.as_slice() {
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
    let n = crate::cursor::bounded(len, limits::MAX_READ, structure, offset, "read length")?;
    let mut buf = vec![0u8; n];
    src.read_exact_at(offset, &mut buf)
        .map_err(|e| Error::io(format!("{structure} at offset {offset:#x}"), e))?;
    Ok(Cow::Owned(buf))
}

/// The end of `len` bytes at `offset` when they lie inside `total` bytes.
pub(crate) fn in_bounds(structure: &'static str, offset: u64, len: u64, total: u64) -> Result<u64> {
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
    Ok(end)
}

/// An owned in-memory buffer: the source for WASM and for tests.
#[derive(Clone)]
pub struct MemSource(Arc<[u8]>);

impl MemSource {
    /// A source over `bytes` (a `Vec<u8>`, `Box<[u8]>` or shared `Arc<[u8]>`).
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

/// What names one opened file: device and inode of the descriptor, with its
/// size and modification/change times (ns) when it was opened. Two opens of a
/// path give equal identities when nothing replaced, truncated or rewrote it
/// in between (an in-place rewrite within the same nanosecond is not seen).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    /// Device number of the file (`st_dev`).
    pub dev: u64,
    /// Inode number of the file (`st_ino`).
    pub ino: u64,
    /// File size in bytes when opened.
    pub size: u64,
    /// Last modification time (`st_mtime`), in nanoseconds since the UNIX epoch.
    pub mtime_ns: i128,
    /// Last status change time (`st_ctime`), in nanoseconds since the UNIX epoch.
    pub ctime_ns: i128,
}

impl Identity {
    /// Identity from file metadata (of the descriptor, or of a path).
    pub fn of(meta: &std::fs::Metadata) -> Identity {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Identity {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.len(),
                mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
            }
        }
        #[cfg(not(unix))]
        {
            let ns = |t: std::io::Result<std::time::SystemTime>| {
                t.ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos() as i128)
            };
            Identity {
                dev: 0,
                ino: 0,
                size: meta.len(),
                mtime_ns: ns(meta.modified()),
                ctime_ns: ns(meta.created()),
            }
        }
    }

    /// The identity `path` names now.
    pub fn of_path(path: &std::path::Path) -> Result<Identity> {
        std::fs::metadata(path)
            .map(|m| Identity::of(&m))
            .map_err(|e| Error::io(path.display(), e))
    }
}

/// A read-only memory map of a file, guarded against truncation (SIGBUS) on Linux.
#[cfg(feature = "mmap")]
pub struct MmapSource {
    // Declared before `map`: unregisters before the map is unmapped.
    #[cfg(target_os = "linux")]
    guard: crate::mapguard::Guard,
    map: memmap2::Mmap,
    /// The descriptor the map was made from: large extents are `pread` from
    /// it rather than copied out of the map (see [`PREAD_MIN_BYTES`]).
    #[cfg(unix)]
    file: std::fs::File,
    identity: Identity,
    /// For the truncation error (the guard exists on Linux only).
    #[cfg(target_os = "linux")]
    path: String,
}

/// Extents at least this long are read with `pread` into the caller's buffer
/// instead of copied from the map: the kernel copies straight from the page
/// cache, where copying out of the map first faults in and later tears down
/// a page-table entry for every 4 KiB page (the whole-volume read of a 32 MiB
/// contiguous dataset: see `notes/bench-peers.md`).
#[cfg(all(feature = "mmap", unix))]
const PREAD_MIN_BYTES: usize = 1 << 20;

#[cfg(feature = "mmap")]
impl MmapSource {
    /// Map `path` read-only.
    pub fn open(path: &std::path::Path) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path.display(), e))?;
        let meta = file.metadata().map_err(|e| Error::io(path.display(), e))?;
        // SAFETY: the map is read-only and private to this process. A file
        // replaced by rename keeps the mapped inode; a file truncated in place
        // under the map would fault (SIGBUS) on the lost pages — on Linux the
        // guard registered below turns that into zero pages plus a flag that
        // `check` reports as `Error::SourceChanged` (see `mapguard`).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path.display(), e))?;
        #[cfg(target_os = "linux")]
        let guard = crate::mapguard::Guard::register(map.as_ptr(), map.len());
        Ok(MmapSource {
            #[cfg(target_os = "linux")]
            guard,
            map,
            #[cfg(unix)]
            file,
            identity: Identity::of(&meta),
            #[cfg(target_os = "linux")]
            path: path.display().to_string(),
        })
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
    fn read_into(&self, structure: &'static str, offset: u64, out: &mut [u8]) -> Result<()> {
        #[cfg(unix)]
        if out.len() >= PREAD_MIN_BYTES {
            use std::os::unix::fs::FileExt;
            // Bounds as the map has them: a file that grew since is not read
            // past the mapped length; one that shrank fails the read (EOF).
            in_bounds(structure, offset, out.len() as u64, self.len())?;
            return self
                .file
                .read_exact_at(out, offset)
                .map_err(|e| Error::io(format!("{structure} at offset {offset:#x}"), e));
        }
        let b = self.read(structure, offset, out.len() as u64)?;
        out.copy_from_slice(&b);
        self.check()
    }
    fn check(&self) -> Result<()> {
        #[cfg(target_os = "linux")]
        if self.guard.faulted() {
            return Err(Error::SourceChanged(format!(
                "{}: the file was truncated while mapped (opened with {} bytes)",
                self.path,
                self.map.len()
            )));
        }
        Ok(())
    }
    fn identity(&self) -> Option<Identity> {
        Some(self.identity)
    }
}

/// Positional reads (`pread`) on an open file: safe against files that change.
pub struct PreadSource {
    file: std::fs::File,
    len: u64,
    identity: Identity,
}

impl PreadSource {
    /// Open `path` for positional reads, recording its length and [`Identity`] at open time.
    pub fn open(path: &std::path::Path) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path.display(), e))?;
        let meta = file.metadata().map_err(|e| Error::io(path.display(), e))?;
        Ok(PreadSource {
            file,
            len: meta.len(),
            identity: Identity::of(&meta),
        })
    }
}

impl Source for PreadSource {
    fn len(&self) -> u64 {
        self.len
    }
    fn identity(&self) -> Option<Identity> {
        Some(self.identity)
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
