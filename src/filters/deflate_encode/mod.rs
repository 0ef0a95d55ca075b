//! A deflate compressor producing zlib streams (RFC 1950 wrapper around an
//! RFC 1951 body) that are byte for byte the ones zlib 1.2.13 writes for one
//! `compress2` call at the same level (window 32 KiB, memLevel 8, default
//! strategy): zlib's LZ77 parse (`lz`) and block coding (`trees`),
//! reimplemented in Rust.
//!
//! One [`Compressor`] keeps its window and tables from input to input; the
//! only allocation per call is growth of the caller's output `Vec`.

mod bitwriter;
mod lz;
mod search;
mod trees;
mod window;

use bitwriter::BitWriter;
use lz::Lz;

/// Whether `level` is handled here (1–9; level 0, stored blocks only, is left to zlib-rs).
pub fn supports(level: u32) -> bool {
    (1..=9).contains(&level)
}

/// A deflate compressor producing zlib streams at one of the levels
/// [`supports`] accepts, keeping its window and tables from input to input.
pub struct Compressor {
    level: u32,
    lz: Box<Lz>,
}

/// zlib's header check bits for a 32 KiB window at `level` (RFC 1950 §2.2,
/// FLEVEL as zlib sets it).
pub fn zlib_header(level: u32) -> [u8; 2] {
    let flevel: u16 = match level {
        0 | 1 => 0,
        2..=5 => 1,
        6 => 2,
        _ => 3,
    };
    let mut h: u16 = (0x78 << 8) | (flevel << 6);
    h += 31 - h % 31;
    h.to_be_bytes()
}

/// Adler-32 of `data` (RFC 1950 §8.2).
///
/// Runs of at most 5552 bytes keep the sums far from overflow between the
/// reductions modulo 65521. Within a run, 16-byte blocks: with `S` the byte
/// sums and `P` the sum, over blocks, of `S` before each block,
/// `a += S` and `b += 16·(blocks·a + P) + Σ (16 - i)·x[i]`.
pub fn adler32(data: &[u8]) -> u32 {
    const MOD: u64 = 65521;
    let (mut a, mut b) = (1u64, 0u64);
    for run in data.chunks(5552) {
        let whole = run.len() & !15;
        let (blocks, rest) = run.split_at(whole);
        let (s, p, ws) = block_sums(blocks);
        b += 16 * ((whole as u64 / 16) * a + p) + ws;
        a += s;
        for &x in rest {
            a += u64::from(x);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    ((b as u32) << 16) | a as u32
}

/// For 16-byte blocks (`blocks.len()` a multiple of 16, at most 5552):
/// the byte sum, the sum over blocks of the byte sum before each block, and
/// the sum of `(16 - i)·x` over each block's bytes `x` at offset `i`.
#[cfg(target_arch = "x86_64")]
fn block_sums(blocks: &[u8]) -> (u64, u64, u64) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline, so these intrinsics are
    // available on every x86_64 CPU; the only memory accesses are a 16-byte
    // unaligned load from each 16-byte `blk` and a 16-byte unaligned store
    // into a `[u32; 4]`.
    unsafe {
        let zero = _mm_setzero_si128();
        let w_lo = _mm_setr_epi16(16, 15, 14, 13, 12, 11, 10, 9);
        let w_hi = _mm_setr_epi16(8, 7, 6, 5, 4, 3, 2, 1);
        let (mut s, mut p, mut ws) = (zero, zero, zero);
        for blk in blocks.chunks_exact(16) {
            let v = _mm_loadu_si128(blk.as_ptr().cast());
            p = _mm_add_epi32(p, s);
            s = _mm_add_epi32(s, _mm_sad_epu8(v, zero));
            let lo = _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), w_lo);
            let hi = _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), w_hi);
            ws = _mm_add_epi32(ws, _mm_add_epi32(lo, hi));
        }
        let lanes = |x: __m128i| -> u64 {
            let mut out = [0u32; 4];
            _mm_storeu_si128(out.as_mut_ptr().cast(), x);
            out.iter().map(|&v| u64::from(v)).sum()
        };
        (lanes(s), lanes(p), lanes(ws))
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn block_sums(blocks: &[u8]) -> (u64, u64, u64) {
    let (mut s, mut p, mut ws) = (0u64, 0u64, 0u64);
    for blk in blocks.chunks_exact(16) {
        p += s;
        for (i, &x) in blk.iter().enumerate() {
            s += u64::from(x);
            ws += (16 - i as u64) * u64::from(x);
        }
    }
    (s, p, ws)
}

impl Compressor {
    /// A compressor at `level`, or `None` when [`supports`] says no.
    pub fn new(level: u32) -> Option<Self> {
        supports(level).then(|| Compressor {
            level,
            lz: Box::new(Lz::new(level)),
        })
    }

    /// The level this compressor compresses at.
    pub fn level(&self) -> u32 {
        self.level
    }

    /// A compressor whose match search walks zlib's 3-byte chains only.
    #[cfg(test)]
    fn plain(level: u32) -> Self {
        let mut c = Self::new(level).expect("level 1-9");
        let lz = std::mem::replace(&mut *c.lz, Lz::new(level));
        *c.lz = lz.without_shortcut();
        c
    }

    /// Append the zlib stream of `input` to `out`: the bytes zlib writes for
    /// `compress2(input, level)` (so never above zlib's `compressBound`).
    pub fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(&zlib_header(self.level));
        // zlib's compressBound, so that the output is not reallocated.
        out.reserve(input.len() + (input.len() >> 12) + (input.len() >> 14) + 64);
        let mut w = BitWriter::new(out);
        self.lz.deflate(input, &mut w);
        w.finish();
        out.extend_from_slice(&adler32(input).to_be_bytes());
    }
}

#[cfg(test)]
mod tests;
