//! `medh5`: the medh5 storage commands (same flags and `--json` shapes as the
//! reference CLI where implemented). Exit codes: 0 ok, 1 handled error or failed
//! check, 2 usage error.
//!
//! The command line is declared with clap (`cli/medh5_args.rs`: `--help` on
//! every command, typo suggestions, `completions SHELL`); after clap accepts
//! it, each command runs as before (the library's parsers read the arguments
//! where they check values, so their words and exit codes stay the same).

/// Large blocks (decoded datasets) on cache-line boundaries: see
/// [`purehdf::LargeAligned`].
#[global_allocator]
static ALLOC: purehdf::LargeAligned = purehdf::LargeAligned;

use std::path::Path;
use std::process::ExitCode;

use purehdf_medh5::{bench, check, create, fix, info, profiles::Profile, validate, verify, writer};

#[path = "cli/common.rs"]
mod common;
#[path = "cli/medh5_args.rs"]
mod medh5_args;

use medh5_args::{Cmd, IndexAction};

const USAGE: &str = "usage:
  medh5 demo OUT [--profile P] [--json]            write, read back and check a synthetic CT + labels sample
  medh5 create OUT --from MANIFEST.json [--profile P] [--json]
  medh5 verify FILE... [--partial OBJ]... [--json]     recompute digests and content_id
  medh5 fix FILE... [--rewrite-digests --reason R [--by WHO]] [--rebuild-index] [--json]
                                                      diagnose; re-attest digests; rebuild stale indices
  medh5 index build FILE... [--max-coords N] [--occupancy F] [--seed S] [--json]
                                                      build the sampling index of every voxel annotation
  medh5 info PATH [--json]                            summary of a sample
  medh5 tree PATH [--json]                            the sample's object tree
  medh5 bench-op OP [FILE] [flags]                  bench protocol (write, read-full, read-patches,
                                                      open-first-patch, verify); JSON as the last line
  medh5 recompress PATH... --profile P [--rechunk] [-o OUT] [--workers N] [--json]
  medh5 pack SRC... -o OUT.medh5c [--key K]... [--workers N] [--json]   pack into a collection
  medh5 unpack SHARD -o DIR [--key K]... [--workers N] [--json]   one DIR/<key>.medh5 per member
  medh5 ls SHARD [--json]                                    list a collection's members
  (verify, info and tree take --key K for a collection member)
  medh5 validate FILE... [--level structural|semantic|integrity|strict] [--profile P]...
                 [--codes-revision N] [--json]       check a sample or collection against the spec
  medh5 --version
every command: --threads N (default: MEDH5_THREADS, else every core; 1 = no thread pool);
recompress, pack and unpack: --workers N is the thread count (0 and 1: one) unless --threads is given";

/// `--workers N` of recompress, pack and unpack (the reference's worker
/// count) taken out of `args` and applied as the thread count, unless a
/// `--threads` is given too (which then decides). Other commands keep it.
fn take_workers(args: Vec<String>) -> Result<Vec<String>, String> {
    // the command: the first argument that is not a global --threads
    let mut cmd = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--threads" {
            it.next();
        } else if !a.starts_with("--threads=") {
            cmd = Some(a.as_str());
            break;
        }
    }
    if !matches!(cmd, Some("recompress" | "pack" | "unpack")) {
        return Ok(args);
    }
    let threads_given = args
        .iter()
        .any(|a| a == "--threads" || a.starts_with("--threads="));
    let mut rest = Vec::with_capacity(args.len());
    let mut workers = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let value = if a == "--workers" {
            Some(it.next().unwrap_or_default())
        } else {
            a.strip_prefix("--workers=").map(str::to_string)
        };
        match value {
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) => workers = Some(n.max(1)),
                Err(_) => return Err(format!("--workers takes a number, not {v:?}")),
            },
            None => rest.push(a),
        }
    }
    if let (Some(n), false) = (workers, threads_given) {
        purehdf_filters::threads::set_threads(n).map_err(|e| format!("--workers: {e}"))?;
    }
    Ok(rest)
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("medh5: {msg}\n{USAGE}");
    ExitCode::from(2)
}

fn write_and_report(
    sample: purehdf_medh5::model::Sample,
    profile: Profile,
    out: &Path,
    json: bool,
    read_back: bool,
) -> ExitCode {
    let result = create::plan(sample, profile, None).and_then(|plan| {
        writer::write_plan(&plan, out)?;
        let checked = if read_back {
            Some(check::check_written(out, &plan)?)
        } else {
            None
        };
        Ok((plan, checked))
    });
    match result {
        Ok((plan, checked)) => {
            if json {
                let v = serde_json::json!({"path": out.display().to_string(), "content_id": plan.content_id});
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                println!("{}: {}", out.display(), plan.content_id);
                if let Some(n) = checked {
                    println!(
                        "read back: {n} datasets identical (profile {})",
                        profile.name()
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("medh5: {}: {e}", out.display());
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    // SAFETY: the first statement of main: no other thread exists yet.
    unsafe { purehdf_filters::zstd_codec::tune_process_env() };
    let args = match take_workers(std::env::args().skip(1).collect())
        .and_then(purehdf_filters::threads::take_flag)
        .and_then(common::take_endpoint)
    {
        Ok(a) => a,
        Err(e) => return usage(&e),
    };
    let cli: medh5_args::Cli = match common::parse(medh5_args::command(), args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    match cli.command {
        Cmd::Demo(a) => {
            let profile = match Profile::from_name(a.profile.as_deref()) {
                Ok(p) => p,
                Err(e) => return usage(&e.to_string()),
            };
            let Some(out) = a.out else {
                return usage("demo takes one output path");
            };
            match create::demo_sample() {
                Ok(s) => write_and_report(s, profile, Path::new(&out), a.json, true),
                Err(e) => {
                    eprintln!("medh5: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Cmd::Create(a) => {
            let profile = match Profile::from_name(a.profile.as_deref()) {
                Ok(p) => p,
                Err(e) => return usage(&e.to_string()),
            };
            let Some(out) = a.out else {
                return usage("create takes one output path");
            };
            let Some(manifest) = a.from.map(std::path::PathBuf::from) else {
                return usage("create needs --from MANIFEST.json");
            };
            let loaded = std::fs::read(&manifest)
                .map_err(|e| purehdf_medh5::error::Error::io(manifest.display(), e))
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).map_err(Into::into))
                .and_then(|m| {
                    let base = manifest.parent().unwrap_or(Path::new("."));
                    create::sample_from_manifest(&m, base)
                });
            match loaded {
                Ok((s, p)) => {
                    let p = if a.profile.is_some() { profile } else { p };
                    write_and_report(s, p, Path::new(&out), a.json, false)
                }
                Err(e) => {
                    eprintln!("medh5: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Cmd::Verify(a) => {
            let argv = a.argv();
            if purehdf_medh5::collection_cli::handles(&argv) {
                collection("verify", &argv)
            } else {
                run_verify(&a)
            }
        }
        Cmd::Fix(a) => run_fix(&a),
        Cmd::Info(a) => info_or_tree("info", &a),
        Cmd::Tree(a) => info_or_tree("tree", &a),
        Cmd::Validate(a) => run_validate(&a.argv()),
        Cmd::Recompress(a) => {
            ExitCode::from(purehdf_medh5::recompress::run_cli(&a.argv(), &print_json))
        }
        Cmd::Pack(a) => collection("pack", &a.argv()),
        Cmd::Unpack(a) => collection("unpack", &a.argv()),
        Cmd::Ls(a) => collection("ls", &a.argv()),
        Cmd::Index(i) => match i.action {
            IndexAction::Build(b) => match purehdf_medh5::index::cli::parse(&b.argv()) {
                Ok(a) => ExitCode::from(purehdf_medh5::index::cli::run(&a)),
                Err(e) => usage(&e),
            },
        },
        Cmd::BenchOp(a) => run_bench_op(&a.argv()),
        Cmd::Completions(c) => common::completions(medh5_args::command(), c.shell),
    }
}

/// A collection command (or `verify`/`info`/`tree` on a collection or with
/// `--key`).
fn collection(cmd: &str, argv: &[String]) -> ExitCode {
    ExitCode::from(purehdf_medh5::collection_cli::run(cmd, argv, &print_json))
}

fn info_or_tree(cmd: &str, a: &medh5_args::Info) -> ExitCode {
    let argv = a.argv();
    if purehdf_medh5::collection_cli::handles(&argv) {
        return collection(cmd, &argv);
    }
    let Some(path) = &a.path else {
        return usage(&format!("{cmd} takes one path"));
    };
    run_info(cmd == "tree", path, a.json)
}

/// Pretty JSON as the reference prints it: 2-space indent, non-ASCII escaped.
fn print_json(v: &serde_json::Value) {
    println!("{}", purehdf_medh5::index::cli::json_text(v));
}

fn run_verify(o: &medh5_args::Verify) -> ExitCode {
    if o.files.is_empty() {
        return usage("verify needs at least one file");
    }
    let partial = (!o.partial.is_empty()).then_some(o.partial.as_slice());
    let mut all_ok = true;
    let mut entries = Vec::new();
    verify::verify_paths(&o.files, partial, |p, r| match r {
        Ok(r) => {
            all_ok &= r.ok;
            if o.json {
                entries.push(r.to_json());
            } else {
                print!("{}", r.to_text(p));
            }
        }
        Err(e) => {
            all_ok = false;
            eprintln!("medh5: {p}: {e}");
            if o.json {
                entries.push(serde_json::json!({"path": p, "ok": false, "error": e.to_string()}));
            }
        }
    });
    if o.json {
        print_json(&serde_json::Value::Array(entries));
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn run_info(tree: bool, path: &str, json: bool) -> ExitCode {
    let result = if tree {
        info::tree(Path::new(path), path).map(|t| (t.to_json(), t.to_text()))
    } else {
        purehdf_medh5::self_contained::open(Path::new(path), path).and_then(|f| {
            let i = info::info_file(&f, path)?;
            let text = info::info_text(&f, &i);
            Ok((i, text))
        })
    };
    match result {
        Ok((v, text)) => {
            if json {
                print_json(&v);
            } else {
                print!("{text}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("medh5: {path}: {e}");
            ExitCode::from(1)
        }
    }
}

fn run_bench_op(args: &[String]) -> ExitCode {
    if args.first().is_some_and(|a| a == "draw") {
        return match purehdf_medh5::index::draw::bench_draw(&args[1..]) {
            Ok(v) => {
                println!("{v}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("medh5: bench-op draw: {e}");
                ExitCode::from(1)
            }
        };
    }
    let a = match bench::Args::parse(args) {
        Ok(a) => a,
        Err(e) => return usage(&e.to_string()),
    };
    match bench::run(&a) {
        Ok(v) => {
            println!("{v}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("medh5: bench-op {}: {e}", a.op);
            ExitCode::from(1)
        }
    }
}

fn run_fix(o: &medh5_args::Fix) -> ExitCode {
    if o.files.is_empty() {
        return usage("fix needs at least one file");
    }
    if o.rewrite_digests && o.reason.is_none() {
        return usage("--rewrite-digests needs --reason REASON");
    }
    let opts = fix::FixOptions {
        rewrite_digests: o.rewrite_digests,
        rebuild_index: o.rebuild_index,
        reason: o.reason.clone(),
        by: o.by.clone(),
        ..fix::FixOptions::default()
    };
    let mut all_ok = true;
    let mut entries = Vec::new();
    for p in &o.files {
        match fix::fix_path(Path::new(p), p, &opts) {
            Ok(r) => {
                all_ok &= r.ok();
                if o.json {
                    entries.push(r.to_json());
                } else {
                    print!("{}", r.to_text());
                }
            }
            Err(e) => {
                all_ok = false;
                eprintln!("medh5: {e}");
                if o.json {
                    entries
                        .push(serde_json::json!({"path": p, "ok": false, "error": e.to_string()}));
                }
            }
        }
    }
    if o.json {
        print_json(&serde_json::Value::Array(entries));
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `validate`: its own flags (`--profile` names format profiles here, not
/// codec profiles); exit 0 when every file is ok at the level, 1 otherwise,
/// 2 on a usage error.
fn run_validate(args: &[String]) -> ExitCode {
    let mut opts = validate::Options::default();
    let mut json = false;
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json = true,
            "-v" | "--verbose" => {}
            "--level" => match it.next().and_then(|l| validate::Level::from_name(l)) {
                Some(l) => opts.level = l,
                None => return usage("--level takes structural, semantic, integrity or strict"),
            },
            "--profile" => match it.next() {
                Some(p) if validate::container::KNOWN_PROFILES.contains(&p.as_str()) => {
                    opts.profiles.push(p.clone())
                }
                _ => return usage("--profile takes a format profile name"),
            },
            "--codes-revision" => match it.next().and_then(|n| n.parse::<u32>().ok()) {
                Some(n) => opts.codes_revision = Some(n),
                None => return usage("--codes-revision takes a number"),
            },
            "--workers" | "--threads" => {
                if it.next().and_then(|n| n.parse::<u32>().ok()).is_none() {
                    return usage(&format!("{a} takes a number"));
                }
            }
            s if s.starts_with('-') => return usage(&format!("unknown option {s}")),
            s => files.push(s.to_string()),
        }
    }
    if files.is_empty() {
        return usage("validate needs at least one file");
    }
    if let Some(rev) = opts.codes_revision {
        if !(1..=validate::CODES_REVISION).contains(&rev) {
            eprintln!(
                "medh5: codes revision {rev} is not a revision of the code table; this engine implements revisions 1 to {} (§15.2)",
                validate::CODES_REVISION
            );
            return ExitCode::from(1);
        }
    }
    let mut all_ok = true;
    let mut entries = Vec::new();
    for f in &files {
        let r = validate::validate_path(Path::new(f), &opts);
        all_ok &= r.ok();
        if json {
            entries.push(r.to_json());
        } else {
            print!("{}", r.to_text());
        }
    }
    if json {
        print_json(&serde_json::Value::Array(entries));
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
