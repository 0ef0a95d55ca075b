//! A deflate compressor producing zlib streams (RFC 1950 wrapper around an
//! RFC 1951 body): hash-chain LZ77 with greedy or lazy parsing, and blocks
//! coded with whichever of stored / fixed / dynamic Huffman is smallest.
//!
//! One [`Compressor`] keeps fixed-size tables from input to input; the only
//! allocation per call is growth of the caller's output `Vec`.

mod bitwriter;
mod block;
mod huffman;
mod matchfinder;

use bitwriter::BitWriter;
use block::{dist_sym, estimate_bits, match_item, write_block, Codes, Item, Stats, LEN_SYM};
use matchfinder::{MatchFinder, MIN_MATCH};

pub use matchfinder::MAX_INPUT;

/// Parsing parameters of one level.
#[derive(Clone, Copy, Debug)]
struct Params {
    /// Candidates tried per position.
    chain: u32,
    /// A match this long is taken at once.
    nice: usize,
    /// Lazy evaluation only for matches shorter than this (0: greedy).
    lazy: usize,
    /// The lazy search tries a quarter of the chain after a match this long.
    good: usize,
    /// Positions inside matches longer than this are not inserted.
    max_insert: usize,
    /// 4-byte matches farther than this are dropped (coded as literals):
    /// a far distance's extra bits cost about what the literals do.
    far4: usize,
    /// Most items per block.
    block_items: usize,
    /// Items per sub-block: each one either extends the block or, when two
    /// separate dynamic blocks are smaller, starts a new block.
    sub_items: usize,
}

/// The parameters of `level`, or `None` for levels this compressor leaves to zlib.
fn params(level: u32) -> Option<Params> {
    let p = |chain, nice, lazy, good, max_insert, far4| Params {
        chain,
        nice,
        lazy,
        good,
        max_insert,
        far4,
        block_items: 32 * 1024,
        sub_items: 4 * 1024,
    };
    Some(match level {
        // Greedy, the nearest 4-byte match and 8 chain candidates, 4-byte
        // matches only up to 16 KiB back: on the 64 chunks (64^3 int16) of
        // the peer bench volume, plain and shuffled, below zlib-rs level 4
        // (8 KiB was larger on the plain ones; see notes/deflate-encode.md);
        // lazy parsing came out larger there.
        4 => p(8, 32, 0, 8, 32, 16384),
        _ => return None,
    })
}

/// Whether `level` is handled here.
pub fn supports(level: u32) -> bool {
    params(level).is_some()
}

/// A deflate compressor producing zlib streams at one of the levels
/// [`supports`] accepts, keeping its match-finder tables and scratch from
/// input to input.
pub struct Compressor {
    level: u32,
    p: Params,
    mf: MatchFinder,
    items: Vec<Item>,
    /// Counts of the block before the current sub-block, and of the sub-block.
    stats: Stats,
    sub: Stats,
    merged: Stats,
    codes: Codes,
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
        params(level).map(|p| Self::with_params(level, p))
    }

    /// A compressor with explicit parameters (what [`Compressor::new`]
    /// picks per level; tests try the parse variants).
    fn with_params(level: u32, p: Params) -> Self {
        Compressor {
            level,
            p,
            mf: MatchFinder::new(),
            items: Vec::with_capacity(p.block_items + 1),
            stats: Stats::new(),
            sub: Stats::new(),
            merged: Stats::new(),
            codes: Codes::new(),
        }
    }

    /// Append the zlib stream of `input` (at most [`MAX_INPUT`] bytes) to `out`.
    ///
    /// Never longer than the same data in stored blocks (6 bytes of zlib
    /// wrapper and 5 per 65535 bytes, within zlib's `compressBound`): a
    /// compressed body that comes out longer is replaced by stored blocks.
    pub fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) {
        assert!(input.len() <= MAX_INPUT, "input too large for one call");
        out.extend_from_slice(&zlib_header(self.level));
        let body = out.len();
        // zlib's compressBound, so that the output is not reallocated.
        out.reserve(input.len() + (input.len() >> 12) + (input.len() >> 14) + 64);
        let mut w = BitWriter::new(out);
        self.mf.start(input.len());
        self.deflate(input, &mut w);
        self.mf.end(input.len());
        w.finish();
        let stored = input.len() + 5 * input.len().div_ceil(65535).max(1);
        if out.len() - body > stored {
            out.truncate(body);
            let mut w = BitWriter::new(out);
            block::write_stored(&mut w, input, true);
            w.finish();
        }
        out.extend_from_slice(&adler32(input).to_be_bytes());
    }

    #[inline(always)]
    fn literal(&mut self, b: u8) {
        self.sub.lit[b as usize] += 1;
        self.items.push(Item::from(b));
    }

    #[inline(always)]
    fn matched(&mut self, len: usize, dist: usize) {
        self.sub.lit[257 + LEN_SYM[len] as usize] += 1;
        self.sub.dist[dist_sym(dist as u32)] += 1;
        self.items.push(match_item(len as u32, dist as u32));
    }

    /// End the sub-block of `items[sub_at..]` (raw bytes from `sub_raw` to
    /// `pos`): write the block before it if keeping them apart is smaller.
    /// Returns the new (block start, sub start) in bytes; `sub_at` moves to
    /// the end of the items.
    fn end_sub(
        &mut self,
        w: &mut BitWriter,
        data: &[u8],
        block_raw: usize,
        sub_raw: usize,
        sub_at: &mut usize,
        pos: usize,
    ) -> usize {
        let mut block_raw = block_raw;
        if *sub_at > 0 {
            self.merged.clone_from(&self.stats);
            self.merged.add(&self.sub);
            let apart = estimate_bits(&self.stats) + estimate_bits(&self.sub);
            let together = estimate_bits(&self.merged);
            if together > apart {
                let (head, _) = self.items.split_at(*sub_at);
                write_block(
                    w,
                    &mut self.codes,
                    &self.stats,
                    head,
                    &data[block_raw..sub_raw],
                    false,
                );
                self.items.drain(..*sub_at);
                self.stats.clone_from(&self.sub);
                block_raw = sub_raw;
            } else {
                std::mem::swap(&mut self.stats, &mut self.merged);
            }
        } else {
            self.stats.clone_from(&self.sub);
        }
        self.sub.clear();
        if self.items.len() >= self.p.block_items {
            write_block(
                w,
                &mut self.codes,
                &self.stats,
                &self.items,
                &data[block_raw..pos],
                false,
            );
            self.items.clear();
            self.stats.clear();
            block_raw = pos;
        }
        *sub_at = self.items.len();
        block_raw
    }

    /// The deflate body: parse `data` and write its blocks.
    fn deflate(&mut self, data: &[u8], w: &mut BitWriter) {
        let n = data.len();
        let p = self.p;
        let mut i = 0usize;
        let mut block_start = 0usize;
        // Where the current sub-block starts, in items and in bytes.
        let mut sub_at = 0usize;
        let mut sub_start = 0usize;
        self.items.clear();
        self.stats.clear();
        self.sub.clear();
        // First position not yet in the hash chains.
        let mut next_insert = 0usize;
        // Positions from here on have fewer than 4 bytes left: no hashing.
        let hash_end = n.saturating_sub(3);
        while i < n {
            if self.items.len() - sub_at >= p.sub_items {
                block_start = self.end_sub(w, data, block_start, sub_start, &mut sub_at, i);
                sub_start = i;
            }
            if i >= hash_end {
                self.literal(data[i]);
                i += 1;
                continue;
            }
            let (mut len, mut dist) = self.mf.find(data, i, p.chain, p.nice, MIN_MATCH - 1);
            self.mf.insert(data, i);
            next_insert = i + 1;
            if len == 4 && dist > p.far4 {
                len = 0;
            }
            if len < MIN_MATCH {
                self.literal(data[i]);
                i += 1;
                continue;
            }
            while len < p.lazy && i + 1 < hash_end {
                let chain = if len >= p.good { p.chain >> 2 } else { p.chain };
                let (l2, d2) = self.mf.find(data, i + 1, chain, p.nice, len);
                self.mf.insert(data, i + 1);
                next_insert = i + 2;
                if l2 > len {
                    self.literal(data[i]);
                    i += 1;
                    len = l2;
                    dist = d2;
                } else {
                    break;
                }
            }
            self.matched(len, dist);
            let end = i + len;
            // Long matches: only their last positions go into the chains
            // (so that the next search still finds near candidates).
            let from = if len <= p.max_insert {
                next_insert
            } else {
                next_insert.max(end - 3)
            };
            for q in from..end.min(hash_end) {
                self.mf.insert(data, q);
            }
            next_insert = end;
            i = end;
        }
        let _ = next_insert;
        block_start = self.end_sub(w, data, block_start, sub_start, &mut sub_at, n);
        write_block(
            w,
            &mut self.codes,
            &self.stats,
            &self.items,
            &data[block_start..n],
            true,
        );
        self.items.clear();
        self.stats.clear();
    }
}

#[cfg(test)]
mod tests;
