//! Deflate encode benchmark: `purehdf_filters::deflate_encode` vs zlib-rs
//! (flate2), single-threaded, one reused compressor each, chunk by chunk.
//!
//! Usage: `cargo bench --bench deflate_encode -- [LEVELS]` (default `4`;
//! e.g. `1,2,3,4,5,6,7,8,9`). Inputs: issue 47's kind of chunk (256×256
//! int16, a random walk along x with steps -3..=3, HDF5-byte-shuffled;
//! `BENCH_CHUNKS` of them), then 512 KiB chunks (64^3 int16) of a CT-like volume, plain and
//! HDF5-byte-shuffled (`BENCH_CHUNKS` of them, default 16): from
//! `$DEFLATE_BENCH_DIR/chunks_raw.bin` and `chunks_shuf.bin` when that is set
//! (e.g. the peer bench volume's chunks, cut with h5py), else a phantom made
//! here; then random bytes,
//! zeros, text-like, and short inputs. Prints compressed sizes and best-of-N
//! CPU ms (N = `BENCH_REPEAT`, default 5). `BENCH_ONLY=ours|zlib` runs one
//! side once (for `valgrind --tool=callgrind`).

use flate2::{Compress, Compression, FlushCompress};
use purehdf_filters::deflate_encode::Compressor;

#[path = "common/clock.rs"]
mod clock;
use clock::cpu_or_wall as cpu_time;

fn zlib(z: &mut Compress, input: &[u8], out: &mut Vec<u8>) {
    z.reset();
    out.clear();
    out.reserve(input.len() + input.len() / 1000 + 64);
    let st = z.compress_vec(input, out, FlushCompress::Finish).unwrap();
    assert_eq!(st, flate2::Status::StreamEnd);
}

#[path = "../tests/common/noise.rs"]
mod noise;

/// `n` pseudo-random bytes, the same on every run.
fn noise(n: usize) -> Vec<u8> {
    noise::noise(n, 0x9E37_79B9_7F4A_7C15)
}

fn text(n: usize) -> Vec<u8> {
    let words = [
        "the",
        "deflate",
        "chunk",
        "of",
        "a",
        "volume",
        "compressed",
        "with",
        "level",
        "and",
        "shuffle",
        "data",
        "set",
        "file",
        "is",
        "written",
        "read",
        "back",
        "equal",
        "to",
    ];
    let mut x = 12345u32;
    let mut v = Vec::with_capacity(n + 16);
    while v.len() < n {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        v.extend_from_slice(words[(x >> 16) as usize % words.len()].as_bytes());
        v.push(if (x >> 8).is_multiple_of(11) {
            b'\n'
        } else {
            b' '
        });
    }
    v.truncate(n);
    v
}

/// `n` chunks of 64^3 int16 from a CT-like volume of 4 x 4 x n/16 chunks:
/// air at -1000 outside an ellipsoidal body with smooth texture and noise
/// (little-endian bytes; HDF5 byte-shuffled when `shuffled`).
fn phantom_chunks(n: usize, shuffled: bool) -> Vec<u8> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let side = 64usize;
    let mut out = Vec::with_capacity(n * side * side * side * 2);
    for c in 0..n {
        let (cz, cy, cx) = (c / 16, (c / 4) % 4, c % 4);
        let mut vals = Vec::with_capacity(side * side * side);
        for z in 0..side {
            for y in 0..side {
                for xx in 0..side {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let (fz, fy, fx) = (
                        ((cz * side + z) as f32 / 128.0) - 1.0,
                        ((cy * side + y) as f32 / 128.0) - 1.0,
                        ((cx * side + xx) as f32 / 128.0) - 1.0,
                    );
                    let r2 = (fx / 0.85).powi(2) + (fy / 0.7).powi(2) + (fz / 0.95).powi(2);
                    let noise = (x % 25) as f32 - 12.0;
                    let v = if r2 < 1.0 {
                        40.0 + 25.0 * (6.0 * fx).sin() * (5.0 * fy).cos() + noise
                    } else {
                        -1000.0 + noise / 3.0
                    };
                    vals.push(v as i16);
                }
            }
        }
        if shuffled {
            out.extend(vals.iter().map(|v| v.to_le_bytes()[0]));
            out.extend(vals.iter().map(|v| v.to_le_bytes()[1]));
        } else {
            out.extend(vals.iter().flat_map(|v| v.to_le_bytes()));
        }
    }
    out
}

/// `n` chunks of 256×256 int16, each row a random walk from 0 with steps
/// in -3..=3, HDF5-byte-shuffled.
fn walk_chunks(n: usize) -> Vec<Vec<u8>> {
    let r = noise(n * 256 * 256);
    r.chunks(256 * 256)
        .map(|c| {
            let mut v = 0i16;
            let vals: Vec<i16> = c
                .iter()
                .enumerate()
                .map(|(i, &b)| {
                    if i % 256 == 0 {
                        v = 0;
                    }
                    v += (b % 7) as i16 - 3;
                    v
                })
                .collect();
            let mut out: Vec<u8> = vals.iter().map(|x| x.to_le_bytes()[0]).collect();
            out.extend(vals.iter().map(|x| x.to_le_bytes()[1]));
            out
        })
        .collect()
}

fn main() {
    let levels: Vec<u32> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .flat_map(|a| {
            a.split(',')
                .filter_map(|x| x.parse().ok())
                .collect::<Vec<_>>()
        })
        .collect();
    let levels = if levels.is_empty() { vec![4] } else { levels };
    let reps: usize = std::env::var("BENCH_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let nchunks: usize = std::env::var("BENCH_CHUNKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    let only = std::env::var("BENCH_ONLY").ok();
    let only_set = std::env::var("BENCH_SET").ok();
    let chunk = 512 * 1024;
    let mut sets: Vec<(&str, Vec<Vec<u8>>)> = vec![("walk-shuffled", walk_chunks(nchunks))];
    let dir = std::env::var("DEFLATE_BENCH_DIR").ok();
    for (name, file, shuffled) in [
        ("ct-int16", "chunks_raw.bin", false),
        ("ct-int16-shuffled", "chunks_shuf.bin", true),
    ] {
        let all = match &dir {
            Some(d) => match std::fs::read(std::path::Path::new(d).join(file)) {
                Ok(all) => all,
                Err(e) => {
                    eprintln!("skipping {d}/{file}: {e}");
                    continue;
                }
            },
            None => phantom_chunks(nchunks, shuffled),
        };
        // Spread the chosen chunks over the volume.
        let total = all.len() / chunk;
        let step = (total / nchunks.max(1)).max(1);
        let v = (0..total)
            .step_by(step)
            .take(nchunks)
            .map(|c| all[c * chunk..(c + 1) * chunk].to_vec())
            .collect();
        sets.push((name, v));
    }
    sets.push(("random", vec![noise(chunk)]));
    sets.push(("zeros", vec![vec![0u8; chunk]]));
    sets.push(("text", vec![text(chunk)]));
    sets.push((
        "short-0..300",
        (0..=300).map(text).chain((0..=300).map(noise)).collect(),
    ));
    if let Some(s) = &only_set {
        sets.retain(|(n, _)| n == s);
    }
    println!("level set              bytes_in   zlib-rs_out      ours_out  size_ratio  zlib-rs_ms   ours_ms  speedup  zlib-rs_MB/s  ours_MB/s");
    let mut out = Vec::new();
    for &level in &levels {
        let mut z = Compress::new(Compression::new(level), true);
        let mut ours = Compressor::new(level);
        for (name, inputs) in &sets {
            let bytes_in: usize = inputs.iter().map(|v| v.len()).sum();
            if let Some(side) = &only {
                for inp in inputs {
                    match (side.as_str(), ours.as_mut()) {
                        ("ours", Some(c)) => {
                            out.clear();
                            c.compress(inp, &mut out);
                        }
                        _ => zlib(&mut z, inp, &mut out),
                    }
                    std::hint::black_box(&out);
                }
                continue;
            }
            let (mut zs, mut os) = (0usize, 0usize);
            for inp in inputs {
                zlib(&mut z, inp, &mut out);
                zs += out.len();
                if let Some(c) = ours.as_mut() {
                    out.clear();
                    c.compress(inp, &mut out);
                    os += out.len();
                    // Round trip check.
                    let mut d = flate2::Decompress::new(true);
                    let mut back = Vec::with_capacity(inp.len());
                    d.decompress_vec(&out, &mut back, flate2::FlushDecompress::Finish)
                        .unwrap();
                    assert!(back == *inp, "round trip failed on {name}");
                }
            }
            let (mut zt, mut ot) = (f64::MAX, f64::MAX);
            // Interleaved A/B repeats.
            for _ in 0..reps {
                let t = cpu_time();
                for inp in inputs {
                    zlib(&mut z, inp, &mut out);
                }
                zt = zt.min(cpu_time() - t);
                if let Some(c) = ours.as_mut() {
                    let t = cpu_time();
                    for inp in inputs {
                        out.clear();
                        c.compress(inp, &mut out);
                    }
                    ot = ot.min(cpu_time() - t);
                }
            }
            println!(
                "{level:>5} {name:<18} {bytes_in:>10} {zs:>13} {os:>13} {:>11.4} {:>11.2} {:>9.2} {:>8.2} {:>13.1} {:>10.1}",
                os as f64 / zs as f64,
                zt * 1e3,
                ot * 1e3,
                zt / ot,
                bytes_in as f64 / zt / 1e6,
                bytes_in as f64 / ot / 1e6
            );
        }
    }
}
