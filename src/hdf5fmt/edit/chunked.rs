//! Writes into and resizes of chunked datasets: the touched chunks are read,
//! merged and re-encoded through the dataset's own filter pipeline (the
//! writer's encoders), appended (or put into space freed this session), and
//! a whole new chunk index is written beside the old one (v1 B-tree for
//! layout version 3; single chunk, fixed array, extensible array or v2
//! B-tree for version 4, chosen by the writer's rules from the maximum
//! dimensions); only then is the layout message (and, for a resize, the
//! dataspace message) repointed, so a killed process leaves the old or the
//! new dataset. Shrinking drops the chunks wholly outside the new extent and
//! resets the cut-off part of the edge chunks to the fill value, as libhdf5
//! does. Implicit indexes, layouts below version 3 and datasets whose
//! partial edge chunks are stored unfiltered are refused with
//! [`Error::Unsupported`].

use std::collections::BTreeMap;

use super::commit::Txn;
use super::header::messages_of;
use super::Editor;
use crate::chunk_index::ChunkIndexKind;
use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::messages::layout::Layout;
use crate::messages::types;
use crate::raw_chunks::ChunkReader;
use crate::write::chunks::{self as wchunks, ChunkedInput, RawChunk, RawChunks};
use crate::write::sink::Sink;
use purehdf_filters::ChunkContext;

fn unsupported(ds: &Dataset, what: impl Into<String>) -> Error {
    Error::Unsupported {
        structure: "dataset",
        offset: ds.header().address,
        what: what.into(),
    }
}

/// Copy the box `shape` from `src` (C order, `sdims`, at `soff`) into `dst`
/// (C order, `ddims`, at `doff`), `esize`-byte elements.
#[allow(clippy::too_many_arguments)]
pub(super) fn copy_box(
    src: &[u8],
    sdims: &[u64],
    soff: &[u64],
    dst: &mut [u8],
    ddims: &[u64],
    doff: &[u64],
    shape: &[u64],
    esize: usize,
) {
    let rank = shape.len();
    if rank == 0 || shape.contains(&0) {
        return;
    }
    let row = shape[rank - 1] as usize * esize;
    let rows: u64 = shape[..rank - 1].iter().product();
    let mut idx = vec![0u64; rank];
    let lin = |dims: &[u64], off: &[u64], idx: &[u64]| -> usize {
        let mut o = 0u64;
        for d in 0..rank {
            o = o * dims[d] + off[d] + idx[d];
        }
        o as usize * esize
    };
    for _ in 0..rows {
        let s = lin(sdims, soff, &idx);
        let d = lin(ddims, doff, &idx);
        dst[d..d + row].copy_from_slice(&src[s..s + row]);
        for k in (0..rank - 1).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// Set every element of the chunk `buf` (at grid position `scaled`) lying at
/// or past `dims` in some dimension to `fill`.
fn fill_outside(buf: &mut [u8], chunk: &[u64], scaled: &[u64], dims: &[u64], fill: &[u8]) {
    let esize = fill.len();
    let n = buf.len() / esize.max(1);
    let rank = chunk.len();
    let mut pos = vec![0u64; rank];
    for k in 0..n {
        let mut rem = k as u64;
        for i in (0..rank).rev() {
            pos[i] = scaled[i] * chunk[i] + rem % chunk[i];
            rem /= chunk[i];
        }
        if pos.iter().zip(dims).any(|(p, d)| p >= d) {
            buf[k * esize..(k + 1) * esize].copy_from_slice(fill);
        }
    }
}

/// A chunk index written this session: the layout message body pointing at
/// it, and its blocks (address, length).
pub(super) type WrittenIndex = (Vec<u8>, Vec<(u64, u64)>);

/// What a chunked edit needs to know about the dataset.
pub(super) struct ChunkGeometry {
    esize: usize,
    /// Chunk dimensions in elements.
    pub(super) chunk: Vec<u64>,
    chunk_bytes: usize,
    fill: Vec<u8>,
    stored: RawChunks,
    version: u8,
}

impl Editor {
    fn chunked_info(&self, ds: &Dataset) -> Result<ChunkGeometry> {
        let Layout::Chunked {
            version,
            chunk_dims,
            flags,
            kind,
            ..
        } = ds.layout()
        else {
            return Err(unsupported(ds, "not a chunked dataset"));
        };
        if *version < 3 {
            return Err(unsupported(
                ds,
                format!("editing a version {version} chunked layout"),
            ));
        }
        if matches!(kind, ChunkIndexKind::Implicit) {
            return Err(unsupported(ds, "editing an implicit chunk index"));
        }
        if flags & 1 != 0 && !ds.filters().is_empty() {
            return Err(unsupported(
                ds,
                "editing a dataset whose partial edge chunks are unfiltered",
            ));
        }
        let esize = usize::try_from(ds.dtype().size())
            .ok()
            .filter(|&e| e > 0)
            .ok_or_else(|| unsupported(ds, "element size"))?;
        let chunk_bytes = chunk_dims
            .iter()
            .try_fold(esize as u64, |a, &c| a.checked_mul(c))
            .filter(|&b| b < 1 << 32)
            .ok_or_else(|| unsupported(ds, "chunk of 4 GiB or more"))?
            as usize;
        let fill = match ds.fill_value().bytes() {
            Some(b) if b.len() == esize => b.to_vec(),
            _ => vec![0; esize],
        };
        let mut stored = RawChunks::new();
        for c in ds.chunks()? {
            stored.insert(
                c.coords,
                RawChunk {
                    addr: c.address,
                    size: c.size,
                    mask: c.filter_mask,
                },
            );
        }
        Ok(ChunkGeometry {
            esize,
            chunk: chunk_dims.clone(),
            chunk_bytes,
            fill,
            stored,
            version: *version,
        })
    }

    /// The decoded content of the chunk at `scaled` (the fill value when it
    /// is not stored).
    fn chunk_content(
        ds: &Dataset,
        info: &ChunkGeometry,
        reader: &mut Option<ChunkReader>,
        scaled: &[u64],
    ) -> Result<Vec<u8>> {
        if !info.stored.contains_key(scaled) {
            return Ok(info.fill.repeat(info.chunk_bytes / info.esize));
        }
        let r = match reader {
            Some(r) => r,
            None => reader.insert(ds.chunk_reader()?),
        };
        let raw = r
            .raw_chunk(scaled, false)?
            .ok_or_else(|| Error::malformed("chunk index", ds.header().address, "lost chunk"))?;
        let out = r.decode(&raw)?;
        if out.len() != info.chunk_bytes {
            return Err(Error::malformed(
                "chunk",
                ds.header().address,
                format!("decoded {} bytes, not {}", out.len(), info.chunk_bytes),
            ));
        }
        Ok(out)
    }

    /// Write `bytes` (stored element bytes, C order) into the box
    /// `start`/`count` of the chunked dataset `ds` (already checked), which
    /// takes the shape `dims` in the same commit (its own shape, or a larger
    /// one within its maximum for an append).
    pub(crate) fn write_chunked(
        &mut self,
        ds: &Dataset,
        dims: &[u64],
        start: &[u64],
        count: &[u64],
        bytes: &[u8],
    ) -> Result<()> {
        let info = self.chunked_info(ds)?;
        if count.contains(&0) {
            return Ok(());
        }
        let rank = start.len();
        let lo: Vec<u64> = (0..rank).map(|d| start[d] / info.chunk[d]).collect();
        let hi: Vec<u64> = (0..rank)
            .map(|d| (start[d] + count[d] - 1) / info.chunk[d])
            .collect();
        let mut new = BTreeMap::new();
        let mut reader = None;
        let mut s = lo.clone();
        loop {
            let mut buf = Self::chunk_content(ds, &info, &mut reader, &s)?;
            // the intersection of the slab and this chunk
            let c0: Vec<u64> = (0..rank).map(|d| s[d] * info.chunk[d]).collect();
            let a: Vec<u64> = (0..rank).map(|d| c0[d].max(start[d])).collect();
            let b: Vec<u64> = (0..rank)
                .map(|d| (c0[d] + info.chunk[d]).min(start[d] + count[d]))
                .collect();
            let shape: Vec<u64> = (0..rank).map(|d| b[d] - a[d]).collect();
            let soff: Vec<u64> = (0..rank).map(|d| a[d] - start[d]).collect();
            let doff: Vec<u64> = (0..rank).map(|d| a[d] - c0[d]).collect();
            copy_box(
                bytes,
                count,
                &soff,
                &mut buf,
                &info.chunk,
                &doff,
                &shape,
                info.esize,
            );
            new.insert(s.clone(), Some(buf));
            // next grid position in lo..=hi
            let mut d = rank;
            loop {
                if d == 0 {
                    return self.commit_chunks(ds, &info, dims, new);
                }
                d -= 1;
                if s[d] < hi[d] {
                    s[d] += 1;
                    break;
                }
                s[d] = lo[d];
            }
        }
    }

    /// Change the current shape of the chunked dataset at `path` to `shape`
    /// (within its maximum dimensions; shrinking drops the chunks outside
    /// and resets the cut-off part of edge chunks to the fill value).
    pub fn resize(&mut self, path: &str, shape: &[u64]) -> Result<()> {
        self.check_usable()?;
        let crate::Object::Dataset(ds) = self.reader.object(path)? else {
            return Err(Error::InvalidArgument(format!("{path} is not a dataset")));
        };
        let old = ds.shape().to_vec();
        if shape.len() != old.len() {
            return Err(Error::InvalidArgument(format!(
                "{path}: rank {} cannot become {}",
                old.len(),
                shape.len()
            )));
        }
        if let Some((i, m)) = ds
            .maxshape()
            .iter()
            .enumerate()
            .find(|(i, m)| m.is_some_and(|m| shape[*i] > m))
        {
            return Err(Error::InvalidArgument(format!(
                "{path}: dimension {i} cannot grow past its maximum {}",
                m.unwrap_or(0)
            )));
        }
        if !matches!(ds.layout(), Layout::Chunked { .. }) {
            return Err(Error::InvalidArgument(format!(
                "{path}: only chunked datasets can be resized"
            )));
        }
        let info = self.chunked_info(&ds)?;
        let mut new = BTreeMap::new();
        let mut reader = None;
        for s in info.stored.keys() {
            let c0: Vec<u64> = s.iter().zip(&info.chunk).map(|(a, c)| a * c).collect();
            if c0.iter().zip(shape).any(|(a, d)| a >= d) {
                new.insert(s.clone(), None);
                continue;
            }
            // cut by the new extent where it shrank
            let cut =
                (0..shape.len()).any(|d| shape[d] < old[d] && c0[d] + info.chunk[d] > shape[d]);
            if cut {
                let mut buf = Self::chunk_content(&ds, &info, &mut reader, s)?;
                fill_outside(&mut buf, &info.chunk, s, shape, &info.fill);
                new.insert(s.clone(), Some(buf));
            }
        }
        self.commit_chunks(&ds, &info, shape, new)
    }

    /// Encode and place the chunks of `new` (`None`: dropped), write a new
    /// index for the dataset of shape `dims`, and repoint its header.
    fn commit_chunks(
        &mut self,
        ds: &Dataset,
        info: &ChunkGeometry,
        dims: &[u64],
        new: BTreeMap<Vec<u64>, Option<Vec<u8>>>,
    ) -> Result<()> {
        let mut txn = Txn::default();
        let mut stored = info.stored.clone();
        let ctx = ChunkContext::new(info.esize, info.chunk_bytes);
        for (s, content) in new {
            if let Some(old) = stored.remove(&s) {
                txn.frees.push((old.addr, old.size));
            }
            let Some(raw) = content else { continue };
            let (enc, mask) = wchunks::run_pipeline(ds.filters(), &ctx, raw)?;
            let at = self.alloc(enc.len() as u64)?;
            stored.insert(
                s,
                RawChunk {
                    addr: at,
                    size: enc.len() as u64,
                    mask,
                },
            );
            txn.writes.push((at, enc));
        }
        let mut blocks = Vec::new();
        let layout = if info.version == 3 {
            let root = self.write_btree_v1(info, &stored, &mut txn, &mut blocks)?;
            Layout::Chunked {
                version: 3,
                chunk_dims: info.chunk.clone(),
                element_size: info.esize as u64,
                flags: 0,
                kind: ChunkIndexKind::BTreeV1,
                address: Some(root),
            }
            .encode(self.reader.sizes())?
        } else {
            self.write_v4_index(ds, info, dims, &stored, &mut txn, &mut blocks)?
        };
        let h = ds.header().clone();
        let addr = h.address;
        let mut msgs = messages_of(&h);
        // the index this session wrote for the dataset, if still current
        if let Some((body, old)) = self.indexes.get(&addr) {
            // (a version 1 header pads the stored body to 8 bytes)
            let current = |m: &crate::write::object_header::Message| {
                m.kind == types::LAYOUT && m.body.get(..body.len()) == Some(&body[..])
            };
            if msgs.iter().any(current) {
                txn.frees.extend(old.iter().copied());
            }
        }
        for m in msgs.iter_mut() {
            if m.kind == types::LAYOUT {
                m.body = layout.clone();
                m.flags = 0;
            } else if m.kind == types::DATASPACE && dims != ds.shape() {
                if m.flags & 2 != 0 {
                    return Err(unsupported(ds, "resizing a shared dataspace"));
                }
                m.body = resized_space(&m.body, dims)
                    .ok_or_else(|| unsupported(ds, "resizing this dataspace message"))?;
            }
        }
        self.rewrite_header(addr, &h, msgs, None, &mut txn)?;
        self.commit(txn)?;
        self.indexes.insert(addr, (layout, blocks));
        Ok(())
    }

    /// A version 4 index (the writer's), appended; returns the layout body.
    fn write_v4_index(
        &mut self,
        ds: &Dataset,
        info: &ChunkGeometry,
        dims: &[u64],
        stored: &RawChunks,
        txn: &mut Txn,
        blocks: &mut Vec<(u64, u64)>,
    ) -> Result<Vec<u8>> {
        let max = ds.maxshape().to_vec();
        let build = |base: u64| -> Result<(Vec<u8>, Vec<u8>)> {
            let mut sink = Sink::memory_at(base);
            let input = ChunkedInput {
                dims,
                max: &max,
                chunk: &info.chunk,
                element_size: info.esize,
                filters: ds.filters(),
                fill: Some(&info.fill),
                data: None,
                raw_chunks: stored,
            };
            let body = wchunks::write(&mut sink, &input)?;
            Ok((body, sink.into_bytes()?))
        };
        let guess = self.eoa.div_ceil(super::space::ALIGN) * super::space::ALIGN;
        let (body, bytes) = build(guess)?;
        if bytes.is_empty() {
            return Ok(body);
        }
        let at = self.alloc(bytes.len() as u64)?;
        let (body, bytes) = if at == guess {
            (body, bytes)
        } else {
            build(at)?
        };
        blocks.push((at, bytes.len() as u64));
        txn.writes.push((at, bytes));
        Ok(body)
    }
}

/// The dataspace message `body` (versions 1 and 2, simple) with its current
/// dimensions set to `dims`; `None` for anything else.
fn resized_space(body: &[u8], dims: &[u64]) -> Option<Vec<u8>> {
    let version = *body.first()?;
    let rank = usize::from(*body.get(1)?);
    if rank != dims.len() {
        return None;
    }
    let at = match version {
        1 => 8,
        2 if body.get(3) == Some(&1) => 4,
        _ => return None,
    };
    let mut out = body.to_vec();
    for (i, d) in dims.iter().enumerate() {
        out.get_mut(at + 8 * i..at + 8 * i + 8)?
            .copy_from_slice(&d.to_le_bytes());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_and_fill() {
        // 2x2 box from a 3x3 source at (1,1) into a 2x3 chunk at (0,1)
        let src: Vec<u8> = (0..9).collect();
        let mut dst = vec![0u8; 6];
        copy_box(
            &src,
            &[3, 3],
            &[1, 1],
            &mut dst,
            &[2, 3],
            &[0, 1],
            &[2, 2],
            1,
        );
        assert_eq!(dst, vec![0, 4, 5, 0, 7, 8]);
        // chunk (1,0) of 2x3 chunks in a 3x4 dataset: only its first row is inside
        let mut c = vec![1u8; 6];
        fill_outside(&mut c, &[2, 3], &[1, 0], &[3, 4], &[9]);
        assert_eq!(c, vec![1, 1, 1, 9, 9, 9]);
    }

    #[test]
    fn dataspace_dims_patched() {
        // version 1, rank 1, max present
        let mut v1 = vec![1, 1, 1, 0, 0, 0, 0, 0];
        v1.extend_from_slice(&5u64.to_le_bytes());
        v1.extend_from_slice(&u64::MAX.to_le_bytes());
        let out = resized_space(&v1, &[7]).unwrap();
        assert_eq!(&out[8..16], &7u64.to_le_bytes());
        assert_eq!(&out[16..], &u64::MAX.to_le_bytes());
        let mut v2 = vec![2, 1, 1, 1];
        v2.extend_from_slice(&5u64.to_le_bytes());
        v2.extend_from_slice(&9u64.to_le_bytes());
        assert_eq!(
            &resized_space(&v2, &[2]).unwrap()[4..12],
            &2u64.to_le_bytes()
        );
        assert!(resized_space(&[2, 0, 0, 0], &[1]).is_none());
    }
}
