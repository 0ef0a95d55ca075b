//! Filter `bzip2` (id 307): one standard bzip2 stream per chunk, `docs/filters-format.md` §5.4.
//!
//! `cd_values = [block size 1–9]` (×100 kB; default 9). Uses the `bzip2` crate with
//! its pure-Rust backend; decoding stops at the end of the first stream (as the
//! PyTables/HDF5 plugin does) and never produces more than `ctx.max_output` bytes.

use std::io::{Read, Write};

use crate::error::{Error, Result};
use crate::ChunkContext;

const NAME: &str = "bzip2";

fn err(reason: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, reason)
}

/// Undo the filter.
pub fn decode(input: &[u8], _cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let cap = ctx.max_output;
    let mut out = Vec::with_capacity(ctx.chunk_bytes.min(cap));
    bzip2::read::BzDecoder::new(input)
        .take(cap as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| err(format!("corrupt bzip2 stream: {e}")))?;
    if out.len() > cap {
        return Err(err(format!(
            "decoded data exceeds the bound of {cap} bytes"
        )));
    }
    Ok(out)
}

/// Apply the filter at block size `cd_values[0]` (1–9, default 9).
pub fn encode(input: &[u8], cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    let level = match cd_values.first() {
        None => 9,
        Some(&l) if (1..=9).contains(&l) => l,
        Some(&l) => return Err(err(format!("block size {l} not in 1-9"))),
    };
    let mut enc = bzip2::write::BzEncoder::new(
        Vec::with_capacity(input.len() / 2 + 64),
        bzip2::Compression::new(level),
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
    fn round_trip_and_header() {
        let data: Vec<u8> = (0..30_000u32).map(|i| (i % 13) as u8).collect();
        let enc = encode(&data, &[9], &ctx(data.len())).unwrap();
        assert_eq!(&enc[..4], b"BZh9");
        assert_eq!(decode(&enc, &[9], &ctx(data.len())).unwrap(), data);
        let enc1 = encode(&data, &[1], &ctx(data.len())).unwrap();
        assert_eq!(&enc1[..4], b"BZh1");
        assert!(encode(&data, &[0], &ctx(data.len())).is_err());
    }

    #[test]
    fn rejects_truncated_and_oversized() {
        let data = vec![3u8; 4000];
        let enc = encode(&data, &[9], &ctx(4000)).unwrap();
        for cut in 0..enc.len() {
            assert!(decode(&enc[..cut], &[9], &ctx(4000)).is_err(), "cut {cut}");
        }
        let small = ChunkContext {
            element_size: 1,
            chunk_bytes: 10,
            max_output: 3999,
        };
        assert!(decode(&enc, &[9], &small).is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn prop_round_trip(data in proptest::collection::vec(0u8..4, 0..3000), level in 1u32..=9) {
            let c = ctx(data.len());
            let enc = encode(&data, &[level], &c).unwrap();
            proptest::prop_assert_eq!(decode(&enc, &[level], &c).unwrap(), data);
        }

        #[test]
        fn prop_garbage_never_panics(data in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            let _ = decode(&data, &[9], &ctx(1000));
        }
    }
}
