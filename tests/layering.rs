//! Imports run one way, downward (`shared/design/LAYOUT.md`). This reads every
//! `src/**/*.rs`, finds each path into the crate (`crate::x`, `use
//! crate::{x, y}`, `super::` chains that climb to the crate root) outside
//! comments and string literals, and fails on any that runs upward.
//!
//! Floors, top to bottom: `bin` → `tools` → `dump` → `medh5` → `hdf5fmt` →
//! `filters`. A floor may use its own floor and any floor below it. The leaf
//! utility modules (`error`, `threads`, `npy`, `test_support`) may be used
//! from anywhere, and use only `filters` and each other. Names the crate root
//! re-exports (`crate::File`, `crate::Error`, the `s!` macro) count as the
//! floor they come from, read from `src/lib.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const FLOORS: [&str; 6] = ["filters", "hdf5fmt", "medh5", "dump", "tools", "bin"];
const LEAVES: [&str; 4] = ["error", "threads", "npy", "test_support"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Floor(usize),
    Leaf,
}

fn place_of_module(name: &str) -> Option<Place> {
    if let Some(i) = FLOORS.iter().position(|f| *f == name) {
        return Some(Place::Floor(i));
    }
    LEAVES.contains(&name).then_some(Place::Leaf)
}

fn allowed(from: Place, to: Place) -> bool {
    match (from, to) {
        (_, Place::Leaf) => true,
        (Place::Leaf, Place::Floor(t)) => t == 0,
        (Place::Floor(f), Place::Floor(t)) => t <= f,
    }
}

/// The source with comments replaced by spaces and string / char literals
/// emptied (newlines kept, so line numbers stay).
fn strip(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !(i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_'))
        {
            // Raw string r"..." / r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('"');
            j += 1;
            'raw: while j < b.len() {
                if b[j] == '"' && (1..=hashes).all(|k| b.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break 'raw;
                }
                out.push(blank(b[j]));
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if next == Some('\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != '\'' && j < i + 12 {
                    j += 1;
                }
                out.push_str("' '");
                i = j + 1;
            } else if b.get(i + 2) == Some(&'\'') {
                out.push_str("' '");
                i += 3;
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

#[derive(Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Other(char),
}

fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let b: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphabetic() || c == '_' {
            let s = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push((Tok::Ident(b[s..i].iter().collect()), line));
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            out.push((Tok::PathSep, line));
            i += 2;
        } else if c == '{' {
            out.push((Tok::Open, line));
            i += 1;
        } else if c == '}' {
            out.push((Tok::Close, line));
            i += 1;
        } else {
            out.push((Tok::Other(c), line));
            i += 1;
        }
    }
    out
}

/// One path into the crate: the first segment below the crate root, its line.
#[derive(Debug)]
struct Reference {
    top: String,
    line: usize,
}

/// The crate-root segments `text` names. `module` is the file's module path
/// (`["medh5", "fix"]` for `src/medh5/fix/mod.rs`), for `super::` chains.
fn references(text: &str, module: &[String]) -> Vec<Reference> {
    let toks = tokens(&strip(text));
    let mut out = Vec::new();
    // Inline `mod name {` blocks open around the current token: (name, brace depth).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let ident = |k: usize| match toks.get(k) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let sep = |k: usize| matches!(toks.get(k), Some((Tok::PathSep, _)));
    let mut k = 0;
    while k < toks.len() {
        let line = toks[k].1;
        match &toks[k].0 {
            Tok::Open => depth += 1,
            Tok::Close => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(s) if s == "mod" => {
                if let (Some(name), Some((Tok::Open, _))) = (ident(k + 1), toks.get(k + 2)) {
                    inline.push((name.to_string(), depth + 1));
                }
            }
            Tok::Ident(s) if s == "crate" && sep(k + 1) => {
                // `$crate::` in a macro body names the defining crate, like `crate::`.
                match toks.get(k + 2) {
                    Some((Tok::Ident(top), _)) => out.push(Reference {
                        top: top.clone(),
                        line,
                    }),
                    Some((Tok::Open, _)) => {
                        // `crate::{a::b, c, d::{e, f}}`: the first segment of each item.
                        let mut j = k + 3;
                        let mut level = 1usize;
                        let mut expect = true;
                        while j < toks.len() && level > 0 {
                            match &toks[j].0 {
                                Tok::Open => level += 1,
                                Tok::Close => level -= 1,
                                Tok::Other(',') if level == 1 => expect = true,
                                Tok::Ident(top) if level == 1 && expect => {
                                    out.push(Reference {
                                        top: top.clone(),
                                        line: toks[j].1,
                                    });
                                    expect = false;
                                }
                                _ => {}
                            }
                            j += 1;
                        }
                    }
                    _ => {}
                }
            }
            Tok::Ident(s)
                if s == "super"
                    && !(k >= 1 && sep(k - 1))
                    && !matches!(toks.get(k.wrapping_sub(1)), Some((Tok::Other('$'), _))) =>
            {
                let mut climbs = 0;
                let mut j = k;
                while ident(j) == Some("super") && sep(j + 1) {
                    climbs += 1;
                    j += 2;
                }
                if climbs == 0 {
                    // `pub(super)`, `super` alone: no path.
                    k += 1;
                    continue;
                }
                let here = module.len() + inline.len();
                if climbs >= here {
                    // At or past the crate root: the next segment is a top module
                    // (or, for `super::*` / `{`, everything at the root).
                    let top = ident(j).unwrap_or("*").to_string();
                    out.push(Reference { top, line });
                }
                k = j;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// Where each name the crate root re-exports comes from (`File` →
/// `hdf5fmt`), and the `#[macro_export]` macros by defining module.
fn root_names(src: &Path) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("read src/lib.rs");
    let lib = strip(&lib);
    for stmt in lib.split(';') {
        let stmt = stmt.trim();
        let Some(rest) = stmt.strip_prefix("pub use ") else {
            continue;
        };
        let module = rest.split("::").next().unwrap_or("").trim().to_string();
        let tail = rest.rsplit("::").next().unwrap_or("");
        let tail = if let Some(open) = rest.find('{') {
            &rest[open..]
        } else {
            tail
        };
        for name in tail.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !name.is_empty() && name != "self" {
                names.insert(name.to_string(), module.clone());
            }
        }
    }
    for (path, module) in rust_files(src) {
        let text = std::fs::read_to_string(&path).expect("read source");
        let stripped = strip(&text);
        let mut rest = stripped.as_str();
        while let Some(at) = rest.find("#[macro_export]") {
            rest = &rest[at + 15..];
            if let Some(m) = rest.find("macro_rules!") {
                let name: String = rest[m + 12..]
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if let Some(top) = module.first() {
                    names.insert(name, top.clone());
                }
            }
        }
    }
    names
}

/// Every `.rs` file under `src` with its module path (`src/bin/*` is `bin`).
fn rust_files(src: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .expect("read_dir")
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(src).expect("under src");
                let mut module: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                let last = module.pop().unwrap_or_default();
                let stem = last.trim_end_matches(".rs");
                if stem != "mod" && stem != "lib" {
                    module.push(stem.to_string());
                }
                out.push((p, module));
            }
        }
    }
    out
}

/// Where a source file sits: `None` for the crate root (`lib.rs`, the facade).
fn place_of_file(module: &[String]) -> Option<Place> {
    place_of_module(module.first()?)
}

/// Every upward reference in `text` (a file with module path `module`), as
/// `file:line: floor uses target` lines. `names` maps root re-exports.
fn violations(
    file: &str,
    text: &str,
    module: &[String],
    names: &BTreeMap<String, String>,
) -> (Vec<String>, usize) {
    let Some(from) = place_of_file(module) else {
        return (Vec::new(), 0);
    };
    let refs = references(text, module);
    let mut bad = Vec::new();
    for r in &refs {
        let top = names.get(&r.top).map_or(r.top.as_str(), String::as_str);
        let Some(to) = place_of_module(top) else {
            bad.push(format!(
                "{file}:{}: crate::{} is not a known module or root re-export",
                r.line, r.top
            ));
            continue;
        };
        if !allowed(from, to) {
            bad.push(format!(
                "{file}:{}: {} uses crate::{} ({top}), which is above it",
                r.line, module[0], r.top
            ));
        }
    }
    (bad, refs.len())
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_import_runs_upward() {
    let src = src_dir();
    let names = root_names(&src);
    assert_eq!(names.get("File").map(String::as_str), Some("hdf5fmt"));
    assert_eq!(names.get("Error").map(String::as_str), Some("error"));
    assert_eq!(names.get("s").map(String::as_str), Some("hdf5fmt"));
    let files = rust_files(&src);
    let mut bad = Vec::new();
    let mut seen = 0;
    let mut per_floor = BTreeMap::<String, usize>::new();
    for (path, module) in &files {
        let text = std::fs::read_to_string(path).expect("read source");
        let rel = path
            .strip_prefix(&src)
            .expect("under src")
            .display()
            .to_string();
        let (v, n) = violations(&format!("src/{rel}"), &text, module, &names);
        bad.extend(v);
        seen += n;
        if let Some(top) = module.first() {
            *per_floor.entry(top.clone()).or_default() += n;
        }
    }
    // Not vacuous: the tree was found and its imports were read.
    assert!(files.len() > 100, "only {} source files found", files.len());
    assert!(seen > 500, "only {seen} crate paths found");
    for floor in ["hdf5fmt", "medh5", "dump", "tools", "filters"] {
        assert!(
            per_floor.get(floor).copied().unwrap_or(0) > 10,
            "{floor}: {per_floor:?}"
        );
    }
    assert!(
        bad.is_empty(),
        "{} upward imports:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

fn module(path: &str) -> Vec<String> {
    path.split('/').map(str::to_string).collect()
}

fn check(path: &str, text: &str) -> Vec<String> {
    violations(path, text, &module(path), &root_names(&src_dir())).0
}

#[test]
fn an_injected_upward_import_is_caught() {
    // Each line alone, in a file of the given floor, must be refused.
    let upward = [
        ("filters/blosc2", "use crate::hdf5fmt::limits::MAX_DECODED;"),
        (
            "filters/nbit",
            "const C: usize = crate::hdf5fmt::limits::MAX_DATATYPE_DEPTH;",
        ),
        ("hdf5fmt/file", "use crate::medh5::sample::SampleFile;"),
        ("hdf5fmt/file", "use crate::{error::Result, tools::copy};"),
        (
            "hdf5fmt/file",
            "use crate::{\n    error::Result,\n    dump::walk,\n};",
        ),
        ("medh5/fix", "fn f() { crate::tools::copy::run(); }"),
        ("medh5/sample", "use crate::dump::canonical;"),
        ("dump/walk", "use crate::tools::cat;"),
        ("error", "use crate::hdf5fmt::cursor::Cursor;"),
        ("error", "use crate::File;"),
        ("npy", "use crate::medh5::model::Sample;"),
        ("filters/deflate", "use crate::Dataset;"),
        ("filters/deflate", "fn f() { let _ = crate::s![..]; }"),
        ("filters/deflate", "use super::super::hdf5fmt::limits;"),
        (
            "filters/zstd_decode/fse",
            "mod tests { use super::super::super::super::medh5::x; }",
        ),
        ("hdf5fmt/file", "use crate::nonexistent::Thing;"),
    ];
    for (path, line) in upward {
        let v = check(path, line);
        assert_eq!(v.len(), 1, "{path}: {line:?} gave {v:?}");
    }
    // And these are fine: downward, same floor, leaves, comments and strings.
    let fine = [
        ("hdf5fmt/file", "use crate::filters::deflate;"),
        (
            "hdf5fmt/file",
            "use crate::{error::Result, filters, threads};",
        ),
        (
            "medh5/sample",
            "use crate::{File, Error, hdf5fmt::dataset::Dataset};",
        ),
        ("tools/copy", "use crate::{medh5::sample, dump::walk, npy};"),
        ("error", "use crate::filters::limits;"),
        ("threads", "use crate::error::{Error, Result};"),
        (
            "filters/deflate",
            "// see crate::hdf5fmt::limits\n/// [`crate::medh5`]\nfn f() {}",
        ),
        (
            "filters/deflate",
            "/* crate::tools */ const S: &str = \"crate::medh5::x\";",
        ),
        (
            "filters/deflate",
            "const R: &str = r#\"crate::dump\"#; const C: char = '\"';",
        ),
        (
            "filters/deflate",
            "fn f<'a>(x: &'a [u8]) -> &'a [u8] { x } // crate::tools",
        ),
        (
            "filters/zstd_decode/fse",
            "mod tests { use super::super::sequences::LL; }",
        ),
        (
            "medh5/fix",
            "mod tests { fn f() { super::super::verify::id(); } }",
        ),
        ("bin/medh5", "use crate::tools::copy;"),
    ];
    for (path, line) in fine {
        let v = check(path, line);
        assert!(v.is_empty(), "{path}: {line:?} gave {v:?}");
    }
}
