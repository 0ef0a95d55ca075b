//! Blosc2 timing server for `scripts/bench_blosc2.py` (`harness = false`).
//!
//! Usage: `cargo bench --bench blosc2_serve -- DIR`, DIR prepared by the
//! script (`volume.raw` and one folder of `chunk_NNN.bin` per configuration:
//! bare Blosc2 chunks or Blosc2 frames, in volume order; a folder may hold its
//! own `volume.raw`, which then replaces the shared one). Loads every
//! configuration, checks each decodes to its volume, prints `ready`, then
//! answers each stdin line with one JSON line, so the script can interleave
//! our passes with C-Blosc2's under the same load:
//!
//! * `CONFIG PASSES REPEAT`: decode every chunk REPEAT times into one reused
//!   buffer per pass, one thread; `{"wall": [s per pass], "cpu": [thread CPU
//!   s per pass]}`.
//! * `enc CONFIG PASSES REPEAT I,J,..`: encode the volume pieces of chunks I, J, ..
//!   with the settings of C-Blosc2's chunks (codec, filters, typesize, block
//!   size from their headers; clevel from the configuration's name,
//!   `<codec>_<clevel>_<filter>`); adds `"bytes"`, our compressed size. The
//!   first pass is checked to decode to the input.

use purehdf_filters::blosc2::chunk::{ChunkDecoder, Header};
use purehdf_filters::blosc2::encode_chunk::{ChunkEncoder, Settings};
use purehdf_filters::blosc2::{self, frame};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Instant;

struct Config {
    chunks: Vec<Vec<u8>>,
    sizes: Vec<usize>,
    frames: bool,
    volume: Option<Vec<u8>>,
}

impl Config {
    fn load(dir: &Path) -> Config {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("config dir")
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("chunk_"))
            })
            .collect();
        files.sort();
        let chunks: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
        let frames = chunks.first().is_some_and(|c| frame::is_frame(c));
        let sizes = chunks
            .iter()
            .map(|c| {
                if frames {
                    blosc2::decoded_len(c, 1 << 30).unwrap()
                } else {
                    Header::parse(c).unwrap().nbytes
                }
            })
            .collect();
        let volume = std::fs::read(dir.join("volume.raw")).ok();
        Config {
            chunks,
            sizes,
            frames,
            volume,
        }
    }

    fn decode(&self, dec: &mut ChunkDecoder, i: usize, out: &mut [u8]) {
        let c = &self.chunks[i];
        if self.frames {
            blosc2::decode_into(c, &[], dec, out).unwrap()
        } else {
            dec.decode_into(c, out).unwrap()
        }
    }
}

#[path = "common/clock.rs"]
mod clock;
use clock::cpu_or_wall as cpu_time;

/// The clevel in a configuration name `..<codec>_<clevel>_<filter>`.
fn clevel_of(name: &str) -> u8 {
    let parts: Vec<&str> = name.split('_').collect();
    parts
        .windows(2)
        .find_map(|w| (w[0] == "zstd" || w[0] == "lz4").then(|| w[1].parse().ok())?)
        .expect("configuration name without <codec>_<clevel>")
}

fn json_list(v: &[f64]) -> String {
    let list: Vec<String> = v.iter().map(|t| format!("{t:.6}")).collect();
    format!("[{}]", list.join(", "))
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: blosc2_serve DIR (see scripts/bench_blosc2.py)");
        return;
    };
    let dir = Path::new(dir);
    let shared = std::fs::read(dir.join("volume.raw")).expect("volume.raw");
    let mut cfgs = BTreeMap::new();
    for e in std::fs::read_dir(dir).expect("dir").filter_map(|e| e.ok()) {
        if e.path().is_dir() {
            let name = e.file_name().to_string_lossy().into_owned();
            cfgs.insert(name, Config::load(&e.path()));
        }
    }
    let mut dec = ChunkDecoder::new();
    let mut maxn = 0;
    for (name, cfg) in &cfgs {
        let volume = cfg.volume.as_deref().unwrap_or(&shared);
        let mut pos = 0;
        for (i, &n) in cfg.sizes.iter().enumerate() {
            let mut out = vec![0u8; n];
            cfg.decode(&mut dec, i, &mut out);
            assert!(
                volume.get(pos..pos + n) == Some(&out[..]),
                "{name}: chunk {i} decodes wrong"
            );
            pos += n;
            maxn = maxn.max(n);
        }
        assert_eq!(pos, volume.len(), "{name}: chunks do not cover the volume");
    }
    let mut buf = vec![0u8; maxn];
    let mut enc = ChunkEncoder::new();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        let (mut walls, mut cpus) = (Vec::new(), Vec::new());
        let mut bytes = 0usize;
        match words[..] {
            ["enc", name, passes, rep, which] => {
                let cfg = &cfgs[name];
                let volume = cfg.volume.as_deref().unwrap_or(&shared);
                let starts: Vec<usize> = cfg
                    .sizes
                    .iter()
                    .scan(0, |p, &n| {
                        *p += n;
                        Some(*p - n)
                    })
                    .collect();
                let jobs: Vec<(&[u8], Settings)> = which
                    .split(',')
                    .map(|i| {
                        let i: usize = i.parse().unwrap();
                        let h = Header::parse(&cfg.chunks[i]).unwrap();
                        let s = Settings {
                            typesize: h.typesize,
                            clevel: clevel_of(name),
                            codec: h.codec,
                            filters: h.filters,
                            filters_meta: h.filters_meta,
                            blocksize: h.blocksize,
                        };
                        (&volume[starts[i]..starts[i] + cfg.sizes[i]], s)
                    })
                    .collect();
                for pass in 0..passes.parse().unwrap() {
                    let (c0, t) = (cpu_time(), Instant::now());
                    let mut coded = Vec::with_capacity(jobs.len());
                    for _ in 0..rep.parse().unwrap() {
                        coded.clear();
                        for (src, s) in &jobs {
                            coded.push(enc.encode(src, s).unwrap());
                        }
                    }
                    walls.push(t.elapsed().as_secs_f64());
                    cpus.push(cpu_time() - c0);
                    if pass == 0 {
                        for ((src, _), c) in jobs.iter().zip(&coded) {
                            dec.decode_into(c, &mut buf[..src.len()]).unwrap();
                            assert!(&buf[..src.len()] == *src, "{name}: ours round trip");
                        }
                        bytes = coded.iter().map(Vec::len).sum();
                    }
                }
            }
            [name, passes, rep] => {
                let cfg = &cfgs[name];
                for _ in 0..passes.parse().unwrap() {
                    let (c0, t) = (cpu_time(), Instant::now());
                    for _ in 0..rep.parse().unwrap() {
                        for (i, &n) in cfg.sizes.iter().enumerate() {
                            cfg.decode(&mut dec, i, &mut buf[..n]);
                        }
                    }
                    walls.push(t.elapsed().as_secs_f64());
                    cpus.push(cpu_time() - c0);
                }
            }
            _ => break,
        }
        writeln!(
            out,
            "{{\"wall\": {}, \"cpu\": {}, \"bytes\": {bytes}}}",
            json_list(&walls),
            json_list(&cpus)
        )
        .unwrap();
        out.flush().unwrap();
    }
}
