//! Throughput of the read path (ignored by default: `cargo test --lib
//! chunk_index::tests::bench -- --ignored --nocapture`).

use std::time::Instant;

use super::*;
use purehdf_filters::{encode_pipeline, ChunkContext, FilterSpec};

/// A 3-D u16 dataset in a fixed array of 16x128x128 chunks, optionally deflated.
fn volume(
    dims: [u64; 3],
    chunk: [u64; 3],
    deflate: bool,
) -> (Vec<u8>, ChunkIndexParams, Vec<FilterSpec>) {
    let pipeline = if deflate {
        vec![FilterSpec {
            id: 1,
            flags: 0,
            cd_values: vec![1],
            name: None,
        }]
    } else {
        Vec::new()
    };
    let mut p = params(
        ChunkIndexKind::FixedArray { page_bits: 20 },
        0,
        &dims,
        &chunk,
    );
    p.element_size = 2;
    p.filtered = deflate;
    let g = grid::Grid::new(&p).unwrap();
    let n: u64 = g.per_dim.iter().product();
    let cb = g.chunk_bytes as usize;
    let mut data = Vec::new();
    let mut els = Vec::new();
    let base = 4096 + n as usize * 32;
    for i in 0..n {
        let chunk: Vec<u8> = (0..cb / 2)
            .flat_map(|j| (((i as usize * 7 + j / 64) % 4096) as u16).to_le_bytes())
            .collect();
        let stored = encode_pipeline(&pipeline, &ChunkContext::new(2, cb), &chunk).unwrap();
        let mut e = ((base + data.len()) as u64).to_le_bytes().to_vec();
        if deflate {
            e.extend_from_slice(&(stored.len() as u32).to_le_bytes());
            e.extend_from_slice(&0u32.to_le_bytes());
        }
        els.push(e);
        data.extend_from_slice(&stored);
    }
    let esize = if deflate { 16 } else { 8 };
    let mut f = super::fixed_array(u8::from(deflate), esize, 20, &els, None);
    f.resize(base, 0);
    f.extend_from_slice(&data);
    (f, p, pipeline)
}

#[test]
#[ignore]
fn read_throughput() {
    for deflate in [false, true] {
        let dims = [64u64, 512, 512];
        let (f, p, pipeline) = volume(dims, [16, 128, 128], deflate);
        let src = MemSource::new(f);
        let total = dims.iter().product::<u64>() as usize * 2;
        let mut out = vec![0u8; total];
        let map = ChunkMap::build(&src, S, &p).unwrap();
        // The first read also pays for faulting in the output pages.
        read_chunked_with(&src, &map, &pipeline, None, &Selection::All, &mut out, None).unwrap();
        let t = Instant::now();
        read_chunked_with(&src, &map, &pipeline, None, &Selection::All, &mut out, None).unwrap();
        let dt = t.elapsed().as_secs_f64();
        println!(
            "deflate={deflate}: full read {:.0} MiB in {:.3}s = {:.0} MiB/s",
            total as f64 / 1048576.0,
            dt,
            total as f64 / 1048576.0 / dt
        );
        let sel = Selection::Hyperslab {
            start: vec![8, 100, 100],
            count: vec![32, 64, 64],
        };
        let mut part = vec![0u8; 32 * 64 * 64 * 2];
        let cache = ChunkCache::new(16);
        let t = Instant::now();
        for _ in 0..20 {
            read_chunked_with(&src, &map, &pipeline, None, &sel, &mut part, Some(&cache)).unwrap();
        }
        println!(
            "deflate={deflate}: 20 patch reads 32x64x64 with a chunk cache: {:.2} ms each",
            t.elapsed().as_secs_f64() * 50.0
        );
    }
}
