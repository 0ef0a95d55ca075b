//! `h5`: inspect and dump any HDF5 file.
//!
//! ```text
//! h5 ls [-r] FILE [PATH]     list a group's links (-r: the whole subtree)
//! h5 dump --json FILE        describe the whole file as JSON (see purehdf_cli::dump)
//! h5 cat FILE DSET [--slice S] --out F.npy   one hyperslab as .npy (purehdf_cli::tools::cat)
//! h5 copy SRC DST [--filter F] [--threads N] rebuild a file (purehdf::low_level::copy)
//! h5 import NPY DST DSET [--chunks a,b,c] [--filter F]  .npy into a chunked dataset
//! h5 recompress SRC... --filter SPEC [...]  re-encode files or trees, swap in safely
//! h5 compare A B [--metric exact|ssim|psnr|maxabs] [--slices S] [--json]
//! h5 verify FILE [--json]  check every checksum, decode every chunk and record
//! h5 completions SHELL       a bash, zsh or fish completion script
//! h5 attr set|del, h5 rm, h5 mv, h5 write, h5 resize   edit in place (purehdf_cli::tools::edit)
//! ```
//! The command line is declared with clap (`cli/h5_args.rs`: `--help` on
//! every command, typo suggestions); the commands of `purehdf_cli::tools`
//! then read the arguments clap accepted with their own parsers.
//! Exit codes: 0 ok, 1 some objects could not be read, 2 the file cannot be opened
//! (or bad usage).

/// Large blocks (decoded datasets) on cache-line boundaries: see
/// [`purehdf::LargeAligned`].
#[global_allocator]
static ALLOC: purehdf::LargeAligned = purehdf::LargeAligned;

use std::collections::HashSet;
use std::io::Write;
use std::process::ExitCode;

use purehdf::low_level::file::Object;
use purehdf::low_level::group::Group;
use purehdf::low_level::link::join_path;
use purehdf::low_level::messages::link::Link;
use purehdf_cli::dump::walk::dump_file;

#[path = "cli/common.rs"]
mod common;
#[path = "cli/h5_args.rs"]
mod h5_args;

use h5_args::Cmd;

const USAGE: &str = "usage: h5 ls [-r] FILE [PATH]\n       \
h5 dump --json FILE\n       \
h5 cat FILE DSET [--slice z0:z1,y0:y1,...] --out FILE.npy\n       \
h5 copy SRC DST [--filter keep|none|SPEC]\n       \
h5 import IMG.npy DST DSET [--chunks C] [--filter SPEC]\n       \
h5 recompress SRC... --filter SPEC [--where KEY:VALUE|--all] [--layout in-place|sibling|mirror] \
[--manifest FILE] [--dry-run] [--json] (h5 recompress --help for all options)\n       \
h5 recompress --undo MANIFEST | --finalize MANIFEST\n       \
h5 compare A B [--metric exact|ssim|psnr|maxabs] [--slices first,last|all|N] [--json]\n       \
h5 verify FILE [--json]\n\
every command: --threads N (default: MEDH5_THREADS, else every core; 1 = no thread pool)\n\
virtual datasets: --fill-missing (missing sources read as the fill value, with a warning), --vds-prefix DIR";

fn main() -> ExitCode {
    // SAFETY: the first statement of main: no other thread exists yet.
    unsafe { purehdf_filters::zstd_codec::tune_process_env() };
    let args = match purehdf_filters::threads::take_flag(std::env::args().skip(1).collect())
        .and_then(common::take_endpoint)
        .and_then(purehdf_cli::tools::vds::take_flags)
    {
        Ok(a) => a,
        Err(e) => {
            eprintln!("h5: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let cli: h5_args::Cli = match common::parse(h5_args::command(), args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let code = match cli.command {
        Cmd::Ls(a) => ls(a.file.as_deref(), a.path.as_deref(), a.recursive),
        Cmd::Dump(a) => dump(a.file.as_deref(), a.json),
        Cmd::Cat(a) => purehdf_cli::tools::cat::run(&a.argv()),
        Cmd::Copy(a) => purehdf_cli::tools::copy::run(&a.argv()),
        Cmd::Import(a) => purehdf_cli::tools::import::run(&a.argv()),
        Cmd::Recompress(a) => purehdf_cli::tools::recompress::run(&a.argv()),
        Cmd::Compare(a) => purehdf_cli::tools::compare::run(&a.argv()),
        Cmd::Verify(a) => purehdf_cli::tools::verify::run(&a.argv()),
        Cmd::Manifest(a) => purehdf_cli::tools::manifest::run(&a.argv()),
        Cmd::Completions(c) => return common::completions(h5_args::command(), c.shell),
        Cmd::Attr(a) => purehdf_cli::tools::edit::attr(&a.args),
        Cmd::Rm(a) => purehdf_cli::tools::edit::rm(&a.args),
        Cmd::Mv(a) => purehdf_cli::tools::edit::mv(&a.args),
        Cmd::Write(a) => purehdf_cli::tools::edit::write(&a.args),
        Cmd::Resize(a) => purehdf_cli::tools::edit::resize(&a.args),
        Cmd::Tail(a) => purehdf_cli::tools::tail::run(&a.args),
    };
    purehdf_cli::tools::vds::warn_filled("h5");
    ExitCode::from(code)
}

fn dump(path: Option<&str>, json: bool) -> u8 {
    let Some(path) = path else {
        eprintln!("{USAGE}");
        return 2;
    };
    if !json {
        eprintln!("h5 dump: only --json output exists for now\n{USAGE}");
        return 2;
    }
    match dump_file(path) {
        Err(e) => {
            eprintln!("h5: cannot open {path}: {e}");
            2
        }
        Ok(mut d) => {
            let filled = purehdf_cli::tools::vds::filled_json();
            if let (false, Some(doc)) = (filled.is_empty(), d.doc.as_object_mut()) {
                doc.insert("vds_missing_filled".into(), filled.into());
            }
            let mut out = std::io::stdout().lock();
            let text = serde_json::to_string_pretty(&d.doc).unwrap_or_default();
            let _ = writeln!(out, "{text}");
            if d.failures > 0 {
                eprintln!("h5: {} object(s) could not be read", d.failures);
                1
            } else {
                0
            }
        }
    }
}

fn ls(file: Option<&str>, start: Option<&str>, recursive: bool) -> u8 {
    let Some(file) = file else {
        eprintln!("{USAGE}");
        return 2;
    };
    let start = start.unwrap_or("/");
    let f = match purehdf_cli::open::open(file) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("h5: cannot open {file}: {e}");
            return 2;
        }
    };
    let group = match f.object(start) {
        Ok(Object::Group(g)) => g,
        Ok(o) => {
            println!("{}", describe(&o));
            if let Object::Dataset(d) = &o {
                if d.layout_kind() == "virtual" {
                    for l in purehdf_cli::tools::vds::mapping_lines(d) {
                        println!("{l}");
                    }
                }
            }
            return 0;
        }
        Err(e) => {
            eprintln!("h5: {start}: {e}");
            return 2;
        }
    };
    let mut out = std::io::stdout().lock();
    let mut failures = 0;
    let mut seen = HashSet::new();
    seen.insert(group.address());
    let mut stack = vec![group];
    while let Some(g) = stack.pop() {
        let links = match g.links() {
            Ok(l) => l,
            Err(e) => {
                eprintln!("h5: {}: {e}", g.path());
                failures += 1;
                continue;
            }
        };
        let mut sub: Vec<Group> = Vec::new();
        for (name, link) in links {
            let path = join_path(g.path(), &name);
            let line = match link {
                Link::Soft(t) => format!("{path}\tsoft link -> {t}"),
                Link::External { file, path: p } => format!("{path}\texternal link -> {file}:{p}"),
                Link::UserDefined { kind, .. } => {
                    format!("{path}\tuser-defined link (type {kind})")
                }
                Link::Hard(addr) => match f.object_at(addr, path.clone()) {
                    Err(e) => {
                        failures += 1;
                        format!("{path}\terror: {e}")
                    }
                    Ok(o) => {
                        let first = seen.insert(addr);
                        let mut text = describe(&o);
                        if let (true, Object::Dataset(d)) = (first, &o) {
                            if d.layout_kind() == "virtual" {
                                for l in purehdf_cli::tools::vds::mapping_lines(d) {
                                    text.push('\n');
                                    text.push_str(&l);
                                }
                            }
                        }
                        if let (true, true, Object::Group(cg)) = (recursive, first, o) {
                            sub.push(cg);
                        }
                        if first {
                            text
                        } else {
                            format!("{text}\t(hard link to an object already listed)")
                        }
                    }
                },
            };
            let _ = writeln!(out, "{line}");
        }
        stack.extend(sub.into_iter().rev());
    }
    u8::from(failures > 0)
}

/// The effective codec of a dataset as `h5 recompress --dry-run` detects it
/// (Blosc/Blosc2: codec and shuffle read from the first stored chunk's
/// header, never from the filter's client data; lossy codecs marked).
fn codec_column(d: &purehdf::low_level::dataset::Dataset) -> String {
    if d.layout_kind() == "virtual" {
        return "codec virtual".into();
    }
    match purehdf_cli::tools::recompress::plan::effective_codec(d) {
        Ok(Some((c, false))) => format!("codec {c}"),
        Ok(Some((c, true))) => format!("codec {c} (lossy)"),
        Ok(None) => "codec ? (no chunk stored)".into(),
        Err(e) => format!("codec unreadable: {e}"),
    }
}

fn describe(o: &Object) -> String {
    match o {
        Object::Group(g) => format!("{}\tgroup", g.path()),
        Object::Dataset(d) => format!(
            "{}\tdataset\t{:?}\t{}\t{}",
            d.path(),
            d.shape(),
            d.dtype().numpy_str().unwrap_or_else(|| "?".into()),
            codec_column(d)
        ),
        Object::NamedDatatype(t) => format!("{}\tdatatype", t.path),
    }
}
