//! Tests of the byte shuffle kernels (`shuffle.rs`): SIMD against scalar.
use super::*;
use proptest::prelude::*;

#[test]
fn shuffle_matches_definition() {
    let src: Vec<u8> = (0u8..11).collect();
    let mut dst = vec![0; 11];
    shuffle(&src, &mut dst, 2);
    assert_eq!(dst, [0, 2, 4, 6, 8, 1, 3, 5, 7, 9, 10]);
    let mut back = vec![0; 11];
    unshuffle(&dst, &mut back, 2);
    assert_eq!(back, src);
}

#[test]
fn hdf5_filter_round_trip() {
    let ctx = ChunkContext::new(4, 40);
    let src: Vec<u8> = (0u8..40).collect();
    let enc = encode(&src, &[4], &ctx).unwrap();
    assert_eq!(&enc[..10], &[0, 4, 8, 12, 16, 20, 24, 28, 32, 36]);
    assert_eq!(decode(&enc, &[4], &ctx).unwrap(), src);
}

proptest! {
    #[test]
    fn simd_equals_scalar(ts in 1usize..=17, data in proptest::collection::vec(any::<u8>(), 0..3000)) {
        let mut a = vec![0; data.len()];
        let mut b = vec![0; data.len()];
        shuffle(&data, &mut a, ts);
        shuffle_scalar(&data, &mut b, ts);
        prop_assert_eq!(&a, &b);
        let mut c = vec![0; data.len()];
        let mut d = vec![0; data.len()];
        unshuffle(&a, &mut c, ts);
        unshuffle_scalar(&a, &mut d, ts);
        prop_assert_eq!(&c, &d);
        prop_assert_eq!(&c, &data);
    }
}

proptest! {
    #[test]
    fn shuffle2_kernels_equal_scalar(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        let n = data.len() / 2;
        let mut want = vec![0; data.len()];
        shuffle_scalar(&data, &mut want, 2);
        let (mut p0, mut p1) = (vec![0; n], vec![0; n]);
        shuffle2(&data, &mut p0, &mut p1);
        prop_assert_eq!(&p0[..], &want[..n]);
        prop_assert_eq!(&p1[..], &want[n..2 * n]);
        #[cfg(target_arch = "x86_64")]
        {
            let (mut q0, mut q1) = (vec![0; n], vec![0; n]);
            // SAFETY: SSE2 is part of x86-64; the kernel bounds every access.
            unsafe { x86::shuffle2_sse2(&data, &mut q0, &mut q1) };
            prop_assert_eq!(&q0, &p0);
            prop_assert_eq!(&q1, &p1);
            if crate::cpu::avx2() {
                let (mut r0, mut r1) = (vec![0; n], vec![0; n]);
                // SAFETY: AVX2 detected; the kernel bounds every access.
                unsafe { x86::shuffle2_avx2(&data, &mut r0, &mut r1) };
                prop_assert_eq!(&r0, &p0);
                prop_assert_eq!(&r1, &p1);
            }
        }
    }

    #[test]
    fn strided_rows_equal_row_by_row(ts in 1usize..=5, rows in 1usize..9, row in 1usize..80, gap in 0usize..40, seed in any::<u8>()) {
        let stride = row * ts + gap;
        let src: Vec<u8> = (0..rows * stride).map(|i| (i as u8).wrapping_mul(seed) ^ (i >> 5) as u8).collect();
        let offs: Vec<usize> = (0..rows).rev().map(|r| r * stride).collect();
        let n = rows * row;
        let mut want = vec![0u8; n * ts];
        for (r, &o) in offs.iter().enumerate() {
            shuffle_into_planes(&src[o..o + row * ts], &mut want, n, r * row, ts);
        }
        let mut got = vec![0xEE; n * ts];
        prop_assert!(shuffle_rows_into_planes(&src, &offs, row, &mut got, ts));
        prop_assert_eq!(&got, &want);
        prop_assert!(!shuffle_rows_into_planes(&src[..src.len() - 1], &[src.len() - row * ts], row, &mut got[..row * ts], ts));
    }

    #[test]
    fn rows_into_planes_equal_block_shuffle(ts in 1usize..=9, rows in 1usize..6, row in 1usize..70, seed in any::<u8>()) {
        let n = rows * row;
        let block: Vec<u8> = (0..n * ts).map(|i| (i as u8).wrapping_mul(seed) ^ (i >> 7) as u8).collect();
        let mut want = vec![0; n * ts];
        shuffle_scalar(&block, &mut want, ts);
        let mut got = vec![0xEE; n * ts];
        for r in 0..rows {
            shuffle_into_planes(&block[r * row * ts..(r + 1) * row * ts], &mut got, n, r * row, ts);
        }
        prop_assert_eq!(got, want);
    }
}

/// Naive reference for [`unshuffle2_rows`].
fn rows_naive(p0: &[u8], p1: &[u8], g: &Rows3, dst: &mut [u8]) {
    for a in 0..g.outer {
        for b in 0..g.inner {
            for i in 0..g.n {
                let s = g.src0 + a * g.ss[0] + b * g.ss[1] + i;
                let d = 2 * (g.dst0 + a * g.ds[0] + b * g.ds[1] + i);
                dst[d] = p0[s];
                dst[d + 1] = p1[s];
            }
        }
    }
}

#[test]
fn rows_refuse_short_planes() {
    let g = Rows3 {
        n: 4,
        outer: 2,
        inner: 2,
        src0: 0,
        ss: [8, 4],
        dst0: 0,
        ds: [8, 4],
    };
    assert_eq!(g.src_end(), Some(16));
    assert_eq!(g.elements(), 16);
    let mut dst = vec![7u8; 32];
    // SAFETY: dst holds 2 · dst_end = 32 bytes.
    let ok = unsafe { unshuffle2_rows(&[1; 15], &[2; 16], &g, dst.as_mut_ptr()) };
    assert!(!ok);
    assert!(dst.iter().all(|&b| b == 7));
    // SAFETY: as above.
    let ok = unsafe { unshuffle2_rows(&[1; 16], &[2; 16], &g, dst.as_mut_ptr()) };
    assert!(ok);
    assert_eq!(&dst[..4], &[1, 2, 1, 2]);
}

proptest! {
    #[test]
    fn rows_equal_naive(
        n in 0usize..80, outer in 0usize..4, inner in 0usize..4,
        pad in 0usize..40, src0 in 0usize..20, dst0 in 0usize..20, seed in any::<u8>(),
    ) {
        let ss = [(n + pad) * 4, n + pad];
        let ds = [(n + pad + 3) * 5, n + pad + 3];
        let g = Rows3 { n, outer, inner, src0, ss, dst0, ds };
        let send = g.src_end().unwrap();
        let dend = g.dst_end().unwrap();
        let p0: Vec<u8> = (0..send).map(|i| (i as u8).wrapping_mul(3).wrapping_add(seed)).collect();
        let p1: Vec<u8> = (0..send).map(|i| (i as u8).wrapping_mul(7) ^ seed).collect();
        let mut got = vec![0xAAu8; 2 * dend];
        let mut want = got.clone();
        // SAFETY: `got` holds 2 · dst_end bytes.
        let ok = unsafe { unshuffle2_rows(&p0, &p1, &g, got.as_mut_ptr()) };
        prop_assert!(ok);
        rows_naive(&p0, &p1, &g, &mut want);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn planes_uninit_equals_scalar(ts in 1usize..=9, n in 0usize..200, seed in any::<u8>()) {
        let planes: Vec<Vec<u8>> = (0..ts)
            .map(|j| (0..n).map(|i| (i as u8).wrapping_add(seed).wrapping_mul(j as u8 + 1)).collect())
            .collect();
        let refs: Vec<&[u8]> = planes.iter().map(|p| p.as_slice()).collect();
        let mut want = vec![0u8; n * ts];
        unshuffle_planes_scalar(&refs, &mut want);
        let mut got = vec![MaybeUninit::<u8>::uninit(); n * ts];
        unshuffle_planes_uninit(&refs, &mut got);
        // SAFETY: `unshuffle_planes_uninit` wrote all n · ts bytes (equal plane lengths).
        let got: Vec<u8> = got.iter().map(|b| unsafe { b.assume_init() }).collect();
        prop_assert_eq!(got, want);
    }
}

proptest! {
    /// The rows kernel on B2ND-like geometry: 64-byte rows (n = 32, the
    /// specialised path) and other widths, more rows than the prefetch
    /// distance (the cursor wraps its outer steps), rows of one block far
    /// apart, destination at any byte offset (unaligned stores).
    #[test]
    fn rows_equal_naive_block_geometry(
        wide in any::<bool>(), n_other in 1usize..100,
        outer in 1usize..6, inner in 1usize..300, src_pad in 0usize..3,
        dst_pad in 0usize..50, dst0 in 0usize..40, align in 0usize..64, seed in any::<u8>(),
    ) {
        let n = if wide { 32 } else { n_other };
        let ss = [(n + src_pad) * inner, n + src_pad];
        let ds = [(n + dst_pad) * inner + dst_pad, n + dst_pad];
        let g = Rows3 { n, outer, inner, src0: 0, ss, dst0, ds };
        let send = g.src_end().unwrap();
        let dend = g.dst_end().unwrap();
        let p0: Vec<u8> = (0..send).map(|i| (i as u8).wrapping_mul(5).wrapping_add(seed)).collect();
        let p1: Vec<u8> = (0..send).map(|i| ((i >> 3) as u8).wrapping_mul(11) ^ seed).collect();
        let mut got = vec![0x55u8; 2 * dend + align];
        let mut want = got.clone();
        // SAFETY: `got[align..]` holds 2 · dst_end bytes.
        let ok = unsafe { unshuffle2_rows(&p0, &p1, &g, got.as_mut_ptr().add(align)) };
        prop_assert!(ok);
        rows_naive(&p0, &p1, &g, &mut want[align..]);
        prop_assert_eq!(got, want);
    }
}

proptest! {
    /// The streamed rows kernel: line-aligned 64-byte rows (the streaming
    /// path) and every near miss (a row start or stride off the line, another
    /// width) give the bytes of the naive definition, untouched around them.
    #[test]
    fn streamed_rows_equal_naive(
        wide in proptest::bool::weighted(0.8), n_other in 1usize..70,
        outer in 1usize..5, inner in 1usize..40, src_pad in 0usize..3,
        dst_lines in 0usize..3, dst0_lines in 0usize..4, misalign in proptest::bool::weighted(0.2),
        skew in 1usize..32, seed in any::<u8>(),
    ) {
        let n = if wide { 32 } else { n_other };
        let ss = [(n + src_pad) * inner, n + src_pad];
        // Strides and start in 32-element (64-byte) steps unless skewed.
        let step = 32 + if misalign { skew } else { 0 };
        let ds = [step * (inner + dst_lines), step];
        let dst0 = 32 * dst0_lines + if misalign { skew } else { 0 };
        let g = Rows3 { n, outer, inner, src0: 0, ss, dst0, ds };
        let send = g.src_end().unwrap();
        let dend = g.dst_end().unwrap();
        let p0: Vec<u8> = (0..send).map(|i| (i as u8).wrapping_mul(5).wrapping_add(seed)).collect();
        let p1: Vec<u8> = (0..send).map(|i| ((i >> 3) as u8).wrapping_mul(11) ^ seed).collect();
        // A 64-byte aligned destination inside a larger buffer.
        let mut buf = vec![0x33u8; 2 * dend + 64];
        let align = buf.as_ptr().align_offset(64);
        let mut want = buf.clone();
        // SAFETY: `buf[align..]` holds at least 2 · dst_end bytes.
        let ok = unsafe { unshuffle2_rows_streamed(&p0, &p1, &g, buf.as_mut_ptr().add(align)) };
        prop_assert!(ok);
        rows_naive(&p0, &p1, &g, &mut want[align..]);
        prop_assert_eq!(buf, want);
    }
}

proptest! {
    /// The grouped streaming kernel: `blocks` side-by-side blocks give the
    /// bytes of one naive row copy per block (block `k` shifted `k · n`
    /// elements), untouched around them, for line-aligned 64-byte rows and
    /// near misses; a short plane in any block writes nothing.
    #[test]
    fn streamed_group_equals_naive_per_block(
        blocks in 1usize..5, wide in proptest::bool::weighted(0.8), n_other in 1usize..40,
        outer in 1usize..4, inner in 1usize..20, dst_lines in 0usize..3,
        dst0_lines in 0usize..3, misalign in proptest::bool::weighted(0.2),
        skew in 1usize..32, seed in any::<u8>(), short in proptest::option::weighted(0.1, 0usize..4),
    ) {
        let n = if wide { 32 } else { n_other };
        let ss = [n * inner, n];
        let step = blocks * n + if misalign { skew } else { 0 };
        let ds = [step * (inner + dst_lines), step];
        let dst0 = 32 * dst0_lines + if misalign { skew } else { 0 };
        let g = Rows3 { n, outer, inner, src0: 0, ss, dst0, ds };
        let send = g.src_end().unwrap();
        let dend = g.dst_end().unwrap() + (blocks - 1) * n;
        let owned: Vec<[Vec<u8>; 2]> = (0..blocks)
            .map(|k| {
                let mut p0: Vec<u8> = (0..send).map(|i| (i as u8).wrapping_mul(5).wrapping_add(seed ^ k as u8)).collect();
                let p1: Vec<u8> = (0..send).map(|i| ((i >> 3) as u8).wrapping_mul(11) ^ seed ^ (k as u8 * 17)).collect();
                if short == Some(k) {
                    p0.pop();
                }
                [p0, p1]
            })
            .collect();
        let planes: Vec<[&[u8]; 2]> = owned.iter().map(|[a, b]| [&a[..], &b[..]]).collect();
        let mut buf = vec![0x33u8; 2 * dend + 64];
        let align = buf.as_ptr().align_offset(64);
        let mut want = buf.clone();
        // SAFETY: `buf[align..]` holds at least 2 · (dst_end + (blocks - 1) · n) bytes.
        let ok = unsafe { unshuffle2_rows_streamed_group(&planes, &g, buf.as_mut_ptr().add(align)) };
        if short.is_some_and(|k| k < blocks) {
            prop_assert!(!ok);
        } else {
            prop_assert!(ok);
            for (k, [p0, p1]) in planes.iter().enumerate() {
                let gk = Rows3 { dst0: dst0 + k * n, ..g };
                rows_naive(p0, p1, &gk, &mut want[align..]);
            }
        }
        prop_assert_eq!(buf, want);
    }
}
