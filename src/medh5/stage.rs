//! Outputs of the storage commands that take their name only once complete
//! (`docs/medh5-format.md` §8): a [`Staged`] output is written atomically
//! under a hidden name beside the target, checked, then renamed over it with
//! the target's permission bits; a symlink target is followed.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use purehdf::low_level::write::atomic::remove_stale;
use purehdf::low_level::write::FileWriter;

/// Give the temporary of `w` the permission bits of `target` (when it exists).
pub fn keep_mode(target: &Path, w: &FileWriter) -> Result<()> {
    match w.temp_path() {
        Some(tmp) => keep_mode_from(target, tmp),
        None => Ok(()),
    }
}

/// Copy the permission bits of `from` (when it exists) onto `to`.
pub fn keep_mode_from(from: &Path, to: &Path) -> Result<()> {
    if let Ok(m) = std::fs::metadata(from) {
        std::fs::set_permissions(to, m.permissions())
            .map_err(|e| Error::io(format!("chmod {}", to.display()), e))?;
    }
    Ok(())
}

/// A complete output checked before it takes its name: written (atomically,
/// by [`FileWriter`]) under a hidden name beside the target, checked by the
/// caller, then renamed over the target and the directory flushed. Dropped
/// unpublished, the staged file is removed and the target untouched.
pub struct Staged {
    staged: PathBuf,
    target: PathBuf,
    done: bool,
}

impl Staged {
    /// Stage for `target` (a symlink is followed: the file it names is replaced).
    pub fn new(target: &Path) -> Result<Staged> {
        let target = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
        let name = target
            .file_name()
            .ok_or_else(|| Error::invalid(format!("{} has no file name", target.display())))?
            .to_string_lossy()
            .into_owned();
        // what killed runs left: the staged files and the writer's temporaries
        // of them (`..<name>.tmp-<pid>-<hex>.tmp-<pid>-<hex>`), whose names
        // the writer's own sweep (for the staged name) never matches
        if let Some(dir) = target.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            remove_stale(dir, &name);
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let staged =
            target.with_file_name(format!(".{name}.tmp-{}-{:08x}", std::process::id(), nanos));
        Ok(Staged {
            staged,
            target,
            done: false,
        })
    }

    /// Where the output is written.
    pub fn path(&self) -> &Path {
        &self.staged
    }

    /// Rename the checked output over the target (mode bits of an existing
    /// target kept) and flush the directory.
    pub fn publish(mut self) -> Result<()> {
        keep_mode_from(&self.target, &self.staged)?;
        std::fs::rename(&self.staged, &self.target).map_err(|e| {
            Error::io(
                format!(
                    "rename {} -> {}",
                    self.staged.display(),
                    self.target.display()
                ),
                e,
            )
        })?;
        self.done = true;
        if let Some(dir) = self.target.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.staged);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_output_replaces_the_target_only_when_published() {
        let dir = std::env::temp_dir().join(format!("purehdf-stage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("t.medh5");
        std::fs::write(&target, b"old").unwrap();
        {
            let s = Staged::new(&target).unwrap();
            std::fs::write(s.path(), b"new").unwrap();
            assert!(s
                .path()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".t.medh5.tmp-"));
            // dropped unpublished: removed, target untouched
        }
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
            let link = dir.join("l.medh5");
            std::os::unix::fs::symlink(&target, &link).unwrap();
            let s = Staged::new(&link).unwrap();
            std::fs::write(s.path(), b"new").unwrap();
            s.publish().unwrap();
            assert!(std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
            assert_eq!(std::fs::read(&target).unwrap(), b"new");
            let mode = std::fs::metadata(&target).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
