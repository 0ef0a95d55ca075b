//! Round trips through zlib-rs (flate2), the zlib wrapper, and the size bound.

use super::*;
use crate::test_support::noise;
use flate2::{Decompress, FlushDecompress, Status};
use proptest::prelude::*;

/// Inflate a zlib stream with zlib-rs, checking it ends exactly at the input's end.
fn inflate(z: &[u8], expect_len: usize) -> Vec<u8> {
    let mut d = Decompress::new(true);
    let mut out = Vec::with_capacity(expect_len + 1);
    let st = d
        .decompress_vec(z, &mut out, FlushDecompress::Finish)
        .expect("valid stream");
    assert_eq!(st, Status::StreamEnd, "stream did not end");
    assert_eq!(d.total_in() as usize, z.len(), "trailing bytes");
    out
}

/// zlib's compressBound.
fn zlib_bound(n: usize) -> usize {
    n + (n >> 12) + (n >> 14) + (n >> 25) + 13
}

const LEVELS: [u32; 9] = [1, 2, 3, 4, 5, 6, 7, 8, 9];

fn check(data: &[u8]) {
    for level in LEVELS {
        let mut c = Compressor::new(level).unwrap();
        let mut out = vec![0xAB];
        c.compress(data, &mut out);
        assert_eq!(out[0], 0xAB);
        let z = &out[1..];
        assert!(
            z.len() <= zlib_bound(data.len()),
            "{} > bound for {}",
            z.len(),
            data.len()
        );
        assert!(z.len() <= data.len() + 6 + 5 * data.len().div_ceil(65535).max(1));
        assert_eq!(&z[..2], &zlib_header(level));
        assert_eq!(u16::from_be_bytes([z[0], z[1]]) % 31, 0);
        let back = inflate(z, data.len());
        assert!(
            back == data,
            "level {level}: round trip differs ({} bytes)",
            data.len()
        );
        // The same compressor again gives the same stream.
        let mut again = Vec::new();
        c.compress(data, &mut again);
        assert_eq!(&again[..], z);
    }
}

#[test]
fn header_and_trailer() {
    assert_eq!(zlib_header(4), [0x78, 0x5E]);
    assert_eq!(zlib_header(6), [0x78, 0x9C]);
    assert_eq!(zlib_header(1), [0x78, 0x01]);
    assert_eq!(zlib_header(9), [0x78, 0xDA]);
    assert_eq!(adler32(b""), 1);
    assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    let data = noise(100_000, 3);
    let mut a = 1u32;
    let mut b = 0u32;
    for &x in &data {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    assert_eq!(adler32(&data), (b << 16) | a);
    let mut c = Compressor::new(4).unwrap();
    let mut out = Vec::new();
    c.compress(&data, &mut out);
    assert_eq!(&out[out.len() - 4..], &adler32(&data).to_be_bytes());
}

#[test]
fn fixed_inputs() {
    check(&[]);
    for n in 0..300 {
        check(&noise(n, n as u64));
        check(&vec![b'a'; n]);
        check(&b"abcabcabd".repeat(n / 9 + 1)[..n]);
    }
    check(&vec![0u8; 1 << 20]);
    let text = b"the quick brown fox jumps over the lazy dog; ".repeat(5000);
    check(&text);
}

#[test]
fn incompressible_within_bound() {
    for n in [1usize, 100, 65535, 65536, 70000, 300_000, 1 << 20] {
        let data = noise(n, 7 + n as u64);
        let mut c = Compressor::new(4).unwrap();
        let mut out = Vec::new();
        c.compress(&data, &mut out);
        assert!(out.len() <= zlib_bound(n), "{n}: {}", out.len());
        assert_eq!(inflate(&out, n), data);
    }
}

/// Inputs of several shapes: random, runs, small alphabets, repeated blocks.
fn shaped() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200_000),
        proptest::collection::vec((any::<u8>(), 1usize..300), 0..2000).prop_map(|runs| runs
            .into_iter()
            .flat_map(|(b, n)| std::iter::repeat_n(b, n))
            .collect()),
        (2u8..6, proptest::collection::vec(any::<u8>(), 0..200_000))
            .prop_map(|(k, v)| v.into_iter().map(|x| x % k).collect()),
        (
            proptest::collection::vec(any::<u8>(), 1..5000),
            1usize..60,
            proptest::collection::vec(any::<u8>(), 0..50)
        )
            .prop_map(|(blk, times, tail)| {
                let mut v = Vec::new();
                for t in 0..times {
                    v.extend_from_slice(&blk);
                    v.push(t as u8);
                }
                v.extend_from_slice(&tail);
                v
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn prop_round_trip(data in shaped()) {
        check(&data);
    }
}
