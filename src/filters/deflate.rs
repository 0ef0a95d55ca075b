//! Filter `deflate` (id 1): a zlib stream (RFC 1950/1951), `docs/filters-format.md` §2.1.
//!
//! `cd_values = [level]` (0–9). Encoding at levels 1–9 goes through
//! [`deflate_encode`](crate::deflate_encode) (zlib's own output, byte for byte), level 0 (stored
//! blocks) through zlib-rs. Decoding inflates into a buffer that grows up to
//! `ctx.max_output` and fails beyond it; a stream that does not reach its end
//! (truncated, or trailing Adler-32 missing) is an error.

use std::io::Write;

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use crate::deflate_encode::Compressor;
use crate::error::{Error, Result};
use crate::ChunkContext;
use std::cell::Cell;

const NAME: &str = "deflate";

fn err(reason: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, reason)
}

/// Undo the filter: inflate one zlib stream, at most `ctx.max_output` bytes.
pub fn decode(input: &[u8], _cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    inflate_bounded(input, ctx.chunk_bytes, ctx.max_output)
}

/// Inflate one zlib stream into `dst` with `z` (reset first, so one
/// decompressor serves chunk after chunk without reallocating its window).
///
/// `Ok(Some(n))`: the stream ended (Adler-32 checked) after `n` bytes, which
/// are `dst[..n]`. `Ok(None)`: `dst` filled up before the stream ended — it
/// holds more than `dst.len()` bytes, or is cut right after them; the caller
/// decides (decoding with a larger bound, as [`decode`] does, tells the two
/// apart). A corrupt stream, or one cut before `dst` is full, is an error.
pub fn decode_into(input: &[u8], z: &mut Decompress, dst: &mut [u8]) -> Result<Option<usize>> {
    z.reset(true);
    let (mut read, mut written) = (0usize, 0usize);
    loop {
        let (in0, out0) = (z.total_in(), z.total_out());
        let status = z
            .decompress(
                input.get(read..).unwrap_or(&[]),
                dst.get_mut(written..).unwrap_or(&mut []),
                FlushDecompress::None,
            )
            .map_err(|e| err(format!("corrupt zlib stream: {e}")))?;
        let used = usize::try_from(z.total_in().saturating_sub(in0))
            .map_err(|_| err("input position overflow"))?;
        let made = usize::try_from(z.total_out().saturating_sub(out0))
            .map_err(|_| err("output position overflow"))?;
        read = read.saturating_add(used).min(input.len());
        written = written.saturating_add(made).min(dst.len());
        match status {
            Status::StreamEnd => return Ok(Some(written)),
            Status::Ok | Status::BufError => {
                if used == 0 && made == 0 {
                    if written == dst.len() {
                        return Ok(None);
                    }
                    return Err(err("truncated zlib stream"));
                }
            }
        }
    }
}

/// Inflate a zlib stream into at most `cap` bytes, starting with room for `hint`.
fn inflate_bounded(input: &[u8], hint: usize, cap: usize) -> Result<Vec<u8>> {
    // One spare byte beyond the cap lets us tell "exactly cap" from "more than cap".
    let limit = cap.saturating_add(1);
    let mut out: Vec<u8> = Vec::with_capacity(hint.max(64).min(limit));
    let mut z = Decompress::new(true);
    loop {
        if out.len() == out.capacity() {
            if out.len() >= limit {
                return Err(err(format!(
                    "inflated data exceeds the bound of {cap} bytes"
                )));
            }
            let grow = out.capacity().max(4096).min(limit - out.len());
            out.reserve_exact(grow);
        }
        let consumed = usize::try_from(z.total_in()).map_err(|_| err("input position overflow"))?;
        let rest = input.get(consumed..).unwrap_or(&[]);
        let (in0, out0) = (z.total_in(), out.len());
        let status = z
            .decompress_vec(rest, &mut out, FlushDecompress::None)
            .map_err(|e| err(format!("corrupt zlib stream: {e}")))?;
        if out.len() > cap {
            return Err(err(format!(
                "inflated data exceeds the bound of {cap} bytes"
            )));
        }
        match status {
            Status::StreamEnd => return Ok(out),
            Status::Ok | Status::BufError => {
                let progressed = z.total_in() != in0 || out.len() != out0;
                if !progressed && out.len() < out.capacity() {
                    return Err(err("truncated zlib stream"));
                }
            }
        }
    }
}

thread_local! {
    /// The last level's compressor of this thread, kept between calls of
    /// [`encode`]: a new one allocates and zeroes some 500 KiB of window, hash
    /// tables and symbol buffer, more than a 128 KiB chunk's own bytes (issue 47). Each
    /// stream starts from reset tables, so the bytes are those of a new one.
    static KEPT: Cell<Option<Compressor>> = const { Cell::new(None) };
}

/// Apply the filter: zlib stream at level `cd_values[0]` (libhdf5 requires exactly one value ≤ 9).
pub fn encode(input: &[u8], cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    let level = match cd_values {
        [level] if *level <= 9 => *level,
        _ => return Err(err("cd_values must be [level] with level 0-9")),
    };
    let kept = KEPT.with(Cell::take).filter(|c| c.level() == level);
    if let Some(mut c) = kept.or_else(|| Compressor::new(level)) {
        let mut out = Vec::new();
        c.compress(input, &mut out);
        KEPT.with(|k| k.set(Some(c)));
        return Ok(out);
    }
    let mut enc = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(input.len() / 2 + 64),
        Compression::new(level),
    );
    enc.write_all(input).map_err(err)?;
    enc.finish().map_err(err)
}

/// The level of a valid `cd_values` (exactly one value, at most 9).
pub fn level_of(cd_values: &[u32]) -> Option<u32> {
    match cd_values {
        [level] if *level <= 9 => Some(*level),
        _ => None,
    }
}

/// A compressor kept from chunk to chunk: [`encode_into`] resets it instead of
/// allocating (and faulting in) a fresh deflate state for every chunk.
pub struct Encoder {
    level: u32,
    /// zlib-rs, made on first use (level 0).
    z: Option<Compress>,
    /// Our compressor, at the levels it supports.
    ours: Option<Compressor>,
}

impl Encoder {
    /// A zlib-stream compressor at `level` (0–9).
    pub fn new(level: u32) -> Self {
        Encoder {
            level,
            z: None,
            ours: Compressor::new(level),
        }
    }

    /// The level this encoder compresses at.
    pub fn level(&self) -> u32 {
        self.level
    }
}

/// [`encode`] at the encoder's level into `out` (cleared first; its capacity
/// is reused): the same zlib stream, without a new compressor or a copy.
pub fn encode_into(input: &[u8], enc: &mut Encoder, out: &mut Vec<u8>) -> Result<()> {
    if let Some(c) = enc.ours.as_mut() {
        out.clear();
        c.compress(input, out);
        return Ok(());
    }
    let level = enc.level.min(9);
    let z = enc
        .z
        .get_or_insert_with(|| Compress::new(Compression::new(level), true));
    z.reset();
    out.clear();
    // zlib's compressBound for the first try; a stream that still does not fit grows.
    let bound = input
        .len()
        .saturating_add(input.len() >> 12)
        .saturating_add(input.len() >> 14)
        .saturating_add(64);
    out.reserve(bound);
    let mut read = 0usize;
    loop {
        let (in0, out0) = (z.total_in(), out.len());
        // All input first, then the end of the stream, as the streaming
        // encoder of [`encode`] does (so the blocks come out the same).
        let flush = if read < input.len() {
            FlushCompress::None
        } else {
            FlushCompress::Finish
        };
        let status = z
            .compress_vec(input.get(read..).unwrap_or(&[]), out, flush)
            .map_err(err)?;
        let used = usize::try_from(z.total_in().saturating_sub(in0))
            .map_err(|_| err("input position overflow"))?;
        read = read.saturating_add(used).min(input.len());
        match status {
            Status::StreamEnd => return Ok(()),
            Status::Ok | Status::BufError => {
                if out.len() == out.capacity() {
                    out.reserve(out.len().max(4096));
                } else if used == 0 && out.len() == out0 {
                    return Err(err("deflate made no progress"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(n: usize) -> ChunkContext {
        ChunkContext::new(1, n)
    }

    #[test]
    fn round_trip_levels() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        for level in 0..=9 {
            let enc = encode(&data, &[level], &ctx(data.len())).unwrap();
            assert_eq!(&enc[..1], &[0x78], "zlib header");
            assert_eq!(decode(&enc, &[level], &ctx(data.len())).unwrap(), data);
        }
    }

    #[test]
    fn rejects_bad_level_and_truncation() {
        assert!(encode(b"abc", &[10], &ctx(3)).is_err());
        assert!(encode(b"abc", &[], &ctx(3)).is_err());
        let enc = encode(&[7u8; 1000], &[6], &ctx(1000)).unwrap();
        for cut in 0..enc.len() {
            assert!(decode(&enc[..cut], &[6], &ctx(1000)).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn exact_chunk_size_is_decoded_without_growth() {
        // compressible and incompressible data: the output buffer is the
        // chunk's size, allocated once (no reallocation, no copy).
        let mut x = 1u32;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (x >> 24) as u8
            })
            .collect();
        for data in [vec![5u8; 100_000], noise] {
            let enc = encode(&data, &[4], &ctx(data.len())).unwrap();
            let out = decode(&enc, &[4], &ctx(data.len())).unwrap();
            assert_eq!(out, data);
            assert_eq!(out.capacity(), data.len());
        }
    }

    #[test]
    fn output_is_capped() {
        let data = vec![0u8; 100_000];
        let enc = encode(&data, &[9], &ctx(data.len())).unwrap();
        let small = ChunkContext {
            element_size: 1,
            chunk_bytes: 10,
            max_output: 99_999,
        };
        assert!(decode(&enc, &[9], &small).is_err());
        let exact = ChunkContext {
            max_output: 100_000,
            ..small
        };
        assert_eq!(decode(&enc, &[9], &exact).unwrap().len(), 100_000);
        let zero = ChunkContext {
            max_output: 0,
            ..small
        };
        assert!(decode(&enc, &[9], &zero).is_err());
        let empty = encode(&[], &[1], &ctx(0)).unwrap();
        assert_eq!(decode(&empty, &[1], &zero).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn decode_into_fits_overflows_and_truncates() {
        let data: Vec<u8> = (0..50_000u32)
            .map(|i| ((i % 251) ^ (i >> 9)) as u8)
            .collect();
        let enc = encode(&data, &[5], &ctx(data.len())).unwrap();
        let mut z = Decompress::new(true);
        // Exact and larger destinations (the decompressor is reused throughout).
        for extra in [0usize, 1, 1000] {
            let mut dst = vec![0xEEu8; data.len() + extra];
            assert_eq!(
                decode_into(&enc, &mut z, &mut dst).unwrap(),
                Some(data.len())
            );
            assert_eq!(&dst[..data.len()], &data[..]);
        }
        // Too small: the stream does not fit.
        for short in [1usize, 2, 4096, data.len() - 1] {
            let mut dst = vec![0u8; short];
            assert_eq!(
                decode_into(&enc, &mut z, &mut dst).unwrap(),
                None,
                "{short}"
            );
        }
        let mut none: [u8; 0] = [];
        assert_eq!(decode_into(&enc, &mut z, &mut none).unwrap(), None);
        // Cut streams: an error, or "did not end" once the output is full
        // (a stream missing only its Adler-32 trailer).
        let mut dst = vec![0u8; data.len()];
        for cut in 0..enc.len() {
            match decode_into(&enc[..cut], &mut z, &mut dst) {
                Err(_) => {}
                Ok(None) => assert!(cut + 16 >= enc.len(), "cut {cut} accepted"),
                Ok(Some(n)) => panic!("cut {cut} decoded {n} bytes"),
            }
        }
        // A corrupt checksum is an error, not data.
        let mut bad = enc.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(decode_into(&bad, &mut z, &mut dst).is_err());
        assert_eq!(
            decode_into(&enc, &mut z, &mut dst).unwrap(),
            Some(data.len())
        );
    }

    proptest::proptest! {
        #[test]
        fn prop_encode_into_equals_encode(
            data in proptest::collection::vec(0u8..8, 0..20_000),
            level in 0u32..=9,
            again in proptest::collection::vec(0u8..=255, 0..5000),
        ) {
            let c = ctx(data.len());
            let mut enc = Encoder::new(level);
            let mut out = vec![1, 2, 3];
            // A used encoder and a used buffer give the same stream as a fresh one.
            encode_into(&again, &mut enc, &mut out).unwrap();
            encode_into(&data, &mut enc, &mut out).unwrap();
            if level > 0 {
                // Stored blocks (level 0) follow the output buffer sizes; every
                // other level gives the same stream however the output is cut.
                proptest::prop_assert_eq!(&out, &encode(&data, &[level], &c).unwrap());
            }
            proptest::prop_assert_eq!(decode(&out, &[level], &c).unwrap(), data);
        }

        #[test]
        fn prop_decode_into_equals_decode(
            data in proptest::collection::vec(0u8..4, 0..6000),
            garble in proptest::option::of((0usize..3000, 1u8..=255)),
            slack in 0usize..3,
        ) {
            let c = ctx(data.len());
            let mut enc = encode(&data, &[3], &c).unwrap();
            if let Some((at, x)) = garble {
                if let Some(b) = enc.get_mut(at) {
                    *b ^= x;
                }
            }
            let mut z = Decompress::new(true);
            let mut dst = vec![0u8; data.len() + slack];
            let fast = decode_into(&enc, &mut z, &mut dst);
            let slow = inflate_bounded(&enc, 0, usize::MAX >> 1);
            match (fast, slow) {
                (Ok(Some(n)), Ok(v)) => proptest::prop_assert_eq!(&dst[..n], &v[..]),
                (Ok(None), Ok(v)) => proptest::prop_assert!(v.len() > dst.len()),
                (Ok(None), Err(_)) | (Err(_), Err(_)) => {}
                (Err(e), Ok(v)) => proptest::prop_assert!(false, "{e} but slow path gave {} bytes", v.len()),
                (Ok(Some(n)), Err(e)) => proptest::prop_assert!(false, "{n} bytes but slow path: {e}"),
            }
        }

        #[test]
        fn prop_round_trip(data in proptest::collection::vec(0u8..4, 0..3000), level in 0u32..=9) {
            let c = ctx(data.len());
            let enc = encode(&data, &[level], &c).unwrap();
            proptest::prop_assert_eq!(decode(&enc, &[level], &c).unwrap(), data);
        }

        #[test]
        fn prop_garbage_never_panics(data in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            let _ = decode(&data, &[6], &ctx(1000));
        }
    }
}
