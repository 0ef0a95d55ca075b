//! Metadata cache image (HDF5 File Format Specification IV.A.2.y, the "Metadata
//! Cache Image" superblock extension message, type 0x0018, and the cache image
//! block it points at).
//!
//! A writer that closes a file with a cache image serialises its metadata cache
//! into one block — signature `MDCI`, version 0, flags, image length, entry count,
//! then per entry: type, flags, ring, age, flush-dependency counts, LRU rank, file
//! address, length, parent addresses and the entry's bytes; a lookup3 checksum
//! ends the block. Entries are the current images of object headers, heaps,
//! B-tree and array blocks; dirty ones were never written to their own address,
//! so a reader must look there first. [`CacheImage`] is that address → bytes map
//! and [`OverlaySource`] a byte source that consults it before the file.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::checksum::metadata_checksum;
use crate::cursor::{self, Cursor};
use crate::error::{Error, Result};
use crate::limits;
use crate::source::Source;
use crate::Sizes;

const STRUCTURE: &str = "metadata cache image";
const MESSAGE: &str = "metadata cache image message";
/// Block signature.
pub const SIGNATURE: [u8; 4] = *crate::signature::MDCI;
/// Header flag: an adaptive-resize status follows the entries (not defined yet).
const HAVE_RESIZE_STATUS: u8 = 0x01;
/// Entry flag: the entry is a flush-dependency parent (has children).
const FD_PARENT: u8 = 0x04;
/// Entry flag: the entry is a flush-dependency child (has parents).
const FD_CHILD: u8 = 0x08;
/// Number of metadata cache entry types (`H5AC_NTYPES`); type ids are below it.
const NUM_TYPES: u8 = 30;
/// Number of metadata cache rings; ring ids are below it.
const NUM_RINGS: u8 = 6;
/// Largest entry age a writer records.
const MAX_AGE: u8 = 100;

/// The metadata cache image message: where the image block is and how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheImageMessage {
    /// Address of the image block; `None` when no image was written.
    pub address: Option<u64>,
    /// Length of the image block in bytes.
    pub length: u64,
}

impl CacheImageMessage {
    /// Decode the message body (version 0, address, length).
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let version = c.u8()?;
        if version != 0 {
            return Err(c.unsupported(format!("{MESSAGE} version {version}")));
        }
        let address = c.addr(sizes.offset)?;
        let length = c.length(sizes.length)?;
        if let Some(a) = address {
            cursor::add(a, length, MESSAGE, c.base(), "end of image block")?;
        }
        Ok(CacheImageMessage { address, length })
    }
}

/// One serialised cache entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageEntry {
    /// File address of the entry (relative to the base address).
    pub address: u64,
    /// Cache entry type (`H5AC_type_t`: 5 object header, 22 fixed array header, ...).
    pub type_id: u8,
    /// Entry flags as libhdf5 writes them: 0x01 dirty, 0x02 in the LRU list, 0x04 flush-dependency
    /// parent, 0x08 flush-dependency child (the last two checked against the dependency counts).
    pub flags: u8,
    /// Metadata cache ring the entry belongs to (`H5C_ring_t`, below 6: 1 user, 2–3 free-space
    /// managers, 4 superblock extension, 5 superblock).
    pub ring: u8,
    /// Position of the entry's bytes in the image block.
    data: std::ops::Range<usize>,
}

impl ImageEntry {
    /// Length of the entry's bytes.
    pub fn len(&self) -> u64 {
        (self.data.end - self.data.start) as u64
    }

    /// Always false: an entry has at least one byte.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// One past the entry's last address.
    fn end(&self) -> u64 {
        self.address.saturating_add(self.len())
    }
}

/// A decoded cache image block: non-overlapping entries keyed by file address.
#[derive(Clone, Debug)]
pub struct CacheImage {
    bytes: Vec<u8>,
    entries: BTreeMap<u64, ImageEntry>,
    /// One past the highest address any entry covers.
    end: u64,
}

/// Header fields the entries need.
struct Header {
    count: u32,
}

fn decode_header(c: &mut Cursor<'_>, sizes: Sizes, total: usize) -> Result<Header> {
    c.signature(&SIGNATURE)?;
    let version = c.u8()?;
    if version != 0 {
        return Err(c.unsupported(format!("{STRUCTURE} version {version}")));
    }
    let flags = c.u8()?;
    if flags & HAVE_RESIZE_STATUS != 0 {
        return Err(c.unsupported("cache image with adaptive resize status"));
    }
    let at = c.offset();
    let data_len = c.length(sizes.length)?;
    if data_len != total as u64 {
        return Err(Error::malformed(
            STRUCTURE,
            at,
            format!("image data length {data_len} differs from the block length {total}"),
        ));
    }
    let at = c.offset();
    let count = c.u32()?;
    if count == 0 {
        return Err(Error::malformed(STRUCTURE, at, "no entries"));
    }
    Ok(Header { count })
}

/// Fixed part of one entry: 12 bytes of small fields, an address and a length.
fn entry_header_len(sizes: Sizes) -> usize {
    12 + usize::from(sizes.offset) + usize::from(sizes.length)
}

fn decode_entry(c: &mut Cursor<'_>, sizes: Sizes) -> Result<ImageEntry> {
    let at = c.offset();
    let bad = |reason: String| Error::malformed(STRUCTURE, at, reason);
    let type_id = c.u8()?;
    if type_id >= NUM_TYPES {
        return Err(bad(format!("entry type {type_id} out of range")));
    }
    let flags = c.u8()?;
    let ring = c.u8()?;
    if ring >= NUM_RINGS {
        return Err(bad(format!("entry ring {ring} out of range")));
    }
    let age = c.u8()?;
    if age > MAX_AGE {
        return Err(bad(format!("entry age {age} out of range")));
    }
    let children = c.u16()?;
    if (flags & FD_PARENT != 0) != (children > 0) {
        return Err(bad(format!(
            "flush-dependency child count {children} disagrees with flags {flags:#04x}"
        )));
    }
    let dirty_children = c.u16()?;
    if dirty_children > children {
        return Err(bad(format!(
            "dirty child count {dirty_children} exceeds child count {children}"
        )));
    }
    let parents = c.u16()?;
    if (flags & FD_CHILD != 0) != (parents > 0) {
        return Err(bad(format!(
            "flush-dependency parent count {parents} disagrees with flags {flags:#04x}"
        )));
    }
    let _lru_rank = c.u32()?;
    let address = c
        .addr(sizes.offset)?
        .ok_or_else(|| bad("undefined entry address".into()))?;
    let len = c.length(sizes.length)?;
    if len == 0 {
        return Err(bad("entry of length 0".into()));
    }
    cursor::add(address, len, STRUCTURE, at, "end of entry")?;
    for _ in 0..parents {
        if c.addr(sizes.offset)?.is_none() {
            return Err(bad("undefined flush-dependency parent address".into()));
        }
    }
    let n = usize::try_from(len).map_err(|_| Error::Overflow {
        structure: STRUCTURE,
        offset: at,
        what: "entry length",
    })?;
    let start = c.pos();
    c.skip(n)?;
    Ok(ImageEntry {
        address,
        type_id,
        flags,
        ring,
        data: start..c.pos(),
    })
}

impl CacheImage {
    /// Decode the image block `bytes`, read from file address `at`.
    pub fn decode(bytes: Vec<u8>, at: u64, sizes: Sizes) -> Result<Self> {
        let total = bytes.len();
        let body_len = total.checked_sub(4).ok_or(Error::Truncated {
            structure: STRUCTURE,
            offset: at,
            needed: 4,
            available: total as u64,
        })?;
        let (body, tail) = bytes.split_at(body_len);
        let stored = u32::from_le_bytes(
            tail.try_into()
                .map_err(|_| Error::malformed(STRUCTURE, at, "checksum field is not 4 bytes"))?,
        );
        let mut c = Cursor::new(body, at, STRUCTURE);
        let header = decode_header(&mut c, sizes, total)?;
        let computed = metadata_checksum(body);
        if stored != computed {
            return Err(Error::Checksum {
                structure: STRUCTURE,
                offset: at,
                stored,
                computed,
            });
        }
        // Every entry takes at least its fixed part and one byte: a count that
        // cannot fit is refused before the loop.
        let fit = c.remaining() / (entry_header_len(sizes) + 1);
        if header.count as usize > fit {
            return Err(Error::Limit {
                structure: STRUCTURE,
                offset: at,
                what: "entry count",
                value: u64::from(header.count),
                limit: fit as u64,
            });
        }
        let mut entries: BTreeMap<u64, ImageEntry> = BTreeMap::new();
        let mut end = 0u64;
        for _ in 0..header.count {
            let e_at = c.offset();
            let e = decode_entry(&mut c, sizes)?;
            if overlapping(&entries, e.address, e.end()).is_some() {
                return Err(Error::malformed(
                    STRUCTURE,
                    e_at,
                    format!("entry at address {:#x} overlaps another entry", e.address),
                ));
            }
            end = end.max(e.end());
            entries.insert(e.address, e);
        }
        if !c.is_empty() {
            return Err(c.malformed(format!("{} bytes after the last entry", c.remaining())));
        }
        Ok(CacheImage {
            bytes,
            entries,
            end,
        })
    }

    /// Read and decode the image the message `m` points at, from `src`.
    /// `None` when the message names no image.
    pub fn read(src: &dyn Source, sizes: Sizes, m: &CacheImageMessage) -> Result<Option<Self>> {
        let Some(addr) = m.address else {
            return Ok(None);
        };
        if m.length == 0 {
            return Ok(None);
        }
        cursor::bounded(
            m.length,
            limits::MAX_CACHE_IMAGE,
            STRUCTURE,
            addr,
            "image length",
        )?;
        let bytes = src.read(STRUCTURE, addr, m.length)?.into_owned();
        Self::decode(bytes, addr, sizes).map(Some)
    }

    /// The entries, in address order.
    pub fn entries(&self) -> impl Iterator<Item = &ImageEntry> {
        self.entries.values()
    }

    /// The bytes of `e`.
    pub fn entry_bytes(&self, e: &ImageEntry) -> &[u8] {
        self.bytes.get(e.data.clone()).unwrap_or(&[])
    }

    /// True when some entry covers a byte of `[offset, end)`.
    pub fn overlaps(&self, offset: u64, end: u64) -> bool {
        overlapping(&self.entries, offset, end).is_some()
    }

    /// Copy every entry byte that falls in `[offset, offset + buf.len())` into
    /// `buf`; return how many bytes at or past `from` were covered (to tell
    /// whether a range past the end of the file is entirely inside entries).
    fn apply(&self, offset: u64, buf: &mut [u8], from: u64) -> u64 {
        let end = offset.saturating_add(buf.len() as u64);
        let mut covered = 0u64;
        for e in self.entries.range(..end).rev() {
            let e = e.1;
            if e.end() <= offset {
                break;
            }
            let lo = e.address.max(offset);
            let hi = e.end().min(end);
            let src = self.entry_bytes(e);
            let (s0, s1) = ((lo - e.address) as usize, (hi - e.address) as usize);
            let (d0, d1) = ((lo - offset) as usize, (hi - offset) as usize);
            if let (Some(s), Some(d)) = (src.get(s0..s1), buf.get_mut(d0..d1)) {
                d.copy_from_slice(s);
            }
            covered += hi.saturating_sub(lo.max(from));
        }
        covered
    }
}

/// The entry (if any) that covers a byte of `[offset, end)`. Entries do not
/// overlap, so the last one starting before `end` is the only candidate.
fn overlapping(entries: &BTreeMap<u64, ImageEntry>, offset: u64, end: u64) -> Option<&ImageEntry> {
    let (_, e) = entries.range(..end).next_back()?;
    (e.end() > offset).then_some(e)
}

/// A byte source that reads cache image entries in place of the file's bytes.
pub struct OverlaySource {
    inner: Arc<dyn Source>,
    image: CacheImage,
}

impl OverlaySource {
    /// Wrap `inner` so that reads consult the cache image's entries before the file.
    pub fn new(inner: Arc<dyn Source>, image: CacheImage) -> Self {
        OverlaySource { inner, image }
    }

    /// The cache image whose entries this source serves.
    pub fn image(&self) -> &CacheImage {
        &self.image
    }
}

fn io_eof() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "read past end of file and of the metadata cache image",
    )
}

impl Source for OverlaySource {
    fn len(&self) -> u64 {
        self.inner.len().max(self.image.end)
    }

    fn check(&self) -> Result<()> {
        self.inner.check()
    }

    fn identity(&self) -> Option<crate::source::Identity> {
        self.inner.identity()
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let end = offset.checked_add(buf.len() as u64).ok_or_else(io_eof)?;
        let file_len = self.inner.len();
        // The part inside the file comes from the file, the rest must be covered
        // by entries; entries then overwrite what they cover.
        let in_file = usize::try_from(file_len.saturating_sub(offset))
            .unwrap_or(usize::MAX)
            .min(buf.len());
        if in_file > 0 {
            let head = buf.get_mut(..in_file).ok_or_else(io_eof)?;
            self.inner.read_exact_at(offset, head)?;
        }
        let from = file_len.max(offset);
        let covered = self.image.apply(offset, buf, from);
        if covered < end.saturating_sub(from) {
            return Err(io_eof());
        }
        Ok(())
    }

    fn read_into(&self, structure: &'static str, offset: u64, out: &mut [u8]) -> Result<()> {
        let end = cursor::add(offset, out.len() as u64, structure, offset, "end of read")?;
        if !self.image.overlaps(offset, end) {
            return self.inner.read_into(structure, offset, out);
        }
        crate::source::read_into_default(self, structure, offset, out)
    }

    fn wants_prefetch(&self) -> bool {
        self.inner.wants_prefetch()
    }

    fn prefetch_window(&self) -> u64 {
        self.inner.prefetch_window()
    }

    fn pipeline_step(&self) -> Option<u64> {
        self.inner.pipeline_step()
    }

    fn pipeline_depth(&self) -> usize {
        self.inner.pipeline_depth()
    }

    fn prefetch(&self, ranges: &[crate::fetch::ByteRange]) -> Result<()> {
        self.inner.prefetch(ranges)
    }

    fn release(&self, ranges: &[crate::fetch::ByteRange]) {
        self.inner.release(ranges)
    }

    fn read(&self, structure: &'static str, offset: u64, len: u64) -> Result<Cow<'_, [u8]>> {
        let end = cursor::add(offset, len, structure, offset, "end of read")?;
        if !self.image.overlaps(offset, end) {
            return self.inner.read(structure, offset, len);
        }
        if end > self.len() {
            return Err(Error::Truncated {
                structure,
                offset,
                needed: len,
                available: self.len().saturating_sub(offset),
            });
        }
        let n = cursor::bounded(len, limits::MAX_READ, structure, offset, "read length")?;
        let mut buf = vec![0u8; n];
        self.read_exact_at(offset, &mut buf)
            .map_err(|e| Error::io(format!("{structure} at offset {offset:#x}"), e))?;
        Ok(Cow::Owned(buf))
    }
}

#[cfg(test)]
#[path = "cache_image_tests.rs"]
mod tests;
