//! Blosc2 chunk encoding with C-Blosc2's rules (`docs/filters-format.md`
//! §3.8: split rule, automatic block size, encoder steps; §3.9 filters).
//! Containers (headers, bstarts, stream prefixes, run streams, memcpyed and
//! zero chunks) match C-Blosc2 byte for byte; codec payloads come from the
//! pure-Rust codecs and may differ from the C libraries' bytes.

use super::chunk::filter;
use super::codec::{self, code};
use crate::error::{Error, Result};
use crate::{bitshuffle, shuffle};

/// What to encode with.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Element size in bytes (types over 255 bytes are coded as 1).
    pub typesize: usize,
    /// Compression level 0–9; 0 stores the chunk memcpyed (uncompressed).
    pub clevel: u8,
    /// Compressor code (0 blosclz, 1 lz4, 2 lz4hc, 4 zlib, 5 zstd).
    pub codec: u8,
    /// Filter codes, slot 0…5, applied in slot order (see
    /// [`super::chunk::filter`]; 0 = empty slot).
    pub filters: [u8; 6],
    /// Filter metas, slot 0…5: the element size of a byte shuffle (0 = the
    /// type size), the signed precision of trunc_prec.
    pub filters_meta: [u8; 6],
    /// Block size in bytes, 0 = automatic.
    pub blocksize: usize,
}

fn is_hcr(codec: u8) -> bool {
    matches!(codec, code::LZ4HC | code::ZLIB | code::ZSTD)
}

/// Split rule (§3.8.1): one stream per byte of the type?
pub fn split_rule(
    codec: u8,
    clevel: u8,
    has_shuffle: bool,
    typesize: usize,
    blocksize: usize,
) -> bool {
    let codec_ok =
        matches!(codec, code::BLOSCLZ | code::LZ4) || (codec == code::ZSTD && clevel <= 5);
    codec_ok && has_shuffle && typesize <= 16 && blocksize / typesize.max(1) >= 32
}

/// Automatic block size (§3.8.2). `filter` is the filter in use (1 = byte shuffle).
pub fn stune_blocksize(nbytes: usize, typesize: usize, clevel: u8, codec: u8, filter: u8) -> usize {
    let ts = if typesize > 255 { 1 } else { typesize.max(1) };
    if nbytes < ts {
        return 1;
    }
    let split = split_rule(codec, clevel, filter == filter::SHUFFLE, ts, nbytes);
    let mut bs = nbytes;
    if nbytes >= 32768 {
        let hcr = is_hcr(codec);
        let base = 32768 * if hcr { 2 } else { 1 };
        bs = match clevel {
            0 => base / 4,
            1 => base / 2,
            2 => base,
            3 => base * 2,
            4 | 5 => base * 4,
            6..=8 => base * 8,
            _ => base * 8 * if hcr { 2 } else { 1 },
        };
    }
    if clevel > 0 && split {
        let per = match clevel {
            1..=3 => 32 << 10,
            4..=6 => 64 << 10,
            7 => 128 << 10,
            8 => 256 << 10,
            _ => 512 << 10,
        };
        bs = (per * ts).clamp(32 << 10, 4 << 20);
    }
    bs = bs.min(nbytes);
    if bs > ts {
        bs -= bs % ts;
    }
    bs
}

/// Result of compressing one stream.
pub enum StreamOut {
    /// All zero bytes (Blosc2 only).
    Zero,
    /// One repeated non-zero byte (Blosc2 only).
    Run(u8),
    /// Stored raw.
    Raw,
    /// Codec output, smaller than the stream.
    Coded(Vec<u8>),
}

/// Compress one stream (§3.8.3 step 3); `runs` enables run encodings.
pub fn compress_stream(codec: u8, clevel: u8, src: &[u8], runs: bool) -> StreamOut {
    if runs && is_run(src) {
        return if src[0] == 0 {
            StreamOut::Zero
        } else {
            StreamOut::Run(src[0])
        };
    }
    match codec::compress(codec, clevel, src) {
        Some(c) if !c.is_empty() && c.len() < src.len() => StreamOut::Coded(c),
        _ => StreamOut::Raw,
    }
}

/// Append a stream with its `csize` prefix.
pub fn push_stream(out: &mut Vec<u8>, s: &StreamOut, raw: &[u8]) {
    match s {
        StreamOut::Zero => out.extend_from_slice(&0i32.to_le_bytes()),
        StreamOut::Run(b) => {
            out.extend_from_slice(&(-i32::from(*b)).to_le_bytes());
            out.push(0x01);
        }
        StreamOut::Raw => {
            out.extend_from_slice(&(raw.len() as i32).to_le_bytes());
            out.extend_from_slice(raw);
        }
        StreamOut::Coded(c) => {
            out.extend_from_slice(&(c.len() as i32).to_le_bytes());
            out.extend_from_slice(c);
        }
    }
}

/// Where [`ChunkEncoder::encode_from`] takes the chunk's blocks from.
pub trait BlockSource {
    /// Block `k` of the chunk: `len` bytes starting at byte `k * bs` of the
    /// chunk. A source that must assemble the block writes it into `scratch`
    /// (resized as needed) and returns it.
    fn block<'s>(
        &'s mut self,
        k: usize,
        bs: usize,
        len: usize,
        scratch: &'s mut Vec<u8>,
    ) -> &'s [u8];

    /// Block `k` (`dst.len()` bytes) byte-shuffled with element size `ts`
    /// (what `shuffle::shuffle` makes of [`block`](Self::block)) written into
    /// `dst`; false if this source cannot, and the encoder shuffles itself.
    fn block_shuffled(&mut self, _k: usize, _ts: usize, _dst: &mut [u8]) -> bool {
        false
    }
}

/// A chunk held in memory.
pub struct SliceSource<'a>(pub &'a [u8]);

impl BlockSource for SliceSource<'_> {
    fn block<'s>(&'s mut self, k: usize, bs: usize, len: usize, _: &'s mut Vec<u8>) -> &'s [u8] {
        &self.0[k * bs..k * bs + len]
    }
}

/// Reusable encoder scratch: filter buffers, the gathered block, a copy of
/// block 0 (for delta) and the LZ4 output, all kept between calls.
#[derive(Default)]
pub struct ChunkEncoder {
    a: Vec<u8>,
    b: Vec<u8>,
    bits: Vec<u8>,
    gather: Vec<u8>,
    block0: Vec<u8>,
    coded: Vec<u8>,
    /// Never compress one chunk's streams in parallel (tests of the two paths).
    serial: bool,
}

fn header_into(out: &mut Vec<u8>, s: &Settings, flags: u8, nbytes: usize, bs: usize, b2: u8) {
    out.extend_from_slice(&[
        5,
        1,
        flags,
        if s.typesize > 255 {
            1
        } else {
            s.typesize as u8
        },
    ]);
    out.extend_from_slice(&(nbytes as i32).to_le_bytes());
    out.extend_from_slice(&(bs as i32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&s.filters);
    out.extend_from_slice(&[s.codec, 0]);
    out.extend_from_slice(&s.filters_meta);
    out.extend_from_slice(&[0, b2]);
}

/// Set the chunk's `cbytes` to its length (the chunk is `c`, header first).
fn set_cbytes(c: &mut [u8]) {
    let n = (c.len() as i32).to_le_bytes();
    c[12..16].copy_from_slice(&n);
}

/// Grow `v` to at least `len` bytes (new bytes zero) and return its first `len`.
/// Bytes already there are left as they are: callers overwrite all of them.
fn scratch_of(v: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if v.len() < len {
        v.resize(len, 0);
    }
    &mut v[..len]
}

impl ChunkEncoder {
    /// An encoder with empty scratch buffers (they grow on first use).
    pub fn new() -> Self {
        Self::default()
    }

    /// Encode `src` as one Blosc2 chunk.
    pub fn encode(&mut self, src: &[u8], s: &Settings) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_from(&mut SliceSource(src), src.len(), s, &mut out)?;
        Ok(out)
    }

    /// Encode the `nbytes`-byte chunk that `src` yields block by block as one
    /// Blosc2 chunk, appended to `out`.
    pub fn encode_from(
        &mut self,
        src: &mut dyn BlockSource,
        nbytes: usize,
        s: &Settings,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let mut gather = std::mem::take(&mut self.gather);
        let r = self.encode_inner(src, nbytes, s, out, &mut gather);
        self.gather = gather;
        r
    }

    fn encode_inner(
        &mut self,
        src: &mut dyn BlockSource,
        nbytes: usize,
        s: &Settings,
        out: &mut Vec<u8>,
        gather: &mut Vec<u8>,
    ) -> Result<()> {
        if nbytes > i32::MAX as usize - 64 {
            return Err(Error::filter(0, "blosc2", "chunk too large for Blosc2"));
        }
        let ts = if s.typesize > 255 {
            1
        } else {
            s.typesize.max(1)
        };
        let fmt = codec::format_of(s.codec).filter(|&f| f != codec::format::SNAPPY);
        let fmt = fmt.ok_or_else(|| Error::UnsupportedCodec {
            filter: "blosc2",
            codec: u32::from(s.codec),
            name: codec::name_of(u32::from(s.codec)).into(),
        })?;
        let has = |f: u8| s.filters.contains(&f);
        let bs = if s.blocksize == 0 {
            stune_blocksize(
                nbytes,
                ts,
                s.clevel,
                s.codec,
                if has(filter::SHUFFLE) { 1 } else { 0 },
            )
        } else {
            let bs = s.blocksize.min(nbytes);
            if bs > ts {
                bs - bs % ts
            } else {
                bs
            }
        }
        .max(1);
        let split = split_rule(s.codec, s.clevel, has(filter::SHUFFLE), ts, bs);
        let mut flags = 0x05 | (fmt << 5);
        if has(filter::DELTA) {
            flags |= 0x08;
        }
        if !split {
            flags |= 0x10;
        }
        let base = out.len();
        if s.clevel == 0 || nbytes < 32 {
            memcpyed(out, s, 0x07, nbytes, bs, src, gather);
            return Ok(());
        }
        let nblocks = nbytes.div_ceil(bs);
        if nblocks >= 2
            && !self.serial
            && blocks_in_parallel(s.codec, s.clevel, bs)
            && crate::threads::parallel()
        {
            return self.encode_blocks_parallel(src, nbytes, s, out, gather, (bs, split, flags));
        }
        header_into(out, s, flags, nbytes, bs, 0);
        out.resize(base + 32 + 4 * nblocks, 0);
        let mut all_zero = true;
        for k in 0..nblocks {
            let len = bs.min(nbytes - k * bs);
            let start = (out.len() - base) as i32;
            out[base + 32 + 4 * k..base + 36 + 4 * k].copy_from_slice(&start.to_le_bytes());
            let part_len = len / if split && len == bs { ts } else { 1 };
            let mut coded = std::mem::take(&mut self.coded);
            let r = self.block_streams(src, k, (bs, len, part_len), s, gather, &mut |part| {
                all_zero &= push_compressed(&mut coded, out, s.codec, s.clevel, part);
            });
            self.coded = coded;
            r?;
            if out.len() - base > nbytes + 32 {
                // Coding does not pay: store the chunk as it is.
                out.truncate(base);
                memcpyed(out, s, flags | 0x02, nbytes, bs, src, gather);
                return Ok(());
            }
        }
        close_chunk(out, base, all_zero, s, (flags, nbytes, bs));
        Ok(())
    }

    /// Block `k` (`len` bytes at `k * bs`) filtered as `s` says, handed to
    /// `each` as its streams of `part_len` bytes.
    fn block_streams(
        &mut self,
        src: &mut dyn BlockSource,
        k: usize,
        (bs, len, part_len): (usize, usize, usize),
        s: &Settings,
        gather: &mut Vec<u8>,
        each: &mut dyn FnMut(&[u8]),
    ) -> Result<()> {
        let ts = if s.typesize > 255 {
            1
        } else {
            s.typesize.max(1)
        };
        // Exactly one filter, a byte shuffle by the type size?
        let mut set = s
            .filters
            .iter()
            .zip(&s.filters_meta)
            .filter(|(&f, _)| f != filter::NONE);
        let shuffle_only = matches!(
            (set.next(), set.next()),
            (Some((&filter::SHUFFLE, &m)), None) if m == 0 || usize::from(m) == ts
        );
        // The source may shuffle while it gathers (one pass less).
        let mut a = std::mem::take(&mut self.a);
        if shuffle_only && src.block_shuffled(k, ts, scratch_of(&mut a, len)) {
            a[..len].chunks(part_len).for_each(&mut *each);
            self.a = a;
            return Ok(());
        }
        self.a = a;
        let blk = src.block(k, bs, len, gather);
        if k == 0 && s.filters.contains(&filter::DELTA) {
            self.block0.clear();
            self.block0.extend_from_slice(blk);
        }
        let filtered = self.filter_block(blk, k, s, ts)?;
        let data = if filtered { &self.a[..len] } else { blk };
        data.chunks(part_len).for_each(each);
        Ok(())
    }

    /// [`Self::encode_inner`] for codecs slow enough that one chunk's
    /// streams are worth compressing on several threads: the blocks are
    /// filtered one after another (cheap), their streams compressed in
    /// parallel, and the chunk assembled in order — the same bytes as the
    /// one-thread path, with idle threads picking up streams of a chunk
    /// another thread is still on.
    fn encode_blocks_parallel(
        &mut self,
        src: &mut dyn BlockSource,
        nbytes: usize,
        s: &Settings,
        out: &mut Vec<u8>,
        gather: &mut Vec<u8>,
        (bs, split, flags): (usize, bool, u8),
    ) -> Result<()> {
        let ts = if s.typesize > 255 {
            1
        } else {
            s.typesize.max(1)
        };
        let nblocks = nbytes.div_ceil(bs);
        let mut streams: Vec<Vec<u8>> = Vec::new();
        let mut per_block = Vec::with_capacity(nblocks);
        for k in 0..nblocks {
            let len = bs.min(nbytes - k * bs);
            let part_len = len / if split && len == bs { ts } else { 1 };
            let before = streams.len();
            self.block_streams(src, k, (bs, len, part_len), s, gather, &mut |part| {
                streams.push(part.to_vec())
            })?;
            per_block.push(streams.len() - before);
        }
        let coded = crate::threads::map(&streams, |part| {
            compress_stream(s.codec, s.clevel, part, true)
        });
        let base = out.len();
        header_into(out, s, flags, nbytes, bs, 0);
        out.resize(base + 32 + 4 * nblocks, 0);
        let mut all_zero = true;
        let mut next = streams.iter().zip(&coded);
        for (k, &n) in per_block.iter().enumerate() {
            let start = (out.len() - base) as i32;
            out[base + 32 + 4 * k..base + 36 + 4 * k].copy_from_slice(&start.to_le_bytes());
            for (raw, so) in next.by_ref().take(n) {
                push_stream(out, so, raw);
                all_zero &= matches!(so, StreamOut::Zero);
            }
            if out.len() - base > nbytes + 32 {
                // Coding does not pay: store the chunk as it is.
                out.truncate(base);
                memcpyed(out, s, flags | 0x02, nbytes, bs, src, gather);
                return Ok(());
            }
        }
        close_chunk(out, base, all_zero, s, (flags, nbytes, bs));
        Ok(())
    }

    /// Apply the filters of slots 0…5 to block `k`, leaving the result in
    /// `self.a[..blk.len()]`; false if no filter is set (the block is its own result).
    fn filter_block(&mut self, blk: &[u8], k: usize, s: &Settings, ts: usize) -> Result<bool> {
        let len = blk.len();
        let mut any = false;
        for (&f, &meta) in s.filters.iter().zip(&s.filters_meta) {
            if f == filter::NONE {
                continue;
            }
            let mut a = std::mem::take(&mut self.a);
            let mut b = std::mem::take(&mut self.b);
            let src: &[u8] = if any { &a[..len] } else { blk };
            let dst = scratch_of(&mut b, len);
            let r = match f {
                filter::SHUFFLE => {
                    let es = if meta != 0 { usize::from(meta) } else { ts };
                    shuffle::shuffle(src, dst, es);
                    Ok(())
                }
                filter::BITSHUFFLE => {
                    bitshuffle::bitshuffle(src, dst, ts, &mut self.bits);
                    Ok(())
                }
                filter::DELTA => {
                    let block0 = (k != 0).then_some(self.block0.as_slice());
                    delta_encode(src, dst, block0, ts);
                    Ok(())
                }
                filter::TRUNC_PREC => trunc_prec(src, dst, ts, meta as i8),
                other => Err(Error::unsupported(
                    "Blosc2 chunk",
                    0,
                    format!("filter code {other}"),
                )),
            };
            std::mem::swap(&mut a, &mut b);
            self.a = a;
            self.b = b;
            r?;
            any = true;
        }
        Ok(any)
    }
}

/// End the chunk that starts at `out[base]`: a chunk of zero streams only
/// becomes a header flagged all-zero; either way `cbytes` is set.
fn close_chunk(
    out: &mut Vec<u8>,
    base: usize,
    all_zero: bool,
    s: &Settings,
    (flags, nbytes, bs): (u8, usize, usize),
) {
    if all_zero {
        out.truncate(base);
        header_into(out, s, flags, nbytes, bs, 0x10);
    }
    set_cbytes(&mut out[base..]);
}

/// Streams of one chunk are compressed in parallel ([`ChunkEncoder`]) for
/// codecs where one stream costs far more than handing it to a thread:
/// Zstd and zlib from Blosc2 clevel 6 on 128 KiB blocks or larger.
fn blocks_in_parallel(codec: u8, clevel: u8, bs: usize) -> bool {
    matches!(codec, code::ZSTD | code::ZLIB) && clevel >= 6 && bs >= 128 * 1024
}

/// Compress one stream (§3.8.3 step 3, run encodings on) and append it
/// with its `csize` prefix (`coded`: LZ4 scratch); true if the stream is all zeros.
fn push_compressed(
    coded: &mut Vec<u8>,
    out: &mut Vec<u8>,
    codec: u8,
    clevel: u8,
    part: &[u8],
) -> bool {
    if matches!(codec, code::LZ4 | code::LZ4HC) && !is_run(part) {
        let max = lz4_flex::block::get_maximum_output_size(part.len());
        let dst = scratch_of(coded, max);
        match lz4_flex::block::compress_into(part, dst) {
            Ok(n) if n > 0 && n < part.len() => {
                out.extend_from_slice(&(n as i32).to_le_bytes());
                out.extend_from_slice(&dst[..n]);
            }
            _ => push_stream(out, &StreamOut::Raw, part),
        }
        return false;
    }
    let so = compress_stream(codec, clevel, part, true);
    push_stream(out, &so, part);
    matches!(so, StreamOut::Zero)
}

/// Is `src` one repeated byte (a run stream)? Checked 64 bytes at a time (a
/// loop the compiler vectorises), stopping at the first block with a difference.
pub fn is_run(src: &[u8]) -> bool {
    let Some(&first) = src.first() else {
        return false;
    };
    let mut blocks = src.chunks_exact(64);
    for b in &mut blocks {
        if b.iter().fold(0u8, |acc, &x| acc | (x ^ first)) != 0 {
            return false;
        }
    }
    blocks.remainder().iter().all(|&b| b == first)
}

fn memcpyed(
    out: &mut Vec<u8>,
    s: &Settings,
    flags: u8,
    nbytes: usize,
    bs: usize,
    src: &mut dyn BlockSource,
    gather: &mut Vec<u8>,
) {
    let base = out.len();
    header_into(out, s, flags, nbytes, bs, 0);
    let mut k = 0;
    while k * bs < nbytes {
        let len = bs.min(nbytes - k * bs);
        out.extend_from_slice(src.block(k, bs, len, gather));
        k += 1;
    }
    set_cbytes(&mut out[base..]);
}

/// Delta encode (§3.9.3).
fn delta_encode(src: &[u8], dst: &mut [u8], block0: Option<&[u8]>, ts: usize) {
    let w = match ts {
        1 | 2 | 4 | 8 => ts,
        t if t % 8 == 0 => 8,
        _ => 1,
    };
    dst.copy_from_slice(src);
    let body = dst.len() / w * w;
    match block0 {
        None => {
            for i in w..body {
                dst[i] = src[i] ^ src[i - w];
            }
        }
        Some(r) => {
            for (d, r) in dst[..body].iter_mut().zip(r) {
                *d ^= *r;
            }
        }
    }
}

/// Truncate precision (§3.9.4): zero low mantissa bits of f32/f64.
fn trunc_prec(src: &[u8], dst: &mut [u8], ts: usize, p: i8) -> Result<()> {
    let mant = match ts {
        4 => 23i32,
        8 => 52,
        _ => {
            return Err(Error::filter(
                0,
                "blosc2",
                "trunc_prec needs typesize 4 or 8",
            ))
        }
    };
    let zero_bits = if p >= 0 {
        mant - i32::from(p)
    } else {
        -i32::from(p)
    };
    if zero_bits >= mant || zero_bits < 0 {
        return Err(Error::filter(
            0,
            "blosc2",
            "trunc_prec precision out of range",
        ));
    }
    dst.copy_from_slice(src);
    let mask: u64 = !((1u64 << zero_bits) - 1);
    for e in dst.chunks_exact_mut(ts) {
        let mut b = [0u8; 8];
        b[..ts].copy_from_slice(e);
        let v = u64::from_le_bytes(b) & mask;
        e.copy_from_slice(&v.to_le_bytes()[..ts]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn is_run_matches_definition(len in 0usize..300, at in 0usize..300, b in 0u8..3, x in 0u8..3) {
            let mut v = vec![b; len];
            if at < len {
                v[at] = x;
            }
            let want = v.split_first().is_some_and(|(f, r)| r.iter().all(|y| y == f));
            proptest::prop_assert_eq!(is_run(&v), want);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]
        /// Streams compressed in parallel make the same chunk as the
        /// one-stream-at-a-time path: zero, run, noisy and smooth blocks,
        /// every filter setting, a short last block, zstd and zlib.
        #[test]
        fn parallel_streams_equal_serial(
            kind in 0u8..4, filt in 0u8..4, zlib in proptest::bool::ANY,
            extra in 0usize..5000, seed in 0u64..1000,
        ) {
            let n = 3 * 128 * 1024 + extra * 2;
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let src: Vec<u8> = (0..n).map(|i| {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                match kind {
                    0 => 0,
                    1 => if i < n / 2 { 7 } else { 0 },
                    2 => x as u8,
                    _ => ((i / 2) as u16 % 300 + (x as u16 & 3)).to_le_bytes()[i % 2],
                }
            }).collect();
            let (f, m) = match filt {
                0 => (filter::NONE, 0),
                1 => (filter::SHUFFLE, 0),
                2 => (filter::BITSHUFFLE, 0),
                _ => (filter::DELTA, 0),
            };
            let s = Settings {
                typesize: 2,
                clevel: 6,
                codec: if zlib { code::ZLIB } else { code::ZSTD },
                filters: [0, 0, 0, 0, 0, f],
                filters_meta: [0, 0, 0, 0, 0, m],
                blocksize: 128 * 1024,
            };
            let mut serial = ChunkEncoder { serial: true, ..ChunkEncoder::default() };
            let want = serial.encode(&src, &s).unwrap();
            let mut par = ChunkEncoder::default();
            let mut got = Vec::new();
            par.encode_blocks_parallel(
                &mut SliceSource(&src), n, &s, &mut got, &mut Vec::new(),
                (128 * 1024, split_rule(s.codec, s.clevel, f == filter::SHUFFLE, 2, 128 * 1024),
                 want[2]),
            ).unwrap();
            proptest::prop_assert!(got == want, "kind {} filt {} zlib {}", kind, filt, zlib);
        }
    }

    #[test]
    fn block_sizes_from_spec() {
        // lz4:1 / zstd:3 + shuffle, int16 → 64 KiB
        assert_eq!(stune_blocksize(2 << 20, 2, 1, code::LZ4, 1), 65536);
        assert_eq!(stune_blocksize(2 << 20, 2, 3, code::ZSTD, 1), 65536);
        // zstd:3 bitshuffle → 128 KiB; zstd:9 bitshuffle → 1 MiB
        assert_eq!(stune_blocksize(2 << 20, 2, 3, code::ZSTD, 2), 131072);
        assert_eq!(stune_blocksize(2 << 20, 2, 9, code::ZSTD, 2), 1 << 20);
        // blosclz:5 shuffle → 64 Ki × typesize
        assert_eq!(stune_blocksize(2 << 20, 2, 5, code::BLOSCLZ, 1), 131072);
        // 100 000-byte int16 chunks
        assert_eq!(stune_blocksize(100_000, 2, 1, code::LZ4, 1), 65536);
        assert_eq!(stune_blocksize(100_000, 2, 3, code::ZSTD, 2), 100_000);
    }
}
