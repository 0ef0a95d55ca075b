//! `docs/medh5-format.md` §2: a MEDH5 file holds its own bytes. A file in
//! which any object would read another file — an external link, a dataset
//! with external raw-data storage (the External Data Files message), a
//! virtual dataset — is refused before anything else is looked at, as the
//! reference refuses it: following those would read files on this machine
//! that the file's author chose.
//!
//! The walk visits every object once (by header address), depth first in the
//! byte order of link names, the order the reference lists offenders in.
//! Soft links are not followed (they name objects of this file, which the
//! walk reaches through their hard links). Objects that cannot be read are
//! skipped here: the command that needs them reports them itself.

use std::collections::HashSet;
use std::path::Path;

use crate::error::{Error, Result};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::link_walk::LinkWalk;
use purehdf::low_level::messages::layout::Layout;
use purehdf::low_level::messages::link::Link;

/// Cap on the objects one walk visits (a file-driven loop).
const MAX_OBJECTS: usize = 1 << 20;
/// Offenders named in the message; the rest are counted.
const SHOWN: usize = 5;

/// What makes an object read another file, in the reference's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Foreign {
    /// A link to an object in another file.
    ExternalLink,
    /// A dataset whose raw data lives in other files.
    ExternalStorage,
    /// A virtual dataset (its data is mapped from other datasets).
    Virtual,
}

impl Foreign {
    fn words(self) -> &'static str {
        match self {
            Foreign::ExternalLink => "an external link",
            Foreign::ExternalStorage => "external raw-data storage",
            Foreign::Virtual => "a virtual dataset",
        }
    }
}

/// Every path (without the leading `/`) at which the file reaches outside
/// itself, in walk order.
pub fn foreign_paths(file: &File) -> Result<Vec<(String, Foreign)>> {
    let mut found = Vec::new();
    let root = file.root()?;
    let mut seen: HashSet<u64> = HashSet::from([root.address()]);
    let mut walk = LinkWalk::new(&root)?;
    while let Some((path, link)) = walk.next_link() {
        let addr = match link {
            Link::Hard(a) => a,
            Link::External { .. } => {
                found.push((path, Foreign::ExternalLink));
                continue;
            }
            Link::Soft(_) | Link::UserDefined { .. } => continue,
        };
        if !seen.insert(addr) {
            continue;
        }
        if seen.len() > MAX_OBJECTS {
            return Err(Error::invalid("too many objects"));
        }
        match file.object_at(addr, format!("/{path}")) {
            Ok(Object::Group(g)) => {
                // a group whose links cannot be read is skipped too
                let _ = walk.enter(path, &g);
            }
            Ok(Object::Dataset(ds)) => {
                if matches!(ds.layout(), Layout::Virtual { .. }) {
                    found.push((path, Foreign::Virtual));
                } else if ds.external_files().is_some() {
                    found.push((path, Foreign::ExternalStorage));
                }
            }
            Ok(Object::NamedDatatype(_)) | Err(_) => {}
        }
    }
    Ok(found)
}

/// Refuse the file when it reaches outside itself, with the reference's
/// words; `display` is the file as the user named it.
pub fn check(file: &File, display: &str) -> Result<()> {
    let found = foreign_paths(file)?;
    if found.is_empty() {
        return Ok(());
    }
    let mut list = found
        .iter()
        .take(SHOWN)
        .map(|(p, k)| format!("/{p} is {}", k.words()))
        .collect::<Vec<_>>()
        .join("; ");
    if found.len() > SHOWN {
        list.push_str(&format!(" (and {} more)", found.len() - SHOWN));
    }
    Err(Error::Refused(format!(
        "'{display}' is not self-contained: {list}. A MEDH5 file holds its own bytes (§2); \
         following these would read files on this machine that the file's author chose, \
         so the file is refused"
    )))
}

/// Open the HDF5 file at `path`, or the remote object when `path` is a URL
/// (`s3://`, `https://`, ...) and the `remote` feature is on. Not checked.
pub fn open_hdf5(path: &Path) -> purehdf::Result<File> {
    #[cfg(feature = "remote")]
    {
        if let Some(f) = take_handed_over(path) {
            return Ok(f);
        }
        purehdf::low_level::remote::open_path_or_url(path)
    }
    #[cfg(not(feature = "remote"))]
    {
        File::open(path)
    }
}

/// Remote files opened once to look at them (is this a collection?) and
/// handed to the next [`open_hdf5`] of the same URL, so a command does not
/// pay the opening requests twice. Each is taken once; at most
/// [`HANDOVER_MAX`] wait.
#[cfg(feature = "remote")]
static HANDED_OVER: std::sync::Mutex<Vec<(std::path::PathBuf, File)>> =
    std::sync::Mutex::new(Vec::new());

/// How many opened remote files [`hand_over`] keeps for their next open.
#[cfg(feature = "remote")]
const HANDOVER_MAX: usize = 8;

/// Keep `file`, opened from the URL `path`, for the next [`open_hdf5`] of
/// that URL (local paths are not kept: opening them costs nothing).
pub(crate) fn hand_over(path: &Path, file: &File) {
    #[cfg(feature = "remote")]
    if path
        .to_str()
        .is_some_and(purehdf::low_level::remote::is_url)
    {
        let mut kept = HANDED_OVER.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() < HANDOVER_MAX {
            kept.push((path.to_path_buf(), file.clone()));
        }
    }
    #[cfg(not(feature = "remote"))]
    let _ = (path, file);
}

#[cfg(feature = "remote")]
fn take_handed_over(path: &Path) -> Option<File> {
    let mut kept = HANDED_OVER.lock().unwrap_or_else(|e| e.into_inner());
    let i = kept.iter().position(|(p, _)| p == path)?;
    Some(kept.swap_remove(i).1)
}

/// Open the file at `path` and refuse it unless it is self-contained
/// ([`check`]); `display` is the file as the user named it.
pub fn open(path: &Path, display: &str) -> Result<File> {
    let file = open_hdf5(path)?;
    check(&file, display)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use purehdf::low_level::write::FileWriter;

    /// A file with `n` external links under `x/`, a soft link that resolves
    /// and one that dangles.
    fn file_with_links(n: usize) -> File {
        let mut w = FileWriter::in_memory();
        let r = w.root();
        let x = w.create_group(r, "x").unwrap();
        let g = w.create_group(r, "images").unwrap();
        w.soft_link(g, "alias", "/x").unwrap();
        w.soft_link(g, "gone", "/nowhere").unwrap();
        for i in 0..n {
            w.external_link(x, &format!("e{i:02}"), "other.h5", "/a")
                .unwrap();
        }
        // a second name for `x`: its links are counted once
        w.hard_link(r, "y", x).unwrap();
        File::from_bytes(w.finish().unwrap()).unwrap()
    }

    #[test]
    fn self_contained_file_passes() {
        let f = file_with_links(0);
        assert!(foreign_paths(&f).unwrap().is_empty());
        assert!(check(&f, "s.medh5").is_ok());
    }

    #[test]
    fn external_links_are_refused_with_the_reference_words() {
        let f = file_with_links(1);
        let found = foreign_paths(&f).unwrap();
        assert_eq!(found, vec![("x/e00".to_string(), Foreign::ExternalLink)]);
        let e = check(&f, "s.medh5").unwrap_err().to_string();
        assert_eq!(
            e,
            "'s.medh5' is not self-contained: /x/e00 is an external link. A MEDH5 file holds \
             its own bytes (§2); following these would read files on this machine that the \
             file's author chose, so the file is refused"
        );
    }

    #[test]
    fn five_offenders_are_named_and_the_rest_counted() {
        let f = file_with_links(8);
        let e = check(&f, "s.medh5").unwrap_err().to_string();
        assert!(
            e.contains("/x/e04 is an external link (and 3 more). A MEDH5"),
            "{e}"
        );
        assert!(!e.contains("/x/e05"), "{e}");
    }
}
