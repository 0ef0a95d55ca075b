//! The deflate encoder (`purehdf_filters::deflate_encode`) against the
//! oracles: Python's `zlib.decompress` reads our level-4 streams, and h5py
//! reads HDF5 files written with deflate 4 and shuffle + deflate 4 (which
//! go through our compressor). Skipped without `PUREHDF_ORACLE_PYTHON`.

use purehdf_filters::deflate_encode::Compressor;

#[path = "common/noise.rs"]
mod noise;
use noise::noise;

/// A CT-like int16 volume (smooth field plus noise), as little-endian bytes.
fn ct_like(nz: usize, ny: usize, nx: usize) -> Vec<i16> {
    let mut x = 0x1234_5678u32;
    let mut v = Vec::with_capacity(nz * ny * nx);
    for z in 0..nz {
        for y in 0..ny {
            for xx in 0..nx {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                let r = (y as i32 - 32).pow(2) + (xx as i32 - 32).pow(2);
                let base = if r < 900 { 40 + (z as i32 % 7) } else { -1000 };
                v.push((base + ((x >> 16) % 23) as i32 - 11) as i16);
            }
        }
    }
    v
}

/// Python's `zlib.decompress` reads our streams, and h5py reads files written
/// with deflate 4 and shuffle + deflate 4 (our compressor at level 4).
#[test]
fn oracle_python_reads_our_output() {
    let Some(py) = std::env::var_os("PUREHDF_ORACLE_PYTHON") else {
        println!("skipped: PUREHDF_ORACLE_PYTHON unset");
        return;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-defl-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vol = ct_like(16, 64, 64);
    let vol_bytes: Vec<u8> = vol.iter().flat_map(|v| v.to_le_bytes()).collect();
    let text = b"the quick brown fox jumps over the lazy dog\n".repeat(3000);
    let inputs: Vec<Vec<u8>> = vec![
        vol_bytes.clone(),
        text,
        noise(70_000, 5),
        vec![0u8; 300_000],
        Vec::new(),
        b"ab".to_vec(),
    ];
    let mut c = Compressor::new(4).unwrap();
    for (i, inp) in inputs.iter().enumerate() {
        let mut z = Vec::new();
        c.compress(inp, &mut z);
        std::fs::write(dir.join(format!("s{i}.z")), &z).unwrap();
        std::fs::write(dir.join(format!("s{i}.raw")), inp).unwrap();
    }
    std::fs::write(dir.join("vol.raw"), &vol_bytes).unwrap();
    for (name, filters) in [
        ("gzip.h5", vec![purehdf::Filter::deflate(4).unwrap()]),
        (
            "shuf.h5",
            vec![
                purehdf::Filter::shuffle(),
                purehdf::Filter::deflate(4).unwrap(),
            ],
        ),
    ] {
        let path = dir.join(name);
        let mut w = purehdf::FileWriter::create(&path).unwrap();
        let spec = purehdf::DatasetSpec::of::<i16>(&[16, 64, 64]).chunked(&[8, 32, 64], filters);
        w.write_dataset(w.root(), "data", spec, &vol).unwrap();
        w.commit().unwrap();
    }
    let script = format!(
        r#"
import zlib, h5py, numpy as np, os
d = {dir:?}
for i in range({n}):
    z = open(os.path.join(d, f"s{{i}}.z"), "rb").read()
    raw = open(os.path.join(d, f"s{{i}}.raw"), "rb").read()
    assert zlib.decompress(z) == raw, f"stream {{i}}"
vol = np.fromfile(os.path.join(d, "vol.raw"), dtype="<i2").reshape(16, 64, 64)
for name in ["gzip.h5", "shuf.h5"]:
    with h5py.File(os.path.join(d, name), "r") as f:
        ds = f["data"]
        assert (ds[...] == vol).all(), name
        for info in [ds.id.get_chunk_info(k) for k in range(ds.id.get_num_chunks())]:
            mask, raw = ds.id.read_direct_chunk(info.chunk_offset)
            assert mask == 0
            assert raw[:2] == b"\x78\x5e", raw[:2]
print("ok")
"#,
        dir = dir.display().to_string(),
        n = inputs.len()
    );
    let out = std::process::Command::new(py)
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("ok"),
        "oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
