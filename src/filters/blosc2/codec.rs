//! The codecs inside Blosc streams and the bitshuffle framing
//! (`docs/filters-format.md` §3.7, §4.3): raw LZ4 blocks, Zstandard frames,
//! zlib streams, raw snappy blocks and BloscLZ. Every decoder must produce
//! exactly the expected number of bytes.

use crate::error::{Error, Result};
use crate::{blosclz, zstd_codec};

/// Blosc compressor codes (cd_values, frame codec byte, header byte 22).
pub mod code {
    /// BloscLZ, Blosc's own LZ77 codec.
    pub const BLOSCLZ: u8 = 0;
    /// LZ4 (raw LZ4 blocks).
    pub const LZ4: u8 = 1;
    /// LZ4HC: LZ4's high-compression encoder, same raw LZ4 blocks.
    pub const LZ4HC: u8 = 2;
    /// Snappy (raw snappy blocks; Blosc1 only).
    pub const SNAPPY: u8 = 3;
    /// zlib streams (RFC 1950).
    pub const ZLIB: u8 = 4;
    /// Zstandard frames.
    pub const ZSTD: u8 = 5;
}

/// Blosc header codec formats (flags bits 5–7).
pub mod format {
    /// BloscLZ streams.
    pub const BLOSCLZ: u8 = 0;
    /// Raw LZ4 blocks (from LZ4 or LZ4HC).
    pub const LZ4: u8 = 1;
    /// Raw snappy blocks (Blosc1 only).
    pub const SNAPPY: u8 = 2;
    /// zlib streams.
    pub const ZLIB: u8 = 3;
    /// Zstandard frames.
    pub const ZSTD: u8 = 4;
}

/// Header format of a compressor code (`None` for unknown codes).
pub fn format_of(code: u8) -> Option<u8> {
    match code {
        code::BLOSCLZ => Some(format::BLOSCLZ),
        code::LZ4 | code::LZ4HC => Some(format::LZ4),
        code::SNAPPY => Some(format::SNAPPY),
        code::ZLIB => Some(format::ZLIB),
        code::ZSTD => Some(format::ZSTD),
        _ => None,
    }
}

/// Name of a compressor code, for error messages.
pub fn name_of(code: u32) -> &'static str {
    match code {
        0 => "blosclz",
        1 => "lz4",
        2 => "lz4hc",
        3 => "snappy",
        4 => "zlib",
        5 => "zstd",
        36 => "jpeg2000/openhtj2k",
        37 => "jpeg2000",
        39 => "jpeg2000/j2k",
        40 => "jpeg2000/htj2k",
        _ => "unknown",
    }
}

fn fail(filter: &str, what: impl std::fmt::Display) -> Error {
    Error::filter(0, filter, what)
}

/// Decode a raw LZ4 block into exactly `dst.len()` bytes.
pub fn lz4_decode_into(src: &[u8], dst: &mut [u8], filter: &str) -> Result<()> {
    match super::lz4block::decode(src, dst) {
        Ok(n) if n == dst.len() => Ok(()),
        Ok(n) => Err(fail(
            filter,
            format!("lz4 stream gave {n} bytes, {} expected", dst.len()),
        )),
        Err(e) => Err(fail(filter, format!("lz4: {e}"))),
    }
}

/// Compress to a raw LZ4 block.
pub fn lz4_compress(src: &[u8]) -> Vec<u8> {
    lz4_flex::block::compress(src)
}

/// A reusable Zstandard frame decoder (see [`zstd_codec::Decoder`]).
#[derive(Default)]
pub struct ZstdDecoder(zstd_codec::Decoder);

impl ZstdDecoder {
    /// A decoder whose state is created on first use.
    pub fn new() -> Self {
        ZstdDecoder(zstd_codec::Decoder::new())
    }

    /// Decode one frame into exactly `dst.len()` bytes.
    pub fn decode_into(&mut self, src: &[u8], dst: &mut [u8], filter: &str) -> Result<()> {
        self.0.decode_exact(src, dst, filter)
    }
}

/// Compress to one Zstandard frame at zstd `level` (see [`zstd_codec::compress`]).
pub fn zstd_compress(src: &[u8], level: i32) -> Vec<u8> {
    zstd_codec::compress(src, level)
}

/// Decode a zlib stream into exactly `dst.len()` bytes.
pub fn zlib_decode_into(src: &[u8], dst: &mut [u8], filter: &str) -> Result<()> {
    let mut d = flate2::Decompress::new(true);
    match d.decompress(src, dst, flate2::FlushDecompress::Finish) {
        Ok(flate2::Status::StreamEnd) if d.total_out() as usize == dst.len() => Ok(()),
        Ok(_) => Err(fail(filter, "zlib stream length mismatch")),
        Err(e) => Err(fail(filter, format!("zlib: {e}"))),
    }
}

/// Compress to a zlib stream at `level` (0–9).
pub fn zlib_compress(src: &[u8], level: u32) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(src.len() / 2),
        flate2::Compression::new(level.min(9)),
    );
    // Writing to a Vec cannot fail.
    let _ = e.write_all(src);
    e.finish().unwrap_or_default()
}

/// Decode a raw snappy block into exactly `dst.len()` bytes.
pub fn snappy_decode_into(src: &[u8], dst: &mut [u8], filter: &str) -> Result<()> {
    match snap::raw::decompress_len(src) {
        Ok(n) if n == dst.len() => {}
        Ok(_) => return Err(fail(filter, "snappy length mismatch")),
        Err(e) => return Err(fail(filter, format!("snappy: {e}"))),
    }
    match snap::raw::Decoder::new().decompress(src, dst) {
        Ok(n) if n == dst.len() => Ok(()),
        Ok(_) => Err(fail(filter, "snappy length mismatch")),
        Err(e) => Err(fail(filter, format!("snappy: {e}"))),
    }
}

/// Decoder state shared by the streams of one chunk.
#[derive(Default)]
pub struct Decoders {
    zstd: ZstdDecoder,
}

impl Decoders {
    /// Decode one stream of header codec `fmt` into exactly `dst.len()` bytes.
    pub fn decode(&mut self, fmt: u8, src: &[u8], dst: &mut [u8], filter: &str) -> Result<()> {
        match fmt {
            format::BLOSCLZ => {
                blosclz::decode_into(src, dst).map_err(|e| fail(filter, format!("blosclz: {e}")))
            }
            format::LZ4 => lz4_decode_into(src, dst, filter),
            format::SNAPPY => snappy_decode_into(src, dst, filter),
            format::ZLIB => zlib_decode_into(src, dst, filter),
            format::ZSTD => self.zstd.decode_into(src, dst, filter),
            other => Err(Error::UnsupportedCodec {
                filter: if filter == "blosc" { "blosc" } else { "blosc2" },
                codec: u32::from(other),
                name: format!("codec format {other}"),
            }),
        }
    }
}

/// Compress one stream with compressor `code` at `clevel`; `None` for codes
/// this crate cannot write.
pub fn compress(code: u8, clevel: u8, src: &[u8]) -> Option<Vec<u8>> {
    match code {
        code::BLOSCLZ => Some(blosclz::compress(src, clevel)),
        code::LZ4 | code::LZ4HC => Some(lz4_compress(src)),
        code::ZLIB => Some(zlib_compress(src, u32::from(clevel))),
        code::ZSTD => Some(zstd_compress(src, zstd_level(clevel))),
        _ => None,
    }
}

/// Blosc clevel → zstd level, as C-Blosc2's `zstd_wrap_compress` (and
/// C-Blosc 1.x's) maps it: `2·clevel − 1` below 9, `ZSTD_maxCLevel()` (22)
/// from 9 on. (Its "level 8 → max − 2" line never fires: the mapped level is
/// odd.) clevel 0 never reaches a codec (Blosc stores the chunk raw).
pub fn zstd_level(clevel: u8) -> i32 {
    if clevel >= 9 {
        zstd_codec::MAX_LEVEL
    } else {
        2 * i32::from(clevel) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zstd_level_matches_c_blosc2() {
        let got: Vec<i32> = (1..=10).map(zstd_level).collect();
        assert_eq!(got, [1, 3, 5, 7, 9, 11, 13, 15, 22, 22]);
    }

    #[test]
    fn zstd_stream_round_trip_at_blosc_levels() {
        let src: Vec<u8> = (0..65_536u32).map(|i| ((i / 3) % 200) as u8).collect();
        let mut dec = Decoders::default();
        let mut sizes = Vec::new();
        for clevel in [1u8, 5, 9] {
            let c = compress(code::ZSTD, clevel, &src).unwrap();
            let mut dst = vec![0u8; src.len()];
            dec.decode(format::ZSTD, &c, &mut dst, "blosc2").unwrap();
            assert_eq!(dst, src, "clevel {clevel}");
            sizes.push(c.len());
        }
        assert!(sizes[2] <= sizes[0], "{sizes:?}");
    }
}
