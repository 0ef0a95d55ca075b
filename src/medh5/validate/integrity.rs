//! Integrity rules (`docs/medh5-format.md` §5.3, §5.4, §5.7, §6.8, §9.2
//! E701–E704, W901, W905, W915): every stored digest is canonical (E703) and
//! matches the bytes (E701); `content_id` recomputes from the stored digests
//! (E702) in a supported `digest_algo` (E703); covered objects are reached at
//! their own path only (E704); undigested datasets inside covered objects
//! (W915) or no digest at all (W901); stale index entries (W905).

use std::collections::HashMap;

use crate::canonical_json::Json;
use crate::error::{Error, Result};
use crate::integrity::{
    canonical_attrs, covered_names, dtype_descr, group_digest, parse_digest, ContentIdInput,
    DigestAlgo, ROOT_COVERED,
};
use crate::sample::{attr_json, read_scalar_string};
use crate::verify::compute_digest;
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::file::Object;
use purehdf::low_level::link_walk::LinkWalk;
use purehdf::low_level::messages::link::Link;
use purehdf_filters::zstd_decode::libzstd_decodes;

use super::ctx::{attr_str, Ctx};
use super::values::LAYOUT_GROUPS;

/// Cap on the objects one walk visits.
const MAX_OBJECTS: usize = 1 << 20;

/// A dataset found by the walk, at its first path.
pub struct Found {
    /// Sample-relative path.
    pub path: String,
    /// The dataset, opened for reading its bytes and attributes.
    pub ds: Dataset,
    /// The stored `digest` (a non-string value reads as `""`).
    pub digest: Option<String>,
}

/// A path that is not its object's own: `(path, first path or link text)`.
pub struct Alias {
    /// The sample-relative path (no leading `/`) the walk reached again.
    pub path: String,
    /// For a hard link to an object already seen, that object's first path
    /// (`/images/CT`); for a soft link, its target text; for an external
    /// link, `file:path`.
    pub first: String,
}

/// What the depth-first walk of §5.3 finds from the sample root.
#[derive(Default)]
pub struct Walk {
    /// Every dataset, once, at its first path, in walk order.
    pub datasets: Vec<Found>,
    /// Every soft, external or repeated hard link met, in walk order.
    pub aliases: Vec<Alias>,
}

/// Walk the sample depth-first in byte order of names, each object once at
/// its first path.
pub fn walk(ctx: &Ctx<'_>) -> Result<Walk> {
    let mut out = Walk::default();
    let root = match ctx.file.object(&ctx.path("")) {
        Ok(Object::Group(g)) => g,
        _ => return Err(Error::not_found("sample root")),
    };
    let mut seen: HashMap<u64, String> = HashMap::new();
    seen.insert(root.address(), String::new());
    let mut walk = LinkWalk::new(&root)?;
    while let Some((path, link)) = walk.next_link() {
        let addr = match link {
            Link::Hard(a) => a,
            // a soft link that names nothing is no path of any object
            // (E001 names it), as the reference passes over it
            Link::Soft(t) => {
                if ctx.object(&path).is_some() {
                    out.aliases.push(Alias { path, first: t });
                }
                continue;
            }
            Link::External { file, path: p } => {
                out.aliases.push(Alias {
                    path,
                    first: format!("{file}:{p}"),
                });
                continue;
            }
            Link::UserDefined { .. } => continue,
        };
        if let Some(first) = seen.get(&addr) {
            out.aliases.push(Alias {
                path,
                first: format!("/{first}"),
            });
            continue;
        }
        if seen.len() >= MAX_OBJECTS {
            return Err(Error::invalid("too many objects"));
        }
        seen.insert(addr, path.clone());
        match ctx.file.object_at(addr, ctx.path(&path)) {
            Ok(Object::Group(g)) => {
                // a group whose links cannot be read is not walked
                let _ = walk.enter(path, &g);
            }
            Ok(Object::Dataset(ds)) => {
                let digest = match ds.attribute("digest") {
                    Ok(a) => match attr_json(ctx.file, &a) {
                        Ok(Json::Str(s)) => Some(s),
                        _ => Some(String::new()),
                    },
                    Err(_) => None,
                };
                out.datasets.push(Found {
                    path,
                    ds: *ds,
                    digest,
                });
            }
            _ => {}
        }
    }
    Ok(out)
}

fn in_index(path: &str) -> bool {
    path == "index" || path.starts_with("index/")
}

/// Whether `path` lies inside a covered layout group member.
fn in_covered(path: &str) -> bool {
    path.split_once('/')
        .is_some_and(|(top, rest)| LAYOUT_GROUPS.contains(&top) && !rest.is_empty())
}

/// The integrity rule.
pub fn check_integrity(ctx: &mut Ctx<'_>) {
    let w = match walk(ctx) {
        Ok(w) => w,
        Err(e) => {
            ctx.emit("E001", "/", format!("the sample cannot be walked: {e}"));
            return;
        }
    };
    let algo = match ctx.root_attr("digest_algo") {
        None => Some(DigestAlgo::default()),
        Some(Json::Str(s)) => {
            match DigestAlgo::from_name(s) {
                Some(a) => Some(a),
                None => {
                    ctx.emit(
                    "E703",
                    "/",
                    format!("unsupported digest_algo '{s}'; §2.1 permits sha256, sha512 and blake2b"),
                );
                    None
                }
            }
        }
        Some(other) => {
            ctx.emit(
                "E703",
                "/",
                format!("unsupported digest_algo {}", other.to_canonical()),
            );
            None
        }
    };
    check_datasets(ctx, &w);
    for a in &w.aliases {
        if in_covered(&a.path) {
            ctx.emit(
                "E704",
                &format!("/{}", a.path),
                format!("is not its object's own path, '{}': `content_id` binds the object's bytes there, not here, so this name could lead to other bytes under an unchanged root", a.first),
            );
        }
    }
    if let Some(algo) = algo {
        check_content_id(ctx, &w, algo);
    }
    check_index(ctx, &w);
}

fn check_datasets(ctx: &mut Ctx<'_>, w: &Walk) {
    let stamped: Vec<&Found> = w
        .datasets
        .iter()
        .filter(|f| f.path != "meta" && !in_index(&f.path))
        .collect();
    // (a sample without any dataset to stamp is not W901's)
    if !stamped.iter().any(|f| f.digest.is_some()) {
        if !stamped.is_empty() {
            ctx.emit("W901", "/", "no dataset carries a `digest` attribute");
        }
        return;
    }
    for f in stamped {
        let loc = format!("/{}", f.path);
        match &f.digest {
            None => {
                if in_covered(&f.path) && dtype_descr(f.ds.dtype()).is_some() {
                    ctx.emit("W915", &loc, "carries no `digest`, inside an object `content_id` covers: the root does not attest its bytes, so an edit to them changes no line (§13.1, §13.2)");
                }
            }
            Some(d) => {
                let Ok((algo, _)) = parse_digest(d) else {
                    ctx.emit("E703", &loc, "malformed digest string");
                    continue;
                };
                match compute_digest(ctx.file, &f.ds, &f.path, algo) {
                    Ok(Some(fresh)) if &fresh == d => {}
                    Ok(Some(_)) => ctx.emit("E701", &loc, "digest does not match the stored data"),
                    // read by libzstd-based tools as other data (see verify)
                    Err(e) if libzstd_decodes(&e) => {
                        ctx.emit("E701", &loc, "digest does not match the stored data")
                    }
                    Ok(None) => {}
                    Err(e) => ctx.emit(
                        "E001",
                        &loc,
                        format!("cannot be read to check its digest: {e}"),
                    ),
                }
            }
        }
    }
}

fn check_content_id(ctx: &mut Ctx<'_>, w: &Walk, algo: DigestAlgo) {
    // without a string `/meta` there is no content_id input: the
    // reference says why, in its words (whether or not one is declared)
    let meta = match ctx.object("meta") {
        Some(Object::Dataset(ds)) if !ds.dtype().is_string() => {
            let why = format!(
                "TypeError: /meta holds {}, not strings",
                crate::helpers::dtype_name(ds.dtype())
            );
            ctx.emit(
                "E001",
                "/",
                format!("the root's `content_id` could not be checked: {why}"),
            );
            return;
        }
        Some(Object::Dataset(ds)) => read_scalar_string(ctx.file, &ds).unwrap_or_default(),
        _ => {
            ctx.emit(
                "E001",
                "/",
                "the root's `content_id` could not be checked: KeyError: '\"Unable to synchronously open object (object \\'meta\\' doesn\\'t exist)\"'",
            );
            return;
        }
    };
    let declared = match ctx.root_attr("content_id") {
        None => return,
        Some(Json::Str(s)) => s.clone(),
        Some(other) => other.to_canonical(),
    };
    let datasets = w
        .datasets
        .iter()
        .filter(|f| !in_index(&f.path))
        .filter_map(|f| f.digest.clone().map(|d| (f.path.clone(), d)))
        .collect();
    let mut attribute_objects = vec![(
        String::new(),
        canonical_attrs(ROOT_COVERED, &ctx.root_attrs),
    )];
    // each layout group's members, listed from the group itself (a group
    // first reached through an alias elsewhere still has them)
    let members: Vec<String> = LAYOUT_GROUPS
        .iter()
        .flat_map(|g| {
            ctx.member_names(g)
                .into_iter()
                .map(move |n| format!("{g}/{n}"))
        })
        .collect();
    for m in &members {
        let Some(covered) = covered_names(m) else {
            continue;
        };
        if ctx.object(m).is_none() {
            continue;
        }
        let attrs = ctx.attrs(m);
        attribute_objects.push((m.clone(), canonical_attrs(covered, &attrs)));
    }
    let computed = ContentIdInput {
        algo,
        datasets,
        meta,
        attribute_objects,
    }
    .content_id();
    if computed != declared {
        ctx.emit(
            "E702",
            "/",
            format!("`content_id` {declared} does not match the computed {computed}"),
        );
    }
}

fn check_index(ctx: &mut Ctx<'_>, w: &Walk) {
    for name in ctx.member_names("index") {
        let rel = format!("index/{name}");
        let attrs = ctx.attrs(&rel);
        let Some(declared) = attr_str(&attrs, "source_digest").map(str::to_string) else {
            continue;
        };
        let fresh = parse_digest(&declared)
            .ok()
            .and_then(|(algo, _)| annotation_digest(ctx, w, &name, algo));
        if fresh.as_deref() != Some(declared.as_str()) {
            ctx.emit(
                "W905",
                &format!("/{rel}"),
                "index `source_digest` does not match its annotation; readers must ignore this entry and rebuild it",
            );
        }
    }
}

/// The group digest of annotation `ann` (§6.8); `None` when it is gone.
fn annotation_digest(ctx: &Ctx<'_>, w: &Walk, ann: &str, algo: DigestAlgo) -> Option<String> {
    if !matches!(
        ctx.object(&format!("annotations/{ann}")),
        Some(Object::Group(_))
    ) {
        return None;
    }
    let prefix = format!("annotations/{ann}/");
    let mut children = Vec::new();
    for f in &w.datasets {
        let Some(name) = f.path.strip_prefix(&prefix) else {
            continue;
        };
        if name.contains('/') {
            continue;
        }
        let d = match &f.digest {
            Some(d) => d.clone(),
            None => compute_digest(ctx.file, &f.ds, &f.path, algo).ok()??,
        };
        children.push((name.to_string(), d));
    }
    Some(group_digest(algo, &children))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covered_and_index_paths() {
        assert!(in_covered("images/CT"));
        assert!(in_covered("annotations/organs/x_note"));
        assert!(!in_covered("images"));
        assert!(!in_covered("aaa_alias"));
        assert!(in_index("index/organs/class_ids"));
        assert!(!in_index("indexes"));
    }
}
