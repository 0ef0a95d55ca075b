//! `Dataset::chunk_manifest` over the shared corpus: every dataset is either
//! refused by name or its manifest (byte ranges, inlined chunks, codecs, fill
//! value) reassembles, decoded through the codec list alone, to exactly the
//! bytes the reader returns; and `h5 manifest` writes kerchunk JSON whose
//! references are the manifest's.

use std::path::{Path, PathBuf};

use purehdf::low_level::file::{File, Object};
use purehdf::{ChunkLocation, ChunkManifest, ElementKind, Error};
use purehdf_filters::{decode_pipeline, ChunkContext, FilterSpec};

mod common;

/// Largest dataset reassembled, in bytes.
const MAX_BYTES: u64 = 32 << 20;

fn corpus() -> Option<PathBuf> {
    let rel = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if rel.join("MANIFEST.tsv").is_file() {
        return Some(rel);
    }
    println!("skipped: ../shared/corpus absent");
    None
}

fn files(root: &Path) -> Vec<String> {
    let tsv = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    tsv.lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .map(str::to_string)
        .collect()
}

/// The whole array in C order, file byte order, from the manifest alone.
pub fn assemble(m: &ChunkManifest, file: &[u8]) -> Vec<u8> {
    let ElementKind::Fixed(z) = &m.element else {
        panic!("not fixed-size")
    };
    let es = z.itemsize() as usize;
    let shape: Vec<usize> = m.shape.iter().map(|&d| d as usize).collect();
    let cs: Vec<usize> = m.chunk_shape.iter().map(|&d| d as usize).collect();
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n * es);
    for _ in 0..n {
        out.extend_from_slice(&m.fill);
    }
    let specs: Vec<FilterSpec> = m
        .codecs
        .iter()
        .map(|c| FilterSpec {
            id: c.filter_id,
            flags: 0,
            cd_values: c.cd_values.clone(),
            name: None,
        })
        .collect();
    let chunk_elems: usize = cs.iter().product();
    let ctx = ChunkContext::new(es, chunk_elems * es);
    for c in &m.chunks {
        let stored = match &c.location {
            ChunkLocation::Range { offset, length } => {
                file[*offset as usize..(*offset + *length) as usize].to_vec()
            }
            ChunkLocation::Inline(b) => b.clone(),
            // a virtual dataset's source file
            ChunkLocation::File {
                file: other,
                offset,
                length,
            } => {
                let other = std::fs::read(other).unwrap();
                other[*offset as usize..(*offset + *length) as usize].to_vec()
            }
        };
        let buf = if specs.is_empty() {
            stored
        } else {
            decode_pipeline(&specs, 0, &ctx, &stored).unwrap()
        };
        assert_eq!(
            buf.len(),
            chunk_elems * es,
            "chunk {:?} decodes to a whole chunk",
            c.coords
        );
        if shape.is_empty() {
            out.copy_from_slice(&buf[..es]);
            continue;
        }
        let rank = shape.len();
        let origin: Vec<usize> = c
            .coords
            .iter()
            .zip(&cs)
            .map(|(&k, &s)| k as usize * s)
            .collect();
        let ext: Vec<usize> = (0..rank)
            .map(|i| cs[i].min(shape[i].saturating_sub(origin[i])))
            .collect();
        if ext.contains(&0) {
            continue;
        }
        let rows: usize = ext[..rank - 1].iter().product();
        for r in 0..rows {
            let mut rem = r;
            let mut idx = vec![0usize; rank - 1];
            for d in (0..rank - 1).rev() {
                idx[d] = rem % ext[d];
                rem /= ext[d];
            }
            let (mut src, mut dst) = (0usize, 0usize);
            for d in 0..rank - 1 {
                src = src * cs[d] + idx[d];
                dst = dst * shape[d] + origin[d] + idx[d];
            }
            src *= cs[rank - 1];
            dst = dst * shape[rank - 1] + origin[rank - 1];
            let len = ext[rank - 1] * es;
            out[dst * es..dst * es + len].copy_from_slice(&buf[src * es..src * es + len]);
        }
    }
    out
}

#[test]
fn corpus_manifests_reassemble_to_the_reader_bytes() {
    let Some(root) = corpus() else { return };
    let (mut files_ok, mut arrays, mut refused, mut skipped_big) = (0, 0, 0, 0);
    let mut reasons = std::collections::BTreeMap::<String, usize>::new();
    for rel in files(&root) {
        let path = root.join(&rel);
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let Ok(f) = File::from_bytes(bytes.clone()) else {
            continue;
        };
        let Ok(g) = f.root() else { continue };
        let mut dsets = Vec::new();
        let _ = g.visit(|p, o| {
            if let Object::Dataset(d) = o {
                dsets.push((p.to_string(), d.clone()));
            }
            Ok(())
        });
        files_ok += 1;
        for (p, d) in dsets {
            let Ok(want) = (if d.storage_size().unwrap_or(0) > MAX_BYTES {
                Err(())
            } else {
                d.read_all_raw().map_err(|_| ())
            }) else {
                skipped_big += 1;
                continue;
            };
            match d.chunk_manifest() {
                Err(Error::Unsupported { what, .. }) => {
                    assert!(
                        what.starts_with(&format!("{}:", d.path())),
                        "{rel}:{p}: refusal names the dataset: {what}"
                    );
                    let why = what
                        .split(": ")
                        .nth(1)
                        .unwrap_or("")
                        .split(' ')
                        .take(2)
                        .collect::<Vec<_>>()
                        .join(" ");
                    *reasons.entry(why).or_default() += 1;
                    refused += 1;
                }
                Err(e) => panic!("{rel}:{p}: {e}"),
                Ok(m) => {
                    for c in &m.chunks {
                        if let ChunkLocation::Range { offset, length } = c.location {
                            assert!(
                                offset + length <= bytes.len() as u64,
                                "{rel}:{p}: chunk past the end"
                            );
                        }
                    }
                    if !matches!(m.element, ElementKind::Fixed(_)) {
                        arrays += 1;
                        continue;
                    }
                    let got = assemble(&m, &bytes);
                    if m.layout == "inline" {
                        // strings converted to NUL padding as libhdf5 does for h5py
                        // (python/tests/test_kerchunk.py compares them with h5py)
                        assert_eq!(got.len(), want.len(), "{rel}:{p}");
                        arrays += 1;
                        continue;
                    }
                    assert!(
                        got == want,
                        "{rel}:{p}: manifest bytes differ from the reader's ({})",
                        m.layout
                    );
                    arrays += 1;
                }
            }
        }
    }
    println!("manifest corpus: {files_ok} files, {arrays} arrays equal, {refused} refused, {skipped_big} unread/large; refusals {reasons:?}");
    assert!(
        files_ok > 500 && arrays > 1000,
        "{files_ok} files, {arrays} arrays"
    );
}

/// Random virtual stacks written by h5py: each mapping puts one source
/// dataset (in its own file) into a box of the virtual dataset. Chunk-aligned
/// stacks export the sources' chunks and reassemble to h5py's values;
/// stacks that are not (a box that cuts chunks, sources with other chunk
/// shapes or codecs, a missing source) are refused by name.
const VDS_PY: &str = r#"
import sys, json, random, hashlib, os
import h5py, numpy as np
out, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(seed)
cases = []
for k in range(n):
    kind = r.choice(["aligned", "aligned", "edge", "cut", "mixed", "missing"])
    H, W = r.choice([(8, 12), (16, 10), (5, 7)])
    c0 = r.choice([1, 2, 4])
    comp = r.choice([None, "gzip", "lzf"])
    counts = [c0 * r.randint(1, 3) for _ in range(r.randint(1, 4))]
    if kind == "edge":
        counts[-1] += 1  # the last source ends inside a chunk, at both edges
    if kind == "cut":
        counts[0] += 1   # a box that ends inside a chunk, not at the edge
    total = sum(counts)
    dt = r.choice(["<i2", "<u4", "<f4", ">f8"])
    layout = h5py.VirtualLayout(shape=(total, H, W), dtype=dt)
    at = 0
    for i, cnt in enumerate(counts):
        src = os.path.join(out, "v%03d_s%d.h5" % (k, i))
        data = (np.arange(cnt * H * W).reshape(cnt, H, W) * (i + 3) % 1000).astype(dt)
        cz = comp if not (kind == "mixed" and i == len(counts) - 1) else ("gzip" if comp != "gzip" else None)
        with h5py.File(src, "w") as f:
            f.create_dataset("data", data=data, chunks=(c0, H, W), compression=cz)
        if kind == "missing" and i == 0:
            os.remove(src)
        layout[at:at + cnt] = h5py.VirtualSource(os.path.basename(src), "data", shape=(cnt, H, W))
        at += cnt
    vpath = os.path.join(out, "v%03d.h5" % k)
    with h5py.File(vpath, "w") as f:
        f.create_virtual_dataset("stack", layout, fillvalue=0)
    want = None
    if kind != "missing":
        with h5py.File(vpath, "r") as f:
            want = hashlib.sha256(np.ascontiguousarray(f["stack"][...]).tobytes()).hexdigest()
    starts = [sum(counts[:i]) for i in range(len(counts))]
    aligned = all(a % c0 == 0 for a in starts) and all(n % c0 == 0 for n in counts[:-1])
    export = aligned and kind != "missing" and (kind != "mixed" or len(counts) == 1)
    cases.append({"file": vpath, "kind": kind, "export": export, "sha256": want})
print(json.dumps(cases))
"#;

#[test]
fn virtual_stacks_export_their_sources_chunks() {
    use sha2::{Digest, Sha256};
    let Some(py) = common::oracle_python() else {
        println!("skipped: no oracle python (h5py) for the virtual stacks");
        return;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-vds-manifest-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let seed: u64 = std::env::var("PUREHDF_VDS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() % 100_000)
                .unwrap_or(1)
        });
    let n = std::env::var("PUREHDF_VDS_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40u32);
    let o = std::process::Command::new(py)
        .args([
            "-c",
            VDS_PY,
            dir.to_str().unwrap(),
            &seed.to_string(),
            &n.to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "seed {seed}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let cases: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let (mut exported, mut refused) = (0, 0);
    for c in cases.as_array().unwrap() {
        let path = c["file"].as_str().unwrap();
        let kind = c["kind"].as_str().unwrap();
        let f = File::open(path).unwrap();
        let Ok(Object::Dataset(d)) = f.object("stack") else {
            panic!("seed {seed} {path}: no /stack")
        };
        let aligned = c["export"].as_bool().unwrap();
        match d.chunk_manifest() {
            Ok(m) => {
                assert!(
                    aligned,
                    "seed {seed} {path} ({kind}): exported, should be refused"
                );
                assert_eq!(m.layout, "virtual");
                let bytes = std::fs::read(path).unwrap();
                // h5py keeps the stored byte order (`>f8` stays big-endian)
                let got = assemble(&m, &bytes);
                let sha = format!("{:x}", Sha256::digest(&got));
                assert_eq!(
                    Some(sha.as_str()),
                    c["sha256"].as_str(),
                    "seed {seed} {path} ({kind}): values differ from h5py's"
                );
                exported += 1;
            }
            Err(Error::Unsupported { what, .. }) => {
                assert!(!aligned, "seed {seed} {path} ({kind}): refused: {what}");
                assert!(what.starts_with("/stack: virtual dataset"), "{what}");
                refused += 1;
            }
            Err(e) => panic!("seed {seed} {path} ({kind}): {e}"),
        }
    }
    println!("virtual stacks (seed {seed}): {exported} exported equal to h5py, {refused} refused by name");
    assert!(exported > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `h5 manifest --parquet` writes fsspec's lazy reference layout: h5py files
/// with gzip/shuffle chunks, contiguous, compact and
/// scalar datasets in nested groups read back through fsspec's reference
/// file system (fastparquet; pyarrow reads the tables too) and zarr exactly
/// as h5py reads them (standard codecs only, so
/// no purehdf package is needed on the Python side).
const PARQUET_PY: &str = r#"
import sys, os, random, json, subprocess
import h5py, numpy as np, fsspec, zarr
h5, out, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = random.Random(seed)
src = os.path.join(out, "p.h5")
with h5py.File(src, "w") as f:
    g = f.create_group("g/h")
    for i in range(6):
        shape = tuple(r.randint(1, 40) for _ in range(r.randint(1, 3)))
        dt = r.choice(["<i2", "<u4", "<f4", ">f8", "<i8"])
        data = (np.arange(int(np.prod(shape))).reshape(shape) % 97).astype(dt)
        where = f if i % 2 else g
        kind = r.choice(["gzip", "shuffle", "contiguous", "compact", "partial"])
        chunks = tuple(max(1, s // r.randint(1, 3)) for s in shape)
        if kind == "gzip":
            where.create_dataset("d%d" % i, data=data, chunks=chunks, compression="gzip")
        elif kind == "shuffle":
            where.create_dataset("d%d" % i, data=data, chunks=chunks, compression="gzip", shuffle=True)
        elif kind == "contiguous":
            where.create_dataset("d%d" % i, data=data)
        elif kind == "compact" and data.nbytes < 30000:
            sid = h5py.h5s.create_simple(shape)
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_layout(h5py.h5d.COMPACT)
            d = h5py.h5d.create(where.id, b"d%d" % i, h5py.h5t.py_create(np.dtype(dt)), sid, dcpl=dcpl)
            d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(data))
        else:
            # every chunk written: chunks never written are null rows (fsspec's
            # layout), but fsspec 2025+ with pandas 3 reads a null path as NaN
            # and fails instead of reading the fill value, for its own
            # LazyReferenceMapper files as for ours (oracle bug)
            d = where.create_dataset("d%d" % i, shape=shape, dtype=dt, chunks=chunks, fillvalue=7, compression="gzip")
            d[...] = data
    f.create_dataset("scalar", data=np.float32(2.5))
dst = os.path.join(out, "refs")
subprocess.run([h5, "manifest", src, "--format", "kerchunk", "--codecs", "standard", "-o", dst, "--parquet"], check=True)
# fsspec reads the tables with fastparquet; pyarrow must read them too
import glob, pyarrow.parquet as pq
for t in glob.glob(os.path.join(dst, "**", "refs.*.parq"), recursive=True):
    assert pq.read_table(t).column_names == ["path", "offset", "size", "raw"], t
fs = fsspec.filesystem("reference", fo=dst, remote_protocol="file", skip_instance_cache=True)
root = zarr.open(fs.get_mapper(""), mode="r", zarr_format=2)
n = 0
with h5py.File(src, "r") as f:
    def visit(name, obj):
        global n
        if isinstance(obj, h5py.Dataset):
            a = np.asarray(root[name][...])
            b = obj[()]
            assert a.dtype == b.dtype and np.array_equal(a, b), (name, a, b)
            n += 1
    f.visititems(visit)
print(n)
"#;

#[test]
fn parquet_references_read_back_through_fsspec_and_zarr() {
    let Some(py) = common::oracle_python() else {
        println!("skipped: no oracle python (h5py, fsspec, zarr) for the parquet references");
        return;
    };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() % 100_000)
        .unwrap_or(1);
    let mut total = 0;
    for k in 0..4u64 {
        let dir = std::env::temp_dir().join(format!("purehdf-parquet-{}-{k}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let o = std::process::Command::new(&py)
            .args([
                "-c",
                PARQUET_PY,
                env!("CARGO_BIN_EXE_h5"),
                dir.to_str().unwrap(),
            ])
            .arg((seed + k).to_string())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "seed {}: {}",
            seed + k,
            String::from_utf8_lossy(&o.stderr)
        );
        total += String::from_utf8_lossy(&o.stdout)
            .trim()
            .parse::<u32>()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!(
        "parquet references (seeds {seed}..{}): {total} datasets equal to h5py",
        seed + 4
    );
    assert!(total >= 4 * 7);
}
