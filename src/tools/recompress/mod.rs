//! `h5 recompress`: re-encode the datasets of any HDF5 file or tree losslessly
//! and put the results in place safely — `docs/neighbours.md` rows
//! E3 (P1: lossy JPEG 2000 chunks are named, never decoded or re-encoded), E4
//! (full-fidelity copy through `h5 copy`'s copier, selected datasets
//! re-encoded, the rest moved as raw chunks), E5 (tree selection and dry run),
//! E6 (sibling and mirror layouts), E7 (verified outputs, atomic swap,
//! manifest, undo, finalize) and E9 (parallel, progress, honest summary).
//!
//! - `select`: directory walk, `--where` conditions, VDS sources, rows.
//! - [`plan`]: per-dataset re-encode or keep, effective codecs.
//! - `run`: copy to staging, verify, record, swap, in parallel.
//! - [`verify`]: the output against its source (tree, attributes, decoded data).
//! - [`swap`]: manifest, the order of renames and fsyncs, `--undo`, `--finalize`.
//! - [`report`]: dry-run text and JSON lines, progress, summary.

pub mod plan;
pub mod report;
pub mod rewrite_vds;
pub mod run;
pub mod select;
pub mod swap;
pub mod verify;

use std::path::PathBuf;

use serde_json::json;

use plan::{plan_path, FilePlan, Rules};
use purehdf::low_level::copy::{parse_filter, FilterChoice};
use purehdf::{Error, Result};
use purehdf_medh5::profiles::{Codec, Profile, Role, Shuffle};
use report::human;
use run::{execute, Settings};
use select::{select, Condition, Query};
use swap::{LayoutKind, Manifest};

const USAGE: &str = "usage: h5 recompress SRC... --filter SPEC [--where KEY:VALUE]... [--all] \
[--select GLOB]... [--ndim N]... [--dtype T]... [--min-size BYTES] [--rechunk a,b,c] [--layout in-place|sibling|mirror] \
[--suffix S] [--from DIR --to DIR [--rewrite-vds]] [-o OUT] [--manifest FILE] [--workers N (0: $SLURM_CPUS_PER_TASK or all cores)] [--dry-run] \
[--report FILE] [--json]\n       h5 recompress --swap MANIFEST [--json]   (outputs of a sibling/mirror/-o run in place)\n       \
h5 recompress --undo MANIFEST [--json]\n       \
h5 recompress --finalize MANIFEST [--json]\n\
SPEC: as h5 copy spells it (shuffle+deflate:4, blosc2:zstd:3:shuffle, zstd:3, lz4, none) \
or a medh5 profile (training, balanced, archive, portable)";

/// Datasets smaller than this keep their storage unless `--min-size` says otherwise.
pub const DEFAULT_MIN_SIZE: u64 = 1024;

/// `--filter` text to a pipeline: `h5 copy`'s spelling or a medh5 profile name
/// (its image codec).
pub fn parse_spec(text: &str) -> Result<FilterChoice> {
    if let Ok(p) = Profile::from_name(Some(text.trim())) {
        let copy_text = match p.codec(Role::Image) {
            Codec::Blosc2 {
                compressor,
                clevel,
                shuffle,
            } => format!(
                "blosc2:{}:{clevel}:{}",
                compressor.name(),
                match shuffle {
                    Shuffle::None => "noshuffle",
                    Shuffle::Byte => "shuffle",
                    Shuffle::Bit => "bitshuffle",
                }
            ),
            Codec::GzipShuffle { level } => format!("shuffle+deflate:{level}"),
        };
        return parse_filter(&copy_text);
    }
    match parse_filter(text)? {
        FilterChoice::Keep => Err(Error::InvalidArgument(
            "--filter keep re-encodes nothing; name a pipeline".into(),
        )),
        FilterChoice::None => Ok(FilterChoice::Pipeline(Vec::new())),
        p => Ok(p),
    }
}

#[derive(Default)]
struct Args {
    srcs: Vec<PathBuf>,
    filter: Option<String>,
    conditions: Vec<String>,
    all: bool,
    select: Vec<String>,
    ndim: Vec<usize>,
    dtype: Vec<String>,
    min_size: Option<u64>,
    rechunk: Option<Vec<u64>>,
    layout: Option<String>,
    suffix: Option<String>,
    from: Option<PathBuf>,
    to: Option<PathBuf>,
    rewrite_vds: bool,
    out: Option<PathBuf>,
    manifest: Option<PathBuf>,
    workers: usize,
    dry_run: bool,
    report: Option<PathBuf>,
    json: bool,
    undo: Option<PathBuf>,
    swap: Option<PathBuf>,
    finalize: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Args> {
    let mut a = Args::default();
    let mut it = args.iter();
    let bad = |m: &str| Error::InvalidArgument(m.to_string());
    while let Some(x) = it.next() {
        let mut val = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| Error::InvalidArgument(format!("{name} needs a value")))
        };
        match x.as_str() {
            "--filter" => a.filter = Some(val("--filter")?),
            "--where" => a.conditions.push(val("--where")?),
            "--all" => a.all = true,
            "--select" => a.select.push(val("--select")?),
            "--ndim" => a.ndim.push(
                val("--ndim")?
                    .parse()
                    .map_err(|_| bad("--ndim needs a rank"))?,
            ),
            "--dtype" => a.dtype.push(val("--dtype")?),
            "--min-size" => {
                a.min_size = Some(
                    val("--min-size")?
                        .parse()
                        .map_err(|_| bad("--min-size needs a byte count"))?,
                )
            }
            "--rechunk" => {
                let v = val("--rechunk")?;
                let c: Vec<u64> = v
                    .split(',')
                    .map(|t| t.trim().parse::<u64>())
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|_| bad("--rechunk needs extents like 1,512,512"))?;
                if c.is_empty() || c.contains(&0) {
                    return Err(bad("--rechunk extents must be positive"));
                }
                a.rechunk = Some(c);
            }
            "--layout" => a.layout = Some(val("--layout")?),
            "--suffix" => a.suffix = Some(val("--suffix")?),
            "--from" => a.from = Some(PathBuf::from(val("--from")?)),
            "--to" => a.to = Some(PathBuf::from(val("--to")?)),
            "--rewrite-vds" => a.rewrite_vds = true,
            "-o" | "--out" => a.out = Some(PathBuf::from(val("-o")?)),
            "--manifest" => a.manifest = Some(PathBuf::from(val("--manifest")?)),
            "--workers" | "--jobs" => {
                a.workers = val("--workers")?
                    .parse()
                    .map_err(|_| bad("--workers needs a number"))?
            }
            "--dry-run" => a.dry_run = true,
            "--report" => a.report = Some(PathBuf::from(val("--report")?)),
            "--json" => a.json = true,
            "--undo" => a.undo = Some(PathBuf::from(val("--undo")?)),
            "--swap" => a.swap = Some(PathBuf::from(val("--swap")?)),
            "--finalize" => a.finalize = Some(PathBuf::from(val("--finalize")?)),
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(Error::InvalidArgument(format!("unknown option {s}")))
            }
            s => a.srcs.push(PathBuf::from(s)),
        }
    }
    Ok(a)
}

/// `h5 recompress ...`. Returns the exit code (0 ok, 1 some file failed, 2 usage).
pub fn run(args: &[String]) -> u8 {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return 0;
    }
    let a = match parse_args(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("h5 recompress: {e}\n{USAGE}");
            return 2;
        }
    };
    if let Some(m) = &a.undo {
        return manifest_cmd(m, Verb::Undo, a.json);
    }
    if let Some(m) = &a.finalize {
        return manifest_cmd(m, Verb::Finalize, a.json);
    }
    if let Some(m) = &a.swap {
        return manifest_cmd(m, Verb::Swap, a.json);
    }
    match recompress(&a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("h5 recompress: {e}");
            2
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verb {
    Undo,
    Finalize,
    Swap,
}

fn manifest_cmd(path: &std::path::Path, verb: Verb, json: bool) -> u8 {
    let mut m = match Manifest::load(path) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("h5 recompress: {}: {e}", path.display());
            return 2;
        }
    };
    let acts = match verb {
        Verb::Undo => swap::undo(&mut m),
        Verb::Finalize => swap::finalize(&mut m),
        Verb::Swap => match swap::swap_outputs(&mut m, path) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("h5 recompress: {}: {e}", path.display());
                return 2;
            }
        },
    };
    if let Err(e) = m.save(path) {
        eprintln!("h5 recompress: {}: {e}", path.display());
        return 2;
    }
    let verb = match verb {
        Verb::Undo => "undo",
        Verb::Finalize => "finalize",
        Verb::Swap => "swap",
    };
    for x in &acts {
        if json {
            println!(
                "{}",
                json!({"path": x.path.display().to_string(), "action": verb, "ok": x.ok, "what": x.what})
            );
        } else {
            println!(
                "{}\t{}{}",
                x.path.display(),
                if x.ok { "" } else { "FAILED: " },
                x.what
            );
        }
    }
    let failed = acts.iter().filter(|x| !x.ok).count();
    if !json {
        println!("{verb}: {} file(s), {failed} failed", acts.len());
    }
    u8::from(failed > 0)
}

fn layout_of(a: &Args) -> Result<LayoutKind> {
    Ok(match (a.layout.as_deref(), &a.out) {
        (None, Some(_)) => LayoutKind::Out,
        (Some(_), Some(_)) => {
            return Err(Error::InvalidArgument(
                "-o and --layout exclude each other".into(),
            ))
        }
        (None | Some("sibling"), None) => LayoutKind::Sibling,
        (Some("in-place"), None) => LayoutKind::InPlace,
        (Some("mirror"), None) => LayoutKind::Mirror,
        (Some(l), None) => return Err(Error::InvalidArgument(format!("unknown layout {l:?}"))),
    })
}

fn recompress(a: &Args) -> Result<u8> {
    let spec = a
        .filter
        .as_deref()
        .ok_or_else(|| Error::InvalidArgument(format!("--filter is required\n{USAGE}")))?;
    let FilterChoice::Pipeline(pipeline) = parse_spec(spec)? else {
        return Err(Error::InvalidArgument("bad --filter".into()));
    };
    if a.srcs.is_empty() {
        return Err(Error::InvalidArgument(format!("no SRC given\n{USAGE}")));
    }
    let layout = layout_of(a)?;
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    for s in &a.srcs {
        if s.is_dir() {
            dirs.push(select::canonical(s));
        } else if s.is_file() {
            files.push(select::canonical(s));
        } else {
            return Err(Error::InvalidArgument(format!(
                "{}: no such file or directory",
                s.display()
            )));
        }
    }
    if !dirs.is_empty() && a.conditions.is_empty() && !a.all {
        return Err(Error::InvalidArgument(
            "selecting in a directory needs --where KEY:VALUE or an explicit --all \
(without them nothing would be selected)"
                .into(),
        ));
    }
    if layout == LayoutKind::Out && (files.len() != 1 || !dirs.is_empty()) {
        return Err(Error::InvalidArgument(
            "-o takes exactly one input file".into(),
        ));
    }
    if layout == LayoutKind::InPlace && a.manifest.is_none() && !a.dry_run {
        return Err(Error::InvalidArgument(
            "--layout in-place needs --manifest FILE (the record --undo and --finalize read)"
                .into(),
        ));
    }
    let mirror = match (layout, &a.from, &a.to) {
        (LayoutKind::Mirror, Some(f), Some(t)) => {
            std::fs::create_dir_all(t).map_err(|e| Error::io(t.display(), e))?;
            Some((select::canonical(f), select::canonical(t)))
        }
        (LayoutKind::Mirror, _, _) => {
            return Err(Error::InvalidArgument(
                "--layout mirror needs --from DIR and --to DIR".into(),
            ))
        }
        _ => None,
    };
    let conditions = a
        .conditions
        .iter()
        .map(|c| Condition::parse(c))
        .collect::<Result<Vec<_>>>()?;
    let rules = Rules {
        pipeline,
        select: a.select.clone(),
        ndim: a.ndim.clone(),
        dtype: a.dtype.clone(),
        min_size: a.min_size.unwrap_or(DEFAULT_MIN_SIZE),
        rechunk: a.rechunk.clone(),
    };
    let rows = select(
        &files,
        &dirs,
        &Query {
            conditions,
            all: a.all,
        },
    )?;
    for w in &rows.warnings {
        eprintln!("h5 recompress: warning: {w}");
    }
    // plan every selected file; those with nothing to do become REMAINING
    let mut table: Vec<(select::Row, String)> = Vec::new();
    let mut targets: Vec<(PathBuf, FilePlan)> = Vec::new();
    for r in rows.rows.values() {
        let mut r = r.clone();
        let mut detail = String::new();
        if r.selected() {
            match plan_path(&r.path, &rules) {
                Err(e) => r.block.push(format!("cannot plan: {e}")),
                Ok(p) if !p.virtual_datasets.is_empty() && !files.contains(&r.path) => r
                    .block
                    .push("holds virtual datasets: container kept byte-identical".into()),
                Ok(p) => {
                    let n = p.to_encode().count();
                    if n == 0 {
                        let why: Vec<String> = p
                            .datasets
                            .iter()
                            .map(|d| d.reason.clone())
                            .collect::<std::collections::BTreeSet<_>>()
                            .into_iter()
                            .collect();
                        r.block.push(if why.is_empty() {
                            "no dataset".into()
                        } else {
                            format!("nothing to re-encode: {}", why.join(", "))
                        });
                    } else {
                        detail = format!("{n} dataset(s), {}", human(p.encode_bytes()));
                        targets.push((r.path.clone(), p));
                    }
                }
            }
        }
        table.push((r, detail));
    }
    let view: Vec<(&select::Row, String)> = table.iter().map(|(r, d)| (r, d.clone())).collect();
    if let Some(p) = &a.report {
        crate::tools::atomic_out::write_atomic(p, report::text(&view).as_bytes())?;
    }
    if a.dry_run {
        if a.json {
            for (r, d) in &view {
                println!("{}", report::json_line(r, d));
            }
        } else {
            print!("{}", report::text(&view));
        }
        return Ok(0);
    }
    let settings = Settings {
        rules,
        filter_text: spec.to_string(),
        layout,
        out: a.out.clone(),
        suffix: a.suffix.clone().unwrap_or_else(|| "rc".into()),
        mirror,
        rewrite_vds: a.rewrite_vds,
        manifest: a.manifest.clone(),
        workers: a.workers,
        quiet: a.json,
    };
    let t0 = std::time::Instant::now();
    let outcomes = execute(&targets, &settings)?;
    let secs = t0.elapsed().as_secs_f64();
    let ok: Vec<_> = outcomes.iter().filter(|o| o.ok).collect();
    let failed = outcomes.len() - ok.len();
    let (bin, bout) = (
        ok.iter().map(|o| o.in_size).sum::<u64>(),
        ok.iter().map(|o| o.out_size).sum::<u64>(),
    );
    let remaining = table.len() - targets.len();
    let rate = bin as f64 / secs.max(1e-9) / 1e6;
    for o in &outcomes {
        if a.json {
            println!(
                "{}",
                json!({"path": o.path.display().to_string(),
                       "output": o.output.as_ref().map(|p| p.display().to_string()),
                       "ok": o.ok, "error": if o.ok { None } else { Some(&o.message) },
                       "in_bytes": o.in_size, "out_bytes": o.out_size,
                       "encoded_bytes": o.encoded_bytes, "encoded_chunks": o.encoded_chunks,
                       "raw_chunks": o.raw_chunks, "seconds": o.seconds})
            );
        } else if o.ok {
            let ratio = o.in_size as f64 / (o.out_size.max(1)) as f64;
            println!(
                "{}\t-> {}\t{} -> {} ({ratio:.2}x), {} chunk(s) re-encoded, {} raw, {:.2} s",
                o.path.display(),
                o.output
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                human(o.in_size),
                human(o.out_size),
                o.encoded_chunks,
                o.raw_chunks,
                o.seconds
            );
        } else {
            println!("{}\tFAILED: {}", o.path.display(), o.message);
        }
    }
    if a.json {
        println!(
            "{}",
            json!({"summary": true, "files": outcomes.len(), "ok": ok.len(), "failed": failed,
                   "remaining": remaining, "in_bytes": bin, "out_bytes": bout,
                   "seconds": secs, "mb_per_s": rate})
        );
    } else {
        println!(
            "recompressed {}/{} file(s): {} -> {} ({:.2}x) in {secs:.2} s, {rate:.1} MB/s of input; \
{failed} failed, {remaining} left as they are",
            ok.len(),
            outcomes.len(),
            human(bin),
            human(bout),
            bin as f64 / bout.max(1) as f64
        );
    }
    Ok(u8::from(failed > 0))
}
