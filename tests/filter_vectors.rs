//! Known-answer tests: the stored chunks of `shared/vectors/filters` (written by
//! libhdf5 + hdf5plugin) decoded through `purehdf_filters::decode_pipeline`.
//!
//! Every vector whose pipeline is in the supported set is checked (all of them:
//! built-ins, LZF, bzip2, LZ4, Zstd, bitshuffle, Blosc and Blosc2); any other
//! filter would be counted as skipped and named.

use std::path::{Path, PathBuf};

use purehdf_filters::{decode_pipeline, encode_pipeline, ChunkContext, FilterSpec};
use serde_json::Value;

/// Filters whose encoders are deterministic and must reproduce libhdf5's bytes.
const EXACT_ENCODERS: &[u32] = &[3, 4, 5, 6];

/// Filter ids the crate implements.
const OURS: &[u32] = &[
    1, 2, 3, 4, 5, 6, 307, 32000, 32001, 32004, 32008, 32015, 32026,
];

fn shared_dir() -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    Some(local).filter(|p| p.join("vectors/filters/manifest.json").is_file())
}

fn element_size(dtype: &str) -> usize {
    // e.g. "<i2", "|u1", "<i2 (HDF5 type: ...)": the digits after the kind letter.
    let digits: String = dtype
        .trim_start_matches(['<', '>', '|', '='])
        .chars()
        .skip(1)
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or_else(|_| panic!("dtype {dtype}"))
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

/// The n-bit filter returns only the significant bits of atomic values (the
/// inputs hold them sign-extended): clear the other bits of the expected data.
fn keep_significant_bits(data: &mut [u8], cd: &[u32]) {
    let [_, 0, _, 1, size, 0, precision, offset, ..] = *cd else {
        panic!("only little-endian atomic n-bit vectors are handled: {cd:?}");
    };
    let mask: u128 = ((1u128 << precision) - 1) << offset;
    for elem in data.chunks_exact_mut(size as usize) {
        for (i, b) in elem.iter_mut().enumerate() {
            *b &= (mask >> (8 * i)) as u8;
        }
    }
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
    let mut encoded_exactly = 0usize;
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
        let mut expected = std::fs::read(root.join(expected_path)).unwrap();
        for spec in specs.iter().filter(|s| s.id == 5) {
            keep_significant_bits(&mut expected, &spec.cd_values);
        }
        let esize = element_size(chunk["dtype"].as_str().expect("dtype"));
        let elems: u64 = chunk["chunk_shape"]
            .as_array()
            .expect("chunk_shape")
            .iter()
            .map(|d| d.as_u64().expect("dim"))
            .product();
        let ctx = ChunkContext::new(esize, elems as usize * esize);
        if mask == 0 && specs.iter().all(|s| EXACT_ENCODERS.contains(&s.id)) {
            let input = chunk["input"].as_str().expect("input");
            let raw =
                std::fs::read(root.join(inputs[input]["file"].as_str().expect("file"))).unwrap();
            match encode_pipeline(&specs, &ctx, &raw) {
                Ok(enc) if enc == stored => encoded_exactly += 1,
                Ok(enc) => failures.push(format!(
                    "{name}: encoder wrote {} bytes, libhdf5 {} (first difference at {:?})",
                    enc.len(),
                    stored.len(),
                    enc.iter().zip(&stored).position(|(a, b)| a != b)
                )),
                Err(e) => failures.push(format!("{name}: encode: {e}")),
            }
        }
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
    println!("filter vectors: {passed}/{checked} decode ({skipped} skipped: unsupported filters)");
    println!("byte-exact encodes: {encoded_exactly}");
    assert!(checked > 0, "no vector checked");
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
    assert_eq!(passed, checked);
}

/// Chunks dumped from the shared corpus by a dev script (stored bytes, and the
/// bytes libhdf5 decodes them to, read with the file datatype as memory type):
/// set `PUREHDF_CHUNK_DIR` to a directory holding `manifest.json`, `NNNN.stored`
/// and `NNNN.decoded`. Skipped when unset.
#[test]
fn corpus_chunks_from_env() {
    let Some(dir) = std::env::var_os("PUREHDF_CHUNK_DIR").map(PathBuf::from) else {
        println!("skipped: PUREHDF_CHUNK_DIR unset");
        return;
    };
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest"))
            .expect("parse manifest");
    let mut by_filter: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut failures = Vec::new();
    for item in manifest.as_array().expect("array") {
        let key = item["key"].as_str().expect("key");
        let specs = pipeline(&item["pipeline"]);
        let label = specs
            .iter()
            .map(|s| s.id.to_string())
            .collect::<Vec<_>>()
            .join("+");
        let mask = item["mask"].as_u64().expect("mask") as u32;
        let ctx = ChunkContext::new(
            item["element_size"].as_u64().expect("esize") as usize,
            item["chunk_bytes"].as_u64().expect("bytes") as usize,
        );
        let stored = std::fs::read(dir.join(format!("{key}.stored"))).unwrap();
        let expected = std::fs::read(dir.join(format!("{key}.decoded"))).unwrap();
        let entry = by_filter.entry(label).or_default();
        entry.1 += 1;
        match decode_pipeline(&specs, mask, &ctx, &stored) {
            Ok(out) if out == expected => entry.0 += 1,
            Ok(out) => failures.push(format!(
                "{key} {} {}: {} bytes, {} expected, first difference at {:?}",
                item["file"],
                item["dataset"],
                out.len(),
                expected.len(),
                out.iter().zip(&expected).position(|(a, b)| a != b)
            )),
            Err(e) => failures.push(format!("{key} {} {}: {e}", item["file"], item["dataset"])),
        }
    }
    for (label, (ok, n)) in &by_filter {
        println!("corpus chunks {label}: {ok}/{n} decode");
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}

/// Writes our encoders' output for libhdf5 to read back (a dev cross-check):
/// `PUREHDF_XCHECK_DIR` holds `requests.json` (name, pipeline, element size,
/// chunk bytes) and `<name>.raw`; each `<name>.ours` gets the encoded chunk.
/// Skipped when unset.
#[test]
fn export_encoded_chunks_from_env() {
    let Some(dir) = std::env::var_os("PUREHDF_XCHECK_DIR").map(PathBuf::from) else {
        println!("skipped: PUREHDF_XCHECK_DIR unset");
        return;
    };
    let requests: Value =
        serde_json::from_slice(&std::fs::read(dir.join("requests.json")).expect("requests"))
            .expect("parse requests");
    for item in requests.as_array().expect("array") {
        let name = item["name"].as_str().expect("name");
        let specs = pipeline(&item["pipeline"]);
        let ctx = ChunkContext::new(
            item["element_size"].as_u64().expect("esize") as usize,
            item["chunk_bytes"].as_u64().expect("bytes") as usize,
        );
        let raw = std::fs::read(dir.join(format!("{name}.raw"))).unwrap();
        let enc = encode_pipeline(&specs, &ctx, &raw).expect(name);
        let back = decode_pipeline(&specs, 0, &ctx, &enc).expect(name);
        assert_eq!(back.len(), raw.len(), "{name}");
        std::fs::write(dir.join(format!("{name}.ours")), &enc).unwrap();
        println!("{name}: {} -> {} bytes", raw.len(), enc.len());
    }
}
