//! `--help` and `-h` on both tools and on every subcommand print the
//! options and exit 0; `completions SHELL` prints a script; a mistyped
//! subcommand or option is a usage error (exit 2) that suggests the right
//! spelling.

use std::process::{Command, Output};

const H5: &str = env!("CARGO_BIN_EXE_h5");
const MEDH5: &str = env!("CARGO_BIN_EXE_medh5");

/// Every `h5` subcommand and the options its help must name.
const H5_COMMANDS: &[(&str, &[&str])] = &[
    ("ls", &["-r", "--recursive", "--threads", "--help"]),
    ("dump", &["--json", "--threads", "--help"]),
    (
        "cat",
        &[
            "--slice",
            "--out",
            "-o",
            "--threads",
            "--fill-missing",
            "--vds-prefix",
            "--help",
        ],
    ),
    ("copy", &["--filter", "--threads", "--help"]),
    ("import", &["--chunks", "--filter", "--threads", "--help"]),
    (
        "recompress",
        &[
            "--filter",
            "--where",
            "--all",
            "--select",
            "--ndim",
            "--dtype",
            "--min-size",
            "--rechunk",
            "--layout",
            "--suffix",
            "--from",
            "--to",
            "--rewrite-vds",
            "--out",
            "--manifest",
            "--workers",
            "--dry-run",
            "--report",
            "--json",
            "--swap",
            "--undo",
            "--finalize",
            "--threads",
            "--help",
        ],
    ),
    (
        "compare",
        &[
            "--metric",
            "--slices",
            "--dataset",
            "--json",
            "--threads",
            "--help",
        ],
    ),
    ("verify", &["--json", "--threads", "--help"]),
    ("completions", &["--help"]),
];

/// Every `medh5` subcommand (`index build` as two words) and the options
/// its help must name.
const MEDH5_COMMANDS: &[(&str, &[&str])] = &[
    ("demo", &["--profile", "--json", "--threads", "--help"]),
    (
        "create",
        &["--from", "--profile", "--json", "--threads", "--help"],
    ),
    (
        "verify",
        &["--partial", "--key", "--json", "--threads", "--help"],
    ),
    (
        "fix",
        &[
            "--rewrite-digests",
            "--reason",
            "--by",
            "--rebuild-index",
            "--json",
            "--threads",
            "--help",
        ],
    ),
    ("info", &["--key", "--json", "--threads", "--help"]),
    ("tree", &["--key", "--json", "--threads", "--help"]),
    (
        "validate",
        &[
            "--level",
            "--profile",
            "--codes-revision",
            "--json",
            "--verbose",
            "--workers",
            "--threads",
            "--help",
        ],
    ),
    (
        "recompress",
        &[
            "--profile",
            "--rechunk",
            "--out",
            "-o",
            "--workers",
            "--json",
            "--threads",
            "--help",
        ],
    ),
    (
        "pack",
        &[
            "--out",
            "-o",
            "--key",
            "--workers",
            "--json",
            "--threads",
            "--help",
        ],
    ),
    (
        "unpack",
        &[
            "--out",
            "-o",
            "--key",
            "--workers",
            "--json",
            "--threads",
            "--help",
        ],
    ),
    ("ls", &["--json", "--threads", "--help"]),
    ("index", &["build", "--threads", "--help"]),
    (
        "index build",
        &[
            "--max-coords",
            "--occupancy",
            "--seed",
            "--workers",
            "--json",
            "--threads",
            "--help",
        ],
    ),
    (
        "bench-op",
        &[
            "--repeats",
            "--warmup",
            "--image",
            "--label",
            "--profile",
            "--out",
            "--patch-hint",
            "--sample-id",
            "--what",
            "--size",
            "--positions",
            "--partial",
            "--fresh",
            "--n",
            "--seed",
            "--read",
            "--strategy",
            "--threads",
            "--help",
        ],
    ),
    ("completions", &["--help"]),
];

fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .env_remove("MEDH5_THREADS")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Whether `help` names `option` as a word (not as a prefix of another).
fn names(help: &str, option: &str) -> bool {
    help.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
        .any(|w| w == option || w.split('=').next() == Some(option))
}

fn check_help(bin: &str, tool: &str, commands: &[(&str, &[&str])]) {
    for flag in ["--help", "-h"] {
        let top = run(bin, &[flag]);
        assert_eq!(top.status.code(), Some(0), "{tool} {flag}");
        let help = text(&top.stdout);
        for (cmd, _) in commands {
            let first = cmd.split(' ').next().unwrap();
            assert!(help.contains(first), "{tool} {flag} lacks {first}:\n{help}");
        }
        for (cmd, options) in commands {
            let mut args: Vec<&str> = cmd.split(' ').collect();
            args.push(flag);
            let out = run(bin, &args);
            let help = text(&out.stdout);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{tool} {cmd} {flag}: {}",
                text(&out.stderr)
            );
            assert!(help.contains("Usage:"), "{tool} {cmd} {flag}:\n{help}");
            for o in *options {
                assert!(names(&help, o), "{tool} {cmd} {flag} lacks {o}:\n{help}");
            }
        }
    }
    // `help CMD` too
    for (cmd, options) in commands {
        let mut args = vec!["help"];
        args.extend(cmd.split(' '));
        let out = run(bin, &args);
        assert_eq!(out.status.code(), Some(0), "{tool} help {cmd}");
        let help = text(&out.stdout);
        for o in *options {
            assert!(names(&help, o), "{tool} help {cmd} lacks {o}:\n{help}");
        }
    }
}

#[test]
fn h5_help_on_every_command() {
    check_help(H5, "h5", H5_COMMANDS);
}

#[test]
fn medh5_help_on_every_command() {
    check_help(MEDH5, "medh5", MEDH5_COMMANDS);
}

#[test]
fn versions() {
    for (bin, name) in [(H5, "h5"), (MEDH5, "medh5")] {
        let out = run(bin, &["--version"]);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            text(&out.stdout).trim(),
            format!("{name} (purehdf) {}", env!("CARGO_PKG_VERSION"))
        );
    }
}

#[test]
fn typos_are_usage_errors_with_a_suggestion() {
    let out = run(H5, &["dumb", "x.h5"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("'dump'"), "{err}");
    assert!(out.stdout.is_empty());

    let out = run(MEDH5, &["verfy", "x.medh5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("'verify'"),
        "{}",
        text(&out.stderr)
    );

    let out = run(H5, &["ls", "--recursiv", "x.h5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("'--recursive'"));

    let out = run(MEDH5, &["verify", "--jsn", "x.medh5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("'--json'"));

    // no command: the help, on stderr, as a usage error
    for bin in [H5, MEDH5] {
        let out = run(bin, &[]);
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        assert!(text(&out.stderr).contains("Usage:"));
    }
}

#[test]
fn completion_scripts() {
    for (bin, name) in [(H5, "h5"), (MEDH5, "medh5")] {
        for shell in ["bash", "zsh", "fish"] {
            let out = run(bin, &["completions", shell]);
            assert_eq!(out.status.code(), Some(0), "{name} completions {shell}");
            let script = text(&out.stdout);
            assert!(script.contains(name), "{name} {shell}");
            assert!(script.contains("recompress"), "{name} {shell}");
        }
        let out = run(bin, &["completions", "tcsh"]);
        assert_eq!(out.status.code(), Some(2));
    }
}
