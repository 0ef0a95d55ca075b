//! Raw chunk access (HDF5 File Format Specification IV.A.2.i layout message
//! and III.A.3/4 chunk indexes, every index type; IV.A.2.l filter pipeline,
//! filter 3 Fletcher-32): the list of stored chunks, their still-filtered
//! bytes borrowed from an in-memory or mapped file without a copy, looked up
//! one at a time or in batches (order and duplicates kept), optionally
//! checked against their Fletcher-32 checksum, and decoded on demand
//! (`docs/neighbours.md`, rows I1, I2, I4).

#![deny(missing_docs)]

use std::borrow::Cow;
use std::sync::Arc;

use crate::chunk_index::read::ChunkMap;
use crate::chunk_index::{self, ChunkRecord};
use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::messages::layout::Layout;
use purehdf_filters::{self as filters, ids, ChunkContext};

/// One stored chunk of a chunked dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkInfo {
    /// Position in the chunk grid (chunk units).
    pub coords: Vec<u64>,
    /// Element coordinates of the chunk's first element.
    pub offset: Vec<u64>,
    /// File address of the stored bytes.
    pub address: u64,
    /// Stored (filtered) size in bytes.
    pub size: u64,
    /// Bit `i` set: pipeline stage `i` was skipped for this chunk.
    pub filter_mask: u32,
}

/// A chunk's stored bytes, borrowed from the file when it is in memory or
/// mapped (the slice then points into the file's bytes), copied otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawChunk<'a> {
    /// Position in the chunk grid (chunk units).
    pub coords: Vec<u64>,
    /// Bit `i` set: pipeline stage `i` was skipped for this chunk.
    pub filter_mask: u32,
    /// The stored (still filtered) bytes.
    pub bytes: Cow<'a, [u8]>,
    /// True when a Fletcher-32 checksum was present and checked.
    pub verified: bool,
}

impl RawChunk<'_> {
    /// True when the bytes borrow the file's memory (no copy was made).
    pub fn is_borrowed(&self) -> bool {
        matches!(self.bytes, Cow::Borrowed(_))
    }
}

/// Looks up the stored chunks of one dataset: the chunk index is walked once
/// when the reader is made, then every lookup is a hash probe.
#[derive(Clone, Debug)]
pub struct ChunkReader {
    pub(crate) ds: Dataset,
    pub(crate) map: Arc<ChunkMap>,
}

fn info(rec: &ChunkRecord, chunk_dims: &[u64]) -> ChunkInfo {
    ChunkInfo {
        coords: rec
            .offset
            .iter()
            .zip(chunk_dims)
            .map(|(&o, &c)| o.checked_div(c).unwrap_or(0))
            .collect(),
        offset: rec.offset.clone(),
        address: rec.address,
        size: rec.size,
        filter_mask: rec.filter_mask,
    }
}

impl Dataset {
    /// Every stored chunk, in index order (unwritten chunks are absent).
    /// Empty for datasets that are not chunked.
    pub fn chunks(&self) -> Result<Vec<ChunkInfo>> {
        let (Some(params), Some(dims)) = (self.chunk_params(), self.chunk_dims()) else {
            return Ok(Vec::new());
        };
        let recs = chunk_index::list_chunks(self.file().source(), self.file().sizes(), &params)?;
        Ok(recs.iter().map(|r| info(r, dims)).collect())
    }

    /// A [`ChunkReader`] for this chunked dataset (walks its chunk index once).
    ///
    /// ```
    /// # use purehdf::{File, FileWriter, DatasetSpec, Filter};
    /// # let mut w = FileWriter::in_memory();
    /// # let spec = DatasetSpec::of::<u16>(&[4, 4]).chunked(&[2, 4], vec![Filter::deflate(4)?, Filter::fletcher32()]);
    /// # w.write_dataset(w.root(), "x", spec, &[7u16; 16]).unwrap();
    /// # let file = File::from_bytes(w.finish().unwrap()).unwrap();
    /// let ds = file.root()?.dataset("x")?;
    /// let reader = ds.chunk_reader()?;
    /// let batch = reader.raw_chunks(&[&[1, 0][..], &[0, 0], &[1, 0]], true)?;
    /// let chunk = batch[0].as_ref().unwrap();
    /// assert!(chunk.verified && chunk.is_borrowed());
    /// assert_eq!(reader.decode(chunk)?.len(), 2 * 4 * 2);
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn chunk_reader(&self) -> Result<ChunkReader> {
        let params = self.chunk_params().ok_or_else(|| {
            Error::InvalidArgument(format!("{} is not a chunked dataset", self.path()))
        })?;
        let unfiltered_edges =
            matches!(self.layout(), Layout::Chunked { flags, .. } if flags & 1 != 0);
        let map = ChunkMap::build(self.file().source(), self.file().sizes(), &params)?
            .with_unfiltered_edges(unfiltered_edges);
        Ok(ChunkReader {
            ds: self.clone(),
            map: Arc::new(map),
        })
    }

    /// The stored bytes of a contiguous dataset held in this file (borrowed
    /// when the file is in memory or mapped); `None` for other layouts, for
    /// unallocated storage and for external raw-data files.
    pub fn contiguous_bytes(&self) -> Result<Option<Cow<'_, [u8]>>> {
        match self.layout() {
            Layout::Contiguous {
                address: Some(a), ..
            } if self.external_files().is_none() => {
                let size = self.storage_size()?;
                Ok(Some(self.file().source().read(
                    "contiguous data",
                    *a,
                    size,
                )?))
            }
            _ => Ok(None),
        }
    }
}

impl ChunkReader {
    /// The dataset read from.
    pub fn dataset(&self) -> &Dataset {
        &self.ds
    }

    /// Chunks per dimension covering the current extent.
    pub fn grid_shape(&self) -> &[u64] {
        &self.map.grid().per_dim
    }

    pub(crate) fn check(&self, coords: &[u64]) -> Result<()> {
        let grid = self.map.grid();
        if coords.len() != grid.per_dim.len()
            || coords.iter().zip(&grid.per_dim).any(|(c, n)| c >= n)
        {
            return Err(Error::InvalidArgument(format!(
                "{}: chunk {coords:?} outside the chunk grid {:?}",
                self.ds.path(),
                grid.per_dim
            )));
        }
        Ok(())
    }

    /// Where the chunk at `coords` is stored; `None` when it was never
    /// written (it reads as the fill value). Coordinates outside the grid are
    /// an error.
    pub fn info(&self, coords: &[u64]) -> Result<Option<ChunkInfo>> {
        self.check(coords)?;
        Ok(self
            .map
            .get(coords)
            .map(|r| info(&r, &self.map.grid().chunk_dims)))
    }

    /// The stored bytes of the chunk at `coords` (`None` when unwritten).
    /// With `verify`, a chunk whose pipeline has a Fletcher-32 stage that was
    /// not skipped is checked against it; a mismatch is an [`Error::Chunk`]
    /// around [`Error::Checksum`]. Without, the bytes come back unchecked.
    pub fn raw_chunk(&self, coords: &[u64], verify: bool) -> Result<Option<RawChunk<'_>>> {
        self.check(coords)?;
        let Some(rec) = self.map.get(coords) else {
            return Ok(None);
        };
        let bytes = chunk_index::stored_bytes(self.ds.file().source(), &rec)?;
        let mut chunk = RawChunk {
            coords: coords.to_vec(),
            filter_mask: rec.filter_mask,
            bytes,
            verified: false,
        };
        if verify {
            chunk.verified = self.verify(&chunk).map_err(|e| self.wrap(coords, e))?;
        }
        Ok(Some(chunk))
    }

    /// [`ChunkReader::raw_chunk`] for every coordinate tuple in `coords`, in
    /// order, duplicates kept.
    pub fn raw_chunks<C: AsRef<[u64]>>(
        &self,
        coords: &[C],
        verify: bool,
    ) -> Result<Vec<Option<RawChunk<'_>>>> {
        coords
            .iter()
            .map(|c| self.raw_chunk(c.as_ref(), verify))
            .collect()
    }

    /// The stored bytes of `coords` (in order, duplicates kept; unwritten
    /// chunks are empty) gathered into one buffer with `coords.len() + 1`
    /// offsets: chunk `i` is `buf[off[i]..off[i + 1]]`.
    pub fn gather<C: AsRef<[u64]>>(
        &self,
        coords: &[C],
        verify: bool,
    ) -> Result<(Vec<u8>, Vec<u64>)> {
        let mut buf = Vec::new();
        let mut off = Vec::with_capacity(coords.len() + 1);
        off.push(0u64);
        for c in coords {
            if let Some(ch) = self.raw_chunk(c.as_ref(), verify)? {
                let end = buf
                    .len()
                    .checked_add(ch.bytes.len())
                    .filter(|&e| e as u64 <= crate::limits::MAX_DECODED);
                if end.is_none() {
                    return Err(Error::Limit {
                        structure: "chunk batch",
                        offset: 0,
                        what: "gathered bytes",
                        value: (buf.len() + ch.bytes.len()) as u64,
                        limit: crate::limits::MAX_DECODED,
                    });
                }
                buf.extend_from_slice(&ch.bytes);
            }
            off.push(buf.len() as u64);
        }
        Ok((buf, off))
    }

    /// Decode a chunk through the dataset's filter pipeline: the full chunk's
    /// bytes in file byte order (edge chunks include their padding).
    pub fn decode(&self, chunk: &RawChunk<'_>) -> Result<Vec<u8>> {
        let grid = self.map.grid();
        let ctx = self.context()?;
        let partial_edge = chunk
            .coords
            .iter()
            .zip(&grid.chunk_dims)
            .zip(&grid.dims)
            .any(|((&c, &cd), &d)| c.saturating_add(1).saturating_mul(cd) > d);
        let unfiltered = partial_edge
            && matches!(self.ds.layout(), Layout::Chunked { flags, .. } if flags & 1 != 0);
        if unfiltered {
            return Ok(chunk.bytes.to_vec());
        }
        filters::decode_pipeline(self.ds.filters(), chunk.filter_mask, &ctx, &chunk.bytes)
            .map_err(|e| self.wrap(&chunk.coords, e.into()))
    }

    pub(crate) fn context(&self) -> Result<ChunkContext> {
        let grid = self.map.grid();
        let elem = usize::try_from(grid.element_size)
            .map_err(|_| Error::InvalidArgument("element size".into()))?;
        let bytes = usize::try_from(grid.chunk_bytes)
            .map_err(|_| Error::InvalidArgument("chunk size".into()))?;
        Ok(ChunkContext::new(elem, bytes))
    }

    pub(crate) fn wrap(&self, coords: &[u64], e: Error) -> Error {
        Error::Chunk {
            dataset: self.ds.path().to_string(),
            coords: coords.to_vec(),
            source: Box::new(e),
        }
    }

    /// Check the Fletcher-32 stage, decoding the stages applied after it.
    /// Ok(false) when there is none to check.
    pub(crate) fn verify(&self, chunk: &RawChunk<'_>) -> Result<bool> {
        let pipeline = self.ds.filters();
        let active = |i: usize| i >= 32 || chunk.filter_mask & (1 << i) == 0;
        let Some(pos) = pipeline
            .iter()
            .enumerate()
            .position(|(i, f)| f.id == ids::FLETCHER32 && active(i))
        else {
            return Ok(false);
        };
        let ctx = self.context()?;
        let mut buf: Cow<'_, [u8]> = Cow::Borrowed(&chunk.bytes);
        for (i, spec) in pipeline.iter().enumerate().skip(pos + 1).rev() {
            if active(i) {
                buf = Cow::Owned(filters::decode(spec, &ctx, &buf)?);
            }
        }
        filters::fletcher32::decode(&buf, &[], &ctx)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Datatype;
    use crate::file::File;
    use crate::write::{DatasetSpec, FileWriter};

    fn file(filters: Vec<purehdf_filters::FilterSpec>) -> (File, Vec<u8>) {
        let mut w = FileWriter::in_memory();
        let data: Vec<u8> = (0..60u32)
            .flat_map(|i| ((i * 37) as u16).to_le_bytes())
            .collect();
        w.create_dataset(
            w.root(),
            "x",
            DatasetSpec::new(Datatype::int(2, false), &[6, 10]).chunked_stored(&[4, 4], filters),
            data.clone(),
        )
        .unwrap();
        (File::from_bytes(w.finish().unwrap()).unwrap(), data)
    }

    #[test]
    fn batches_keep_order_borrow_and_decode() {
        let (f, data) = file(vec![crate::Filter::deflate(5).unwrap().into()]);
        let ds = f.root().unwrap().dataset("x").unwrap();
        let list = ds.chunks().unwrap();
        assert_eq!(list.len(), 6);
        let r = ds.chunk_reader().unwrap();
        assert_eq!(r.grid_shape(), &[2, 3]);
        let want = [[1u64, 2], [0, 0], [1, 2]];
        let b = r.raw_chunks(&want, false).unwrap();
        assert_eq!(b.len(), 3);
        for (c, w) in b.iter().zip(&want) {
            let c = c.as_ref().unwrap();
            assert_eq!(c.coords, w.to_vec());
            assert!(c.is_borrowed() && !c.verified);
        }
        assert_eq!(b[0], b[2]);
        // chunk (0, 0) decoded equals rows 0..4, columns 0..4 of the data
        let dec = r.decode(b[1].as_ref().unwrap()).unwrap();
        let mut expect = Vec::new();
        for row in 0..4 {
            expect.extend_from_slice(&data[row * 20..row * 20 + 8]);
        }
        assert_eq!(dec, expect);
        let (buf, off) = r.gather(&want, false).unwrap();
        assert_eq!(off.len(), 4);
        assert_eq!(
            &buf[off[1] as usize..off[2] as usize],
            &b[1].as_ref().unwrap().bytes[..]
        );
        assert!(r.raw_chunk(&[2, 0], false).is_err());
        assert!(r.raw_chunk(&[0], false).is_err());
    }

    #[test]
    fn fletcher32_detects_a_flipped_byte() {
        let (f, _) = file(vec![crate::Filter::fletcher32().into()]);
        let ds = f.root().unwrap().dataset("x").unwrap();
        let r = ds.chunk_reader().unwrap();
        assert!(r.raw_chunk(&[0, 1], true).unwrap().unwrap().verified);
        let at = r.info(&[0, 1]).unwrap().unwrap().address as usize;
        let mut bytes = f.source().as_slice().unwrap().to_vec();
        bytes[at + 3] ^= 0x40;
        let bad = File::from_bytes(bytes).unwrap();
        let r = bad
            .root()
            .unwrap()
            .dataset("x")
            .unwrap()
            .chunk_reader()
            .unwrap();
        let e = r.raw_chunk(&[0, 1], true).unwrap_err();
        match e {
            Error::Chunk { coords, source, .. } => {
                assert_eq!(coords, vec![0, 1]);
                assert!(matches!(*source, Error::Checksum { .. }), "{source}");
            }
            other => panic!("{other}"),
        }
        // unverified: the damaged bytes come back
        assert!(r.raw_chunk(&[0, 1], false).unwrap().is_some());
    }
}
