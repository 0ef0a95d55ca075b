//! Blosc chunk decoding, both Blosc2 chunks (format version 3–5, 32-byte
//! extended header) and Blosc1 chunks (version 2, 16-byte header):
//! `docs/filters-format.md` §3.6 (header, special-value and memcpyed chunks,
//! blocks and streams), §3.9 (filter pipeline) and §4.3 (Blosc1 rules).
//!
//! Blocks are decoded straight into the caller's buffer: streams of an
//! unfiltered block land in place, byte-shuffled split blocks are interleaved
//! from their streams (raw streams read in place from the chunk).

use super::codec::{self, Decoders};
use super::jpeg2000;

/// Codec format (flags bits 5–7) of a chunk whose codec is a user codec
/// named by header byte 22.
const USER_CODEC: u8 = 6;
use crate::error::{Error, Result};
use crate::{bitshuffle, shuffle};

const NAME: &str = "blosc2";

/// Filter codes of the Blosc2 filter pipeline.
pub mod filter {
    /// Empty slot: no filter.
    pub const NONE: u8 = 0;
    /// Byte shuffle by the slot's meta as element size (0 = the type size).
    pub const SHUFFLE: u8 = 1;
    /// Bitshuffle by the type size.
    pub const BITSHUFFLE: u8 = 2;
    /// Delta: XOR against the previous word in block 0 and against the
    /// original block 0 in the other blocks.
    pub const DELTA: u8 = 3;
    /// Truncate precision of f32/f64 (lossy; nothing to undo on decode).
    pub const TRUNC_PREC: u8 = 4;
}

/// Special-value kinds (blosc2 flags bits 4–6).
pub mod special {
    /// Every byte zero; the chunk is its header only.
    pub const ZERO: u8 = 1;
    /// Every item NaN (f32 or f64 by the type size); header only.
    pub const NAN: u8 = 2;
    /// One value repeated; the value follows the header.
    pub const VALUE: u8 = 3;
    /// Uninitialised content (decoded as zeros); header only.
    pub const UNINIT: u8 = 4;
}

/// A chunk fit for the block fast paths: its header, the chunk cut to its
/// `cbytes`, the nominal block size and the size of the block asked for.
type PlainBlock<'s> = (Header, &'s [u8], usize, usize);

/// A parsed Blosc1/Blosc2 chunk header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Chunk format version (byte 0): 2 for Blosc1, 3–5 for Blosc2.
    pub version: u8,
    /// Flags byte (byte 2): shuffle / extended-header bits, memcpyed (bit 1),
    /// don't split (bit 4), codec format (bits 5–7).
    pub flags: u8,
    /// Element size in bytes (byte 3, at least 1; larger types are coded as 1).
    pub typesize: usize,
    /// Uncompressed size of the chunk in bytes.
    pub nbytes: usize,
    /// Uncompressed size of a block in bytes.
    pub blocksize: usize,
    /// Stored size of the chunk in bytes, header included.
    pub cbytes: usize,
    /// 32-byte Blosc2 header.
    pub extended: bool,
    /// Filter codes, slot 0…5 (synthesised from the flags for Blosc1).
    pub filters: [u8; 6],
    /// Filter metas, slot 0…5 (all zero for Blosc1).
    pub filters_meta: [u8; 6],
    /// Compressor code (header byte 22; 0 for Blosc1).
    pub codec: u8,
    /// Blosc2 flags (header byte 31; 0 for Blosc1): bit 0 dictionary,
    /// bits 4–6 special-value kind.
    pub blosc2_flags: u8,
}

fn bad(why: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, why)
}

fn le_i32(b: &[u8], pos: usize) -> Result<i32> {
    b.get(pos..pos + 4)
        .and_then(|s| s.try_into().ok())
        .map(i32::from_le_bytes)
        .ok_or_else(|| bad("chunk truncated"))
}

fn non_negative(v: i32, what: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| bad(format!("negative {what}")))
}

impl Header {
    /// Parse the header at the start of `chunk`.
    pub fn parse(chunk: &[u8]) -> Result<Header> {
        let head = chunk
            .get(..16)
            .ok_or_else(|| bad("chunk shorter than its header"))?;
        let (version, flags) = (head[0], head[2]);
        // C-Blosc2 reads chunks of any later version with the version-5 rules.
        if version == 0 {
            return Err(Error::unsupported(
                "Blosc chunk",
                0,
                format!("chunk format version {version}"),
            ));
        }
        let typesize = usize::from(head[3]).max(1);
        let nbytes = non_negative(le_i32(head, 4)?, "nbytes")?;
        let blocksize = non_negative(le_i32(head, 8)?, "blocksize")?;
        let cbytes = non_negative(le_i32(head, 12)?, "cbytes")?;
        let extended = version >= 3 && flags & 0x05 == 0x05;
        let mut h = Header {
            version,
            flags,
            typesize,
            nbytes,
            blocksize,
            cbytes,
            extended,
            filters: [0; 6],
            filters_meta: [0; 6],
            codec: 0,
            blosc2_flags: 0,
        };
        if extended {
            let ext = chunk
                .get(16..32)
                .ok_or_else(|| bad("truncated extended header"))?;
            h.filters.copy_from_slice(&ext[..6]);
            h.codec = ext[6];
            h.filters_meta.copy_from_slice(&ext[8..14]);
            if ext[14] & 1 != 0 {
                return Err(Error::unsupported(
                    "Blosc2 chunk",
                    0,
                    "variable-length blocks",
                ));
            }
            h.blosc2_flags = ext[15];
        } else {
            // Both bits set: C-Blosc 1.x undoes the byte shuffle.
            if flags & 0x04 != 0 {
                h.filters[5] = filter::BITSHUFFLE;
            }
            if flags & 0x01 != 0 && typesize > 1 {
                h.filters[5] = filter::SHUFFLE;
            }
            h.codec = flags >> 5;
        }
        if cbytes < h.header_len() || cbytes > chunk.len() {
            return Err(bad(format!(
                "cbytes {cbytes} does not fit the {} available bytes",
                chunk.len()
            )));
        }
        Ok(h)
    }

    /// 16 or 32.
    pub fn header_len(&self) -> usize {
        if self.extended {
            32
        } else {
            16
        }
    }

    /// Special-value kind (0 = a normal chunk).
    pub fn special(&self) -> u8 {
        (self.blosc2_flags >> 4) & 7
    }

    /// Data stored raw after the header.
    pub fn memcpyed(&self) -> bool {
        self.flags & 0x02 != 0
    }

    /// Codec format of the streams (flags bits 5–7).
    pub fn format(&self) -> u8 {
        self.flags >> 5
    }

    /// Does block `bsize` (of a chunk with block size `bs`) have `typesize` streams?
    fn split(&self, bsize: usize, bs: usize) -> bool {
        let leftover = bsize != bs;
        let dont_split = self.flags & 0x10 != 0;
        if self.version <= 2 {
            !dont_split && self.typesize <= 16 && bs / self.typesize >= 128 && !leftover
        } else {
            !dont_split && !leftover
        }
    }
}

/// The page size the scratch placement of `decode_block` works modulo.
const PAGE: usize = 4096;

/// Reusable scratch space and codec state for decoding chunks.
#[derive(Default)]
pub struct ChunkDecoder {
    dec: Decoders,
    a: Vec<u8>,
    b: Vec<u8>,
    bits: Vec<u8>,
    runs: RunPlanes,
}

/// Constant (zero or run) streams of byte-plane blocks, kept filled between
/// blocks: consecutive blocks usually repeat the same constant planes (the
/// high bytes of small int16 values), which then cost no fill at all.
#[derive(Default)]
struct RunPlanes {
    /// `nstreams` planes of `neblock` bytes.
    bytes: Vec<u8>,
    /// The byte plane `j` holds throughout, if it holds one.
    vals: Vec<Option<u8>>,
    neblock: usize,
}

impl RunPlanes {
    /// Make plane `j` (of `nstreams` planes of `neblock` bytes, `j < nstreams`)
    /// all `v`.
    fn set(&mut self, j: usize, nstreams: usize, neblock: usize, v: u8) {
        if self.neblock != neblock || self.vals.len() != nstreams {
            self.bytes.clear();
            self.bytes.resize(neblock * nstreams, v);
            self.vals.clear();
            self.vals.resize(nstreams, None);
            self.neblock = neblock;
        }
        // `j < nstreams` (the callers' block sizes are multiples of nstreams).
        if let (Some(slot), Some(plane)) = (
            self.vals.get_mut(j),
            self.bytes.get_mut(j * neblock..(j + 1) * neblock),
        ) {
            if *slot != Some(v) {
                plane.fill(v);
                *slot = Some(v);
            }
        }
    }
}

/// Where one stream's bytes live after decoding.
enum Stream {
    /// Stored raw at this range of the chunk.
    Raw(usize, usize),
    /// Decoded into the scratch buffer.
    Scratch,
    /// A constant stream: plane `j` of [`RunPlanes`].
    Run(usize),
}

impl ChunkDecoder {
    /// A decoder with empty scratch buffers (they grow on first use).
    pub fn new() -> Self {
        Self::default()
    }

    /// Decode a whole chunk into a new vector; `max` caps its `nbytes`.
    pub fn decode(&mut self, chunk: &[u8], max: usize) -> Result<Vec<u8>> {
        let h = Header::parse(chunk)?;
        if h.nbytes > max {
            return Err(bad(format!("nbytes {} exceeds the bound {max}", h.nbytes)));
        }
        let mut out = vec![0u8; h.nbytes];
        self.decode_into(chunk, &mut out)?;
        Ok(out)
    }

    /// Decode a whole chunk into `dst`, which must be exactly `nbytes` long.
    pub fn decode_into(&mut self, chunk: &[u8], dst: &mut [u8]) -> Result<()> {
        let h = Header::parse(chunk)?;
        let chunk = &chunk[..h.cbytes];
        if dst.len() != h.nbytes {
            return Err(Error::InvalidArgument(format!(
                "Blosc chunk holds {} bytes, buffer has {}",
                h.nbytes,
                dst.len()
            )));
        }
        if h.nbytes == 0 {
            return Ok(());
        }
        if h.extended && h.special() != 0 {
            return fill_special(&h, chunk, dst);
        }
        let hl = h.header_len();
        if h.memcpyed() {
            let raw = chunk
                .get(hl..hl + h.nbytes)
                .ok_or_else(|| bad("memcpyed chunk truncated"))?;
            dst.copy_from_slice(raw);
            return Ok(());
        }
        if h.blosc2_flags & 0x01 != 0 {
            return Err(Error::unsupported("Blosc2 chunk", 0, "dictionary"));
        }
        if h.blosc2_flags & 0x80 != 0 {
            return Err(Error::unsupported("Blosc2 chunk", 0, "instrumented chunk"));
        }
        self.check_codec_and_filters(&h)?;
        let (bs, _) = block_layout(&h)?;
        let (first, rest) = dst.split_at_mut(bs);
        self.decode_block(&h, chunk, 0, first, None)?;
        for (k, blk) in rest.chunks_mut(bs).enumerate() {
            self.decode_block(&h, chunk, k + 1, blk, Some(first))?;
        }
        Ok(())
    }

    /// Decode only block `k` into `out` (exactly that block's length), e.g. to
    /// serve a window of a B2ND chunk. Chunks using delta can only be decoded
    /// whole (blocks depend on block 0), as can memcpyed and special chunks.
    pub fn decode_single_block(&mut self, chunk: &[u8], k: usize, out: &mut [u8]) -> Result<()> {
        let h = Header::parse(chunk)?;
        let chunk = &chunk[..h.cbytes];
        if h.memcpyed() || (h.extended && h.special() != 0) || h.blosc2_flags & 0x81 != 0 {
            return Err(Error::InvalidArgument(
                "chunk has no independently decodable blocks".into(),
            ));
        }
        if k > 0 && h.filters.contains(&filter::DELTA) {
            return Err(Error::unsupported(
                "Blosc2 chunk",
                0,
                "single block of a delta chunk",
            ));
        }
        self.check_codec_and_filters(&h)?;
        let (bs, nblocks) = block_layout(&h)?;
        let len = if k + 1 == nblocks {
            h.nbytes - k * bs
        } else {
            bs
        };
        if k >= nblocks || out.len() != len {
            return Err(Error::InvalidArgument(format!(
                "block {k} of {nblocks} does not have {} bytes",
                out.len()
            )));
        }
        self.decode_block(&h, chunk, k, out, None)
    }

    fn check_codec_and_filters(&self, h: &Header) -> Result<()> {
        let jpeg2000 = h.extended && h.format() == USER_CODEC && jpeg2000::decodable(h.codec);
        if (h.format() > 4 || (h.format() == 2 && h.extended)) && !jpeg2000 {
            let code = if h.extended { h.codec } else { h.format() };
            return Err(Error::UnsupportedCodec {
                filter: if h.version <= 2 { "blosc" } else { NAME },
                codec: u32::from(code),
                name: codec::name_of(u32::from(code)).into(),
            });
        }
        if let Some(f) = h.filters.iter().find(|&&f| f > filter::TRUNC_PREC) {
            return Err(Error::unsupported(
                "Blosc2 chunk",
                0,
                format!("filter code {f}"),
            ));
        }
        Ok(())
    }

    /// Decode block `k` into `out`; `ref0` is the decoded block 0 (delta).
    fn decode_block(
        &mut self,
        h: &Header,
        chunk: &[u8],
        k: usize,
        out: &mut [u8],
        ref0: Option<&[u8]>,
    ) -> Result<()> {
        let hl = h.header_len();
        let bs = h.blocksize.min(h.nbytes);
        let bsize = out.len();
        let start = non_negative(le_i32(chunk, hl + 4 * k)?, "block start")?;
        let nstreams = if h.split(bsize, bs) { h.typesize } else { 1 };
        if !bsize.is_multiple_of(nstreams) {
            return Err(bad("block size is not a multiple of the stream count"));
        }
        let active: Vec<(u8, u8)> = h
            .filters
            .iter()
            .zip(h.filters_meta.iter())
            .filter(|(&f, _)| f != filter::NONE && f != filter::TRUNC_PREC)
            .map(|(&f, &m)| (f, m))
            .collect();
        // Fast path 1: no filters, streams land in place.
        if active.is_empty() {
            let mut pos = start;
            for part in out.chunks_mut(bsize / nstreams) {
                pos = self.stream_into(h, chunk, pos, part)?;
            }
            return Ok(());
        }
        // Fast path 2: byte shuffle over split streams, interleaved in place.
        if let [(filter::SHUFFLE, meta)] = active.as_slice() {
            let es = if *meta != 0 {
                usize::from(*meta)
            } else {
                h.typesize
            };
            if nstreams > 1 && es == nstreams {
                return self.unshuffle_streams(h, chunk, start, nstreams, out);
            }
        }
        // Zero streams under byte and bit shuffle alone decode to zeros (the
        // empty blocks of bitshuffled labels): no transpose of a zeroed scratch.
        let shuffles = |&(f, _): &(u8, u8)| matches!(f, filter::SHUFFLE | filter::BITSHUFFLE);
        if h.extended && active.iter().all(shuffles) {
            let mut zero = true;
            for s in 0..nstreams {
                if le_i32(chunk, start + 4 * s)? != 0 {
                    zero = false;
                    break;
                }
            }
            if zero {
                out.fill(0);
                return Ok(());
            }
        }
        // General path: streams into scratch, then undo filters slot 5 → 0.
        // The streams land at a fixed distance, modulo a page, from the
        // output block: the filter kernels then load and store addresses
        // whose low 12 bits stay apart. Where the allocator happened to put
        // the scratch 16 bytes below the output (modulo 4096), the bit
        // transpose of 2-byte items ran 10 % slower (measured; likely loads
        // taken for reads of stores just issued to the same page offset).
        let room = bsize
            .checked_add(PAGE)
            .ok_or_else(|| bad(format!("block of {bsize} bytes")))?;
        let mut a = std::mem::take(&mut self.a);
        a.resize(room, 0);
        let mut sa = (PAGE / 2 + (out.as_ptr() as usize) % PAGE + PAGE
            - (a.as_ptr() as usize) % PAGE)
            % PAGE;
        let mut sb = 0;
        let mut pos = start;
        for part in a[sa..sa + bsize].chunks_mut(bsize / nstreams) {
            pos = self.stream_into(h, chunk, pos, part)?;
        }
        let mut b = std::mem::take(&mut self.b);
        b.resize(bsize, 0);
        let nf = active.len();
        for (i, (f, meta)) in active.iter().rev().enumerate() {
            // The last filter to undo writes straight into the output block.
            let last = i + 1 == nf;
            let dst: &mut [u8] = if last {
                &mut *out
            } else {
                &mut b[sb..sb + bsize]
            };
            let src = &a[sa..sa + bsize];
            let ts = h.typesize;
            match *f {
                filter::SHUFFLE => {
                    let es = if *meta != 0 { usize::from(*meta) } else { ts };
                    shuffle::unshuffle(src, dst, es);
                }
                filter::BITSHUFFLE => {
                    let n = bsize / ts;
                    if h.version <= 2 && (!n.is_multiple_of(8) || h.blocksize < ts) {
                        dst.copy_from_slice(src);
                    } else {
                        bitshuffle::bitunshuffle(src, dst, ts, &mut self.bits);
                    }
                }
                filter::DELTA => delta_decode(src, dst, ref0, ts),
                _ => dst.copy_from_slice(src),
            }
            if !last {
                std::mem::swap(&mut a, &mut b);
                std::mem::swap(&mut sa, &mut sb);
            }
        }
        self.a = a;
        self.b = b;
        Ok(())
    }

    /// Decode `nstreams` byte-plane streams and interleave them into `out`.
    fn unshuffle_streams(
        &mut self,
        h: &Header,
        chunk: &[u8],
        start: usize,
        nstreams: usize,
        out: &mut [u8],
    ) -> Result<()> {
        let kinds = self.decode_streams(h, chunk, start, nstreams, out.len())?;
        let planes = plane_refs(
            &kinds,
            &self.a,
            &self.runs.bytes,
            chunk,
            out.len() / nstreams,
        );
        shuffle::unshuffle_planes(&planes, out);
        Ok(())
    }

    /// Decode the `nstreams` streams of a block of `bsize` bytes into `self.a`,
    /// leaving raw streams in the chunk.
    fn decode_streams(
        &mut self,
        h: &Header,
        chunk: &[u8],
        start: usize,
        nstreams: usize,
        bsize: usize,
    ) -> Result<Vec<Stream>> {
        let neblock = bsize / nstreams;
        let mut a = std::mem::take(&mut self.a);
        a.resize(bsize, 0);
        let mut kinds = Vec::with_capacity(nstreams);
        let mut pos = start;
        for (j, part) in a.chunks_mut(neblock).enumerate() {
            let csize = le_i32(chunk, pos)?;
            if csize <= 0 && h.extended {
                match run_byte(chunk, pos, csize) {
                    Ok((v, p)) => {
                        self.runs.set(j, nstreams, neblock, v);
                        kinds.push(Stream::Run(j));
                        pos = p;
                        continue;
                    }
                    Err(e) => {
                        self.a = a;
                        return Err(e);
                    }
                }
            }
            if usize::try_from(csize).ok() == Some(neblock) {
                let p = pos + 4;
                chunk
                    .get(p..p + neblock)
                    .ok_or_else(|| bad("raw stream truncated"))?;
                kinds.push(Stream::Raw(p, p + neblock));
                pos = p + neblock;
            } else {
                match self.stream_into(h, chunk, pos, part) {
                    Ok(p) => pos = p,
                    Err(e) => {
                        self.a = a;
                        return Err(e);
                    }
                }
                kinds.push(Stream::Scratch);
            }
        }
        self.a = a;
        Ok(kinds)
    }

    /// The common start of [`ChunkDecoder::block_planes`] and
    /// [`ChunkDecoder::block_bytes`]: the header, the chunk cut to its
    /// `cbytes`, the nominal block size and block `k`'s size; `None` for
    /// chunks those fast paths do not handle (memcpyed, special values,
    /// lazy or dictionary chunks).
    fn plain_block<'s>(&self, chunk: &'s [u8], k: usize) -> Result<Option<PlainBlock<'s>>> {
        let h = Header::parse(chunk)?;
        let chunk = chunk
            .get(..h.cbytes)
            .ok_or_else(|| bad("chunk shorter than its cbytes"))?;
        if h.memcpyed() || (h.extended && h.special() != 0) || h.blosc2_flags & 0x81 != 0 {
            return Ok(None);
        }
        self.check_codec_and_filters(&h)?;
        let (bs, nblocks) = block_layout(&h)?;
        if k >= nblocks {
            return Err(Error::InvalidArgument(format!("block {k} of {nblocks}")));
        }
        let bsize = if k + 1 == nblocks {
            h.nbytes - k * bs
        } else {
            bs
        };
        Ok(Some((h, chunk, bs, bsize)))
    }

    /// For block `k` stored as byte-shuffled split streams (the usual Blosc2
    /// layout with byte shuffle), decode its streams and return the byte
    /// planes (raw streams borrowed from the chunk), so the caller can
    /// interleave them straight into their destination. `None` for any other
    /// layout (use [`ChunkDecoder::decode_single_block`]).
    pub fn block_planes<'s>(
        &'s mut self,
        chunk: &'s [u8],
        k: usize,
    ) -> Result<Option<Vec<&'s [u8]>>> {
        let Some((h, chunk, bs, bsize)) = self.plain_block(chunk, k)? else {
            return Ok(None);
        };
        let nstreams = if h.split(bsize, bs) { h.typesize } else { 1 };
        let mut active = h
            .filters
            .iter()
            .zip(&h.filters_meta)
            .filter(|(&f, _)| f != filter::NONE && f != filter::TRUNC_PREC);
        let es = match (active.next(), active.next()) {
            (Some((&filter::SHUFFLE, &m)), None) => {
                if m != 0 {
                    usize::from(m)
                } else {
                    h.typesize
                }
            }
            _ => return Ok(None),
        };
        if nstreams <= 1 || es != nstreams || bsize % nstreams != 0 {
            return Ok(None);
        }
        let start = non_negative(le_i32(chunk, h.header_len() + 4 * k)?, "block start")?;
        let kinds = self.decode_streams(&h, chunk, start, nstreams, bsize)?;
        Ok(Some(plane_refs(
            &kinds,
            &self.a,
            &self.runs.bytes,
            chunk,
            bsize / nstreams,
        )))
    }

    /// For block `k` stored as one unfiltered stream (the usual layout of
    /// 1-byte items, and of any typesize without shuffle or split), the block's
    /// bytes without copying them: a constant byte for zero and run streams,
    /// the chunk's own bytes for a raw stream, the codec's output in scratch
    /// otherwise. `None` for any other layout (use
    /// [`ChunkDecoder::decode_single_block`]); the errors are the ones
    /// `decode_single_block` gives.
    pub fn block_bytes<'s>(&'s mut self, chunk: &'s [u8], k: usize) -> Result<Option<Block<'s>>> {
        let Some((h, chunk, bs, bsize)) = self.plain_block(chunk, k)? else {
            return Ok(None);
        };
        // Byte shuffle of 1-byte elements moves nothing: it counts as no filter.
        let filtered = h.filters.iter().zip(&h.filters_meta).any(|(&f, &m)| {
            let es = if m != 0 { usize::from(m) } else { h.typesize };
            f != filter::NONE && f != filter::TRUNC_PREC && !(f == filter::SHUFFLE && es <= 1)
        });
        if h.split(bsize, bs) && h.typesize > 1 {
            return Ok(None);
        }
        let pos = non_negative(le_i32(chunk, h.header_len() + 4 * k)?, "block start")?;
        let csize = le_i32(chunk, pos)?;
        let p = pos + 4;
        if filtered {
            // A block of zeros stays zeros through byte and bit shuffle (no
            // other filter): e.g. the empty blocks of bitshuffled labels.
            let shuffles_only = h.filters.iter().all(|&f| {
                matches!(
                    f,
                    filter::NONE | filter::TRUNC_PREC | filter::SHUFFLE | filter::BITSHUFFLE
                )
            });
            if shuffles_only && h.extended && csize == 0 {
                return Ok(Some(Block::Byte(0)));
            }
            return Ok(None);
        }
        if csize <= 0 {
            if !h.extended {
                return Err(bad("non-positive stream size in a Blosc1 chunk"));
            }
            if csize == 0 {
                return Ok(Some(Block::Byte(0)));
            }
            let token = *chunk.get(p).ok_or_else(|| bad("run token truncated"))?;
            if token & 1 == 0 {
                return Err(bad(format!("unknown stream token {token}")));
            }
            let v = u8::try_from(csize.unsigned_abs()).map_err(|_| bad("run byte out of range"))?;
            return Ok(Some(Block::Byte(v)));
        }
        let c = csize as usize;
        let payload = p
            .checked_add(c)
            .and_then(|e| chunk.get(p..e))
            .ok_or_else(|| bad("stream truncated"))?;
        if c == bsize {
            return Ok(Some(Block::Bytes(payload)));
        }
        let mut a = std::mem::take(&mut self.a);
        a.resize(bsize, 0);
        let r = self.stream_into(&h, chunk, pos, &mut a);
        self.a = a;
        r?;
        Ok(Some(Block::Bytes(&self.a[..bsize])))
    }

    /// For block `k` of `ts`-byte items (1 or 2) stored as one stream under
    /// bitshuffle alone (the medh5 `archive` layout), the codec's output (the
    /// block still bit-transposed, in scratch), so the caller can undo the
    /// transpose straight into its destination
    /// ([`crate::bitshuffle::bitunshuffle_rows`]). `None` for any
    /// other layout or item size (use [`ChunkDecoder::decode_single_block`]);
    /// the errors are the ones `decode_single_block` gives.
    pub fn block_bitshuffled<'s>(
        &'s mut self,
        chunk: &'s [u8],
        k: usize,
        ts: usize,
    ) -> Result<Option<&'s [u8]>> {
        let Some((h, chunk, bs, bsize)) = self.plain_block(chunk, k)? else {
            return Ok(None);
        };
        let mut active = h
            .filters
            .iter()
            .filter(|&&f| f != filter::NONE && f != filter::TRUNC_PREC);
        let only_bits = matches!(
            (active.next(), active.next()),
            (Some(&filter::BITSHUFFLE), None)
        );
        // One stream per block: not split, or items of one byte (whose split
        // is that one stream).
        let one_stream = ts == 1 || !h.split(bsize, bs);
        if !only_bits || !matches!(ts, 1 | 2) || h.typesize != ts || h.version <= 2 || !one_stream {
            return Ok(None);
        }
        let start = non_negative(le_i32(chunk, h.header_len() + 4 * k)?, "block start")?;
        let mut a = std::mem::take(&mut self.a);
        a.resize(bsize, 0);
        let r = self.stream_into(&h, chunk, start, &mut a);
        self.a = a;
        r?;
        Ok(Some(&self.a[..bsize]))
    }

    /// Decode one stream starting at `pos` into `out`; returns the next position.
    fn stream_into(
        &mut self,
        h: &Header,
        chunk: &[u8],
        pos: usize,
        out: &mut [u8],
    ) -> Result<usize> {
        let csize = le_i32(chunk, pos)?;
        let p = pos + 4;
        if csize <= 0 {
            if !h.extended {
                return Err(bad("non-positive stream size in a Blosc1 chunk"));
            }
            let (v, p) = run_byte(chunk, pos, csize)?;
            out.fill(v);
            return Ok(p);
        }
        let c = csize as usize;
        let payload = chunk.get(p..p + c).ok_or_else(|| bad("stream truncated"))?;
        if c == out.len() {
            out.copy_from_slice(payload);
        } else {
            let name = if h.version <= 2 { "blosc" } else { NAME };
            if h.extended && h.format() == USER_CODEC {
                jpeg2000::decode_into(h.codec, payload, h.typesize, out, name)?;
            } else {
                self.dec.decode(h.format(), payload, out, name)?;
            }
        }
        Ok(p + c)
    }
}

/// The bytes of one block, as [`ChunkDecoder::block_bytes`] finds them.
#[derive(Debug, PartialEq, Eq)]
pub enum Block<'s> {
    /// Every byte of the block is this value.
    Byte(u8),
    /// The block's bytes (in the chunk, or decoded into scratch).
    Bytes(&'s [u8]),
}

/// The byte and the end of the constant stream at `pos` of an extended
/// chunk, whose size field `csize` (≤ 0) was read there: 0 is a zero stream,
/// `-v` with a run token a stream of byte `v`.
fn run_byte(chunk: &[u8], pos: usize, csize: i32) -> Result<(u8, usize)> {
    let p = pos + 4;
    if csize == 0 {
        return Ok((0, p));
    }
    let token = *chunk.get(p).ok_or_else(|| bad("run token truncated"))?;
    if token & 1 == 0 {
        return Err(bad(format!("unknown stream token {token}")));
    }
    let v = u8::try_from(csize.unsigned_abs()).map_err(|_| bad("run byte out of range"))?;
    Ok((v, p + 1))
}

/// The byte planes of a decoded block: raw streams from the chunk, constant
/// ones from `runs`, others from scratch.
fn plane_refs<'s>(
    kinds: &[Stream],
    scratch: &'s [u8],
    runs: &'s [u8],
    chunk: &'s [u8],
    neblock: usize,
) -> Vec<&'s [u8]> {
    kinds
        .iter()
        .zip(scratch.chunks(neblock))
        .map(|(k, s)| match k {
            Stream::Raw(x, y) => &chunk[*x..*y],
            Stream::Scratch => s,
            // Always in range (see `RunPlanes::set`); an empty plane would be
            // refused by the callers' length checks.
            Stream::Run(j) => runs.get(j * neblock..(j + 1) * neblock).unwrap_or(&[]),
        })
        .collect()
}

/// Block size and block count of a block-structured chunk, checked against its size.
pub fn block_layout(h: &Header) -> Result<(usize, usize)> {
    let bs = h.blocksize.min(h.nbytes);
    if bs == 0 {
        return Err(bad("zero block size"));
    }
    let nblocks = h.nbytes.div_ceil(bs);
    if nblocks > (h.cbytes - h.header_len()) / 4 {
        return Err(bad("bstarts do not fit the chunk"));
    }
    Ok((bs, nblocks))
}

/// Fill `dst` for a special-value chunk (§3.6.2).
fn fill_special(h: &Header, chunk: &[u8], dst: &mut [u8]) -> Result<()> {
    match h.special() {
        special::ZERO | special::UNINIT => dst.fill(0),
        special::NAN => {
            let pat: &[u8] = match h.typesize {
                4 => &[0x00, 0x00, 0xc0, 0x7f],
                8 => &[0, 0, 0, 0, 0, 0, 0xf8, 0x7f],
                _ => return Err(bad("NaN chunk with a typesize other than 4 or 8")),
            };
            fill_pattern(dst, pat);
        }
        special::VALUE => {
            let value = chunk.get(32..h.cbytes).filter(|v| !v.is_empty());
            fill_pattern(
                dst,
                value.ok_or_else(|| bad("repeated-value chunk without value"))?,
            );
        }
        k => return Err(bad(format!("unknown special value kind {k}"))),
    }
    Ok(())
}

fn fill_pattern(dst: &mut [u8], pat: &[u8]) {
    for (d, s) in dst.iter_mut().zip(pat.iter().cycle()) {
        *d = *s;
    }
}

/// Undo delta (§3.9.3): running XOR in block 0, XOR with block 0 elsewhere.
fn delta_decode(src: &[u8], dst: &mut [u8], ref0: Option<&[u8]>, ts: usize) {
    let w = match ts {
        1 | 2 | 4 | 8 => ts,
        t if t % 8 == 0 => 8,
        _ => 1,
    };
    dst.copy_from_slice(src);
    let body = dst.len() / w * w;
    match ref0 {
        None => {
            for i in w..body {
                dst[i] ^= dst[i - w];
            }
        }
        Some(r) => {
            for (d, r) in dst[..body].iter_mut().zip(r) {
                *d ^= *r;
            }
        }
    }
}

/// Decode a chunk into a new vector (convenience wrapper).
pub fn decode(chunk: &[u8], max: usize) -> Result<Vec<u8>> {
    ChunkDecoder::new().decode(chunk, max)
}

#[cfg(test)]
mod block_bytes_tests {
    use super::super::encode_chunk::{ChunkEncoder, Settings};
    use super::*;
    use proptest::prelude::*;

    /// What `block_bytes` gives for block `k`, expanded to the block's bytes.
    fn expanded(
        dec: &mut ChunkDecoder,
        chunk: &[u8],
        k: usize,
        len: usize,
    ) -> Result<Option<Vec<u8>>> {
        Ok(dec.block_bytes(chunk, k)?.map(|b| match b {
            Block::Byte(v) => vec![v; len],
            Block::Bytes(s) => s.to_vec(),
        }))
    }

    /// `shuffle`: 0 none, 1 byte shuffle, 2 bit shuffle.
    fn chunk_of(data: &[u8], ts: usize, codec: u8, shuffle: u8, blocksize: usize) -> Vec<u8> {
        let mut filters = [0u8; 6];
        filters[5] = shuffle;
        let s = Settings {
            typesize: ts,
            clevel: 5,
            codec,
            filters,
            filters_meta: [0; 6],
            blocksize,
        };
        ChunkEncoder::new().encode(data, &s).unwrap()
    }

    proptest! {
        /// Every block `block_bytes` serves equals `decode_single_block`'s.
        #[test]
        fn equals_single_block(
            runs in proptest::collection::vec((0u8..4, 1usize..700), 1..40),
            ts in prop_oneof![Just(1usize), Just(2), Just(4)],
            codec in prop_oneof![Just(0u8), Just(1), Just(5)],
            shuffle in 0u8..3,
            bs in prop_oneof![Just(0usize), Just(256), Just(1024)],
        ) {
            let mut data: Vec<u8> = runs.iter().flat_map(|&(v, n)| {
                std::iter::repeat_n(v, n).chain((0..n % 7).map(move |i| i as u8 ^ v))
            }).collect();
            data.truncate(data.len() / ts * ts);
            prop_assume!(!data.is_empty());
            let c = chunk_of(&data, ts, codec, shuffle, bs);
            let h = Header::parse(&c).unwrap();
            let mut dec = ChunkDecoder::new();
            if h.memcpyed() || h.special() != 0 {
                prop_assert!(dec.block_bytes(&c, 0).unwrap().is_none());
                return Ok(());
            }
            let (bsz, nb) = block_layout(&h).unwrap();
            let mut served = 0;
            for k in 0..nb {
                let len = if k + 1 == nb { h.nbytes - k * bsz } else { bsz };
                let mut want = vec![0u8; len];
                dec.decode_single_block(&c, k, &mut want).unwrap();
                prop_assert_eq!(&want[..], &data[k * bsz..k * bsz + len]);
                if let Some(got) = expanded(&mut dec, &c, k, len).unwrap() {
                    prop_assert_eq!(&got, &want);
                    served += 1;
                }
                // The still-transposed block of the archive read path.
                for asked in [1, 2, 4] {
                    let bits = dec.block_bitshuffled(&c, k, asked).unwrap().map(<[u8]>::to_vec);
                    if let Some(bits) = bits {
                        prop_assert!(asked == ts && ts <= 2 && shuffle == 2);
                        let mut back = vec![0u8; len];
                        crate::bitshuffle::bitunshuffle(&bits, &mut back, ts, &mut Vec::new());
                        prop_assert_eq!(&back, &want);
                    }
                }
            }
            // 1-byte items without bit shuffle are always served.
            if ts == 1 && shuffle != 2 {
                prop_assert_eq!(served, nb);
            }
        }

        /// `block_planes` with one decoder over blocks in any order (constant
        /// planes of changing bytes, kept between blocks, next to LZ4 and
        /// raw planes), interleaved, equals `decode_single_block`.
        #[test]
        fn block_planes_equal_single_block(
            blocks in proptest::collection::vec((0u8..4, any::<u8>(), any::<u8>()), 1..12),
            order in proptest::collection::vec(any::<usize>(), 1..30),
            codec in prop_oneof![Just(0u8), Just(1)],
        ) {
            // 128 int16 per block; kind: 0 both bytes constant, 1 low varies,
            // 2 high varies, 3 both vary.
            let mut data = Vec::new();
            for &(kind, lo, hi) in &blocks {
                for i in 0..128u8 {
                    let l = if kind & 1 != 0 { lo.wrapping_add(i % 5) } else { lo };
                    let h = if kind & 2 != 0 { hi ^ (i / 9) } else { hi };
                    data.extend_from_slice(&[l, h]);
                }
            }
            let c = chunk_of(&data, 2, codec, 1, 256);
            let h = Header::parse(&c).unwrap();
            prop_assume!(!h.memcpyed() && h.special() == 0);
            let (bsz, nb) = block_layout(&h).unwrap();
            prop_assert_eq!(bsz, 256);
            let mut dec = ChunkDecoder::new();
            for o in order {
                let k = o % nb;
                let mut want = vec![0u8; bsz];
                dec.decode_single_block(&c, k, &mut want).unwrap();
                prop_assert_eq!(&want[..], &data[k * bsz..(k + 1) * bsz]);
                let planes = dec.block_planes(&c, k).unwrap().unwrap();
                prop_assert_eq!(planes.len(), 2);
                let got: Vec<u8> = planes[0]
                    .iter()
                    .zip(planes[1])
                    .flat_map(|(&a, &b)| [a, b])
                    .collect();
                prop_assert_eq!(got, want);
            }
        }

        /// Damaged chunks give an error or a block, never a panic, and a
        /// block served from a damaged chunk has the block's length.
        #[test]
        fn corrupt_chunks_never_panic(
            seed in proptest::collection::vec(0u8..3, 64..3000),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
            cut in any::<usize>(),
            codec in prop_oneof![Just(0u8), Just(1)],
        ) {
            let mut c = chunk_of(&seed, 1, codec, 2 * u8::from(cut % 2 == 0), 256);
            for (p, x) in flips {
                let i = p % c.len();
                c[i] ^= x;
            }
            if cut % 3 == 0 {
                c.truncate(cut % (c.len() + 1));
            }
            let mut dec = ChunkDecoder::new();
            for k in 0..16 {
                if let Ok(Some(Block::Bytes(b))) = dec.block_bytes(&c, k) {
                    let h = Header::parse(&c).unwrap();
                    let (bsz, nb) = block_layout(&h).unwrap();
                    let len = if k + 1 == nb { h.nbytes - k * bsz } else { bsz };
                    prop_assert_eq!(b.len(), len);
                }
            }
        }
    }
}
