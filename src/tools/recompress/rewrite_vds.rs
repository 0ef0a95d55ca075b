//! `--rewrite-vds` of the mirror layout (neighbours.md row E6): a file whose
//! virtual datasets name sources by absolute paths under `--from` is
//! rewritten into the mirror, not copied byte for byte, with those names
//! moved under `--to`, so it reads the mirrored (recompressed) sources.
//! Everything else in it is copied as stored (chunks kept, links kept).
//! Relative source names need nothing: they already resolve in the mirror.

use std::path::{Path, PathBuf};

use purehdf::low_level::copy::{copy_group_into, CopyOptions, CopyPolicy};
use purehdf::low_level::file::File;
use purehdf::low_level::virtual_layout;
use purehdf::low_level::write::FileWriter;
use purehdf::Result;

use super::plan::datasets_of;

/// Moves absolute source names under `from` to `to`.
struct Rebase {
    from: Vec<PathBuf>,
    to: PathBuf,
}

impl Rebase {
    fn new(from: &Path, to: &Path) -> Self {
        let mut f = vec![from.to_path_buf()];
        if let Ok(c) = std::fs::canonicalize(from) {
            if c != from {
                f.push(c);
            }
        }
        Rebase {
            from: f,
            to: to.to_path_buf(),
        }
    }

    fn rebased(&self, name: &str) -> Option<String> {
        let p = Path::new(name);
        if !p.is_absolute() {
            return None;
        }
        self.from
            .iter()
            .find_map(|f| p.strip_prefix(f).ok())
            .map(|rel| self.to.join(rel).to_string_lossy().into_owned())
    }
}

impl CopyPolicy for Rebase {
    fn virtual_source(&self, _dataset: &str, source_file: &str) -> String {
        self.rebased(source_file)
            .unwrap_or_else(|| source_file.to_string())
    }
}

/// True when `path` holds a virtual dataset with an absolute source name
/// under `from` (files that cannot be read: false, they are copied as bytes).
pub fn needs_rewrite(path: &Path, from: &Path) -> bool {
    let Ok(f) = File::open(path) else {
        return false;
    };
    let r = Rebase::new(from, Path::new("/"));
    datasets_of(&f).is_ok_and(|ds| {
        ds.iter().any(|(d, _)| {
            d.layout_kind() == "virtual"
                && virtual_layout::mappings(d)
                    .is_ok_and(|m| m.iter().any(|m| r.rebased(&m.source_file).is_some()))
        })
    })
}

/// Write `src` to `dest` (atomically) with its absolute source names under
/// `from` moved under `to`.
pub fn rewrite(src: &Path, dest: &Path, from: &Path, to: &Path) -> Result<()> {
    let f = File::open(src)?;
    let mut w = FileWriter::create(dest)?;
    let root = w.root();
    copy_group_into(
        &f,
        f.root()?,
        &mut w,
        root,
        &CopyOptions::default(),
        &Rebase::new(from, to),
    )?;
    w.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absolute_names_under_from_move() {
        let r = Rebase::new(
            Path::new("/x/RAW_DATA"),
            Path::new("/x/RAW_DATA_COMPRESSED"),
        );
        assert_eq!(
            r.virtual_source("/d", "/x/RAW_DATA/s/scan0001/m.h5"),
            "/x/RAW_DATA_COMPRESSED/s/scan0001/m.h5"
        );
        assert_eq!(r.virtual_source("/d", "scan0001/m.h5"), "scan0001/m.h5");
        assert_eq!(r.virtual_source("/d", "/elsewhere/m.h5"), "/elsewhere/m.h5");
    }
}
