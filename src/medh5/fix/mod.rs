//! `fix` (`docs/medh5-format.md` §5.8, §8): diagnose a sample (what `verify`
//! finds, plus voxel annotations without a sampling index), and on request
//! re-attest its digests: a copy-on-write amend
//! ([`crate::amend::cow`], the one graph copier) that restamps every
//! dataset digest from the current bytes, records the reason in `/meta`
//! provenance ([`provenance`]), recomputes `content_id` and atomically
//! replaces the file; `--rebuild-index` rebuilds the stale sampling-index
//! entries (after the re-attestation when both are asked for) through the
//! index amend ([`crate::index::build`]). Report shapes, notes and exit
//! rules follow the reference CLI.

pub mod provenance;

use std::path::Path;

use self::provenance::{Performer, Reattestation, Restamped};
use super::amend::cow::{copy_sample, finish_root, Stamp};
use super::canonical_json::Json;
use super::index::build::{amend_index, entry_options, Built, Targets};
use super::index::load::{voxel_annotations, INDEXED_KINDS};
use super::integrity::{group_digest, DigestAlgo};
use super::sample::{attr_json, read_scalar_string};
use super::verify::verify_file;
use crate::error::{Error, Result};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::write::FileWriter;

/// The note every re-attestation carries (the reference's wording).
pub const NOTE_UNVERIFIED: &str =
    "digests were recomputed from the current bytes; this asserts nothing about whether those bytes are correct";

/// What is wrong with one file (§5.8).
///
/// The lists come from [`verify_file`]
/// (see [`VerifyReport`](crate::verify::VerifyReport) for their
/// meaning) and hold sample-relative paths or annotation ids, sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnosis {
    /// The file as the caller named it.
    pub path: String,
    /// Datasets whose bytes no longer match their `digest`.
    pub mismatched: Vec<String>,
    /// Datasets whose `digest` is not a canonical `ALGO:HEX` string.
    pub malformed: Vec<String>,
    /// Datasets without a `digest` (reported, not a defect by itself).
    pub undigested: Vec<String>,
    /// Paths in the attested groups that no `content_id` line covers.
    pub unattested: Vec<String>,
    /// Annotation ids whose sampling-index entry is stale (§6.8).
    pub stale_index: Vec<String>,
    /// Ids of voxel annotations of an indexed kind (not `mask`) that have no
    /// `index/<id>` entry; informative only, not a defect.
    pub missing_index: Vec<String>,
    /// Whether the root `content_id` recomputes (`None`: none declared, or
    /// not judged because the digest algorithm is being replaced).
    pub content_id_ok: Option<bool>,
}

impl Diagnosis {
    /// A stale index is a defect; an absent one is a choice.
    pub fn needs_index(&self) -> bool {
        !self.stale_index.is_empty()
    }

    /// The digests no longer attest the bytes.
    pub fn needs_digests(&self) -> bool {
        !self.mismatched.is_empty()
            || !self.malformed.is_empty()
            || !self.unattested.is_empty()
            || self.content_id_ok == Some(false)
    }

    /// Nothing to fix: neither [`Diagnosis::needs_index`] nor
    /// [`Diagnosis::needs_digests`].
    pub fn clean(&self) -> bool {
        !self.needs_index() && !self.needs_digests()
    }

    /// As the reference's `diagnosis` object.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "path": self.path,
            "mismatched": self.mismatched,
            "malformed": self.malformed,
            "undigested": self.undigested,
            "unattested": self.unattested,
            "stale_index": self.stale_index,
            "missing_index": self.missing_index,
            "content_id_ok": self.content_id_ok,
            "needs_index": self.needs_index(),
            "needs_digests": self.needs_digests(),
        })
    }
}

/// What was done to one file (§5.8).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repair {
    /// The file as the caller named it.
    pub path: String,
    /// What was wrong before anything was changed.
    pub diagnosis: Diagnosis,
    /// Annotation ids whose sampling-index entry was rebuilt.
    pub rebuilt_index: Vec<String>,
    /// Whether the digests were re-attested (the file was rewritten and its
    /// `/meta` provenance gained a record).
    pub rewrote_digests: bool,
    /// The file's new `content_id` when it was rewritten; `None` when nothing
    /// was written.
    pub content_id: Option<String>,
    /// Human-readable remarks in the reference's wording: what is left stale,
    /// that a re-attestation verifies nothing ([`NOTE_UNVERIFIED`]), an
    /// algorithm replacement, or why there was nothing to rebuild.
    pub notes: Vec<String>,
    /// Index entries still stale after the repair.
    pub still_stale: Vec<String>,
}

impl Repair {
    /// Whether the file was modified (digests rewritten or any index entry
    /// rebuilt).
    pub fn changed(&self) -> bool {
        self.rewrote_digests || !self.rebuilt_index.is_empty()
    }

    /// Nothing left to do: the file was clean, or the repair left nothing stale.
    pub fn ok(&self) -> bool {
        if self.changed() {
            self.still_stale.is_empty()
        } else {
            self.diagnosis.clean()
        }
    }

    /// As the reference's `fix --json` entry.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "path": self.path,
            "ok": self.ok(),
            "diagnosis": self.diagnosis.to_json(),
            "rebuilt_index": self.rebuilt_index,
            "rewrote_digests": self.rewrote_digests,
            "content_id": self.content_id,
            "changed": self.changed(),
            "notes": self.notes,
        })
    }

    /// The reference's text report.
    pub fn to_text(&self) -> String {
        let d = &self.diagnosis;
        let mut out = String::new();
        let notes = |out: &mut String| {
            for n in &self.notes {
                out.push_str(&format!("  note: {n}\n"));
            }
        };
        if self.changed() {
            let mut done = Vec::new();
            if !self.rebuilt_index.is_empty() {
                done.push(format!(
                    "rebuilt index for {}",
                    self.rebuilt_index.join(", ")
                ));
            }
            if self.rewrote_digests {
                done.push("rewrote digests".to_string());
            }
            out.push_str(&format!("{}: {}\n", self.path, done.join("; ")));
            notes(&mut out);
            return out;
        }
        if d.clean() {
            out.push_str(&format!("{}: nothing to fix\n", self.path));
            notes(&mut out);
            return out;
        }
        out.push_str(&format!(
            "{}: needs attention, nothing changed\n",
            self.path
        ));
        if !d.stale_index.is_empty() {
            out.push_str(&format!(
                "  stale index: {} (--rebuild-index)\n",
                d.stale_index.join(", ")
            ));
        }
        // one line per kind, its paths joined, as the reference prints them
        if !d.mismatched.is_empty() {
            out.push_str(&format!(
                "  digest mismatch: {} (--rewrite-digests, and read what it means first)\n",
                d.mismatched.join(", ")
            ));
        }
        if !d.malformed.is_empty() {
            out.push_str(&format!(
                "  malformed digest: {} (not of the form ALGO:HEX; --rewrite-digests, and read what it means first)\n",
                d.malformed.join(", ")
            ));
        }
        if !d.unattested.is_empty() {
            out.push_str(&format!(
                "  unsigned: {} (no line of content_id covers it at this path)\n",
                d.unattested.join(", ")
            ));
        }
        if d.content_id_ok == Some(false) {
            out.push_str("  content_id does not match the file's own contents\n");
        }
        out
    }
}

/// Options of [`fix_path`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixOptions {
    /// Re-attest digests; needs a non-empty reason.
    pub rewrite_digests: bool,
    /// Rebuild stale sampling-index entries.
    pub rebuild_index: bool,
    /// Why the digests are re-attested (`--reason`); required, and not blank,
    /// when `rewrite_digests` is set. Recorded in `/meta` provenance.
    pub reason: Option<String>,
    /// A person to record instead of the software.
    pub by: Option<String>,
    /// The software recorded as agent (name, version).
    pub software: (String, String),
    /// Root `generator` of the rewritten file.
    pub generator: String,
}

impl Default for FixOptions {
    fn default() -> Self {
        FixOptions {
            rewrite_digests: false,
            rebuild_index: false,
            reason: None,
            by: None,
            software: ("purehdf".to_string(), env!("CARGO_PKG_VERSION").to_string()),
            generator: format!("purehdf {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

fn e703(msg: String) -> Error {
    Error::Code {
        code: "E703".into(),
        message: msg,
    }
}

/// The root's `digest_algo` as stored (`None` when absent).
fn declared_algo(file: &File) -> Result<Option<String>> {
    match file.root()?.attribute("digest_algo") {
        Ok(a) => match attr_json(file, &a)? {
            Json::Str(s) => Ok(Some(s)),
            other => Ok(Some(other.to_canonical())),
        },
        Err(_) => Ok(None),
    }
}

fn unknown_algo(display: &str, name: &str) -> Error {
    e703(format!(
        "{display:?} declares digest_algo {name:?}, which is not sha256, sha512 or blake2b: \
         its digests can be neither checked nor kept; re-attest it with \
         `medh5 fix --rewrite-digests --reason ...` (restamps in sha256)"
    ))
}

/// Annotation ids of voxel kinds other than `mask` without an `index/<id>` entry.
fn missing_index(file: &File) -> Result<Vec<String>> {
    let Ok(Object::Group(anns)) = file.object("annotations") else {
        return Ok(Vec::new());
    };
    let index = match file.object("index") {
        Ok(Object::Group(g)) => Some(g),
        _ => None,
    };
    let mut out = Vec::new();
    for (name, _) in anns.links()? {
        let Ok(obj) = anns.open(&name) else { continue };
        let kind = match obj.attributes()?.into_iter().find(|a| a.name == "kind") {
            Some(a) => attr_json(file, &a)?,
            None => continue,
        };
        let Json::Str(kind) = kind else { continue };
        if !INDEXED_KINDS.contains(&kind.as_str()) {
            continue;
        }
        let has = index.as_ref().is_some_and(|g| g.link(&name).is_ok());
        if !has {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

/// Diagnose an open file; `display` is the path printed.
pub fn diagnose_file(file: &File, display: &str) -> Result<Diagnosis> {
    if let Some(name) = declared_algo(file)? {
        if DigestAlgo::from_name(&name).is_none() {
            return Err(unknown_algo(display, &name));
        }
    }
    let v = verify_file(file, display, None)?;
    Ok(Diagnosis {
        path: display.to_string(),
        mismatched: v.mismatched,
        malformed: v.malformed,
        undigested: v.undigested,
        unattested: v.unattested,
        stale_index: v.stale_index,
        missing_index: missing_index(file)?,
        content_id_ok: v.content_id_ok,
    })
}

/// Diagnose, and repair what `opts` asks for. The file is replaced atomically
/// only when digests are rewritten.
pub fn fix_path(path: &Path, display: &str, opts: &FixOptions) -> Result<Repair> {
    let file = super::self_contained::open(path, display)?;
    super::verify::preflight(&file, display)?;
    super::validate::loader::refusal(&file, display, super::validate::loader::Loader::Fix)?;
    if !opts.rewrite_digests {
        let diagnosis = diagnose_file(&file, display)?;
        if !opts.rebuild_index {
            return Ok(Repair {
                path: display.to_string(),
                diagnosis,
                ..Repair::default()
            });
        }
        return rebuild_only(file, path, display, diagnosis, opts);
    }
    let reason = opts
        .reason
        .as_deref()
        .filter(|r| !r.trim().is_empty())
        .ok_or_else(|| {
            Error::invalid(
                "rewriting digests re-attests content this tool did not verify; pass a reason, \
                 which is recorded in the file's provenance",
            )
        })?;
    let declared = declared_algo(&file)?;
    let algo_change = match &declared {
        Some(n) if DigestAlgo::from_name(n).is_none() => Some((n.clone(), "sha256".to_string())),
        _ => None,
    };
    let algo = declared
        .as_deref()
        .and_then(DigestAlgo::from_name)
        .unwrap_or_default();
    let diagnosis = if algo_change.is_some() {
        Diagnosis {
            path: display.to_string(),
            missing_index: missing_index(&file)?,
            ..Diagnosis::default()
        }
    } else {
        diagnose_file(&file, display)?
    };
    let mut listed: Vec<String> = diagnosis
        .mismatched
        .iter()
        .chain(&diagnosis.malformed)
        .chain(&diagnosis.unattested)
        .cloned()
        .collect();
    listed.sort();
    listed.dedup();
    let restamped = if listed.is_empty() {
        Restamped::All
    } else {
        Restamped::Paths(listed)
    };
    let performer = match &opts.by {
        Some(p) => Performer::Person(p.clone()),
        None => Performer::Software {
            name: opts.software.0.clone(),
            version: opts.software.1.clone(),
        },
    };
    let record = Reattestation {
        performer,
        reason: reason.to_string(),
        restamped,
        algo_change: algo_change.clone(),
    };
    let (mut content_id, mut still_stale) = rewrite(&file, path, algo, &record, opts)?;
    drop(file);
    let mut rebuilt_index = Vec::new();
    if opts.rebuild_index && !still_stale.is_empty() {
        let built = rebuild(path, display, &still_stale, opts)?;
        rebuilt_index = built.entries;
        content_id = built.content_id.unwrap_or(content_id);
        still_stale.clear();
    }
    let mut notes = Vec::new();
    if !still_stale.is_empty() {
        notes.push(format!(
            "{} sampling index entry no longer match their annotations ({}); rebuild them with --rebuild-index",
            still_stale.len(),
            still_stale.join(", ")
        ));
    }
    notes.push(NOTE_UNVERIFIED.to_string());
    if let Some((from, _)) = &algo_change {
        notes.push(format!(
            "the file declared digest_algo '{from}', which §2.1 does not permit; it was restamped in sha256"
        ));
    }
    Ok(Repair {
        path: display.to_string(),
        diagnosis,
        rebuilt_index,
        rewrote_digests: true,
        content_id: Some(content_id),
        notes,
        still_stale,
    })
}

/// `--rebuild-index` alone: refused when the digests need re-attesting
/// (the rebuild would restamp them silently), a note when nothing is stale.
fn rebuild_only(
    file: File,
    path: &Path,
    display: &str,
    diagnosis: Diagnosis,
    opts: &FixOptions,
) -> Result<Repair> {
    if diagnosis.needs_digests() {
        let n = diagnosis.mismatched.len() + diagnosis.malformed.len() + diagnosis.unattested.len();
        return Err(Error::Code {
            code: "E701".into(),
            message: format!(
                "{display}: cannot rebuild the index without restamping digests, and this file has {n} that no longer match its bytes. \
                 Rebuilding would recompute them and the mismatch would vanish unrecorded. Restore the content, or pass \
                 --rewrite-digests with --reason so the re-attestation is written into the file."
            ),
        });
    }
    drop(file);
    let mut repair = Repair {
        path: display.to_string(),
        ..Repair::default()
    };
    if diagnosis.stale_index.is_empty() {
        let mut note = "nothing to rebuild: no sampling index is stale".to_string();
        if !diagnosis.missing_index.is_empty() {
            note.push_str(&format!(
                "; {} voxel annotation(s) have none ({}), which `medh5 index build` writes",
                diagnosis.missing_index.len(),
                diagnosis.missing_index.join(", ")
            ));
        }
        repair.notes.push(note);
    } else {
        let built = rebuild(path, display, &diagnosis.stale_index, opts)?;
        repair.rebuilt_index = built.entries;
        repair.content_id = built.content_id;
    }
    repair.diagnosis = diagnosis;
    Ok(repair)
}

/// Rebuild the index entries `names` of the file at `path`, each with the
/// settings it was built with; an entry whose annotation is gone fails.
fn rebuild(path: &Path, display: &str, names: &[String], opts: &FixOptions) -> Result<Built> {
    let file = File::open(path)?;
    let anns = voxel_annotations(&file)?;
    let mut jobs = Vec::new();
    for name in names {
        let a = anns.iter().find(|a| &a.id == name).ok_or_else(|| Error::Code {
            code: "E413".into(),
            message: format!(
                "{display}: index entry '{name}' cannot be rebuilt: annotations/{name} does not exist (or holds no classes)"
            ),
        })?;
        jobs.push((name.clone(), entry_options(&file, name, &a.spatial)?));
    }
    drop(file);
    amend_index(path, display, &Targets::Entries(jobs), &opts.generator)
}

/// The amend: copy everything, restamp, new `/meta`, root attributes,
/// `content_id`, atomic replace. Returns the new `content_id` and the index
/// entries left stale by the new digests.
fn rewrite(
    file: &File,
    path: &Path,
    algo: DigestAlgo,
    record: &Reattestation,
    opts: &FixOptions,
) -> Result<(String, Vec<String>)> {
    let meta_bytes = match file.object("meta")? {
        Object::Dataset(ds) => read_scalar_string(file, &ds)?,
        _ => {
            return Err(Error::Code {
                code: "E004".into(),
                message: "/meta is not a dataset".into(),
            })
        }
    };
    let text = std::str::from_utf8(&meta_bytes).map_err(|_| Error::Code {
        code: "E004".into(),
        message: "/meta is not UTF-8".into(),
    })?;
    let parsed: serde_json::Value = serde_json::from_str(text).map_err(|e| Error::Code {
        code: "E004".into(),
        message: format!("/meta is not JSON: {e}"),
    })?;
    let mut doc = Json::from_serde(&parsed);
    if !matches!(doc, Json::Object(_)) {
        return Err(Error::Code {
            code: "E004".into(),
            message: "/meta is not a JSON object".into(),
        });
    }
    provenance::record(&mut doc, record);
    let meta = doc.to_meta();

    // A symlink is followed (the file it names is replaced, the link kept);
    // the new file gets the old one's permission bits (§8).
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let perms = std::fs::metadata(&target).ok().map(|m| m.permissions());
    let mut w = FileWriter::create(&target)?;
    let copied = copy_sample(file, &mut w, algo, Stamp::Fresh, &Default::default())?;
    let content_id = finish_root(
        file,
        &mut w,
        &meta,
        algo,
        &copied.digests,
        None,
        &opts.generator,
    )?;
    let still_stale = stale_after(file, &copied.digests)?;
    if let (Some(p), Some(tmp)) = (perms, w.temp_path()) {
        std::fs::set_permissions(tmp, p)
            .map_err(|e| Error::io(format!("chmod {}", tmp.display()), e))?;
    }
    w.commit()?;
    Ok((content_id, still_stale))
}

/// Index entries whose `source_digest` no longer matches the group digest of
/// their annotation under the new digests.
fn stale_after(file: &File, digests: &[(String, String)]) -> Result<Vec<String>> {
    let mut stale = Vec::new();
    for (name, declared) in super::verify::index_source_digests(file)? {
        let algo = super::integrity::parse_digest(&declared)
            .map(|(a, _)| a)
            .unwrap_or_default();
        let prefix = format!("annotations/{name}/");
        let children: Vec<(String, String)> = digests
            .iter()
            .filter_map(|(p, d)| {
                let child = p.strip_prefix(&prefix)?;
                (!child.contains('/')).then(|| (child.to_string(), d.clone()))
            })
            .collect();
        if children.is_empty() || group_digest(algo, &children) != declared {
            stale.push(name);
        }
    }
    stale.sort();
    Ok(stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::medh5_vector;

    #[test]
    fn clean_vector_diagnosis() {
        let Ok(f) = File::open(medh5_vector("v1b_dense_label.medh5")) else {
            return;
        };
        let d = diagnose_file(&f, "v1b").unwrap();
        assert!(d.clean());
        assert_eq!(d.missing_index, vec!["organs".to_string()]);
        assert_eq!(d.content_id_ok, Some(true));
        let r = Repair {
            path: "v1b".into(),
            diagnosis: d,
            ..Repair::default()
        };
        assert!(r.ok());
        assert_eq!(r.to_text(), "v1b: nothing to fix\n");
        let v3 = File::open(medh5_vector("v3_stacked_index.medh5")).unwrap();
        assert!(diagnose_file(&v3, "v3").unwrap().missing_index.is_empty());
    }

    #[test]
    fn rewrite_keeps_bytes_and_records_the_reason() {
        let src = medh5_vector("v3_stacked_index.medh5");
        if !src.exists() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("purehdf-fix-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dst = dir.join("v3.medh5");
        std::fs::copy(&src, &dst).unwrap();
        let opts = FixOptions {
            rewrite_digests: true,
            reason: Some("unit test".into()),
            ..FixOptions::default()
        };
        let r = fix_path(&dst, "v3", &opts).unwrap();
        assert!(r.rewrote_digests && r.ok() && r.changed());
        assert_eq!(r.notes, vec![NOTE_UNVERIFIED.to_string()]);
        let before = File::open(&src).unwrap();
        let after = File::open(&dst).unwrap();
        let v = verify_file(&after, "v3", None).unwrap();
        assert!(v.ok, "{v:?}");
        assert_eq!(v.checked, 13);
        assert_eq!(
            super::super::verify::compute_content_id(&after).unwrap(),
            r.content_id.clone().unwrap()
        );
        for p in ["images/CT", "annotations/bit/data", "index/lay/occupancy"] {
            let (Object::Dataset(a), Object::Dataset(b)) =
                (before.object(p).unwrap(), after.object(p).unwrap())
            else {
                panic!("{p}")
            };
            assert_eq!(a.read_all_raw().unwrap(), b.read_all_raw().unwrap(), "{p}");
            assert_eq!(a.filters(), b.filters(), "{p}");
        }
        let doc = super::super::sample::SampleFile::from_file(after)
            .meta_bytes()
            .unwrap();
        let text = String::from_utf8(doc).unwrap();
        assert!(text.contains(
            r#""params": {"reason": "unit test", "restamped": "all", "verified_content": false}"#
        ));
        // through a symlink to a read-only file: the link stays, the mode too
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o444)).unwrap();
            let link = dir.join("link.medh5");
            std::os::unix::fs::symlink(&dst, &link).unwrap();
            let r2 = fix_path(&link, "link", &opts).unwrap();
            assert!(r2.ok());
            assert!(std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
            let mode = std::fs::metadata(&dst).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o444);
            let after = File::open(&dst).unwrap();
            assert_eq!(
                super::super::verify::compute_content_id(&after).unwrap(),
                r2.content_id.unwrap()
            );
            std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        // no reason: refused, file untouched
        let bytes = std::fs::read(&dst).unwrap();
        let no_reason = FixOptions {
            reason: Some("  ".into()),
            ..opts
        };
        assert!(fix_path(&dst, "v3", &no_reason).is_err());
        assert_eq!(std::fs::read(&dst).unwrap(), bytes);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
