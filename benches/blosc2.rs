//! Blosc2 decode benchmark (plain `harness = false`, std::time only).
//!
//! Usage: `cargo bench --bench blosc2 -- DIR` where DIR was prepared by
//! `scripts/bench_blosc2.py`: `DIR/volume.raw` (the uncompressed volume) and
//! one folder per configuration holding `chunk_NNN.bin` (bare Blosc2 chunks
//! written by python-blosc2, in volume order). Prints one JSON line per
//! configuration: best-of-N single-thread decode throughput in GB/s (10⁹ B/s),
//! after checking the decoded bytes equal the volume.

use purehdf_filters::blosc2::chunk::{ChunkDecoder, Header};
use purehdf_filters::blosc2::encode_chunk::{ChunkEncoder, Settings};
use purehdf_filters::blosc2::{self, frame};
use std::path::Path;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: blosc2 DIR (see scripts/bench_blosc2.py)");
        return;
    };
    if std::env::var("BENCH_KERNELS").as_deref() != Ok("0") {
        kernels();
    }
    let reps: usize = std::env::var("BENCH_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let dir = Path::new(dir);
    let volume = std::fs::read(dir.join("volume.raw")).expect("volume.raw");
    let mut cfgs: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.path())
        .collect();
    cfgs.sort();
    for cfg in cfgs {
        let mut files: Vec<_> = std::fs::read_dir(&cfg)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .collect();
        files.sort();
        let chunks: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
        let frames = chunks.first().is_some_and(|c| frame::is_frame(c));
        let sizes: Vec<usize> = chunks
            .iter()
            .map(|c| {
                if frames {
                    blosc2::decoded_len(c, 1 << 30).unwrap()
                } else {
                    Header::parse(c).unwrap().nbytes
                }
            })
            .collect();
        let decode = |dec: &mut ChunkDecoder, c: &[u8], out: &mut [u8]| {
            if frames {
                blosc2::decode_into(c, &[], dec, out).unwrap()
            } else {
                dec.decode_into(c, out).unwrap()
            }
        };
        let total: usize = sizes.iter().sum();
        assert_eq!(total, volume.len(), "chunks do not cover the volume");
        // Correctness pass over the whole volume.
        let mut out = vec![0u8; total];
        let mut dec = ChunkDecoder::new();
        let mut pos = 0;
        for (c, &n) in chunks.iter().zip(&sizes) {
            decode(&mut dec, c, &mut out[pos..pos + n]);
            pos += n;
        }
        assert!(out == volume, "decoded bytes differ");
        drop(out);
        // Timed passes: every chunk into one reused buffer (as the C side does).
        let maxn = sizes.iter().copied().max().unwrap_or(0);
        let mut buf = vec![0u8; maxn];
        let mut best = f64::INFINITY;
        for _ in 0..reps {
            let t = Instant::now();
            for (c, &n) in chunks.iter().zip(&sizes) {
                decode(&mut dec, c, &mut buf[..n]);
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        if frames {
            println!(
                "{{\"config\": \"{}\", \"decode_gbps\": {:.3}}}",
                cfg.file_name().unwrap().to_string_lossy(),
                total as f64 / best / 1e9
            );
            continue;
        }
        // Our encoder with the same settings (taken from the first chunk's header).
        let h = Header::parse(&chunks[0]).unwrap();
        let s = Settings {
            typesize: h.typesize,
            clevel: std::env::var("BENCH_CLEVEL")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(match h.codec {
                    5 => 3,
                    _ => 1,
                }),
            codec: h.codec,
            filters: h.filters,
            filters_meta: h.filters_meta,
            blocksize: 0,
        };
        let mut enc = ChunkEncoder::new();
        let t = Instant::now();
        let mut csize = 0;
        let skip_encode = std::env::var("BENCH_ENCODE").as_deref() == Ok("0");
        for (k, _) in sizes.iter().enumerate().filter(|_| !skip_encode) {
            let n = sizes[k];
            let src = &volume[k * n..(k + 1) * n];
            csize += enc.encode(src, &s).unwrap().len();
        }
        let enc_t = t.elapsed().as_secs_f64();
        let ratio_c = total as f64 / chunks.iter().map(|c| c.len()).sum::<usize>() as f64;
        println!(
            "{{\"config\": \"{}\", \"decode_gbps\": {:.3}, \"encode_gbps\": {:.3}, \"ratio_c\": {:.3}, \"ratio_ours\": {:.3}}}",
            cfg.file_name().unwrap().to_string_lossy(),
            total as f64 / best / 1e9,
            total as f64 / enc_t / 1e9,
            ratio_c,
            total as f64 / csize as f64
        );
    }
}

/// In-cache throughput of the shuffle kernels on 64 KiB blocks (GB/s).
fn kernels() {
    use purehdf_filters::{bitshuffle, shuffle};
    let src: Vec<u8> = (0..65536u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let mut dst = vec![0u8; src.len()];
    let mut scratch = Vec::new();
    let time = |f: &mut dyn FnMut()| {
        let mut best = f64::INFINITY;
        for _ in 0..20 {
            let t = Instant::now();
            for _ in 0..64 {
                f();
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        64.0 * 65536.0 / best / 1e9
    };
    for ts in [2usize, 4, 8] {
        let u = time(&mut || shuffle::unshuffle(&src, &mut dst, ts));
        let us = time(&mut || shuffle::unshuffle_scalar(&src, &mut dst, ts));
        let b = time(&mut || bitshuffle::bitunshuffle(&src, &mut dst, ts, &mut scratch));
        let bs = time(&mut || bitshuffle::bitunshuffle_scalar(&src, &mut dst, ts));
        let f = time(&mut || bitshuffle::bitshuffle(&src, &mut dst, ts, &mut scratch));
        println!(
            "{{\"kernel_ts\": {ts}, \"unshuffle_simd\": {u:.2}, \"unshuffle_scalar\": {us:.2}, \"bitunshuffle_simd\": {b:.2}, \"bitunshuffle_scalar\": {bs:.2}, \"bitshuffle_simd\": {f:.2}}}"
        );
    }
}
