//! `index build` and the index half of `fix --rebuild-index` (see
//! `docs/medh5-format.md` §6.8, §8, §5.8): an amend that (re)writes
//! `/index/<ann_id>` entries. The source must be an intact sample (refused
//! as the reference refuses an amend: unknown algorithm or malformed digest
//! E703, `content_id` that does not recompute E702, bytes that do not match
//! their digest E701); entries are built before anything is written, the
//! file is copied on write ([`crate::amend::cow`]), the `training` profile added,
//! `content_id` recomputed and the target replaced atomically.

use std::collections::HashSet;
use std::path::Path;

use super::load::{build_annotation, strings, voxel_annotations};
use super::write::write_entry;
use super::{IndexEntry, IndexOptions};
use crate::amend::cow::{copy_sample, finish_root, Stamp};
use crate::canonical_json::Json;
use crate::error::{Error, Result};
use crate::integrity::{group_digest, DigestAlgo};
use crate::profiles::Profile;
use crate::sample::{attr_json, read_scalar_string};
use crate::verify::{compute_digest, verify_file};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::write::FileWriter;

/// The reference's refusal: `[code] refusing to amend '<file>': <why>`.
fn refuse(code: &str, display: &str, why: String) -> Error {
    Error::Code {
        code: code.into(),
        message: format!("refusing to amend '{display}': {why}"),
    }
}

fn root_text(file: &File, name: &str) -> Result<Option<Json>> {
    match file.root()?.attribute(name) {
        Ok(a) => Ok(Some(attr_json(file, &a)?)),
        Err(_) => Ok(None),
    }
}

/// The amend preconditions (§8); the file's digest algorithm when they hold.
pub fn amend_check(file: &File, display: &str) -> Result<DigestAlgo> {
    match root_text(file, "medh5_kind")? {
        Some(Json::Str(k)) if k == "sample" => {}
        Some(Json::Str(k)) if k == "collection" => {
            return Err(refuse(
                "E008",
                display,
                "it is a collection; amend its members".into(),
            ))
        }
        _ => return Err(refuse("E006", display, "it is not a medh5 sample".into())),
    }
    let algo = match root_text(file, "digest_algo")? {
        None => DigestAlgo::default(),
        Some(Json::Str(s)) => DigestAlgo::from_name(&s).ok_or_else(|| {
            refuse(
                "E703",
                display,
                format!("it declares the unsupported digest_algo {s:?}"),
            )
        })?,
        Some(_) => {
            return Err(refuse(
                "E703",
                display,
                "its digest_algo is not text".into(),
            ))
        }
    };
    let v = verify_file(file, display, None)?;
    if let Some(p) = v.malformed.first() {
        return Err(refuse(
            "E703",
            display,
            format!("the digest of {p} is not canonical"),
        ));
    }
    if v.content_id_ok == Some(false) {
        return Err(refuse(
            "E702",
            display,
            "its `content_id` does not recompute from what it stores --- it was changed outside \
             medh5; restore the file, or re-attest it deliberately with `medh5 fix \
             --rewrite-digests --reason ...`"
                .into(),
        ));
    }
    if let Some(p) = v.mismatched.first() {
        return Err(refuse(
            "E701",
            display,
            format!("{p} no longer matches its digest; re-attest it with `medh5 fix --rewrite-digests --reason ...`"),
        ));
    }
    Ok(algo)
}

/// The sha256 group digest of `annotations/<ann>` (§6.8) from its direct
/// child datasets' digests (stored sha256 ones, else computed).
pub fn source_digest(file: &File, ann: &str) -> Result<Option<String>> {
    let base = format!("annotations/{ann}");
    let Ok(Object::Group(g)) = file.object(&base) else {
        return Ok(None);
    };
    let mut children = Vec::new();
    for (name, _) in g.links()? {
        let path = format!("{base}/{name}");
        let Ok(Object::Dataset(ds)) = file.object(&path) else {
            continue;
        };
        let stored = match ds.attribute("digest") {
            Ok(a) => match attr_json(file, &a)? {
                Json::Str(s) if s.starts_with("sha256:") => Some(s),
                _ => None,
            },
            Err(_) => None,
        };
        let d = match stored {
            Some(d) => Some(d),
            None => compute_digest(file, &ds, &path, DigestAlgo::Sha256)?,
        };
        if let Some(d) = d {
            children.push((name, d));
        }
    }
    Ok(Some(group_digest(DigestAlgo::Sha256, &children)))
}

/// Which entries an amend writes.
#[derive(Clone, Debug)]
pub enum Targets {
    /// Every voxel annotation, with these settings (`index build`).
    All(IndexOptions),
    /// These entries, each with its own settings (`fix --rebuild-index`).
    Entries(Vec<(String, IndexOptions)>),
}

/// What an amend did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Built {
    /// Annotation ids whose entries were written, in byte order.
    pub entries: Vec<String>,
    /// The new `content_id` (`None` when nothing was written).
    pub content_id: Option<String>,
}

/// (Re)build index entries of the sample at `path` in one atomic amend.
pub fn amend_index(
    path: &Path,
    display: &str,
    targets: &Targets,
    generator: &str,
) -> Result<Built> {
    let file = crate::self_contained::open(path, display)?;
    let algo = amend_check(&file, display)?;
    let anns = voxel_annotations(&file)?;
    let mut jobs: Vec<(String, IndexOptions)> = match targets {
        Targets::All(o) => anns.iter().map(|a| (a.id.clone(), *o)).collect(),
        Targets::Entries(e) => e.clone(),
    };
    jobs.sort_by(|a, b| a.0.cmp(&b.0));
    if jobs.is_empty() {
        return Ok(Built::default());
    }
    // Build everything before writing anything.
    let mut built: Vec<(String, IndexEntry, String, IndexOptions)> = Vec::new();
    for (id, o) in &jobs {
        let a = anns.iter().find(|a| &a.id == id).ok_or_else(|| Error::Code {
            code: "E413".into(),
            message: format!(
                "index entry '{id}': annotations/{id} is not a voxel annotation with classes (removed?)"
            ),
        })?;
        let entry = build_annotation(&file, a, o)?;
        let digest = source_digest(&file, id)?.ok_or_else(|| Error::Code {
            code: "E413".into(),
            message: format!("index entry '{id}': annotations/{id} does not exist"),
        })?;
        built.push((id.clone(), entry, digest, *o));
    }
    let meta = match file.object("meta")? {
        Object::Dataset(ds) => read_scalar_string(&file, &ds)?,
        _ => {
            return Err(Error::Code {
                code: "E004".into(),
                message: "/meta is not a dataset".into(),
            })
        }
    };
    let meta = String::from_utf8(meta).map_err(|_| Error::Code {
        code: "E004".into(),
        message: "/meta is not UTF-8".into(),
    })?;
    let mut profiles = strings(root_text(&file, "medh5_profiles")?);
    let new_profiles = if profiles.iter().any(|p| p == "training") {
        None
    } else {
        profiles.push("training".to_string());
        Some(profiles)
    };

    // A symlink is followed (the file it names is replaced, the link kept);
    // the new file gets the old one's permission bits (§8).
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let perms = std::fs::metadata(&target).ok().map(|m| m.permissions());
    let mut w = FileWriter::create(&target)?;
    let skip: HashSet<String> = built.iter().map(|(id, ..)| format!("index/{id}")).collect();
    let copied = copy_sample(&file, &mut w, algo, Stamp::Missing, &skip)?;
    let profile = if copied.builtin_filters_only {
        Profile::Portable
    } else {
        Profile::Balanced
    };
    let index = match copied.index {
        Some(g) => g,
        None => {
            let root = w.root();
            w.create_group(root, "index")?
        }
    };
    for (id, entry, digest, o) in &built {
        write_entry(&mut w, index, id, entry, digest, o, profile)?;
    }
    let content_id = finish_root(
        &file,
        &mut w,
        &meta,
        algo,
        &copied.digests,
        new_profiles.as_deref(),
        generator,
    )?;
    if let (Some(p), Some(tmp)) = (perms, w.temp_path()) {
        std::fs::set_permissions(tmp, p)
            .map_err(|e| Error::io(format!("chmod {}", tmp.display()), e))?;
    }
    w.commit()?;
    Ok(Built {
        entries: built.into_iter().map(|(id, ..)| id).collect(),
        content_id: Some(content_id),
    })
}

/// The settings an existing entry was built with: its `max_coords` and
/// `seed` attributes and the occupancy block edge read back from the stored
/// occupancy shape (0 without one).
pub fn entry_options(file: &File, ann: &str, spatial: &[u64]) -> Result<IndexOptions> {
    let base = format!("index/{ann}");
    let attrs = file.object(&base)?.attributes()?;
    let int = |n: &str| -> Result<Option<i64>> {
        match attrs.iter().find(|a| a.name == n) {
            Some(a) => Ok(match attr_json(file, a)? {
                Json::Int(i) => Some(i),
                _ => None,
            }),
            None => Ok(None),
        }
    };
    let d = IndexOptions::default();
    let max_coords = int("max_coords")?
        .and_then(|v| u64::try_from(v).ok())
        .filter(|&v| v > 0)
        .unwrap_or(d.max_coords);
    let seed = int("seed")?.map_or(d.seed, |v| v as u64);
    let occupancy = match file.object(&format!("{base}/occupancy")) {
        Ok(Object::Dataset(ds)) => occupancy_factor(spatial, ds.shape().get(1..).unwrap_or(&[])),
        _ => 0,
    };
    Ok(IndexOptions {
        max_coords,
        seed,
        occupancy,
    })
}

/// The block edge read back from a coarse shape, as the reference reads it:
/// the default 8 when its coarse shape `max(1, ceil(n / f))` is `coarse`,
/// else the smallest edge that gives it (8 when none does).
pub fn occupancy_factor(spatial: &[u64], coarse: &[u64]) -> u64 {
    let default = IndexOptions::default().occupancy;
    if coarse.len() != spatial.len() || coarse.contains(&0) {
        return default;
    }
    let fits = |f: u64| {
        spatial
            .iter()
            .zip(coarse)
            .all(|(&n, &c)| n.div_ceil(f).max(1) == c)
    };
    if fits(default) {
        return default;
    }
    // ceil(n / f) = c needs f ≥ ceil(n / c): the largest of those bounds is
    // the smallest candidate.
    let lower = spatial
        .iter()
        .zip(coarse)
        .map(|(&n, &c)| n.div_ceil(c).max(1))
        .max()
        .unwrap_or(default);
    if fits(lower) {
        lower
    } else {
        default
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_read_back() {
        // as the reference's rebuild (20 voxels: 9 -> 3 blocks -> 8; 6 -> 4 blocks -> 5)
        assert_eq!(occupancy_factor(&[20, 20], &[3, 3]), 8);
        assert_eq!(occupancy_factor(&[20, 20], &[4, 4]), 5);
        assert_eq!(occupancy_factor(&[20, 20], &[5, 5]), 4);
        assert_eq!(occupancy_factor(&[4, 26, 11], &[2, 9, 4]), 3);
        assert_eq!(occupancy_factor(&[16], &[16]), 1);
        assert_eq!(occupancy_factor(&[16], &[1]), 16);
        assert_eq!(occupancy_factor(&[16, 3], &[2]), 8);
    }
}
