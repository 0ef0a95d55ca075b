//! Filter `deflate` (id 1): a zlib stream (RFC 1950/1951), `shared/spec/filters.md` §2.1.
//!
//! `cd_values = [level]` (0–9). Decoding inflates into a buffer that grows up to
//! `ctx.max_output` and fails beyond it; a stream that does not reach its end
//! (truncated, or trailing Adler-32 missing) is an error.

use std::io::Write;

use flate2::{Compression, Decompress, FlushDecompress, Status};

use crate::error::{Error, Result};
use crate::filters::ChunkContext;

const NAME: &str = "deflate";

fn err(reason: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, reason)
}

/// Undo the filter: inflate one zlib stream, at most `ctx.max_output` bytes.
pub fn decode(input: &[u8], _cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    inflate_bounded(input, ctx.chunk_bytes, ctx.max_output)
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

/// Apply the filter: zlib stream at level `cd_values[0]` (libhdf5 requires exactly one value ≤ 9).
pub fn encode(input: &[u8], cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    let level = match cd_values {
        [level] if *level <= 9 => *level,
        _ => return Err(err("cd_values must be [level] with level 0-9")),
    };
    let mut enc = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(input.len() / 2 + 64),
        Compression::new(level),
    );
    enc.write_all(input).map_err(err)?;
    enc.finish().map_err(err)
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

    proptest::proptest! {
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
