//! Atomic outputs under `kill -9` (`docs/medh5-format.md` §8): `recompress`
//! (in place), `pack` and `unpack` are killed at random moments, ≥ 50 times
//! each; after every kill the target is either the old file byte for byte or
//! a new complete one (it verifies, its `content_id` is the source's), never
//! anything else under its name. Needs no oracle: the inputs come from
//! `medh5 demo`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use purehdf::low_level::file::File;
use purehdf_medh5::collection::member_files;
use purehdf_medh5::verify::{compute_content_id, verify_file};

const BIN: &str = env!("CARGO_BIN_EXE_medh5");
const KILLS: usize = 50;

/// A small deterministic generator (no dependency).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// Content ids of every sample the file holds, when it is complete and verifies.
fn complete(path: &Path) -> Option<Vec<String>> {
    let f = File::open(path).ok()?;
    let mut ids = Vec::new();
    for m in member_files(&f).ok()? {
        let v = verify_file(&m.file, "x", None).ok()?;
        if !v.ok {
            return None;
        }
        ids.push(compute_content_id(&m.file).ok()?);
    }
    Some(ids)
}

fn timed(args: &[&str]) -> Duration {
    let t = Instant::now();
    let st = Command::new(BIN)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "{args:?}");
    t.elapsed()
}

/// Run `args` and kill it after a random delay up to `span`; true when killed.
fn kill_at(args: &[String], span: Duration, rng: &mut Lcg) -> bool {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let micros = rng.below(span.as_micros() as u64 + 1);
    std::thread::sleep(Duration::from_micros(micros));
    let killed = matches!(child.try_wait(), Ok(None));
    let _ = child.kill();
    let _ = child.wait();
    killed
}

fn check(target: &Path, old: &[u8], want: &[String], what: &str) -> &'static str {
    let now = std::fs::read(target).unwrap_or_default();
    if now == old {
        return "old";
    }
    match complete(target) {
        Some(ids) if ids == want => "new",
        other => panic!(
            "{what}: {} is neither old nor new-complete ({other:?})",
            target.display()
        ),
    }
}

fn leftovers(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.starts_with('.') {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[test]
fn kill_minus_nine_leaves_old_or_new() {
    let dir = std::env::temp_dir().join(format!("purehdf-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = |n: &str| -> PathBuf { dir.join(n) };
    let s = |x: &PathBuf| x.to_str().unwrap().to_string();
    let (a, b) = (p("a.medh5"), p("b.medh5"));
    assert!(Command::new(BIN)
        .args(["demo", &s(&a), "--profile", "training"])
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success());
    assert!(Command::new(BIN)
        .args(["demo", &s(&b), "--profile", "portable"])
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success());
    let ids_a = complete(&a).unwrap();
    let ids_b = complete(&b).unwrap();
    let mut rng = Lcg(20261202);
    let mut tally = std::collections::BTreeMap::new();

    // recompress in place
    let work = p("w.medh5");
    std::fs::copy(&a, &work).unwrap();
    let span = timed(&["recompress", &s(&work), "--profile", "archive"]);
    for i in 0..KILLS {
        std::fs::copy(&a, &work).unwrap();
        let old = std::fs::read(&work).unwrap();
        let profile = ["archive", "portable", "balanced"][i % 3];
        let args = vec![
            "recompress".to_string(),
            s(&work),
            "--profile".into(),
            profile.into(),
        ];
        let killed = kill_at(&args, span + span / 4, &mut rng);
        let state = check(&work, &old, &ids_a, "recompress");
        *tally.entry(("recompress", state, killed)).or_insert(0) += 1;
    }

    // pack over an existing file
    let shard = p("s.medh5c");
    let span = timed(&["pack", &s(&a), &s(&b), "-o", &s(&shard)]);
    let want: Vec<String> = ids_a.iter().chain(&ids_b).cloned().collect();
    for _ in 0..KILLS {
        std::fs::copy(&b, &shard).unwrap();
        let old = std::fs::read(&shard).unwrap();
        let args = vec!["pack".to_string(), s(&a), s(&b), "-o".into(), s(&shard)];
        let killed = kill_at(&args, span + span / 4, &mut rng);
        let state = check(&shard, &old, &want, "pack");
        *tally.entry(("pack", state, killed)).or_insert(0) += 1;
    }

    // unpack over existing members
    let full = p("full.medh5c");
    assert!(Command::new(BIN)
        .args(["pack", &s(&a), &s(&b), "-o", &s(&full)])
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success());
    let out = p("out");
    let span = timed(&["unpack", &s(&full), "-o", &s(&out)]);
    for _ in 0..KILLS {
        std::fs::copy(&b, out.join("a.medh5")).unwrap();
        std::fs::copy(&a, out.join("b.medh5")).unwrap();
        let old_a = std::fs::read(out.join("a.medh5")).unwrap();
        let old_b = std::fs::read(out.join("b.medh5")).unwrap();
        let args = vec!["unpack".to_string(), s(&full), "-o".into(), s(&out)];
        let killed = kill_at(&args, span + span / 4, &mut rng);
        let sa = check(&out.join("a.medh5"), &old_a, &ids_a, "unpack a");
        let sb = check(&out.join("b.medh5"), &old_b, &ids_b, "unpack b");
        *tally
            .entry(("unpack", if sa == sb { sa } else { "mixed" }, killed))
            .or_insert(0) += 1;
        leftovers(&out);
    }
    leftovers(&dir);
    let summary: Vec<String> = tally
        .iter()
        .map(|((c, s, k), n)| format!("{c} {s}{} {n}", if *k { " (killed)" } else { "" }))
        .collect();
    println!(
        "medh5 kill: {} kill -9 runs, every target old or new-complete: {}",
        3 * KILLS,
        summary.join(", ")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
