//! Whole-image reads under `purehdf::LargeAligned` (the allocator the
//! binaries install): outputs of 8 MiB and more are line aligned, so the
//! B2ND int16 rows are written with streaming stores
//! (`shuffle::unshuffle2_rows_streamed`). Samples of every profile written
//! by `medh5 bench-op write` read back equal to the arrays they came from,
//! whole and as patches (which stay on the cached path); large windows of
//! a taller training image, whose side-by-side blocks are written as groups
//! (`shuffle::unshuffle2_rows_streamed_group`), read back equal with the
//! pool and with one thread.

mod common;

use purehdf_medh5::sample::{read_patch_vec, SampleFile};
use std::path::Path;
use std::process::Command;

#[global_allocator]
static ALLOC: purehdf::LargeAligned = purehdf::LargeAligned;

const SHAPE: [u64; 3] = [64, 256, 256];

/// A CT-like int16 volume: smooth structure, a noisy band, runs of air.
fn image() -> Vec<i16> {
    image_of(SHAPE)
}

fn image_of(shape: [u64; 3]) -> Vec<i16> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let [nz, ny, nx] = shape.map(|d| d as i64);
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
    write_npy_of(path, descr, &SHAPE, bytes);
}

fn write_npy_of(path: &Path, descr: &str, shape: &[u64], bytes: &[u8]) {
    let mut f = std::fs::File::create(path).unwrap();
    purehdf_medh5::npy::write(&mut f, descr, shape, bytes).unwrap();
}

/// `medh5 bench-op write` of `dir`'s image.npy and label.npy with `profile` to `out`.
fn write_sample(dir: &Path, profile: &str, out: &Path) {
    common::run_ok(
        Command::new(env!("CARGO_BIN_EXE_medh5"))
            .args(["bench-op", "write", "--image"])
            .arg(dir.join("image.npy"))
            .arg("--label")
            .arg(dir.join("label.npy"))
            .args(["--profile", profile, "--repeats", "1", "--out"])
            .arg(out),
    );
}

/// The box `start .. start + count` of a C-order int16 volume of `shape`, as bytes.
fn cut(img: &[u8], shape: [u64; 3], start: [u64; 3], count: [u64; 3]) -> Vec<u8> {
    let mut want = Vec::new();
    for z in 0..count[0] {
        for y in 0..count[1] {
            let row = ((start[0] + z) * shape[1] + start[1] + y) * shape[2] + start[2];
            let a = 2 * row as usize;
            want.extend_from_slice(&img[a..a + 2 * count[2] as usize]);
        }
    }
    want
}

#[test]
fn large_windows_read_back_exactly_in_block_groups() {
    const TALL: [u64; 3] = [96, 256, 256];
    let dir = std::env::temp_dir().join(format!("purehdf-large-windows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let img: Vec<u8> = image_of(TALL)
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let labels: Vec<u8> = img.chunks(2).map(|v| u8::from(v[1] > 0)).collect();
    write_npy_of(&dir.join("image.npy"), "<i2", &TALL, &img);
    write_npy_of(&dir.join("label.npy"), "|u1", &TALL, &labels);
    let out = dir.join("training.medh5");
    write_sample(&dir, "training", &out);
    // Windows of at least 8 MiB (the streamed outputs): block-aligned and
    // not, cutting blocks in every dimension, so groups of whole blocks,
    // of equally cut blocks and of unequal blocks (one by one) all occur.
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let mut windows = vec![
        ([0, 0, 0], TALL),
        ([0, 0, 32], [96, 256, 224]),
        ([5, 3, 0], [91, 250, 256]),
    ];
    while windows.len() < 12 {
        let start = [next(12), next(40), [0, 32, 64, next(64)][next(4) as usize]];
        let count = [
            TALL[0] - start[0] - next(8),
            TALL[1] - start[1] - next(30),
            TALL[2] - start[2] - next(40),
        ];
        if count.iter().product::<u64>() * 2 >= 8 << 20 {
            windows.push((start, count));
        }
    }
    for threads in [0, 1] {
        purehdf::set_threads(threads).unwrap();
        for &(start, count) in &windows {
            // A fresh open: a chunk read before would come from the cache.
            let sf = SampleFile::open(&out).unwrap();
            let ds = sf.image("CT").unwrap();
            let got = read_patch_vec(&ds, Some(&start), &count).unwrap();
            assert!(
                got == cut(&img, TALL, start, count),
                "threads {threads}: window {start:?} + {count:?} differs"
            );
        }
    }
    purehdf::set_threads(0).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
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
        write_sample(&dir, profile, &out);
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
