//! Blosc2 contiguous frame ("cframe"), `docs/filters-format.md` §3.4: the
//! msgpack header with its metalayers, the data chunks, the offsets chunk with
//! special offsets, and the trailer — reading and writing.

use super::chunk::{self, ChunkDecoder, Header};
use crate::error::{Error, Result};

/// Magic at offset 0: fixarray(14), fixstr(8) "b2frame\0".
pub const MAGIC: &[u8; 10] = b"\x9e\xa8b2frame\x00";
/// Length of the fixed header part.
const FIXED: usize = 87;

fn bad(why: impl std::fmt::Display) -> Error {
    Error::filter(0, "blosc2", format!("frame: {why}"))
}

fn be(b: &[u8], pos: usize, n: usize) -> Result<u64> {
    let s = b.get(pos..pos + n).ok_or_else(|| bad("truncated"))?;
    Ok(s.iter().fold(0u64, |acc, &x| acc << 8 | u64::from(x)))
}

fn expect(b: &[u8], pos: usize, marker: u8) -> Result<()> {
    match b.get(pos) {
        Some(&m) if m == marker => Ok(()),
        Some(&m) => Err(bad(format!(
            "marker {m:#04x} at {pos}, expected {marker:#04x}"
        ))),
        None => Err(bad("truncated")),
    }
}

/// Where chunk `i` of a frame lives.
#[derive(Debug, PartialEq, Eq)]
pub enum ChunkRef<'a> {
    /// A stored Blosc2 chunk.
    Data(&'a [u8]),
    /// A special chunk of `len` bytes: bit 0 zeros, bit 2 uninitialised,
    /// bit 1 NaN (tested in that order).
    Special {
        /// Kind bits: the offset's top byte without its sign bit.
        kind: u8,
        /// Uncompressed size of the chunk in bytes.
        len: usize,
    },
}

/// A parsed contiguous frame.
#[derive(Debug)]
pub struct Frame<'a> {
    /// The whole frame, header to trailer.
    pub bytes: &'a [u8],
    /// Header length in bytes, metalayers included: where the data chunks start.
    pub header_len: usize,
    /// Uncompressed size of all chunks together, in bytes.
    pub nbytes: usize,
    /// Stored size of the data chunks in bytes (special chunks count 0).
    pub cbytes: usize,
    /// Element size in bytes (header byte 48, at least 1).
    pub typesize: usize,
    /// The header's block size (C builds special chunks with it; negative
    /// is refused there).
    pub blocksize: i32,
    /// Uncompressed size of each chunk in bytes (the last may be shorter;
    /// 0 = variable).
    pub chunksize: usize,
    /// Metalayers by name, content bytes.
    pub metalayers: Vec<(String, &'a [u8])>,
    /// Chunk offsets relative to `header_len` (negative = special).
    pub offsets: Vec<i64>,
}

/// Does `buf` start like a frame?
///
/// Only the name "b2frame\0" counts: C-Blosc2 does not check the msgpack
/// markers in front of it (bytes 0 and 1).
pub fn is_frame(buf: &[u8]) -> bool {
    buf.get(2..10) == Some(&MAGIC[2..])
}

/// Where the trailer starts, checked as C-Blosc2 does: its length (a uint32
/// 22 bytes from the end, behind a 0xce marker) must leave room for the
/// fixed header, and the trailer must hold the map of (no) variable-length
/// metalayers at its sixth byte.
fn trailer_start(b: &[u8]) -> Result<usize> {
    let len = b.len();
    let at = len
        .checked_sub(23)
        .ok_or_else(|| bad("no room for a trailer"))?;
    if b[at] != 0xCE {
        return Err(bad(format!("trailer length marker at byte {at}")));
    }
    let tlen = be(b, at + 1, 4)? as usize;
    if tlen < 25 || tlen > len - FIXED {
        return Err(bad(format!("trailer length {tlen} at byte {}", at + 1)));
    }
    let t = len - tlen;
    if b.get(t + 6) != Some(&0xDE) {
        return Err(bad(format!(
            "trailer without its metalayer map at byte {}",
            t + 6
        )));
    }
    if be(b, t + 7, 2)? != 0 {
        return Err(Error::unsupported(
            "Blosc2 frame",
            0,
            "variable-length metalayers",
        ));
    }
    Ok(t)
}

impl<'a> Frame<'a> {
    /// Parse a frame; `max_nbytes` caps the uncompressed size it may declare.
    ///
    /// Acceptance follows C-Blosc2 as hdf5plugin 7.1 reads frames: the
    /// msgpack markers of the fixed header and of the metalayer section are
    /// not checked (C reads the fields at fixed offsets), while the filter
    /// count, type and chunk sizes, the trailer and the offsets chunk are.
    pub fn parse(bytes: &'a [u8], max_nbytes: usize) -> Result<Frame<'a>> {
        if !is_frame(bytes) {
            return Err(bad("bad magic"));
        }
        let header_len = be(bytes, 11, 4)? as usize;
        let frame_len = be(bytes, 16, 8)?;
        if frame_len != bytes.len() as u64 {
            return Err(bad(format!(
                "frame length {frame_len} but {} bytes stored",
                bytes.len()
            )));
        }
        if header_len < FIXED || header_len > bytes.len() {
            return Err(bad("header length out of range"));
        }
        let gflags = bytes[25];
        if gflags & 0x0f > 3 || gflags & 0xc0 != 0 {
            return Err(Error::unsupported(
                "Blosc2 frame",
                0,
                format!("frame format flags {gflags:#04x}"),
            ));
        }
        if bytes[26] != 0 {
            return Err(Error::unsupported("Blosc2 frame", 0, "sparse frame"));
        }
        if bytes[70] > 6 {
            return Err(bad(format!(
                "{} filters in the header (byte 70)",
                bytes[70]
            )));
        }
        let nbytes = be(bytes, 30, 8)?;
        let cbytes = be(bytes, 39, 8)? as i64;
        let typesize = be(bytes, 48, 4)? as i32;
        let blocksize = be(bytes, 53, 4)? as i32;
        let chunksize = be(bytes, 58, 4)? as i32;
        if typesize <= 0 {
            return Err(bad(format!("typesize {typesize} (byte 48)")));
        }
        if chunksize < 0 {
            return Err(bad(format!("chunk size {chunksize} (byte 58)")));
        }
        if nbytes > max_nbytes as u64 || (nbytes >> 62) != 0 {
            return Err(bad(format!(
                "nbytes {nbytes} exceeds the bound {max_nbytes}"
            )));
        }
        if cbytes < 0 || cbytes as u64 > bytes.len() as u64 {
            return Err(bad("cbytes out of range"));
        }
        let (nbytes, cbytes) = (nbytes as usize, cbytes as usize);
        let (typesize, chunksize) = (typesize as usize, chunksize as usize);
        let metalayers = parse_metalayers(bytes, header_len)?;
        let trailer = trailer_start(bytes)?;
        let off_pos = header_len
            .checked_add(cbytes)
            .filter(|&p| p < trailer)
            .ok_or_else(|| bad("offsets chunk outside the frame"))?;
        let off_chunk = &bytes[off_pos..trailer];
        let oh = Header::parse(off_chunk)?;
        if oh.typesize != 8 || !oh.extended || oh.blosc2_flags & 0x01 != 0 {
            return Err(bad(format!(
                "offsets chunk at byte {off_pos} is not a chunk of 64-bit offsets"
            )));
        }
        let nchunks = match (nbytes, chunksize) {
            (0, _) => 0,
            (n, c) if c > 0 => n.div_ceil(c),
            _ => oh.nbytes / 8,
        };
        let cap = nchunks
            .saturating_mul(8)
            .min(bytes.len().saturating_mul(8) + 64);
        let raw = chunk::decode(off_chunk, cap.min(max_nbytes.saturating_add(64)))?;
        let mut offsets: Vec<i64> = raw
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        if offsets.len() < nchunks {
            return Err(bad("offsets chunk has fewer entries than chunks"));
        }
        offsets.truncate(nchunks);
        Ok(Frame {
            bytes,
            header_len,
            nbytes,
            cbytes,
            typesize,
            blocksize,
            chunksize,
            metalayers,
            offsets,
        })
    }

    /// Content of metalayer `name`.
    pub fn metalayer(&self, name: &str) -> Option<&'a [u8]> {
        self.metalayers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| *c)
    }

    /// Number of chunks.
    pub fn nchunks(&self) -> usize {
        self.offsets.len()
    }

    /// Uncompressed size of chunk `i`.
    fn chunk_len(&self, i: usize) -> usize {
        if self.chunksize == 0 {
            return 0;
        }
        let last = self.nchunks().saturating_sub(1);
        if i == last && !self.nbytes.is_multiple_of(self.chunksize) {
            self.nbytes % self.chunksize
        } else {
            self.chunksize
        }
    }

    /// Locate chunk `i`: a stored chunk lies in the data section (C's
    /// chunk decoding refuses one whose header claims more bytes).
    pub fn chunk(&self, i: usize) -> Result<ChunkRef<'a>> {
        self.locate(i, self.header_len + self.cbytes)
    }

    /// Like [`Frame::chunk`], but bounded by the frame's end only, as C's
    /// "lazy chunk" read (the plain HDF5 filter path) is.
    pub fn chunk_to_end(&self, i: usize) -> Result<ChunkRef<'a>> {
        self.locate(i, self.bytes.len())
    }

    fn locate(&self, i: usize, end: usize) -> Result<ChunkRef<'a>> {
        let off = *self
            .offsets
            .get(i)
            .ok_or_else(|| bad("chunk index out of range"))?;
        if off < 0 {
            let kind = ((off as u64) >> 56) as u8 & 0x7f;
            return Ok(ChunkRef::Special {
                kind,
                len: self.chunk_len(i),
            });
        }
        let data = &self.bytes[self.header_len..end];
        let pos = usize::try_from(off)
            .ok()
            .filter(|&p| p < data.len())
            .ok_or_else(|| bad("chunk offset outside the frame"))?;
        let h = Header::parse(&data[pos..])?;
        Ok(ChunkRef::Data(&data[pos..pos + h.cbytes]))
    }

    /// Decode every chunk, concatenated, into `dst` (exactly `nbytes` long).
    pub fn decode_into(&self, dec: &mut ChunkDecoder, dst: &mut [u8]) -> Result<()> {
        if dst.len() != self.nbytes {
            return Err(bad("destination size differs from the frame's nbytes"));
        }
        let mut pos = 0usize;
        for i in 0..self.nchunks() {
            match self.chunk(i)? {
                ChunkRef::Data(c) => {
                    let h = Header::parse(c)?;
                    let out = dst
                        .get_mut(pos..pos + h.nbytes)
                        .ok_or_else(|| bad("chunks exceed the frame's nbytes"))?;
                    dec.decode_into(c, out)?;
                    pos += h.nbytes;
                }
                ChunkRef::Special { kind, len } => {
                    let out = dst
                        .get_mut(pos..pos + len)
                        .ok_or_else(|| bad("chunks exceed the frame's nbytes"))?;
                    fill_special(kind, self.typesize, out)?;
                    pos += len;
                }
            }
        }
        if pos != dst.len() {
            return Err(bad("chunks do not add up to the frame's nbytes"));
        }
        Ok(())
    }
}

/// Fill `out` with the values of a special chunk of `kind`.
pub fn fill_special(kind: u8, typesize: usize, out: &mut [u8]) -> Result<()> {
    // C tests the kind's bits in this order: zeros, uninitialised, NaN.
    if kind & 1 != 0 || kind & 4 != 0 {
        out.fill(0);
    } else if kind & 2 != 0 {
        let pat: &[u8] = match typesize {
            4 => &[0, 0, 0xc0, 0x7f],
            8 => &[0, 0, 0, 0, 0, 0, 0xf8, 0x7f],
            _ => return Err(bad("NaN chunk with typesize other than 4 or 8")),
        };
        for (d, s) in out.iter_mut().zip(pat.iter().cycle()) {
            *d = *s;
        }
    } else {
        return Err(bad(format!("unknown special offset kind {kind}")));
    }
    Ok(())
}

/// Parse the metalayer map after the fixed header (§3.4.2).
fn parse_metalayers(b: &[u8], header_len: usize) -> Result<Vec<(String, &[u8])>> {
    let mut out = Vec::new();
    if header_len <= FIXED {
        return Ok(out);
    }
    // C skips the array and uint16 markers and the map size; it checks the map.
    expect(b, FIXED + 4, 0xDE)?;
    let n = be(b, FIXED + 5, 2)? as usize;
    let mut p = FIXED + 7;
    for _ in 0..n {
        let tag = *b.get(p).ok_or_else(|| bad("truncated metalayer map"))?;
        if !(0xA0..0xC0).contains(&tag) {
            return Err(bad("metalayer name is not a fixstr"));
        }
        let len = usize::from(tag - 0xA0);
        let name = b
            .get(p + 1..p + 1 + len)
            .ok_or_else(|| bad("truncated metalayer name"))?;
        p += 1 + len;
        expect(b, p, 0xD2)?;
        let off = be(b, p + 1, 4)? as usize;
        p += 5;
        expect(b, off, 0xC6)?;
        let clen = be(b, off + 1, 4)? as usize;
        // The content must lie inside the header, as C requires.
        let content = b
            .get(off.saturating_add(5)..off.saturating_add(5).saturating_add(clen))
            .filter(|_| off.saturating_add(5).saturating_add(clen) <= header_len)
            .ok_or_else(|| {
                bad(format!(
                    "metalayer content at byte {off} outside the header"
                ))
            })?;
        out.push((String::from_utf8_lossy(name).into_owned(), content));
    }
    Ok(out)
}

/// Parameters of a frame holding one chunk, as the HDF5 filter writes it.
pub struct FrameSpec<'m> {
    /// Element size in bytes, written to the header (byte 48).
    pub typesize: usize,
    /// Compression level 0–9, the high nibble of the codec flags (byte 27).
    pub clevel: u8,
    /// Compressor code, the low nibble of byte 27 and the codec byte (77).
    pub codec: u8,
    /// Filter code written to the header's filter slot 5 (the default for
    /// further chunks; the chunk carries its own).
    pub filter: u8,
    /// Metalayers as `(name, content)`, written to the header in this order.
    pub metalayers: &'m [(&'m str, Vec<u8>)],
}

/// Write a frame holding `chunk` (a Blosc2 chunk; a 32-byte zero chunk becomes a
/// special "zeros" offset) byte-identical in structure to hdf5plugin 7.1 (§3.4.6).
pub fn write_single(spec: &FrameSpec, chunk: &[u8]) -> Result<Vec<u8>> {
    let mut f = Vec::with_capacity(chunk.len() + 256);
    write_single_into(spec, &mut f, |out| {
        out.extend_from_slice(chunk);
        Ok(())
    })?;
    Ok(f)
}

/// Like [`write_single`], appending the frame to `f`; `chunk` appends the
/// Blosc2 chunk to the buffer it is given, so the chunk is encoded in place.
pub fn write_single_into(
    spec: &FrameSpec,
    f: &mut Vec<u8>,
    chunk: impl FnOnce(&mut Vec<u8>) -> Result<()>,
) -> Result<()> {
    let base = f.len();
    let mut meta = Vec::new();
    meta.push(0x93);
    meta.push(0xCD);
    meta.extend_from_slice(&[0, 0]);
    meta.push(0xDE);
    meta.extend_from_slice(&(spec.metalayers.len() as u16).to_be_bytes());
    let names_len: usize = spec.metalayers.iter().map(|(n, _)| 1 + n.len() + 5).sum();
    let map_end = FIXED + meta.len() + names_len;
    let map_size = (map_end - FIXED) as u16;
    meta[2..4].copy_from_slice(&map_size.to_be_bytes());
    let mut content_off = map_end + 3;
    for (name, c) in spec.metalayers {
        meta.push(0xA0 + name.len() as u8);
        meta.extend_from_slice(name.as_bytes());
        meta.push(0xD2);
        meta.extend_from_slice(&(content_off as u32).to_be_bytes());
        content_off += 5 + c.len();
    }
    meta.push(0xDC);
    meta.extend_from_slice(&(spec.metalayers.len() as u16).to_be_bytes());
    for (_, c) in spec.metalayers {
        meta.push(0xC6);
        meta.extend_from_slice(&(c.len() as u32).to_be_bytes());
        meta.extend_from_slice(c);
    }
    let header_len = FIXED + meta.len();
    // The fixed part is written once the chunk's sizes are known.
    f.resize(base + FIXED, 0);
    f.extend_from_slice(&meta);
    let chunk_at = f.len();
    if let Err(e) = chunk(f) {
        f.truncate(base);
        return Err(e);
    }
    let h = match Header::parse(&f[chunk_at..]) {
        Ok(h) => h,
        Err(e) => {
            f.truncate(base);
            return Err(e);
        }
    };
    let zero = h.special() == chunk::special::ZERO;
    if zero {
        f.truncate(chunk_at);
    }
    let stored_len = f.len() - chunk_at;
    let offset: u64 = if zero { 0x8100_0000_0000_0000 } else { 0 };
    f.extend_from_slice(&offsets_chunk(offset));
    f.extend_from_slice(TRAILER);
    let frame_len = f.len() - base;
    let mut x = Vec::with_capacity(FIXED);
    x.extend_from_slice(MAGIC);
    x.push(0xD2);
    x.extend_from_slice(&(header_len as u32).to_be_bytes());
    x.push(0xCF);
    x.extend_from_slice(&(frame_len as u64).to_be_bytes());
    x.extend_from_slice(&[0xA4, 0x12, 0x00, spec.codec | (spec.clevel << 4), 0x03]);
    x.push(0xD3);
    x.extend_from_slice(&(h.nbytes as u64).to_be_bytes());
    x.push(0xD3);
    x.extend_from_slice(&(stored_len as u64).to_be_bytes());
    x.push(0xD2);
    x.extend_from_slice(&(spec.typesize as u32).to_be_bytes());
    x.push(0xD2);
    x.extend_from_slice(&(h.blocksize as u32).to_be_bytes());
    x.push(0xD2);
    x.extend_from_slice(&(h.nbytes as u32).to_be_bytes());
    x.extend_from_slice(&[0xD1, 0, 0, 0xD1, 0, 1, 0xC2, 0xD8, 6]);
    x.extend_from_slice(&[0, 0, 0, 0, 0, spec.filter, spec.codec, 0]);
    x.extend_from_slice(&[0; 8]);
    debug_assert_eq!(x.len(), FIXED);
    f[base..base + FIXED].copy_from_slice(&x);
    Ok(())
}

/// The 40-byte memcpyed offsets chunk holding one offset (§3.4.3).
fn offsets_chunk(offset: u64) -> Vec<u8> {
    let mut c = vec![0x05, 0x01, 0x07, 0x08, 8, 0, 0, 0, 8, 0, 0, 0, 40, 0, 0, 0];
    c.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    c.extend_from_slice(&offset.to_le_bytes());
    c
}

/// Trailer without variable-length metalayers (§3.4.5).
const TRAILER: &[u8; 35] =
    b"\x94\x01\x93\xcd\x00\x06\xde\x00\x00\xdc\x00\x00\xce\x00\x00\x00\x23\xd8\x00\
\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00";
