//! Known-answer tests: every stored chunk of `shared/vectors/filters` whose
//! pipeline holds only Blosc2 / Blosc / bitshuffle / shuffle, and every bare
//! Blosc2 chunk, decoded with purehdf and compared with the inputs.
//! Re-encoding checks: our Blosc2 frames keep the container structure of the
//! C output (header, metalayers, block geometry) and round-trip.

use purehdf::filters::{self, blosc2, ChunkContext, FilterSpec};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn shared() -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    [local, PathBuf::from("/work/shared")]
        .into_iter()
        .find(|p| p.join("vectors/filters/manifest.json").exists())
}

fn dtype_size(dt: &str) -> usize {
    dt[2..].parse().unwrap()
}

const OURS: [u64; 4] = [32026, 32001, 32008, 2];

fn pipeline(v: &Value) -> Vec<FilterSpec> {
    v["pipeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| FilterSpec {
            id: f["id"].as_u64().unwrap() as u32,
            flags: f["flags"].as_u64().unwrap() as u16,
            cd_values: f["cd_values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u32)
                .collect(),
            name: None,
        })
        .collect()
}

#[test]
fn blosc_vectors_decode() {
    let Some(root) = shared() else {
        println!("skipped: ../shared absent");
        return;
    };
    let dir = root.join("vectors/filters");
    let m: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let inputs = m["inputs"].as_object().unwrap();
    let input =
        |name: &str| std::fs::read(dir.join(inputs[name]["file"].as_str().unwrap())).unwrap();
    let (mut total, mut ok) = (0, 0);
    let mut failures = Vec::new();
    for v in m["chunks"].as_array().unwrap() {
        let ids: Vec<u64> = v["pipeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_u64().unwrap())
            .collect();
        if !ids.iter().all(|id| OURS.contains(id)) {
            continue;
        }
        total += 1;
        let name = v["name"].as_str().unwrap();
        let stored = std::fs::read(dir.join(v["file"].as_str().unwrap())).unwrap();
        let expect = input(v["input"].as_str().unwrap());
        let es = dtype_size(v["dtype"].as_str().unwrap());
        let ctx = ChunkContext::new(es, expect.len());
        let mask = v["filter_mask"].as_u64().unwrap() as u32;
        match filters::decode_pipeline(&pipeline(v), mask, &ctx, &stored) {
            Ok(d) if d == expect => ok += 1,
            Ok(d) => failures.push(format!(
                "{name}: wrong bytes ({} vs {})",
                d.len(),
                expect.len()
            )),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    for v in m["blosc2_chunks"].as_array().unwrap() {
        total += 1;
        let name = v["name"].as_str().unwrap();
        let stored = std::fs::read(dir.join(v["file"].as_str().unwrap())).unwrap();
        let expect = match v["input"].as_str() {
            Some(i) => input(i),
            None => special_expected(&v["expected"]),
        };
        match blosc2::chunk::decode(&stored, 1 << 24) {
            Ok(d) if d == expect => ok += 1,
            Ok(d) => failures.push(format!(
                "{name}: wrong bytes ({} vs {})",
                d.len(),
                expect.len()
            )),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    println!("blosc vectors: {ok}/{total} decode");
    assert!(total > 0);
    assert!(failures.is_empty(), "{failures:#?}");
}

fn special_expected(e: &Value) -> Vec<u8> {
    let n: usize = e["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .product();
    let dt = e["dtype"].as_str().unwrap();
    let one: Vec<u8> = match (dt, &e["fill"]) {
        ("<f8", Value::Null) => f64::NAN.to_le_bytes().to_vec(),
        ("<f4", Value::Null) => f32::NAN.to_le_bytes().to_vec(),
        ("<i4", f) => (f.as_i64().unwrap() as i32).to_le_bytes().to_vec(),
        ("<i2", f) => (f.as_i64().unwrap() as i16).to_le_bytes().to_vec(),
        (d, f) => panic!("unexpected special {d} {f}"),
    };
    one.repeat(n)
}

/// Our encoder reproduces the C container for every Blosc2 vector: same frame
/// header fields, metalayers, chunk header and block geometry; and our frames
/// decode back to the input.
#[test]
fn blosc2_encode_matches_container() {
    let Some(root) = shared() else {
        println!("skipped: ../shared absent");
        return;
    };
    let dir = root.join("vectors/filters");
    let m: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let inputs = m["inputs"].as_object().unwrap();
    let mut checked = 0;
    for v in m["chunks"].as_array().unwrap() {
        let p = pipeline(v);
        if p.len() != 1 || p[0].id != 32026 || v["filter_mask"].as_u64() != Some(0) {
            continue;
        }
        let name = v["name"].as_str().unwrap();
        let input = std::fs::read(
            dir.join(
                inputs[v["input"].as_str().unwrap()]["file"]
                    .as_str()
                    .unwrap(),
            ),
        )
        .unwrap();
        let theirs = std::fs::read(dir.join(v["file"].as_str().unwrap())).unwrap();
        let es = dtype_size(v["dtype"].as_str().unwrap());
        let ctx = ChunkContext::new(es, input.len());
        let ours = filters::encode(&p[0], &ctx, &input).unwrap();
        assert_eq!(
            filters::decode(&p[0], &ctx, &ours).unwrap(),
            input,
            "{name}"
        );
        // Frame fixed header up to cbytes, then typesize/blocksize/chunksize…
        assert_eq!(ours[..16], theirs[..16], "{name}: frame header");
        assert_eq!(
            ours[24..39],
            theirs[24..39],
            "{name}: frame flags and nbytes"
        );
        assert_eq!(ours[47..87], theirs[47..87], "{name}: frame header tail");
        let hl = u32::from_be_bytes(theirs[11..15].try_into().unwrap()) as usize;
        assert_eq!(ours[87..hl], theirs[87..hl], "{name}: metalayers");
        // Chunk header: version, flags, typesize, nbytes, blocksize, filters.
        if theirs.len() > hl + 75 {
            assert_eq!(
                ours[hl..hl + 12],
                theirs[hl..hl + 12],
                "{name}: chunk header"
            );
            assert_eq!(
                ours[hl + 16..hl + 32],
                theirs[hl + 16..hl + 32],
                "{name}: chunk ext header"
            );
            // bstarts of a raw/run-only chunk are identical; byte-identical when no codec ran.
            if name.contains("random") || name.contains("const") {
                assert_eq!(ours.len(), theirs.len(), "{name}: frame length");
            }
        } else {
            assert_eq!(ours, theirs, "{name}: special-offset frame");
        }
        // Trailer is always the same 35 bytes.
        assert_eq!(
            ours[ours.len() - 35..],
            theirs[theirs.len() - 35..],
            "{name}: trailer"
        );
        checked += 1;
    }
    println!("blosc2 encode container checks: {checked}");
    assert!(checked > 20);
}
