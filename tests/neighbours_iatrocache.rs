//! The IatroCache rows of `docs/neighbours.md` (`../shared/spec/neighbours.md`,
//! section 004), one test per row: I1 owned zero-copy views, I2 batch gather,
//! I3 record stores, I4 integrity on read, I5 row gather, I6 concurrent
//! readers, I7 batch decode, I9 the metadata cache keyed by file identity.
//! The h5py / numcodecs halves need the oracle venv (`scripts/oracle-venv.sh`)
//! and print `skipped: …` without it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use purehdf::low_level::meta_cache::{MetaCache, GLOBAL_BYTES, GLOBAL_ENTRIES};
use purehdf::low_level::records::{RecordCodec, RecordOptions, RecordStore, RecordWriter};
use purehdf::{DatasetSpec, Error, File, FileWriter};
use sha2::{Digest, Sha256};

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-iatro-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run `code` with the oracle python (`sys.argv[1:]` = `args`); stdout, or
/// `None` (after printing why) when there is no oracle.
fn python(code: &str, args: &[&str]) -> Option<String> {
    let py = common::oracle_python()?;
    let out = Command::new(py)
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "oracle script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

fn hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// A deterministic record: `i`'s bytes, `len` long (text-like so zstd compresses it).
fn record(i: u64, len: usize) -> Vec<u8> {
    let words = [
        &b"tile "[..],
        b"slide ",
        b"label=",
        b"0.25 ",
        b"tumour ",
        b"\n",
    ];
    let mut v = Vec::with_capacity(len);
    let mut k = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    while v.len() < len {
        k = k.rotate_left(7) ^ 0xA5;
        v.extend_from_slice(words[(k % 6) as usize]);
        v.push(b'0' + (k % 10) as u8);
    }
    v.truncate(len);
    v
}

fn build(path: &Path, n: u64, size: impl Fn(u64) -> usize, codec: RecordCodec) -> Vec<Vec<u8>> {
    let mut w = RecordWriter::create(
        path,
        RecordOptions {
            codec,
            payload_type: "text".into(),
            overwrite: true,
        },
    )
    .unwrap();
    let mut all = Vec::new();
    for i in 0..n {
        let r = record(i, size(i));
        assert_eq!(w.push(&r).unwrap(), i);
        all.push(r);
    }
    w.column("label", (0..n).map(|i| (i % 7) as i32).collect());
    w.finish().unwrap();
    all
}

const CHUNK_INDEX_PY: &str = r#"
import sys, json, hashlib, h5py, numpy as np
out = {}
for libver in ("earliest", "latest"):
    p = f"{sys.argv[1]}/idx-{libver}.h5"
    with h5py.File(p, "w", libver=libver) as f:
        a = np.arange(40 * 30, dtype="<i4").reshape(40, 30)
        f.create_dataset("btree_or_fixed", data=a, chunks=(8, 7), compression="gzip")
        f.create_dataset("implicit_or_fixed", data=a, chunks=(10, 10))
        d = f.create_dataset("ext", shape=(40, 30), maxshape=(None, 30), chunks=(9, 30), dtype="<i4", compression="gzip")
        d[...] = a
        d = f.create_dataset("v2", shape=(40, 30), maxshape=(None, None), chunks=(16, 16), dtype="<i4", fletcher32=True)
        d[...] = a
        f.create_dataset("single", data=a, chunks=(40, 30), compression="gzip")
        f.create_dataset("contig", data=a)
        if libver == "latest":
            # early allocation, no filter: the implicit index
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_chunk((10, 10))
            dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
            space = h5py.h5s.create_simple((40, 30))
            h5py.h5d.create(f.id, b"implicit", h5py.h5t.STD_I32LE, space, dcpl=dcpl)
            f["implicit"][...] = a
    with h5py.File(p, "r") as f:
        names = ["btree_or_fixed", "implicit_or_fixed", "ext", "v2", "single"]
        if libver == "latest":
            names.append("implicit")
        out[f"{libver}/names"] = names
        for name in names:
            d = f[name]
            rows = []
            for i in range(d.id.get_num_chunks()):
                info = d.id.get_chunk_info(i)
                mask, raw = d.id.read_direct_chunk(info.chunk_offset)
                rows.append([list(info.chunk_offset), mask, info.byte_offset, hashlib.sha256(raw).hexdigest()])
            out[f"{libver}/{name}"] = rows
        out[f"{libver}/contig"] = hashlib.sha256(f["contig"][...].tobytes()).hexdigest()
print(json.dumps(out))
"#;

#[test]
fn i1_views_lie_inside_the_mapping_and_equal_read_direct_chunk() {
    let dir = scratch("i1");
    let Some(out) = python(CHUNK_INDEX_PY, &[dir.to_str().unwrap()]) else {
        println!("skipped: no oracle python (h5py) for the chunk-index files");
        return;
    };
    let want: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut checked = 0;
    let mut kinds = std::collections::BTreeSet::new();
    for libver in ["earliest", "latest"] {
        let (views, contig) = {
            let file = File::open(dir.join(format!("idx-{libver}.h5"))).unwrap();
            let root = file.root().unwrap();
            let mut views = Vec::new();
            let names: Vec<String> = want[format!("{libver}/names")]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            for name in &names {
                let ds = root.dataset(name).unwrap();
                let kind = format!("{:?}", ds.chunk_params().unwrap().kind);
                kinds.insert(kind.split([' ', '{']).next().unwrap().to_string());
                let reader = ds.chunk_reader().unwrap();
                let rows = want[format!("{libver}/{name}")].as_array().unwrap().clone();
                for row in rows {
                    let offset: Vec<u64> = row[0]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_u64().unwrap())
                        .collect();
                    let coords: Vec<u64> = offset
                        .iter()
                        .zip(ds.chunk_dims().unwrap())
                        .map(|(o, c)| o / c)
                        .collect();
                    let v = reader.chunk_view(&coords, true).unwrap().unwrap();
                    assert_eq!(u64::from(v.filter_mask), row[1].as_u64().unwrap());
                    views.push((format!("{libver}/{name}{coords:?}"), v, row[3].clone()));
                }
            }
            let c = root
                .dataset("contig")
                .unwrap()
                .contiguous_view()
                .unwrap()
                .unwrap();
            // the mapping's address range, taken while the file is open
            let all = file.source().as_slice().unwrap().as_ptr_range();
            let (lo, hi) = (all.start as usize, all.end as usize);
            for (what, v, _) in &views {
                let p = v.bytes.as_ptr_range();
                assert!(v.bytes.is_shared(), "{what} was copied");
                assert!(
                    lo <= p.start as usize && p.end as usize <= hi,
                    "{what} outside the mapping"
                );
            }
            assert!(c.is_shared() && lo <= c.as_ptr() as usize);
            (views, c)
        };
        // File, datasets and readers are dropped: the views still hold the mapping.
        for (what, v, sha) in &views {
            assert_eq!(hex(&v.bytes), sha.as_str().unwrap(), "{what}");
            checked += 1;
        }
        assert_eq!(
            hex(&contig),
            want[format!("{libver}/contig")].as_str().unwrap()
        );
    }
    let every = [
        "BTreeV1",
        "BTreeV2",
        "ExtensibleArray",
        "FixedArray",
        "Implicit",
        "SingleChunk",
    ];
    assert_eq!(kinds.iter().map(String::as_str).collect::<Vec<_>>(), every);
    // 49 chunks per file, plus the 12 of the implicit index (latest)
    assert_eq!(checked, 2 * 49 + 12, "chunks compared");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn i2_read_records_keeps_order_duplicates_and_empty_records() {
    let dir = scratch("i2");
    let p = dir.join("r.h5");
    let sizes = [3usize, 0, 17, 1, 0, 9];
    let recs = build(&p, 6, |i| sizes[i as usize], RecordCodec::None);
    let s = RecordStore::open(&p).unwrap();
    let (buf, off) = s.read_records(&[5, 1, 5, 0], true).unwrap();
    assert_eq!(off, vec![0, 9, 9, 18, 21]);
    let want: Vec<u8> = [&recs[5][..], &recs[1][..], &recs[5][..], &recs[0][..]].concat();
    assert_eq!(buf, want);
    let (b2, o2) = s.read_records(&[4, 1], true).unwrap();
    assert!(b2.is_empty() && o2 == vec![0, 0, 0]);
    let views = s.views(&[5, 1, 5, 0], true).unwrap();
    assert_eq!(
        views.iter().map(|v| v.len()).collect::<Vec<_>>(),
        vec![9, 0, 9, 3]
    );
    assert_eq!(&views[3][..], &recs[0][..]);
    // out of range is a typed error; there are no negative indices
    assert!(matches!(
        s.read_records(&[6], false),
        Err(Error::InvalidArgument(_))
    ));
    assert!(s.record(u64::MAX, false).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

const I3_PY: &str = r#"
import sys, hashlib, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
data, off, ln = f["data"], f["offset"][...], f["length"][...]
rng = np.random.default_rng(3)
idx = rng.integers(0, len(off), 1000)
h = hashlib.sha256()
for i in idx:
    h.update(data[off[i]:off[i] + ln[i]].tobytes())
print(" ".join(str(i) for i in idx))
print(h.hexdigest())
print(f.attrs["format"], f.attrs["codec"], len(off), f["meta/label"][7], f["data"].id.get_offset() % 64)
"#;

#[test]
fn i3_record_store_of_100k_records_reads_in_h5py_and_data_is_aligned() {
    let dir = scratch("i3");
    let p = dir.join("store.h5");
    let recs = build(
        &p,
        100_000,
        |i| ((i * 37) % 200) as usize,
        RecordCodec::None,
    );
    let s = RecordStore::open(&p).unwrap();
    assert_eq!(s.len(), 100_000);
    assert_eq!(s.data_address() % 64, 0, "data at {}", s.data_address());
    assert_eq!(s.payload_type(), "text");
    assert_eq!(s.column("label").unwrap().read::<i32>().unwrap()[7], 0);
    // a second build refuses the existing target unless told to overwrite
    let again = RecordWriter::create(&p, RecordOptions::default());
    assert!(matches!(again, Err(Error::Io { .. })));
    let Some(out) = python(I3_PY, &[p.to_str().unwrap()]) else {
        println!("skipped: no oracle python (h5py) to read the store");
        return;
    };
    let lines: Vec<&str> = out.lines().collect();
    let idx: Vec<u64> = lines[0].split(' ').map(|t| t.parse().unwrap()).collect();
    let mut h = Sha256::new();
    for &i in &idx {
        h.update(&recs[i as usize]);
    }
    let ours: String = h.finalize().iter().map(|x| format!("{x:02x}")).collect();
    assert_eq!(
        lines[1], ours,
        "h5py's slices differ from the input records"
    );
    assert_eq!(lines[2], "purehdf.records none 100000 0 0");
    let _ = std::fs::remove_dir_all(&dir);
}

const I4_PY: &str = r#"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("x", data=np.arange(4 * 1000, dtype="<u4").reshape(4, 1000), chunks=(1, 1000), fletcher32=True)
"#;

const I4_READ_PY: &str = r#"
import sys, h5py
try:
    h5py.File(sys.argv[1], "r")["x"][...]
    print("read")
except OSError as e:
    print("refused")
"#;

#[test]
fn i4_flipped_bytes_fail_verified_reads_and_h5_verify_names_the_chunk() {
    let dir = scratch("i4");
    // a record: verified read names it, unverified returns the damaged bytes
    let p = dir.join("r.h5");
    let recs = build(&p, 50, |i| 100 + i as usize, RecordCodec::None);
    let at = {
        let s = RecordStore::open(&p).unwrap();
        let (buf, _) = s.read_records(&[17], true).unwrap();
        assert_eq!(buf, recs[17]);
        s.data_address()
            + s.read_records(&(0..17).collect::<Vec<_>>(), false)
                .unwrap()
                .0
                .len() as u64
    };
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[at as usize + 5] ^= 0x10;
    let bad = dir.join("bad-record.h5");
    std::fs::write(&bad, &bytes).unwrap();
    let s = RecordStore::open(&bad).unwrap();
    match s.read_records(&[3, 17], true) {
        Err(Error::RecordChecksum {
            record,
            stored,
            computed,
            ..
        }) => {
            assert_eq!(record, 17);
            assert_ne!(stored, computed);
        }
        other => panic!("{other:?}"),
    }
    let (raw, _) = s.read_records(&[17], false).unwrap();
    assert_eq!(raw.len(), recs[17].len());
    assert_ne!(raw, recs[17]);
    let h5 = env!("CARGO_BIN_EXE_h5");
    let out = Command::new(h5).arg("verify").arg(&bad).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("record 17"), "{text}");
    let ok = Command::new(h5).arg("verify").arg(&p).output().unwrap();
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );

    // a Fletcher-32 chunk written by h5py with one byte flipped
    let f32p = dir.join("fl.h5");
    if python(I4_PY, &[f32p.to_str().unwrap()]).is_none() {
        println!("skipped: no oracle python (h5py) for the Fletcher-32 file");
        return;
    }
    let addr = {
        let f = File::open(&f32p).unwrap();
        let r = f
            .root()
            .unwrap()
            .dataset("x")
            .unwrap()
            .chunk_reader()
            .unwrap();
        r.info(&[2, 0]).unwrap().unwrap().address
    };
    let mut bytes = std::fs::read(&f32p).unwrap();
    bytes[addr as usize + 101] ^= 0x01;
    let flipped = dir.join("fl-bad.h5");
    std::fs::write(&flipped, &bytes).unwrap();
    let libhdf5 = python(I4_READ_PY, &[flipped.to_str().unwrap()]).unwrap();
    assert_eq!(libhdf5.trim(), "refused", "libhdf5 read the damaged chunk");
    let out = Command::new(h5)
        .arg("verify")
        .arg(&flipped)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let named = format!("/x: chunk [2, 0] at offset {addr:#x}");
    assert!(text.contains(&named) && text.contains("checksum"), "{text}");
    assert!(text.contains("1 failure(s)"), "{text}");
    let clean = Command::new(h5).arg("verify").arg(&f32p).output().unwrap();
    assert_eq!(clean.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

const I5_PY: &str = r#"
import sys, hashlib, h5py, numpy as np
rng = np.random.default_rng(5)
n = int(sys.argv[2])
a32 = rng.standard_normal((n, 384)).astype("<f4")
a64 = rng.standard_normal((n, 384)).astype("<f8")
with h5py.File(sys.argv[1], "w") as f:
    f.attrs["note"] = "x" * 13
    f.create_dataset("pad", data=np.arange(3, dtype="u1"))
    f.create_dataset("f32", data=a32)
    f.create_dataset("f64", data=a64, chunks=(256, 384))
    print(f["f32"].id.get_offset() % 64)
idx = rng.integers(0, n, 1000)
print(" ".join(str(i) for i in idx))
print(hashlib.sha256(a32[idx].tobytes()).hexdigest())
print(hashlib.sha256(a64[idx].tobytes()).hexdigest())
"#;

#[test]
fn i5_read_rows_equal_numpy_fancy_indexing_in_the_stored_type() {
    let dir = scratch("i5");
    let p = dir.join("feat.h5");
    // our writer, aligned: rows straight from the mapping
    let n = 100_000u64;
    let vals: Vec<f32> = (0..n * 384).map(|i| (i % 1013) as f32 * 0.5).collect();
    let mut w = FileWriter::create(&p).unwrap();
    w.write_dataset(w.root(), "emb", DatasetSpec::of::<f32>(&[n, 384]), &vals)
        .unwrap();
    w.commit().unwrap();
    let f = File::open(&p).unwrap();
    let ds = f.root().unwrap().dataset("emb").unwrap();
    let idx = [99_999u64, 0, 5, 5, 31_337];
    let got = ds.read_rows_vec(&idx).unwrap();
    assert_eq!(got.len(), 5 * 384 * 4);
    for (k, &r) in idx.iter().enumerate() {
        let row = &vals[r as usize * 384..(r as usize + 1) * 384];
        let want: Vec<u8> = row.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(&got[k * 1536..(k + 1) * 1536], &want[..]);
    }
    assert!(ds.read_rows_vec(&[n]).is_err());

    // h5py's layout: an unaligned contiguous f32 and a chunked f64
    let hp = dir.join("h5py.h5");
    let Some(out) = python(I5_PY, &[hp.to_str().unwrap(), "20000"]) else {
        println!("skipped: no oracle python (h5py) for numpy's fancy indexing");
        return;
    };
    let lines: Vec<&str> = out.lines().collect();
    assert_ne!(lines[0], "0", "the h5py dataset happened to be aligned");
    let idx: Vec<u64> = lines[1].split(' ').map(|t| t.parse().unwrap()).collect();
    let f = File::open(&hp).unwrap();
    for (name, sha, dtype) in [("f32", lines[2], "<f4"), ("f64", lines[3], "<f8")] {
        let ds = f.root().unwrap().dataset(name).unwrap();
        assert_eq!(ds.dtype().to_string(), dtype, "no cast");
        assert_eq!(hex(&ds.read_rows_vec(&idx).unwrap()), sha, "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn i6_one_two_four_threads_read_identical_bytes() {
    let dir = scratch("i6");
    let p = dir.join("z.h5");
    build(&p, 4000, |_| 4096, RecordCodec::Zstd(3));
    let s = RecordStore::open(&p).unwrap();
    let idx: Vec<u64> = (0..4000u64).map(|i| (i * 7919) % 4000).collect();
    let (one, off) = s.decode_records(&idx, true, 1).unwrap();
    for workers in [2, 4] {
        assert_eq!(
            s.decode_records(&idx, true, workers).unwrap(),
            (one.clone(), off.clone())
        );
    }
    // threads sharing one store, each on its own disjoint batch
    let parts: Vec<Vec<u8>> = std::thread::scope(|sc| {
        let hs: Vec<_> = idx
            .chunks(1000)
            .map(|b| {
                let s = s.clone();
                sc.spawn(move || s.decode_records(b, true, 1).unwrap().0)
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(parts.concat(), one);
    // decode-bound scaling (the row's >= 1.6x on 2 cores) is timed by
    // scripts/bench_iatrocache.sh (examples/iatro_bench.rs, workload "I6"),
    // not here: a shared machine makes timings in a test noise.
    // a reused buffer (larger, then smaller batches) holds exactly the batch
    let (mut buf, mut o) = (Vec::new(), Vec::new());
    s.decode_records_into(&idx, true, 2, &mut buf, &mut o)
        .unwrap();
    assert_eq!(buf, one);
    s.decode_records_into(&idx[..1000], true, 2, &mut buf, &mut o)
        .unwrap();
    assert_eq!(buf, one[..off[1000] as usize]);
    let mut bad = idx.clone();
    bad[2500] = 4000;
    assert!(s
        .decode_records_into(&bad, true, 2, &mut buf, &mut o)
        .is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

const I7_PY: &str = r#"
import sys, json, numcodecs
z = numcodecs.Zstd(level=5)
recs = [(("record %d " % i) * (i % 50 + 1)).encode() for i in range(300)]
frames = [z.encode(r) for r in recs]
open(sys.argv[1], "wb").write(b"".join(frames))
print(json.dumps([[len(f), len(r)] for f, r in zip(frames, recs)]))
"#;

const I7_CHECK_PY: &str = r#"
import sys, hashlib, h5py, numcodecs
f = h5py.File(sys.argv[1], "r")
z = numcodecs.Zstd()
data, off, ln = f["data"][...], f["offset"][...], f["length"][...]
h = hashlib.sha256()
for o, l in zip(off, ln):
    h.update(z.decode(data[o:o + l]))
print(h.hexdigest())
"#;

#[test]
fn i7_zstd_records_decode_equal_numcodecs_in_one_buffer() {
    let dir = scratch("i7");
    let frames = dir.join("frames.bin");
    let Some(out) = python(I7_PY, &[frames.to_str().unwrap()]) else {
        println!("skipped: no oracle python (numcodecs)");
        return;
    };
    let lens: Vec<(u64, u64)> = serde_json::from_str::<Vec<[u64; 2]>>(&out)
        .unwrap()
        .into_iter()
        .map(|[a, b]| (a, b))
        .collect();
    let blob = std::fs::read(&frames).unwrap();
    let p = dir.join("z.h5");
    let mut w = RecordWriter::create(
        &p,
        RecordOptions {
            codec: RecordCodec::Zstd(5),
            ..RecordOptions::default()
        },
    )
    .unwrap();
    let mut at = 0usize;
    for &(stored, decoded) in &lens {
        w.push_encoded(&blob[at..at + stored as usize], decoded)
            .unwrap();
        at += stored as usize;
    }
    w.finish().unwrap();
    let s = RecordStore::open(&p).unwrap();
    let idx: Vec<u64> = (0..300).rev().collect();
    let (buf, off) = s.decode_records(&idx, true, 2).unwrap();
    for (k, &i) in idx.iter().enumerate() {
        let want = format!("record {i} ").repeat(i as usize % 50 + 1);
        assert_eq!(&buf[off[k] as usize..off[k + 1] as usize], want.as_bytes());
    }
    // our encoder's frames decode in numcodecs to the input
    let q = dir.join("ours.h5");
    let recs = build(
        &q,
        500,
        |i| 100 + (i as usize * 13) % 3000,
        RecordCodec::Zstd(3),
    );
    let sha = python(I7_CHECK_PY, &[q.to_str().unwrap()]).unwrap();
    assert_eq!(sha.trim(), hex(&recs.concat()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn i9_replaced_file_serves_the_new_header_and_the_cache_stays_bounded() {
    let dir = scratch("i9");
    let p = dir.join("s.h5");
    let mk = |path: &Path, payload: &str, n: u64| {
        let mut w = RecordWriter::create(
            path,
            RecordOptions {
                payload_type: payload.into(),
                overwrite: true,
                ..RecordOptions::default()
            },
        )
        .unwrap();
        for i in 0..n {
            w.push(&record(i, 10)).unwrap();
        }
        w.finish().unwrap();
    };
    mk(&p, "first", 3);
    let a = RecordStore::open(&p).unwrap();
    assert_eq!((a.payload_type(), a.len()), ("first", 3));
    let id = a.file().identity().unwrap();
    assert!(!MetaCache::global().is_empty());
    // atomic replace (write beside, rename over): the new header is served
    let tmp = dir.join("next.h5");
    mk(&tmp, "second", 5);
    std::fs::rename(&tmp, &p).unwrap();
    let b = RecordStore::open(&p).unwrap();
    assert_eq!((b.payload_type(), b.len()), ("second", 5));
    assert_ne!(b.file().identity().unwrap(), id);
    // the old handle still reads its own snapshot
    assert_eq!(a.read_records(&[2], true).unwrap().0, record(2, 10));
    // 10,000 files: the cache stays within its bounds
    let tiny = dir.join("tiny.h5");
    mk(&tiny, "tiny", 2);
    for k in 0..10_000 {
        let c = dir.join(format!("c{k}.h5"));
        std::fs::copy(&tiny, &c).unwrap();
        let s = RecordStore::open(&c).unwrap();
        assert_eq!(s.len(), 2);
        drop(s);
        std::fs::remove_file(&c).unwrap();
        let g = MetaCache::global();
        assert!(g.len() <= GLOBAL_ENTRIES && g.bytes() <= GLOBAL_BYTES);
    }
    assert!(MetaCache::global().len() >= GLOBAL_ENTRIES / 2);
    let _ = std::fs::remove_dir_all(&dir);
}
