//! Huffman literal decoding, one stream at a time per lane: the 4-stream
//! scalar loop purehdf's Zstd decoder uses (`src/filters/zstd_decode/huffman.rs`,
//! a 2048-cell table, 5 symbols per refill) against AVX-512 loops that keep
//! 8 streams per zmm register, look symbols up with `vpgatherqd` and refill
//! with `vpgatherqq`, for 8, 16, 32 and 64 streams (2, 4, 8 and 16 Zstd
//! blocks of 4 streams), and AVX2 loops with 4 streams per ymm. Symbols are uniform over 224 codes of 7, 8 and 9
//! bits (near the low-byte literals of CT images); every output is checked.
//! The streams here share one table and run MSB-first; Zstd's run backward
//! with a table per block, which would cost one add per lookup.
//! Measured 2026-12-06 on the 2-vCPU Xeon (`notes/bench/bench-2026-12-06d.md`):
//! scalar 0.91-0.97 ns/symbol; AVX-512 32 streams 0.42-0.48 (1.96-2.31x),
//! 64 streams 0.39-0.43 (2.2-2.5x); AVX2 (4 streams per ymm, no scatter)
//! 32 streams 0.71 (1.28x).

use std::arch::x86_64::*;
use std::time::Instant;

const LOG: u32 = 11;

struct Code {
    len: [u8; 256],
    code: [u32; 256],
    nsym: usize,
}

fn make_code() -> Code {
    // 64 syms of 7 bits, 96 of 8, 64 of 9 (Kraft sum 1), canonical.
    let mut len = [0u8; 256];
    for s in 0..224 {
        len[s] = if s < 64 {
            7
        } else if s < 160 {
            8
        } else {
            9
        };
    }
    let mut code = [0u32; 256];
    let mut c = 0u32;
    let mut prev = 7u8;
    for s in 0..224 {
        if len[s] != prev {
            c <<= len[s] - prev;
            prev = len[s];
        }
        code[s] = c;
        c += 1;
    }
    Code {
        len,
        code,
        nsym: 224,
    }
}

fn table(c: &Code) -> Vec<u16> {
    let mut t = vec![0u16; (1 << LOG) + 8];
    for s in 0..c.nsym {
        let l = c.len[s] as u32;
        let lo = (c.code[s] << (LOG - l)) as usize;
        let hi = ((c.code[s] + 1) << (LOG - l)) as usize;
        for i in lo..hi {
            t[i] = ((s as u16) << 8) | l as u16;
        }
    }
    t
}

/// MSB-first bitstream of `syms`, padded with 16 zero bytes.
fn encode(c: &Code, syms: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut acc: u64 = 0;
    let mut n = 0u32;
    for &s in syms {
        let l = c.len[s as usize] as u32;
        acc = (acc << l) | c.code[s as usize] as u64;
        n += l;
        while n >= 8 {
            out.push((acc >> (n - 8)) as u8);
            n -= 8;
        }
    }
    if n > 0 {
        out.push((acc << (8 - n)) as u8);
    }
    out.extend_from_slice(&[0u8; 16]);
    out
}

#[inline(always)]
fn load_be(b: &[u8], p: usize) -> u64 {
    u64::from_be_bytes(b[p..p + 8].try_into().unwrap())
}

/// Scalar: 4 streams interleaved, refill every 5 symbols (as the product's loop).
fn dec4(t: &[u16], st: [&[u8]; 4], out: [&mut [u8]; 4], n: usize) {
    let [o0, o1, o2, o3] = out;
    let mut pos = [0usize; 4];
    let mut bits = [0u64; 4];
    let mut i = 0;
    while i + 5 <= n {
        for k in 0..4 {
            bits[k] = load_be(st[k], pos[k] >> 3) << (pos[k] & 7);
        }
        for j in 0..5 {
            macro_rules! one {
                ($k:expr, $o:ident) => {{
                    // SAFETY: the index has LOG bits and the table 2^LOG + 8 cells.
                    let e = unsafe { *t.get_unchecked((bits[$k] >> (64 - LOG)) as usize) };
                    let l = (e & 0xFF) as u32;
                    bits[$k] <<= l;
                    pos[$k] += l as usize;
                    // SAFETY: i + j < n = the output's length (loop bound).
                    unsafe { *$o.get_unchecked_mut(i + j) = (e >> 8) as u8 };
                }};
            }
            one!(0, o0);
            one!(1, o1);
            one!(2, o2);
            one!(3, o3);
        }
        i += 5;
    }
}

/// AVX-512: Z zmm registers of 8 streams each; refill every 4 symbols,
/// 8 symbols per lane accumulated in a u64 and scattered.
///
/// # Safety
/// AVX-512 F/BW/VL; every stream has 16 readable bytes past its last
/// symbol; `out` holds `8 * Z` segments of `seg >= n + 8` bytes.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn decz<const Z: usize>(
    t: &[u16],
    all: &[u8],
    starts: &[u64],
    out: &mut [u8],
    seg: usize,
    n: usize,
) {
    let tp = t.as_ptr() as *const i32;
    let bp = all.as_ptr() as *const i64;
    let op = out.as_mut_ptr() as *mut i64;
    let mut pos = [_mm512_setzero_si512(); Z];
    let mut outoff = [_mm512_setzero_si512(); Z];
    for z in 0..Z {
        let mut s = [0i64; 8];
        let mut o = [0i64; 8];
        for l in 0..8 {
            s[l] = (starts[z * 8 + l] * 8) as i64;
            o[l] = ((z * 8 + l) * seg) as i64;
        }
        pos[z] = _mm512_loadu_si512(s.as_ptr() as *const _);
        outoff[z] = _mm512_loadu_si512(o.as_ptr() as *const _);
    }
    let bswap = _mm512_set_epi8(
        56, 57, 58, 59, 60, 61, 62, 63, 48, 49, 50, 51, 52, 53, 54, 55, 40, 41, 42, 43, 44, 45, 46,
        47, 32, 33, 34, 35, 36, 37, 38, 39, 24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19, 20, 21,
        22, 23, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7,
    );
    let ff = _mm512_set1_epi64(0xFF);
    let seven = _mm512_set1_epi64(7);
    let mut i = 0;
    while i + 8 <= n {
        let mut acc = [_mm512_setzero_si512(); Z];
        for half in 0..2 {
            let mut bits = [_mm512_setzero_si512(); Z];
            for z in 0..Z {
                let byte = _mm512_srli_epi64::<3>(pos[z]);
                let w = _mm512_i64gather_epi64::<1>(byte, bp);
                let w = _mm512_shuffle_epi8(w, bswap);
                bits[z] = _mm512_sllv_epi64(w, _mm512_and_si512(pos[z], seven));
            }
            for k in 0..4 {
                for z in 0..Z {
                    let idx = _mm512_srli_epi64::<{ 64 - LOG }>(bits[z]);
                    let e = _mm512_i64gather_epi32::<2>(idx, tp);
                    let e = _mm512_cvtepu32_epi64(e);
                    let l = _mm512_and_si512(e, ff);
                    bits[z] = _mm512_sllv_epi64(bits[z], l);
                    pos[z] = _mm512_add_epi64(pos[z], l);
                    let s = _mm512_and_si512(_mm512_srli_epi64::<8>(e), ff);
                    let sh = ((half * 4 + k) * 8) as u32;
                    acc[z] =
                        _mm512_or_si512(acc[z], _mm512_sllv_epi64(s, _mm512_set1_epi64(sh as i64)));
                }
            }
        }
        for z in 0..Z {
            let addr = _mm512_add_epi64(outoff[z], _mm512_set1_epi64(i as i64));
            _mm512_i64scatter_epi64::<1>(op as *mut _, addr, acc[z]);
        }
        i += 8;
    }
}

/// AVX2: Y ymm registers of 4 streams each; as [`decz`], the 8-byte
/// accumulators stored lane by lane (AVX2 has no scatter).
///
/// # Safety
/// AVX2; as [`decz`] with `4 * Y` segments.
#[target_feature(enable = "avx2")]
unsafe fn decy<const Y: usize>(
    t: &[u16],
    all: &[u8],
    starts: &[u64],
    out: &mut [u8],
    seg: usize,
    n: usize,
) {
    let tp = t.as_ptr() as *const i32;
    let bp = all.as_ptr() as *const i64;
    let op = out.as_mut_ptr();
    let mut pos = [_mm256_setzero_si256(); Y];
    let mut outoff = [[0usize; 4]; Y];
    for y in 0..Y {
        let mut s = [0i64; 4];
        for l in 0..4 {
            s[l] = (starts[y * 4 + l] * 8) as i64;
            outoff[y][l] = (y * 4 + l) * seg;
        }
        pos[y] = _mm256_loadu_si256(s.as_ptr() as *const _);
    }
    let bswap = _mm256_set_epi8(
        8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1,
        2, 3, 4, 5, 6, 7,
    );
    let ff = _mm256_set1_epi64x(0xFF);
    let seven = _mm256_set1_epi64x(7);
    let mut i = 0;
    while i + 8 <= n {
        let mut acc = [_mm256_setzero_si256(); Y];
        for half in 0..2 {
            let mut bits = [_mm256_setzero_si256(); Y];
            for y in 0..Y {
                let byte = _mm256_srli_epi64::<3>(pos[y]);
                let w = _mm256_i64gather_epi64::<1>(bp as *const i64, byte);
                let w = _mm256_shuffle_epi8(w, bswap);
                bits[y] = _mm256_sllv_epi64(w, _mm256_and_si256(pos[y], seven));
            }
            for k in 0..4 {
                for y in 0..Y {
                    let idx = _mm256_srli_epi64::<{ 64 - LOG as i32 }>(bits[y]);
                    let e = _mm256_i64gather_epi32::<2>(tp, idx);
                    let e = _mm256_cvtepu32_epi64(e);
                    let l = _mm256_and_si256(e, ff);
                    bits[y] = _mm256_sllv_epi64(bits[y], l);
                    pos[y] = _mm256_add_epi64(pos[y], l);
                    let s = _mm256_and_si256(_mm256_srli_epi64::<8>(e), ff);
                    let sh = ((half * 4 + k) * 8) as i64;
                    acc[y] = _mm256_or_si256(acc[y], _mm256_sllv_epi64(s, _mm256_set1_epi64x(sh)));
                }
            }
        }
        for y in 0..Y {
            let mut v = [0u64; 4];
            _mm256_storeu_si256(v.as_mut_ptr() as *mut _, acc[y]);
            for l in 0..4 {
                std::ptr::write_unaligned(op.add(outoff[y][l] + i) as *mut u64, v[l]);
            }
        }
        i += 8;
    }
}

fn main() {
    if !(is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vl"))
    {
        println!("skipped: no AVX-512 F/BW/VL on this CPU");
        return;
    }
    let c = make_code();
    let t = table(&c);
    let n = 16000usize; // symbols per stream (~64 KB block / 4)
    let nstreams = 64;
    let mut x = 0x9E3779B97F4A7C15u64;
    let mut syms = vec![vec![0u8; n]; nstreams];
    for s in syms.iter_mut() {
        for v in s.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *v = (x % 224) as u8;
        }
    }
    let enc: Vec<Vec<u8>> = syms.iter().map(|s| encode(&c, s)).collect();
    let mut all = Vec::new();
    let mut starts = Vec::new();
    for e in &enc {
        starts.push(all.len() as u64);
        all.extend_from_slice(e);
    }
    all.extend_from_slice(&[0u8; 64]);
    // scalar check
    let mut outs = vec![vec![0u8; n]; nstreams];
    let reps = 200;
    let mut best_s = f64::MAX;
    for _ in 0..reps {
        let t0 = Instant::now();
        for g in 0..nstreams / 4 {
            let (a, rest) = outs[g * 4..g * 4 + 4].split_at_mut(1);
            let (b, rest) = rest.split_at_mut(1);
            let (cc, d) = rest.split_at_mut(1);
            dec4(
                &t,
                [
                    &enc[g * 4],
                    &enc[g * 4 + 1],
                    &enc[g * 4 + 2],
                    &enc[g * 4 + 3],
                ],
                [&mut a[0], &mut b[0], &mut cc[0], &mut d[0]],
                n,
            );
        }
        best_s = best_s.min(t0.elapsed().as_secs_f64());
    }
    let nn = n / 5 * 5;
    for k in 0..nstreams {
        assert_eq!(&outs[k][..nn], &syms[k][..nn], "scalar stream {k}");
    }
    let total = (nstreams * nn) as f64;
    println!("scalar 4-stream: {:.3} ns/sym", best_s * 1e9 / total);
    let seg = n + 64;
    let mut out = vec![0u8; nstreams * seg + 64];
    let n8 = n / 8 * 8;
    let scalar_ns = best_s * 1e9 / total;
    // Time `decode(starts of one call's streams, its output)` over calls of
    // `per_call` streams, check every stream, print ns per symbol.
    let mut bench = |label: &str, per_call: usize, decode: &dyn Fn(&[u64], &mut [u8])| {
        out.iter_mut().for_each(|b| *b = 0);
        let mut best = f64::MAX;
        for _ in 0..reps {
            let t0 = Instant::now();
            for g in 0..nstreams / per_call {
                decode(&starts[g * per_call..], &mut out[g * per_call * seg..]);
            }
            best = best.min(t0.elapsed().as_secs_f64());
        }
        for k in 0..nstreams {
            let got = &out[k * seg..k * seg + n8];
            assert_eq!(
                got,
                &syms[k][..n8],
                "{label} {per_call} streams: stream {k}"
            );
        }
        let ns = best * 1e9 / (nstreams * n8) as f64;
        println!(
            "{label} {per_call} streams: {ns:.3} ns/sym ({:.2}x scalar)",
            scalar_ns / ns
        );
    };
    // SAFETY (every call below): AVX-512 F/BW/VL (and so AVX2) was checked at
    // the top of main; streams are padded with 16 zero bytes; `out` has
    // room for every segment.
    bench("avx512", 8, &|st, o| unsafe {
        decz::<1>(&t, &all, st, o, seg, n)
    });
    bench("avx512", 16, &|st, o| unsafe {
        decz::<2>(&t, &all, st, o, seg, n)
    });
    bench("avx512", 32, &|st, o| unsafe {
        decz::<4>(&t, &all, st, o, seg, n)
    });
    bench("avx512", 64, &|st, o| unsafe {
        decz::<8>(&t, &all, st, o, seg, n)
    });
    bench("avx2", 8, &|st, o| unsafe {
        decy::<2>(&t, &all, st, o, seg, n)
    });
    bench("avx2", 16, &|st, o| unsafe {
        decy::<4>(&t, &all, st, o, seg, n)
    });
    bench("avx2", 32, &|st, o| unsafe {
        decy::<8>(&t, &all, st, o, seg, n)
    });
}
