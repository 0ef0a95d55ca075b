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

/// HDF5-shuffled int16 random walks (steps of at most `step`), `n` values.
fn shuffled_walk(n: usize, step: i16, seed: u64) -> Vec<u8> {
    let r = noise(n, seed);
    let mut v = 0i16;
    let vals: Vec<i16> = r
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if i % 256 == 0 {
                v = 0;
            }
            v = v.wrapping_add((b % (2 * step as u8 + 1)) as i16 - step);
            v
        })
        .collect();
    let mut out: Vec<u8> = vals.iter().map(|x| x.to_le_bytes()[0]).collect();
    out.extend(vals.iter().map(|x| x.to_le_bytes()[1]));
    out
}

/// Inputs of several shapes: random, runs, small alphabets, repeated
/// blocks, shuffled int16 random walks (up to 320 KiB: several window slides).
fn shaped() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (0usize..160_000, 1i16..8, any::<u64>()).prop_map(|(n, s, seed)| shuffled_walk(n, s, seed)),
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

    /// The 4-byte shortcut of the match search gives zlib's plain walk's
    /// stream, byte for byte, at every level that uses it.
    #[test]
    fn prop_shortcut_is_exact(data in shaped(), level in 3u32..=9) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        Compressor::new(level).unwrap().compress(&data, &mut a);
        Compressor::plain(level).compress(&data, &mut b);
        prop_assert!(a == b, "level {level}: {} vs {} bytes", a.len(), b.len());
    }
}

#[test]
fn shortcut_is_exact_on_fixed_inputs() {
    let mut inputs = vec![
        Vec::new(),
        vec![7u8],
        shuffled_walk(65536, 3, 1),
        shuffled_walk(200_000, 3, 2),
        shuffled_walk(100_000, 1, 3),
        vec![0u8; 300_000],
        b"abcabcabd".repeat(20_000),
    ];
    inputs.push(noise(100_000, 4));
    for data in &inputs {
        for level in 3..=9 {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            Compressor::new(level).unwrap().compress(data, &mut a);
            Compressor::plain(level).compress(data, &mut b);
            assert!(a == b, "level {level}, {} bytes in", data.len());
        }
    }
}
