//! Where libhdf5 looks for a file named by a virtual dataset mapping or an
//! external link (`H5F_prefix_open_file` in libhdf5's `H5Fint.c`), and the
//! options a reader of virtual datasets can set (a prefix, filling missing
//! sources).
//!
//! The order, first file that opens wins:
//! 1. an absolute name as given; when it does not open, only its last
//!    component is used from here on (a relative name is never shortened);
//! 2. each `:`-separated entry of `HDF5_VDS_PREFIX` (`HDF5_EXT_PREFIX` for
//!    external links), joined with the name;
//! 3. the access-property prefix (for virtual datasets: `HDF5_VDS_PREFIX`
//!    again when set, else [`VirtualOptions::prefix`]; a leading `${ORIGIN}`
//!    is the directory of the file holding the mapping; `.` or empty means
//!    none);
//! 4. the directory of the file holding the mapping or link, as it was opened;
//! 5. the name relative to the current directory;
//! 6. the directory of that file with symbolic links resolved.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Which kind of reference is being resolved (they read different
/// environment variables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefixKind {
    /// A virtual dataset mapping's source file (`HDF5_VDS_PREFIX`).
    Vds,
    /// An external link's target file (`HDF5_EXT_PREFIX`).
    ExternalLink,
}

/// How virtual datasets are read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VirtualOptions {
    /// Read the elements of a missing source (file or dataset that cannot be
    /// opened) as the fill value, as libhdf5 does, instead of failing with
    /// [`crate::Error::MissingVdsSource`]. Every such read is recorded (see
    /// [`filled_sources`]).
    pub fill_missing: bool,
    /// The dataset-access prefix of libhdf5 (`H5Pset_virtual_prefix`): a
    /// folder searched for relative source names (`${ORIGIN}` = the folder of
    /// the file holding the virtual dataset).
    pub prefix: Option<String>,
}

static DEFAULT: Mutex<Option<VirtualOptions>> = Mutex::new(None);

/// Most missing sources remembered by [`filled_sources`].
const MAX_FILLED: usize = 4096;
static FILLED: Mutex<Vec<FilledSource>> = Mutex::new(Vec::new());

/// A missing source whose elements a read returned as the fill value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilledSource {
    /// The virtual dataset's path.
    pub dataset: String,
    /// The source file name as stored in the mapping.
    pub source_file: String,
    /// The source dataset name as stored in the mapping.
    pub source_dataset: String,
    /// Why the source could not be opened.
    pub reason: String,
}

/// Set the options every file uses unless it has its own
/// ([`crate::File::set_virtual_options`]); set them before the first read.
pub fn set_default_options(options: VirtualOptions) {
    *DEFAULT.lock().unwrap_or_else(|e| e.into_inner()) = Some(options);
}

/// The process-wide options (all off unless [`set_default_options`] was called).
pub fn default_options() -> VirtualOptions {
    DEFAULT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_default()
}

/// Record that a read filled `s` (kept once, at most a few thousand).
pub(crate) fn record_filled(s: FilledSource) {
    let mut v = FILLED.lock().unwrap_or_else(|e| e.into_inner());
    if v.len() < MAX_FILLED && !v.contains(&s) {
        v.push(s);
    }
}

/// The missing sources read as the fill value so far in this process (each
/// once), so a tool can warn and report them.
pub fn filled_sources() -> Vec<FilledSource> {
    FILLED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The paths tried, in libhdf5's order, for the file `name` referenced from
/// the file at `holder` (`None`: a file without a path, only absolute and
/// current-directory names can resolve). `prop_prefix` is the access
/// property prefix (virtual datasets only).
pub fn candidates(
    name: &str,
    holder: Option<&Path>,
    kind: PrefixKind,
    prop_prefix: Option<&str>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let given = Path::new(name);
    let temp: PathBuf = if given.is_absolute() {
        out.push(given.to_path_buf());
        given
            .file_name()
            .map(PathBuf::from)
            .unwrap_or_else(|| given.to_path_buf())
    } else {
        given.to_path_buf()
    };
    let extpath = holder.and_then(Path::parent).map(|d| {
        if d.is_absolute() {
            d.to_path_buf()
        } else {
            std::env::current_dir()
                .map(|c| c.join(d))
                .unwrap_or_else(|_| d.to_path_buf())
        }
    });
    let env_name = match kind {
        PrefixKind::Vds => "HDF5_VDS_PREFIX",
        PrefixKind::ExternalLink => "HDF5_EXT_PREFIX",
    };
    let env = std::env::var(env_name).ok().filter(|s| !s.is_empty());
    if let Some(e) = &env {
        for p in e.split(':').filter(|p| !p.is_empty()) {
            out.push(Path::new(p).join(&temp));
        }
    }
    if kind == PrefixKind::Vds {
        let prop = env.as_deref().or(prop_prefix);
        if let Some(p) = prop.filter(|p| !p.is_empty() && *p != ".") {
            let expanded = match (p.strip_prefix("${ORIGIN}"), &extpath) {
                (Some(rest), Some(dir)) => {
                    PathBuf::from(format!("{}{rest}", dir.to_string_lossy()))
                }
                _ => PathBuf::from(p),
            };
            out.push(expanded.join(&temp));
        }
    }
    if let Some(dir) = &extpath {
        out.push(dir.join(&temp));
    }
    out.push(temp.clone());
    if let Some(actual) = holder.and_then(|h| std::fs::canonicalize(h).ok()) {
        if let Some(dir) = actual.parent() {
            out.push(dir.join(&temp));
        }
    }
    let mut seen = Vec::new();
    out.retain(|p| {
        if seen.contains(p) {
            false
        } else {
            seen.push(p.clone());
            true
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_name_is_never_shortened_to_its_last_component() {
        let c = candidates(
            "scan0001/marana_0000.h5",
            Some(Path::new("/data/exp/sample.h5")),
            PrefixKind::Vds,
            None,
        );
        assert_eq!(c[0], PathBuf::from("/data/exp/scan0001/marana_0000.h5"));
        assert!(
            c.iter().all(|p| p.ends_with("scan0001/marana_0000.h5")),
            "{c:?}"
        );
    }

    #[test]
    fn an_absolute_name_falls_back_to_its_last_component() {
        let c = candidates(
            "/old/place/src.h5",
            Some(Path::new("/data/v.h5")),
            PrefixKind::ExternalLink,
            None,
        );
        assert_eq!(c[0], PathBuf::from("/old/place/src.h5"));
        assert_eq!(c[1], PathBuf::from("/data/src.h5"));
        assert_eq!(c[2], PathBuf::from("src.h5"));
    }

    #[test]
    fn the_property_prefix_expands_origin() {
        let c = candidates(
            "a.h5",
            Some(Path::new("/d/v.h5")),
            PrefixKind::Vds,
            Some("${ORIGIN}/sub"),
        );
        if std::env::var_os("HDF5_VDS_PREFIX").is_none() {
            assert_eq!(c[0], PathBuf::from("/d/sub/a.h5"));
            assert_eq!(c[1], PathBuf::from("/d/a.h5"));
        }
    }
}
