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

// ---------------------------------------------------------------------------
// The module graph of the `purehdf` crate: no import circles.
// ---------------------------------------------------------------------------

/// Modules of `purehdf` still inside an import circle. The list must only
/// shrink: the test fails when a module outside it joins a circle, and when
/// a listed module is no longer in one (then delete its line).
const CIRCLE_ALLOW_LIST: &[&str] = &[
    // a virtual dataset's read opens its source datasets (through groups)
    // and reads them, and `Dataset` reads a virtual layout through it
    "dataset",
    "group",
    "virtual_layout",
    "virtual_layout::read",
    "virtual_layout::resolve",
    // `edit/mod.rs` holds `Editor`, whose fields name `commit`'s types,
    // while `commit` implements `Editor`
    "edit",
    "edit::commit",
];

/// One module: its path inside the crate (`""` for the root, `write::sink`)
/// and its source text.
struct Module {
    path: String,
    text: String,
}

/// Every module file of the crate rooted at `lib`, following `mod x;`
/// declarations (with `#[path = "..."]`) from the root.
fn crate_modules(lib: &Path) -> Vec<Module> {
    let mut out = Vec::new();
    let mut stack = vec![(lib.to_path_buf(), String::new(), true)];
    while let Some((file, path, owns_dir)) = stack.pop() {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let dir = file.parent().unwrap().to_path_buf();
        // Where `mod x;` without a path attribute looks for its file.
        let child_dir = if owns_dir {
            dir.clone()
        } else {
            dir.join(file.file_stem().unwrap())
        };
        let mut path_attr: Option<String> = None;
        for line in text.lines() {
            let t = line.trim();
            if let Some(rest) = t.strip_prefix("#[path = \"") {
                path_attr = rest.split('"').next().map(str::to_string);
                continue;
            }
            if t.starts_with("#[") {
                continue;
            }
            let decl = t
                .strip_prefix("pub(crate) mod ")
                .or_else(|| t.strip_prefix("pub(super) mod "))
                .or_else(|| t.strip_prefix("pub mod "))
                .or_else(|| t.strip_prefix("mod "));
            let attr = path_attr.take();
            let Some(name) = decl.and_then(|d| d.strip_suffix(';')) else {
                continue;
            };
            // `low_level`'s modules are the root's (`crate::file`).
            let child_path = if path.is_empty() || path == "low_level" {
                name.to_string()
            } else {
                format!("{path}::{name}")
            };
            let (child, owns) = match attr {
                Some(p) => {
                    let f = dir.join(&p);
                    let owns = f.file_name().is_some_and(|n| n == "mod.rs");
                    (f, owns)
                }
                None => {
                    let flat = child_dir.join(format!("{name}.rs"));
                    if flat.exists() {
                        (flat, false)
                    } else {
                        (child_dir.join(name).join("mod.rs"), true)
                    }
                }
            };
            stack.push((child, child_path, owns));
        }
        out.push(Module { path, text });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Tokens of stripped source: identifiers and the punctuation a path needs.
fn tokens(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_alphanumeric() || c == '_' {
            let s = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(b[s..i].iter().collect());
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else if c.is_whitespace() {
            i += 1;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

/// The source with `#[cfg(test)] mod x { ... }` blocks removed: tests may
/// reach anything.
fn without_test_modules(code: &str) -> String {
    let mut out = code.to_string();
    // `#[cfg(test)]` and `#[cfg(all(test, ...))]`.
    let test_attr = |s: &str| -> Option<(usize, usize)> {
        let a = s.find("#[cfg(test)]").map(|k| (k, "#[cfg(test)]".len()));
        let b = s.find("#[cfg(all(test,").and_then(|k| {
            let end = s[k..].find(")]")?;
            Some((k, end + 2))
        });
        match (a, b) {
            (Some(x), Some(y)) => Some(if x.0 < y.0 { x } else { y }),
            (x, y) => x.or(y),
        }
    };
    while let Some((at, attr_len)) = test_attr(&out) {
        let after = &out[at..];
        let Some(open) = after.find('{') else { break };
        let semi = after.find(';').unwrap_or(usize::MAX);
        let is_mod_block = after[..open].contains("mod ") && open < semi;
        if !is_mod_block {
            out.replace_range(at..at + attr_len, "");
            continue;
        }
        let mut depth = 0usize;
        let mut end = out.len();
        for (k, ch) in out[at + open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = at + open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.replace_range(at..end, "");
    }
    out
}

/// Expand a use tree starting at `toks[*i]` into full paths (segments).
fn use_tree(toks: &[String], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    while *i < toks.len() {
        let t = toks[*i].as_str();
        match t {
            "::" => *i += 1,
            "{" => {
                *i += 1;
                loop {
                    if *i >= toks.len() {
                        return;
                    }
                    if toks[*i] == "}" {
                        *i += 1;
                        return;
                    }
                    if toks[*i] == "," {
                        *i += 1;
                        continue;
                    }
                    use_tree(toks, i, &path, out);
                }
            }
            "*" => {
                *i += 1;
                out.push(path.clone());
                return;
            }
            "as" => {
                *i += 2;
            }
            "," | "}" | ";" => {
                out.push(path);
                return;
            }
            _ => {
                path.push(t.to_string());
                *i += 1;
            }
        }
    }
}

/// The paths a module names: `(is_use, segments)`; segments start with
/// `crate`, `super`, `self` or a first name (relative or an external crate).
fn named_paths(code: &str) -> Vec<(bool, Vec<String>)> {
    let toks = tokens(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks[i] == "use" && (i == 0 || toks[i - 1] != "::") {
            i += 1;
            let mut paths = Vec::new();
            use_tree(&toks, &mut i, &[], &mut paths);
            out.extend(paths.into_iter().map(|p| (true, p)));
            continue;
        }
        let starts_path = (toks[i] == "crate" || toks[i] == "super")
            && toks.get(i + 1).is_some_and(|t| t == "::")
            && (i == 0 || toks[i - 1] != "::");
        if starts_path {
            let mut p = vec![toks[i].clone()];
            i += 1;
            while i + 1 < toks.len() && toks[i] == "::" {
                let seg = &toks[i + 1];
                if !(seg.chars().all(|c| c.is_alphanumeric() || c == '_')) {
                    break;
                }
                p.push(seg.clone());
                i += 2;
            }
            out.push((false, p));
            continue;
        }
        i += 1;
    }
    out
}

/// The module graph: for each module, the modules it names (by index).
fn module_graph(modules: &[Module]) -> Vec<Vec<usize>> {
    use std::collections::{BTreeSet, HashMap};
    let index: HashMap<&str, usize> = modules
        .iter()
        .enumerate()
        .map(|(k, m)| (m.path.as_str(), k))
        .collect();
    let paths: Vec<Vec<(bool, Vec<String>)>> = modules
        .iter()
        .map(|m| named_paths(&without_test_modules(&strip(&m.text))))
        .collect();
    let seg = |m: &str| -> Vec<String> {
        if m.is_empty() {
            Vec::new()
        } else {
            m.split("::").map(str::to_string).collect()
        }
    };
    // Absolute form of a path named inside module `at`.
    let absolute = |at: usize, p: &[String]| -> Option<Vec<String>> {
        let mut base = seg(&modules[at].path);
        let mut rest = p;
        match p.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &p[1..];
            }
            Some("self") => rest = &p[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                // Relative: a child module (or a name the module itself
                // imports, resolved through its use map below); else an
                // external crate.
                let mut child = base.clone();
                child.push(first.to_string());
                if !index.contains_key(child.join("::").as_str()) {
                    return None;
                }
            }
            None => return None,
        }
        base.extend(rest.iter().cloned());
        // `low_level::x` is the root's `x`.
        if base.first().is_some_and(|s| s == "low_level") && base.len() > 1 {
            base.remove(0);
        }
        Some(base)
    };
    // Names each module brings in with `use` (last segment → absolute path).
    let mut uses: Vec<HashMap<String, Vec<String>>> = vec![HashMap::new(); modules.len()];
    for (k, ps) in paths.iter().enumerate() {
        for (is_use, p) in ps {
            if *is_use {
                if let (Some(last), Some(abs)) = (p.last(), absolute(k, p)) {
                    uses[k].insert(last.clone(), abs);
                }
            }
        }
    }
    // The module an absolute path lands in, following `use` re-exports.
    let resolve = |abs: &[String]| -> Option<usize> {
        let mut cur = abs.to_vec();
        for _ in 0..8 {
            let mut n = cur.len();
            while n > 0 && !index.contains_key(cur[..n].join("::").as_str()) {
                n -= 1;
            }
            let m = index[cur[..n].join("::").as_str()];
            match cur.get(n).and_then(|name| uses[m].get(name)) {
                Some(next) if next.as_slice() != cur.as_slice() => {
                    let mut next = next.clone();
                    next.extend(cur[n + 1..].iter().cloned());
                    cur = next;
                }
                _ => return Some(m),
            }
        }
        None
    };
    let root = index[""];
    let low_level = index.get("low_level").copied();
    paths
        .iter()
        .enumerate()
        .map(|(k, ps)| {
            let mut to = BTreeSet::new();
            // The root and `low_level` only declare and re-export.
            if k == root || Some(k) == low_level {
                return Vec::new();
            }
            for (_, p) in ps {
                if let Some(t) = absolute(k, p).and_then(|a| resolve(&a)) {
                    if t != k && t != root && Some(t) != low_level {
                        to.insert(t);
                    }
                }
            }
            to.into_iter().collect()
        })
        .collect()
}

/// Strongly connected components with more than one node (Tarjan).
fn circles(graph: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct St<'a> {
        g: &'a [Vec<usize>],
        idx: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut St, v: usize) {
        s.idx[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        for &w in &s.g[v] {
            match s.idx[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.idx[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let n = graph.len();
    let mut s = St {
        g: graph,
        idx: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.idx[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The circles of a crate as module-path lists.
fn named_circles(modules: &[Module]) -> Vec<Vec<String>> {
    let g = module_graph(modules);
    circles(&g)
        .into_iter()
        .map(|c| c.into_iter().map(|k| modules[k].path.clone()).collect())
        .collect()
}

#[test]
fn the_format_crate_has_no_import_circles() {
    let modules = crate_modules(&root().join("src/hdf5fmt/lib.rs"));
    assert!(modules.len() > 50, "found {} modules", modules.len());
    let found = named_circles(&modules);
    let mut report = String::new();
    for c in &found {
        report.push_str(&format!("  {{{}}}\n", c.join(", ")));
    }
    eprintln!("{} circles:\n{report}", found.len());
    let in_circle: Vec<&String> = found.iter().flatten().collect();
    let new: Vec<&&String> = in_circle
        .iter()
        .filter(|m| !CIRCLE_ALLOW_LIST.contains(&m.as_str()))
        .collect();
    assert!(
        new.is_empty(),
        "modules in an import circle and not allowed: {new:?}\ncircles:\n{report}"
    );
    let gone: Vec<&&str> = CIRCLE_ALLOW_LIST
        .iter()
        .filter(|a| !in_circle.iter().any(|m| m == *a))
        .collect();
    assert!(
        gone.is_empty(),
        "no longer in a circle, remove from the allow-list: {gone:?}"
    );
}

#[test]
fn the_circle_check_finds_a_planted_circle() {
    let m = |path: &str, text: &str| Module {
        path: path.into(),
        text: text.into(),
    };
    let modules = vec![
        m("", "pub use a::A;\nmod a; mod b; mod c; mod d;\n#[cfg(test)]\nmod tests { use crate::d::x; }"),
        m("a", "use crate::b::{self, Bee};\npub struct A;"),
        m("b", "pub struct Bee;\nfn f() { let _ = crate::c::g(); }\n// crate::d::x\n"),
        m("c", "pub fn g() -> crate::A { crate::A }"),
        m("d", "pub mod x {}\nuse super::c::g;\n#[cfg(test)]\nmod tests { use crate::a::A; }\n#[cfg(all(test, unix))]\nmod unix_tests { use crate::b::Bee; }"),
    ];
    assert_eq!(named_circles(&modules), vec![vec!["a", "b", "c"]]);
    let g = module_graph(&modules);
    assert_eq!(g[4], vec![3], "d names only c (its test module is free)");
    let without = vec![
        m("", ""),
        m("a", "use crate::b::Bee;"),
        m("b", "pub struct Bee;"),
    ];
    assert!(named_circles(&without).is_empty());
}
