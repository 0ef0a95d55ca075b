//! Issue 16 item 6: N threads reading one file give results bit-identical to
//! one thread. For each sample (a `medh5 demo` sample, a Blosc2 sample written
//! by `medh5 bench-op write`, and the shared medh5 vectors when present), one
//! thread computes a fingerprint — every dataset read whole, 24 seeded
//! patches of each through the cached and the uncached path, and the
//! `medh5 verify` report — and then 6 threads compute it at once, 3 rounds,
//! sharing one handle (and its chunk cache) or each opening its own.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use purehdf::{File, Object, Selection};
use purehdf_medh5::sample::read_patch_vec;
use sha2::{Digest, Sha256};

mod common;
use common::Rng;

const THREADS: usize = 6;
const ROUNDS: usize = 3;

fn datasets(f: &File) -> Vec<purehdf::Dataset> {
    let mut out = Vec::new();
    let mut todo = vec!["/".to_string()];
    while let Some(p) = todo.pop() {
        match f.object(&p) {
            Ok(Object::Group(g)) => {
                for (name, _) in g.links().unwrap_or_default() {
                    todo.push(if p == "/" {
                        format!("/{name}")
                    } else {
                        format!("{p}/{name}")
                    });
                }
            }
            Ok(Object::Dataset(d)) => out.push(*d),
            _ => {}
        }
    }
    out.sort_by(|a, b| a.path().cmp(b.path()));
    out
}

/// SHA-256 over every read's outcome, in a fixed order.
fn fingerprint(f: &File, path: &Path) -> String {
    let mut h = Sha256::new();
    for d in datasets(f) {
        h.update(d.path().as_bytes());
        match d.read_raw_vec(&Selection::All) {
            Ok(v) => h.update(&v),
            Err(e) => h.update(e.to_string().as_bytes()),
        }
        let shape = d.shape().to_vec();
        if shape.is_empty() || shape.contains(&0) {
            continue;
        }
        let mut rng = Rng(0x9E37_79B9 ^ shape.iter().sum::<u64>());
        for i in 0..24 {
            let start: Vec<u64> = shape.iter().map(|&n| rng.below(n)).collect();
            let count: Vec<u64> = shape
                .iter()
                .zip(&start)
                .map(|(&n, &s)| 1 + rng.below((n - s).min(40)))
                .collect();
            let r = if i % 2 == 0 {
                read_patch_vec(&d, Some(&start), &count)
            } else {
                d.read_raw_vec_uncached(&Selection::Hyperslab {
                    start: start.clone(),
                    count: count.clone(),
                })
                .map_err(Into::into)
            };
            match r {
                Ok(v) => h.update(&v),
                Err(e) => h.update(e.to_string().as_bytes()),
            }
        }
    }
    let report = purehdf_medh5::verify::verify_file(f, &path.display().to_string(), None)
        .map(|r| r.to_json().to_string())
        .unwrap_or_else(|e| e.to_string());
    h.update(report.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn samples(dir: &Path) -> Vec<PathBuf> {
    let medh5 = env!("CARGO_BIN_EXE_medh5");
    let demo = dir.join("demo.medh5");
    let ok = Command::new(medh5)
        .args(["demo", demo.to_str().unwrap()])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(ok.success());
    let shape = [40u64, 96, 112];
    let n = shape.iter().product::<u64>() as usize;
    let mut r = Rng(3);
    let img: Vec<u8> = (0..n)
        .flat_map(|i| (((r.next() >> 50) as i16) + (i % 700) as i16).to_le_bytes())
        .collect();
    let lab: Vec<u8> = (0..n).map(|i| (i / 9000 % 6) as u8).collect();
    let (ip, lp) = (dir.join("img.npy"), dir.join("lab.npy"));
    let mut b = Vec::new();
    purehdf_medh5::npy::write(&mut b, "<i2", &shape, &img).unwrap();
    std::fs::write(&ip, &b).unwrap();
    b.clear();
    purehdf_medh5::npy::write(&mut b, "|u1", &shape, &lab).unwrap();
    std::fs::write(&lp, &b).unwrap();
    let mut out = vec![demo];
    for profile in ["training", "balanced"] {
        let s = dir.join(format!("{profile}.medh5"));
        let st = Command::new(medh5)
            .args(["bench-op", "write", "--image", ip.to_str().unwrap()])
            .args(["--label", lp.to_str().unwrap(), "--profile", profile])
            .args([
                "--out",
                s.to_str().unwrap(),
                "--repeats",
                "1",
                "--warmup",
                "0",
            ])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        out.push(s);
    }
    if let Some(v) = common::shared_dir().map(|d| d.join("vectors/medh5")) {
        let mut names: Vec<PathBuf> = std::fs::read_dir(&v)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "medh5"))
            .collect();
        names.sort();
        out.extend(names);
    } else {
        println!("skipped: concurrency on the shared medh5 vectors (../shared absent)");
    }
    out
}

#[test]
fn threads_read_what_one_thread_reads() {
    let dir = std::env::temp_dir().join(format!("purehdf-conc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let files = samples(&dir);
    let mut compared = 0;
    for p in &files {
        let one = fingerprint(&File::open(p).unwrap(), p);
        for round in 0..ROUNDS {
            let shared = File::open(p).unwrap();
            let got: Vec<String> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..THREADS)
                    .map(|t| {
                        let shared = shared.clone();
                        s.spawn(move || {
                            if (t + round) % 2 == 0 {
                                fingerprint(&shared, p)
                            } else {
                                fingerprint(&File::open(p).unwrap(), p)
                            }
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for g in got {
                assert_eq!(g, one, "{}: a thread read other bytes", p.display());
                compared += 1;
            }
        }
    }
    println!(
        "concurrency: {compared}/{compared} thread runs over {} samples ({THREADS} threads x {ROUNDS} rounds, shared and own handles) equal one thread",
        files.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
