//! Files named beside a remote object (virtual dataset sources, external
//! links, external raw data): their URLs, resolved against the object's URL
//! as libhdf5 resolves a name against the folder of the file holding it, and
//! opened on the same store with the same options, each pinned at its open.
//!
//! For an object at `scheme://bucket/dir/x.h5` a name resolves to:
//! - a URL (`s3://…`, `https://…`): itself;
//! - a relative name: `scheme://bucket/dir/` joined with it, `.` and `..`
//!   segments resolved (a `..` above the bucket names nothing), after the
//!   access-property prefix of virtual datasets when it is set (`${ORIGIN}`
//!   = the object's folder, or a URL);
//! - an absolute name `/a/b/src.h5`: the key `a/b/src.h5` of the same bucket
//!   first; then, for virtual dataset sources and external links (as libhdf5
//!   does when an absolute name does not open), its last component in the
//!   object's folder. External raw data files take the absolute key only.
//!
//! The first candidate that opens wins. When none exists the error is the
//! one a local file gives ([`Error::NotFound`] naming the file and what was
//! tried); another failure (refused access, the network) is that typed error.
//! The query string of the object's URL (a pre-signed URL's signature) is
//! not carried to its siblings: it signs that one object only.
//! `HDF5_VDS_PREFIX` and `HDF5_EXT_PREFIX` name local folders and are not
//! consulted for remote objects.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{Fetch, RangeOptions, RangeSource};
use crate::error::{Error, Result};
use crate::file_core::{File, Siblings};
use crate::source::{PreadSource, Source};
use crate::virtual_layout::locate::PrefixKind;

/// Most siblings kept open per remote file.
const MAX_OPENED: usize = 256;

/// What a name beside a remote object refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Named {
    /// A virtual dataset's source file.
    Vds,
    /// An external link's target file.
    ExternalLink,
    /// A file of external raw data.
    RawData,
}

impl From<PrefixKind> for Named {
    fn from(k: PrefixKind) -> Self {
        match k {
            PrefixKind::Vds => Named::Vds,
            PrefixKind::ExternalLink => Named::ExternalLink,
        }
    }
}

/// How a remote file reaches the objects named beside it: its fetcher (which
/// opens them), its read options, and the siblings already opened (each
/// pinned once, so every later read of it sees the same version).
pub(crate) struct RemoteOrigin {
    fetch: Arc<dyn Fetch>,
    options: RangeOptions,
    files: Mutex<HashMap<String, File>>,
    raw: Mutex<HashMap<String, Arc<RangeSource>>>,
    /// Candidates found missing: not asked again (the view stays the one
    /// the first read saw).
    missing: Mutex<Vec<String>>,
}

impl RemoteOrigin {
    /// The origin of a file read through `fetch` with `options`.
    pub(crate) fn new(fetch: Arc<dyn Fetch>, options: RangeOptions) -> Self {
        RemoteOrigin {
            fetch,
            options,
            files: Mutex::new(HashMap::new()),
            raw: Mutex::new(HashMap::new()),
            missing: Mutex::new(Vec::new()),
        }
    }

    /// Open each candidate of `name` in turn with `open` (unless `cached`
    /// holds it); the first that opens wins (see the module docs for the
    /// errors).
    fn first_of<T>(
        &self,
        name: &str,
        kind: Named,
        prefix: Option<&str>,
        cached: impl Fn(&str) -> Option<T>,
        mut open: impl FnMut(&str, Arc<dyn Fetch>) -> Result<T>,
    ) -> Result<T> {
        let urls = candidates(&self.fetch.describe(), name, kind, prefix);
        let mut failed: Option<Error> = None;
        for url in &urls {
            if let Some(t) = cached(url) {
                return Ok(t);
            }
            if lock(&self.missing).contains(url) {
                continue;
            }
            let fetch = match self.fetch.open_other(url) {
                None => {
                    return Err(Error::NotFound(format!(
                        "external file {name} (this remote reader cannot open other objects)"
                    )))
                }
                Some(Err(Error::NotFound(_))) => {
                    let mut missing = lock(&self.missing);
                    if missing.len() >= MAX_OPENED {
                        missing.clear();
                    }
                    missing.push(url.clone());
                    continue;
                }
                Some(Err(e)) => {
                    failed.get_or_insert(e);
                    continue;
                }
                Some(Ok(f)) => f,
            };
            match open(url, fetch) {
                Ok(t) => return Ok(t),
                Err(e @ Error::StaleSnapshot(_)) => return Err(e),
                Err(e) => {
                    failed.get_or_insert(Error::NotFound(format!(
                        "external file {name} (not HDF5: {url}: {e})"
                    )));
                }
            }
        }
        Err(failed.unwrap_or_else(|| {
            Error::NotFound(format!("external file {name} (tried {})", urls.join(", ")))
        }))
    }

    /// The HDF5 file `name` (a virtual dataset source or an external link's
    /// target) beside `holder`, opened once and kept.
    pub(crate) fn open_file(&self, holder: &File, name: &str, kind: PrefixKind) -> Result<File> {
        let vopts = holder.virtual_options();
        let prefix = match kind {
            PrefixKind::Vds => vopts.prefix.clone(),
            PrefixKind::ExternalLink => None,
        };
        let cached = |url: &str| lock(&self.files).get(url).cloned();
        self.first_of(
            name,
            kind.into(),
            prefix.as_deref(),
            cached,
            |url, fetch| {
                let f = File::open_fetch(fetch, self.options.clone())?;
                f.set_virtual_options(vopts.clone());
                let mut files = lock(&self.files);
                if files.len() >= MAX_OPENED {
                    files.clear();
                }
                Ok(files.entry(url.to_string()).or_insert(f).clone())
            },
        )
    }

    /// The external raw data file `name` beside this object, opened once.
    pub(crate) fn open_raw(&self, name: &str) -> Result<Arc<dyn Source>> {
        let cached = |url: &str| {
            let raw = lock(&self.raw);
            raw.get(url).map(|s| Arc::clone(s) as Arc<dyn Source>)
        };
        self.first_of(name, Named::RawData, None, cached, |url, fetch| {
            let s = Arc::new(RangeSource::new(fetch, self.options.clone())?);
            let mut raw = lock(&self.raw);
            if raw.len() >= MAX_OPENED {
                raw.clear();
            }
            Ok(Arc::clone(raw.entry(url.to_string()).or_insert(s)) as Arc<dyn Source>)
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Siblings for RemoteOrigin {
    fn open_file(&self, holder: &File, name: &str, kind: PrefixKind) -> Result<File> {
        RemoteOrigin::open_file(self, holder, name, kind)
    }

    fn open_raw(&self, name: &str) -> Result<Arc<dyn Source>> {
        RemoteOrigin::open_raw(self, name)
    }
}

impl File {
    /// A remote object read through `fetch` (object storage, HTTP, a host's
    /// `fetch`), its reads grouped as `options` say (see [`crate::low_level::fetch`]).
    pub fn open_fetch(fetch: Arc<dyn Fetch>, options: RangeOptions) -> Result<Self> {
        let src = RangeSource::new(Arc::clone(&fetch), options.clone())?;
        let f = Self::from_source(Arc::new(src), None)?;
        f.set_siblings(Arc::new(RemoteOrigin::new(fetch, options)));
        Ok(f)
    }

    /// The external raw data file `name`: beside the remote object this file
    /// was opened from, else in this file's folder
    /// ([`File::resolve_sibling`]).
    pub(crate) fn open_raw_file(&self, name: &str) -> Result<Arc<dyn Source>> {
        match self.remote_origin() {
            Some(r) => r.open_raw(name),
            None => Ok(Arc::new(PreadSource::open(&self.resolve_sibling(name)?)?)),
        }
    }
}

/// `url` without its query string and fragment.
fn without_query(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

/// `url` split into `scheme://authority` and the segments of its folder;
/// None when it is not `scheme://authority/...`.
fn folder(url: &str) -> Option<(&str, Vec<&str>)> {
    let url = without_query(url);
    let (scheme, rest) = url.split_once("://")?;
    let auth_len = rest.find('/').unwrap_or(rest.len());
    let root = &url[..scheme.len() + 3 + auth_len];
    let path = &rest[auth_len..];
    let mut segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if !path.ends_with('/') {
        segs.pop();
    }
    Some((root, segs))
}

/// `root` + `dir` + `name`, `.` and `..` resolved; None when `..` climbs
/// above the root or nothing is named.
fn join(root: &str, dir: &[&str], name: &str) -> Option<String> {
    let mut segs: Vec<&str> = dir.to_vec();
    for s in name.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                segs.pop()?;
            }
            s => segs.push(s),
        }
    }
    (!segs.is_empty() && !name.ends_with('/')).then(|| format!("{root}/{}", segs.join("/")))
}

/// The URLs tried, in order, for the file `name` named by the object at
/// `holder` (see the module docs). `prefix` is the virtual dataset access
/// prefix.
pub(crate) fn candidates(
    holder: &str,
    name: &str,
    kind: Named,
    prefix: Option<&str>,
) -> Vec<String> {
    if name.contains("://") {
        return vec![name.to_string()];
    }
    let Some((root, dir)) = folder(holder) else {
        return Vec::new();
    };
    let mut out: Vec<Option<String>> = Vec::new();
    let rel = match name.strip_prefix('/') {
        Some(abs) => {
            out.push(join(root, &[], abs));
            if kind == Named::RawData {
                return out.into_iter().flatten().collect();
            }
            abs.rsplit('/').next().unwrap_or(abs)
        }
        None => name,
    };
    if let Some(p) = prefix.filter(|p| !p.is_empty() && *p != ".") {
        if let Some(rest) = p.strip_prefix("${ORIGIN}") {
            out.push(join(root, &dir, &format!("{rest}/{rel}")));
        } else if p.contains("://") {
            let with_slash = format!("{}/", without_query(p).trim_end_matches('/'));
            if let Some((r, d)) = folder(&with_slash) {
                out.push(join(r, &d, rel));
            }
        }
    }
    out.push(join(root, &dir, rel));
    let mut seen: Vec<String> = Vec::new();
    for c in out.into_iter().flatten() {
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(holder: &str, name: &str, kind: Named) -> Vec<String> {
        candidates(holder, name, kind, None)
    }

    #[test]
    fn relative_names_resolve_against_the_folder() {
        let h = "s3://b/exp/run1/v.h5";
        assert_eq!(c(h, "a.h5", Named::Vds), ["s3://b/exp/run1/a.h5"]);
        assert_eq!(c(h, "./sub/a.h5", Named::Vds), ["s3://b/exp/run1/sub/a.h5"]);
        assert_eq!(c(h, "../src/a.h5", Named::RawData), ["s3://b/exp/src/a.h5"]);
        assert_eq!(c(h, "../../a.h5", Named::Vds), ["s3://b/a.h5"]);
        // Above the bucket: nothing to try.
        assert!(c(h, "../../../a.h5", Named::Vds).is_empty());
        assert_eq!(c("s3://b/v.h5", "a.h5", Named::Vds), ["s3://b/a.h5"]);
    }

    #[test]
    fn absolute_names_try_the_key_then_the_last_component() {
        let h = "s3://b/d/v.h5";
        assert_eq!(
            c(h, "/old/place/src.h5", Named::Vds),
            ["s3://b/old/place/src.h5", "s3://b/d/src.h5"]
        );
        assert_eq!(
            c(h, "/old/place/src.h5", Named::ExternalLink),
            ["s3://b/old/place/src.h5", "s3://b/d/src.h5"]
        );
        assert_eq!(c(h, "/old/raw.bin", Named::RawData), ["s3://b/old/raw.bin"]);
    }

    #[test]
    fn queries_stay_with_their_object_and_urls_are_taken_as_given() {
        let h = "https://h.example/b/d/v.h5?X-Amz-Signature=abc";
        assert_eq!(c(h, "a.h5", Named::Vds), ["https://h.example/b/d/a.h5"]);
        assert_eq!(c(h, "gs://o/x.h5", Named::Vds), ["gs://o/x.h5"]);
    }

    #[test]
    fn the_access_prefix_comes_first() {
        let h = "s3://b/d/v.h5";
        assert_eq!(
            candidates(h, "a.h5", Named::Vds, Some("${ORIGIN}/sub")),
            ["s3://b/d/sub/a.h5", "s3://b/d/a.h5"]
        );
        assert_eq!(
            candidates(h, "a.h5", Named::Vds, Some("s3://other/p/")),
            ["s3://other/p/a.h5", "s3://b/d/a.h5"]
        );
        assert_eq!(
            candidates(h, "a.h5", Named::Vds, Some(".")),
            ["s3://b/d/a.h5"]
        );
    }
}
