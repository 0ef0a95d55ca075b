//! What `h5` and `medh5` share on their command lines: parsing with clap
//! (help, typo suggestions, usage errors with exit 2), `completions`, and the
//! canonical argument list handed to an existing `run(&[String])` parser
//! once clap has accepted the line.

use std::process::ExitCode;

use clap::{Arg, Command, FromArgMatches};

/// `cmd` with the `--threads N` of both tools declared on it and on every
/// subcommand, for help and completions.
/// `purehdf_filters::threads::take_flag` takes it (anywhere on the line) out
/// of the arguments before clap sees them, so clap never matches it.
pub(crate) fn with_threads(cmd: Command) -> Command {
    cmd.arg(
        Arg::new("threads")
            .long("threads")
            .value_name("N")
            .help("Threads (default: MEDH5_THREADS, else every core; 1 = no thread pool)"),
    )
    .mut_subcommands(with_threads)
}

/// `cmd` with `--endpoint URL` declared on it and on every subcommand (an
/// S3-compatible server for `s3://` URLs), for help and completions;
/// [`take_endpoint`] takes it out of the arguments before clap sees them.
pub(crate) fn with_endpoint(cmd: Command) -> Command {
    cmd.arg(
        Arg::new("endpoint")
            .long("endpoint")
            .value_name("URL")
            .help("Endpoint of an S3-compatible server for s3:// URLs (default: AWS_ENDPOINT_URL)"),
    )
    .mut_subcommands(with_endpoint)
}

/// Take `--endpoint URL` (or `--endpoint=URL`, anywhere on the line) out of
/// `args` and make it the endpoint of remote opens and uploads.
pub(crate) fn take_endpoint(args: Vec<String>) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(args.len());
    let mut endpoint = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "--endpoint" {
            endpoint = Some(it.next().ok_or("--endpoint needs a URL")?);
        } else if let Some(v) = a.strip_prefix("--endpoint=") {
            endpoint = Some(v.to_string());
        } else {
            out.push(a);
        }
    }
    purehdf_cli::open::set_endpoint(endpoint.as_deref())?;
    Ok(out)
}

/// Parse `args` (without the program name) into `T` with `cmd`; on help,
/// `--version` or a usage error, print what clap prints (help on stdout,
/// errors with their suggestions on stderr) and return the exit code
/// (0 after help, 2 on a usage error).
pub(crate) fn parse<T: FromArgMatches>(mut cmd: Command, args: Vec<String>) -> Result<T, ExitCode> {
    let name = cmd.get_name().to_string();
    let report = |e: clap::Error| {
        let _ = e.print();
        ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
    };
    let matches = cmd
        .try_get_matches_from_mut(std::iter::once(name).chain(args))
        .map_err(report)?;
    T::from_arg_matches(&matches).map_err(|e| report(e.format(&mut cmd)))
}

/// Print the completion script of `cmd` for `shell` on stdout.
pub(crate) fn completions(mut cmd: Command, shell: clap_complete::Shell) -> ExitCode {
    let name = cmd.get_name().to_string();
    clap_complete::generate(shell, &mut cmd, name, &mut std::io::stdout());
    ExitCode::SUCCESS
}

/// A command line rebuilt from clap's typed values in the spelling the
/// existing parsers read (`--flag value`, repeated flags in order,
/// positionals first).
#[derive(Default)]
pub(crate) struct Argv(Vec<String>);

impl Argv {
    /// Positional arguments, in order.
    pub(crate) fn pos<'a>(mut self, values: impl IntoIterator<Item = &'a String>) -> Self {
        self.0.extend(values.into_iter().cloned());
        self
    }

    /// `flag value` when the option was given.
    pub(crate) fn opt(mut self, flag: &str, value: &Option<String>) -> Self {
        if let Some(v) = value {
            self.0.extend([flag.to_string(), v.clone()]);
        }
        self
    }

    /// `flag value` once per value of a repeated option.
    pub(crate) fn multi(mut self, flag: &str, values: &[String]) -> Self {
        for v in values {
            self.0.extend([flag.to_string(), v.clone()]);
        }
        self
    }

    /// `flag` when it is set.
    pub(crate) fn flag(mut self, flag: &str, on: bool) -> Self {
        if on {
            self.0.push(flag.to_string());
        }
        self
    }

    /// The arguments.
    pub(crate) fn done(self) -> Vec<String> {
        self.0
    }
}
