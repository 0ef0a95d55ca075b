//! Running a recompress (`docs/neighbours.md` rows E4, E6, E7, E9):
//! each selected file is copied by the one copier of `h5 copy` with its
//! selected datasets re-encoded chunk by chunk and every other dataset moved
//! as raw chunks, to a staging name beside its destination; the staging file
//! is verified, recorded in the manifest and only then put in place (see
//! [`super::swap`] for the order of renames and fsyncs). Files run in
//! parallel on one thread pool of `--workers` threads that also encodes the
//! chunks inside each file, so memory is bounded by the chunk batches in
//! flight (one batch per worker).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use super::plan::{FilePlan, Rules};
use super::report::Progress;
use super::swap::{
    self, clear_stale, copy_atomic, ensure_parent, Entry, LayoutKind, Manifest, State,
};
use super::verify::{file_sha256, verify_copy};
use purehdf::low_level::copy::{copy_file_digested, CopyOptions, FilterChoice};
use purehdf::{Error, Result};

/// How and where to write.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Which datasets to re-encode and how: pipeline, `--select` globs, `--min-size`, `--rechunk`.
    pub rules: Rules,
    /// The `--filter` text, for the manifest.
    pub filter_text: String,
    /// Where each output goes: in place (original kept as `<name>.bak`), `-o OUT`, a sibling, or a
    /// mirror tree.
    pub layout: LayoutKind,
    /// `-o OUT` (layout `Out`).
    pub out: Option<PathBuf>,
    /// Sibling name suffix (`<stem>_<suffix>.<ext>`).
    pub suffix: String,
    /// Mirror layout: `--from` and `--to`.
    pub mirror: Option<(PathBuf, PathBuf)>,
    /// Mirror layout with `--rewrite-vds`: files whose virtual datasets name
    /// absolute sources under `--from` are rewritten to name the mirrored
    /// ones (`rewrite_vds`), instead of copied byte for byte.
    pub rewrite_vds: bool,
    /// Manifest file (`--manifest`) recording each file's state and SHA-256s, for `--undo`,
    /// `--swap` and `--finalize`; `None` = no manifest.
    pub manifest: Option<PathBuf>,
    /// Threads (0 = all cores).
    pub workers: usize,
    /// No progress display on stderr (e.g. with `--json`).
    pub quiet: bool,
}

/// What happened to one file.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The input file.
    pub path: PathBuf,
    /// Where the verified copy was published; `None` when the file failed.
    pub output: Option<PathBuf>,
    /// True when the copy was written, verified and published (or swapped in).
    pub ok: bool,
    /// The error, when `ok` is false; empty otherwise.
    pub message: String,
    /// Size of the input file in bytes.
    pub in_size: u64,
    /// Size of the verified output file in bytes (0 when no output was written).
    pub out_size: u64,
    /// Logical bytes of the re-encoded datasets.
    pub encoded_bytes: u64,
    /// Chunks decoded and encoded again with the new pipeline.
    pub encoded_chunks: usize,
    /// Chunks copied as stored, without decoding.
    pub raw_chunks: usize,
    /// Wall-clock time spent on this file, in seconds.
    pub seconds: f64,
}

/// The destination of `src` under `s`.
pub fn destination(src: &Path, s: &Settings) -> Result<PathBuf> {
    match s.layout {
        LayoutKind::InPlace => Ok(src.to_path_buf()),
        LayoutKind::Out => s
            .out
            .clone()
            .ok_or_else(|| Error::InvalidArgument("-o needs a path".into())),
        LayoutKind::Sibling => {
            let stem = src.file_stem().unwrap_or_default().to_string_lossy();
            let name = match src.extension() {
                Some(e) => format!("{stem}_{}.{}", s.suffix, e.to_string_lossy()),
                None => format!("{stem}_{}", s.suffix),
            };
            Ok(src.with_file_name(name))
        }
        LayoutKind::Mirror => {
            let (from, to) = s
                .mirror
                .as_ref()
                .ok_or_else(|| Error::InvalidArgument("mirror needs --from and --to".into()))?;
            let rel = src.strip_prefix(from).map_err(|_| {
                Error::InvalidArgument(format!(
                    "{} is not below --from {}",
                    src.display(),
                    from.display()
                ))
            })?;
            Ok(to.join(rel))
        }
    }
}

/// The staging name beside `dest` (hidden, not an HDF5 name a walk picks up).
pub fn staging_of(dest: &Path) -> PathBuf {
    let name = dest.file_name().unwrap_or_default().to_string_lossy();
    dest.with_file_name(format!(".{name}.rc-staging"))
}

/// The backup name of an in-place original.
pub fn backup_of(src: &Path) -> PathBuf {
    let name = src.file_name().unwrap_or_default().to_string_lossy();
    src.with_file_name(format!("{name}.bak"))
}

/// Shared state of a run.
struct Ctx<'a> {
    s: &'a Settings,
    manifest: Mutex<Manifest>,
    progress: &'a Progress,
}

impl Ctx<'_> {
    fn record(&self, e: &Entry) -> Result<()> {
        let Some(path) = &self.s.manifest else {
            return Ok(());
        };
        let mut m = self
            .manifest
            .lock()
            .map_err(|_| Error::InvalidArgument("manifest lock poisoned".into()))?;
        match m.entries.iter_mut().find(|x| x.original == e.original) {
            Some(x)
                if x.state == State::Swapped
                    && x.backup.is_some()
                    && x.output_sha256 != e.output_sha256 =>
            {
                return Err(Error::InvalidArgument(format!(
                    "{} was already swapped by a run recorded in {}: --undo or --finalize it first",
                    e.original.display(),
                    path.display()
                )))
            }
            Some(x) => *x = e.clone(),
            None => m.entries.push(e.clone()),
        }
        m.save(path)
    }

    fn one(&self, src: &Path, plan: &FilePlan) -> Outcome {
        let t0 = Instant::now();
        let mut o = Outcome {
            path: src.to_path_buf(),
            in_size: std::fs::metadata(src).map(|m| m.len()).unwrap_or(0),
            encoded_bytes: plan.encode_bytes(),
            ..Outcome::default()
        };
        match self.try_one(src, plan, &mut o) {
            Ok(()) => o.ok = true,
            Err(e) => o.message = e.to_string(),
        }
        o.seconds = t0.elapsed().as_secs_f64();
        self.progress.file_done(o.in_size);
        o
    }

    fn try_one(&self, src: &Path, plan: &FilePlan, o: &mut Outcome) -> Result<()> {
        let dest = destination(src, self.s)?;
        let staging = staging_of(&dest);
        ensure_parent(&dest)?;
        clear_stale(&staging);
        let opts = CopyOptions {
            filter: FilterChoice::Keep,
            threads: 0,
            datasets: plan.choices(&self.s.rules),
        };
        // the manifest records both files' SHA-256 (what --undo restores
        // and --swap checks); the original is hashed while the copy runs
        let hashes = self.s.manifest.is_some();
        let (original_sha, copied) = join(
            || hashes.then(|| file_sha256(src)).transpose(),
            || copy_file_digested(src, &staging, &opts),
        );
        let rep = match copied {
            Ok(r) => r,
            Err(e) => {
                clear_stale(&staging);
                return Err(e);
            }
        };
        o.encoded_chunks = rep.encoded_chunks;
        o.raw_chunks = rep.raw_chunks;
        if !rep.skipped.is_empty() {
            clear_stale(&staging);
            return Err(Error::InvalidArgument(format!(
                "the copy would lose {}: not written",
                rep.skipped.join("; ")
            )));
        }
        // the state of the staging file that is verified and renamed
        let stamp = swap::Stamp::of(&staging)?;
        let checked = verify_copy(src, &staging, &rep.digests)
            .and_then(|_| hashes.then(|| file_sha256(&staging)).transpose());
        let output_sha = match checked {
            Ok(h) => h.unwrap_or_default(),
            Err(e) => {
                clear_stale(&staging);
                return Err(e);
            }
        };
        let mut e = Entry {
            original: src.to_path_buf(),
            original_sha256: original_sha?.unwrap_or_default(),
            original_size: o.in_size,
            output: dest.clone(),
            output_sha256: output_sha,
            output_size: std::fs::metadata(&staging).map(|m| m.len()).unwrap_or(0),
            backup: (self.s.layout == LayoutKind::InPlace).then(|| backup_of(src)),
            staging,
            state: State::Verified,
        };
        o.out_size = e.output_size;
        if let Err(err) = self.record(&e) {
            clear_stale(&e.staging);
            return Err(err);
        }
        if self.s.layout == LayoutKind::InPlace {
            swap::swap_in_stamped(&e, Some(&stamp))?;
        } else {
            swap::publish_stamped(&e, Some(&stamp))?;
        }
        e.state = State::Swapped;
        self.record(&e)?;
        o.output = Some(dest);
        Ok(())
    }
}

/// Both closures, in parallel with the `parallel` feature.
fn join<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    #[cfg(feature = "parallel")]
    {
        rayon::join(a, b)
    }
    #[cfg(not(feature = "parallel"))]
    {
        (a(), b())
    }
}

/// Run every `(file, plan)`; the manifest (when asked) is saved as it goes.
pub fn execute(targets: &[(PathBuf, FilePlan)], s: &Settings) -> Result<Vec<Outcome>> {
    let mut manifest = Manifest::new(s.layout, &s.filter_text);
    if let Some(p) = &s.manifest {
        if p.exists() {
            // a run adds to its manifest (entries of the same file are replaced)
            manifest = Manifest::load(p)?;
            if manifest.layout != s.layout {
                return Err(Error::InvalidArgument(format!(
                    "{} records layout {:?}, not {:?}",
                    p.display(),
                    manifest.layout,
                    s.layout
                )));
            }
        }
        ensure_parent(p)?;
        manifest.save(p)?;
    }
    let total: u64 = targets
        .iter()
        .map(|(p, _)| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum();
    let progress = Progress::new(targets.len() as u64, total, s.quiet);
    let ctx = Ctx {
        s,
        manifest: Mutex::new(manifest),
        progress: &progress,
    };
    let outcomes = run_all(targets, &ctx, s.workers)?;
    if let (LayoutKind::Mirror, Some((from, _))) = (s.layout, &s.mirror) {
        mirror_rest(from, targets, s)?;
    }
    Ok(outcomes)
}

fn run_all(targets: &[(PathBuf, FilePlan)], ctx: &Ctx, workers: usize) -> Result<Vec<Outcome>> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        let mut b = rayon::ThreadPoolBuilder::new();
        // 0: a SLURM allocation's CPUs, else every core the process may use
        let slurm = std::env::var("SLURM_CPUS_PER_TASK")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0);
        match (workers, slurm) {
            (0, Some(n)) => b = b.num_threads(n),
            (0, None) => {}
            (n, _) => b = b.num_threads(n),
        }
        let pool = b
            .build()
            .map_err(|e| Error::InvalidArgument(format!("thread pool: {e}")))?;
        Ok(pool.install(|| {
            targets
                .par_iter()
                .map(|(p, plan)| ctx.one(p, plan))
                .collect()
        }))
    }
    #[cfg(not(feature = "parallel"))]
    {
        let _ = workers;
        Ok(targets.iter().map(|(p, plan)| ctx.one(p, plan)).collect())
    }
}

/// Mirror layout: every other file below `from` copied byte for byte (so
/// containers keep their relative VDS names, which now resolve to the
/// recompressed sources).
fn mirror_rest(from: &Path, targets: &[(PathBuf, FilePlan)], s: &Settings) -> Result<()> {
    let mut stack = vec![from.to_path_buf()];
    let mut n = 0usize;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| Error::io(d.display(), e))? {
            let p = e.map_err(|e| Error::io(d.display(), e))?.path();
            if s.mirror.as_ref().is_some_and(|(_, to)| p.starts_with(to)) {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            n += 1;
            if n > 1_000_000 || targets.iter().any(|(t, _)| *t == p) {
                continue;
            }
            let dest = destination(&p, s)?;
            let same = std::fs::metadata(&dest)
                .ok()
                .zip(std::fs::metadata(&p).ok())
                .is_some_and(|(a, b)| a.len() == b.len())
                && file_sha256(&dest)? == file_sha256(&p)?;
            if s.rewrite_vds && super::rewrite_vds::needs_rewrite(&p, from) {
                if let Some((_, to)) = &s.mirror {
                    ensure_parent(&dest)?;
                    super::rewrite_vds::rewrite(&p, &dest, from, to)?;
                    continue;
                }
            }
            if !same {
                ensure_parent(&dest)?;
                copy_atomic(&p, &dest)?;
            }
        }
    }
    Ok(())
}
