//! Known-answer tests: every stored chunk of `shared/vectors/filters` whose
//! pipeline holds only Blosc2 / Blosc / bitshuffle / shuffle, and every bare
//! Blosc2 chunk, decoded with purehdf and compared with the inputs.
//! Re-encoding checks: our Blosc2 frames keep the container structure of the
//! C output (header, metalayers, block geometry) and round-trip.

mod common;
use common::oracle_python;

use purehdf_filters::{self as filters, blosc2, ChunkContext, FilterSpec};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn shared() -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    Some(local).filter(|p| p.join("vectors/filters/manifest.json").exists())
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

fn sample(n: usize, ts: usize, seed: u32) -> Vec<u8> {
    // smooth ramp + small noise, little-endian elements of `ts` bytes
    let mut x = seed;
    (0..n)
        .map(|i| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let e = i / ts.max(1);
            if i % ts.max(1) == 0 {
                ((e / 5) as u8).wrapping_add((x >> 28) as u8)
            } else {
                (e >> (8 * (i % ts))) as u8
            }
        })
        .collect()
}

/// Our Blosc2 chunks/frames decode with C-Blosc2 (python-blosc2) to the same
/// bytes, and C-Blosc2's decode with ours.
#[test]
fn blosc2_interop_with_c() {
    use purehdf_filters::blosc2::encode_chunk::{ChunkEncoder, Settings};
    let Some(py) = oracle_python() else {
        println!("skipped: blosc2_interop_with_c (no oracle python)");
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/blosc2_interop.py");
    let dir = std::env::temp_dir().join(format!("purehdf_blosc2_interop_{}", std::process::id()));
    let ours = dir.join("ours");
    std::fs::create_dir_all(&ours).unwrap();
    let mut n_ours = 0;
    let write = |name: &str, bin: &[u8], raw: &[u8]| {
        std::fs::write(ours.join(format!("{name}.bin")), bin).unwrap();
        std::fs::write(ours.join(format!("{name}.raw")), raw).unwrap();
    };
    for codec in [0u8, 1, 2, 4, 5] {
        for filter in [0u8, 1, 2, 3] {
            for ts in [1usize, 2, 3, 4, 8] {
                let raw = sample(ts * 20_011, ts, u32::from(codec) * 31 + u32::from(filter));
                let s = Settings {
                    typesize: ts,
                    clevel: 5,
                    codec,
                    filters: [0, 0, 0, 0, 0, filter],
                    filters_meta: [0; 6],
                    blocksize: if ts == 3 { 4099 } else { 0 },
                };
                let c = ChunkEncoder::new().encode(&raw, &s).unwrap();
                write(&format!("chunk_c{codec}_f{filter}_t{ts}"), &c, &raw);
                n_ours += 1;
            }
            // HDF5-filter frames: 1-D (plain frame) and 3-D (B2ND frame with padding)
            let raw = sample(2 * 10 * 50 * 100, 2, 7);
            let ctx = ChunkContext::new(2, raw.len());
            let spec = |cd: Vec<u32>| FilterSpec {
                id: 32026,
                flags: 1,
                cd_values: cd,
                name: None,
            };
            let cd1 = vec![
                1,
                0,
                2,
                raw.len() as u32,
                5,
                u32::from(filter),
                u32::from(codec),
            ];
            let f = filters::encode(&spec(cd1), &ctx, &raw).unwrap();
            write(&format!("frame_c{codec}_f{filter}"), &f, &raw);
            let mut cd3 = vec![
                1,
                0,
                2,
                raw.len() as u32,
                1,
                u32::from(filter),
                u32::from(codec),
            ];
            cd3.extend([3, 10, 50, 100]);
            let f = filters::encode(&spec(cd3), &ctx, &raw).unwrap();
            write(&format!("b2nd_c{codec}_f{filter}"), &f, &raw);
            n_ours += 2;
        }
    }
    // Higher ranks (B2ND up to 16 dims): 5-D and 8-D chunks, int32, zstd bitshuffle.
    for dims in [vec![3usize, 4, 5, 6, 7], vec![2, 3, 2, 3, 2, 3, 2, 5]] {
        let items: usize = dims.iter().product();
        let raw = sample(items * 4, 4, 99);
        let mut cd = vec![1, 0, 4, raw.len() as u32, 3, 2, 5, dims.len() as u32];
        cd.extend(dims.iter().map(|&d| d as u32));
        let f = blosc2::encode(&raw, &cd, &ChunkContext::new(4, raw.len())).unwrap();
        write(&format!("b2nd_rank{}", dims.len()), &f, &raw);
        n_ours += 1;
    }
    let zero = vec![0u8; 8192];
    let f = blosc2::encode(
        &zero,
        &[1, 0, 2, 8192, 3, 1, 5],
        &ChunkContext::new(2, 8192),
    )
    .unwrap();
    write("frame_zero", &f, &zero);
    n_ours += 1;
    let out = std::process::Command::new(&py)
        .arg(&script)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout);
    let j: Value = serde_json::from_str(line.trim().lines().last().unwrap()).unwrap();
    assert_eq!(j["checked"].as_u64(), Some(n_ours as u64));
    assert_eq!(
        j["failures"].as_array().unwrap().len(),
        0,
        "C could not read ours: {}",
        j["failures"]
    );
    // Theirs with ours.
    let mut failures = Vec::new();
    let mut n_theirs = 0;
    for e in std::fs::read_dir(dir.join("theirs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("bin") {
            continue;
        }
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let buf = std::fs::read(&p).unwrap();
        let raw = std::fs::read(p.with_extension("raw")).unwrap();
        let got = if name.starts_with("chunk_") {
            blosc2::chunk::decode(&buf, 1 << 24)
        } else {
            blosc2::decode(&buf, &[], &ChunkContext::new(1, raw.len()))
        };
        match got {
            Ok(g) if g == raw => {}
            Ok(_) => failures.push(format!("{name}: different bytes")),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
        n_theirs += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("blosc2 interop: {n_ours} ours decoded by C, {n_theirs} theirs decoded by us");
    assert!(n_theirs > 0);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Corrupted vectors (byte flips, truncations, length fields) must give an
/// error or some bytes, never a panic or a runaway allocation.
#[test]
fn corrupted_vectors_never_panic() {
    let Some(root) = shared() else {
        println!("skipped: ../shared absent");
        return;
    };
    let dir = root.join("vectors/filters");
    let m: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let mut seed = 0x9e37_79b9_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut runs = 0;
    for v in m["chunks"].as_array().unwrap() {
        let p = pipeline(v);
        if !p.iter().all(|f| OURS.contains(&u64::from(f.id))) {
            continue;
        }
        let stored = std::fs::read(dir.join(v["file"].as_str().unwrap())).unwrap();
        let es = dtype_size(v["dtype"].as_str().unwrap());
        let n: usize = v["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .product();
        let ctx = ChunkContext::new(es, n * es);
        for i in 0..300 {
            let mut b = stored.clone();
            match i % 4 {
                0 => {
                    let k = (next() as usize) % b.len();
                    b[k] ^= 1 << (next() % 8);
                }
                1 => b.truncate((next() as usize) % b.len()),
                2 => {
                    // hit the header/length area
                    let k = (next() as usize) % b.len().min(140);
                    b[k] = next() as u8;
                }
                _ => {
                    for _ in 0..4 {
                        let k = (next() as usize) % b.len();
                        b[k] = next() as u8;
                    }
                }
            }
            if let Ok(d) = filters::decode_pipeline(&p, 0, &ctx, &b) {
                assert!(d.len() <= ctx.max_output);
            }
            runs += 1;
        }
    }
    for v in m["blosc2_chunks"].as_array().unwrap() {
        let stored = std::fs::read(dir.join(v["file"].as_str().unwrap())).unwrap();
        for _ in 0..200 {
            let mut b = stored.clone();
            let k = (next() as usize) % b.len();
            b[k] = next() as u8;
            let _ = blosc2::chunk::decode(&b, 1 << 20);
            runs += 1;
        }
    }
    println!("corrupted inputs decoded without panic: {runs}");
    assert!(runs > 1000);
}
