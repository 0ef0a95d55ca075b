//! `.medh5c` collections (`docs/medh5-format.md` §7, §6.7, §8, §10): a root
//! with `medh5_kind = "collection"` and one complete sample root per key under
//! `/samples/<key>`. Opening one gives each member as an ordinary sample over
//! the one mapping ([`member_files`]); `pack`, `unpack` and `ls` as the
//! reference CLI has them. Chunks move as raw stored bytes (filter masks kept)
//! through the one graph copier; every member's `content_id` is recomputed
//! after the copy and the operation refused if it differs; outputs are atomic.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::canonical_json::Json;
use super::helpers::{human_bytes, table};
use super::sample::{attrs_json, read_scalar_string};
use super::stage::Staged;
use super::validate::collection::{is_collection, is_valid_key};
use super::verify::compute_content_id;
use crate::error::{Error, Result};
use purehdf::low_level::copy::{copy_group_into, CopyOptions, CopyPolicy};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::messages::link::Link;
use purehdf::low_level::write::{sync_dir, AttrValue as WAttr, FileWriter, Synced, Unsynced};

/// Most members one collection operation handles.
const MAX_MEMBERS: usize = 1 << 20;

/// One sample of a file: the file itself (`prefix` empty, `key` none) or a
/// collection member seen as a sample rooted at `/samples/<key>`.
#[derive(Clone, Debug)]
pub struct MemberFile {
    /// The member's key under `/samples` (`[A-Za-z0-9_.-]{1,255}`); `None`
    /// when the file is a plain sample.
    pub key: Option<String>,
    /// Absolute path of the member root in the file (`""` for a sample).
    pub prefix: String,
    /// The member as a sample: paths resolve from its root.
    pub file: File,
}

fn refused(code: &str, msg: String) -> Error {
    Error::Code {
        code: code.into(),
        message: msg,
    }
}

/// [`members`] of the collection the user named `display`, refused with
/// the reference's words when it has no `samples` group.
pub fn members_shown(file: &File, display: &str) -> Result<Vec<(String, u64)>> {
    match members(file) {
        Err(e) if e.code_str() == Some("E008") => Err(Error::Refused(format!(
            "[E008] collection {display} has no 'samples' group"
        ))),
        r => r,
    }
}

/// The keys of a collection in byte order, with their root header addresses.
pub fn members(file: &File) -> Result<Vec<(String, u64)>> {
    let g = match file.object("/samples") {
        Ok(Object::Group(g)) => g,
        _ => return Err(refused("E008", "collection has no `samples` group".into())),
    };
    let mut out = Vec::new();
    for (name, link) in g.links()? {
        if out.len() >= MAX_MEMBERS {
            return Err(Error::Hdf5(purehdf::Error::Limit {
                structure: "medh5 collection",
                offset: 0,
                what: "members",
                value: out.len() as u64,
                limit: MAX_MEMBERS as u64,
            }));
        }
        if let Link::Hard(addr) = link {
            out.push((name, addr));
        }
    }
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(out)
}

/// Every sample of `file`: itself, or each member of a collection.
pub fn member_files(file: &File) -> Result<Vec<MemberFile>> {
    if !is_collection(file) {
        return Ok(vec![MemberFile {
            key: None,
            prefix: String::new(),
            file: file.clone(),
        }]);
    }
    Ok(members(file)?
        .into_iter()
        .map(|(key, addr)| MemberFile {
            prefix: format!("/samples/{key}"),
            file: file.rerooted(addr),
            key: Some(key),
        })
        .collect())
}

/// The member `key` of collection `file` as a sample.
pub fn open_member(file: &File, key: &str) -> Result<File> {
    members(file)?
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, addr)| file.rerooted(addr))
        .ok_or_else(|| Error::invalid(format!("the collection has no sample with key {key:?}")))
}

/// What a command reporting on one sample says of a collection without `--key`.
pub fn needs_key(file: &File, display: &str) -> Result<String> {
    let keys: Vec<String> = members_shown(file, display)?
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    Ok(format!(
        "{display} is a collection of {} sample(s); this command reports on one sample, so name \
         it with --key (keys: {})",
        keys.len(),
        keys.join(", ")
    ))
}

/// Copies one sample root, rebasing absolute soft links between `from` and `to`.
struct Rebase {
    from: String,
    to: String,
}

impl CopyPolicy for Rebase {
    fn soft_target(&self, target: &str) -> String {
        let rest = if self.from.is_empty() {
            target.strip_prefix('/').map(|r| format!("/{r}"))
        } else {
            target
                .strip_prefix(self.from.as_str())
                .and_then(|r| (r.is_empty() || r.starts_with('/')).then(|| r.to_string()))
        };
        match rest {
            Some(r) if target.starts_with('/') => {
                let r = r.trim_start_matches('/');
                if r.is_empty() {
                    if self.to.is_empty() {
                        "/".to_string()
                    } else {
                        self.to.clone()
                    }
                } else {
                    format!("{}/{r}", self.to)
                }
            }
            _ => target.to_string(),
        }
    }
}

fn str_attr(file: &File, name: &str) -> Option<String> {
    let attrs = attrs_json(file, &file.root().ok()?.attributes().ok()?).ok()?;
    attrs.into_iter().find_map(|(n, v)| match v {
        Json::Str(s) if n == name => Some(s),
        _ => None,
    })
}

fn version_key(v: &str) -> (u64, u64) {
    let (a, b) = v.split_once('.').unwrap_or((v, "0"));
    (a.parse().unwrap_or(0), b.parse().unwrap_or(0))
}

fn file_len(p: &Path) -> Result<u64> {
    std::fs::metadata(p)
        .map(|m| m.len())
        .map_err(|e| Error::io(format!("stat {}", p.display()), e))
}

/// The default key of a source: its file name up to the first dot.
pub fn default_key(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.split('.').next().unwrap_or("").to_string()
}

/// What [`pack`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packed {
    /// Path of the collection written, as given.
    pub out: String,
    /// Number of member samples packed.
    pub samples: usize,
    /// Size of the collection file in bytes.
    pub bytes: u64,
    /// Total size of the source sample files in bytes.
    pub source_bytes: u64,
}

impl Packed {
    /// The `pack --json` object `{"out", "samples", "bytes", "source_bytes"}`.
    pub fn to_json(&self) -> Value {
        json!({"out": self.out, "samples": self.samples, "bytes": self.bytes,
               "source_bytes": self.source_bytes})
    }

    /// The one-line human report, e.g. `c.medh5c: 2 samples, 1.2 MiB
    /// (sources 1.3 MiB)`, newline-terminated.
    pub fn to_text(&self) -> String {
        format!(
            "{}: {} samples, {} (sources {})\n",
            self.out,
            self.samples,
            human_bytes(self.bytes),
            human_bytes(self.source_bytes)
        )
    }
}

/// Pack `sources` into the collection `out` (keys: `keys` in order, else each
/// file name up to its first dot). The output is staged and published
/// atomically; the collection's `medh5_version` is the highest of the
/// sources'.
///
/// # Errors
///
/// E003 for an invalid or repeated key; an invalid-input error for no
/// sources, a key count that does not match, a source that is the output,
/// a collection or holds external links; E702 (nothing written) when a
/// member's recomputed `content_id` differs from its source's; I/O and
/// HDF5-layer errors.
pub fn pack(sources: &[PathBuf], out: &Path, keys: &[String]) -> Result<Packed> {
    if sources.is_empty() {
        return Err(Error::invalid("pack needs at least one source"));
    }
    if !keys.is_empty() && keys.len() != sources.len() {
        return Err(Error::invalid(format!(
            "{} --key for {} sources: give one per source, in order",
            keys.len(),
            sources.len()
        )));
    }
    let out_canon = std::fs::canonicalize(out).ok();
    let mut plan: Vec<(String, PathBuf, File, String)> = Vec::new();
    let mut version = (1u64, 0u64);
    let mut version_text = "1.0".to_string();
    let mut source_bytes = 0u64;
    for (i, src) in sources.iter().enumerate() {
        let key = keys.get(i).cloned().unwrap_or_else(|| default_key(src));
        if !is_valid_key(&key) {
            return Err(refused(
                "E003",
                format!(
                    "key {key:?} of {} is not [A-Za-z0-9_.-]{{1,255}}",
                    src.display()
                ),
            ));
        }
        if plan.iter().any(|(k, ..)| *k == key) {
            return Err(refused("E003", format!("key {key:?} is given twice")));
        }
        if out_canon.is_some() && std::fs::canonicalize(src).ok() == out_canon {
            return Err(Error::invalid(format!("{} is the output", src.display())));
        }
        let f = super::self_contained::open(src, &src.display().to_string())?;
        if is_collection(&f) {
            return Err(Error::invalid(format!(
                "{} is a collection; pack takes samples",
                src.display()
            )));
        }
        let cid = compute_content_id(&f)?;
        if let Some(v) = str_attr(&f, "medh5_version") {
            if version_key(&v) > version {
                version = version_key(&v);
                version_text = v;
            }
        }
        source_bytes = source_bytes.saturating_add(file_len(src)?);
        plan.push((key, src.clone(), f, cid));
    }
    let staged = Staged::new(out)?;
    let mut w = FileWriter::create(staged.path())?;
    let root = w.root();
    w.set_attr(root, "medh5_kind", WAttr::string("collection"))?;
    w.set_attr(root, "medh5_version", WAttr::string(&version_text))?;
    let samples = w.create_group(root, "samples")?;
    for (key, src, f, _) in &plan {
        let g = w.create_group(samples, key)?;
        let policy = Rebase {
            from: String::new(),
            to: format!("/samples/{key}"),
        };
        let rep = copy_group_into(f, f.root()?, &mut w, g, &CopyOptions::default(), &policy)?;
        if rep.external_links > 0 {
            return Err(Error::invalid(format!(
                "{} holds external links; a collection member must be self-contained",
                src.display()
            )));
        }
        if let Some(s) = rep.skipped.first() {
            return Err(Error::invalid(format!(
                "{}: could not copy {s}",
                src.display()
            )));
        }
    }
    w.commit()?;
    let check = File::open(staged.path())?;
    for (key, src, _, cid) in &plan {
        let got = compute_content_id(&open_member(&check, key)?)?;
        if got != *cid {
            return Err(refused(
                "E702",
                format!(
                    "{}: content_id {got} after the copy differs from {cid}; nothing written",
                    src.display()
                ),
            ));
        }
    }
    drop(check);
    staged.publish()?;
    Ok(Packed {
        out: out.display().to_string(),
        samples: plan.len(),
        bytes: file_len(out)?,
        source_bytes,
    })
}

/// Unpack every member of `shard` (or those named in `keys`) as
/// `DIR/<key>.medh5`; returns the paths written. Each output is published
/// atomically (an existing file keeps its permissions) after its
/// `content_id` is checked against the member's.
///
/// # Errors
///
/// An invalid-input error when `shard` is not a collection or lacks a
/// requested key; E003 for a key that is not a safe file name or collides
/// with another ignoring case; E008 for a member that is not a group; E702
/// when an output's `content_id` differs (outputs already published stay);
/// I/O and HDF5-layer errors.
pub fn unpack(shard: &Path, dir: &Path, keys: &[String]) -> Result<Vec<String>> {
    let f = super::self_contained::open(shard, &shard.display().to_string())?;
    if !is_collection(&f) {
        return Err(Error::invalid(format!(
            "{} is not a collection",
            shard.display()
        )));
    }
    let all = members(&f)?;
    let chosen: Vec<(String, u64)> = if keys.is_empty() {
        all
    } else {
        keys.iter()
            .map(|k| {
                all.iter().find(|(n, _)| n == k).cloned().ok_or_else(|| {
                    Error::invalid(format!("{} has no sample with key {k:?}", shard.display()))
                })
            })
            .collect::<Result<_>>()?
    };
    let mut lower: Vec<String> = Vec::new();
    for (k, _) in &chosen {
        if !is_valid_key(k) || k == "." || k == ".." {
            return Err(refused(
                "E003",
                format!("key {k:?} is not a valid file name"),
            ));
        }
        let l = k.to_lowercase();
        if lower.contains(&l) {
            return Err(refused(
                "E003",
                format!("key {k:?} collides with another one when case is ignored"),
            ));
        }
        lower.push(l);
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("mkdir {}", dir.display()), e))?;
    let mut written = Vec::new();
    // Members go in batches: each batch is copied and checked in parallel,
    // its fsyncs run side by side, then its files are renamed in key order
    // and the directory is flushed once. As with one member at a time, the
    // outputs before the first failing member are published and none after.
    for batch in chosen.chunks(UNPACK_BATCH) {
        let prepared =
            purehdf_filters::threads::map(batch, |(key, addr)| unpack_one(&f, dir, key, *addr));
        let mut ok = Vec::with_capacity(prepared.len());
        let mut failed = None;
        for r in prepared {
            match r {
                Ok(u) if failed.is_none() => ok.push(u),
                Ok(_) => {}
                Err(e) => {
                    if failed.is_none() {
                        failed = Some(e);
                    }
                }
            }
        }
        let synced = sync_all_side_by_side(ok);
        let mut sync_err = None;
        for (r, key) in synced.into_iter().zip(batch) {
            match r {
                Ok(s) if sync_err.is_none() => {
                    s.publish()?;
                    written.push(format!("{}/{}.medh5", dir.display(), key.0));
                }
                Ok(_) => {}
                Err(e) => {
                    if sync_err.is_none() {
                        sync_err = Some(e);
                    }
                }
            }
        }
        sync_dir(dir);
        if let Some(e) = sync_err.or(failed) {
            return Err(e);
        }
    }
    Ok(written)
}

/// Members unpacked (copied, checked, fsynced) together before their renames;
/// bounds the open temporaries.
const UNPACK_BATCH: usize = 32;

/// fsync every file, on threads of their own (fsync mostly waits on the
/// disk, and the file system joins concurrent flushes into one journal
/// commit); falls back to one after another where threads cannot start.
fn sync_all_side_by_side(files: Vec<Unsynced>) -> Vec<Result<Synced>> {
    let n = files.len();
    if n <= 1 {
        return files
            .into_iter()
            .map(|u| u.sync().map_err(Error::from))
            .collect();
    }
    let mut slots: Vec<Option<Unsynced>> = files.into_iter().map(Some).collect();
    let mut out: Vec<Option<Result<Synced>>> = (0..n).map(|_| None).collect();
    std::thread::scope(|sc| {
        let mut handles = Vec::with_capacity(n);
        for slot in slots.iter_mut() {
            let Some(u) = slot.take() else { continue };
            let started = std::thread::Builder::new()
                .stack_size(64 * 1024)
                .spawn_scoped(sc, move || u.sync().map_err(Error::from));
            handles.push(started.ok());
        }
        for (h, o) in handles.into_iter().zip(out.iter_mut()) {
            *o = h.and_then(|h| h.join().ok());
        }
    });
    // A thread that could not start (or died) left its file untouched in no
    // slot: report it as an I/O failure rather than lose it silently.
    out.into_iter()
        .map(|o| {
            o.unwrap_or_else(|| {
                Err(Error::invalid(
                    "could not flush an unpacked file (no thread)".to_string(),
                ))
            })
        })
        .collect()
}

/// Copy member `key` (at `addr`) to `DIR/<key>.medh5`'s temporary and check
/// its `content_id`; the returned file is complete but neither flushed nor
/// renamed.
fn unpack_one(f: &File, dir: &Path, key: &str, addr: u64) -> Result<Unsynced> {
    let member = f.rerooted(addr);
    let cid = compute_content_id(&member)?;
    let target = dir.join(format!("{key}.medh5"));
    let mut w = FileWriter::create(&target)?;
    let root = w.root();
    let policy = Rebase {
        from: format!("/samples/{key}"),
        to: String::new(),
    };
    let src_root = match f.object_at(addr, format!("/samples/{key}"))? {
        Object::Group(g) => g,
        _ => return Err(refused("E008", format!("/samples/{key} is not a group"))),
    };
    let rep = copy_group_into(f, src_root, &mut w, root, &CopyOptions::default(), &policy)?;
    if let Some(s) = rep.skipped.first() {
        return Err(Error::invalid(format!("{key}: could not copy {s}")));
    }
    if str_attr(&member, "medh5_version").is_none() {
        w.set_attr(root, "medh5_version", WAttr::string("1.0"))?;
    }
    let out = w.prepare()?;
    let got = compute_content_id(&File::open(out.path())?)?;
    if got != cid {
        return Err(refused(
            "E702",
            format!("{key}: content_id {got} after the copy differs from {cid}"),
        ));
    }
    Ok(out)
}

fn meta_json(file: &File) -> Value {
    match file.object("meta") {
        Ok(Object::Dataset(ds)) => read_scalar_string(file, &ds)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

fn names(file: &File, group: &str) -> Vec<String> {
    let mut out: Vec<String> = match file.object(group) {
        Ok(Object::Group(g)) => g
            .links()
            .unwrap_or_default()
            .into_iter()
            .map(|(n, _)| n)
            .collect(),
        _ => Vec::new(),
    };
    out.sort();
    out
}

fn json_of(j: Option<Json>) -> Value {
    j.map_or(Value::Null, |j| super::canonical_json::to_value(&j))
}

/// `ls --json`: the collection and one entry per member.
pub fn ls(shard: &Path, display: &str) -> Result<Value> {
    let f = super::self_contained::open(shard, display)?;
    if !is_collection(&f) {
        return Err(Error::invalid(format!(
            "{display} is a sample file, not a collection; `medh5 info {display}` describes it"
        )));
    }
    let mut samples = Vec::new();
    for m in member_files(&f)? {
        let meta = meta_json(&m.file);
        let root_attrs = attrs_json(&m.file, &m.file.root()?.attributes()?)?;
        let attr = |n: &str| {
            root_attrs
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        let timepoints: Vec<Value> = meta
            .get("timepoints")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|t| t.get("id").cloned()).collect())
            .unwrap_or_default();
        samples.push(json!({
            "key": m.key,
            "sample_id": meta.pointer("/identity/sample_id").cloned().unwrap_or(Value::Null),
            "subject_id": meta.pointer("/identity/subject_id").cloned().unwrap_or(Value::Null),
            "profiles": json_of(attr("medh5_profiles")),
            "content_id": json_of(attr("content_id")),
            "timepoints": timepoints,
            "images": names(&m.file, "images"),
            "annotations": names(&m.file, "annotations"),
        }));
    }
    Ok(json!({
        "path": display,
        "version": str_attr(&f, "medh5_version"),
        "kind": "collection",
        "samples": samples,
    }))
}

fn joined(v: &Value) -> String {
    match v {
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(","),
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn count(v: &Value) -> String {
    v.as_array().map_or(0, Vec::len).to_string()
}

/// `ls` as text.
pub fn ls_text(v: &Value) -> String {
    let samples = v["samples"].as_array().cloned().unwrap_or_default();
    let mut out = format!(
        "{}  ({} samples, {})\n",
        v["path"].as_str().unwrap_or(""),
        samples.len(),
        v["version"].as_str().unwrap_or("")
    );
    let rows: Vec<Vec<String>> = samples
        .iter()
        .map(|s| {
            // a member without `content_id` shows `-`, as the reference's
            let cid = s["content_id"].as_str().unwrap_or("-");
            vec![
                s["key"].as_str().unwrap_or("").to_string(),
                s["subject_id"].as_str().unwrap_or("").to_string(),
                joined(&s["timepoints"]),
                count(&s["images"]),
                count(&s["annotations"]),
                joined(&s["profiles"]),
                cid.chars().take(19).collect(),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "key",
            "subject",
            "tp",
            "img",
            "ann",
            "profiles",
            "content_id",
        ],
        &rows,
    ));
    out
}

/// `bench-op collection-ids FILE`: every member's stored and recomputed
/// `content_id` (`{"op", "members": {key: {"content_id", "computed"}}}`).
pub fn bench_collection_ids(shard: &Path) -> Result<Value> {
    let f = File::open(shard)?;
    if !is_collection(&f) {
        return Err(Error::invalid(format!(
            "{} is not a collection",
            shard.display()
        )));
    }
    let mut out = serde_json::Map::new();
    for m in member_files(&f)? {
        let declared = str_attr(&m.file, "content_id");
        let computed = compute_content_id(&m.file)?;
        out.insert(
            m.key.unwrap_or_default(),
            json!({"content_id": declared, "computed": computed}),
        );
    }
    Ok(json!({"op": "collection-ids", "members": out}))
}

/// `info` on a collection without `--key`, as the reference prints it.
pub fn info_text(v: &Value) -> String {
    let samples = v["samples"].as_array().cloned().unwrap_or_default();
    let mut out = format!(
        "{}\n  format      {} (collection)\n  samples     {}\n\n",
        v["path"].as_str().unwrap_or(""),
        v["version"].as_str().unwrap_or(""),
        samples.len()
    );
    let rows: Vec<Vec<String>> = samples
        .iter()
        .map(|s| {
            vec![
                s["key"].as_str().unwrap_or("").to_string(),
                s["sample_id"].as_str().unwrap_or("").to_string(),
                s["subject_id"].as_str().unwrap_or("").to_string(),
                joined(&s["timepoints"]),
                count(&s["images"]),
                count(&s["annotations"]),
                joined(&s["profiles"]),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "key", "sample", "subject", "tp", "images", "anns", "profiles",
        ],
        &rows,
    ));
    out.push_str("\nper-sample detail: `medh5 info PATH --key KEY`\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_soft_links_are_rebased() {
        let pack = Rebase {
            from: String::new(),
            to: "/samples/k".into(),
        };
        assert_eq!(pack.soft_target("/images/CT"), "/samples/k/images/CT");
        assert_eq!(pack.soft_target("/"), "/samples/k");
        assert_eq!(pack.soft_target("CT"), "CT");
        let unpack = Rebase {
            from: "/samples/k".into(),
            to: String::new(),
        };
        assert_eq!(unpack.soft_target("/samples/k/images/CT"), "/images/CT");
        assert_eq!(unpack.soft_target("/samples/k"), "/");
        assert_eq!(unpack.soft_target("/samples/kk/x"), "/samples/kk/x");
    }

    #[test]
    fn default_keys_stop_at_the_first_dot() {
        assert_eq!(
            default_key(Path::new("/a/v2_balanced.medh5")),
            "v2_balanced"
        );
        assert_eq!(default_key(Path::new("x.tar.medh5")), "x");
    }

    #[test]
    fn a_sample_is_its_own_only_member() {
        let Ok(f) = File::open(crate::test_support::medh5_vector("v2_balanced.medh5")) else {
            return;
        };
        let m = member_files(&f).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].prefix, "");
        assert!(members(&f).is_err());
    }
}
