//! `medh5 index build PATH… [--max-coords N] [--occupancy F] [--seed S]
//! [--workers N] [--threads N] [--json]` (`docs/medh5-format.md`
//! §10, Appendix A): text `<path>: built index for a, b` (or `nothing to
//! index: …`), JSON `{path: [ids] | {path, ok: false, error}}`; exit 0, 1 when
//! any file failed, 2 on a usage error.

use std::path::Path;

use super::build::{amend_index, Built, Targets};
use super::IndexOptions;

/// Parsed `index build` arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildArgs {
    /// The sample files to index, as given (in order).
    pub paths: Vec<String>,
    /// `--max-coords`, `--occupancy` and `--seed`; defaults otherwise.
    /// (`--workers`/`--threads` are checked and ignored.)
    pub opts: IndexOptions,
    /// `--json`: print the JSON object instead of text lines.
    pub json: bool,
}

fn value<'a>(it: &mut std::slice::Iter<'a, String>, flag: &str) -> Result<&'a String, String> {
    it.next().ok_or_else(|| format!("{flag} needs a value"))
}

/// Parse the arguments after `index`.
pub fn parse(args: &[String]) -> Result<BuildArgs, String> {
    let mut it = args.iter();
    match it.next().map(String::as_str) {
        Some("build") => {}
        Some(other) => return Err(format!("unknown index command {other:?} (only `build`)")),
        None => return Err("index needs a command: build".into()),
    }
    let mut a = BuildArgs {
        paths: Vec::new(),
        opts: IndexOptions::default(),
        json: false,
    };
    while let Some(s) = it.next() {
        match s.as_str() {
            "--json" => a.json = true,
            "--max-coords" => {
                let v = value(&mut it, s)?;
                a.opts.max_coords = match v.parse::<i64>() {
                    Ok(n) if n >= 1 => n as u64,
                    _ => {
                        return Err(format!(
                            "invalid value '{v}' for '--max-coords': not in 1..9223372036854775807"
                        ))
                    }
                };
            }
            "--occupancy" => {
                let v = value(&mut it, s)?;
                a.opts.occupancy = v
                    .parse::<u32>()
                    .map_err(|_| format!("invalid value '{v}' for '--occupancy'"))?
                    .into();
            }
            "--seed" => {
                let v = value(&mut it, s)?;
                a.opts.seed = v
                    .parse::<i64>()
                    .map_err(|_| format!("invalid value '{v}' for '--seed'"))?
                    as u64;
            }
            "--workers" | "--threads" => {
                let v = value(&mut it, s)?;
                v.parse::<u32>()
                    .map_err(|_| format!("invalid value '{v}' for '{s}'"))?;
            }
            f if f.starts_with("--") => return Err(format!("unknown option {f}")),
            p => a.paths.push(p.to_string()),
        }
    }
    if a.paths.is_empty() {
        return Err("index build needs at least one file".into());
    }
    Ok(a)
}

/// The generator recorded by our amends.
pub fn generator() -> String {
    format!("purehdf {}", env!("CARGO_PKG_VERSION"))
}

/// Run `index build`; returns the exit code (0, 1) after printing.
pub fn run(a: &BuildArgs) -> u8 {
    let mut code = 0;
    let mut out = serde_json::Map::new();
    for p in &a.paths {
        match amend_index(Path::new(p), p, &Targets::All(a.opts), &generator()) {
            Ok(Built { entries, .. }) => {
                if !a.json {
                    if entries.is_empty() {
                        println!("{p}: nothing to index: no voxel annotation with classes");
                    } else {
                        println!("{p}: built index for {}", entries.join(", "));
                    }
                }
                out.insert(p.clone(), serde_json::json!(entries));
            }
            Err(e) => {
                code = 1;
                eprintln!("medh5: {e}");
                out.insert(
                    p.clone(),
                    serde_json::json!({"path": p, "ok": false, "error": e.to_string()}),
                );
            }
        }
    }
    if a.json {
        println!("{}", json_text(&serde_json::Value::Object(out)));
    }
    code
}

/// JSON as the reference prints it: 2-space indent, non-ASCII escaped.
pub fn json_text(v: &serde_json::Value) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for u in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}
