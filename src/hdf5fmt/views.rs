//! Owned zero-copy byte views (`docs/neighbours.md` row I1): a [`ByteView`]
//! holds an `Arc` of the file's byte source and a range of it, so it points
//! straight into the mapping (or the in-memory buffer, the WASM path) and
//! stays valid after the [`crate::File`], [`crate::Dataset`] and
//! [`crate::ChunkReader`] it came from are dropped. Sources that do not hold
//! their bytes in memory (positional reads, remote objects) give a view over
//! an owned copy instead, with the same API.
//!
//! A mapped file truncated in place under a view reads as zero pages (see
//! `mapguard`); [`ByteView::check`] then reports [`Error::SourceChanged`], so
//! a caller that must not act on such bytes checks after using them.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::messages::layout::Layout;
use crate::raw_chunks::{ChunkReader, RawChunk};
use crate::source::Source;

/// Bytes of a file that outlive the handles they were read through: borrowed
/// from the source's memory when it has some (no copy), owned otherwise.
/// Cheap to clone (an `Arc` and a range).
#[derive(Clone)]
pub struct ByteView {
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    /// `len` bytes at `start` of the source's memory.
    Shared {
        src: Arc<dyn Source>,
        start: usize,
        len: usize,
    },
    /// A copy (the source does not hold its bytes in memory).
    Owned(Arc<[u8]>),
}

impl ByteView {
    /// `len` bytes at `offset` of `src`, bounds-checked like
    /// [`Source::read`] (`structure` names what is read, for the error).
    pub fn new(
        src: Arc<dyn Source>,
        structure: &'static str,
        offset: u64,
        len: u64,
    ) -> Result<Self> {
        let end = crate::source::in_bounds(structure, offset, len, src.len())?;
        if let Some(all) = src.as_slice() {
            let range = usize::try_from(offset)
                .ok()
                .zip(usize::try_from(end).ok())
                .filter(|&(s, e)| e <= all.len() && s <= e);
            let Some((start, end)) = range else {
                return Err(Error::Overflow {
                    structure,
                    offset,
                    what: "view range",
                });
            };
            src.check()?;
            return Ok(ByteView {
                repr: Repr::Shared {
                    src,
                    start,
                    len: end - start,
                },
            });
        }
        let bytes = src.read(structure, offset, len)?.into_owned();
        Ok(ByteView::from_vec(bytes))
    }

    /// A view over bytes the caller owns.
    pub fn from_vec(bytes: Vec<u8>) -> Self {
        ByteView {
            repr: Repr::Owned(bytes.into()),
        }
    }

    /// True when the bytes lie in the source's memory (a map or an
    /// in-memory file): no copy was made.
    pub fn is_shared(&self) -> bool {
        matches!(self.repr, Repr::Shared { .. })
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.repr {
            Repr::Shared { src, start, len } => src
                .as_slice()
                .and_then(|all| all.get(*start..start.saturating_add(*len)))
                .unwrap_or(&[]),
            Repr::Owned(b) => b,
        }
    }

    /// The part `start..end` of this view, sharing its memory.
    pub fn slice(&self, start: usize, end: usize) -> Result<ByteView> {
        if start > end || end > self.len() {
            return Err(Error::InvalidArgument(format!(
                "view range {start}..{end} outside {} bytes",
                self.len()
            )));
        }
        Ok(match &self.repr {
            Repr::Shared { src, start: s, .. } => ByteView {
                repr: Repr::Shared {
                    src: Arc::clone(src),
                    start: s + start,
                    len: end - start,
                },
            },
            Repr::Owned(b) => ByteView::from_vec(b[start..end].to_vec()),
        })
    }

    /// `Err(Error::SourceChanged)` when the mapped file was truncated since
    /// the view was made (its bytes may then be zero pages).
    pub fn check(&self) -> Result<()> {
        match &self.repr {
            Repr::Shared { src, .. } => src.check(),
            Repr::Owned(_) => Ok(()),
        }
    }
}

impl Deref for ByteView {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for ByteView {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PartialEq for ByteView {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl fmt::Debug for ByteView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByteView")
            .field("len", &self.len())
            .field("shared", &self.is_shared())
            .finish()
    }
}

/// A chunk's stored bytes as a [`ByteView`]: it outlives the reader.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkView {
    /// Position in the chunk grid (chunk units).
    pub coords: Vec<u64>,
    /// Bit `i` set: pipeline stage `i` was skipped for this chunk.
    pub filter_mask: u32,
    /// The stored (still filtered) bytes.
    pub bytes: ByteView,
    /// True when a Fletcher-32 checksum was present and checked.
    pub verified: bool,
}

impl ChunkView {
    /// The chunk as a [`RawChunk`] borrowing this view (for
    /// [`ChunkReader::decode`]).
    pub fn as_raw(&self) -> RawChunk<'_> {
        RawChunk {
            coords: self.coords.clone(),
            filter_mask: self.filter_mask,
            bytes: std::borrow::Cow::Borrowed(self.bytes.as_bytes()),
            verified: self.verified,
        }
    }
}

impl ChunkReader {
    /// The stored bytes of the chunk at `coords` as an owned view (`None`
    /// when unwritten); `verify` as for [`ChunkReader::raw_chunk`].
    pub fn chunk_view(&self, coords: &[u64], verify: bool) -> Result<Option<ChunkView>> {
        self.check(coords)?;
        let Some(rec) = self.map.get(coords) else {
            return Ok(None);
        };
        crate::cursor::bounded(
            rec.size,
            crate::limits::MAX_READ,
            "chunk",
            rec.address,
            "stored chunk size",
        )?;
        let bytes = ByteView::new(self.ds.file().source_arc(), "chunk", rec.address, rec.size)?;
        let mut view = ChunkView {
            coords: coords.to_vec(),
            filter_mask: rec.filter_mask,
            bytes,
            verified: false,
        };
        if verify {
            view.verified = self
                .verify(&view.as_raw())
                .map_err(|e| self.wrap(coords, e))?;
        }
        Ok(Some(view))
    }

    /// [`ChunkReader::chunk_view`] for every coordinate tuple, in order,
    /// duplicates kept.
    pub fn chunk_views<C: AsRef<[u64]>>(
        &self,
        coords: &[C],
        verify: bool,
    ) -> Result<Vec<Option<ChunkView>>> {
        coords
            .iter()
            .map(|c| self.chunk_view(c.as_ref(), verify))
            .collect()
    }
}

impl Dataset {
    /// The stored bytes of a contiguous dataset as an owned view (shared
    /// with the mapping when the file is mapped or in memory); `None` for
    /// other layouts, unallocated storage and external raw-data files.
    pub fn contiguous_view(&self) -> Result<Option<ByteView>> {
        match self.layout() {
            Layout::Contiguous {
                address: Some(a), ..
            } if self.external_files().is_none() => {
                let size = self.storage_size()?;
                ByteView::new(self.file().source_arc(), "contiguous data", *a, size).map(Some)
            }
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::file::File;
    use crate::write::{DatasetSpec, FileWriter};
    use crate::Filter;

    #[test]
    fn views_outlive_the_reader_and_point_into_the_buffer() {
        let mut w = FileWriter::in_memory();
        let data: Vec<u16> = (0..64).collect();
        let spec =
            DatasetSpec::of::<u16>(&[8, 8]).chunked(&[4, 4], vec![Filter::deflate(3).unwrap()]);
        w.write_dataset(w.root(), "c", spec, &data).unwrap();
        w.write_dataset(w.root(), "d", DatasetSpec::of::<u16>(&[64]), &data)
            .unwrap();
        let file = File::from_bytes(w.finish().unwrap()).unwrap();
        let all = file.source().as_slice().unwrap().as_ptr_range();
        let (views, contiguous) = {
            let root = file.root().unwrap();
            let ds = root.dataset("c").unwrap();
            let r = ds.chunk_reader().unwrap();
            let v = r.chunk_views(&[[1u64, 1], [0, 0], [1, 1]], true).unwrap();
            let c = root
                .dataset("d")
                .unwrap()
                .contiguous_view()
                .unwrap()
                .unwrap();
            (v, c)
        };
        for v in views.iter().flatten() {
            assert!(v.bytes.is_shared());
            let p = v.bytes.as_ptr_range();
            assert!(all.start <= p.start && p.end <= all.end);
        }
        assert_eq!(views[0], views[2]);
        let want: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(&contiguous[..], &want[..]);
        assert_eq!(&contiguous.slice(2, 6).unwrap()[..], &want[2..6]);
        assert!(contiguous.slice(6, 2).is_err());
    }
}
