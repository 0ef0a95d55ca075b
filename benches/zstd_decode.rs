//! Zstandard decode benchmark: `purehdf_filters::zstd_decode` vs `ruzstd`,
//! single-threaded, on the Zstd frames inside Blosc2 chunks (C libzstd level 3).
//!
//! Usage: `cargo bench --bench zstd_decode -- [DIR]` where DIR holds
//! `chunk_*.bin` files (default `/tmp/purehdf_bench_blosc2/zstd_3_shuffle`, made
//! by `scripts/bench_blosc2.py`). Frames are found by their magic number and
//! measured with ruzstd; both decoders then decode every frame into a reused
//! buffer. Prints best-of-N MB/s (10^6 B/s of output) for each (N =
//! `BENCH_REPEAT`, default 5; `BENCH_OURS_ONLY=1` skips timing ruzstd).

use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use std::time::Instant;

fn ruzstd_frame(fd: &mut FrameDecoder, src: &[u8], dst: &mut Vec<u8>) -> Option<usize> {
    let mut s = src;
    fd.reset(&mut s).ok()?;
    dst.clear();
    loop {
        let done = fd
            .decode_blocks(&mut s, BlockDecodingStrategy::UptoBlocks(1))
            .ok()?;
        if let Some(b) = fd.collect() {
            dst.extend_from_slice(&b);
        }
        if done {
            break;
        }
    }
    Some(src.len() - s.len())
}

#[path = "common/clock.rs"]
mod clock;
use clock::thread_cpu as cpu_time;

/// Run `f`, returning (wall seconds, CPU seconds or wall if unknown).
fn timed(mut f: impl FnMut()) -> (f64, f64) {
    let c0 = cpu_time();
    let t = Instant::now();
    f();
    let wall = t.elapsed().as_secs_f64();
    let cpu = match (c0, cpu_time()) {
        (Some(a), Some(b)) => b - a,
        _ => wall,
    };
    (wall, cpu)
}

fn main() {
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_else(|| "/tmp/purehdf_bench_blosc2/zstd_3_shuffle".to_string());
    let reps: usize = std::env::var("BENCH_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    // BENCH_OURS_ONLY=1: time only our decoder (comparing revisions of it).
    let ours_only = std::env::var("BENCH_OURS_ONLY").is_ok_and(|v| v == "1");
    let mut paths: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(d) => d.filter_map(|e| e.ok()).map(|e| e.path()).collect(),
        Err(e) => {
            eprintln!("{dir}: {e} (run scripts/bench_blosc2.py first)");
            return;
        }
    };
    paths.sort();
    let mut frames: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut fd = FrameDecoder::new();
    for p in &paths {
        let bytes = std::fs::read(p).expect("read chunk");
        let mut i = 0;
        while i + 4 <= bytes.len() {
            if bytes[i..i + 4] == [0x28, 0xB5, 0x2F, 0xFD] {
                let mut out = Vec::new();
                if let Some(n) = ruzstd_frame(&mut fd, &bytes[i..], &mut out) {
                    frames.push((bytes[i..i + n].to_vec(), out));
                    i += n;
                    continue;
                }
            }
            i += 1;
        }
    }
    let total_in: usize = frames.iter().map(|f| f.0.len()).sum();
    let total_out: usize = frames.iter().map(|f| f.1.len()).sum();
    println!(
        "{} frames, {} bytes -> {} bytes (ratio {:.2})",
        frames.len(),
        total_in,
        total_out,
        total_out as f64 / total_in.max(1) as f64
    );
    let mut buf = vec![0u8; 1 << 20];
    for (f, want) in &frames {
        let dst = &mut buf[..want.len()];
        purehdf_filters::zstd_decode::decompress_exact(f, dst).expect("ours decodes");
        assert!(dst == &want[..], "ours differs");
    }
    let mut best_ours = (f64::MAX, f64::MAX);
    let mut best_ruzstd = (f64::MAX, f64::MAX);
    let mut vbuf = Vec::with_capacity(1 << 20);
    let min2 = |a: (f64, f64), b: (f64, f64)| (a.0.min(b.0), a.1.min(b.1));
    for _ in 0..reps {
        let t = timed(|| {
            for (f, want) in &frames {
                purehdf_filters::zstd_decode::decompress_exact(f, &mut buf[..want.len()]).unwrap();
            }
        });
        best_ours = min2(best_ours, t);
        if ours_only {
            continue;
        }
        let t = timed(|| {
            for (f, _) in &frames {
                ruzstd_frame(&mut fd, f, &mut vbuf).unwrap();
            }
        });
        best_ruzstd = min2(best_ruzstd, t);
    }
    let mbs = |s: f64| total_out as f64 / s / 1e6;
    println!(
        "best of {reps}, MB/s of output: wall / CPU time\nours   {:8.1} / {:8.1}\nruzstd {:8.1} / {:8.1}\nratio (CPU) {:.2}x",
        mbs(best_ours.0),
        mbs(best_ours.1),
        mbs(best_ruzstd.0),
        mbs(best_ruzstd.1),
        best_ruzstd.1 / best_ours.1
    );
}
