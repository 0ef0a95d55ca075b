//! Issue 16 item 1: a file that changes underneath a reader. Truncated in place
//! while mapped (the IatroCache SIGBUS defect) or while read positionally, the
//! reader ends in a typed error or the data as it was, never a signal; replaced
//! by rename, a held handle reads its old snapshot, `is_replaced()` says so and
//! `reopen()` refuses with `StaleSnapshot`. The CLI part truncates the file
//! under `medh5 bench-op read-full` and `h5 dump` and asserts the processes end
//! with an exit code, not a signal.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use purehdf::low_level::datatype::Datatype;
use purehdf::low_level::write::{DatasetSpec, FileWriter};
use purehdf::{Error, File, Object, Selection};

const N: usize = 48 << 20;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-changes-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn pattern(seed: u8) -> Vec<u8> {
    (0..N)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3] ^ seed)
        .collect()
}

/// One contiguous u8 dataset `data` of `N` bytes and one chunked copy `chunked`.
fn write_file(path: &Path, seed: u8) -> Vec<u8> {
    let data = pattern(seed);
    let mut w = FileWriter::create(path).unwrap();
    let r = w.root();
    let t = Datatype::int(1, false);
    w.create_dataset(
        r,
        "data",
        DatasetSpec::new(t.clone(), &[N as u64]),
        data.clone(),
    )
    .unwrap();
    w.create_dataset(
        r,
        "chunked",
        DatasetSpec::new(t, &[N as u64]).chunked(&[1 << 20], Vec::new()),
        data.clone(),
    )
    .unwrap();
    w.commit().unwrap();
    data
}

fn dataset(f: &File, name: &str) -> purehdf::Dataset {
    match f.object(name).unwrap() {
        Object::Dataset(d) => *d,
        _ => panic!("{name} is not a dataset"),
    }
}

/// Readers on `f` loop over both datasets while the file is truncated in place;
/// returns (equal reads, typed errors after the truncation).
fn truncate_under(f: File, path: &Path, want: Arc<Vec<u8>>) -> (usize, usize) {
    // Before the truncation both datasets read back exactly.
    for name in ["data", "chunked"] {
        let v = dataset(&f, name)
            .read_raw_vec_uncached(&Selection::All)
            .unwrap();
        assert!(v == *want, "{name}: the unchanged file reads other bytes");
    }
    let truncated = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for name in ["data", "chunked"] {
        let (f, want, truncated) = (f.clone(), want.clone(), truncated.clone());
        handles.push(std::thread::spawn(move || {
            let d = dataset(&f, name);
            let (mut ok, mut errs_after) = (0usize, 0usize);
            let t0 = Instant::now();
            loop {
                let was_truncated = truncated.load(Ordering::SeqCst);
                match d.read_raw_vec_uncached(&Selection::All) {
                    Ok(v) => {
                        assert!(v == *want, "{name}: a read returned other bytes");
                        ok += 1;
                    }
                    Err(e) => {
                        assert!(
                            matches!(
                                e,
                                Error::SourceChanged(_)
                                    | Error::Io { .. }
                                    | Error::Truncated { .. }
                                    | Error::Chunk { .. }
                            ),
                            "{name}: unexpected error {e}"
                        );
                        errs_after += 1;
                    }
                }
                if was_truncated && errs_after >= 3 {
                    break;
                }
                assert!(t0.elapsed() < Duration::from_secs(60), "{name}: no error");
            }
            (ok, errs_after)
        }));
    }
    std::thread::sleep(Duration::from_millis(150));
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(4096)
        .unwrap();
    truncated.store(true, Ordering::SeqCst);
    let mut tot = (0, 0);
    for h in handles {
        let (a, b) = h.join().expect("reader thread panicked");
        tot.0 += a;
        tot.1 += b;
    }
    // Once the file has shrunk, everything after refuses: never silent zeros.
    let again = match f.object("data") {
        Ok(Object::Dataset(d)) => d.read_raw_vec(&Selection::All).map(|_| ()),
        Ok(_) => panic!("data is not a dataset"),
        Err(e) => Err(e),
    };
    assert!(again.is_err(), "a read after the truncation succeeded");
    tot
}

#[test]
fn truncation_under_a_mapped_reader_is_a_typed_error() {
    let dir = scratch("mmap");
    let p = dir.join("f.h5");
    let want = Arc::new(write_file(&p, 0));
    let f = File::open(&p).unwrap();
    let (ok, errs) = truncate_under(f.clone(), &p, want);
    assert!(
        matches!(f.check_unchanged(), Err(Error::SourceChanged(_)))
            || cfg!(not(target_os = "linux"))
    );
    println!("file changes (mmap): {ok} full reads equal, {errs} typed errors after truncation, 0 signals");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn truncation_under_a_pread_reader_is_a_typed_error() {
    let dir = scratch("pread");
    let p = dir.join("f.h5");
    let want = Arc::new(write_file(&p, 1));
    let f = File::open_pread(&p).unwrap();
    let (ok, errs) = truncate_under(f, &p, want);
    println!("file changes (pread): {ok} full reads equal, {errs} typed errors after truncation");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replacement_keeps_the_snapshot_and_reopen_refuses() {
    let dir = scratch("replace");
    let p = dir.join("f.h5");
    let old = write_file(&p, 2);
    for mapped in [true, false] {
        let f = if mapped {
            File::open(&p).unwrap()
        } else {
            File::open_pread(&p).unwrap()
        };
        assert!(!f.is_replaced());
        let same = f.reopen().unwrap();
        assert_eq!(same.identity(), f.identity());
        let new = write_file(&p, if mapped { 3 } else { 4 });
        assert_ne!(new, old);
        assert!(f.is_replaced());
        // The held handle reads its own snapshot (the old inode), consistently.
        for name in ["data", "chunked"] {
            let d = dataset(&f, name);
            assert!(
                d.read_raw_vec(&Selection::All).unwrap() == old,
                "{name} mixed snapshots"
            );
        }
        assert!(matches!(f.reopen(), Err(Error::StaleSnapshot(_))));
        let fresh = File::open(&p).unwrap();
        assert!(
            dataset(&fresh, "data")
                .read_raw_vec(&Selection::All)
                .unwrap()
                == new
        );
        // put the old content back for the next round
        write_file(&p, 2);
    }
    println!("file changes (replace): old snapshot read, is_replaced, reopen -> StaleSnapshot");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Run `cmd` on `path`, truncate `path` in place after `delay`, and return how
/// the process ended (it must be an exit code, never a signal).
fn truncate_under_cli(exe: &str, args: &[&str], path: &Path, delay: Duration) -> i32 {
    let mut child = Command::new(exe)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    if let Ok(f) = std::fs::OpenOptions::new().write(true).open(path) {
        let _ = f.set_len(1000);
    }
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                assert!(
                    st.signal().is_none(),
                    "{args:?} killed by signal {:?}",
                    st.signal()
                );
            }
            return st.code().unwrap_or(-1);
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{args:?} did not finish");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn truncation_under_the_cli_never_kills_it() {
    let dir = scratch("cli");
    let p = dir.join("f.h5");
    let ps = p.to_str().unwrap().to_string();
    let h5 = env!("CARGO_BIN_EXE_h5");
    let medh5 = env!("CARGO_BIN_EXE_medh5");
    let mut codes = Vec::new();
    for (i, delay) in [5u64, 20, 60].into_iter().enumerate() {
        write_file(&p, 10 + i as u8);
        codes.push(truncate_under_cli(
            h5,
            &["dump", "--json", &ps],
            &p,
            Duration::from_millis(delay),
        ));
    }
    // a medh5 sample with an uncompressed 24 MiB image, read whole 200 times
    let img = dir.join("img.npy");
    let lab = dir.join("lab.npy");
    let shape = [96u64, 256, 512];
    let n = shape.iter().product::<u64>() as usize;
    let mut b = Vec::new();
    let imgv: Vec<u8> = (0..n)
        .flat_map(|i| ((i % 3000) as i16 - 1000).to_le_bytes())
        .collect();
    purehdf_medh5::npy::write(&mut b, "<i2", &shape, &imgv).unwrap();
    std::fs::write(&img, &b).unwrap();
    b.clear();
    let labv: Vec<u8> = (0..n).map(|i| (i / 100_000 % 6) as u8).collect();
    purehdf_medh5::npy::write(&mut b, "|u1", &shape, &labv).unwrap();
    std::fs::write(&lab, &b).unwrap();
    let s = dir.join("s.medh5");
    let ss = s.to_str().unwrap().to_string();
    for (i, delay) in [30u64, 120].into_iter().enumerate() {
        let w = Command::new(medh5)
            .args([
                "bench-op",
                "write",
                "--image",
                img.to_str().unwrap(),
                "--label",
            ])
            .args([lab.to_str().unwrap(), "--profile", "portable", "--out", &ss])
            .args(["--repeats", "1", "--warmup", "0"])
            .output()
            .unwrap();
        assert!(w.status.success(), "{}", String::from_utf8_lossy(&w.stderr));
        let args = [
            "bench-op",
            "read-full",
            &ss,
            "--repeats",
            "200",
            "--warmup",
            "0",
        ];
        codes.push(truncate_under_cli(
            medh5,
            &args,
            &s,
            Duration::from_millis(delay),
        ));
        if i == 0 {
            std::fs::remove_file(&s).unwrap();
        }
    }
    println!("file changes (cli): h5 dump and medh5 bench-op read-full under truncation exited with codes {codes:?}, 0 signals");
    let _ = std::fs::remove_dir_all(&dir);
}
