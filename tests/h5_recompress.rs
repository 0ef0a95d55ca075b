//! `h5 recompress` end to end on a generated ESRF-like tree
//! (`tests/interop/gen_tree.py`: NeXus-like groups, VDS containers with their
//! sources, hard links, attributes of every type, datasets already in Blosc2,
//! fake JPEG-2000-in-Blosc2 frames): the dry-run selection equals the rows the
//! generator expects; after an in-place recompress every file reads the same
//! in h5py + hdf5plugin and h5dump; `--undo` restores every original byte for
//! byte; `--finalize` removes the backups; and `kill -9` at random moments of
//! compress and swap leaves every original or its verified replacement (and
//! `--undo` still restores the originals).
//!
//! CI size: 30 files (`PUREHDF_RECOMPRESS_FILES`, e.g. 100 for a local run) and
//! 50 kills (`PUREHDF_RECOMPRESS_KILLS`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use purehdf_cli::tools::recompress::verify::{file_sha256, verify};
use serde_json::Value;

const FILTER: &str = "blosc2:zstd:3:shuffle";

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn h5() -> &'static str {
    env!("CARGO_BIN_EXE_h5")
}

fn interop(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(name)
}

/// Every `.h5` file below `root`, relative, sorted (hidden files left out).
fn h5_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "h5")
                && !p.file_name().unwrap().to_string_lossy().starts_with('.')
            {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

fn shas(root: &Path, rels: &[String]) -> BTreeMap<String, String> {
    rels.iter()
        .map(|r| (r.clone(), file_sha256(&root.join(r)).unwrap()))
        .collect()
}

fn copy_tree(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(ok.success());
}

fn describe(py: &Path, root: &Path, rels: &[String]) -> Value {
    let out = Command::new(py)
        .arg(interop("tree_check.py"))
        .arg(root)
        .args(rels)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tree_check.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `h5 recompress SRC --filter FILTER --where technique/scan:tomo`.
fn tomo(src: &Path) -> Command {
    let mut c = Command::new(h5());
    c.arg("recompress")
        .arg(src)
        .args(["--filter", FILTER, "--where", "technique/scan:tomo"]);
    c
}

/// Run `c`, which must succeed.
fn ok(c: &mut Command) -> std::process::Output {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn recompress(root: &Path, manifest: &Path) -> Command {
    let mut c = tomo(root);
    c.args([
        "--layout",
        "in-place",
        "--workers",
        "2",
        "--json",
        "--manifest",
    ])
    .arg(manifest);
    c
}

fn undo(manifest: &Path) -> bool {
    let out = Command::new(h5())
        .args(["recompress", "--json", "--undo"])
        .arg(manifest)
        .output()
        .unwrap();
    out.status.success()
}

/// The oracle python when it has h5py and hdf5plugin (else prints why `name` is skipped).
fn oracle(name: &str) -> Option<PathBuf> {
    let Some(py) = common::oracle_python() else {
        println!("skipped: {name} (no oracle python)");
        return None;
    };
    let probe = Command::new(&py)
        .args(["-c", "import h5py, hdf5plugin"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        println!("skipped: {name} (oracle python lacks h5py/hdf5plugin)");
        return None;
    }
    Some(py)
}

/// Generate a tree of about `files` files at `dir`; returns its expected rows.
fn gen_tree(py: &Path, dir: &Path, files: u64) -> Value {
    let gen = Command::new(py)
        .arg(interop("gen_tree.py"))
        .arg(dir)
        .args(["--files", &files.to_string()])
        .output()
        .unwrap();
    assert!(
        gen.status.success(),
        "gen_tree.py: {}",
        String::from_utf8_lossy(&gen.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap()
}

/// xorshift64*, seeded from the clock (the seed is printed).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn recompress_tree_swap_undo_and_kill() {
    let Some(py) = oracle("h5 recompress") else {
        return;
    };
    let files = env_num("PUREHDF_RECOMPRESS_FILES", 30);
    let kills = env_num("PUREHDF_RECOMPRESS_KILLS", 50);
    let base = std::env::temp_dir().join(format!("purehdf-h5rc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let pristine = base.join("pristine");
    let expected = gen_tree(&py, &pristine, files);
    let want = |k: &str| -> BTreeSet<String> {
        expected[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let rels = h5_files(&pristine);
    let before = shas(&pristine, &rels);

    // 1. dry run: the selection equals the rows
    let work = base.join("work");
    copy_tree(&pristine, &work);
    let canon = std::fs::canonicalize(&work).unwrap();
    let dry = ok(tomo(&work).args(["--dry-run", "--json"]));
    let (mut sel, mut rem) = (BTreeSet::new(), BTreeSet::new());
    for line in String::from_utf8_lossy(&dry.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let p = PathBuf::from(v["path"].as_str().unwrap());
        let rel = p.strip_prefix(&canon).unwrap().display().to_string();
        match v["status"].as_str().unwrap() {
            "to_compress" => assert!(sel.insert(rel), "duplicate row"),
            _ => assert!(rem.insert(rel), "duplicate row"),
        }
    }
    assert_eq!(
        sel,
        want("to_compress"),
        "TO COMPRESS differs from the rows"
    );
    assert_eq!(rem, want("remaining"), "REMAINING differs from the rows");
    // a directory without a condition selects nothing unless --all
    let none = Command::new(h5())
        .arg("recompress")
        .arg(&work)
        .args(["--filter", FILTER, "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(2));
    println!(
        "h5 recompress dry run: {}/{} TO COMPRESS and {}/{} REMAINING equal the rows ({} files)",
        sel.len(),
        want("to_compress").len(),
        rem.len(),
        want("remaining").len(),
        rels.len()
    );

    // 2. in-place recompress, then everything reads the same
    let seen_before = describe(&py, &pristine, &rels);
    let manifest = base.join("run.manifest.json");
    let t0 = Instant::now();
    ok(&mut recompress(&work, &manifest));
    let full_run = t0.elapsed();
    let after = shas(&work, &rels);
    for r in &rels {
        let changed = before[r] != after[r];
        assert_eq!(changed, sel.contains(r), "{r}: changed = {changed}");
    }
    let seen_after = describe(&py, &work, &rels);
    let mut same = 0;
    for r in &rels {
        let (a, b) = (&seen_before[r], &seen_after[r]);
        assert_eq!(a["h5py"], b["h5py"], "{r}: h5py sees a different file");
        assert_eq!(a["h5dump_rc"], b["h5dump_rc"], "{r}: h5dump exit code");
        assert_eq!(
            a["h5dump_sha"], b["h5dump_sha"],
            "{r}: h5dump output differs"
        );
        same += 1;
    }
    println!(
        "h5 recompress in place: {} files re-encoded in {:.2} s; {same}/{} files read the same in \
h5py + hdf5plugin{}",
        sel.len(),
        full_run.as_secs_f64(),
        rels.len(),
        if seen_after[&rels[0]].get("h5dump_sha").is_some() {
            " and h5dump"
        } else {
            " (h5dump absent)"
        }
    );

    // 3. undo restores every byte; finalize removes the backups
    assert!(undo(&manifest));
    assert_eq!(
        shas(&work, &rels),
        before,
        "--undo did not restore the originals"
    );
    assert_eq!(h5_files(&work), rels, "files left behind by --undo");
    let m2 = base.join("second.manifest.json");
    assert!(recompress(&work, &m2).output().unwrap().status.success());
    let fin = Command::new(h5())
        .args(["recompress", "--finalize"])
        .arg(&m2)
        .output()
        .unwrap();
    assert!(fin.status.success());
    assert_eq!(h5_files(&work), rels, "backups left after --finalize");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&m2).unwrap()).unwrap();
    for e in m["entries"].as_array().unwrap() {
        let p = PathBuf::from(e["original"].as_str().unwrap());
        assert_eq!(
            file_sha256(&p).unwrap(),
            e["output_sha256"].as_str().unwrap()
        );
    }
    println!("h5 recompress: --undo restored {}/{} originals byte for byte; --finalize removed every backup", sel.len(), sel.len());

    // 4. kill -9 at random moments of compress and swap
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(seed);
    let window = full_run.as_micros().max(1000) as u64 * 5 / 4;
    let (mut partial, mut replaced_total) = (0, 0);
    for k in 0..kills {
        copy_tree(&pristine, &work);
        let mk = base.join(format!("kill{k}.manifest.json"));
        let mut child = recompress(&work, &mk)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.next() % window));
        let _ = child.kill();
        let _ = child.wait();
        let mut replaced = 0;
        for r in &rels {
            let p = work.join(r);
            assert!(p.is_file(), "kill {k} (seed {seed}): {r} missing");
            if file_sha256(&p).unwrap() != before[r] {
                verify(&pristine.join(r), &p).unwrap_or_else(|e| {
                    panic!("kill {k} (seed {seed}): {r} is neither original nor verified: {e}")
                });
                replaced += 1;
            }
        }
        if replaced > 0 && replaced < sel.len() {
            partial += 1;
        }
        replaced_total += replaced;
        if mk.exists() {
            assert!(undo(&mk), "kill {k} (seed {seed}): --undo failed");
        }
        assert_eq!(
            shas(&work, &rels),
            before,
            "kill {k} (seed {seed}): originals not restored"
        );
    }
    println!(
        "h5 recompress kill -9: {kills}/{kills} random moments (seed {seed}) left every original \
or its verified replacement ({partial} mid-swap, {replaced_total} replacements seen); --undo \
restored every original after each"
    );
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn sibling_mirror_and_refusals() {
    let Some(py) = oracle("h5 recompress layouts") else {
        return;
    };
    use purehdf::low_level::file::{File, Object};
    let base = std::env::temp_dir().join(format!("purehdf-h5rc-lay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let tree = base.join("tree");
    let expected = gen_tree(&py, &tree, 10);
    let rels = h5_files(&tree);
    let before = shas(&tree, &rels);
    let selected: Vec<String> = expected["to_compress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();

    // sibling: <stem>_rc.h5 beside each selected file, originals untouched; undo removes them
    let ms = base.join("sibling.json");
    ok(tomo(&tree).arg("--manifest").arg(&ms));
    assert_eq!(shas(&tree, &rels), before);
    for r in &selected {
        let sib = tree.join(r.replace(".h5", "_rc.h5"));
        verify(&tree.join(r), &sib).unwrap();
    }
    // one worker writes the same bytes as several
    let one = base.join("one.h5");
    ok(Command::new(h5())
        .args(["recompress", "--filter", FILTER, "--workers", "1", "-o"])
        .arg(&one)
        .arg(tree.join(&selected[0])));
    assert_eq!(
        file_sha256(&one).unwrap(),
        file_sha256(&tree.join(selected[0].replace(".h5", "_rc.h5"))).unwrap(),
        "--workers 1 and the default differ"
    );
    assert!(undo(&ms));
    assert_eq!(h5_files(&tree), rels, "sibling outputs left after --undo");
    // sibling, then --swap (esrf's overwrite): outputs in place, --undo brings the originals back
    let mw = base.join("swap.json");
    ok(tomo(&tree).arg("--manifest").arg(&mw));
    ok(Command::new(h5()).args(["recompress", "--swap"]).arg(&mw));
    for r in &selected {
        assert_ne!(
            file_sha256(&tree.join(r)).unwrap(),
            before[r],
            "{r} not swapped"
        );
        verify(&tree.join(format!("{r}.bak")), &tree.join(r)).unwrap();
    }
    assert!(undo(&mw));
    assert_eq!(shas(&tree, &rels), before, "--undo after --swap");
    assert_eq!(h5_files(&tree), rels, "files left after --swap and --undo");

    // mirror: every other file copied byte for byte, containers' VDS read the new sources
    let (raw, comp) = (tree.join("RAW_DATA"), tree.join("RAW_DATA_COMPRESSED"));
    ok(tomo(&raw)
        .args(["--layout", "mirror", "--from"])
        .arg(&raw)
        .arg("--to")
        .arg(&comp));
    let mut vds_read = 0;
    for r in &rels {
        let rel = r.strip_prefix("RAW_DATA/").unwrap();
        let (a, b) = (raw.join(rel), comp.join(rel));
        if selected.contains(r) {
            assert_ne!(file_sha256(&a).unwrap(), file_sha256(&b).unwrap());
            verify(&a, &b).unwrap();
        } else {
            assert_eq!(file_sha256(&a).unwrap(), file_sha256(&b).unwrap(), "{rel}");
        }
        if r.ends_with("_0001.h5") {
            let (fa, fb) = (File::open(&a).unwrap(), File::open(&b).unwrap());
            for g in ["/1.1", "/2.1"] {
                let p = format!("{g}/measurement/marana");
                let (Ok(Object::Dataset(da)), Ok(Object::Dataset(db))) =
                    (fa.object(&p), fb.object(&p))
                else {
                    panic!("{rel}{p}")
                };
                let src = db.virtual_plan().unwrap().unwrap().pieces[0]
                    .source
                    .dataset
                    .file()
                    .path()
                    .unwrap()
                    .to_path_buf();
                assert!(src.starts_with(&comp), "{rel}{p} reads {}", src.display());
                if let (Ok(x), Ok(y)) = (da.read_all_raw(), db.read_all_raw()) {
                    assert_eq!(x, y, "{rel}{p}");
                    vds_read += 1;
                }
            }
        }
    }
    assert_eq!(shas(&tree, &rels), before, "mirror touched RAW_DATA");

    // refusals: a truncated output never verifies
    let victim = tree.join(&selected[0]);
    let cut = base.join("cut.h5");
    let bytes =
        std::fs::read(tree.join(selected[0].replace(".h5", "_rc.h5"))).unwrap_or_else(|_| {
            std::fs::read(comp.join(selected[0].strip_prefix("RAW_DATA/").unwrap())).unwrap()
        });
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    assert!(
        verify(&victim, &cut).is_err(),
        "a truncated output verified"
    );
    println!(
        "h5 recompress layouts: sibling ({} outputs verified, undo removed them; --swap put them \
in place, undo restored the originals), mirror ({} container VDS read the mirrored sources), \
truncated output refused",
        selected.len(),
        vds_read
    );
    let _ = std::fs::remove_dir_all(&base);
}
