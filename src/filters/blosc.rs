//! Blosc (Blosc1) as the HDF5 filter 32001 (`docs/filters-format.md` §4):
//! one Blosc1 chunk (format version 2, 16-byte header) per HDF5 chunk.
//! Decoding shares the chunk decoder of [`crate::blosc2::chunk`];
//! encoding follows C-Blosc 1.21's block-size and split rules (§4.4).

use crate::blosc2::chunk::ChunkDecoder;
use crate::blosc2::codec::{self, code};
use crate::blosc2::encode_chunk::{compress_stream, push_stream, StreamOut};
use crate::error::{Error, Result};
use crate::{bitshuffle, shuffle, ChunkContext};

const NAME: &str = "blosc";

fn fail(why: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, why)
}

/// Undo the filter.
///
/// The header is checked as C-Blosc 1.x (hdf5plugin's Blosc filter) checks
/// it: format version 1 or 2, codec format version 1, a block size within
/// the chunk. C does not read the header's `cbytes` (the filter does not
/// pass the buffer's size), so neither do we beyond its sign: the stored
/// bytes bound the chunk.
pub fn decode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let _ = cd_values;
    let head = input
        .get(..16)
        .ok_or_else(|| fail("chunk shorter than its header"))?;
    if !(1..=2).contains(&head[0]) {
        return Err(Error::unsupported(
            "Blosc chunk",
            0,
            format!("chunk format version {}", head[0]),
        ));
    }
    if head[1] != 1 {
        return Err(fail(format!("codec format version {}", head[1])));
    }
    let word = |p: usize| i32::from_le_bytes([head[p], head[p + 1], head[p + 2], head[p + 3]]);
    let (nbytes, blocksize, cbytes) = (word(4), word(8), word(12));
    if (nbytes > 0 && blocksize > nbytes) || cbytes < 0 {
        return Err(fail("block size larger than the chunk, or negative cbytes"));
    }
    if cbytes as usize == input.len() {
        return ChunkDecoder::new().decode(input, ctx.max_output);
    }
    let mut fixed = input.to_vec();
    let len = i32::try_from(input.len()).map_err(|_| fail("chunk too large"))?;
    fixed[12..16].copy_from_slice(&len.to_le_bytes());
    ChunkDecoder::new().decode(&fixed, ctx.max_output)
}

/// Settings read from `cd_values` (§4.1).
struct Params {
    typesize: usize,
    clevel: u8,
    shuffle: u8,
    codec: u8,
}

fn params(cd: &[u32], ctx: &ChunkContext) -> Result<Params> {
    let get = |i: usize, d: u32| cd.get(i).copied().unwrap_or(d);
    let typesize = match get(2, 0) {
        0 => ctx.element_size.max(1),
        t if t > 255 => 1,
        t => t as usize,
    };
    Ok(Params {
        typesize,
        clevel: u8::try_from(get(4, 5))
            .map_err(|_| fail("clevel out of range"))?
            .min(9),
        shuffle: u8::try_from(get(5, 1)).map_err(|_| fail("shuffle out of range"))?,
        codec: u8::try_from(get(6, 0)).map_err(|_| fail("codec out of range"))?,
    })
}

/// Blosc1 split rule: every codec but zstd, small types, ≥ 128 elements per block.
fn split(codec: u8, ts: usize, bs: usize) -> bool {
    codec != code::ZSTD && ts <= 16 && bs / ts >= 128
}

/// C-Blosc 1.21 automatic block size (§4.4).
pub fn compute_blocksize(nbytes: usize, ts: usize, clevel: u8, codec: u8) -> usize {
    if nbytes < ts {
        return 1;
    }
    let mut bs = nbytes;
    if nbytes >= 32768 {
        let hcr = matches!(codec, code::LZ4HC | code::ZLIB | code::ZSTD);
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
    if clevel > 0 && split(codec, ts, bs) {
        bs = (bs.min(256 << 10) * ts).clamp(64 << 10, 1 << 20);
    }
    bs = bs.min(nbytes);
    if bs > ts {
        bs -= bs % ts;
    }
    bs
}

/// Apply the filter. Fails (so HDF5 stores the chunk raw) when Blosc cannot
/// make the chunk smaller, as the C filter does.
pub fn encode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let c = encode_unskipped(input, cd_values, ctx)?;
    if c.len() > input.len() {
        return Err(fail("Blosc cannot shrink this chunk"));
    }
    Ok(c)
}

/// [`encode`] also where the frame is larger than the chunk (the C filter
/// declines then): a frame every Blosc decoder reads.
pub(crate) fn encode_unskipped(
    input: &[u8],
    cd_values: &[u32],
    ctx: &ChunkContext,
) -> Result<Vec<u8>> {
    compress(input, &params(cd_values, ctx)?)
}

fn compress(src: &[u8], p: &Params) -> Result<Vec<u8>> {
    let nbytes = src.len();
    if nbytes > i32::MAX as usize - 64 {
        return Err(fail("chunk too large for Blosc"));
    }
    let fmt = match p.codec {
        code::SNAPPY => {
            return Err(Error::UnsupportedCodec {
                filter: NAME,
                codec: 3,
                name: "snappy (encode)".into(),
            })
        }
        c => codec::format_of(c).ok_or_else(|| Error::UnsupportedCodec {
            filter: NAME,
            codec: u32::from(c),
            name: codec::name_of(u32::from(c)).into(),
        })?,
    };
    let ts = p.typesize;
    let bs = compute_blocksize(nbytes, ts, p.clevel, p.codec).max(1);
    let do_split = split(p.codec, ts, bs);
    let mut flags = fmt << 5;
    match p.shuffle {
        1 => flags |= 0x01,
        2 => flags |= 0x04,
        _ => {}
    }
    if !do_split {
        flags |= 0x10;
    }
    let mut out = vec![2, 1, flags, ts as u8];
    out.extend_from_slice(&(nbytes as i32).to_le_bytes());
    out.extend_from_slice(&(bs as i32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    if p.clevel == 0 || nbytes < 128 {
        return Ok(memcpyed(out, src));
    }
    let nblocks = nbytes.div_ceil(bs);
    out.resize(16 + 4 * nblocks, 0);
    let mut filtered = vec![0u8; bs];
    let mut scratch = Vec::new();
    for (k, blk) in src.chunks(bs).enumerate() {
        let start = out.len() as i32;
        out[16 + 4 * k..20 + 4 * k].copy_from_slice(&start.to_le_bytes());
        let f = &mut filtered[..blk.len()];
        let n = blk.len() / ts;
        match p.shuffle {
            1 if ts > 1 => shuffle::shuffle(blk, f, ts),
            2 if n.is_multiple_of(8) && bs >= ts => {
                bitshuffle::bitshuffle(blk, f, ts, &mut scratch)
            }
            _ => f.copy_from_slice(blk),
        }
        let nstreams = if do_split && blk.len() == bs { ts } else { 1 };
        for part in f.chunks(blk.len() / nstreams) {
            let so = compress_stream(p.codec, p.clevel, part, false);
            let so = match so {
                StreamOut::Coded(c) => StreamOut::Coded(c),
                _ => StreamOut::Raw,
            };
            push_stream(&mut out, &so, part);
        }
        if out.len() > nbytes + 16 {
            out.truncate(16);
            out[2] |= 0x02;
            return Ok(memcpyed(out, src));
        }
    }
    let cb = (out.len() as i32).to_le_bytes();
    out[12..16].copy_from_slice(&cb);
    Ok(out)
}

fn memcpyed(mut head: Vec<u8>, src: &[u8]) -> Vec<u8> {
    head.truncate(16);
    head[2] |= 0x02;
    head.extend_from_slice(src);
    let cb = (head.len() as i32).to_le_bytes();
    head[12..16].copy_from_slice(&cb);
    head
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn block_size_rules() {
        assert_eq!(compute_blocksize(100_000, 2, 5, code::LZ4), 100_000);
        assert_eq!(compute_blocksize(8192, 2, 5, code::LZ4), 8192);
        assert_eq!(compute_blocksize(4 << 20, 2, 5, code::ZSTD), 262_144);
    }

    /// The header checks C-Blosc 1.x makes, and the `cbytes` it does not read.
    #[test]
    fn header_checked_as_c_blosc1() {
        let data: Vec<u8> = (0..8192u32).map(|i| (i / 7 % 50) as u8).collect();
        let cd = [2, 2, 2, 8192, 5, 1, 1];
        let ctx = ChunkContext::new(2, 8192);
        let c = compress(&data, &params(&cd, &ctx).unwrap()).unwrap();
        let with = |pos: usize, x: u8| {
            let mut g = c.clone();
            g[pos] ^= x;
            decode(&g, &cd, &ctx)
        };
        assert!(with(0, 1).is_err(), "format version 3");
        assert!(with(1, 1).is_err(), "codec format version 0");
        assert!(with(9, 0x40).is_err(), "block size past the chunk");
        assert_eq!(with(12, 1).unwrap(), data, "cbytes is not read");
        assert_eq!(with(14, 1).unwrap(), data, "cbytes is not read");
        assert!(with(15, 0x80).is_err(), "negative cbytes");
    }

    proptest! {
        #[test]
        fn round_trip(ts in 1usize..=16, n in 0usize..3000, codec in prop::sample::select(vec![0u32, 1, 4, 5]),
                      sh in 0u32..3, seed in any::<u8>()) {
            let data: Vec<u8> = (0..n * ts + n % 3).map(|i| ((i / 5) as u8).wrapping_mul(seed)).collect();
            let cd = [2, 2, ts as u32, data.len() as u32, 5, sh, codec];
            let ctx = ChunkContext::new(ts, data.len());
            let p = params(&cd, &ctx).unwrap();
            let c = compress(&data, &p).unwrap();
            prop_assert_eq!(decode(&c, &cd, &ctx).unwrap(), data);
        }
    }
}
