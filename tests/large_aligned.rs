//! Whole-image reads under `purehdf::LargeAligned` (the allocator the
//! binaries install): outputs of 8 MiB and more are line aligned, so the
//! B2ND int16 rows are written with streaming stores
//! (`shuffle::unshuffle2_rows_streamed`). Samples of every profile written
//! by `medh5 bench-op write` read back equal to the arrays they came from,
//! whole and as patches (which stay on the cached path).

mod common;

use purehdf::medh5::sample::{read_patch_vec, SampleFile};
use std::path::Path;
use std::process::Command;

#[global_allocator]
static ALLOC: purehdf::LargeAligned = purehdf::LargeAligned;

const SHAPE: [u64; 3] = [64, 256, 256];

/// A CT-like int16 volume: smooth structure, a noisy band, runs of air.
fn image() -> Vec<i16> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let [nz, ny, nx] = SHAPE.map(|d| d as i64);
    let mut out = Vec::with_capacity((nz * ny * nx) as usize);
    for z in 0..nz {
        for y in 0..ny {
            for xx in 0..nx {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let r2 = (y - 128).pow(2) + (xx - 128).pow(2);
                let v = if r2 > 110 * 110 {
                    -1000
                } else {
                    (z * 3 + y / 5 - xx / 7) as i16 * 4 + (x % 25) as i16 - 12
                };
                out.push(v);
            }
        }
    }
    out
}

fn write_npy(path: &Path, descr: &str, bytes: &[u8]) {
    let mut f = std::fs::File::create(path).unwrap();
    purehdf::npy::write(&mut f, descr, &SHAPE, bytes).unwrap();
}

#[test]
fn whole_images_read_back_exactly_under_the_aligned_allocator() {
    let dir = std::env::temp_dir().join(format!("purehdf-large-aligned-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let img = image();
    let img_bytes: Vec<u8> = img.iter().flat_map(|v| v.to_le_bytes()).collect();
    let labels: Vec<u8> = img
        .iter()
        .map(|&v| u8::from(v > 200) + u8::from(v > 400))
        .collect();
    write_npy(&dir.join("image.npy"), "<i2", &img_bytes);
    write_npy(&dir.join("label.npy"), "|u1", &labels);
    for profile in ["training", "balanced", "archive", "portable"] {
        let out = dir.join(format!("{profile}.medh5"));
        common::run_ok(
            Command::new(env!("CARGO_BIN_EXE_medh5"))
                .args(["bench-op", "write", "--image"])
                .arg(dir.join("image.npy"))
                .arg("--label")
                .arg(dir.join("label.npy"))
                .args(["--profile", profile, "--repeats", "1", "--out"])
                .arg(&out),
        );
        let sf = SampleFile::open(&out).unwrap();
        let ds = sf.image("CT").unwrap();
        {
            let got = read_patch_vec(&ds, None, &SHAPE).unwrap();
            assert_eq!(
                got.as_ptr() as usize % 64,
                0,
                "{profile}: output not line aligned"
            );
            assert!(got == img_bytes, "{profile}: whole image differs");
            let start = [17, 33, 70];
            let count = [40, 64, 96];
            let patch = read_patch_vec(&ds, Some(&start), &count).unwrap();
            let mut want = Vec::new();
            for z in 0..count[0] {
                for y in 0..count[1] {
                    let row = ((start[0] + z) * SHAPE[1] + start[1] + y) * SHAPE[2] + start[2];
                    let a = 2 * row as usize;
                    want.extend_from_slice(&img_bytes[a..a + 2 * count[2] as usize]);
                }
            }
            assert!(patch == want, "{profile}: patch differs");
        }
        let lab = sf.annotation_data("seg").unwrap();
        assert!(
            read_patch_vec(&lab, None, &SHAPE).unwrap() == labels,
            "{profile}: labels differ"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
