//! Our SWMR reader follows an h5py (libhdf5) SWMR writer.
//!
//! `tests/swmr/writer.py` creates a file with `libver="latest"`, three
//! chunked compressed unlimited datasets (`tests/swmr/gen.py`: rank 1 with
//! gzip and with shuffle+LZF, indexed by extensible arrays; rank 3 with
//! shuffle+gzip and two unlimited dimensions, indexed by a version 2
//! B-tree), turns SWMR mode on and appends random numbers of rows to each,
//! flushing after every round. Meanwhile `File::open_swmr` and a
//! `Dataset::refresh` loop follow it: every new row is read as soon as the
//! shape shows it and compared with the generator (any wrong value fails:
//! torn bytes must come back as errors, which are retried, never as data).
//! At the end the reader must have checked every row the writer wrote.
//!
//! `PUREHDF_SWMR_SECONDS` (default 30) sets how long the writer runs.

mod common;
use common::oracle_python;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use purehdf::low_level::chunk_index::ChunkIndexKind;
use purehdf::low_level::messages::layout::Layout;
use purehdf::low_level::swmr::retry;
use purehdf::{s, Dataset, File};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/swmr")
        .join(name)
}

fn seconds() -> f64 {
    std::env::var("PUREHDF_SWMR_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30.0)
}

/// Elements of one row of each dataset (`gen.py`'s row shapes).
fn row_len(name: &str) -> u64 {
    if name == "r3" {
        24
    } else {
        1
    }
}

/// `gen.py`'s value of element `e` (row-major) of row `i` of `name`.
fn expected(name: &str, i: u64, e: u64) -> f64 {
    let i = i as i64;
    match name {
        "r1" => ((i * 7919 + 13) % 2_000_003 - 1_000_000) as f64,
        "r1lzf" => ((i * 31) % 65521) as f64,
        "r3" => (i * 100 + (e / 6) as i64 * 10 + (e % 6) as i64) as f64 + 0.25,
        _ => unreachable!(),
    }
}

/// The chunk index kind of `ds`, by name (`"ea"`, `"bt2"`, ...).
fn index_kind(ds: &Dataset) -> &'static str {
    match ds.layout() {
        Layout::Chunked { kind, .. } => match kind {
            ChunkIndexKind::ExtensibleArray { .. } => "ea",
            ChunkIndexKind::BTreeV2 { .. } => "bt2",
            ChunkIndexKind::BTreeV1 => "bt1",
            ChunkIndexKind::FixedArray { .. } => "fa",
            _ => "other",
        },
        _ => "not chunked",
    }
}

/// What the reader saw of one dataset.
struct Follow {
    name: &'static str,
    ds: Dataset,
    rows: u64,
    values: u64,
    reads: u64,
}

/// Refresh `f` and check the rows that appeared since the last call.
fn step(f: &mut Follow) {
    let name = f.name;
    let from = f.rows;
    let (to, vals) = retry(|| {
        f.ds.refresh()?;
        let to = f.ds.shape()[0];
        if to <= from {
            return Ok((to, Vec::new()));
        }
        let v: Vec<f64> = if row_len(name) == 1 {
            f.ds.read_slice(&s![from..to])?
        } else {
            f.ds.read_slice(&s![from..to, .., ..])?
        };
        Ok((to, v))
    })
    .unwrap_or_else(|e| panic!("{name}: rows {from}..: {e}"));
    if to <= from {
        return;
    }
    let per = row_len(name);
    assert_eq!(
        vals.len() as u64,
        (to - from) * per,
        "{name}: rows {from}..{to}"
    );
    for (k, v) in vals.iter().enumerate() {
        let (i, e) = (from + k as u64 / per, k as u64 % per);
        let want = expected(name, i, e);
        assert!(
            *v == want,
            "{name}: row {i} element {e} read {v}, the writer wrote {want} (rows {from}..{to})"
        );
    }
    f.values += vals.len() as u64;
    f.rows = to;
    f.reads += 1;
}

fn spawn_writer(
    py: &Path,
    path: &Path,
    secs: f64,
) -> (Child, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(py)
        .arg(script("writer.py"))
        .arg(path)
        .arg(secs.to_string())
        .arg("7")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the h5py writer");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line)
        .expect("read the writer's first line");
    if line.trim() != "ready" {
        let o = child.wait_with_output().expect("writer output");
        panic!(
            "h5py writer did not start: {line:?} {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    (child, out)
}

#[test]
fn follows_an_h5py_swmr_writer() {
    let Some(py) = oracle_python() else {
        println!("skipped: no oracle python (.oracle-venv)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-swmr-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("appended.h5");
    let secs = seconds();
    let (mut child, mut out) = spawn_writer(&py, &path, secs);

    let file = File::open_swmr(&path).expect("open_swmr while h5py writes");
    let root = file.root().unwrap();
    let mut follows: Vec<Follow> = ["r1", "r1lzf", "r3"]
        .into_iter()
        .map(|name| Follow {
            name,
            ds: root.dataset(name).unwrap(),
            rows: 0,
            values: 0,
            reads: 0,
        })
        .collect();
    let started = Instant::now();
    let mut refreshes = 0u64;
    loop {
        let done = child.try_wait().unwrap().is_some();
        for f in &mut follows {
            step(f);
            refreshes += 1;
        }
        if done {
            break;
        }
        assert!(
            started.elapsed().as_secs_f64() < secs + 120.0,
            "the writer did not finish"
        );
        std::thread::sleep(Duration::from_millis(3));
    }
    let status = child.wait().unwrap();
    // libhdf5's SWMR index choice: extensible arrays for one unlimited
    // dimension, a version 2 B-tree for two
    for (f, kind) in follows.iter().zip(["ea", "ea", "bt2"]) {
        assert_eq!(index_kind(&f.ds), kind, "{}", f.name);
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(status.success(), "h5py writer failed: {rest}");
    let totals: serde_json::Value = serde_json::from_str(rest.trim()).expect("writer totals");
    for f in &follows {
        assert_eq!(
            Some(f.rows),
            totals["rows"][f.name].as_u64(),
            "{}: rows seen against rows written",
            f.name
        );
        assert!(
            f.reads > 1,
            "{}: read once only, nothing was followed",
            f.name
        );
        println!(
            "{}: {} rows, {} values checked in {} reads",
            f.name, f.rows, f.values, f.reads
        );
    }
    println!(
        "swmr read: {:.1} s, {} writer rounds, {refreshes} refreshes",
        started.elapsed().as_secs_f64(),
        totals["rounds"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn refuses_a_file_a_plain_writer_holds() {
    let Some(py) = oracle_python() else {
        println!("skipped: no oracle python (.oracle-venv)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-swmr-plain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("plain.h5");
    // A plain (non-SWMR) writer keeps its exclusive lock and the write flag.
    let code = "import h5py,sys,time\nf=h5py.File(sys.argv[1],'w',libver='latest')\nf.create_dataset('x',data=[1,2,3])\nf.flush()\nprint('ready',flush=True)\nsys.stdin.read()\nf.close()\n";
    let mut child = Command::new(&py)
        .arg("-c")
        .arg(code)
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let err = File::open_swmr(&path).expect_err("a plain writer holds the file");
    assert!(err.to_string().contains("lock"), "{err}");
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    // Closed: the flags are clear and the lock is free.
    let f = File::open_swmr(&path).unwrap();
    let x: Vec<i64> = f.root().unwrap().dataset("x").unwrap().read().unwrap();
    assert_eq!(x, vec![1, 2, 3]);
    let _ = std::fs::remove_dir_all(&dir);
}
