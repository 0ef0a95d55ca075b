//! Errors name the object they come from: a damaged chunk's error carries the
//! dataset's path (not the chunk index's address), and a damaged or cut
//! object header's error the object's path, the structure and its offset
//! (issue 48): an h5py file is damaged at one place each time (a byte of an
//! object header's checksum, a byte of a chunk, the tail).

mod common;

use purehdf::{DatasetSpec, Error, File, FileWriter, Filter};
use std::path::{Path, PathBuf};

/// A file with `/g/ct` (deflate-compressed chunks) and where its first
/// chunk's stored bytes start.
fn file_with_chunks() -> (Vec<u8>, u64) {
    let mut w = FileWriter::in_memory();
    let g = w.create_group(w.root(), "g").unwrap();
    let data: Vec<i32> = (0..4096).map(|i| (i * 7) % 1000).collect();
    let spec =
        DatasetSpec::of::<i32>(&[64, 64]).chunked(&[32, 32], vec![Filter::deflate(6).unwrap()]);
    w.write_dataset(g, "ct", spec, &data).unwrap();
    let bytes = w.finish().unwrap();
    let f = File::from_bytes(bytes.clone()).unwrap();
    let ds = f.root().unwrap().dataset("g/ct").unwrap();
    let first = ds.chunks().unwrap()[0].address;
    (bytes, first)
}

#[test]
fn a_damaged_chunk_names_the_dataset_path() {
    let (mut bytes, at) = file_with_chunks();
    // Overwrite the deflate stream's header and first block.
    for b in &mut bytes[at as usize..at as usize + 16] {
        *b = 0xFF;
    }
    let f = File::from_bytes(bytes).unwrap();
    let ds = f.root().unwrap().dataset("g/ct").unwrap();
    let err = ds.read::<i32>().unwrap_err();
    match &err {
        Error::Chunk {
            dataset, coords, ..
        } => {
            assert_eq!(dataset, "/g/ct");
            assert_eq!(coords, &vec![0, 0]);
        }
        other => panic!("expected a chunk error, got {other:?}"),
    }
    assert!(err.to_string().contains("/g/ct"), "{err}");
}

/// Writes `/a/b` (64 int32 in chunks of 16 with Fletcher-32, one attribute)
/// with h5py's latest format (object headers with checksums) and returns the
/// first chunk's byte offset; `None` without the oracle.
fn h5py_file(path: &Path) -> Option<u64> {
    let py = common::oracle_python()?;
    let script = "import sys, h5py, numpy as np\n\
        with h5py.File(sys.argv[1], 'w', libver='latest') as f:\n \
        d = f.create_group('a').create_dataset('b', data=np.arange(64, dtype='<i4'), chunks=(16,), fletcher32=True)\n \
        d.attrs['units'] = 'mm'\n\
        with h5py.File(sys.argv[1], 'r') as f:\n \
        print(f['/a/b'].id.get_chunk_info(0).byte_offset)\n";
    let out = common::run_ok(
        std::process::Command::new(py)
            .args(["-c", script])
            .arg(path),
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("purehdf-errpaths-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Offset of the checksum closing chunk 0 of the version-2 object header at
/// `addr` (signature, version, flags, optional times and attribute phase,
/// chunk size of 1 << (flags & 3) bytes, the messages, the checksum).
fn header_checksum_at(bytes: &[u8], addr: usize) -> usize {
    assert_eq!(
        &bytes[addr..addr + 4],
        b"OHDR",
        "an object header at {addr:#x}"
    );
    let flags = bytes[addr + 5];
    let mut at = addr + 6;
    if flags & 0x20 != 0 {
        at += 16;
    }
    if flags & 0x10 != 0 {
        at += 4;
    }
    let width = 1usize << (flags & 3);
    let mut size = 0usize;
    for k in 0..width {
        size |= usize::from(bytes[at + k]) << (8 * k);
    }
    at + width + size
}

#[test]
fn damage_names_the_object_path_structure_and_offset() {
    let good = scratch("good.h5");
    let Some(chunk) = h5py_file(&good) else {
        println!("skipped: no oracle venv (h5py writes the damaged files)");
        return;
    };
    let bytes = std::fs::read(&good).unwrap();
    let header = File::open(&good).unwrap().object("/a/b").unwrap().address();
    let header = usize::try_from(header).unwrap();

    // An object header's checksum byte.
    let sum = header_checksum_at(&bytes, header);
    let mut bad = bytes.clone();
    bad[sum] ^= 0xff;
    let p = scratch("bad-header.h5");
    std::fs::write(&p, &bad).unwrap();
    let f = File::open(&p).unwrap();
    let e = f
        .object("/a/b")
        .expect_err("a damaged header must be refused");
    let msg = e.to_string();
    println!("damaged header: {msg}");
    match &e {
        Error::InObject { path, source } => {
            assert_eq!(path, "/a/b");
            assert!(
                matches!(**source, Error::Checksum { offset, .. } if offset == header as u64),
                "{source:?}"
            );
        }
        other => panic!("expected InObject, got {other:?}"),
    }
    assert!(msg.starts_with("/a/b: "), "{msg}");
    assert!(msg.contains("object header"), "{msg}");
    assert!(msg.contains(&format!("{header:#x}")), "{msg}");
    // The group above it still opens.
    assert!(f.object("/a").is_ok());

    // A chunk byte: Fletcher-32 catches it, the error names the dataset.
    let mut bad = bytes.clone();
    bad[usize::try_from(chunk).unwrap() + 5] ^= 0x01;
    let p = scratch("bad-chunk.h5");
    std::fs::write(&p, &bad).unwrap();
    let d = File::open(&p)
        .unwrap()
        .root()
        .unwrap()
        .dataset("a/b")
        .unwrap();
    let e = d
        .read::<i32>()
        .expect_err("a damaged chunk must be refused");
    let msg = e.to_string();
    println!("damaged chunk: {msg}");
    match &e {
        Error::Chunk {
            dataset, coords, ..
        } => {
            assert_eq!(dataset, "/a/b");
            assert_eq!(coords, &[0]);
        }
        other => panic!("expected Chunk, got {other:?}"),
    }
    assert!(msg.contains("/a/b") && msg.contains("chunk [0]"), "{msg}");
    assert!(msg.to_lowercase().contains("fletcher"), "{msg}");

    // The tail: cut inside /a/b's header. The open names both sizes; asked
    // to read what is there, /a opens and /a/b names itself.
    let cut = header + 20;
    let p = scratch("cut.h5");
    std::fs::write(&p, &bytes[..cut]).unwrap();
    let e = File::open(&p).expect_err("a cut file must be refused");
    let msg = e.to_string();
    println!("cut file: {msg}");
    assert!(msg.contains(&format!("the file has {cut} bytes")), "{msg}");
    assert!(msg.contains(&format!("ends at {}", bytes.len())), "{msg}");
    let f = File::open_truncated(&p).unwrap();
    assert!(f.object("/a").is_ok());
    let e = f.object("/a/b").expect_err("a cut header must be refused");
    let msg = e.to_string();
    println!("cut header: {msg}");
    match &e {
        Error::InObject { path, source } => {
            assert_eq!(path, "/a/b");
            assert!(matches!(**source, Error::Truncated { .. }), "{source:?}");
        }
        other => panic!("expected InObject, got {other:?}"),
    }
    assert!(
        msg.starts_with("/a/b: ") && msg.contains(&format!("{header:#x}")),
        "{msg}"
    );
    std::fs::remove_dir_all(good.parent().unwrap()).ok();
}
