//! Window reads of Blosc2 B2ND chunks (only the blocks a selection meets are
//! decoded, each straight into the caller's buffer; with a thread pool the
//! blocks of one chunk are decoded as separate tasks): random boxes of random
//! B2ND datasets, written by the facade with every Blosc2 codec and shuffle,
//! read back equal to the same box cut from the written array, with a pool
//! of two threads and with none.

use proptest::prelude::*;
use purehdf::{Blosc2Codec, Blosc2Shuffle, DatasetSpec, File, FileWriter, Filter, Slice, SliceArg};
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-b2nd-windows-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Values with zero regions, regions of 257 (every byte 1: blocks of one
/// repeated non-zero byte), small values (constant high byte planes) and
/// noise, so zero, run and literal blocks and planes all occur.
fn volume(dims: [usize; 3], seed: u64) -> Vec<i16> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(dims.iter().product());
    for z in 0..dims[0] {
        for y in 0..dims[1] {
            for i in 0..dims[2] {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = match (z / 16 + y / 16) % 4 {
                    0 => 0,
                    1 => (x % 7) as i16,
                    2 => 257,
                    _ => (x as i16) / 4 + (i as i16) * 3,
                };
                out.push(v);
            }
        }
    }
    out
}

fn cut(v: &[i16], dims: [usize; 3], lo: [usize; 3], hi: [usize; 3]) -> Vec<i16> {
    let mut out = Vec::new();
    for z in lo[0]..hi[0] {
        for y in lo[1]..hi[1] {
            let row = (z * dims[1] + y) * dims[2];
            out.extend_from_slice(&v[row + lo[2]..row + hi[2]]);
        }
    }
    out
}

fn boxes() -> impl Strategy<Value = Vec<([usize; 3], [usize; 3])>> {
    // Fractions of the extent; mapped onto the dims in the test.
    prop::collection::vec(
        (
            [0.0f64..1.0, 0.0f64..1.0, 0.0f64..1.0],
            [0.0f64..1.0, 0.0f64..1.0, 0.0f64..1.0],
        )
            .prop_map(|(a, b)| {
                let mut lo = [0usize; 3];
                let mut hi = [0usize; 3];
                for d in 0..3 {
                    lo[d] = (a[d].min(b[d]) * 1000.0) as usize;
                    hi[d] = (a[d].max(b[d]) * 1000.0) as usize + 1;
                }
                (lo, hi)
            }),
        1..6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn b2nd_boxes_equal_the_written_array(
        dims in [40usize..110, 24usize..90, 24usize..90],
        chunk in prop::sample::select(vec![[64u64, 64, 64], [32, 64, 64], [64, 32, 48], [48, 40, 64], [16, 64, 64]]),
        level in prop::sample::select(vec![1u32, 5]),
        codec in prop::sample::select(vec![Blosc2Codec::Lz4, Blosc2Codec::Zstd, Blosc2Codec::BloscLz]),
        shuffle in prop::sample::select(vec![Blosc2Shuffle::Byte, Blosc2Shuffle::Bit, Blosc2Shuffle::None]),
        seed in any::<u64>(),
        frac in boxes(),
    ) {
        let v = volume(dims, seed);
        let path = tmp(&format!("{seed:x}.h5"));
        let mut w = FileWriter::create(&path).unwrap();
        let root = w.root();
        let shape: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
        let spec = DatasetSpec::of::<i16>(&shape)
            .chunked(&chunk, vec![Filter::blosc2(codec, level, shuffle).unwrap()]);
        w.write_dataset(root, "v", spec, &v).unwrap();
        w.commit().unwrap();
        let f = File::open(&path).unwrap();
        let ds = f.root().unwrap().dataset("v").unwrap();
        for threads in [2usize, 1] {
            purehdf::set_threads(threads).unwrap();
            prop_assert_eq!(&ds.read::<i16>().unwrap(), &v);
            for (lo, hi) in &frac {
                let lo: Vec<usize> = (0..3).map(|d| lo[d] * dims[d] / 1001).collect();
                let hi: Vec<usize> = (0..3).map(|d| (hi[d] * dims[d]).div_ceil(1001).max(lo[d] + 1)).collect();
                let (lo, hi) = ([lo[0], lo[1], lo[2]], [hi[0], hi[1], hi[2]]);
                let s = Slice::new((0..3).map(|d| SliceArg::Range { start: lo[d] as i64, end: Some(hi[d] as i64), step: 1 }).collect());
                let got = ds.read_slice::<i16>(&s).unwrap();
                prop_assert_eq!(got, cut(&v, dims, lo, hi), "box {:?}..{:?} of {:?}, chunk {:?}, {} threads", lo, hi, dims, chunk, threads);
            }
        }
        purehdf::set_threads(0).unwrap();
        drop(f);
        let _ = std::fs::remove_file(&path);
    }
}
