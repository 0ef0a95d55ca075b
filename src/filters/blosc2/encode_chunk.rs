//! Blosc2 chunk encoding with C-Blosc2's rules (`shared/spec/filters.md`
//! §3.8: split rule, automatic block size, encoder steps; §3.9 filters).
//! Containers (headers, bstarts, stream prefixes, run streams, memcpyed and
//! zero chunks) match C-Blosc2 byte for byte; codec payloads come from the
//! pure-Rust codecs and may differ from the C libraries' bytes.

use super::chunk::filter;
use super::codec::{self, code};
use crate::error::{Error, Result};
use crate::filters::{bitshuffle, shuffle};

/// What to encode with.
#[derive(Clone, Debug)]
pub struct Settings {
    pub typesize: usize,
    pub clevel: u8,
    /// Compressor code (0 blosclz, 1 lz4, 2 lz4hc, 4 zlib, 5 zstd).
    pub codec: u8,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    /// Block size in bytes, 0 = automatic.
    pub blocksize: usize,
}

fn is_hcr(codec: u8) -> bool {
    matches!(codec, code::LZ4HC | code::ZLIB | code::ZSTD)
}

/// Split rule (§3.8.1): one stream per byte of the type?
pub fn split_rule(
    codec: u8,
    clevel: u8,
    has_shuffle: bool,
    typesize: usize,
    blocksize: usize,
) -> bool {
    let codec_ok =
        matches!(codec, code::BLOSCLZ | code::LZ4) || (codec == code::ZSTD && clevel <= 5);
    codec_ok && has_shuffle && typesize <= 16 && blocksize / typesize.max(1) >= 32
}

/// Automatic block size (§3.8.2). `filter` is the filter in use (1 = byte shuffle).
pub fn stune_blocksize(nbytes: usize, typesize: usize, clevel: u8, codec: u8, filter: u8) -> usize {
    let ts = if typesize > 255 { 1 } else { typesize.max(1) };
    if nbytes < ts {
        return 1;
    }
    let split = split_rule(codec, clevel, filter == filter::SHUFFLE, ts, nbytes);
    let mut bs = nbytes;
    if nbytes >= 32768 {
        let hcr = is_hcr(codec);
        let base = 32768 * if hcr { 2 } else { 1 };
        bs = match clevel {
            0 => base / 4,
            1 => base / 2,
            2 => base,
            3 => base * 2,
            4 | 5 => base * 4,
            6..=8 => base * 8,
            _ => base * 8 * if hcr { 2 } else { 1 },
        };
    }
    if clevel > 0 && split {
        let per = match clevel {
            1..=3 => 32 << 10,
            4..=6 => 64 << 10,
            7 => 128 << 10,
            8 => 256 << 10,
            _ => 512 << 10,
        };
        bs = (per * ts).clamp(32 << 10, 4 << 20);
    }
    bs = bs.min(nbytes);
    if bs > ts {
        bs -= bs % ts;
    }
    bs
}

/// Result of compressing one stream.
pub enum StreamOut {
    /// All zero bytes (Blosc2 only).
    Zero,
    /// One repeated non-zero byte (Blosc2 only).
    Run(u8),
    /// Stored raw.
    Raw,
    /// Codec output, smaller than the stream.
    Coded(Vec<u8>),
}

/// Compress one stream (§3.8.3 step 3); `runs` enables run encodings.
pub fn compress_stream(codec: u8, clevel: u8, src: &[u8], runs: bool) -> StreamOut {
    if runs {
        if let Some((&first, rest)) = src.split_first() {
            if rest.iter().all(|&b| b == first) {
                return if first == 0 {
                    StreamOut::Zero
                } else {
                    StreamOut::Run(first)
                };
            }
        }
    }
    match codec::compress(codec, clevel, src) {
        Some(c) if !c.is_empty() && c.len() < src.len() => StreamOut::Coded(c),
        _ => StreamOut::Raw,
    }
}

/// Append a stream with its `csize` prefix.
pub fn push_stream(out: &mut Vec<u8>, s: &StreamOut, raw: &[u8]) {
    match s {
        StreamOut::Zero => out.extend_from_slice(&0i32.to_le_bytes()),
        StreamOut::Run(b) => {
            out.extend_from_slice(&(-i32::from(*b)).to_le_bytes());
            out.push(0x01);
        }
        StreamOut::Raw => {
            out.extend_from_slice(&(raw.len() as i32).to_le_bytes());
            out.extend_from_slice(raw);
        }
        StreamOut::Coded(c) => {
            out.extend_from_slice(&(c.len() as i32).to_le_bytes());
            out.extend_from_slice(c);
        }
    }
}

/// Reusable encoder scratch.
#[derive(Default)]
pub struct ChunkEncoder {
    a: Vec<u8>,
    b: Vec<u8>,
    bits: Vec<u8>,
}

fn header(s: &Settings, flags: u8, nbytes: usize, bs: usize, blosc2_flags: u8) -> Vec<u8> {
    let mut h = Vec::with_capacity(32);
    h.extend_from_slice(&[
        5,
        1,
        flags,
        if s.typesize > 255 {
            1
        } else {
            s.typesize as u8
        },
    ]);
    h.extend_from_slice(&(nbytes as i32).to_le_bytes());
    h.extend_from_slice(&(bs as i32).to_le_bytes());
    h.extend_from_slice(&[0; 4]);
    h.extend_from_slice(&s.filters);
    h.extend_from_slice(&[s.codec, 0]);
    h.extend_from_slice(&s.filters_meta);
    h.extend_from_slice(&[0, blosc2_flags]);
    h
}

fn set_cbytes(c: &mut [u8]) {
    let n = (c.len() as i32).to_le_bytes();
    c[12..16].copy_from_slice(&n);
}

impl ChunkEncoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Encode `src` as one Blosc2 chunk.
    pub fn encode(&mut self, src: &[u8], s: &Settings) -> Result<Vec<u8>> {
        let nbytes = src.len();
        if nbytes > i32::MAX as usize - 64 {
            return Err(Error::filter(0, "blosc2", "chunk too large for Blosc2"));
        }
        let ts = if s.typesize > 255 {
            1
        } else {
            s.typesize.max(1)
        };
        let fmt = codec::format_of(s.codec).filter(|&f| f != codec::format::SNAPPY);
        let fmt = fmt.ok_or_else(|| Error::UnsupportedCodec {
            filter: "blosc2",
            codec: u32::from(s.codec),
            name: codec::name_of(u32::from(s.codec)).into(),
        })?;
        let has = |f: u8| s.filters.contains(&f);
        let bs = if s.blocksize == 0 {
            stune_blocksize(
                nbytes,
                ts,
                s.clevel,
                s.codec,
                if has(filter::SHUFFLE) { 1 } else { 0 },
            )
        } else {
            let bs = s.blocksize.min(nbytes);
            if bs > ts {
                bs - bs % ts
            } else {
                bs
            }
        }
        .max(1);
        let split = split_rule(s.codec, s.clevel, has(filter::SHUFFLE), ts, bs);
        let mut flags = 0x05 | (fmt << 5);
        if has(filter::DELTA) {
            flags |= 0x08;
        }
        if !split {
            flags |= 0x10;
        }
        if s.clevel == 0 || nbytes < 32 {
            return Ok(memcpyed(s, 0x07, nbytes, bs, src));
        }
        let nblocks = nbytes.div_ceil(bs);
        let mut out = header(s, flags, nbytes, bs, 0);
        out.resize(32 + 4 * nblocks, 0);
        let mut all_zero = true;
        for (k, blk) in src.chunks(bs).enumerate() {
            let start = out.len() as i32;
            out[32 + 4 * k..36 + 4 * k].copy_from_slice(&start.to_le_bytes());
            let filtered = self.filter_block(blk, src.get(..bs).unwrap_or(src), k, s, ts)?;
            let nstreams = if split && blk.len() == bs { ts } else { 1 };
            for part in filtered.chunks(blk.len() / nstreams) {
                let so = compress_stream(s.codec, s.clevel, part, true);
                all_zero &= matches!(so, StreamOut::Zero);
                push_stream(&mut out, &so, part);
            }
            self.a = filtered;
            if out.len() > nbytes + 32 {
                return Ok(memcpyed(s, flags | 0x02, nbytes, bs, src));
            }
        }
        if all_zero {
            let mut z = header(s, flags, nbytes, bs, 0x10);
            set_cbytes(&mut z);
            return Ok(z);
        }
        set_cbytes(&mut out);
        Ok(out)
    }

    /// Apply the filters of slots 0…5 to block `k`; `block0` is the original block 0.
    fn filter_block(
        &mut self,
        blk: &[u8],
        block0: &[u8],
        k: usize,
        s: &Settings,
        ts: usize,
    ) -> Result<Vec<u8>> {
        let mut a = std::mem::take(&mut self.a);
        a.clear();
        a.extend_from_slice(blk);
        let mut b = std::mem::take(&mut self.b);
        b.clear();
        b.resize(blk.len(), 0);
        for (&f, &meta) in s.filters.iter().zip(&s.filters_meta) {
            match f {
                filter::NONE => continue,
                filter::SHUFFLE => {
                    let es = if meta != 0 { usize::from(meta) } else { ts };
                    shuffle::shuffle(&a, &mut b, es);
                }
                filter::BITSHUFFLE => bitshuffle::bitshuffle(&a, &mut b, ts, &mut self.bits),
                filter::DELTA => {
                    delta_encode(&a, &mut b, if k == 0 { None } else { Some(block0) }, ts)
                }
                filter::TRUNC_PREC => trunc_prec(&a, &mut b, ts, meta as i8)?,
                other => {
                    return Err(Error::unsupported(
                        "Blosc2 chunk",
                        0,
                        format!("filter code {other}"),
                    ));
                }
            }
            std::mem::swap(&mut a, &mut b);
        }
        self.b = b;
        Ok(a)
    }
}

fn memcpyed(s: &Settings, flags: u8, nbytes: usize, bs: usize, src: &[u8]) -> Vec<u8> {
    let mut out = header(s, flags, nbytes, bs, 0);
    out.extend_from_slice(src);
    set_cbytes(&mut out);
    out
}

/// Delta encode (§3.9.3).
fn delta_encode(src: &[u8], dst: &mut [u8], block0: Option<&[u8]>, ts: usize) {
    let w = match ts {
        1 | 2 | 4 | 8 => ts,
        t if t % 8 == 0 => 8,
        _ => 1,
    };
    dst.copy_from_slice(src);
    let body = dst.len() / w * w;
    match block0 {
        None => {
            for i in w..body {
                dst[i] = src[i] ^ src[i - w];
            }
        }
        Some(r) => {
            for (d, r) in dst[..body].iter_mut().zip(r) {
                *d ^= *r;
            }
        }
    }
}

/// Truncate precision (§3.9.4): zero low mantissa bits of f32/f64.
fn trunc_prec(src: &[u8], dst: &mut [u8], ts: usize, p: i8) -> Result<()> {
    let mant = match ts {
        4 => 23i32,
        8 => 52,
        _ => {
            return Err(Error::filter(
                0,
                "blosc2",
                "trunc_prec needs typesize 4 or 8",
            ))
        }
    };
    let zero_bits = if p >= 0 {
        mant - i32::from(p)
    } else {
        -i32::from(p)
    };
    if zero_bits >= mant || zero_bits < 0 {
        return Err(Error::filter(
            0,
            "blosc2",
            "trunc_prec precision out of range",
        ));
    }
    dst.copy_from_slice(src);
    let mask: u64 = !((1u64 << zero_bits) - 1);
    for e in dst.chunks_exact_mut(ts) {
        let mut b = [0u8; 8];
        b[..ts].copy_from_slice(e);
        let v = u64::from_le_bytes(b) & mask;
        e.copy_from_slice(&v.to_le_bytes()[..ts]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_from_spec() {
        // lz4:1 / zstd:3 + shuffle, int16 → 64 KiB
        assert_eq!(stune_blocksize(2 << 20, 2, 1, code::LZ4, 1), 65536);
        assert_eq!(stune_blocksize(2 << 20, 2, 3, code::ZSTD, 1), 65536);
        // zstd:3 bitshuffle → 128 KiB; zstd:9 bitshuffle → 1 MiB
        assert_eq!(stune_blocksize(2 << 20, 2, 3, code::ZSTD, 2), 131072);
        assert_eq!(stune_blocksize(2 << 20, 2, 9, code::ZSTD, 2), 1 << 20);
        // blosclz:5 shuffle → 64 Ki × typesize
        assert_eq!(stune_blocksize(2 << 20, 2, 5, code::BLOSCLZ, 1), 131072);
        // 100 000-byte int16 chunks
        assert_eq!(stune_blocksize(100_000, 2, 1, code::LZ4, 1), 65536);
        assert_eq!(stune_blocksize(100_000, 2, 3, code::ZSTD, 2), 100_000);
    }
}
