//! Filter `zstd` (id 32015): one Zstandard frame per chunk, `docs/filters-format.md` §5.3.
//!
//! `cd_values = [level]` (a signed int32 stored as u32; absent means 3). The
//! frames themselves are made and read by [`super::zstd_codec`]: encoding at the
//! requested level with the content size in the header (the C plugin sizes its
//! output buffer from it), decoding with the output capped by `ctx.max_output`;
//! consecutive frames are concatenated as libzstd does.

use crate::error::Result;
use crate::zstd_codec;
use crate::ChunkContext;

const NAME: &str = "zstd";

/// The level stored in `cd_values[0]`, reinterpreted as signed (default 3).
pub fn level_of(cd_values: &[u32]) -> i32 {
    cd_values
        .first()
        .map_or(zstd_codec::DEFAULT_LEVEL, |&v| v as i32)
}

/// Undo the filter: decode every frame of `input`, at most `ctx.max_output` bytes in all.
pub fn decode(input: &[u8], _cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    zstd_codec::decode_bounded(input, ctx.max_output, NAME)
}

/// Apply the filter: one frame at the level of `cd_values[0]`.
pub fn encode(input: &[u8], cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    Ok(zstd_codec::compress(input, level_of(cd_values)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zstd_codec::MAGIC;

    fn ctx(n: usize) -> ChunkContext {
        ChunkContext::new(1, n)
    }

    #[test]
    fn round_trip_and_content_size() {
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 97) as u8).collect();
        let enc = encode(&data, &[3], &ctx(data.len())).unwrap();
        assert_eq!(&enc[..4], &MAGIC);
        match rusty_zstd::get_frame_header(&enc).unwrap() {
            rusty_zstd::FrameKind::Zstd(h) => assert_eq!(h.content_size, Some(20_000)),
            other => panic!("{other:?}"),
        }
        assert!(enc.len() < 2000);
        assert_eq!(decode(&enc, &[3], &ctx(data.len())).unwrap(), data);
    }

    #[test]
    fn level_comes_from_cd_values() {
        assert_eq!(level_of(&[]), 3);
        assert_eq!(level_of(&[9]), 9);
        assert_eq!(level_of(&[(-5i32) as u32]), -5);
        let data: Vec<u8> = (0..200_000u32)
            .map(|i| (((i * 31) % 253) ^ (i >> 7)) as u8)
            .collect();
        let fast = encode(&data, &[(-5i32) as u32], &ctx(data.len())).unwrap();
        let strong = encode(&data, &[19], &ctx(data.len())).unwrap();
        assert!(strong.len() < fast.len(), "{} {}", strong.len(), fast.len());
        for enc in [fast, strong] {
            assert_eq!(decode(&enc, &[], &ctx(data.len())).unwrap(), data);
        }
    }

    #[test]
    fn empty_and_concatenated_frames() {
        let enc = encode(&[], &[3], &ctx(0)).unwrap();
        assert_eq!(decode(&enc, &[3], &ctx(0)).unwrap(), Vec::<u8>::new());
        let mut two = encode(b"hello ", &[3], &ctx(6)).unwrap();
        two.extend(encode(b"world", &[3], &ctx(5)).unwrap());
        assert_eq!(decode(&two, &[3], &ctx(11)).unwrap(), b"hello world");
    }

    #[test]
    fn rejects_truncated_and_oversized() {
        let data = vec![9u8; 5000];
        let enc = encode(&data, &[3], &ctx(5000)).unwrap();
        for cut in 0..enc.len() {
            assert!(decode(&enc[..cut], &[3], &ctx(5000)).is_err(), "cut {cut}");
        }
        let small = ChunkContext {
            element_size: 1,
            chunk_bytes: 100,
            max_output: 4999,
        };
        assert!(decode(&enc, &[3], &small).is_err());
    }

    proptest::proptest! {
        #[test]
        fn prop_round_trip(data in proptest::collection::vec(0u8..4, 0..3000)) {
            let c = ctx(data.len());
            let enc = encode(&data, &[3], &c).unwrap();
            proptest::prop_assert_eq!(decode(&enc, &[3], &c).unwrap(), data);
        }

        #[test]
        fn prop_garbage_never_panics(data in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            let _ = decode(&data, &[3], &ctx(1000));
        }

        #[test]
        fn prop_truncation_is_an_error(data in proptest::collection::vec(0u8..4, 1..2000), cut in 0.0f64..1.0) {
            let c = ctx(data.len());
            let enc = encode(&data, &[3], &c).unwrap();
            let at = (enc.len() as f64 * cut) as usize;
            proptest::prop_assert!(decode(&enc[..at], &[3], &c).is_err());
        }
    }
}
