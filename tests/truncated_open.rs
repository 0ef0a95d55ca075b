//! A file shorter than the end-of-file address in its superblock is refused
//! at open, with both sizes, as libhdf5 refuses it (issue 47 item 6); the
//! caller who asks (`File::open_truncated`) reads what is there.

mod common;

use purehdf::{DatasetSpec, Error, File, FileWriter};

/// A file with a small dataset near the start and a big one after it.
fn two_datasets(path: &std::path::Path) {
    let mut w = FileWriter::create(path).unwrap();
    let small: Vec<i32> = (0..16).collect();
    w.write_dataset(w.root(), "small", DatasetSpec::of::<i32>(&[16]), &small)
        .unwrap();
    let big: Vec<f64> = (0..20_000).map(f64::from).collect();
    w.write_dataset(w.root(), "big", DatasetSpec::of::<f64>(&[20_000]), &big)
        .unwrap();
    w.commit().unwrap();
}

/// The part of an h5py open error that names the sizes, if the oracle is here.
fn h5py_open_error(path: &std::path::Path) -> Option<String> {
    let py = common::oracle_python()?;
    let out = std::process::Command::new(py)
        .arg("-c")
        .arg("import sys, h5py\ntry:\n h5py.File(sys.argv[1], 'r')\n print('opened')\nexcept OSError as e:\n print(e)")
        .arg(path)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let at = text.find("truncated file:")?;
    Some(text[at..].trim_end_matches(')').to_string())
}

#[test]
fn a_cut_file_is_refused_with_both_sizes() {
    let dir = std::env::temp_dir().join(format!("purehdf-trunc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cut.h5");
    two_datasets(&path);
    let whole = std::fs::read(&path).unwrap();
    let cut = whole.len() - 4096;
    std::fs::write(&path, &whole[..cut]).unwrap();

    let err = File::open(&path).expect_err("a cut file must be refused");
    match &err {
        Error::TruncatedFile {
            eof,
            base,
            stored_eof,
            len,
        } => {
            assert_eq!(*len, cut as u64);
            assert_eq!(*eof, cut as u64);
            assert_eq!(*base, 0);
            assert_eq!(*stored_eof, whole.len() as u64);
        }
        other => panic!("expected TruncatedFile, got {other:?}"),
    }
    let ours = err.to_string();
    match h5py_open_error(&path) {
        Some(theirs) => {
            assert!(ours.contains(&theirs), "ours: {ours}\nh5py: {theirs}");
            println!("truncated open: h5py says `{theirs}`, so do we");
        }
        None => println!("skipped: h5py comparison (no oracle venv)"),
    }
    // Both binaries refuse it too, naming the sizes.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_h5"))
        .args(["ls"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("stored_eof"));

    // Our writer puts metadata last, so a cut copy of ours has lost its root
    // group; asked to, we still open it and say where the bytes end.
    let f = File::open_truncated(&path).unwrap();
    match f.root() {
        Err(Error::InObject { path, source }) => {
            assert_eq!(path, "/");
            assert!(matches!(*source, Error::Truncated { .. }), "{source}");
        }
        other => panic!("expected a truncated root header, got {other:?}"),
    }
    read_what_is_there(&dir);

    // The whole file opens as ever.
    std::fs::write(&path, &whole).unwrap();
    assert_eq!(
        File::open(&path)
            .unwrap()
            .root()
            .unwrap()
            .dataset("big")
            .unwrap()
            .read::<f64>()
            .unwrap()[19_999],
        19_999.0
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// An h5py file (metadata first, data after it) cut inside its last
/// dataset: `open_truncated` reads the datasets that lie inside the file and
/// gives a typed error for the one that does not.
fn read_what_is_there(dir: &std::path::Path) {
    let Some(py) = common::oracle_python() else {
        println!("skipped: read_what_is_there (no oracle venv)");
        return;
    };
    let path = dir.join("h5py.h5");
    let script = "import sys, h5py, numpy as np\nwith h5py.File(sys.argv[1], 'w') as f:\n f['small'] = np.arange(16, dtype='<i4')\n f['big'] = np.arange(20000, dtype='<f8')\n";
    common::run_ok(
        std::process::Command::new(py)
            .arg("-c")
            .arg(script)
            .arg(&path),
    );
    let whole = std::fs::read(&path).unwrap();
    std::fs::write(&path, &whole[..whole.len() - 4096]).unwrap();
    assert!(matches!(
        File::open(&path),
        Err(Error::TruncatedFile { .. })
    ));
    let f = File::open_truncated(&path).unwrap();
    let root = f.root().unwrap();
    let small = root.dataset("small").unwrap().read::<i32>().unwrap();
    assert_eq!(small, (0..16).collect::<Vec<i32>>());
    assert!(root.dataset("big").and_then(|d| d.read::<f64>()).is_err());
    println!("truncated open: an h5py file cut in its data reads what is there");
}

/// The corpus's cut files: libhdf5's recorded open error is ours, word for word.
#[test]
fn corpus_cut_files_say_what_libhdf5_says() {
    let Some(dir) = common::corpus_dir() else {
        println!("skipped: corpus_cut_files_say_what_libhdf5_says (no ../shared/corpus)");
        return;
    };
    let mut seen = 0;
    for r in common::read_manifest(&dir) {
        let rel = r.get("path").cloned().unwrap_or_default();
        let Some(exp) = common::load_json(&dir.join("expected").join(format!("{rel}.json"))) else {
            continue;
        };
        let Some(open_error) = exp.get("open_error").and_then(|v| v.as_str()) else {
            continue;
        };
        let Some(at) = open_error.find("truncated file:") else {
            continue;
        };
        let theirs = open_error[at..].trim_end_matches(')');
        let err = File::open(dir.join(&rel))
            .err()
            .unwrap_or_else(|| panic!("{rel}: opened a file libhdf5 refuses"));
        assert!(
            err.to_string().contains(theirs),
            "{rel}: ours `{err}`, libhdf5 `{theirs}`"
        );
        seen += 1;
    }
    println!("truncated open: {seen} corpus files refused as libhdf5 refuses them");
    assert!(seen >= 3, "the corpus has three cut files, saw {seen}");
}
