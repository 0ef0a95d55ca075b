//! Shared helpers of the corpus and golden tests: finding the shared corpus, reading
//! its manifest, and dumping a file in-process under a time limit with panics caught.

#![allow(dead_code)]

pub(crate) mod kill;
pub(crate) mod samples;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// The shared corpus folder: `../shared/corpus` next to the checkout; `None`
/// when it is absent.
pub(crate) fn corpus_dir() -> Option<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    Some(here.join("../shared/corpus")).filter(|p| p.join("MANIFEST.tsv").is_file())
}

/// One MANIFEST.tsv row as column name -> value.
pub(crate) type Row = std::collections::HashMap<String, String>;

pub(crate) fn read_manifest(dir: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.tsv")).expect("read MANIFEST.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            header
                .iter()
                .zip(l.split('\t'))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// What dumping one file did.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The dump document (possibly with failed objects).
    Dumped(Value),
    /// The file could not be opened (a clean error).
    OpenError(String),
    /// The dump panicked.
    Crash(String),
    /// The dump did not finish within the time limit.
    Hang,
}

/// Dump `path` on its own thread, with `limit` to finish; panics are caught.
pub(crate) fn dump_with_limit(path: &Path, limit: Duration) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let p = path.to_path_buf();
    let spawned = std::thread::Builder::new()
        .name(format!("dump {}", path.display()))
        .stack_size(16 << 20)
        .spawn(move || {
            let r = std::panic::catch_unwind(|| purehdf_cli::dump::walk::dump_file(&p));
            let out = match r {
                Ok(Ok(d)) => Outcome::Dumped(d.doc),
                Ok(Err(e)) => Outcome::OpenError(e.to_string()),
                Err(panic) => Outcome::Crash(
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "panic".into()),
                ),
            };
            let _ = tx.send(out);
        });
    if spawned.is_err() {
        return Outcome::Crash("could not spawn a thread".into());
    }
    match rx.recv_timeout(limit) {
        Ok(o) => o,
        Err(mpsc::RecvTimeoutError::Timeout) => Outcome::Hang,
        Err(mpsc::RecvTimeoutError::Disconnected) => Outcome::Crash("thread died".into()),
    }
}

/// Load an expected description.
pub(crate) fn load_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// The oracle interpreter: `PUREHDF_ORACLE_PYTHON` when it names an existing
/// file, else the checkout's `.oracle-venv` (made by `scripts/oracle-venv.sh`).
/// `None` when there is none: oracle tests then print
/// `skipped: ...` and pass.
pub(crate) fn oracle_python() -> Option<PathBuf> {
    let mut c: Vec<PathBuf> = Vec::new();
    if let Ok(p) = std::env::var("PUREHDF_ORACLE_PYTHON") {
        c.push(PathBuf::from(p));
    }
    c.push(Path::new(env!("CARGO_MANIFEST_DIR")).join(".oracle-venv/bin/python"));
    c.into_iter().find(|p| p.is_file())
}

/// The oracle venv's `bin` folder when it also holds the reference `medh5` CLI.
pub(crate) fn oracle_bin() -> Option<PathBuf> {
    oracle_python()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .filter(|d| d.join("medh5").is_file())
}

/// The shared test material (`../shared` next to the checkout), or `None` in
/// a plain clone.
pub(crate) fn shared_dir() -> Option<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    Some(here.join("../shared")).filter(|p| p.is_dir())
}

/// xorshift64*: a seeded, deterministic choice of offsets, shapes and moments.
pub(crate) struct Rng(pub u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

/// Run `cmd` and return its output, failing the test with the command's
/// stderr when it does not exit successfully.
pub(crate) fn run_ok(cmd: &mut std::process::Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Publish the reference's conformance suite into `dir` (`medh5 conformance
/// publish`, with the oracle venv's `bin` folder `venv`) and return its
/// samples and collections, sorted.
pub(crate) fn publish_conformance(venv: &Path, dir: &Path) -> Vec<PathBuf> {
    run_ok(
        std::process::Command::new(venv.join("medh5"))
            .args(["conformance", "publish"])
            .arg(dir),
    );
    medh5_files(dir)
}

/// The `.medh5` and `.medh5c` files directly in `dir`, sorted.
pub(crate) fn medh5_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "medh5" || e == "medh5c"))
        .collect();
    files.sort();
    files
}
