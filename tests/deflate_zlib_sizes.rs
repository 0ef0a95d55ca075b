//! Deflate at levels 1–9 against zlib (Python's `zlib.compress`, one stream
//! per chunk): our streams must be zlib's byte for byte, and what
//! `deflate::encode` writes (ours, or zlib-rs where routed) within 0.5 % of
//! zlib's size. Inputs: issue 47's volume (256×256 int16 chunks of a random
//! walk along x, HDF5-shuffled, made by numpy), a CT-like phantom plain and
//! shuffled, text, random and tiny inputs. Prints per-level sizes of zlib,
//! ours and zlib-rs. Skipped without the oracle interpreter.

use std::io::Write;

use purehdf_filters::deflate_encode::Compressor;

mod common;

/// The oracle makes the inputs (so that the volume is numpy's), writes each
/// chunk and its zlib stream at every level.
const SCRIPT: &str = r#"
import sys, os, zlib, numpy as np
d, nwalk = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(1)
vol = np.cumsum(rng.integers(-3, 4, size=(96, 256, 256)), axis=2).astype(np.int16)
def shuffle(a):
    return np.frombuffer(a.astype("<i2").tobytes(), dtype=np.uint8).reshape(-1, 2).T.copy().tobytes()
inputs = [("walk", shuffle(vol[k])) for k in range(nwalk)]
r2 = np.random.default_rng(2)
z, y, x = np.meshgrid(np.arange(32), np.arange(64), np.arange(64), indexing="ij")
body = ((x - 32) ** 2 / 900 + (y - 32) ** 2 / 600 + (z - 16) ** 2 / 300) < 1
ct = np.where(body, 40 + 25 * np.sin(x / 6) * np.cos(y / 5), -1000) + r2.integers(-12, 13, size=body.shape)
ct = ct.astype(np.int16)
inputs.append(("ct", ct.tobytes()))
inputs.append(("ct-shuffled", shuffle(ct)))
words = [b"the", b"deflate", b"chunk", b"volume", b"level", b"shuffle", b"data", b"of", b"a"]
inputs.append(("text", b" ".join(words[i] for i in r2.integers(0, len(words), 60000))))
inputs.append(("random", r2.integers(0, 256, 100000, dtype=np.uint8).tobytes()))
inputs.append(("tiny", b""))
inputs.append(("tiny", b"x"))
inputs.append(("tiny", b"abcabcabcabc"))
with open(os.path.join(d, "names"), "w") as f:
    for i, (name, data) in enumerate(inputs):
        f.write(name + "\n")
        open(os.path.join(d, f"{i}.raw"), "wb").write(data)
        for level in range(1, 10):
            open(os.path.join(d, f"{i}.{level}.z"), "wb").write(zlib.compress(data, level))
print(zlib.ZLIB_RUNTIME_VERSION)
"#;

fn zlib_rs(data: &[u8], level: u32) -> usize {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(data).unwrap();
    e.finish().unwrap().len()
}

#[test]
fn deflate_levels_match_zlib() {
    let Some(py) = common::oracle_python() else {
        println!("skipped: no oracle interpreter");
        return;
    };
    // The whole volume (96 chunks) with PUREHDF_DEFLATE_FULL set; 12 by default.
    let nwalk = if std::env::var_os("PUREHDF_DEFLATE_FULL").is_some() {
        96
    } else {
        12
    };
    let dir = std::env::temp_dir().join(format!("purehdf-zlib-sizes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = std::process::Command::new(&py)
        .arg("-c")
        .arg(SCRIPT)
        .arg(&dir)
        .arg(nwalk.to_string())
        .output()
        .unwrap();
    if !out.status.success() {
        std::fs::remove_dir_all(&dir).ok();
        panic!("oracle failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let names: Vec<String> = std::fs::read_to_string(dir.join("names"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(names.len(), nwalk + 7);
    // Per set and level: zlib, ours (deflate_encode), what `deflate::encode` writes, zlib-rs.
    let mut sets: Vec<String> = names.clone();
    sets.dedup();
    let mut sums = vec![[[0usize; 4]; 10]; sets.len()];
    let mut mismatches = Vec::new();
    let ctx = purehdf_filters::ChunkContext::new(1, 0);
    for (i, name) in names.iter().enumerate() {
        let raw = std::fs::read(dir.join(format!("{i}.raw"))).unwrap();
        let set = sets.iter().position(|s| s == name).unwrap();
        for level in 1..=9u32 {
            let zlib = std::fs::read(dir.join(format!("{i}.{level}.z"))).unwrap();
            let mut ours = Vec::new();
            Compressor::new(level).unwrap().compress(&raw, &mut ours);
            if ours != zlib {
                mismatches.push(format!(
                    "{name} #{i} level {level}: zlib {} ours {} bytes",
                    zlib.len(),
                    ours.len()
                ));
            }
            let written = purehdf_filters::deflate::encode(&raw, &[level], &ctx).unwrap();
            let back = purehdf_filters::deflate::decode(
                &written,
                &[level],
                &purehdf_filters::ChunkContext::new(1, raw.len()),
            )
            .unwrap();
            assert!(back == raw, "{name} #{i} level {level}: round trip");
            let s = &mut sums[set][level as usize];
            s[0] += zlib.len();
            s[1] += ours.len();
            s[2] += written.len();
            s[3] += zlib_rs(&raw, level);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    println!("zlib {version} (Python) vs ours vs zlib-rs; `encode` = what deflate::encode writes");
    println!("set          level         zlib         ours       encode      zlib-rs  encode/zlib");
    let mut over = Vec::new();
    for (set, per_level) in sets.iter().zip(&sums) {
        for (level, &[z, o, e, r]) in per_level.iter().enumerate().skip(1) {
            let ratio = e as f64 / z as f64;
            println!("{set:<12} {level:>5} {z:>12} {o:>12} {e:>12} {r:>12} {ratio:>12.4}");
            // Within 0.5 % of zlib (the tiny inputs: within 8 bytes).
            if e as f64 > z as f64 * 1.005 && e > z + 8 {
                over.push(format!("{set} level {level}: {e} > zlib {z}"));
            }
        }
    }
    assert!(mismatches.is_empty(), "not zlib's bytes: {mismatches:#?}");
    assert!(over.is_empty(), "above zlib's size: {over:#?}");
}
