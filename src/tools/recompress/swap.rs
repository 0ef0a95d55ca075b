//! The manifest and the safe swap of `h5 recompress` (`docs/neighbours.md`
//! row E7, details 7–9 of §001).
//!
//! Order of one in-place swap of `X` (each step durable before the next):
//! 1. the output is complete at its staging name `.X.rc-staging` (the writer
//!    writes a temporary, fsyncs, renames, fsyncs the directory) and verified;
//! 2. the manifest records the entry (state `verified`: original and output
//!    SHA-256, backup and staging names), written atomically;
//! 3. the backup `X.bak` is made as a hard link to the original (or, where
//!    links are refused, a copy through a temporary, fsync, rename), and the
//!    directory is fsynced: `X` is never touched by this;
//! 4. `rename(staging, X)` replaces the original atomically; directory fsync;
//! 5. the manifest marks the entry `swapped`.
//!
//! At every moment `X` names either the original or the verified output, and
//! no partial file ever carries an original's name. `--undo` puts `X.bak` back
//! with one rename (again atomic) when `X` holds the output, whatever state
//! the manifest reached; `--finalize` deletes a backup only when `X` holds the
//! original or the verified output (checked by SHA-256).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::verify::file_sha256;
use purehdf::low_level::write::atomic::TempFile;
use purehdf::{Error, Result};

/// Where the outputs go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LayoutKind {
    /// Replace the original (backup kept until `--finalize`).
    InPlace,
    /// `<stem>_<suffix>.<ext>` beside the original.
    Sibling,
    /// The same relative path below another directory.
    Mirror,
    /// `-o OUT`.
    Out,
}

/// Progress of one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Output written and verified (not yet in place).
    Verified,
    /// Output in place (in-place: original at `backup`).
    Swapped,
    /// `--undo` restored the original.
    Undone,
    /// `--finalize` removed the backup.
    Finalized,
}

/// One file of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Path of the input file.
    pub original: PathBuf,
    /// SHA-256 of the input file as it was read, in hex (what `--undo` expects to restore).
    pub original_sha256: String,
    /// Size of the input file in bytes.
    pub original_size: u64,
    /// Where the output ends up (the original's path for in-place).
    pub output: PathBuf,
    /// SHA-256 of the verified output, in hex (what `--undo` and `--finalize` check before touching
    /// it).
    pub output_sha256: String,
    /// Size of the verified output in bytes.
    pub output_size: u64,
    /// In-place only.
    pub backup: Option<PathBuf>,
    /// Temporary file the copy is written to and verified in before it is renamed to `output`.
    pub staging: PathBuf,
    /// How far this file got: verified, swapped, undone or finalized.
    pub state: State,
}

/// The record `--undo` and `--finalize` read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The tool and version that wrote the manifest (`purehdf h5 recompress <version>`).
    pub tool: String,
    /// The output layout of the run; a later run appending to the manifest must use the same one.
    pub layout: LayoutKind,
    /// The `--filter` text of the run, as given.
    pub filter: String,
    /// One entry per file of the run (a later run replaces the entry of the same original).
    pub entries: Vec<Entry>,
}

impl Manifest {
    /// An empty manifest for a run with `layout` and `--filter` text `filter`, stamped with this
    /// tool's version.
    pub fn new(layout: LayoutKind, filter: &str) -> Self {
        Manifest {
            tool: format!("purehdf h5 recompress {}", env!("CARGO_PKG_VERSION")),
            layout,
            filter: filter.to_string(),
            entries: Vec::new(),
        }
    }

    /// Write atomically to `path`.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        let (tmp, mut f) = TempFile::create(path)?;
        f.write_all(text.as_bytes())
            .and_then(|_| f.write_all(b"\n"))
            .map_err(|e| Error::io(tmp.path().display(), e))?;
        tmp.commit(f)
    }

    /// Read a manifest written by [`Manifest::save`].
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path.display(), e))?;
        Ok(serde_json::from_str(&text)?)
    }
}

fn dir_of(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// fsync the directory holding `p` (best effort where not allowed).
pub fn sync_dir(p: &Path) {
    if let Ok(d) = std::fs::File::open(dir_of(p)) {
        let _ = d.sync_all();
    }
}

/// Atomic, durable rename.
pub fn rename(from: &Path, to: &Path) -> Result<()> {
    std::fs::rename(from, to)
        .map_err(|e| Error::io(format!("rename {} -> {}", from.display(), to.display()), e))?;
    sync_dir(to);
    if dir_of(from) != dir_of(to) {
        sync_dir(from);
    }
    Ok(())
}

/// Byte copy of `from` at `to`, atomically (temporary, fsync, rename).
pub fn copy_atomic(from: &Path, to: &Path) -> Result<()> {
    let (tmp, mut f) = TempFile::create(to)?;
    let mut src = std::fs::File::open(from).map_err(|e| Error::io(from.display(), e))?;
    std::io::copy(&mut src, &mut f).map_err(|e| Error::io(tmp.path().display(), e))?;
    tmp.commit(f)
}

/// `backup` as a second name of `original` (hard link), else a byte copy.
fn make_backup(original: &Path, backup: &Path) -> Result<()> {
    if backup.exists() {
        if file_sha256(backup)? == file_sha256(original)? {
            return Ok(());
        }
        return Err(Error::InvalidArgument(format!(
            "{} exists and differs from {}: not overwritten",
            backup.display(),
            original.display()
        )));
    }
    match std::fs::hard_link(original, backup) {
        Ok(()) => {
            sync_dir(backup);
            Ok(())
        }
        Err(_) => copy_atomic(original, backup),
    }
}

/// What identifies one state of a file's bytes within a run: size,
/// modification time and (on Unix) device and inode. Taken when an output is
/// verified and checked again before it is renamed, so the renamed bytes are
/// the verified ones without hashing the file a second time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    dev_ino: (u64, u64),
}

impl Stamp {
    /// The length, modification time and device/inode (0, 0 off Unix) of the file at `p` now.
    pub fn of(p: &Path) -> Result<Stamp> {
        let m = std::fs::metadata(p).map_err(|e| Error::io(p.display(), e))?;
        #[cfg(unix)]
        let dev_ino = {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        };
        #[cfg(not(unix))]
        let dev_ino = (0, 0);
        Ok(Stamp {
            len: m.len(),
            modified: m.modified().ok(),
            dev_ino,
        })
    }
}

/// True when `e.staging` is still the verified output: its [`Stamp`] is
/// unchanged (same run) or, without one, its SHA-256 is the recorded one.
fn still_verified(e: &Entry, stamp: Option<&Stamp>) -> Result<bool> {
    match stamp {
        Some(s) => Ok(Stamp::of(&e.staging)? == *s && s.modified.is_some()),
        None => Ok(file_sha256(&e.staging)? == e.output_sha256),
    }
}

/// Steps 3–4 of the module doc for one verified entry: back up, then rename
/// the staging output over the original.
pub fn swap_in(e: &Entry) -> Result<()> {
    swap_in_stamped(e, None)
}

/// [`swap_in`], the staging file checked by its [`Stamp`] when one is given.
pub fn swap_in_stamped(e: &Entry, stamp: Option<&Stamp>) -> Result<()> {
    let backup = e
        .backup
        .as_ref()
        .ok_or_else(|| Error::InvalidArgument("in-place entry without a backup".into()))?;
    // the staging file must still be the verified output
    if !still_verified(e, stamp)? {
        return Err(Error::InvalidArgument(format!(
            "{} is not the verified output any more: not swapped",
            e.staging.display()
        )));
    }
    make_backup(&e.original, backup)?;
    rename(&e.staging, &e.original)
}

/// Put the output of a non-in-place entry at its final name.
pub fn publish(e: &Entry) -> Result<()> {
    publish_stamped(e, None)
}

/// [`publish`], the staging file checked by its [`Stamp`] when one is given.
pub fn publish_stamped(e: &Entry, stamp: Option<&Stamp>) -> Result<()> {
    if !still_verified(e, stamp)? {
        return Err(Error::InvalidArgument(format!(
            "{} is not the verified output any more",
            e.staging.display()
        )));
    }
    rename(&e.staging, &e.output)
}

fn sha_or_none(p: &Path) -> Option<String> {
    if p.is_file() {
        file_sha256(p).ok()
    } else {
        None
    }
}

/// What `--undo` / `--finalize` did to one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// The entry's original path.
    pub path: PathBuf,
    /// What was done, or why nothing was (e.g. "original restored", "backup … missing").
    pub what: String,
    /// True when the entry reached the requested state (or already was there).
    pub ok: bool,
}

/// `--undo`: restore every original byte for byte (in-place), or remove the
/// outputs (other layouts; only when they are still the verified output).
pub fn undo(m: &mut Manifest) -> Vec<Action> {
    let layout = m.layout;
    let mut out = Vec::new();
    for e in &mut m.entries {
        let act = |what: String, ok| Action {
            path: e.original.clone(),
            what,
            ok,
        };
        clear_stale(&e.staging);
        if layout != LayoutKind::InPlace {
            let a = match sha_or_none(&e.output) {
                Some(s) if s == e.output_sha256 => match std::fs::remove_file(&e.output) {
                    Ok(()) => {
                        sync_dir(&e.output);
                        act(format!("removed output {}", e.output.display()), true)
                    }
                    Err(err) => act(
                        format!("cannot remove {}: {err}", e.output.display()),
                        false,
                    ),
                },
                Some(_) => act(
                    format!("{} changed since the run: kept", e.output.display()),
                    false,
                ),
                None => act("no output present".into(), true),
            };
            if a.ok {
                e.state = State::Undone;
            }
            out.push(a);
            continue;
        }
        let Some(backup) = e.backup.clone() else {
            out.push(act("no backup recorded".into(), false));
            continue;
        };
        let now = sha_or_none(&e.original);
        let bak = sha_or_none(&backup);
        let a = match (now, bak) {
            (Some(n), b) if n == e.original_sha256 => {
                // never swapped (or already undone): drop a leftover backup
                // only when it is a second copy of the same bytes
                if b.as_deref() == Some(e.original_sha256.as_str()) {
                    let _ = std::fs::remove_file(&backup);
                    sync_dir(&backup);
                }
                act("original in place".into(), true)
            }
            (_, Some(b)) if b == e.original_sha256 => match rename(&backup, &e.original) {
                Ok(()) => act("original restored".into(), true),
                Err(err) => act(format!("restore failed: {err}"), false),
            },
            (_, Some(_)) => act(
                format!("{} does not hold the original", backup.display()),
                false,
            ),
            (_, None) => act(format!("backup {} missing", backup.display()), false),
        };
        if a.ok {
            e.state = State::Undone;
        }
        out.push(a);
    }
    out
}

/// `--finalize`: delete the backups of swapped files (only when the file in
/// place is the verified output or the original).
pub fn finalize(m: &mut Manifest) -> Vec<Action> {
    let mut out = Vec::new();
    for e in &mut m.entries {
        clear_stale(&e.staging);
        let Some(backup) = e.backup.clone() else {
            out.push(Action {
                path: e.original.clone(),
                what: "no backup".into(),
                ok: true,
            });
            continue;
        };
        let now = sha_or_none(&e.original);
        let good = now
            .as_ref()
            .is_some_and(|n| *n == e.output_sha256 || *n == e.original_sha256);
        let a = if !backup.exists() {
            Action {
                path: e.original.clone(),
                what: "backup already gone".into(),
                ok: true,
            }
        } else if !good {
            Action {
                path: e.original.clone(),
                what: "file in place is neither the original nor the output: backup kept".into(),
                ok: false,
            }
        } else {
            match std::fs::remove_file(&backup) {
                Ok(()) => {
                    sync_dir(&backup);
                    Action {
                        path: e.original.clone(),
                        what: format!("removed {}", backup.display()),
                        ok: true,
                    }
                }
                Err(err) => Action {
                    path: e.original.clone(),
                    what: format!("cannot remove {}: {err}", backup.display()),
                    ok: false,
                },
            }
        };
        if a.ok {
            e.state = State::Finalized;
        }
        out.push(a);
    }
    out
}

/// `--swap`: put the verified outputs of a sibling, mirror or `-o` run in
/// place of their originals (esrf's `overwrite`, made safe). The manifest is
/// rewritten as an in-place one first (each output becomes the staging file
/// of its original), then every entry goes through [`swap_in`] (which refuses
/// an output whose bytes changed since verification) and is saved as it goes,
/// so `--undo` and `--finalize` work on it afterwards.
pub fn swap_outputs(m: &mut Manifest, save: &Path) -> Result<Vec<Action>> {
    if m.layout == LayoutKind::InPlace {
        return Err(Error::InvalidArgument(
            "this manifest records an in-place run: already swapped".into(),
        ));
    }
    let live: Vec<bool> = m
        .entries
        .iter()
        .map(|e| e.state == State::Swapped)
        .collect();
    m.layout = LayoutKind::InPlace;
    for (e, &ok) in m.entries.iter_mut().zip(&live) {
        if ok {
            e.staging = std::mem::replace(&mut e.output, e.original.clone());
            let name = e.original.file_name().unwrap_or_default().to_string_lossy();
            e.backup = Some(e.original.with_file_name(format!("{name}.bak")));
            e.state = State::Verified;
        } else {
            e.output = e.original.clone();
        }
    }
    m.save(save)?;
    let mut out = Vec::new();
    for k in 0..m.entries.len() {
        let Some(e) = m.entries.get(k).cloned() else {
            continue;
        };
        if !live.get(k).copied().unwrap_or(false) {
            out.push(Action {
                path: e.original,
                what: "no verified output".into(),
                ok: false,
            });
            continue;
        }
        let a = match swap_in(&e) {
            Ok(()) => {
                if let Some(x) = m.entries.get_mut(k) {
                    x.state = State::Swapped;
                }
                m.save(save)?;
                Action {
                    path: e.original,
                    what: format!("swapped in {}", e.staging.display()),
                    ok: true,
                }
            }
            Err(err) => Action {
                path: e.original,
                what: format!("not swapped: {err}"),
                ok: false,
            },
        };
        out.push(a);
    }
    Ok(out)
}

/// Create `dir` (and parents) for an output.
pub fn ensure_parent(p: &Path) -> Result<()> {
    let d = dir_of(p);
    std::fs::create_dir_all(&d).map_err(|e| Error::io(d.display(), e))
}

/// Remove a staging file left by an earlier, killed run (it is never a name
/// of an original).
pub fn clear_stale(p: &Path) {
    let _ = std::fs::remove_file(p);
    // and the writer's temporaries for it (`.<name>.<random>.tmp`)
    let Some(name) = p.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let prefix = format!(".{name}.");
    if let Ok(entries) = std::fs::read_dir(dir_of(p)) {
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with(&prefix) && n.ends_with(".tmp") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(dir: &Path, orig: &[u8], out: &[u8]) -> Entry {
        let original = dir.join("x.h5");
        let staging = dir.join(".x.h5.rc-staging");
        std::fs::write(&original, orig).unwrap();
        std::fs::write(&staging, out).unwrap();
        Entry {
            original_sha256: file_sha256(&original).unwrap(),
            original_size: orig.len() as u64,
            output: original.clone(),
            output_sha256: file_sha256(&staging).unwrap(),
            output_size: out.len() as u64,
            backup: Some(dir.join("x.h5.bak")),
            original,
            staging,
            state: State::Verified,
        }
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("purehdf-swap-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn swap_then_undo_restores_and_finalize_removes_the_backup() {
        let d = tmp("undo");
        let e = entry(&d, b"original bytes", b"new bytes");
        swap_in(&e).unwrap();
        assert_eq!(std::fs::read(&e.original).unwrap(), b"new bytes");
        let mut m = Manifest::new(LayoutKind::InPlace, "x");
        m.entries.push(e.clone());
        assert!(undo(&mut m).iter().all(|a| a.ok));
        assert_eq!(std::fs::read(&e.original).unwrap(), b"original bytes");
        assert!(!e.backup.as_ref().unwrap().exists());
        let e = entry(&d, b"original bytes", b"new bytes");
        swap_in(&e).unwrap();
        let mut m = Manifest::new(LayoutKind::InPlace, "x");
        m.entries.push(e.clone());
        assert!(finalize(&mut m).iter().all(|a| a.ok));
        assert!(!e.backup.as_ref().unwrap().exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_changed_staging_file_is_never_swapped_in() {
        let d = tmp("changed");
        let e = entry(&d, b"original bytes", b"new bytes");
        std::fs::write(&e.staging, b"new byt").unwrap(); // truncated after verification
        assert!(swap_in(&e).is_err());
        assert_eq!(std::fs::read(&e.original).unwrap(), b"original bytes");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn undo_keeps_a_backup_that_is_not_the_original() {
        let d = tmp("foreign");
        let e = entry(&d, b"original bytes", b"new bytes");
        std::fs::write(e.backup.as_ref().unwrap(), b"someone else's").unwrap();
        let mut m = Manifest::new(LayoutKind::InPlace, "x");
        m.entries.push(e.clone());
        undo(&mut m);
        assert!(e.backup.as_ref().unwrap().exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}
