//! Atomic replacement of a file (`docs/medh5-format.md` §8, neighbours V5): write to
//! `<dir>/.<name>.tmp-<pid>-<8 hex>` (created exclusively, up to 64 names
//! tried), fsync, give it the existing target's permission bits (and owner and
//! group where permitted), rename over the target, fsync the directory.
//!
//! - A new target gets `0666 & ~umask` (the mode `create_new` asks for).
//! - A symlink target is followed: the file the link names (resolved through
//!   every link) is replaced and the link is kept.
//! - Dropping an uncommitted [`TempFile`] removes the temporary, leaving any old
//!   target untouched. A writer killed before that (kill -9) leaves its
//!   temporary behind; the next [`TempFile::create`] for the same target
//!   removes temporaries whose writer process no longer exists.

use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Names tried before giving up on a temporary (spec §8: 64).
const NAME_TRIES: usize = 64;
/// Symlinks followed when resolving a target.
const MAX_LINKS: usize = 40;

/// A temporary file next to its final destination.
pub struct TempFile {
    tmp: PathBuf,
    target: PathBuf,
    done: bool,
    /// Publish only if the target does not exist ([`TempFile::create_new`]).
    no_replace: bool,
}

fn random_suffix() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut x =
        nanos ^ (u64::from(std::process::id()) << 32) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // splitmix64 finaliser
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)) as u32
}

/// The file `target` names: itself, or for a symlink the file at the end of
/// its chain of links (which need not exist yet).
pub fn resolve_target(target: &Path) -> Result<PathBuf> {
    let mut p = target.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p).map_err(|e| Error::io(p.display(), e))?;
                p = if to.is_absolute() {
                    to
                } else {
                    parent_dir(&p).join(to)
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::InvalidArgument(format!(
        "{}: too many levels of symbolic links",
        target.display()
    )))
}

fn parent_dir(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Is `name` a temporary of ours for the file `base` (`.<base>.tmp-<pid>-<8 hex>`),
/// or a temporary of such a temporary (a writer whose target was itself a
/// temporary, as `medh5 pack` stages one: `..<base>.tmp-<pid>-<hex>.tmp-<pid>-<hex>`)?
/// Returns the pid of the outermost writer.
pub fn temp_owner(name: &str, base: &str) -> Option<u32> {
    let (inner, pid) = split_temp(name)?;
    (inner == base || temp_owner(inner, base).is_some()).then_some(pid)
}

/// `.<inner>.tmp-<pid>-<8 hex>` → (`inner`, pid).
fn split_temp(name: &str) -> Option<(&str, u32)> {
    let rest = name.strip_prefix('.')?;
    let at = rest.rfind(".tmp-")?;
    let (inner, tail) = (&rest[..at], &rest[at + ".tmp-".len()..]);
    let (pid, hex) = tail.split_once('-')?;
    if hex.len() != 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some((inner, pid.parse().ok()?))
}

fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    #[cfg(unix)]
    {
        let Ok(p) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: kill with signal 0 only checks that the process exists.
        let rc = unsafe { libc::kill(p, 0) };
        rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// Remove temporaries for `base` in `dir` left by writers that no longer run.
/// Returns how many were removed.
pub fn remove_stale(dir: &Path, base: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(pid) = temp_owner(name, base) {
            if !process_alive(pid) && std::fs::remove_file(e.path()).is_ok() {
                n += 1;
            }
        }
    }
    n
}

impl TempFile {
    /// Create the temporary file for `target` (exclusively), beside the file
    /// `target` names (a symlink is followed).
    pub fn create(target: &Path) -> Result<(TempFile, File)> {
        let real = resolve_target(target)?;
        let name = real
            .file_name()
            .ok_or_else(|| {
                Error::InvalidArgument(format!("{} has no file name", target.display()))
            })?
            .to_string_lossy()
            .into_owned();
        let dir = parent_dir(&real);
        remove_stale(&dir, &name);
        let pid = std::process::id();
        for _ in 0..NAME_TRIES {
            let tmp = dir.join(format!(".{name}.tmp-{pid}-{:08x}", random_suffix()));
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(f) => {
                    return Ok((
                        TempFile {
                            tmp,
                            target: real,
                            done: false,
                            no_replace: false,
                        },
                        f,
                    ))
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(format!("create {}", tmp.display()), e)),
            }
        }
        Err(Error::InvalidArgument(
            "could not pick a temporary file name".into(),
        ))
    }

    /// Like [`TempFile::create`], for a target that must not exist: refused
    /// now when it does, and the final step links the temporary into place
    /// only if the target still does not exist (an `AlreadyExists` I/O error
    /// otherwise, the temporary removed). A dangling symlink counts as existing.
    pub fn create_new(target: &Path) -> Result<(TempFile, File)> {
        refuse_existing(target)?;
        let (mut t, f) = Self::create(target)?;
        t.target = target.to_path_buf();
        t.no_replace = true;
        Ok((t, f))
    }

    /// Path of the temporary file.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// The file the rename replaces (the target with symlinks resolved).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// fsync `file`, give it the old target's mode (and owner), rename it over
    /// the target and fsync the directory.
    pub fn commit(self, file: File) -> Result<()> {
        let dir = parent_dir(&self.target);
        Unsynced { temp: self, file }.sync()?.publish()?;
        sync_dir(&dir);
        Ok(())
    }
}

/// A complete temporary file not yet flushed to disk: [`Unsynced::sync`]
/// flushes it, [`Synced::publish`] renames it over the target. Splitting the
/// commit lets a caller writing many files check each one first, run the
/// fsyncs side by side and flush their directory once ([`sync_dir`]).
/// Dropping either stage removes the temporary.
pub struct Unsynced {
    temp: TempFile,
    file: File,
}

/// A temporary file flushed to disk with the old target's mode, not yet renamed.
pub struct Synced {
    temp: TempFile,
}

impl Unsynced {
    /// The temporary file's path (complete: it can be opened and checked).
    pub fn path(&self) -> &Path {
        &self.temp.tmp
    }

    /// The file the rename will replace.
    pub fn target(&self) -> &Path {
        &self.temp.target
    }

    /// Give the temporary the old target's mode (and owner) and fsync it.
    pub fn sync(self) -> Result<Synced> {
        let Unsynced { temp, file } = self;
        if let Ok(old) = std::fs::metadata(&temp.target) {
            keep_permissions(&file, &old)
                .map_err(|e| Error::io(format!("set mode of {}", temp.tmp.display()), e))?;
        }
        file.sync_all()
            .map_err(|e| Error::io(format!("fsync {}", temp.tmp.display()), e))?;
        Ok(Synced { temp })
    }
}

impl Synced {
    /// Rename the temporary over the target. The rename is durable once the
    /// target's directory is flushed ([`sync_dir`]).
    pub fn publish(mut self) -> Result<()> {
        if self.temp.no_replace {
            // link(2) fails with EEXIST instead of replacing: no window in
            // which another writer's file could be overwritten
            std::fs::hard_link(&self.temp.tmp, &self.temp.target)
                .map_err(|e| Error::io(format!("create_new {}", self.temp.target.display()), e))?;
            let _ = std::fs::remove_file(&self.temp.tmp);
            self.temp.done = true;
            return Ok(());
        }
        std::fs::rename(&self.temp.tmp, &self.temp.target).map_err(|e| {
            Error::io(
                format!(
                    "rename {} -> {}",
                    self.temp.tmp.display(),
                    self.temp.target.display()
                ),
                e,
            )
        })?;
        self.temp.done = true;
        Ok(())
    }

    /// The file the rename replaces.
    pub fn target(&self) -> &Path {
        &self.temp.target
    }
}

/// An `AlreadyExists` I/O error when something (even a dangling symlink) is at `target`.
fn refuse_existing(target: &Path) -> Result<()> {
    if std::fs::symlink_metadata(target).is_ok() {
        return Err(Error::io(
            format!("create_new {}", target.display()),
            std::io::Error::new(std::io::ErrorKind::AlreadyExists, "the target exists"),
        ));
    }
    Ok(())
}

/// fsync a directory, making the renames in it durable (best effort: not
/// every platform allows opening a directory).
pub fn sync_dir(dir: &Path) {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

impl TempFile {
    /// Pair the temporary with its open, complete `file` for a split commit.
    pub fn unsynced(self, file: File) -> Unsynced {
        Unsynced { temp: self, file }
    }
}

/// The old target's permission bits, and its owner and group where this
/// process may set them (root, or a group it belongs to); an owner change that
/// is not permitted is skipped, as the spec allows.
fn keep_permissions(file: &File, old: &std::fs::Metadata) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let now = file.metadata()?;
        let differs = now.uid() != old.uid() || now.gid() != old.gid();
        if differs && std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid())).is_err() {
            let _ = std::os::unix::fs::fchown(file, None, Some(old.gid()));
        }
    }
    file.set_permissions(old.permissions())
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("purehdf-atomic-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn write(target: &Path, bytes: &[u8]) {
        let (t, mut f) = TempFile::create(target).unwrap();
        let name = t.path().file_name().unwrap().to_str().unwrap().to_string();
        let base = t
            .target()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert_eq!(temp_owner(&name, &base), Some(std::process::id()), "{name}");
        f.write_all(bytes).unwrap();
        t.commit(f).unwrap();
    }

    #[test]
    fn split_commit_checks_then_publishes_and_drops_clean_up() {
        let d = scratch("split");
        let p = d.join("a.h5");
        write(&p, b"old");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o604)).unwrap();
        // Unsynced: complete and readable at its path, target untouched.
        let (t, mut f) = TempFile::create(&p).unwrap();
        f.write_all(b"new").unwrap();
        let u = t.unsynced(f);
        assert_eq!(std::fs::read(u.path()).unwrap(), b"new");
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        let tmp = u.path().to_path_buf();
        // Dropped before publishing (at either stage): the temporary goes.
        drop(u);
        assert!(!tmp.exists());
        let (t, mut f) = TempFile::create(&p).unwrap();
        f.write_all(b"new").unwrap();
        let s = t.unsynced(f).sync().unwrap();
        let tmp = s.temp.tmp.clone();
        drop(s);
        assert!(!tmp.exists());
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        // Published: new bytes under the old mode, nothing else in the directory.
        let (t, mut f) = TempFile::create(&p).unwrap();
        f.write_all(b"new").unwrap();
        t.unsynced(f).sync().unwrap().publish().unwrap();
        sync_dir(&d);
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o604
        );
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn mode_is_kept_and_new_files_follow_the_umask() {
        let d = scratch("mode");
        let p = d.join("a.h5");
        write(&p, b"one");
        let m = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        // SAFETY: umask only reads and sets this process's mask.
        let mask = unsafe {
            let m = libc::umask(0o022);
            libc::umask(m);
            m
        };
        assert_eq!(m, 0o666 & !(mask as u32));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write(&p, b"two");
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn symlink_target_is_followed_and_kept() {
        let d = scratch("link");
        let real = d.join("real.h5");
        let link = d.join("link.h5");
        write(&real, b"old");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink("real.h5", &link).unwrap();
        write(&link, b"new");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        assert_eq!(
            std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn stale_temporaries_are_removed_and_live_ones_kept() {
        let d = scratch("stale");
        // pid 0x7fff_fff0 does not exist; our own pid does.
        let dead = d.join(".x.h5.tmp-2147483632-0badf00d");
        let live = d.join(format!(".x.h5.tmp-{}-00000001", std::process::id()));
        let other = d.join(".y.h5.tmp-2147483632-0badf00d");
        let nested = d.join("..x.h5.tmp-2147483632-0badf00d.tmp-2147483632-0badf00e");
        for p in [&dead, &live, &other, &nested] {
            std::fs::write(p, b"partial").unwrap();
        }
        write(&d.join("x.h5"), b"done");
        assert!(!dead.exists());
        assert!(
            !nested.exists(),
            "a dead writer's temporary of a temporary stays"
        );
        assert!(live.exists());
        assert!(other.exists());
        assert_eq!(temp_owner(".x.h5.tmp-12-0badf00", "x.h5"), None);
        // A temporary of a temporary (a writer whose target was staged).
        assert_eq!(
            temp_owner("..x.h5.tmp-12-0badf00d.tmp-34-00c0ffee", "x.h5"),
            Some(34)
        );
        assert_eq!(
            temp_owner("..y.h5.tmp-12-0badf00d.tmp-34-00c0ffee", "x.h5"),
            None
        );
        assert_eq!(
            temp_owner(".x.h5.tmp-12-0badf00d.tmp-34-00c0ffee", "x.h5"),
            None
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn an_uncommitted_temporary_is_removed() {
        let d = scratch("drop");
        let p = d.join("b.h5");
        write(&p, b"old");
        let (t, mut f) = TempFile::create(&p).unwrap();
        f.write_all(b"half").unwrap();
        let tmp = t.path().to_path_buf();
        drop(t);
        assert!(!tmp.exists());
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        let _ = std::fs::remove_dir_all(&d);
    }
}
