//! Issue 47: `kill -9` over the writers `tests/kill_writers.rs` does not
//! cover — `medh5 pack`, `medh5 unpack`, `medh5 recompress` (in place),
//! `medh5 index build` (in place), `h5 recompress -o`, `h5 manifest -o` and
//! `h5 cat -o`. Each is killed at seeded random moments spread over its
//! shortest uninterrupted run; after every kill each target is byte for byte
//! the old file or the new one an uninterrupted run writes, and every other
//! file left (at any depth) is a temporary recognisable by name. The kills
//! are not cleaned up between runs: after the campaign one complete run of
//! the same writer must leave no temporary at all, nested or not.
//!
//! `PUREHDF_KILLS` sets the kills per writer (default 8 at CI size).
//! The in-place edit commands (`h5 attr`, `rm`, `mv`, `write`) write no
//! temporaries; `tests/edit_kill.rs` kills them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod common;
use common::kill::{kill_after, run};
use common::Rng;

const SHAPE: [u64; 3] = [40, 128, 128];
const MEDH5: &str = env!("CARGO_BIN_EXE_medh5");
const H5: &str = env!("CARGO_BIN_EXE_h5");

fn kills() -> usize {
    std::env::var("PUREHDF_KILLS")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(8)
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// Two samples (`a.medh5`, `b.medh5`) written by `medh5 create`.
fn samples(dir: &Path) -> (PathBuf, PathBuf) {
    let n = SHAPE.iter().product::<u64>() as usize;
    let mut r = Rng(0x005e_ed47);
    let img: Vec<u8> = (0..n)
        .flat_map(|i| (((r.next() >> 40) % 400) as i16 + (i % 1000) as i16).to_le_bytes())
        .collect();
    let lab: Vec<u8> = (0..n).map(|i| (i / 30_000 % 4) as u8).collect();
    let mut b = Vec::new();
    purehdf_medh5::npy::write(&mut b, "<i2", &SHAPE, &img).unwrap();
    std::fs::write(dir.join("ct.npy"), &b).unwrap();
    b.clear();
    purehdf_medh5::npy::write(&mut b, "|u1", &SHAPE, &lab).unwrap();
    std::fs::write(dir.join("organs.npy"), &b).unwrap();
    let mut out = Vec::new();
    for (id, profile) in [("a", "balanced"), ("b", "portable")] {
        let manifest = serde_json::json!({
            "sample_id": id, "subject_id": "S-1", "profile": profile,
            "grids": {"ct": {"shape": SHAPE, "spacing": [2.5, 0.75, 0.75], "origin": [0.0, 0.0, 0.0]}},
            "images": {"CT": {"grid": "ct", "npy": "ct.npy", "modality": "CT"}},
            "label_sets": [{"id": "organs", "keys": ["liver", "spleen", "kidney"]}],
            "annotations": {"organs": {"grid": "ct", "encoding": "labelmap", "npy": "organs.npy",
                            "label_values": {"1": "liver", "2": "spleen", "3": "kidney"}}}
        });
        let m = dir.join(format!("{id}.json"));
        std::fs::write(&m, serde_json::to_vec(&manifest).unwrap()).unwrap();
        let p = dir.join(format!("{id}.medh5"));
        run(MEDH5, &["create".into(), s(&p), "--from".into(), s(&m)]);
        out.push(p);
    }
    (out[0].clone(), out[1].clone())
}

/// Every file below `dir` (relative paths).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out
}

/// A temporary of ours by name: `.<name>.tmp-<pid>-<hex>` (nested or not) or
/// `h5 recompress`'s staging name `.<name>.rc-staging`.
fn is_temporary(p: &Path) -> bool {
    let n = p.file_name().unwrap().to_string_lossy();
    n.starts_with('.') && (n.contains(".tmp-") || n.ends_with(".rc-staging"))
}

/// A complete medh5 sample or collection (digests and `content_id` check).
fn verifies(p: &Path) -> bool {
    let medh5 = p.extension().is_some_and(|e| e == "medh5" || e == "medh5c");
    medh5 && purehdf_medh5::verify::verify_path(p, "t", None).is_ok_and(|r| r.ok)
}

/// One writer: its command, its targets, and what each target holds before
/// every run (`old`).
struct Writer {
    name: &'static str,
    exe: &'static str,
    args: Vec<String>,
    targets: Vec<(PathBuf, Vec<u8>)>,
}

/// Kill `w` `kills()` times; panics on a target neither old nor new, or on a
/// stray non-temporary file, or on a temporary left after the next run.
/// Returns (kills mid-write, old, new, most temporaries seen at once).
fn campaign(dir: &Path, w: &Writer, seed: u64) -> (usize, usize, usize, usize) {
    let reset = || {
        for (t, old) in &w.targets {
            std::fs::write(t, old).unwrap();
        }
    };
    reset();
    let before: BTreeSet<PathBuf> = files(dir).into_iter().collect();
    let mut full = Duration::MAX;
    let mut new: Vec<Vec<u8>> = Vec::new();
    for _ in 0..3 {
        reset();
        let t0 = Instant::now();
        run(w.exe, &w.args);
        full = full.min(t0.elapsed());
        let now: Vec<Vec<u8>> = w
            .targets
            .iter()
            .map(|(t, _)| std::fs::read(t).unwrap())
            .collect();
        new = now;
    }
    for ((t, old), n) in w.targets.iter().zip(&new) {
        assert_ne!(old, n, "{}: the run left {} as it was", w.name, t.display());
    }
    let allowed: BTreeSet<PathBuf> = files(dir).into_iter().collect();
    assert_eq!(allowed, before, "{}: a full run leaves extra files", w.name);
    let mut rng = Rng(seed);
    let span = (full.as_micros() as u64 * 5 / 4).max(1000);
    let (mut killed, mut olds, mut news, mut most) = (0, 0, 0, 0);
    for _ in 0..kills() {
        reset();
        let delay = Duration::from_micros(rng.next() % span);
        killed += usize::from(kill_after(w.exe, &w.args, delay));
        for ((t, old), n) in w.targets.iter().zip(&new) {
            let now = std::fs::read(t).ok();
            if now.as_ref() == Some(old) {
                olds += 1;
            } else if now.as_ref() == Some(n) || now.is_some() && verifies(t) {
                // a sample or collection holds its write time (index build):
                // a complete new one verifies
                news += 1;
            } else {
                panic!(
                    "{}: after a kill {} is neither the old file nor the new one ({:?} bytes)",
                    w.name,
                    t.display(),
                    now.map(|v| v.len())
                );
            }
        }
        let stray: Vec<PathBuf> = files(dir)
            .into_iter()
            .filter(|p| !allowed.contains(p))
            .collect();
        for p in &stray {
            assert!(
                is_temporary(p),
                "{}: stray file {} is not a recognisable temporary",
                w.name,
                p.display()
            );
        }
        most = most.max(stray.len());
    }
    // the next complete run removes whatever the killed ones left
    reset();
    run(w.exe, &w.args);
    let left: Vec<PathBuf> = files(dir)
        .into_iter()
        .filter(|p| !allowed.contains(p))
        .collect();
    assert!(
        left.is_empty(),
        "{}: left after the next complete run: {left:?}",
        w.name
    );
    println!(
        "kill writers: {}: {} kills ({killed} mid-write) over {:.0} ms runs: target old {olds} / new {news}, at most {most} temporaries, 0 after the next run",
        w.name,
        kills(),
        full.as_secs_f64() * 1e3
    );
    (killed, olds, news, most)
}

#[test]
fn more_writers_survive_kill_9() {
    let dir = std::env::temp_dir().join(format!("purehdf-kill-more-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = samples(&dir);
    let a_bytes = std::fs::read(&a).unwrap();
    let b_bytes = std::fs::read(&b).unwrap();
    let p = |n: &str| dir.join(n);
    let shard = p("s.medh5c");
    run(
        MEDH5,
        &["pack".into(), s(&a), s(&b), "-o".into(), s(&shard)],
    );
    let shard_bytes = std::fs::read(&shard).unwrap();
    std::fs::create_dir_all(p("out")).unwrap();
    let writers = [
        Writer {
            name: "medh5 pack",
            exe: MEDH5,
            args: vec!["pack".into(), s(&a), s(&b), "-o".into(), s(&p("p.medh5c"))],
            targets: vec![(p("p.medh5c"), b_bytes.clone())],
        },
        Writer {
            name: "medh5 unpack",
            exe: MEDH5,
            args: vec!["unpack".into(), s(&shard), "-o".into(), s(&p("out"))],
            targets: vec![
                (p("out/a.medh5"), shard_bytes[..1000].to_vec()),
                (p("out/b.medh5"), a_bytes.clone()),
            ],
        },
        Writer {
            name: "medh5 recompress (in place)",
            exe: MEDH5,
            args: vec![
                "recompress".into(),
                s(&p("r.medh5")),
                "--profile".into(),
                "archive".into(),
            ],
            targets: vec![(p("r.medh5"), a_bytes.clone())],
        },
        Writer {
            name: "medh5 index build (in place)",
            exe: MEDH5,
            args: vec!["index".into(), "build".into(), s(&p("i.medh5"))],
            targets: vec![(p("i.medh5"), a_bytes.clone())],
        },
        Writer {
            name: "h5 recompress -o",
            exe: H5,
            args: vec![
                "recompress".into(),
                s(&a),
                "--filter".into(),
                "portable".into(),
                "--all".into(),
                "-o".into(),
                s(&p("rc.h5")),
            ],
            targets: vec![(p("rc.h5"), b"old".to_vec())],
        },
        Writer {
            name: "h5 manifest -o",
            exe: H5,
            args: vec!["manifest".into(), s(&a), "-o".into(), s(&p("m.json"))],
            targets: vec![(p("m.json"), b"{}".to_vec())],
        },
        Writer {
            name: "h5 cat -o",
            exe: H5,
            args: vec![
                "cat".into(),
                s(&b),
                "/images/CT".into(),
                "-o".into(),
                s(&p("ct.out.npy")),
            ],
            targets: vec![(p("ct.out.npy"), b"old".to_vec())],
        },
    ];
    let mut mid = 0;
    for (i, w) in writers.iter().enumerate() {
        mid += campaign(&dir, w, 47 + i as u64).0;
    }
    // most kills must land while a writer runs, or the test proves little
    assert!(
        mid >= writers.len() * kills() / 4,
        "only {mid} kills landed mid-write"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
