//! The IatroCache rows of `docs/neighbours.md` about building and opening
//! files: I8 (immutable atomic build, sane permissions), I10 (truncated or
//! hostile files refused, a positional-read mode that survives truncation)
//! and I12 (a `.medh5c` collection of 1,000 small samples). Needs no oracle.

use std::path::{Path, PathBuf};

use purehdf::low_level::write::inject_failure_after;
use purehdf::{AttrValue, DatasetSpec, Error, File, FileWriter};
use purehdf_medh5::collection;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-iatro-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn temporaries(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp-")
        })
        .count()
}

fn build(path: &Path, seed: u8, new: bool) -> purehdf::Result<()> {
    let mut w = if new {
        FileWriter::create_new(path)?
    } else {
        FileWriter::create(path)?
    };
    let root = w.root();
    let data: Vec<u8> = (0..4096u32).map(|i| (i as u8).wrapping_add(seed)).collect();
    w.write_dataset(root, "records", DatasetSpec::of::<u8>(&[4096]), &data)?;
    w.set_attr(root, "seed", AttrValue::scalar(seed))?;
    w.commit()
}

fn is_exists(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists)
}

/// I8: `create_new` refuses an existing target (also one that appears
/// during the build), a new file under umask 022 is 0644 (not 0600), an
/// overwrite keeps the old mode, and a failed build leaves the previous file.
#[test]
fn i8_create_new_refuses_existing_and_builds_with_sane_modes() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("i8");
    let p = dir.join("cache.h5");
    // SAFETY: umask only reads and sets this process's file-creation mask;
    // no other test of this binary looks at the modes of the files it makes.
    let old_mask = unsafe { libc::umask(0o022) };
    build(&p, 1, true).unwrap();
    let new_mode = mode(&p);
    // SAFETY: as above, restoring the mask.
    unsafe { libc::umask(old_mask) };
    assert_eq!(new_mode, 0o644, "umask 022 -> 0644");
    let before = std::fs::read(&p).unwrap();
    // exists without overwrite -> typed error, at creation
    match build(&p, 2, true) {
        Err(e) => assert!(is_exists(&e), "{e}"),
        Ok(()) => panic!("create_new replaced an existing file"),
    }
    assert_eq!(std::fs::read(&p).unwrap(), before);
    // a target that appears while the build runs -> refused at commit
    let q = dir.join("late.h5");
    let mut w = FileWriter::create_new(&q).unwrap();
    let root = w.root();
    w.set_attr(root, "x", AttrValue::scalar(1i64)).unwrap();
    std::fs::write(&q, b"someone else's").unwrap();
    match w.commit() {
        Err(e) => assert!(is_exists(&e), "{e}"),
        Ok(()) => panic!("create_new replaced a file created meanwhile"),
    }
    assert_eq!(std::fs::read(&q).unwrap(), b"someone else's");
    assert_eq!(temporaries(&dir), 0);
    // a dangling symlink counts as existing
    let link = dir.join("link.h5");
    std::os::unix::fs::symlink(dir.join("nowhere.h5"), &link).unwrap();
    assert!(build(&link, 3, true).is_err_and(|e| is_exists(&e)));
    assert!(!dir.join("nowhere.h5").exists());
    // overwrite (the default writer) keeps the old mode
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    build(&p, 4, false).unwrap();
    assert_eq!(mode(&p), 0o640);
    let now = std::fs::read(&p).unwrap();
    // a failed build leaves the previous file and no temporary
    let mut w = FileWriter::create(&p).unwrap();
    inject_failure_after(&mut w, 512);
    let root = w.root();
    let big = vec![7u8; 1 << 20];
    let failed = w
        .write_dataset(root, "records", DatasetSpec::of::<u8>(&[1 << 20]), &big)
        .and_then(|_| w.commit());
    assert!(failed.is_err(), "the injected failure surfaces");
    assert_eq!(std::fs::read(&p).unwrap(), now, "previous file intact");
    assert_eq!(temporaries(&dir), 0);
    let f = File::open(&p).unwrap();
    assert_eq!(
        f.root()
            .unwrap()
            .attribute("seed")
            .unwrap()
            .read_scalar::<u8>()
            .unwrap(),
        4
    );
    println!("I8: create_new refuses an existing target (before and during the build) with AlreadyExists; new file 0644 under umask 022; overwrite keeps 0640; a failed build leaves the previous file");
    let _ = std::fs::remove_dir_all(&dir);
}

/// I10: a truncated file is refused at open with a typed error naming the
/// stored end of file; in positional-read mode (and mapped mode, whose
/// SIGBUS is guarded) a file truncated under an open reader gives a typed
/// error and the process lives on; hostile bytes give typed errors.
#[test]
fn i10_truncated_and_hostile_files_are_typed_errors() {
    let dir = scratch("i10");
    let p = dir.join("cache.h5");
    let mut w = FileWriter::create(&p).unwrap();
    let root = w.root();
    let data: Vec<f32> = (0..(1 << 18)).map(|i| i as f32).collect();
    w.write_dataset(
        root,
        "rows",
        DatasetSpec::of::<f32>(&[1 << 10, 1 << 8]),
        &data,
    )
    .unwrap();
    w.commit().unwrap();
    let full = std::fs::read(&p).unwrap();
    let len = full.len() as u64;
    // truncated copies: refused at open, naming the offset
    let cut = dir.join("cut.h5");
    let mut refused = 0;
    for n in (0..64u64).map(|i| i * len / 64).chain([len - 1, 100, 47]) {
        std::fs::write(&cut, &full[..n as usize]).unwrap();
        match File::open(&cut) {
            Err(Error::TruncatedFile {
                stored_eof,
                len: got,
                ..
            }) => {
                assert_eq!((stored_eof, got), (len, n));
                let text = Error::TruncatedFile {
                    eof: n,
                    base: 0,
                    stored_eof,
                    len: got,
                }
                .to_string();
                assert!(text.contains(&len.to_string()), "{text}");
                refused += 1;
            }
            Err(_) if n < 48 => refused += 1, // no complete superblock
            other => panic!("{n} of {len} bytes: {:?}", other.map(|_| ())),
        }
    }
    assert_eq!(refused, 67);
    // positional reads: truncate under an open reader -> typed error
    for (label, f) in [
        ("pread", File::open_pread(&p).unwrap()),
        ("mapped", File::open(&p).unwrap()),
    ] {
        let d = f.root().unwrap().dataset("rows").unwrap();
        assert_eq!(d.read::<f32>().unwrap()[1000], 1000.0);
        let fh = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        fh.set_len(4096).unwrap();
        let r = d.read_all_raw();
        match r {
            Err(Error::Io { .. } | Error::SourceChanged(_) | Error::Truncated { .. }) => {}
            other => panic!("{label}: read after truncation: {:?}", other.map(|_| ())),
        }
        std::fs::write(&p, &full).unwrap();
        println!(
            "I10 {label}: truncated under the reader -> {}",
            r.unwrap_err()
        );
    }
    // hostile bytes in the metadata: typed errors or values, never a panic
    let hostile = dir.join("hostile.h5");
    let mut errors = 0;
    for i in 0..512usize {
        let mut b = full.clone();
        let at = (i * 7) % 2048;
        b[at] ^= 0x5A;
        std::fs::write(&hostile, &b).unwrap();
        let r = std::panic::catch_unwind(|| {
            File::open_pread(&hostile).and_then(|f| {
                f.root()?.dataset("rows")?.read::<f32>()?;
                Ok(())
            })
        });
        match r {
            Ok(Ok(())) => {}
            Ok(Err(_)) => errors += 1,
            Err(_) => panic!("panic with byte {at} flipped"),
        }
    }
    assert!(errors > 0);
    println!("I10: 67 truncated copies refused at open; 512 flipped metadata bytes -> {errors} typed errors, no panic");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Write one small sample `i`: a 32×32×32 int16 CT (64 KiB, the smallest
/// the profiles chunk) with its own values.
fn small_sample(dir: &Path, i: usize) -> PathBuf {
    let npy = dir.join(format!("ct{i}.npy"));
    let vals: Vec<u8> = (0..=32767i16)
        .flat_map(|v| v.wrapping_mul(3).wrapping_add(i as i16).to_le_bytes())
        .collect();
    let mut f = std::fs::File::create(&npy).unwrap();
    purehdf_medh5::npy::write(&mut f, "<i2", &[32, 32, 32], &vals).unwrap();
    let m = serde_json::json!({
        "sample_id": format!("s{i:04}"), "subject_id": format!("SUBJ-{i}"), "profile": "balanced",
        "grids": {"ct": {"shape": [32, 32, 32], "spacing": [1.0, 1.0, 1.0], "origin": [0.0, 0.0, 0.0],
                         "chunk_hint": [16, 16, 16]}},
        "images": {"CT": {"grid": "ct", "npy": npy.file_name().unwrap().to_str().unwrap(), "modality": "CT"}}
    });
    let (s, prof) = purehdf_medh5::create::sample_from_manifest(&m, dir).unwrap();
    let plan = purehdf_medh5::create::plan(s, prof, None).unwrap();
    let out = dir.join(format!("s{i:04}.medh5"));
    purehdf_medh5::writer::write_plan(&plan, &out).unwrap();
    std::fs::remove_file(&npy).unwrap();
    out
}

/// Every dataset's raw chunks (path, coords, mask, stored bytes) in visit
/// order; an unchunked dataset counts as one piece holding its bytes.
fn raw_chunks(path: &Path) -> Vec<(String, Vec<u64>, u32, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let f = File::open(path).unwrap();
    let mut out = Vec::new();
    f.root()
        .unwrap()
        .visit(|p, obj| {
            if let purehdf::Object::Dataset(d) = obj {
                if d.chunk_dims().is_some() {
                    for c in d.chunks()? {
                        let (a, n) = (c.address as usize, c.size as usize);
                        out.push((
                            p.to_string(),
                            c.coords,
                            c.filter_mask,
                            bytes[a..a + n].to_vec(),
                        ));
                    }
                } else {
                    // compact and contiguous data: the values as one piece
                    let bytes = if d.dtype().is_string() {
                        d.read::<String>()?.join("\0").into_bytes()
                    } else {
                        d.read_all_raw()?
                    };
                    out.push((p.to_string(), Vec::new(), 0, bytes));
                }
            }
            Ok(())
        })
        .unwrap();
    out
}

/// I12: 1,000 small samples packed into one `.medh5c`: `ls` lists them all,
/// random members read equal to their originals, and unpack gives every
/// sample back chunk for chunk.
#[test]
fn i12_collection_of_1000_members() {
    let dir = scratch("i12");
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let n = 1000;
    let t = std::time::Instant::now();
    let sources: Vec<PathBuf> = (0..n).map(|i| small_sample(&src, i)).collect();
    let made = t.elapsed();
    let shard = dir.join("many.medh5c");
    let t = std::time::Instant::now();
    collection::pack(&sources, &shard, &[]).unwrap();
    let packed = t.elapsed();
    let ls = collection::ls(&shard, "many.medh5c").unwrap();
    let members = ls["samples"].as_array().cloned().unwrap_or_default();
    assert_eq!(members.len(), n, "ls lists every member");
    let keys: Vec<String> = members
        .iter()
        .map(|m| m["key"].as_str().unwrap().to_string())
        .collect();
    let mut want: Vec<String> = (0..n).map(|i| format!("s{i:04}")).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    want.sort();
    assert_eq!(sorted, want);
    // random members read equal to the originals
    let file = File::open(&shard).unwrap();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..50 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let i = (x % n as u64) as usize;
        let member = collection::open_member(&file, &format!("s{i:04}")).unwrap();
        let orig = File::open(&sources[i]).unwrap();
        let read = |f: &File| {
            f.root()
                .unwrap()
                .dataset("images/CT")
                .unwrap()
                .read::<i16>()
                .unwrap()
        };
        let got = read(&member);
        assert_eq!(got, read(&orig), "member {i}");
        assert_eq!(got[5], 15 + i as i16);
    }
    // unpack: chunk for chunk identical
    let out = dir.join("out");
    let t = std::time::Instant::now();
    let written = collection::unpack(&shard, &out, &[]).unwrap();
    let unpacked = t.elapsed();
    assert_eq!(written.len(), n);
    let mut chunks = 0;
    for (i, s) in sources.iter().enumerate() {
        let a = raw_chunks(s);
        let b = raw_chunks(&out.join(format!("s{i:04}.medh5")));
        assert!(a.iter().any(|c| !c.1.is_empty()), "sample {i} has chunks");
        assert_eq!(a, b, "sample {i}: chunks differ after pack + unpack");
        chunks += a.iter().filter(|c| !c.1.is_empty()).count();
    }
    let size = std::fs::metadata(&shard).unwrap().len();
    println!(
        "I12: 1000 samples made in {made:.2?}, packed in {packed:.2?} ({size} bytes), unpacked in {unpacked:.2?}; ls lists 1000, 50 random members equal, {chunks} raw chunks (and every unchunked dataset) identical after unpack"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
