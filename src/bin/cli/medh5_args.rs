//! The `medh5` command line as clap declares it: every subcommand and its
//! options, for `--help`, typo suggestions and completions. Values stay
//! strings where the existing parsers check them (their error text and exit
//! codes are the reference CLI's).

use clap::{Arg, Args, CommandFactory, Parser, Subcommand};

use super::common::{with_endpoint, with_threads, Argv};

/// medh5: write, check and repair medh5 samples and collections.
#[derive(Parser)]
#[command(
    name = "medh5",
    version = concat!("(purehdf) ", env!("CARGO_PKG_VERSION")),
    arg_required_else_help = true,
    args_override_self = true,
    after_help = "Exit codes: 0 ok, 1 handled error or failed check, 2 usage error.\n\
recompress, pack and unpack: --workers N is the thread count (0 and 1: one) unless --threads is given."
)]
pub(crate) struct Cli {
    /// The command.
    #[command(subcommand)]
    pub(crate) command: Cmd,
}

/// The commands of `medh5`.
#[derive(Subcommand)]
pub(crate) enum Cmd {
    /// Write, read back and check a synthetic CT + labels sample
    Demo(Demo),
    /// Write a sample from a JSON manifest
    Create(Create),
    /// Recompute digests and content_id
    Verify(Verify),
    /// Diagnose; re-attest digests; rebuild stale indices
    Fix(Fix),
    /// Summary of a sample (or of a collection)
    Info(Info),
    /// The sample's object tree
    Tree(Info),
    /// Check a sample or collection against the spec
    Validate(Validate),
    /// Re-encode samples with a codec profile
    Recompress(Recompress),
    /// Pack samples into a collection
    Pack(Pack),
    /// Write one DIR/KEY.medh5 per member of a collection
    Unpack(Unpack),
    /// List a collection's members
    Ls(Ls),
    /// The sampling index of voxel annotations
    Index(Index),
    /// The bench protocol (write, read-full, read-patches, open-first-patch,
    /// verify, draw, ...); JSON as the last line
    BenchOp(Box<BenchOp>),
    /// Print a shell completion script
    Completions(Completions),
}

/// `medh5 demo OUT [--profile P] [--json]`.
#[derive(Args)]
pub(crate) struct Demo {
    /// The sample to write
    #[arg(value_name = "OUT")]
    pub(crate) out: Option<String>,
    /// The codec profile (training, balanced, archive, portable)
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub(crate) profile: Option<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

/// `medh5 create OUT --from MANIFEST.json [--profile P] [--json]`.
#[derive(Args)]
pub(crate) struct Create {
    /// The sample to write
    #[arg(value_name = "OUT")]
    pub(crate) out: Option<String>,
    /// The manifest describing the sample
    #[arg(long, value_name = "MANIFEST.json", allow_hyphen_values = true)]
    pub(crate) from: Option<String>,
    /// The codec profile (default: the manifest's)
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub(crate) profile: Option<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

/// `medh5 verify FILE... [--partial OBJ]... [--key K] [--json]`.
#[derive(Args)]
pub(crate) struct Verify {
    /// Samples or collections
    #[arg(value_name = "FILE")]
    pub(crate) files: Vec<String>,
    /// Verify only this object (repeatable)
    #[arg(long, value_name = "OBJ", allow_hyphen_values = true)]
    pub(crate) partial: Vec<String>,
    /// The member of a collection
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    pub(crate) key: Vec<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

impl Verify {
    /// The arguments the collection commands read.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(&self.files)
            .multi("--partial", &self.partial)
            .multi("--key", &self.key)
            .flag("--json", self.json)
            .done()
    }
}

/// `medh5 fix FILE... [--rewrite-digests --reason R [--by WHO]]
/// [--rebuild-index] [--json]`.
#[derive(Args)]
pub(crate) struct Fix {
    /// The samples to diagnose and repair
    #[arg(value_name = "FILE")]
    pub(crate) files: Vec<String>,
    /// Re-attest the digests of edited datasets (needs --reason)
    #[arg(long)]
    pub(crate) rewrite_digests: bool,
    /// Why the digests are rewritten
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub(crate) reason: Option<String>,
    /// Who rewrites them
    #[arg(long, value_name = "WHO", allow_hyphen_values = true)]
    pub(crate) by: Option<String>,
    /// Rebuild stale sampling indices
    #[arg(long)]
    pub(crate) rebuild_index: bool,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

/// `medh5 info|tree PATH [--key K] [--json]`.
#[derive(Args)]
pub(crate) struct Info {
    /// The sample or collection
    #[arg(value_name = "PATH")]
    pub(crate) path: Option<String>,
    /// The member of a collection
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    pub(crate) key: Vec<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

impl Info {
    /// The arguments the collection commands read.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(&self.path)
            .multi("--key", &self.key)
            .flag("--json", self.json)
            .done()
    }
}

/// `medh5 validate FILE... [--level L] [--profile P]... [--codes-revision N]
/// [--json]`.
#[derive(Args)]
pub(crate) struct Validate {
    /// Samples or collections
    #[arg(value_name = "FILE")]
    pub(crate) files: Vec<String>,
    /// structural, semantic, integrity or strict
    #[arg(long, value_name = "LEVEL", allow_hyphen_values = true)]
    pub(crate) level: Option<String>,
    /// A format profile to check too (repeatable)
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub(crate) profile: Vec<String>,
    /// The revision of the code table to report with
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) codes_revision: Option<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
    /// Accepted for the reference's sake (no effect)
    #[arg(short = 'v', long)]
    pub(crate) verbose: bool,
    /// Accepted for the reference's sake (checked, no effect)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) workers: Option<String>,
}

impl Validate {
    /// The arguments `validate`'s parser reads.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(&self.files)
            .opt("--level", &self.level)
            .multi("--profile", &self.profile)
            .opt("--codes-revision", &self.codes_revision)
            .flag("--json", self.json)
            .flag("--verbose", self.verbose)
            .opt("--workers", &self.workers)
            .done()
    }
}

/// `medh5 recompress PATH... --profile P [--rechunk] [-o OUT] [--json]`
/// (`--workers` is added by [`command`]).
#[derive(Args)]
pub(crate) struct Recompress {
    /// Samples or collections to re-encode
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<String>,
    /// The codec profile: archive, balanced, portable or training
    #[arg(long, value_name = "PROFILE", allow_hyphen_values = true)]
    pub(crate) profile: Option<String>,
    /// Rechunk to the profile's chunk shape
    #[arg(long)]
    pub(crate) rechunk: bool,
    /// One output file (one input only)
    #[arg(short = 'o', long, value_name = "OUT", allow_hyphen_values = true)]
    pub(crate) out: Option<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

impl Recompress {
    /// The arguments `purehdf_medh5::recompress::run_cli` reads.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(&self.paths)
            .opt("--profile", &self.profile)
            .flag("--rechunk", self.rechunk)
            .opt("--out", &self.out)
            .flag("--json", self.json)
            .done()
    }
}

/// `medh5 pack SRC... -o OUT.medh5c [--key K]... [--json]`.
#[derive(Args)]
pub(crate) struct Pack {
    /// The samples to pack
    #[arg(value_name = "SRC")]
    pub(crate) srcs: Vec<String>,
    /// The collection to write
    #[arg(
        short = 'o',
        long,
        value_name = "OUT.medh5c",
        allow_hyphen_values = true
    )]
    pub(crate) out: Option<String>,
    /// The key of each member, in order (default: from the file names)
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    pub(crate) key: Vec<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

impl Pack {
    /// The arguments the collection commands read.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(&self.srcs)
            .opt("--out", &self.out)
            .multi("--key", &self.key)
            .flag("--json", self.json)
            .done()
    }
}

/// `medh5 unpack SHARD -o DIR [--key K]... [--json]`.
#[derive(Args)]
pub(crate) struct Unpack {
    /// The collection
    #[arg(value_name = "SHARD")]
    pub(crate) shard: Option<String>,
    /// The directory to write into
    #[arg(short = 'o', long, value_name = "DIR", allow_hyphen_values = true)]
    pub(crate) out: Option<String>,
    /// Only this member (repeatable)
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    pub(crate) key: Vec<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

impl Unpack {
    /// The arguments the collection commands read.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(&self.shard)
            .opt("--out", &self.out)
            .multi("--key", &self.key)
            .flag("--json", self.json)
            .done()
    }
}

/// `medh5 ls SHARD [--json]`.
#[derive(Args)]
pub(crate) struct Ls {
    /// The collection
    #[arg(value_name = "SHARD")]
    pub(crate) shard: Option<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

impl Ls {
    /// The arguments the collection commands read.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(&self.shard)
            .flag("--json", self.json)
            .done()
    }
}

/// `medh5 index ACTION ...`.
#[derive(Args)]
pub(crate) struct Index {
    /// The action.
    #[command(subcommand)]
    pub(crate) action: IndexAction,
}

/// The actions of `medh5 index`.
#[derive(Subcommand)]
pub(crate) enum IndexAction {
    /// Build the sampling index of every voxel annotation
    Build(IndexBuild),
}

/// `medh5 index build FILE... [--max-coords N] [--occupancy F] [--seed S]
/// [--workers N] [--json]`.
#[derive(Args)]
pub(crate) struct IndexBuild {
    /// The samples to index
    #[arg(value_name = "FILE")]
    pub(crate) files: Vec<String>,
    /// Coordinates kept per class at most
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) max_coords: Option<String>,
    /// The occupancy grid's factor
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub(crate) occupancy: Option<String>,
    /// The seed of the coordinate subsample
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub(crate) seed: Option<String>,
    /// Accepted for the reference's sake (checked, no effect)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) workers: Option<String>,
    /// JSON output
    #[arg(long)]
    pub(crate) json: bool,
}

impl IndexBuild {
    /// The arguments `purehdf_medh5::index::cli::parse` reads.
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(&["build".to_string()])
            .pos(&self.files)
            .opt("--max-coords", &self.max_coords)
            .opt("--occupancy", &self.occupancy)
            .opt("--seed", &self.seed)
            .opt("--workers", &self.workers)
            .flag("--json", self.json)
            .done()
    }
}

/// `medh5 bench-op OP [FILE] [flags]`: the flags of every operation (an
/// operation refuses those it does not take).
#[derive(Args)]
pub(crate) struct BenchOp {
    /// The operation
    #[arg(value_name = "OP")]
    pub(crate) op: Option<String>,
    /// The file it works on
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<String>,
    /// Timed repetitions
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) repeats: Option<String>,
    /// Untimed repetitions first
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) warmup: Option<String>,
    /// The image .npy (write)
    #[arg(long, value_name = "NPY", allow_hyphen_values = true)]
    pub(crate) image: Option<String>,
    /// The label .npy (write)
    #[arg(long, value_name = "NPY", allow_hyphen_values = true)]
    pub(crate) label: Option<String>,
    /// The codec profile (write)
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub(crate) profile: Option<String>,
    /// The file to write
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub(crate) out: Option<String>,
    /// The patch size the chunks are shaped for (write)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) patch_hint: Option<String>,
    /// The sample id (write)
    #[arg(long, value_name = "ID", allow_hyphen_values = true)]
    pub(crate) sample_id: Option<String>,
    /// What to read: image or label
    #[arg(long, value_name = "WHAT", allow_hyphen_values = true)]
    pub(crate) what: Option<String>,
    /// The patch edge
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) size: Option<String>,
    /// The patch positions file
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub(crate) positions: Option<String>,
    /// Verify only this object (repeatable)
    #[arg(long, value_name = "OBJ", allow_hyphen_values = true)]
    pub(crate) partial: Vec<String>,
    /// Reopen the file for every repetition
    #[arg(long)]
    pub(crate) fresh: bool,
    /// Draws (draw)
    #[arg(long = "n", value_name = "N", allow_hyphen_values = true)]
    pub(crate) n: Option<String>,
    /// The draw seed (draw)
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub(crate) seed: Option<String>,
    /// Read the image and label patch of each draw too (draw)
    #[arg(long)]
    pub(crate) read: bool,
    /// The draw strategy (draw)
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub(crate) strategy: Option<String>,
}

impl BenchOp {
    /// The arguments `purehdf_medh5::bench::Args::parse` reads (`draw`:
    /// `bench_draw` reads them after the operation).
    pub(crate) fn argv(&self) -> Vec<String> {
        Argv::default()
            .pos(self.op.iter().chain(&self.file))
            .opt("--repeats", &self.repeats)
            .opt("--warmup", &self.warmup)
            .opt("--image", &self.image)
            .opt("--label", &self.label)
            .opt("--profile", &self.profile)
            .opt("--out", &self.out)
            .opt("--patch-hint", &self.patch_hint)
            .opt("--sample-id", &self.sample_id)
            .opt("--what", &self.what)
            .opt("--size", &self.size)
            .opt("--positions", &self.positions)
            .multi("--partial", &self.partial)
            .flag("--fresh", self.fresh)
            .opt("--n", &self.n)
            .opt("--seed", &self.seed)
            .flag("--read", self.read)
            .opt("--strategy", &self.strategy)
            .done()
    }
}

/// `medh5 completions SHELL`.
#[derive(Args)]
pub(crate) struct Completions {
    /// The shell
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// The whole `medh5` command: the global `--threads`, and the `--workers`
/// of recompress, pack and unpack (taken out of the arguments before clap
/// parses them, as `--threads` is).
pub(crate) fn command() -> clap::Command {
    let workers = || {
        Arg::new("workers")
            .long("workers")
            .value_name("N")
            .help("The thread count (0 and 1: one) unless --threads is given")
    };
    with_endpoint(with_threads(Cli::command()))
        .mut_subcommand("recompress", |c| c.arg(workers()))
        .mut_subcommand("pack", |c| c.arg(workers()))
        .mut_subcommand("unpack", |c| c.arg(workers()))
}
