//! Rough single-thread throughput of each codec on a 4 MiB CT-like int16 chunk
//! (smooth field plus noise). Run: `cargo test --release --bench filters -- --nocapture`.
//! Prints MB/s (10^6 bytes of uncompressed data per second), best of 5.

use std::time::Instant;

use purehdf_filters::{decode, encode, ChunkContext, FilterSpec};

fn ct_like(n: usize) -> Vec<u8> {
    let mut x = 12345u32;
    let mut level = 0i32;
    (0..n)
        .flat_map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if i % 512 == 0 {
                level = ((i / 512) % 40) as i32 * 10 - 200;
            }
            let noise = (x % 17) as i32 - 8;
            ((level + noise) as i16).to_le_bytes()
        })
        .collect()
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(v);
    }
    (best, last.expect("at least one run"))
}

#[test]
fn throughput() {
    let data = ct_like(2 << 20);
    let n = data.len();
    let ctx = ChunkContext::new(2, n);
    let elems = (n / 2) as u32;
    let cases: Vec<(&str, u32, Vec<u32>)> = vec![
        ("deflate 4", 1, vec![4]),
        ("lz4", 32004, vec![0]),
        ("zstd", 32015, vec![3]),
        ("bzip2 9", 307, vec![9]),
        ("lzf", 32000, vec![4, 261, n as u32]),
        ("fletcher32", 3, vec![]),
        ("nbit 12", 5, vec![8, 0, elems, 1, 2, 0, 12, 0]),
        (
            "scaleoffset int",
            6,
            vec![
                2, 0, elems, 0, 2, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ],
        ),
        ("szip nn8", 4, vec![169, 8, 16, 1024]),
    ];
    println!(
        "{:<16} {:>8} {:>12} {:>12}",
        "codec", "ratio", "enc MB/s", "dec MB/s"
    );
    for (name, id, cd) in cases {
        let spec = FilterSpec {
            id,
            flags: 0,
            cd_values: cd,
            name: None,
        };
        let input = if id == 5 {
            // n-bit keeps 12 bits: give it data that fits.
            data.chunks_exact(2)
                .flat_map(|c| (u16::from_le_bytes([c[0], c[1]]) & 0x0FFF).to_le_bytes())
                .collect()
        } else {
            data.clone()
        };
        let (te, enc) = best_of(3, || encode(&spec, &ctx, &input).expect(name));
        let (td, dec) = best_of(5, || decode(&spec, &ctx, &enc).expect(name));
        assert_eq!(dec, input, "{name}");
        println!(
            "{:<16} {:>8.2} {:>12.0} {:>12.0}",
            name,
            n as f64 / enc.len() as f64,
            n as f64 / te / 1e6,
            n as f64 / td / 1e6
        );
    }
}
