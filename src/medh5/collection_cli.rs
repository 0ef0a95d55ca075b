//! The collection commands of the `medh5` CLI (`docs/medh5-format.md` §7,
//! §10): `pack`, `unpack`, `ls`, and `verify`/`info`/`tree` with `--key`
//! (or on a collection at all). Argument parsing, text and `--json` shapes
//! and exit codes as the reference CLI has them; the work is in
//! [`super::collection`].

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::collection::{ls, ls_text, needs_key, open_member, pack, unpack};
use super::validate::collection::is_collection;
use crate::error::Error;
use purehdf::low_level::file::File;

struct Args {
    positional: Vec<String>,
    out: Option<String>,
    keys: Vec<String>,
    json: bool,
    partial: Vec<String>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        positional: Vec::new(),
        out: None,
        keys: Vec::new(),
        json: false,
        partial: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--json" => a.json = true,
            "-o" | "--out" => a.out = Some(it.next().ok_or("-o needs a path")?.clone()),
            "--key" => a.keys.push(it.next().ok_or("--key needs a value")?.clone()),
            "--partial" => a
                .partial
                .push(it.next().ok_or("--partial needs an object path")?.clone()),
            "--workers" | "--threads" => {
                it.next()
                    .and_then(|n| n.parse::<usize>().ok())
                    .ok_or("--workers needs a number")?;
            }
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            s => a.positional.push(s.to_string()),
        }
    }
    Ok(a)
}

/// Whether `verify`/`info`/`tree` with these arguments are this module's:
/// `--key` given, or a named file is a collection.
pub fn handles(args: &[String]) -> bool {
    if args.iter().any(|a| a == "--key") {
        return true;
    }
    args.iter().filter(|a| !a.starts_with('-')).any(|a| {
        let path = Path::new(a);
        super::self_contained::open_hdf5(path).is_ok_and(|f| {
            let yes = is_collection(&f);
            if !yes {
                // the sample command that follows opens it again
                super::self_contained::hand_over(path, &f);
            }
            yes
        })
    })
}

/// Run `cmd` (pack, unpack, ls, verify, info, tree); returns the exit code.
pub fn run(cmd: &str, args: &[String], print_json: &dyn Fn(&Value)) -> u8 {
    let a = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("medh5: {e}");
            return 2;
        }
    };
    match cmd {
        "pack" => {
            let Some(out) = &a.out else {
                eprintln!("medh5: pack needs -o OUT");
                return 2;
            };
            if a.positional.is_empty() {
                eprintln!("medh5: pack needs at least one source");
                return 2;
            }
            let srcs: Vec<PathBuf> = a.positional.iter().map(PathBuf::from).collect();
            match pack_to(&srcs, out, &a.keys) {
                Ok(p) if a.json => {
                    print_json(&p.to_json());
                    0
                }
                Ok(p) => {
                    print!("{}", p.to_text());
                    0
                }
                Err(e) => {
                    eprintln!("medh5: {e}");
                    1
                }
            }
        }
        "unpack" => {
            let (Some(out), [shard]) = (&a.out, a.positional.as_slice()) else {
                eprintln!("medh5: usage: medh5 unpack SHARD -o DIR [--key K]... [--json]");
                return 2;
            };
            match unpack(Path::new(shard), Path::new(out), &a.keys) {
                Ok(list) if a.json => {
                    print_json(&Value::from(list));
                    0
                }
                Ok(list) => {
                    for p in list {
                        println!("{p}");
                    }
                    0
                }
                Err(e) => {
                    eprintln!("medh5: {e}");
                    1
                }
            }
        }
        "ls" => {
            let [shard] = a.positional.as_slice() else {
                eprintln!("medh5: usage: medh5 ls SHARD [--json]");
                return 2;
            };
            match ls(Path::new(shard), shard) {
                Ok(v) if a.json => {
                    print_json(&v);
                    0
                }
                Ok(v) => {
                    print!("{}", ls_text(&v));
                    0
                }
                Err(e) => {
                    eprintln!("medh5: {e}");
                    1
                }
            }
        }
        "verify" => verify(&a, print_json),
        "info" | "tree" => keyed_info(cmd, &a, print_json),
        other => {
            eprintln!("medh5: unknown command {other}");
            2
        }
    }
}

/// `pack` to `out`, a path or (with the `remote` feature) an object URL:
/// packed locally, then uploaded whole (multipart) and reported under the URL.
fn pack_to(
    srcs: &[PathBuf],
    out: &str,
    keys: &[String],
) -> Result<super::collection::Packed, Error> {
    #[cfg(feature = "remote")]
    {
        use purehdf::low_level::remote::{default_options, upload::write_then_upload};
        let mut p = write_then_upload(out, &default_options(), |local| pack(srcs, local, keys))?;
        p.out = out.to_string();
        Ok(p)
    }
    #[cfg(not(feature = "remote"))]
    {
        pack(srcs, Path::new(out), keys)
    }
}

/// The member a keyed command addresses, or the error it prints.
fn member(path: &str, key: Option<&String>) -> Result<(File, String), String> {
    let f = super::self_contained::open_hdf5(path.as_ref()).map_err(|e| format!("{path}: {e}"))?;
    super::self_contained::check(&f, path).map_err(|e| e.to_string())?;
    if !is_collection(&f) {
        return match key {
            Some(_) => Err(format!(
                "{path} is a sample file, not a collection; drop --key"
            )),
            None => Ok((f, path.to_string())),
        };
    }
    match key {
        None => Err(needs_key(&f, path).unwrap_or_else(|e| match e {
            Error::Refused(m) => m,
            e => format!("{path}: {e}"),
        })),
        Some(k) => open_member(&f, k)
            .map(|m| (m, path.to_string()))
            .map_err(|e| format!("{path}: {e}")),
    }
}

fn verify(a: &Args, print_json: &dyn Fn(&Value)) -> u8 {
    if a.positional.is_empty() {
        eprintln!("medh5: verify needs at least one file");
        return 2;
    }
    let partial = (!a.partial.is_empty()).then_some(a.partial.as_slice());
    let mut entries = Vec::new();
    let mut ok = true;
    for p in &a.positional {
        let res = member(p, a.keys.first()).and_then(|(f, shown)| {
            super::verify::verify_file(&f, &shown, partial).map_err(|e| format!("{p}: {e}"))
        });
        match res {
            Ok(r) => {
                ok &= r.ok;
                if a.json {
                    entries.push(r.to_json());
                } else {
                    print!("{}", r.to_text(p));
                }
            }
            Err(e) => {
                ok = false;
                eprintln!("medh5: {e}");
                if a.json {
                    entries.push(serde_json::json!({"path": p, "ok": false, "error": e}));
                }
            }
        }
    }
    if a.json && !entries.is_empty() {
        print_json(&Value::Array(entries));
    }
    u8::from(!ok)
}

fn keyed_info(cmd: &str, a: &Args, print_json: &dyn Fn(&Value)) -> u8 {
    let [path] = a.positional.as_slice() else {
        eprintln!("medh5: {cmd} takes one path");
        return 2;
    };
    let Some(key) = a.keys.first() else {
        // a collection without --key: info describes the collection, tree needs a key
        if cmd == "tree" {
            return match super::info::tree(Path::new(path), path) {
                Ok(t) if a.json => {
                    print_json(&t.to_json());
                    0
                }
                Ok(t) => {
                    print!("{}", t.to_text());
                    0
                }
                Err(e) => {
                    eprintln!("medh5: {path}: {e}");
                    1
                }
            };
        }
        return match ls(Path::new(path), path) {
            Ok(v) if a.json => {
                print_json(&v);
                0
            }
            Ok(v) => {
                print!("{}", super::collection::info_text(&v));
                0
            }
            Err(e) => {
                eprintln!("medh5: {e}");
                1
            }
        };
    };
    let f = match member(path, Some(key)) {
        Ok((f, _)) => f,
        Err(e) => {
            eprintln!("medh5: {e}");
            return 1;
        }
    };
    let res = if cmd == "tree" {
        super::info::tree_file(&f, path).map(|t| (t.to_json(), t.to_text()))
    } else {
        // the JSON names the member `PATH::KEY`, the text the file
        super::info::info_file(&f, &format!("{path}::{key}")).and_then(|i| {
            let text = super::info::info_text(&f, &super::info::info_file(&f, path)?);
            Ok((i, text))
        })
    };
    match res {
        Ok((v, text)) => {
            if a.json {
                print_json(&v);
            } else {
                print!("{text}");
            }
            0
        }
        Err(e) => {
            eprintln!("medh5: {path}: {e}");
            1
        }
    }
}
