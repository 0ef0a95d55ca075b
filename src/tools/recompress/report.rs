//! Reports of `h5 recompress` (`docs/neighbours.md` rows E5, E9): the
//! dry-run selection as text (`## TO COMPRESS ##` / `## REMAINING ##`, one
//! line per file: path, a tab, `# ` and every reason) or JSON lines, progress
//! on stderr for multi-file work (files done, bytes, MB/s, ETA; only when
//! stderr is a terminal and not under `--json`), and the final summary.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::json;

use super::select::Row;

/// Reasons of a row, for its report line.
fn reasons(r: &Row) -> Vec<String> {
    if r.selected() {
        r.select.clone()
    } else if !r.block.is_empty() {
        r.block.clone()
    } else {
        r.other.clone()
    }
}

/// The dry-run report as text.
pub fn text(rows: &[(&Row, String)]) -> String {
    let mut out = String::from("## TO COMPRESS ##\n");
    for (r, extra) in rows.iter().filter(|(r, _)| r.selected()) {
        out.push_str(&line(r, extra));
    }
    out.push_str("## REMAINING ##\n");
    for (r, extra) in rows.iter().filter(|(r, _)| !r.selected()) {
        out.push_str(&line(r, extra));
    }
    out
}

fn line(r: &Row, extra: &str) -> String {
    let mut why = reasons(r);
    if !extra.is_empty() {
        why.push(extra.to_string());
    }
    format!("{}\t# {}\n", r.path.display(), why.join("; "))
}

/// One JSON line of the dry-run report.
pub fn json_line(r: &Row, extra: &str) -> String {
    json!({
        "path": r.path.display().to_string(),
        "status": if r.selected() { "to_compress" } else { "remaining" },
        "reasons": reasons(r),
        "detail": extra,
    })
    .to_string()
}

/// Bytes in human units.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

/// Multi-file progress on stderr.
pub struct Progress {
    total_files: u64,
    total_bytes: u64,
    files: AtomicU64,
    bytes: AtomicU64,
    start: Instant,
    last: Mutex<Instant>,
    on: bool,
}

impl Progress {
    /// `quiet` (e.g. `--json`) or a non-terminal stderr keeps it silent.
    pub fn new(total_files: u64, total_bytes: u64, quiet: bool) -> Self {
        let now = Instant::now();
        Progress {
            total_files,
            total_bytes,
            files: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            start: now,
            last: Mutex::new(now),
            on: !quiet && total_files > 1 && std::io::stderr().is_terminal(),
        }
    }

    /// Time since the progress display was created.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// One file finished (`bytes` of input).
    pub fn file_done(&self, bytes: u64) {
        let f = self.files.fetch_add(1, Ordering::Relaxed) + 1;
        let b = self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if !self.on {
            return;
        }
        if let Ok(mut last) = self.last.lock() {
            if last.elapsed() < Duration::from_millis(200) && f < self.total_files {
                return;
            }
            *last = Instant::now();
        }
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let rate = b as f64 / secs;
        let eta = if rate > 0.0 {
            (self.total_bytes.saturating_sub(b)) as f64 / rate
        } else {
            0.0
        };
        eprint!(
            "\r{f}/{} files, {} / {}, {:.1} MB/s, ETA {:.0} s   ",
            self.total_files,
            human(b),
            human(self.total_bytes),
            rate / 1e6,
            eta
        );
        if f >= self.total_files {
            eprintln!();
        }
    }
}
