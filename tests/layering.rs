//! Imports run one way, downward. The crates hold the floors themselves —
//! `purehdf-cli` → `purehdf-medh5` → `purehdf` → `purehdf-filters`, and a
//! crate cannot name one it does not depend on — so this test checks only
//! what the compiler cannot say:
//!
//! - each crate's manifest depends on exactly the crates below it (a new
//!   upward dependency would otherwise compile);
//! - inside `purehdf-cli`, `dump` stays below `tools` and neither reaches
//!   the binaries;
//! - no source file hides an item from the docs with `#[doc(hidden)]`: what
//!   another crate needs is documented public API (`purehdf::low_level`
//!   for the format), never a hidden back door.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The purehdf crates named in a manifest's dependency tables (normal and
/// target-specific; dev-dependencies are allowed to reach anything).
fn purehdf_deps(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut out = Vec::new();
    let mut in_deps = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_deps = t == "[dependencies]"
                || (t.starts_with("[target.") && t.ends_with(".dependencies]"))
                || t.starts_with("[dependencies.");
            if let Some(name) = t.strip_prefix("[dependencies.") {
                out.push(name.trim_end_matches(']').to_string());
            }
            continue;
        }
        if !in_deps {
            continue;
        }
        let name = t.split(['=', '.', ' ']).next().unwrap_or("");
        if name.starts_with("purehdf") {
            out.push(name.to_string());
        }
    }
    out.sort();
    out
}

#[test]
fn each_crate_depends_only_on_the_floors_below() {
    let expect: [(&str, &[&str]); 4] = [
        ("src/filters/Cargo.toml", &[]),
        ("src/hdf5fmt/Cargo.toml", &["purehdf-filters"]),
        ("src/medh5/Cargo.toml", &["purehdf", "purehdf-filters"]),
        (
            "Cargo.toml",
            &["purehdf", "purehdf-filters", "purehdf-medh5"],
        ),
    ];
    for (manifest, want) in expect {
        let got = purehdf_deps(&root().join(manifest));
        assert_eq!(got, want, "{manifest}: purehdf crates it depends on");
    }
}

/// Files below `dir` (recursively) ending in `.rs`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Lines of `text` (comments and literals blanked) that name a forbidden path.
fn offending(text: &str, forbidden: &[&str]) -> Vec<usize> {
    let code = strip(text);
    code.lines()
        .enumerate()
        .filter(|(_, l)| forbidden.iter().any(|f| l.contains(f)))
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn cli_floors_run_downward() {
    let rules: [(&str, &[&str]); 2] = [
        (
            "src/dump",
            &["crate::tools", "purehdf_cli::tools", "super::tools"],
        ),
        ("src/tools", &["crate::bin", "src/bin"]),
    ];
    let mut bad = Vec::new();
    for (dir, forbidden) in rules {
        for f in rust_files(&root().join(dir)) {
            let text = std::fs::read_to_string(&f).unwrap();
            for line in offending(&text, forbidden) {
                bad.push(format!("{}:{line}", f.display()));
            }
        }
    }
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

#[test]
fn no_item_is_hidden_from_the_docs() {
    let mut bad = Vec::new();
    for f in rust_files(&root().join("src")) {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in offending(&text, &["doc(hidden)"]) {
            bad.push(format!("{}:{line}", f.display()));
        }
    }
    assert!(bad.is_empty(), "#[doc(hidden)] items:\n{}", bad.join("\n"));
}

#[test]
fn the_checks_catch_what_they_look_for() {
    let dump = "use crate::dump::x;\n// crate::tools in a comment\nuse crate::tools::copy;\n";
    assert_eq!(offending(dump, &["crate::tools"]), vec![3]);
    let hidden = "#[doc(hidden)]\npub fn f() {}\nconst S: &str = \"doc(hidden)\";\n";
    assert_eq!(offending(hidden, &["doc(hidden)"]), vec![1]);
    let manifest = std::env::temp_dir().join(format!("layering-{}.toml", std::process::id()));
    std::fs::write(
        &manifest,
        "[dependencies]\npurehdf-medh5.workspace = true\nserde = \"1\"\n[dev-dependencies]\npurehdf-cli = \"1\"\n",
    )
    .unwrap();
    assert_eq!(purehdf_deps(&manifest), vec!["purehdf-medh5".to_string()]);
    let _ = std::fs::remove_file(&manifest);
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
