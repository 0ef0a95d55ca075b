//! An h5py (libhdf5) SWMR reader follows our SWMR writer.
//!
//! `tests/swmr/reader.py create` makes a `libver="latest"` file with the
//! empty chunked compressed unlimited datasets of `tests/swmr/gen.py` (rank 1
//! with gzip and with shuffle+LZF: extensible arrays; rank 3 with
//! shuffle+gzip and two unlimited dimensions: a version 2 B-tree).
//! `File::open_swmr_writer` opens it (status flags set, lock dropped), then
//! `reader.py follow` opens it with `swmr=True` and checks every row the
//! moment `refresh()` shows it, while we append random numbers of rows to
//! every dataset. After `SwmrWriter::close` the reader must have seen every
//! row, and the flags must be clear again.
//!
//! `PUREHDF_SWMR_SECONDS` (default 30) sets how long the writer runs.

mod common;
use common::{oracle_python, Rng};

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use purehdf::low_level::chunk_index::ChunkIndexKind;
use purehdf::low_level::messages::layout::Layout;
use purehdf::low_level::swmr::status_flags;
use purehdf::File;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/swmr/reader.py")
}

/// A fresh directory holding `name`, made by the h5py script's `create` step.
fn created(py: &Path, tag: &str, name: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("purehdf-swmr-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let made = Command::new(py)
        .arg(script())
        .arg("create")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    (dir, path)
}

fn seconds() -> f64 {
    std::env::var("PUREHDF_SWMR_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30.0)
}

/// `gen.py`'s rows `from..to` of `name`, as stored (little-endian) bytes.
fn rows(name: &str, from: u64, to: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in from as i64..to as i64 {
        match name {
            "r1" => out.extend_from_slice(
                &(((i * 7919 + 13) % 2_000_003 - 1_000_000) as i32).to_le_bytes(),
            ),
            "r1lzf" => out.extend_from_slice(&(((i * 31) % 65521) as u16).to_le_bytes()),
            "r3" => {
                for j in 0..4i64 {
                    for k in 0..6i64 {
                        let v = (i * 100 + j * 10 + k) as f64 + 0.25;
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
            _ => unreachable!(),
        }
    }
    out
}

const NAMES: [(&str, u64); 3] = [("r1", 700), ("r1lzf", 1500), ("r3", 5)];

#[test]
fn an_h5py_swmr_reader_follows_our_writer() {
    let Some(py) = oracle_python() else {
        println!("skipped: no oracle python (.oracle-venv)");
        return;
    };
    let (dir, path) = created(&py, "write", "ours.h5");

    let mut w = File::open_swmr_writer(&path).expect("open_swmr_writer");
    let flags = status_flags(w.file().superblock());
    assert!(flags.write_access && flags.swmr_write_access, "{flags:?}");
    // a second writer is refused while the flags are set
    assert!(File::open_swmr_writer(&path).is_err());

    let mut reader = Command::new(&py)
        .arg(script())
        .arg("follow")
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(reader.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    if line.trim() != "ready" {
        let o = reader.wait_with_output().unwrap();
        panic!(
            "h5py SWMR reader did not open our file: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    let secs = seconds();
    let started = Instant::now();
    let mut rng = Rng(0x5eed_5111);
    let mut n = [0u64; 3];
    let mut rounds = 0u64;
    while started.elapsed().as_secs_f64() < secs {
        for (i, (name, most)) in NAMES.iter().enumerate() {
            let k = 1 + rng.next() % most;
            let len = w.append(name, k, &rows(name, n[i], n[i] + k)).unwrap();
            n[i] += k;
            assert_eq!(len, n[i]);
        }
        rounds += 1;
        if let Some(status) = reader.try_wait().unwrap() {
            let o = reader.wait_with_output().unwrap();
            panic!(
                "h5py reader stopped ({status}): {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(rng.next() % 20));
    }
    w.close().unwrap();
    let f = File::open(&path).unwrap();
    let flags = status_flags(f.superblock());
    assert!(!flags.write_access && !flags.swmr_write_access, "{flags:?}");

    let totals = serde_json::json!({"r1": n[0], "r1lzf": n[1], "r3": n[2]});
    let mut stdin = reader.stdin.take().unwrap();
    writeln!(stdin, "{totals}").unwrap();
    drop(stdin);
    let o = reader.wait_with_output().unwrap();
    let mut rest = String::from_utf8_lossy(&o.stdout).into_owned();
    out.read_to_string(&mut rest).unwrap();
    assert!(
        o.status.success(),
        "h5py reader failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let seen: serde_json::Value = serde_json::from_str(rest.trim()).expect("reader totals");
    for (i, (name, _)) in NAMES.iter().enumerate() {
        assert_eq!(seen["rows"][name].as_u64(), Some(n[i]), "{name}");
        assert!(
            seen["reads"][name].as_u64() > Some(1),
            "{name}: nothing followed"
        );
        // and our reader agrees
        let ds = f.root().unwrap().dataset(name).unwrap();
        assert_eq!(ds.shape()[0], n[i]);
        // the indexes libhdf5 uses for SWMR, written by us
        let want = if *name == "r3" { "bt2" } else { "ea" };
        match ds.layout() {
            Layout::Chunked { kind, .. } => assert!(
                matches!(
                    (want, kind),
                    ("ea", ChunkIndexKind::ExtensibleArray { .. })
                        | ("bt2", ChunkIndexKind::BTreeV2 { .. })
                ),
                "{name}: {kind:?}"
            ),
            other => panic!("{name}: {other:?}"),
        }
    }
    println!(
        "swmr write: {:.1} s, {rounds} rounds, rows {totals}, h5py reader: {}",
        started.elapsed().as_secs_f64(),
        rest.trim()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn h5_tail_follows_our_writer() {
    let Some(py) = oracle_python() else {
        println!("skipped: no oracle python (.oracle-venv)");
        return;
    };
    let (dir, path) = created(&py, "tail", "tail.h5");
    let mut w = File::open_swmr_writer(&path).unwrap();
    w.append("r1", 4, &rows("r1", 0, 4)).unwrap();
    let p = path.to_str().unwrap().to_string();
    let follower = std::thread::spawn(move || {
        let o = purehdf_cli::tools::tail::TailOptions {
            interval: Duration::from_millis(5),
            json: false,
            count: Some(21),
            last: u64::MAX,
        };
        let mut out = Vec::new();
        let n = purehdf_cli::tools::tail::follow(&p, "/r1", &o, &mut out).unwrap();
        (n, String::from_utf8(out).unwrap())
    });
    let mut n = 4;
    for k in [1u64, 5, 3, 7, 2] {
        std::thread::sleep(Duration::from_millis(30));
        w.append("r1", k, &rows("r1", n, n + k)).unwrap();
        n += k;
    }
    let (printed, text) = follower.join().unwrap();
    w.close().unwrap();
    assert_eq!(printed, 21);
    // every row, whenever the follower opened the file
    let want: String = (0..21)
        .map(|i: i64| format!("{i}: {}\n", (i * 7919 + 13) % 2_000_003 - 1_000_000))
        .collect();
    assert_eq!(text, want);
    let _ = std::fs::remove_dir_all(&dir);
}
