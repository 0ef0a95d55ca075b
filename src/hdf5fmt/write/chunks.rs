//! Chunked storage writer (HDF5 File Format Specification IV.A.2.i, "Data Layout
//! Message" version 4, and III.A.3/4 for the chunk indexes): splits C-order data
//! into chunks (edge chunks padded with the fill value), runs the filter pipeline
//! on each (in parallel with the `parallel` feature), writes them, then writes
//! the index: single chunk or fixed array (unpaged: page bits cover every
//! entry) when every dimension is fixed, an extensible array when exactly one
//! is unlimited, and a version 2 B-tree (types 10/11) when more are, or when the
//! fixed chunk grid is too large for one entry per cell.

use super::btree_v2::{self, BTreeParams};
use super::extensible_array;
use super::sink::Sink;
use crate::btree_v2::records::ChunkRecordV2;
use crate::checksum::metadata_checksum;
use crate::chunk_index::fixed_array::{ElementFormat, FixedArrayHeader};
use crate::chunk_index::ChunkIndexKind;
use crate::encode::{log2_floor, UNDEF};
use crate::error::{Error, Result};
use crate::messages::layout::Layout;
use crate::signature;
use purehdf_filters::{self as filters, ChunkContext, FilterSpec};
use std::collections::BTreeMap;

/// A pre-encoded chunk already in the output: address, stored size, filter mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawChunk {
    /// Address of the chunk's stored bytes in the output file.
    pub addr: u64,
    /// Stored (filtered) size of the chunk in bytes.
    pub size: u64,
    /// Filter mask: bit `i` set when filter `i` of the pipeline was skipped for this chunk.
    pub mask: u32,
}

/// Pre-encoded chunks keyed by scaled coordinates.
pub type RawChunks = BTreeMap<Vec<u64>, RawChunk>;

/// Everything needed to write one chunked dataset.
pub struct ChunkedInput<'a> {
    /// Current dataset dimensions in elements.
    pub dims: &'a [u64],
    /// Maximum dimensions in elements (`None` = unlimited), one per dimension. They pick the
    /// index: all fixed gives a single chunk or a fixed array, one unlimited dimension an
    /// extensible array, more a v2 B-tree (as does a fixed grid too large for a fixed array).
    pub max: &'a [Option<u64>],
    /// Chunk dimensions in elements, one per dataset dimension.
    pub chunk: &'a [u64],
    /// Size of one element in bytes.
    pub element_size: usize,
    /// Filter pipeline run on every chunk (empty: chunks stored as they are).
    pub filters: &'a [FilterSpec],
    /// One element's fill value bytes, padding edge chunks; `None` (or all zeros) pads with zeros.
    pub fill: Option<&'a [u8]>,
    /// The dataset's bytes in C order; `None` when the chunks come pre-encoded in `raw_chunks`.
    pub data: Option<&'a [u8]>,
    /// Chunks already encoded and written, keyed by scaled coordinates; used only when `data` is
    /// `None`.
    pub raw_chunks: &'a RawChunks,
}

/// Largest chunk grid given a fixed-array index (one entry per grid cell);
/// larger fixed grids get a version 2 B-tree holding only stored chunks.
const MAX_FIXED_ARRAY_CHUNKS: u64 = 1 << 20;

/// One stored chunk.
struct Stored {
    scaled: Vec<u64>,
    addr: u64,
    size: u64,
    mask: u32,
}

fn grid(dims: &[u64], chunk: &[u64]) -> Vec<u64> {
    dims.iter()
        .zip(chunk)
        .map(|(&d, &c)| d.div_ceil(c))
        .collect()
}

fn product(v: &[u64]) -> Option<u64> {
    v.iter().try_fold(1u64, |a, &b| a.checked_mul(b))
}

/// Bytes used to encode a filtered chunk's size (libhdf5's rule for layout v4).
pub fn chunk_size_len(chunk_bytes: u64) -> usize {
    (1 + (log2_floor(chunk_bytes) as usize + 8) / 8).min(8)
}

/// Copy the chunk at `scaled` out of C-order `data`, padding outside the dataset with `fill`.
pub fn extract_chunk(
    data: &[u8],
    dims: &[u64],
    chunk: &[u64],
    scaled: &[u64],
    elem: usize,
    fill: &[u8],
) -> Vec<u8> {
    let mut out = Vec::new();
    extract_chunk_into(data, dims, chunk, scaled, elem, fill, &mut out);
    out
}

/// [`extract_chunk`] into `out` (resized to the chunk; its old bytes are reused).
pub fn extract_chunk_into(
    data: &[u8],
    dims: &[u64],
    chunk: &[u64],
    scaled: &[u64],
    elem: usize,
    fill: &[u8],
    out: &mut Vec<u8>,
) {
    let rank = dims.len();
    let n: usize = chunk.iter().map(|&c| c as usize).product();
    out.clear();
    if fill.len() == elem && fill.iter().any(|&b| b != 0) {
        out.reserve(n * elem);
        for _ in 0..n {
            out.extend_from_slice(fill);
        }
    } else {
        out.resize(n * elem, 0);
    }
    if chunk.len() != rank || scaled.len() != rank {
        return;
    }
    if rank == 0 {
        let len = elem.min(data.len());
        out[..len].copy_from_slice(&data[..len]);
        return;
    }
    let start: Vec<u64> = scaled.iter().zip(chunk).map(|(&s, &c)| s * c).collect();
    let count: Vec<u64> = (0..rank)
        .map(|i| chunk[i].min(dims[i].saturating_sub(start[i])))
        .collect();
    if count.contains(&0) {
        return;
    }
    let last = rank - 1;
    let run = count[last] as usize * elem;
    let mut idx = vec![0u64; rank];
    loop {
        let mut src = 0u64;
        let mut dst = 0u64;
        for i in 0..rank {
            src = src * dims[i] + start[i] + idx[i];
            dst = dst * chunk[i] + idx[i];
        }
        let s = src as usize * elem;
        let d = dst as usize * elem;
        if let (Some(from), Some(to)) = (data.get(s..s + run), out.get_mut(d..d + run)) {
            to.copy_from_slice(from);
        }
        // Advance the odometer over all but the last dimension.
        let mut i = last;
        loop {
            if i == 0 {
                return;
            }
            i -= 1;
            idx[i] += 1;
            if idx[i] < count[i] {
                break;
            }
            idx[i] = 0;
        }
    }
}

fn all_scaled(grid: &[u64]) -> Vec<Vec<u64>> {
    let total = product(grid).unwrap_or(0);
    let mut out = Vec::with_capacity(total as usize);
    let mut idx = vec![0u64; grid.len()];
    for _ in 0..total {
        out.push(idx.clone());
        for i in (0..grid.len()).rev() {
            idx[i] += 1;
            if idx[i] < grid[i] {
                break;
            }
            idx[i] = 0;
        }
    }
    out
}

/// Run `pipeline` over one chunk; an optional stage (flags bit 0) that fails is
/// skipped and recorded in the returned filter mask, as libhdf5 does (a shuffle
/// stage without an element size fails, as in libhdf5).
pub fn run_pipeline(
    pipeline: &[FilterSpec],
    ctx: &ChunkContext,
    raw: Vec<u8>,
) -> Result<(Vec<u8>, u32)> {
    let mut buf = raw;
    let mut mask = 0u32;
    for (i, spec) in pipeline.iter().enumerate() {
        // libhdf5's shuffle fails without its element-size parameter (left
        // empty for variable-length types): an optional one is skipped
        let res =
            if spec.id == filters::ids::SHUFFLE && spec.cd_values.first().is_none_or(|&e| e == 0) {
                Err(Error::InvalidArgument(
                    "shuffle without an element size".into(),
                ))
            } else {
                filters::encode(spec, ctx, &buf).map_err(Error::from)
            };
        match res {
            Ok(out) => buf = out,
            Err(_) if spec.flags & 1 != 0 && i < 32 => mask |= 1 << i,
            Err(e) => return Err(e),
        }
    }
    Ok((buf, mask))
}

/// Per-thread encoder state kept from chunk to chunk (and dataset to
/// dataset): the extracted chunk and the Blosc2 encoder's buffers.
#[derive(Default)]
struct Scratch {
    chunk: Vec<u8>,
    blosc2: filters::blosc2::encode_chunk::ChunkEncoder,
    /// The shuffled chunk ahead of deflate.
    shuffled: Vec<u8>,
    /// This thread's deflate state, reset per chunk (see [`deflate_fast`]).
    deflate: Option<filters::deflate::Encoder>,
}

/// Deflate, or shuffle then deflate, of `scratch.chunk` straight into `out`
/// with this thread's kept buffers and compressor: the same bytes as
/// [`run_pipeline`] (whose stages cannot fail for these parameters, so the
/// filter mask is 0). `Ok(false)` for any other pipeline.
fn deflate_fast(filters: &[FilterSpec], scratch: &mut Scratch, out: &mut Vec<u8>) -> Result<bool> {
    let (ts, level) = match filters {
        [d] if d.id == filters::ids::DEFLATE => (None, d),
        [sh, d] if sh.id == filters::ids::SHUFFLE && d.id == filters::ids::DEFLATE => {
            match sh.cd_values.first().and_then(|&t| usize::try_from(t).ok()) {
                Some(t) if t > 0 => (Some(t), d),
                _ => return Ok(false),
            }
        }
        _ => return Ok(false),
    };
    let Some(level) = filters::deflate::level_of(&level.cd_values) else {
        return Ok(false);
    };
    let src: &[u8] = match ts {
        Some(ts) => {
            scratch.shuffled.resize(scratch.chunk.len(), 0);
            filters::shuffle::shuffle(&scratch.chunk, &mut scratch.shuffled, ts);
            &scratch.shuffled
        }
        None => &scratch.chunk,
    };
    let enc = match &mut scratch.deflate {
        Some(e) if e.level() == level => e,
        slot => slot.insert(filters::deflate::Encoder::new(level)),
    };
    filters::deflate::encode_into(src, enc, out)?;
    Ok(true)
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Encode the chunk at `scaled` into `out` (cleared first); returns the filter mask.
fn encode_one(
    input: &ChunkedInput,
    data: &[u8],
    ctx: &ChunkContext,
    scaled: &[u64],
    out: &mut Vec<u8>,
    scratch: &mut Scratch,
) -> Result<u32> {
    out.clear();
    let elem = input.element_size;
    let fill = input.fill.unwrap_or(&[]);
    if input.filters.is_empty() {
        extract_chunk_into(data, input.dims, input.chunk, scaled, elem, fill, out);
        return Ok(0);
    }
    extract_chunk_into(
        data,
        input.dims,
        input.chunk,
        scaled,
        elem,
        fill,
        &mut scratch.chunk,
    );
    if deflate_fast(input.filters, scratch, out)? {
        return Ok(0);
    }
    // A lone Blosc2 stage encodes in place, reusing this thread's buffers.
    if let [spec] = input.filters {
        if spec.id == filters::ids::BLOSC2 {
            let r = filters::blosc2::encode_into(
                &scratch.chunk,
                &spec.cd_values,
                ctx,
                &mut scratch.blosc2,
                out,
            );
            return match r {
                Ok(()) => Ok(0),
                // An optional stage that fails is skipped (the raw chunk is stored).
                Err(_) if spec.flags & 1 != 0 => {
                    out.clear();
                    out.extend_from_slice(&scratch.chunk);
                    Ok(1)
                }
                Err(e) => Err(e.into()),
            };
        }
    }
    let (bytes, mask) = run_pipeline(input.filters, ctx, std::mem::take(&mut scratch.chunk))?;
    out.extend_from_slice(&bytes);
    // Keep the larger allocation for the next chunk.
    scratch.chunk = bytes;
    Ok(mask)
}

/// Encode the chunks at `coords` into `outs` (one buffer per chunk, reused
/// from batch to batch); returns their filter masks.
fn encode_all(
    input: &ChunkedInput,
    data: &[u8],
    coords: &[Vec<u64>],
    outs: &mut [Vec<u8>],
) -> Result<Vec<u32>> {
    let elem = input.element_size;
    let chunk_bytes = product(input.chunk).unwrap_or(0) as usize * elem;
    let ctx = ChunkContext::new(elem, chunk_bytes);
    let one = |(s, out): (&Vec<u64>, &mut Vec<u8>)| -> Result<u32> {
        SCRATCH
            .with(|c| encode_one(input, data, &ctx, s, out, &mut c.borrow_mut()))
            .map_err(|e| Error::Chunk {
                dataset: String::new(),
                coords: s.clone(),
                source: Box::new(e),
            })
    };
    #[cfg(feature = "parallel")]
    if purehdf_filters::threads::parallel() {
        use rayon::prelude::*;
        return coords
            .par_iter()
            .zip(outs.par_iter_mut())
            .map(one)
            .collect();
    }
    coords.iter().zip(outs.iter_mut()).map(one).collect()
}

/// Chunks encoded per batch: enough to keep every thread busy, few enough
/// that the encoded chunks (held until written in order) stay small.
fn batch_len() -> usize {
    (4 * purehdf_filters::threads::threads()).clamp(1, 256)
}

/// Encode every chunk of the C-order `data` (of shape `input.dims`; edge
/// chunks padded with `input.fill`) through `input.filters`, in parallel
/// batches, and hand each to `emit` in C order of its scaled coordinates
/// with its stored bytes and filter mask. Memory holds one batch of encoded
/// chunks; `data` is only read.
pub fn encode_chunks(
    input: &ChunkedInput,
    data: &[u8],
    mut emit: impl FnMut(&[u64], &[u8], u32) -> Result<()>,
) -> Result<()> {
    let coords = all_scaled(&grid(input.dims, input.chunk));
    // Encode in batches to bound memory; the output buffers are reused.
    let mut outs: Vec<Vec<u8>> = Vec::new();
    for batch in coords.chunks(batch_len()) {
        outs.resize_with(batch.len(), Vec::new);
        let masks = encode_all(input, data, batch, &mut outs[..batch.len()])?;
        for ((s, bytes), mask) in batch.iter().zip(&outs).zip(masks) {
            emit(s, bytes, mask)?;
        }
    }
    Ok(())
}

/// Write chunks and their index; returns the layout message body.
pub fn write(sink: &mut Sink, input: &ChunkedInput) -> Result<Vec<u8>> {
    let rank = input.dims.len();
    if rank == 0 || input.chunk.len() != rank || input.max.len() != rank {
        return Err(Error::InvalidArgument(
            "chunked layout needs a simple dataspace with one chunk size per dimension".into(),
        ));
    }
    if input
        .chunk
        .iter()
        .any(|&c| c == 0 || c > u64::from(u32::MAX))
    {
        return Err(Error::InvalidArgument(
            "chunk dimensions must be 1..2^32".into(),
        ));
    }
    let elem = input.element_size as u64;
    let chunk_elems =
        product(input.chunk).ok_or_else(|| Error::InvalidArgument("chunk too large".into()))?;
    let chunk_bytes = chunk_elems
        .checked_mul(elem)
        .filter(|&b| b < (1u64 << 32))
        .ok_or_else(|| Error::InvalidArgument("chunk must be under 4 GiB".into()))?;
    let cur_grid = grid(input.dims, input.chunk);
    let filtered = !input.filters.is_empty();

    // Chunks to store: from data, or the caller's pre-encoded ones.
    let mut stored: Vec<Stored> = Vec::new();
    if let Some(data) = input.data {
        encode_chunks(input, data, |s, bytes, mask| {
            let addr = sink.append(bytes)?;
            stored.push(Stored {
                scaled: s.to_vec(),
                addr,
                size: bytes.len() as u64,
                mask,
            });
            Ok(())
        })?;
    } else {
        for (s, c) in input.raw_chunks {
            if s.len() != rank || s.iter().zip(&cur_grid).any(|(a, g)| a >= g) {
                return Err(Error::InvalidArgument(format!(
                    "raw chunk {s:?} outside the chunk grid {cur_grid:?}"
                )));
            }
            if !filtered && c.size != chunk_bytes {
                return Err(Error::InvalidArgument(format!(
                    "unfiltered raw chunk {s:?} must be {chunk_bytes} bytes"
                )));
            }
            stored.push(Stored {
                scaled: s.clone(),
                addr: c.addr,
                size: c.size,
                mask: c.mask,
            });
        }
    }

    let fixed = input
        .max
        .iter()
        .zip(input.dims)
        .all(|(m, d)| m.is_some_and(|m| m >= *d));
    let all_equal = input
        .max
        .iter()
        .zip(input.dims)
        .all(|(m, d)| *m == Some(*d));
    let csl = chunk_size_len(chunk_bytes);
    let nchunks = product(&cur_grid).unwrap_or(0);

    if all_equal && nchunks == 1 {
        let (addr, filtered_size, filter_mask) = match stored.first() {
            Some(s) if filtered => (s.addr, s.size, s.mask),
            Some(s) => (s.addr, 0, 0),
            None => (UNDEF, 0, 0),
        };
        let kind = ChunkIndexKind::SingleChunk {
            filtered_size,
            filter_mask,
        };
        // flags bit 1: the single chunk's filtered size and mask are stored
        return chunked_layout(input, elem, u8::from(filtered) << 1, kind, addr);
    }
    let max: Vec<u64> = input.max.iter().map(|m| m.unwrap_or(0)).collect();
    let max_grid = grid(&max, input.chunk);
    // a fixed array has one entry per grid cell: for astronomically large,
    // sparsely allocated grids use the B-tree, whose size follows the chunks
    let small_grid = product(&max_grid).is_some_and(|n| n <= MAX_FIXED_ARRAY_CHUNKS);
    if fixed && small_grid {
        // nothing stored: no index yet (libhdf5 creates it with the first
        // chunk, and cannot walk an empty one when it deletes the dataset)
        let (addr, page_bits) = if stored.is_empty() {
            (UNDEF, 10)
        } else {
            write_fixed_array(sink, &max_grid, &stored, filtered, csl)?
        };
        return chunked_layout(
            input,
            elem,
            0,
            ChunkIndexKind::FixedArray { page_bits },
            addr,
        );
    }
    let unlimited: Vec<usize> = (0..rank).filter(|&i| input.max[i].is_none()).collect();
    if let [unlim] = unlimited[..] {
        let entries = ea_entries(input, unlim, &stored, filtered, csl);
        let entry = if filtered { 8 + csl + 4 } else { 8 };
        let (addr, info) = extensible_array::write(sink, &entries, entry, filtered)?;
        return chunked_layout(input, elem, 0, info, addr);
    }
    let (addr, info) = write_btree_index(sink, rank, &mut stored, filtered, csl)?;
    chunked_layout(input, elem, 0, info, addr)
}

/// The data layout message (version 4, chunked) of the dataset: its index
/// `kind` at `address` ([`UNDEF`] when nothing is stored yet).
fn chunked_layout(
    input: &ChunkedInput,
    element_size: u64,
    flags: u8,
    kind: ChunkIndexKind,
    address: u64,
) -> Result<Vec<u8>> {
    Layout::Chunked {
        version: 4,
        chunk_dims: input.chunk.to_vec(),
        element_size,
        flags,
        kind,
        address: (address != UNDEF).then_some(address),
    }
    .encode(super::sizes::WRITER_SIZES)
}

/// The array index element layout of the writer's chunks (8-byte addresses,
/// a `csl`-byte size and a mask when filtered).
fn element_format(filtered: bool, csl: usize) -> ElementFormat {
    ElementFormat {
        addr_len: 8,
        size_len: filtered.then_some(csl),
    }
}

fn encode_entry(s: &Stored, filtered: bool, csl: usize) -> Vec<u8> {
    let mut e = Vec::new();
    element_format(filtered, csl).encode(Some((s.addr, s.size, s.mask)), &mut e);
    e
}

/// Extensible array entries keyed by libhdf5's chunk index: the unlimited
/// dimension moved first, the others strided by their maximum chunk counts.
fn ea_entries(
    input: &ChunkedInput,
    unlim: usize,
    stored: &[Stored],
    filtered: bool,
    csl: usize,
) -> BTreeMap<u64, Vec<u8>> {
    let rank = input.dims.len();
    let order: Vec<usize> = std::iter::once(unlim)
        .chain((0..rank).filter(|&i| i != unlim))
        .collect();
    let max_chunks: Vec<u64> = order
        .iter()
        .map(|&i| input.max[i].unwrap_or(0).div_ceil(input.chunk[i]))
        .collect();
    stored
        .iter()
        .map(|s| {
            let swz: Vec<u64> = order.iter().map(|&i| s.scaled[i]).collect();
            let mut idx = swz[0];
            for k in 1..rank {
                idx = idx * max_chunks[k] + swz[k];
            }
            (idx, encode_entry(s, filtered, csl))
        })
        .collect()
}

fn linear(scaled: &[u64], grid: &[u64]) -> u64 {
    scaled
        .iter()
        .zip(grid)
        .fold(0u64, |acc, (&s, &g)| acc * g + s)
}

/// Fixed array header + one unpaged data block; returns (header address, page bits).
fn write_fixed_array(
    sink: &mut Sink,
    max_grid: &[u64],
    stored: &[Stored],
    filtered: bool,
    csl: usize,
) -> Result<(u64, u8)> {
    let n = product(max_grid).ok_or_else(|| Error::InvalidArgument("too many chunks".into()))?;
    if n > crate::limits::MAX_ELEMENTS {
        return Err(Error::InvalidArgument(format!("{n} chunks is too many")));
    }
    let page_bits = (log2_floor(n.max(1).next_power_of_two()) as u8).max(10);
    let entry = if filtered { 8 + csl + 4 } else { 8 };
    let mut entries = vec![None::<&Stored>; n as usize];
    for s in stored {
        if let Some(e) = entries.get_mut(linear(&s.scaled, max_grid) as usize) {
            *e = Some(s);
        }
    }
    let header_addr = sink.pos();
    let header = FixedArrayHeader {
        client: u8::from(filtered),
        elem_size: entry as u8,
        page_bits,
        nelmts: n,
        dblock: Some(header_addr + FixedArrayHeader::encoded_len(super::sizes::WRITER_SIZES)),
    };
    sink.append(&header.encode(super::sizes::WRITER_SIZES))?;

    let fmt = element_format(filtered, csl);
    let mut d = Vec::with_capacity(18 + entry * n as usize);
    d.extend_from_slice(signature::FADB);
    d.extend_from_slice(&[0, u8::from(filtered)]);
    d.extend_from_slice(&header_addr.to_le_bytes());
    for e in &entries {
        fmt.encode(e.map(|s| (s.addr, s.size, s.mask)), &mut d);
    }
    let sum = metadata_checksum(&d);
    d.extend_from_slice(&sum.to_le_bytes());
    sink.append(&d)?;
    Ok((header_addr, page_bits))
}

/// Version 2 B-tree chunk index (record type 10 unfiltered, 11 filtered).
fn write_btree_index(
    sink: &mut Sink,
    rank: usize,
    stored: &mut [Stored],
    filtered: bool,
    csl: usize,
) -> Result<(u64, ChunkIndexKind)> {
    stored.sort_by(|a, b| a.scaled.cmp(&b.scaled));
    let rec_size = if filtered { 8 + csl + 4 } else { 8 } + 8 * rank;
    let records: Vec<Vec<u8>> = stored
        .iter()
        .map(|s| {
            let mut r = Vec::with_capacity(rec_size);
            ChunkRecordV2 {
                address: Some(s.addr),
                size: filtered.then_some(s.size),
                filter_mask: if filtered { s.mask } else { 0 },
                scaled: s.scaled.clone(),
            }
            .encode(super::sizes::WRITER_SIZES, csl, &mut r);
            r
        })
        .collect();
    let params = BTreeParams {
        record_type: if filtered { 11 } else { 10 },
        record_size: rec_size as u16,
        node_size: 2048,
        split: 100,
        merge: 40,
    };
    let addr = btree_v2::write(sink, &params, &records)?;
    Ok((
        addr,
        ChunkIndexKind::BTreeV2 {
            node_size: params.node_size,
            split_percent: params.split,
            merge_percent: params.merge,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_chunk_is_padded_with_fill() {
        // 3x3 of u8 0..9, chunks 2x2: chunk (1,1) holds only element 8.
        let data: Vec<u8> = (0..9).collect();
        let c = extract_chunk(&data, &[3, 3], &[2, 2], &[1, 1], 1, &[0xFF]);
        assert_eq!(c, vec![8, 0xFF, 0xFF, 0xFF]);
        let c = extract_chunk(&data, &[3, 3], &[2, 2], &[0, 1], 1, &[]);
        assert_eq!(c, vec![2, 0, 5, 0]);
        let c = extract_chunk(&data, &[3, 3], &[2, 2], &[0, 0], 1, &[]);
        assert_eq!(c, vec![0, 1, 3, 4]);
    }

    #[test]
    fn chunk_size_len_rule() {
        assert_eq!(chunk_size_len(1), 2);
        assert_eq!(chunk_size_len(255), 2);
        assert_eq!(chunk_size_len(256), 3);
        assert_eq!(chunk_size_len(4000), 3);
    }

    #[test]
    fn grid_walk_is_c_order() {
        assert_eq!(
            all_scaled(&[2, 2]),
            vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]
        );
        assert_eq!(linear(&[1, 1], &[2, 3]), 4);
    }

    proptest::proptest! {
        #[test]
        fn chunks_reassemble_to_the_data(
            dims in proptest::collection::vec(0u64..9, 1..4),
            chunk_seed in proptest::collection::vec(1u64..5, 3),
            elem in 1usize..4,
        ) {
            let rank = dims.len();
            let chunk: Vec<u64> = chunk_seed[..rank].to_vec();
            let n: u64 = dims.iter().product();
            let data: Vec<u8> = (0..n as usize * elem).map(|i| (i % 253) as u8).collect();
            let g = grid(&dims, &chunk);
            let mut out = vec![0xEEu8; data.len()];
            for s in all_scaled(&g) {
                let c = extract_chunk(&data, &dims, &chunk, &s, elem, &vec![0xAB; elem]);
                proptest::prop_assert_eq!(c.len() as u64, chunk.iter().product::<u64>() * elem as u64);
                // Scatter the chunk back, checking padding outside the dataset.
                let cn: u64 = chunk.iter().product();
                for k in 0..cn {
                    let mut rem = k;
                    let mut pos = vec![0u64; rank];
                    for i in (0..rank).rev() {
                        pos[i] = s[i] * chunk[i] + rem % chunk[i];
                        rem /= chunk[i];
                    }
                    let cell = &c[k as usize * elem..(k as usize + 1) * elem];
                    if pos.iter().zip(&dims).all(|(p, d)| p < d) {
                        let lin = pos.iter().zip(&dims).fold(0u64, |a, (p, d)| a * d + p) as usize;
                        out[lin * elem..(lin + 1) * elem].copy_from_slice(cell);
                    } else {
                        proptest::prop_assert!(cell.iter().all(|&b| b == 0xAB));
                    }
                }
            }
            proptest::prop_assert_eq!(out, data);
        }
    }
}
