//! `medh5 recompress` (`docs/medh5-format.md` §6.6, §6.1, §6.2, §8, §10):
//! rewrite a sample (or every member of a collection) with each bulk numeric
//! dataset re-encoded in a codec profile, chunk by chunk (decoded chunk →
//! encoded chunk, in parallel, a bounded batch at a time), everything else
//! copied as stored through the one graph copier (`hdf5fmt::copy`).
//! Digests cover decoded values, so no attribute changes and `content_id` is
//! preserved; the output is verified once it has replaced the input.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::chunking::writer_chunk_shape;
use super::collection::{member_files, MemberFile};
pub use super::helpers::{human_bytes, table};
use super::profiles::{describe_pipeline, Profile, Role};
use super::verify::{compute_content_id, verify_file};
use crate::canonical_json::Json;
use crate::error::{Error, Result};
use purehdf::low_level::copy::{
    copy_group_into, CopyOptions, CopyPolicy, DatasetChoice, FilterChoice,
};
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::{ByteOrder, Datatype};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::messages::types;
use purehdf::low_level::write::FileWriter;

/// The note the reference prints under its table.
pub const NOTE: &str =
    "digests cover decompressed content (§13.1), so `content_id` is unchanged by \
re-encoding; a cache keyed on it stays valid. The output is verified against the digests it \
carries, so that claim is checked rather than assumed.";

/// Options of [`recompress_path`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecompressOptions {
    /// The codec profile every bulk numeric dataset is re-encoded in (its
    /// codec chosen by the dataset's role, §6.1).
    pub profile: Profile,
    /// Re-derive chunk shapes by the writer's rule.
    pub rechunk: bool,
    /// Write here instead of replacing the input.
    pub out: Option<PathBuf>,
}

/// What one file's re-encoding did (the reference's `RecompressResult`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecompressResult {
    /// The file written: the `--out` path, or the input as the caller named it.
    pub path: String,
    /// The target profile's name (`archive`, `portable`, ...).
    pub profile: String,
    /// Bulk numeric datasets the profile applies to (re-encoded or already so).
    pub datasets: usize,
    /// Size of the input file in bytes.
    pub bytes_before: u64,
    /// Size of the written file in bytes.
    pub bytes_after: u64,
    /// The root `content_id` of the output (recomputed when it declares
    /// none); `None` for a collection.
    pub content_id: Option<String>,
    /// Whether every sample's recomputed `content_id` is the same after as
    /// before (for a collection: every member's).
    pub content_id_preserved: bool,
    /// Whether the output verifies (§5.7) and could be read back.
    pub verified: bool,
    /// Datasets of the output whose bytes do not match their digest
    /// (sample-relative; `samples/<key>/…` inside a collection).
    pub mismatched: Vec<String>,
    /// Paths of the output that no `content_id` line attests (as
    /// [`VerifyReport::unattested`](crate::verify::VerifyReport::unattested)).
    pub unattested: Vec<String>,
    /// `(path, codec before, codec after)` of every re-encoded dataset.
    pub changed: Vec<(String, String, String)>,
    /// Absolute paths of numeric datasets copied as stored because their
    /// type is not what a fresh write creates (committed type, non-bool
    /// enum, non-native byte order), sorted.
    pub kept: Vec<String>,
    /// Errors that stopped the output (or a member of it) from being
    /// verified; any entry makes `verified` false.
    pub unverified: Vec<String>,
}

impl RecompressResult {
    /// `bytes_after / bytes_before` (below 1 when the file shrank; 1 for an
    /// empty input).
    pub fn ratio(&self) -> f64 {
        if self.bytes_before == 0 {
            1.0
        } else {
            self.bytes_after as f64 / self.bytes_before as f64
        }
    }

    /// The reference's `ok`: the output verified and kept its `content_id`.
    pub fn ok(&self) -> bool {
        self.verified && self.content_id_preserved
    }

    /// As `recompress --json` prints one entry.
    pub fn to_json(&self) -> Value {
        json!({
            "path": self.path,
            "profile": self.profile,
            "datasets": self.datasets,
            "bytes_before": self.bytes_before,
            "bytes_after": self.bytes_after,
            "ratio": self.ratio(),
            "content_id": self.content_id,
            "content_id_preserved": self.content_id_preserved,
            "verified": self.verified,
            "mismatched": self.mismatched,
            "unattested": self.unattested,
            "ok": self.ok(),
            "changed": self.changed.iter().map(|(a, b, c)| json!([a, b, c])).collect::<Vec<_>>(),
            "kept": self.kept,
            "unverified": self.unverified,
        })
    }
}

/// The reference's text report of several results.
pub fn results_text(results: &[RecompressResult]) -> String {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            vec![
                r.path.clone(),
                r.profile.clone(),
                r.datasets.to_string(),
                human_bytes(r.bytes_before),
                human_bytes(r.bytes_after),
                format!("{:.2}x", r.ratio()),
                if r.content_id_preserved { "yes" } else { "no" }.to_string(),
                if r.verified { "ok" } else { "FAILED" }.to_string(),
            ]
        })
        .collect();
    let mut out = table(
        &[
            "path",
            "profile",
            "sets",
            "before",
            "after",
            "ratio",
            "content_id",
            "verify",
        ],
        &rows,
    );
    out.push('\n');
    out.push_str(NOTE);
    out.push('\n');
    out
}

/// Whether `dt` is a number type a fresh write creates (native little-endian
/// integer or float, or the bool enum).
fn fresh_numeric(dt: &Datatype) -> Option<bool> {
    match dt {
        Datatype::Integer { order, .. } | Datatype::Float { order, .. } => {
            Some(*order == ByteOrder::Little || dt.size() == 1)
        }
        Datatype::Enum { base, members } => Some(super::integrity::is_bool_enum(base, members)),
        _ => None,
    }
}

/// Whether `ds` stores its type as a committed (shared) datatype.
fn committed_type(ds: &Dataset) -> bool {
    ds.header()
        .first(types::DATATYPE)
        .is_some_and(|m| m.is_shared())
}

fn builtin_only(ds: &Dataset) -> bool {
    ds.filters().iter().all(|f| f.id <= 6)
}

/// The per-dataset decisions of one recompression.
struct Policy<'a> {
    profile: Profile,
    rechunk: bool,
    /// `(prefix of the member root, the member as a sample)`: `("", file)` for a sample.
    members: &'a [MemberFile],
    changed: RefCell<Vec<(String, String, String)>>,
    considered: RefCell<usize>,
    kept: RefCell<Vec<String>>,
    error: RefCell<Option<Error>>,
}

impl Policy<'_> {
    /// The member holding absolute `path` and the path relative to it.
    fn member(&self, path: &str) -> Option<(&MemberFile, String)> {
        self.members.iter().find_map(|m| {
            let rest = path.strip_prefix(m.prefix.as_str())?;
            let rel = rest.strip_prefix('/')?;
            Some((m, rel.to_string()))
        })
    }

    fn decide(&self, ds: &Dataset) -> Result<Option<DatasetChoice>> {
        let keep = Some(DatasetChoice {
            filter: FilterChoice::Keep,
            chunk: None,
        });
        let Some((member, rel)) = self.member(ds.path()) else {
            return Ok(keep);
        };
        if rel == "meta" || ds.layout_kind() == "virtual" {
            return Ok(keep);
        }
        let Some(fresh) = fresh_numeric(ds.dtype()) else {
            return Ok(keep);
        };
        if !fresh || committed_type(ds) {
            self.kept.borrow_mut().push(ds.path().to_string());
            return Ok(keep);
        }
        let shape = ds.shape();
        let item = ds.dtype().size();
        if super::profiles::is_contiguous(shape, item) || shape.is_empty() {
            let small_plugin = !builtin_only(ds) && self.profile == Profile::Portable;
            if small_plugin && !shape.is_empty() {
                self.changed.borrow_mut().push((
                    ds.path().to_string(),
                    describe_pipeline(ds.filters()),
                    "contiguous".to_string(),
                ));
                return Ok(Some(DatasetChoice {
                    filter: FilterChoice::None,
                    chunk: Some(None),
                }));
            }
            return Ok(keep);
        }
        let stored = ds
            .chunk_dims()
            .map(|c| c.get(..shape.len()).unwrap_or(c).to_vec());
        let chunk = match (&stored, self.rechunk) {
            (Some(c), false) => c.clone(),
            _ => writer_chunk_shape(&member.file, &rel, shape, item),
        };
        let codec = self.profile.codec(Role::for_path(&rel));
        let elem = u32::try_from(item)
            .map_err(|_| Error::invalid(format!("{rel}: element size {item}")))?;
        let pipeline = codec.pipeline(elem, &chunk)?;
        *self.considered.borrow_mut() += 1;
        let same_chunk = stored.as_ref() == Some(&chunk);
        let (before, after) = (
            describe_pipeline(ds.filters()),
            describe_pipeline(&pipeline),
        );
        if same_chunk && before == after {
            // already stored so: copied as it is, not listed
            return Ok(keep);
        }
        self.changed
            .borrow_mut()
            .push((ds.path().to_string(), before, after));
        Ok(Some(DatasetChoice {
            filter: FilterChoice::Pipeline(pipeline),
            chunk: (!same_chunk).then_some(Some(chunk)),
        }))
    }
}

impl CopyPolicy for Policy<'_> {
    fn dataset(&self, ds: &Dataset) -> Option<DatasetChoice> {
        match self.decide(ds) {
            Ok(c) => c,
            Err(e) => {
                self.error.borrow_mut().get_or_insert(e);
                None
            }
        }
    }
}

fn file_len(p: &Path) -> Result<u64> {
    std::fs::metadata(p)
        .map(|m| m.len())
        .map_err(|e| Error::io(format!("stat {}", p.display()), e))
}

/// Refuse a file of a higher minor version than this implementation knows.
fn check_version(file: &File, display: &str) -> Result<()> {
    if let super::version_gate::Verdict::NewerMinor(v) = super::version_gate::check(file)? {
        return Err(Error::Code {
            code: "E002".into(),
            message: format!(
                "{display}: medh5_version {v} is newer than this implementation (1.{})",
                super::version_gate::MAX_MINOR
            ),
        });
    }
    Ok(())
}

/// Recompress the file at `path` (`display` is printed) as `opts` says.
pub fn recompress_path(
    path: &Path,
    display: &str,
    opts: &RecompressOptions,
) -> Result<RecompressResult> {
    let src = super::self_contained::open(path, display)?;
    check_version(&src, display)?;
    let members = member_files(&src)?;
    let before_ids: Vec<Option<String>> = members
        .iter()
        .map(|m| compute_content_id(&m.file).ok())
        .collect();
    let bytes_before = file_len(path)?;
    let (target, shown) = match &opts.out {
        Some(o) => (o.clone(), o.display().to_string()),
        None => (
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            display.to_string(),
        ),
    };
    let policy = Policy {
        profile: opts.profile,
        rechunk: opts.rechunk,
        members: &members,
        changed: RefCell::new(Vec::new()),
        considered: RefCell::new(0),
        kept: RefCell::new(Vec::new()),
        error: RefCell::new(None),
    };
    let mut w = FileWriter::create(&target)?;
    let root = w.root();
    let report = copy_group_into(
        &src,
        src.root()?,
        &mut w,
        root,
        &CopyOptions::default(),
        &policy,
    )?;
    if let Some(e) = policy.error.borrow_mut().take() {
        return Err(e);
    }
    if let Some(s) = report.skipped.first() {
        return Err(Error::invalid(format!("{display}: could not copy {s}")));
    }
    if opts.out.is_none() {
        super::stage::keep_mode(path, &w)?;
    }
    w.commit()?;
    let mut changed = policy.changed.take();
    changed.sort();
    let mut kept = policy.kept.take();
    kept.sort();
    let mut res = RecompressResult {
        path: shown,
        profile: opts.profile.name().to_string(),
        bytes_before,
        bytes_after: file_len(&target)?,
        content_id_preserved: true,
        verified: true,
        datasets: policy.considered.take(),
        changed,
        kept,
        ..RecompressResult::default()
    };
    // the check of the output, which has replaced the input by now
    match File::open(&target)
        .map_err(Error::from)
        .and_then(|f| member_files(&f))
    {
        Err(e) => {
            res.verified = false;
            res.unverified.push(e.to_string());
        }
        Ok(out) => {
            for (m, before) in out.iter().zip(&before_ids) {
                let shown_prefix = |p: &str| {
                    if m.prefix.is_empty() {
                        p.to_string()
                    } else {
                        format!("{}/{p}", m.prefix.trim_start_matches('/'))
                    }
                };
                match verify_file(&m.file, &m.prefix, None) {
                    Ok(v) => {
                        res.verified &= v.ok;
                        res.mismatched
                            .extend(v.mismatched.iter().map(|p| shown_prefix(p)));
                        res.unattested
                            .extend(v.unattested.iter().map(|p| shown_prefix(p)));
                    }
                    Err(e) => {
                        res.verified = false;
                        res.unverified.push(format!("{}: {e}", m.prefix));
                    }
                }
                let after = compute_content_id(&m.file).ok();
                res.content_id_preserved &= after == *before;
                if members.len() == 1 && m.prefix.is_empty() {
                    res.content_id = match m.file.object("/") {
                        Ok(Object::Group(g)) => g
                            .attribute("content_id")
                            .ok()
                            .and_then(|a| super::sample::attr_json(&m.file, &a).ok())
                            .and_then(|j| match j {
                                Json::Str(s) => Some(s),
                                _ => None,
                            }),
                        _ => None,
                    }
                    .or(after);
                }
            }
        }
    }
    Ok(res)
}

/// `medh5 recompress PATH… --profile P [--rechunk] [-o/--out OUT] [--workers N]
/// [--json]`; `print_json` prints the reference's JSON. Returns the exit code.
pub fn run_cli(args: &[String], print_json: &dyn Fn(&Value)) -> u8 {
    const USAGE: &str =
        "usage: medh5 recompress PATH... --profile P [--rechunk] [-o OUT] [--workers N] [--json]";
    let mut paths = Vec::new();
    let (mut profile, mut out, mut rechunk, mut json_out) = (None, None, false, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json_out = true,
            "--rechunk" => rechunk = true,
            "--profile" => profile = it.next().cloned(),
            "-o" | "--out" => match it.next() {
                Some(o) => out = Some(PathBuf::from(o)),
                None => {
                    eprintln!("medh5: {a} needs a path\n{USAGE}");
                    return 2;
                }
            },
            "--workers" | "--threads" => {
                if it.next().and_then(|n| n.parse::<usize>().ok()).is_none() {
                    eprintln!("medh5: {a} needs a number\n{USAGE}");
                    return 2;
                }
            }
            s if s.starts_with('-') => {
                eprintln!("medh5: unknown option {s}\n{USAGE}");
                return 2;
            }
            s => paths.push(s.to_string()),
        }
    }
    let profile = match profile.as_deref().map(|p| Profile::from_name(Some(p))) {
        Some(Ok(p)) => p,
        Some(Err(_)) => {
            eprintln!(
                "error: invalid value '{}' for '--profile <PROFILE>'\n  [possible values: archive, balanced, portable, training]",
                profile.unwrap_or_default()
            );
            return 2;
        }
        None => {
            eprintln!("medh5: recompress needs --profile\n{USAGE}");
            return 2;
        }
    };
    if paths.is_empty() {
        eprintln!("medh5: recompress needs at least one path\n{USAGE}");
        return 2;
    }
    if out.is_some() && paths.len() != 1 {
        eprintln!("medh5: --out takes a single input file");
        return 2;
    }
    let opts = RecompressOptions {
        profile,
        rechunk,
        out,
    };
    let mut results = Vec::new();
    let mut failed = false;
    for p in &paths {
        match recompress_path(Path::new(p), p, &opts) {
            Ok(r) => {
                failed |= !r.ok();
                results.push(r);
            }
            Err(e) => {
                failed = true;
                eprintln!("medh5: {p}: {e}");
            }
        }
    }
    if json_out {
        print_json(&Value::Array(
            results.iter().map(RecompressResult::to_json).collect(),
        ));
    } else if !results.is_empty() {
        print!("{}", results_text(&results));
    }
    u8::from(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_tables_print_as_the_reference() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(18146), "17.7 KiB");
        assert_eq!(human_bytes(1_006_097), "982.5 KiB");
        assert_eq!(human_bytes(3 << 20), "3.0 MiB");
        let t = table(&["path", "sets"], &[vec!["rc.medh5".into(), "2".into()]]);
        assert_eq!(t, "path      sets\n--------  ----\nrc.medh5  2   \n");
    }

    #[test]
    fn only_fresh_number_types_are_re_encoded() {
        assert_eq!(fresh_numeric(&Datatype::int(2, true)), Some(true));
        assert_eq!(fresh_numeric(&Datatype::float(4)), Some(true));
        let be = Datatype::Integer {
            size: 4,
            order: ByteOrder::Big,
            signed: true,
            bit_offset: 0,
            precision: 32,
        };
        assert_eq!(fresh_numeric(&be), Some(false));
        assert_eq!(
            fresh_numeric(&super::super::attribute::bool_enum()),
            Some(true)
        );
        assert_eq!(fresh_numeric(&super::super::attribute::vlen_utf8()), None);
    }

    #[test]
    fn json_entry_has_the_reference_fields_in_order() {
        let r = RecompressResult {
            path: "r.medh5".into(),
            profile: "portable".into(),
            datasets: 1,
            bytes_before: 200,
            bytes_after: 100,
            content_id_preserved: true,
            verified: true,
            changed: vec![(
                "/images/CT".into(),
                "blosc2:zstd:3+shuffle".into(),
                "gzip:4+shuffle".into(),
            )],
            ..RecompressResult::default()
        };
        let v = r.to_json();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "path",
                "profile",
                "datasets",
                "bytes_before",
                "bytes_after",
                "ratio",
                "content_id",
                "content_id_preserved",
                "verified",
                "mismatched",
                "unattested",
                "ok",
                "changed",
                "kept",
                "unverified"
            ]
        );
        assert_eq!(v["ratio"], 0.5);
        assert_eq!(v["ok"], true);
    }
}
