//! `h5 tail`: follow a dataset as a SWMR writer (libhdf5's or ours) appends
//! to it, printing each new row (the slab at one index of the first
//! dimension) as it appears.
//!
//! ```text
//! h5 tail FILE DSET [--interval MS] [--json] [--count N] [--last N]
//! ```
//! The file is opened as a SWMR reader ([`purehdf::File::open_swmr`]) and the
//! dataset refreshed every `--interval` milliseconds (default 200). First
//! the last `--last` rows already there are printed (default 10), then each
//! new one. Plain output is `ROW: v v v ...`; `--json` prints one object a
//! line, `{"row": ROW, "values": [...]}` (a row's values flattened in C
//! order). The command runs until interrupted, or until it printed
//! `--count` rows. Numeric datasets only.

use std::io::Write;
use std::time::Duration;

use purehdf::low_level::swmr::retry;
use purehdf::{Datatype, Error, File, Result};

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}

const USAGE: &str = "usage: h5 tail FILE DSET [--interval MS] [--json] [--count N] [--last N]";

/// What `h5 tail` was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TailOptions {
    /// Time between refreshes.
    pub interval: Duration,
    /// One JSON object a line instead of text.
    pub json: bool,
    /// Stop after printing this many rows.
    pub count: Option<u64>,
    /// Rows already present printed first.
    pub last: u64,
}

impl Default for TailOptions {
    fn default() -> Self {
        TailOptions {
            interval: Duration::from_millis(200),
            json: false,
            count: None,
            last: 10,
        }
    }
}

fn number(flag: &str, v: Option<&String>) -> Result<u64> {
    v.and_then(|s| s.parse().ok())
        .ok_or_else(|| bad(format!("{flag} needs a number\n{USAGE}")))
}

/// Parse `FILE DSET [options]`.
pub fn parse(args: &[String]) -> Result<(String, String, TailOptions)> {
    let mut pos = Vec::new();
    let mut o = TailOptions::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--interval" => o.interval = Duration::from_millis(number(a, it.next())?),
            "--count" => o.count = Some(number(a, it.next())?),
            "--last" => o.last = number(a, it.next())?,
            "--json" => o.json = true,
            s if s.starts_with("--") => return Err(bad(format!("unknown option {s}\n{USAGE}"))),
            _ => pos.push(a.clone()),
        }
    }
    match <[String; 2]>::try_from(pos) {
        Ok([file, dset]) => Ok((file, dset, o)),
        Err(_) => Err(bad(USAGE)),
    }
}

/// Print row `row` (`values`, a whole row) to `out`.
fn print_row(
    out: &mut dyn Write,
    row: u64,
    values: &[f64],
    integer: bool,
    json: bool,
) -> Result<()> {
    let io = |e| Error::io("h5 tail: output", e);
    let text: Vec<String> = values
        .iter()
        .map(|v| {
            if integer {
                format!("{}", *v as i64)
            } else if json && !v.is_finite() {
                "null".to_string()
            } else {
                format!("{v:?}")
            }
        })
        .collect();
    if json {
        writeln!(out, "{{\"row\": {row}, \"values\": [{}]}}", text.join(", ")).map_err(io)
    } else {
        writeln!(out, "{row}: {}", text.join(" ")).map_err(io)
    }
}

/// Follow dataset `dset` of `path`, printing to `out` as [`TailOptions`]
/// say; returns the number of rows printed (when `count` stops it).
pub fn follow(path: &str, dset: &str, o: &TailOptions, out: &mut dyn Write) -> Result<u64> {
    let file = File::open_swmr(path)?;
    let mut ds = retry(|| file.root()?.dataset(dset))?;
    if ds.shape().is_empty() {
        return Err(bad(format!("{dset} is a scalar: nothing to follow")));
    }
    let integer = match ds.dtype() {
        Datatype::Integer { size, .. } if *size <= 8 => true,
        Datatype::Float { .. } => false,
        other => return Err(bad(format!("{dset}: cannot print a {other:?} dataset"))),
    };
    let mut next = ds.shape()[0].saturating_sub(o.last);
    let mut printed = 0u64;
    loop {
        let (to, values) = retry(|| {
            ds.refresh()?;
            let to = ds.shape()[0];
            if to <= next {
                return Ok((to, Vec::new()));
            }
            let to = o.count.map_or(to, |c| to.min(next + (c - printed)));
            Ok((to, ds.read_slice::<f64>(&purehdf::s![next..to])?))
        })?;
        if to > next {
            let per = values.len() / usize::try_from(to - next).unwrap_or(1).max(1);
            for (k, row) in values.chunks(per.max(1)).enumerate() {
                print_row(out, next + k as u64, row, integer, o.json)?;
            }
            out.flush().map_err(|e| Error::io("h5 tail: output", e))?;
            printed += to - next;
            next = to;
        }
        if o.count.is_some_and(|c| printed >= c) {
            return Ok(printed);
        }
        std::thread::sleep(o.interval);
    }
}

/// `h5 tail` with its arguments; the exit code.
pub fn run(args: &[String]) -> u8 {
    let (path, dset, o) = match parse(args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("h5 tail: {e}");
            return 2;
        }
    };
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match follow(&path, &dset, &o, &mut lock) {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("h5 tail: {path}: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let a: Vec<String> = ["f.h5", "/x", "--json", "--count", "3", "--interval", "5"]
            .map(String::from)
            .to_vec();
        let (f, d, o) = parse(&a).unwrap();
        assert_eq!((f.as_str(), d.as_str()), ("f.h5", "/x"));
        assert!(o.json);
        assert_eq!(o.count, Some(3));
        assert_eq!(o.interval, Duration::from_millis(5));
        assert!(parse(&a[..1]).is_err());
        assert!(parse(&["a".into(), "b".into(), "--count".into()]).is_err());
    }

    #[test]
    fn rows_print_as_text_and_json() {
        let mut out = Vec::new();
        print_row(&mut out, 4, &[1.0, -2.0], true, false).unwrap();
        print_row(&mut out, 5, &[0.5, f64::NAN], false, true).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "4: 1 -2\n{\"row\": 5, \"values\": [0.5, null]}\n"
        );
    }
}
