//! Blosc2 decode timing server for `scripts/bench_blosc2.py` (`harness = false`).
//!
//! Usage: `cargo bench --bench blosc2_serve -- DIR`, DIR prepared by the
//! script (`volume.raw` and one folder of `chunk_NNN.bin` per configuration:
//! bare Blosc2 chunks or Blosc2 frames, in volume order). Loads every
//! configuration, checks each decodes to the volume, prints `ready`, then
//! answers each stdin line `CONFIG PASSES` with the wall seconds of each pass
//! (every chunk decoded into one reused buffer, one thread), one JSON line,
//! so the script can interleave our passes with C-Blosc2's under the same load.

use purehdf::filters::blosc2::chunk::{ChunkDecoder, Header};
use purehdf::filters::blosc2::{self, frame};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Instant;

struct Config {
    chunks: Vec<Vec<u8>>,
    sizes: Vec<usize>,
    frames: bool,
}

impl Config {
    fn load(dir: &Path) -> Config {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("config dir")
            .filter_map(|e| e.ok())
            .map(|e| e.path())
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
        Config {
            chunks,
            sizes,
            frames,
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
    let volume = std::fs::read(dir.join("volume.raw")).expect("volume.raw");
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
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let mut it = line.split_whitespace();
        let (Some(name), Some(passes)) = (it.next(), it.next()) else {
            break;
        };
        let cfg = &cfgs[name];
        let passes: usize = passes.parse().unwrap();
        let mut times = Vec::with_capacity(passes);
        for _ in 0..passes {
            let t = Instant::now();
            for (i, &n) in cfg.sizes.iter().enumerate() {
                cfg.decode(&mut dec, i, &mut buf[..n]);
            }
            times.push(t.elapsed().as_secs_f64());
        }
        let list: Vec<String> = times.iter().map(|t| format!("{t:.6}")).collect();
        writeln!(out, "[{}]", list.join(", ")).unwrap();
        out.flush().unwrap();
    }
}
