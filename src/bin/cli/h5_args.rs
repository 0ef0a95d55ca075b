//! The `h5` command line as clap declares it: every subcommand and its
//! options, for `--help`, typo suggestions and completions. Values stay
//! strings where the existing parsers check them (their error text is kept).

use clap::{Args, CommandFactory, Parser, Subcommand};

use super::common::{with_endpoint, with_threads, Argv};

/// h5: inspect, dump, copy and re-encode HDF5 files.
#[derive(Parser)]
#[command(
    name = "h5",
    version = concat!("(purehdf) ", env!("CARGO_PKG_VERSION")),
    arg_required_else_help = true,
    args_override_self = true,
    after_help = "Exit codes: 0 ok, 1 some objects could not be read, \
2 the file cannot be opened (or bad usage)."
)]
pub(crate) struct Cli {
    /// The command.
    #[command(subcommand)]
    pub(crate) command: Cmd,
}

/// The commands of `h5`.
#[derive(Subcommand)]
pub(crate) enum Cmd {
    /// List a group's links (-r: the whole subtree)
    Ls(Ls),
    /// Describe the whole file as JSON
    Dump(Dump),
    /// Write one hyperslab of a dataset as .npy
    Cat(Cat),
    /// Rebuild a file, optionally re-encoding its chunks
    Copy(Copy),
    /// Write a .npy array into a chunked dataset
    Import(Import),
    /// Re-encode files or trees and swap them in safely
    Recompress(Box<Recompress>),
    /// Compare the datasets of two files (exactly or by a metric)
    Compare(Compare),
    /// Check every checksum and decode every chunk and record
    Verify(Verify),
    /// Index the file's chunks as a virtual Zarr store (kerchunk, VirtualiZarr)
    Manifest(Manifest),
    /// Print a shell completion script
    Completions(Completions),
    /// Set or delete an attribute in place (attr set FILE PATH NAME VALUE [--dtype T] | attr del FILE PATH NAME)
    Attr(EditArgs),
    /// Delete a link in place (rm FILE PATH)
    Rm(EditArgs),
    /// Rename or move a link in place (mv FILE FROM TO)
    Mv(EditArgs),
    /// Write a .npy slab into a dataset in place (write FILE DSET [--slice S] --from X.npy)
    Write(EditArgs),
    /// Resize a chunked dataset in place (resize FILE DSET SHAPE)
    Resize(EditArgs),
    /// Follow a dataset a SWMR writer appends to (tail FILE DSET [--interval MS] [--json] [--count N] [--last N])
    Tail(EditArgs),
}

/// Arguments of the in-place edit commands, checked by `purehdf_cli::tools::edit`.
#[derive(Args)]
pub(crate) struct EditArgs {
    /// The arguments
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub(crate) args: Vec<String>,
}

/// `h5 ls [-r] FILE [PATH]`.
#[derive(Args)]
pub(crate) struct Ls {
    /// List the whole subtree
    #[arg(short = 'r', long = "recursive")]
    pub(crate) recursive: bool,
    /// The HDF5 file
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<String>,
    /// The group (or object) to list
    #[arg(value_name = "PATH")]
    pub(crate) path: Option<String>,
}

/// `h5 dump --json FILE`.
#[derive(Args)]
pub(crate) struct Dump {
    /// JSON output (the only output for now)
    #[arg(long)]
    pub(crate) json: bool,
    /// The HDF5 file
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<String>,
}

/// `h5 cat FILE DSET [--slice S] --out F.npy`.
#[derive(Args)]
pub(crate) struct Cat {
    /// The HDF5 file
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<String>,
    /// The dataset path
    #[arg(value_name = "DSET")]
    pub(crate) dset: Option<String>,
    /// The hyperslab, e.g. z0:z1,y0:y1,...
    #[arg(long, value_name = "z0:z1,y0:y1,...", allow_hyphen_values = true)]
    pub(crate) slice: Option<String>,
    /// The .npy file to write
    #[arg(short = 'o', long, value_name = "FILE.npy", allow_hyphen_values = true)]
    pub(crate) out: Option<String>,
}

impl Cat {
    /// The arguments `purehdf_cli::tools::cat::run` reads.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(self.file.iter().chain(&self.dset))
            .opt("--slice", &self.slice)
            .opt("--out", &self.out)
            .done()
    }
}

/// `h5 copy SRC DST [--filter F]`.
#[derive(Args)]
pub(crate) struct Copy {
    /// The source file
    #[arg(value_name = "SRC")]
    pub(crate) src: Option<String>,
    /// The file to write
    #[arg(value_name = "DST")]
    pub(crate) dst: Option<String>,
    /// keep, none, or a pipeline: deflate:4, shuffle+deflate:4,
    /// blosc2:zstd:3:shuffle, blosc2:lz4:1:bitshuffle, zstd:3, lz4
    #[arg(long, value_name = "keep|none|SPEC", allow_hyphen_values = true)]
    pub(crate) filter: Option<String>,
}

impl Copy {
    /// The arguments `purehdf_cli::tools::copy::run` reads.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(self.src.iter().chain(&self.dst))
            .opt("--filter", &self.filter)
            .done()
    }
}

/// `h5 import NPY DST DSET [--chunks C] [--filter F]`.
#[derive(Args)]
pub(crate) struct Import {
    /// The .npy array
    #[arg(value_name = "NPY")]
    pub(crate) npy: Option<String>,
    /// The HDF5 file to write
    #[arg(value_name = "DST")]
    pub(crate) dst: Option<String>,
    /// The dataset path in DST
    #[arg(value_name = "DSET")]
    pub(crate) dset: Option<String>,
    /// Chunk extents, e.g. 1,512,512
    #[arg(long, value_name = "a,b,c", allow_hyphen_values = true)]
    pub(crate) chunks: Option<String>,
    /// none or a pipeline (blosc2:lz4:1:shuffle, zstd:3, ...)
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    pub(crate) filter: Option<String>,
}

impl Import {
    /// The arguments `purehdf_cli::tools::import::run` reads.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(self.npy.iter().chain(&self.dst).chain(&self.dset))
            .opt("--chunks", &self.chunks)
            .opt("--filter", &self.filter)
            .done()
    }
}

/// `h5 recompress SRC... --filter SPEC [...]`, `--swap`, `--undo`,
/// `--finalize MANIFEST`.
#[derive(Args)]
#[command(
    after_help = "SPEC: as h5 copy spells it (shuffle+deflate:4, blosc2:zstd:3:shuffle, \
zstd:3, lz4, none) or a medh5 profile (training, balanced, archive, portable)"
)]
pub(crate) struct Recompress {
    /// Files or directory trees to re-encode
    #[arg(value_name = "SRC")]
    pub(crate) srcs: Vec<String>,
    /// The new pipeline: h5 copy's spelling or a medh5 profile
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    pub(crate) filter: Option<String>,
    /// Only datasets matching KEY:VALUE (repeatable)
    #[arg(long = "where", value_name = "KEY:VALUE", allow_hyphen_values = true)]
    pub(crate) conditions: Vec<String>,
    /// Every dataset (no --where condition)
    #[arg(long)]
    pub(crate) all: bool,
    /// Only files matching GLOB (repeatable)
    #[arg(long, value_name = "GLOB", allow_hyphen_values = true)]
    pub(crate) select: Vec<String>,
    /// Only datasets of rank N (repeatable)
    #[arg(long, value_name = "N")]
    pub(crate) ndim: Vec<String>,
    /// Only datasets of numpy type T, e.g. u2 or <u2 (repeatable)
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub(crate) dtype: Vec<String>,
    /// Leave datasets smaller than BYTES as they are (default 1024)
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true)]
    pub(crate) min_size: Option<String>,
    /// New chunk extents, e.g. 1,512,512
    #[arg(long, value_name = "a,b,c", allow_hyphen_values = true)]
    pub(crate) rechunk: Option<String>,
    /// Where outputs go
    #[arg(
        long,
        value_name = "in-place|sibling|mirror",
        allow_hyphen_values = true
    )]
    pub(crate) layout: Option<String>,
    /// The suffix of sibling outputs
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub(crate) suffix: Option<String>,
    /// The tree mirrored from (with --to)
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub(crate) from: Option<String>,
    /// The mirror tree (with --from)
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub(crate) to: Option<String>,
    /// Mirror: rewrite absolute VDS source names under --from to the mirrored files
    #[arg(long)]
    pub(crate) rewrite_vds: bool,
    /// One output file
    #[arg(short = 'o', long, value_name = "OUT", allow_hyphen_values = true)]
    pub(crate) out: Option<String>,
    /// The manifest to write (for --swap, --undo, --finalize)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub(crate) manifest: Option<String>,
    /// Files re-encoded at once (0: $SLURM_CPUS_PER_TASK or all cores)
    #[arg(long, alias = "jobs", value_name = "N", allow_hyphen_values = true)]
    pub(crate) workers: Option<String>,
    /// Plan only: list what would be re-encoded
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Write a report to FILE
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub(crate) report: Option<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
    /// Put the outputs of a sibling/mirror/-o run in place
    #[arg(long, value_name = "MANIFEST", allow_hyphen_values = true)]
    pub(crate) swap: Option<String>,
    /// Restore the originals of a run
    #[arg(long, value_name = "MANIFEST", allow_hyphen_values = true)]
    pub(crate) undo: Option<String>,
    /// Delete the originals kept by a run
    #[arg(long, value_name = "MANIFEST", allow_hyphen_values = true)]
    pub(crate) finalize: Option<String>,
}

impl Recompress {
    /// The arguments `purehdf_cli::tools::recompress::run` reads.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(&self.srcs)
            .opt("--filter", &self.filter)
            .multi("--where", &self.conditions)
            .flag("--all", self.all)
            .multi("--select", &self.select)
            .multi("--ndim", &self.ndim)
            .multi("--dtype", &self.dtype)
            .opt("--min-size", &self.min_size)
            .opt("--rechunk", &self.rechunk)
            .opt("--layout", &self.layout)
            .opt("--suffix", &self.suffix)
            .opt("--from", &self.from)
            .flag("--rewrite-vds", self.rewrite_vds)
            .opt("--to", &self.to)
            .opt("--out", &self.out)
            .opt("--manifest", &self.manifest)
            .opt("--workers", &self.workers)
            .flag("--dry-run", self.dry_run)
            .opt("--report", &self.report)
            .flag("--json", self.json)
            .opt("--swap", &self.swap)
            .opt("--undo", &self.undo)
            .opt("--finalize", &self.finalize)
            .done()
    }
}

/// `h5 compare A B [--metric M] [--slices S] [--dataset D]... [--json]`.
#[derive(Args)]
pub(crate) struct Compare {
    /// The first file
    #[arg(value_name = "A")]
    pub(crate) a: Option<String>,
    /// The second file
    #[arg(value_name = "B")]
    pub(crate) b: Option<String>,
    /// exact, ssim, psnr or maxabs
    #[arg(
        long,
        value_name = "exact|ssim|psnr|maxabs",
        allow_hyphen_values = true
    )]
    pub(crate) metric: Option<String>,
    /// The slices a metric compares: first,last, all or N
    #[arg(long, value_name = "first,last|all|N", allow_hyphen_values = true)]
    pub(crate) slices: Option<String>,
    /// Only this dataset (repeatable)
    #[arg(long, value_name = "DSET", allow_hyphen_values = true)]
    pub(crate) dataset: Vec<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

impl Compare {
    /// The arguments `purehdf_cli::tools::compare::run` reads.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(self.a.iter().chain(&self.b))
            .opt("--metric", &self.metric)
            .opt("--slices", &self.slices)
            .multi("--dataset", &self.dataset)
            .flag("--json", self.json)
            .done()
    }
}

/// `h5 verify FILE [--json]`.
#[derive(Args)]
pub(crate) struct Verify {
    /// The HDF5 file
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

impl Verify {
    /// The arguments `purehdf_cli::tools::verify::run` reads.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(self.file.iter())
            .flag("--json", self.json)
            .done()
    }
}

/// `h5 manifest FILE|URL [--format kerchunk|zarr-v3] [--codecs standard|purehdf] [-o OUT] [--parquet]`.
#[derive(Args)]
pub(crate) struct Manifest {
    /// The HDF5 file or object URL
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<String>,
    /// kerchunk (reference JSON v1, Zarr format 2) or zarr-v3 (VirtualiZarr manifests)
    #[arg(long)]
    pub(crate) format: Option<String>,
    /// standard (numcodecs ids where numcodecs has the filter) or purehdf (our codecs only)
    #[arg(long)]
    pub(crate) codecs: Option<String>,
    /// The output file or URL (default: standard output); with --parquet a new directory
    #[arg(short = 'o', long = "out")]
    pub(crate) out: Option<String>,
    /// kerchunk references as Parquet files (fsspec's lazy reference layout) in the -o directory
    #[arg(long)]
    pub(crate) parquet: bool,
}

impl Manifest {
    /// The arguments `purehdf_cli::tools::manifest::run` reads.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(self.file.iter())
            .opt("--format", &self.format)
            .opt("--codecs", &self.codecs)
            .opt("--out", &self.out)
            .flag("--parquet", self.parquet)
            .done()
    }
}

/// `h5 completions SHELL`.
#[derive(Args)]
pub(crate) struct Completions {
    /// The shell
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// The whole `h5` command, with the global `--threads`.
pub(crate) fn command() -> clap::Command {
    with_vds_flags(with_endpoint(with_threads(Cli::command())))
}

/// `cmd` with `--fill-missing` and `--vds-prefix DIR` declared on it and on
/// every subcommand, for help and completions;
/// `purehdf_cli::tools::vds::take_flags` takes them out before clap sees them.
fn with_vds_flags(cmd: clap::Command) -> clap::Command {
    cmd.arg(
        clap::Arg::new("fill-missing")
            .long("fill-missing")
            .action(clap::ArgAction::SetTrue)
            .help("Read missing virtual-dataset sources as the fill value (with a warning) instead of failing"),
    )
    .arg(
        clap::Arg::new("vds-prefix")
            .long("vds-prefix")
            .value_name("DIR")
            .help("Folder searched for relative virtual-dataset sources (libhdf5's virtual prefix; ${ORIGIN} = the file's folder)"),
    )
    .mut_subcommands(with_vds_flags)
}
