//! Issue 16 item 3: mutated files through every tool, under a 4 GiB
//! address-space cap and a 10 s limit: 0 panics, signals, aborts or time-outs.
//!
//! Inputs (seeded, deterministic): a sample of small corpus files
//! (`../shared/corpus`), the medh5 vectors (`../shared/vectors/medh5`) and a
//! sample written by `medh5 demo`. Each gets bit flips, zeroed and huge 8-byte
//! fields (half of them near a structure signature) and truncations; after a
//! mutation every checksummed v2 structure it touched (superblock v2/3,
//! OHDR/OCHK, B-tree v2, fractal heap, EA/FA blocks — found in the original by
//! locating each signature's lookup3 checksum) is recomputed, so the mutation
//! gets past the checksum gate. Each mutant runs through `h5 dump --json`,
//! `h5 copy`, `medh5 verify`, `medh5 info`, and for medh5 inputs also
//! `medh5 validate` and `medh5 fix`, plus the library's patch reads (this test
//! binary re-run as a child). Reproducers of failures are written to
//! `target/mutation-failures/`; the ones kept in `tests/golden/mutations/`
//! are replayed by `replayed_reproducers_do_not_crash`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use purehdf::low_level::checksum::metadata_checksum;

mod common;
use common::Rng;

const AS_CAP: u64 = 4 << 30;
const TIME_LIMIT: Duration = Duration::from_secs(10);
const CORPUS_FILES: usize = 48;
const CORPUS_MUTANTS: usize = 16;
const MEDH5_MUTANTS: usize = 64;
/// Longest checksummed structure looked for (bytes before the checksum).
const MAX_STRUCT: usize = 8192;
const CHILD_ENV: &str = "PUREHDF_MUTATION_CHILD";

const MAGICS: [&[u8; 4]; 14] = [
    b"OHDR", b"OCHK", b"BTHD", b"BTIN", b"BTLF", b"FRHP", b"FHDB", b"FHIB", b"EAHD", b"EAIB",
    b"EADB", b"EASB", b"FAHD", b"FADB",
];
const SB: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// Checksummed structures of `b`: (start, length covered); the checksum is
/// the 4 bytes after. Found by trying every length up to MAX_STRUCT.
fn checksummed(b: &[u8]) -> Vec<(usize, usize)> {
    let mut starts = Vec::new();
    for i in 0..b.len().saturating_sub(4) {
        let w = &b[i..i + 4];
        if MAGICS.iter().any(|m| w == &m[..]) {
            starts.push(i);
        }
        if b[i..].starts_with(SB) && b.get(i + 8).is_some_and(|&v| v >= 2) {
            starts.push(i);
        }
    }
    let mut out = Vec::new();
    for s in starts {
        let max = MAX_STRUCT.min(b.len().saturating_sub(s + 4));
        for len in 8..=max {
            let stored = u32::from_le_bytes(b[s + len..s + len + 4].try_into().unwrap());
            if metadata_checksum(&b[s..s + len]) == stored {
                out.push((s, len));
                break;
            }
        }
    }
    out
}

fn signature_offsets(structs: &[(usize, usize)]) -> Vec<usize> {
    structs.iter().map(|s| s.0).collect()
}

/// One mutant of `orig`: a description and the bytes.
fn mutate(orig: &[u8], structs: &[(usize, usize)], rng: &mut Rng) -> (String, Vec<u8>) {
    let mut b = orig.to_vec();
    let len = b.len() as u64;
    let sigs = signature_offsets(structs);
    // half the offsets near a structure (metadata), half anywhere
    let offset = |rng: &mut Rng| -> usize {
        if !sigs.is_empty() && rng.below(2) == 0 {
            let s = sigs[rng.below(sigs.len() as u64) as usize];
            (s + rng.below(96) as usize).min(b.len().saturating_sub(1))
        } else {
            rng.below(len) as usize
        }
    };
    let kind = rng.below(10);
    let (desc, touched) = match kind {
        0..=3 => {
            let o = offset(rng);
            let bit = rng.below(8);
            b[o] ^= 1 << bit;
            (format!("flip bit {bit} at {o:#x}"), vec![o])
        }
        4..=5 => {
            let o = offset(rng).min(b.len().saturating_sub(8));
            b[o..o + 8].fill(0);
            (format!("zero 8 bytes at {o:#x}"), (o..o + 8).collect())
        }
        6..=8 => {
            let o = offset(rng).min(b.len().saturating_sub(8));
            let v: u64 = match rng.below(4) {
                0 => u64::MAX,
                1 => 1 << 40,
                2 => 0x7fff_ffff_ffff_fff0,
                _ => (1 << 32) + rng.below(1 << 20),
            };
            b[o..o + 8].copy_from_slice(&v.to_le_bytes());
            (format!("8 bytes {v:#x} at {o:#x}"), (o..o + 8).collect())
        }
        _ => {
            let n = rng.below(len) as usize;
            b.truncate(n);
            return (format!("truncate to {n}"), b);
        }
    };
    // repair every checksum covering a touched byte
    for &(s, l) in structs {
        if touched.iter().any(|&t| t >= s && t < s + l + 4) {
            let c = metadata_checksum(&b[s..s + l]);
            b[s + l..s + l + 4].copy_from_slice(&c.to_le_bytes());
        }
    }
    (desc, b)
}

#[derive(Debug)]
enum Verdict {
    Ok,
    Bad(String),
}

/// Runs that ended with exit code 0, 1, 2 (all tools together).
static CODES: [AtomicUsize; 3] = [
    AtomicUsize::new(0),
    AtomicUsize::new(0),
    AtomicUsize::new(0),
];

/// Run `exe args` under the address-space cap and the time limit.
fn run_capped(exe: &Path, args: &[&str], env: Option<(&str, &str)>) -> Verdict {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("RAYON_NUM_THREADS", "2");
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe and touches only the child.
        unsafe {
            cmd.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: AS_CAP as libc::rlim_t,
                    rlim_max: AS_CAP as libc::rlim_t,
                };
                if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Verdict::Bad(format!("spawn: {e}")),
    };
    let t0 = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if t0.elapsed() > TIME_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return Verdict::Bad("time-out".into());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Verdict::Bad(format!("wait: {e}")),
        }
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return Verdict::Bad(format!("signal {sig}: {}", tail(&err)));
        }
    }
    match status.code() {
        Some(c @ 0..=2) => {
            CODES[c as usize].fetch_add(1, Ordering::Relaxed);
            Verdict::Ok
        }
        c => Verdict::Bad(format!("exit {c:?}: {}", tail(&err))),
    }
}

fn tail(s: &str) -> String {
    let t: Vec<&str> = s.lines().rev().take(4).collect();
    t.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

struct Input {
    name: String,
    bytes: Vec<u8>,
    medh5: bool,
}

/// `PUREHDF_MUTATION_SEED` (default 0): picks another deterministic set of
/// corpus files and mutants, for longer campaigns.
fn seed_base() -> u64 {
    std::env::var("PUREHDF_MUTATION_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn inputs(scratch: &Path) -> Vec<Input> {
    let mut out = Vec::new();
    if let Some(dir) = common::corpus_dir() {
        let rows = common::read_manifest(&dir);
        let mut small: Vec<String> = rows
            .iter()
            .filter(|r| {
                r.get("size")
                    .and_then(|s| s.parse::<u64>().ok())
                    .is_some_and(|s| s <= 96 << 10)
            })
            .filter_map(|r| r.get("path").cloned())
            .collect();
        small.sort();
        // Another seed also samples other corpus files (the default, 0, keeps
        // the committed sample).
        let mut rng = Rng(0xC0FFEE ^ (seed_base() << 24));
        for _ in 0..CORPUS_FILES.min(small.len()) {
            let i = rng.below(small.len() as u64) as usize;
            let p = small.swap_remove(i);
            if let Ok(bytes) = std::fs::read(dir.join(&p)) {
                out.push(Input {
                    name: p.replace('/', "_"),
                    bytes,
                    medh5: false,
                });
            }
        }
    } else {
        println!("skipped: mutation corpus part (../shared/corpus absent)");
    }
    match common::shared_dir().map(|d| d.join("vectors/medh5")) {
        Some(v) if v.is_dir() => {
            let mut names: Vec<_> = std::fs::read_dir(&v)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "medh5"))
                .collect();
            names.sort();
            for p in names {
                out.push(Input {
                    name: p.file_name().unwrap().to_string_lossy().into_owned(),
                    bytes: std::fs::read(&p).unwrap(),
                    medh5: true,
                });
            }
        }
        _ => println!("skipped: mutation medh5 vectors (../shared/vectors/medh5 absent)"),
    }
    let demo = scratch.join("demo.medh5");
    let ok = Command::new(env!("CARGO_BIN_EXE_medh5"))
        .args(["demo", demo.to_str().unwrap()])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "medh5 demo failed");
    out.push(Input {
        name: "demo.medh5".into(),
        bytes: std::fs::read(&demo).unwrap(),
        medh5: true,
    });
    out
}

/// Every tool on one file; the failures as "tool: verdict".
fn run_tools(path: &Path, medh5: bool, out_dir: &Path) -> Vec<String> {
    let h5 = Path::new(env!("CARGO_BIN_EXE_h5"));
    let m = Path::new(env!("CARGO_BIN_EXE_medh5"));
    let me = std::env::current_exe().unwrap();
    let p = path.to_str().unwrap();
    let copy_out = out_dir.join(format!(
        "{}.copy.h5",
        path.file_name().unwrap().to_string_lossy()
    ));
    let c = copy_out.to_str().unwrap();
    let mut runs: Vec<(&str, &Path, Vec<&str>)> = vec![
        ("h5 dump", h5, vec!["dump", "--json", p]),
        ("h5 copy", h5, vec!["copy", p, c]),
        ("medh5 verify", m, vec!["verify", p]),
        ("medh5 info", m, vec!["info", p]),
    ];
    if medh5 {
        runs.push(("medh5 validate", m, vec!["validate", p]));
        runs.push(("medh5 fix", m, vec!["fix", p]));
    }
    let mut bad = Vec::new();
    for (tool, exe, args) in runs {
        if let Verdict::Bad(why) = run_capped(exe, &args, None) {
            bad.push(format!("{tool}: {why}"));
        }
    }
    let _ = std::fs::remove_file(&copy_out);
    let child_args = [
        "mutation_child",
        "--exact",
        "--nocapture",
        "--test-threads",
        "1",
    ];
    if let Verdict::Bad(why) = run_capped(&me, &child_args, Some((CHILD_ENV, p))) {
        bad.push(format!("patch reads: {why}"));
    }
    bad
}

/// Not a test on its own: the patch-read child run by `run_tools` (returns
/// at once unless `PUREHDF_MUTATION_CHILD` names a file).
#[test]
fn mutation_child() {
    let Some(p) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let Ok(f) = purehdf::File::open(&p) else {
        return;
    };
    let mut rng = Rng(7);
    let mut todo = vec![("/".to_string(), 0usize)];
    let mut seen = std::collections::HashSet::new();
    let mut datasets = 0;
    while let Some((path, depth)) = todo.pop() {
        if depth > 8 || datasets > 64 {
            break;
        }
        match f.object(&path) {
            Ok(purehdf::Object::Group(g)) => {
                if !seen.insert(g.address()) {
                    continue;
                }
                for (name, _) in g.links().unwrap_or_default() {
                    let child = if path == "/" {
                        format!("/{name}")
                    } else {
                        format!("{path}/{name}")
                    };
                    todo.push((child, depth + 1));
                }
            }
            Ok(purehdf::Object::Dataset(d)) => {
                datasets += 1;
                read_patches(&d, &mut rng);
            }
            _ => {}
        }
    }
}

fn read_patches(d: &purehdf::Dataset, rng: &mut Rng) {
    use purehdf::Selection;
    const CAP: u64 = 4 << 20;
    let size = d.dtype().size();
    let shape = d.shape().to_vec();
    let total = d.num_elements().saturating_mul(size);
    if total <= CAP {
        // A new buffer is filled without being zeroed first (multi-byte
        // elements): whenever both reads succeed, it must equal a read into
        // a zeroed buffer, or some byte was left unwritten.
        let fresh = d.read_raw_vec(&Selection::All);
        let mut zeroed = vec![0u8; total as usize];
        if let (Ok(a), Ok(())) = (&fresh, d.read_raw(&Selection::All, &mut zeroed)) {
            assert!(
                a == &zeroed,
                "new-buffer read differs from a zeroed-buffer read"
            );
        }
    }
    if shape.is_empty() || shape.contains(&0) {
        return;
    }
    for _ in 0..4 {
        let start: Vec<u64> = shape.iter().map(|&n| rng.below(n)).collect();
        let count: Vec<u64> = shape
            .iter()
            .zip(&start)
            .map(|(&n, &s)| 1 + rng.below((n - s).min(64)))
            .collect();
        let n = count.iter().fold(size, |a, &c| a.saturating_mul(c));
        if n > CAP {
            continue;
        }
        let mut buf = vec![0u8; n as usize];
        let sel = Selection::Hyperslab { start, count };
        let _ = d.read_raw(&sel, &mut buf);
        let _ = d.read_raw_uncached(&sel, &mut buf);
    }
}

/// A fresh scratch directory of this process for one test (`what`): the
/// tests of this binary run in parallel, and a directory shared between them
/// was removed by one while the other wrote into it.
fn scratch(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-mutation-{}-{what}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn mutated_files_never_crash_any_tool() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = scratch("mutants");
    let ins = inputs(&dir);
    let t0 = Instant::now();
    // The mutants, all made up front (deterministic).
    let mut jobs = Vec::new();
    for (k, inp) in ins.iter().enumerate() {
        let structs = checksummed(&inp.bytes);
        // PUREHDF_MUTATION_SEED picks another deterministic set (longer campaigns).
        let mut rng = Rng(0x5EED_0000 + k as u64 + (seed_base() << 20));
        let n = if inp.medh5 {
            MEDH5_MUTANTS
        } else {
            CORPUS_MUTANTS
        };
        for j in 0..n {
            let (desc, bytes) = mutate(&inp.bytes, &structs, &mut rng);
            jobs.push((format!("{}.m{j:02}", inp.name), desc, bytes, inp.medh5));
        }
    }
    let total = jobs.len();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let fail_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mutation-failures");
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((name, desc, bytes, medh5)) = jobs.get(i) else {
                    break;
                };
                let p = dir.join(name);
                std::fs::write(&p, bytes).unwrap();
                let bad = run_tools(&p, *medh5, &dir);
                if !bad.is_empty() {
                    let _ = std::fs::create_dir_all(&fail_dir);
                    let _ = std::fs::write(fail_dir.join(name), bytes);
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{name} ({desc}): {}", bad.join("; ")));
                }
                let _ = std::fs::remove_file(&p);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let codes: Vec<usize> = CODES.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    println!(
        "mutation: {total} mutants of {} files through h5 dump/copy, medh5 verify/info/validate/fix and patch reads in {:.0} s: {} crashes, signals, aborts or time-outs (runs exiting 0/1/2: {codes:?})",
        ins.len(),
        t0.elapsed().as_secs_f64(),
        failures.len()
    );
    for f in failures.iter().take(20) {
        println!("  {f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "reproducers in {}", fail_dir.display());
}

#[test]
fn replayed_reproducers_do_not_crash() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/mutations");
    let Ok(rd) = std::fs::read_dir(&golden) else {
        println!("skipped: mutation replay (no tests/golden/mutations)");
        return;
    };
    let dir = scratch("replay");
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    files.sort();
    let mut bad = Vec::new();
    for f in &files {
        // run on a copy: fix and copy must never touch the kept reproducer
        let p = dir.join(f.file_name().unwrap());
        std::fs::copy(f, &p).unwrap();
        for b in run_tools(&p, true, &dir) {
            bad.push(format!("{}: {b}", f.display()));
        }
    }
    println!(
        "mutation replay: {} reproducers, {} failures",
        files.len(),
        bad.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn checksum_finder_finds_v2_structures() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    // our writer's files have a v2 superblock and v2 object headers
    let mut w = purehdf::low_level::write::FileWriter::in_memory();
    let r = w.root();
    w.create_group(r, "g").unwrap();
    let b = w.finish().unwrap();
    let s = checksummed(&b);
    assert!(s.iter().any(|&(o, _)| b[o..].starts_with(SB)), "{s:?}");
    assert!(
        s.iter().filter(|&&(o, _)| &b[o..o + 4] == b"OHDR").count() >= 2,
        "{s:?}"
    );
}
