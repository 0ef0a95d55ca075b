//! Entropy back end of our Zstandard encoder (RFC 8878 §3.1.1.2–3.1.1.5):
//! block header, literals section (Raw / RLE / Huffman with 1 or 4 streams /
//! Treeless), sequences section (per-stream Predefined / RLE / FSE / Repeat
//! chosen by estimated size) and the Raw or RLE block fallback; plus the frame
//! header (§3.1.1.1) as `ZSTD_compressCCtx` writes it.

mod bits;
mod fse;
mod huf;
#[cfg(test)]
mod tests;

use self::bits::BitWriter;
use self::fse::{FseTable, LL_DEFAULT, ML_DEFAULT, OF_DEFAULT};
use self::huf::{HufTable, PackageMerge};
use super::Seq;

/// Zstandard frame magic number (RFC 8878 §3.1.1).
const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
/// Largest block content (RFC 8878 §3.1.1.2.4).
pub(crate) use crate::zstd_decode::BLOCK_MAX;

/// What [`BlockEncoder::encode_block`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockKind {
    /// The block's bytes verbatim (the sequences were not used).
    Raw,
    /// One byte repeated (the sequences were not used).
    Rle,
    /// Literals and sequences, entropy coded.
    Compressed,
}

use super::codes::{highbit, LL_BASE, LL_BITS, ML_BASE, ML_BITS};
pub(crate) use super::codes::{ll_code, ml_code, of_code};

/// Sequence-section compression mode of one stream (RFC §3.1.1.3.2.1).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Predefined = 0,
    Rle = 1,
    Fse = 2,
    Repeat = 3,
}

/// Per-stream (LL, OF, ML) table state.
struct Stream {
    /// Largest accuracy log allowed (LL 9, OF 8, ML 9).
    max_log: u32,
    predefined: FseTable,
    /// The table the decoder would repeat (none before the first sequences).
    prev: Option<FseTable>,
    /// Candidate built for this block.
    cand: FseTable,
    counts: [u32; fse::MAX_SYMS],
    /// Mode chosen for this block, and its table lives in `cand`.
    mode: Mode,
}

impl Stream {
    fn new(default: &[i16], log: u32, max_log: u32) -> Self {
        let mut predefined = FseTable::empty();
        let ok = predefined.build(default, log);
        debug_assert!(ok);
        Stream {
            max_log,
            predefined,
            prev: None,
            cand: FseTable::empty(),
            counts: [0; fse::MAX_SYMS],
            mode: Mode::Predefined,
        }
    }

    /// Estimated bits ×256 of coding `counts` with `t` (its final state
    /// included), `None` if a symbol is missing.
    fn table_cost(t: &FseTable, counts: &[u32]) -> Option<u64> {
        let mut sum = u64::from(t.log) * 256;
        for (s, &c) in counts.iter().enumerate() {
            if c > 0 {
                sum += u64::from(c) * u64::from(t.cost256(s)?);
            }
        }
        Some(sum)
    }

    /// Pick the cheapest mode for this block's codes; the table to code with
    /// is then [`Stream::table`]. `nb` is the number of sequences.
    fn choose(&mut self, nb: usize, scratch: &mut Vec<u8>) {
        let counts = self.counts;
        let top = counts.iter().rposition(|&c| c > 0).unwrap_or(0);
        let counts = &counts[..=top];
        let distinct = counts.iter().filter(|&&c| c > 0).count();
        let mut best = (u64::MAX, Mode::Predefined);
        if distinct == 1 {
            // RLE costs its one byte; a repeated RLE table of the same symbol
            // costs nothing, and predefined wins only for one or two sequences.
            best = (8 * 256, Mode::Rle);
        }
        if let Some(c) = Self::table_cost(&self.predefined, counts) {
            if c < best.0 {
                best = (c, Mode::Predefined);
            }
        }
        if let Some(c) = self.prev.as_ref().and_then(|p| Self::table_cost(p, counts)) {
            if c < best.0 {
                best = (c, Mode::Repeat);
            }
        }
        if distinct >= 2 && best.0 > fse_lower_bound(counts, nb) {
            let total = nb as u32;
            // Accuracy logs from the smallest that holds every symbol to the
            // limit (libzstd stops at log2(nb) − 2 or so; we price each).
            let min_log = (usize::BITS - (distinct - 1).leading_zeros()).max(5);
            let src_log = (highbit(total.saturating_sub(1)) + 1).max(5);
            let hi = self.max_log.min(src_log.max(min_log));
            let mut norm = [0i16; fse::MAX_SYMS];
            let mut best_fse: Option<(u64, u32, [i16; fse::MAX_SYMS])> = None;
            for log in min_log..=hi {
                if !fse::normalize(counts, total, log, &mut norm[..=top]) {
                    continue;
                }
                let hdr = fse::ncount_bytes(&norm[..=top], log, scratch) as u64 * 8 * 256;
                let c = hdr + fse::data_cost256(counts, &norm[..=top], log) + u64::from(log) * 256;
                if best_fse.as_ref().is_none_or(|b| c < b.0) {
                    best_fse = Some((c, log, norm));
                } else {
                    // A larger log costs more header for finer
                    // probabilities; once that stops paying, stop.
                    break;
                }
            }
            if let Some((c, log, norm)) = best_fse {
                if c < best.0 && self.cand.build(&norm[..=top], log) {
                    best = (c, Mode::Fse);
                }
            }
        }
        self.mode = best.1;
        if self.mode == Mode::Rle {
            self.cand.build_rle(top as u8);
        }
    }

    /// The table of the chosen mode.
    fn table(&self) -> &FseTable {
        match self.mode {
            Mode::Predefined => &self.predefined,
            Mode::Rle | Mode::Fse => &self.cand,
            Mode::Repeat => self.prev.as_ref().unwrap_or(&self.predefined),
        }
    }

    /// Append the table description of the chosen mode.
    fn write_description(&self, out: &mut Vec<u8>) {
        match self.mode {
            Mode::Rle => {
                let s = self.cand.norm.iter().position(|&n| n != 0).unwrap_or(0);
                out.push(s as u8);
            }
            Mode::Fse => {
                let top = self.cand.norm.iter().rposition(|&n| n != 0).unwrap_or(0);
                fse::write_ncount(&self.cand.norm[..=top], self.cand.log, out);
            }
            Mode::Predefined | Mode::Repeat => {}
        }
    }

    /// The block was emitted compressed: the decoder now repeats this table.
    fn commit(&mut self) {
        match self.mode {
            Mode::Predefined => self.prev = Some(self.predefined.clone()),
            Mode::Rle | Mode::Fse => self.prev = Some(self.cand.clone()),
            Mode::Repeat => {}
        }
    }
}

/// A lower bound (bits ×256) of what [`Stream::choose`] prices any FSE
/// table at for `counts` (`nb` codes in all): the empirical entropy (from
/// rounded logarithms, so less a margin of 2 per code: each rounding is
/// within half a unit), one header byte and an accuracy log of at least 5.
fn fse_lower_bound(counts: &[u32], nb: usize) -> u64 {
    let nb = nb as u64;
    let mut sum_c_log = 0u64;
    for &c in counts {
        if c > 0 {
            sum_c_log += u64::from(c) * u64::from(fse::log2_256(c));
        }
    }
    let n_log = nb * u64::from(fse::log2_256(nb.min(u64::from(u32::MAX)) as u32));
    n_log.saturating_sub(sum_c_log).saturating_sub(2 * nb) + (8 + 5) * 256
}

/// Literals-section choice awaiting the block's fate.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LitCommit {
    /// Raw, RLE or Treeless: the Huffman table the decoder holds is unchanged.
    Keep,
    /// A new table (in `huf_cand`) was described.
    New,
}

/// Block writer keeping the tables a decoder would repeat across the blocks
/// of one frame (use a new one per frame).
pub(crate) struct BlockEncoder {
    huf_prev: Option<HufTable>,
    huf_cand: HufTable,
    pm: PackageMerge,
    ll: Stream,
    of: Stream,
    ml: Stream,
    ll_codes: Vec<u8>,
    ml_codes: Vec<u8>,
    of_codes: Vec<u8>,
    scratch: Vec<u8>,
    scratch2: Vec<u8>,
}

impl Default for BlockEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl BlockEncoder {
    /// An encoder at the start of a frame.
    pub(crate) fn new() -> Self {
        BlockEncoder {
            huf_prev: None,
            huf_cand: HufTable::empty(),
            pm: PackageMerge::default(),
            ll: Stream::new(&LL_DEFAULT, 6, 9),
            of: Stream::new(&OF_DEFAULT, 5, 8),
            ml: Stream::new(&ML_DEFAULT, 6, 9),
            ll_codes: Vec::new(),
            ml_codes: Vec::new(),
            of_codes: Vec::new(),
            scratch: Vec::new(),
            scratch2: Vec::new(),
        }
    }

    /// Forget the repeatable tables (a new frame starts).
    pub(crate) fn reset(&mut self) {
        self.huf_prev = None;
        self.ll.prev = None;
        self.of.prev = None;
        self.ml.prev = None;
    }

    /// Append one block (3-byte header included) for `src` (the block's
    /// bytes, at most 128 KiB) to `out`, coded from `literals` and `seqs`
    /// (which must reproduce `src` given the window; the caller guarantees
    /// it). `last` sets Last_Block. When the result is Raw or Rle the caller
    /// must roll back its repeat-offset state (the decoder does not see the
    /// sequences).
    pub(crate) fn encode_block(
        &mut self,
        src: &[u8],
        literals: &[u8],
        seqs: &[Seq],
        last: bool,
        out: &mut Vec<u8>,
    ) -> BlockKind {
        debug_assert!(src.len() <= BLOCK_MAX);
        let start = out.len();
        if src.len() >= 2 && all_equal(src) {
            push_block_header(out, 1, src.len(), last);
            out.push(src[0]);
            return BlockKind::Rle;
        }
        if src.is_empty() {
            push_block_header(out, 0, 0, last);
            return BlockKind::Raw;
        }
        out.extend_from_slice(&[0; 3]);
        let lit = self.write_literals(literals, out);
        self.write_sequences(seqs, out);
        let size = out.len() - start - 3;
        if size >= src.len() {
            out.truncate(start);
            push_block_header(out, 0, src.len(), last);
            out.extend_from_slice(src);
            return BlockKind::Raw;
        }
        let h = (size as u32) << 3 | 2 << 1 | u32::from(last);
        out[start..start + 3].copy_from_slice(&h.to_le_bytes()[..3]);
        if lit == LitCommit::New {
            self.huf_prev = Some(self.huf_cand.clone());
        }
        if !seqs.is_empty() {
            self.ll.commit();
            self.of.commit();
            self.ml.commit();
        }
        BlockKind::Compressed
    }

    /// Append the literals section, the cheapest of Raw, RLE, Huffman with a
    /// new table (1 or 4 streams) and Treeless.
    fn write_literals(&mut self, lits: &[u8], out: &mut Vec<u8>) -> LitCommit {
        let n = lits.len();
        if n >= 2 && all_equal(lits) {
            push_lit_header_raw(out, 1, n);
            out.push(lits[0]);
            return LitCommit::Keep;
        }
        let raw_size = raw_header_len(n) + n;
        if n < 2 {
            push_lit_header_raw(out, 0, n);
            out.extend_from_slice(lits);
            return LitCommit::Keep;
        }
        // Histograms of the four segments (the whole when one stream).
        let seg = n.div_ceil(4);
        let mut hists = [[0u32; 256]; 4];
        for (h, chunk) in hists.iter_mut().zip(lits.chunks(seg)) {
            for &b in chunk {
                h[usize::from(b)] += 1;
            }
        }
        let mut total = [0u32; 256];
        for h in &hists {
            for (t, &c) in total.iter_mut().zip(h.iter()) {
                *t += c;
            }
        }
        // (size, streams, new table)
        let mut best: (usize, u8, bool) = (raw_size, 0, false);
        let sizes = |t: &HufTable, tree: usize, best: &mut (usize, u8, bool), new: bool| {
            if n < 1024 {
                let body = tree + (t.bits(&total) as usize + 8) / 8;
                if body < 1024 {
                    let s = 3 + body;
                    if s < best.0 {
                        *best = (s, 1, new);
                    }
                }
            }
            if n >= 256 {
                let body = tree
                    + 6
                    + hists
                        .iter()
                        .map(|h| (t.bits(h) as usize + 8) / 8)
                        .sum::<usize>();
                let s = huf_header_len(n.max(body)) + body;
                if s < best.0 {
                    *best = (s, 4, new);
                }
            }
        };
        if let Some(prev) = &self.huf_prev {
            if prev.covers(&total) {
                sizes(prev, 0, &mut best, false);
            }
        }
        self.huf_cand.build(&total, &mut self.pm);
        self.scratch.clear();
        let described = self
            .huf_cand
            .write_description(&mut self.scratch, &mut self.scratch2);
        if described {
            sizes(&self.huf_cand, self.scratch.len(), &mut best, true);
        }
        let (_, streams, new) = best;
        if streams == 0 {
            push_lit_header_raw(out, 0, n);
            out.extend_from_slice(lits);
            return LitCommit::Keep;
        }
        let table = if new {
            &self.huf_cand
        } else {
            match &self.huf_prev {
                Some(t) => t,
                None => &self.huf_cand,
            }
        };
        let hdr_at = out.len();
        out.extend_from_slice(&[0; 3]);
        let body_at = out.len();
        if new {
            out.extend_from_slice(&self.scratch);
        }
        if streams == 1 {
            table.write_stream(lits, out);
        } else {
            let jump_at = out.len();
            out.extend_from_slice(&[0; 6]);
            let mut ends = [0usize; 3];
            for (k, chunk) in lits.chunks(seg).enumerate() {
                let before = out.len();
                table.write_stream(chunk, out);
                if k < 3 {
                    ends[k] = out.len() - before;
                }
            }
            for (k, e) in ends.iter().enumerate() {
                out[jump_at + 2 * k..jump_at + 2 * k + 2]
                    .copy_from_slice(&(*e as u16).to_le_bytes());
            }
        }
        let body = out.len() - body_at;
        let kind = if new { 2u64 } else { 3 };
        let hdr: Vec<u8> = if streams == 1 {
            let v = kind | (n as u64) << 4 | (body as u64) << 14;
            v.to_le_bytes()[..3].to_vec()
        } else {
            let big = n.max(body);
            let (fmt, bits, len) = if big < 1 << 10 {
                (1u64, 10, 3)
            } else if big < 1 << 14 {
                (2, 14, 4)
            } else {
                (3, 18, 5)
            };
            let v = kind | fmt << 2 | (n as u64) << 4 | (body as u64) << (4 + bits);
            v.to_le_bytes()[..len].to_vec()
        };
        // Replace the 3-byte placeholder by the real header.
        out.splice(hdr_at..hdr_at + 3, hdr);
        if new {
            LitCommit::New
        } else {
            LitCommit::Keep
        }
    }

    /// Append the sequences section (RFC §3.1.1.3.2).
    fn write_sequences(&mut self, seqs: &[Seq], out: &mut Vec<u8>) {
        let nb = seqs.len();
        if nb < 128 {
            out.push(nb as u8);
        } else if nb < 0x7F00 {
            out.extend_from_slice(&[(nb >> 8) as u8 + 0x80, nb as u8]);
        } else {
            let r = (nb - 0x7F00) as u16;
            out.push(0xFF);
            out.extend_from_slice(&r.to_le_bytes());
        }
        if nb == 0 {
            return;
        }
        self.ll_codes.clear();
        self.ml_codes.clear();
        self.of_codes.clear();
        self.ll.counts = [0; fse::MAX_SYMS];
        self.ml.counts = [0; fse::MAX_SYMS];
        self.of.counts = [0; fse::MAX_SYMS];
        for s in seqs {
            let (l, m, o) = (
                ll_code(s.lit_len),
                ml_code(s.match_len),
                of_code(s.off_value),
            );
            self.ll_codes.push(l);
            self.ml_codes.push(m);
            self.of_codes.push(o);
            self.ll.counts[usize::from(l) & 63] += 1;
            self.ml.counts[usize::from(m) & 63] += 1;
            self.of.counts[usize::from(o) & 63] += 1;
        }
        self.ll.choose(nb, &mut self.scratch);
        self.of.choose(nb, &mut self.scratch);
        self.ml.choose(nb, &mut self.scratch);
        out.push((self.ll.mode as u8) << 6 | (self.of.mode as u8) << 4 | (self.ml.mode as u8) << 2);
        self.ll.write_description(out);
        self.of.write_description(out);
        self.ml.write_description(out);
        encode_seqs(
            self.ll.table(),
            self.of.table(),
            self.ml.table(),
            seqs,
            &self.ll_codes,
            &self.ml_codes,
            &self.of_codes,
            out,
        );
    }
}

/// The sequence bitstream: sequences last to first, each its three FSE
/// symbols (OF, ML, LL) then its extra bits (LL, ML, OF), so the decoder
/// reads them first to first in the RFC's order.
#[allow(clippy::too_many_arguments)]
fn encode_seqs(
    ll: &FseTable,
    of: &FseTable,
    ml: &FseTable,
    seqs: &[Seq],
    llc: &[u8],
    mlc: &[u8],
    ofc: &[u8],
    out: &mut Vec<u8>,
) {
    let n = seqs.len().min(llc.len()).min(mlc.len()).min(ofc.len());
    if n == 0 {
        return;
    }
    let mut w = BitWriter::new(out, n * 5 + 16);
    let last = n - 1;
    let mut sml = ml.init(mlc[last]);
    let mut sof = of.init(ofc[last]);
    let mut sll = ll.init(llc[last]);
    put_extra(&mut w, &seqs[last], llc[last], mlc[last], ofc[last]);
    for i in (0..last).rev() {
        // ≤ 7 + 8 + 9 + 9 bits pending, then the literal-length extra bits.
        of.encode(&mut sof, ofc[i], &mut w);
        ml.encode(&mut sml, mlc[i], &mut w);
        ll.encode(&mut sll, llc[i], &mut w);
        put_extra(&mut w, &seqs[i], llc[i], mlc[i], ofc[i]);
    }
    ml.flush(sml, &mut w);
    of.flush(sof, &mut w);
    ll.flush(sll, &mut w);
    w.finish_marked();
}

/// Extra bits of one sequence: LL (≤ 16, on ≤ 33 pending bits), flush, ML
/// (≤ 16) and OF (≤ 31), flush.
#[inline(always)]
fn put_extra(w: &mut BitWriter<'_>, s: &Seq, l: u8, m: u8, o: u8) {
    let (l, m) = (usize::from(l) % 36, usize::from(m) % 53);
    w.add(
        u64::from(s.lit_len.wrapping_sub(LL_BASE[l])),
        u32::from(LL_BITS[l]),
    );
    w.flush();
    w.add(
        u64::from(s.match_len.wrapping_sub(ML_BASE[m])),
        u32::from(ML_BITS[m]),
    );
    let o = u32::from(o) & 31;
    w.add(u64::from(s.off_value).wrapping_sub(1u64 << o), o);
    w.flush();
}

/// Every byte of `v` equals the first (true when empty), compared 32 bytes
/// at a time: label blocks often open with a long run.
fn all_equal(v: &[u8]) -> bool {
    let Some(&first) = v.first() else {
        return true;
    };
    let pat = [first; 32];
    let chunks = v.chunks_exact(32);
    let tail = chunks.remainder();
    chunks
        .map(<&[u8; 32]>::try_from)
        .all(|c| c.is_ok_and(|c| *c == pat))
        && tail.iter().all(|&b| b == first)
}

/// Block header: Last_Block, Block_Type, Block_Size (RFC §3.1.1.2).
fn push_block_header(out: &mut Vec<u8>, kind: u32, size: usize, last: bool) {
    let h = (size as u32) << 3 | kind << 1 | u32::from(last);
    out.extend_from_slice(&h.to_le_bytes()[..3]);
}

fn raw_header_len(n: usize) -> usize {
    if n < 32 {
        1
    } else if n < 4096 {
        2
    } else {
        3
    }
}

/// Raw (kind 0) or RLE (kind 1) literals header of `n` regenerated bytes.
fn push_lit_header_raw(out: &mut Vec<u8>, kind: u32, n: usize) {
    let n = n as u32;
    match raw_header_len(n as usize) {
        1 => out.push((kind | n << 3) as u8),
        2 => out.extend_from_slice(&((kind | 1 << 2 | n << 4) as u16).to_le_bytes()),
        _ => out.extend_from_slice(&(kind | 3 << 2 | n << 4).to_le_bytes()[..3]),
    }
}

/// Header length of a 4-stream compressed literals section whose larger
/// size field is `big`.
fn huf_header_len(big: usize) -> usize {
    if big < 1 << 10 {
        3
    } else if big < 1 << 14 {
        4
    } else {
        5
    }
}

/// Append the frame header as `ZSTD_compressCCtx` writes it: magic, the
/// descriptor with Frame_Content_Size (and Single_Segment when the window
/// covers the content), no checksum, no dictionary.
pub(crate) fn write_frame_header(content_size: u64, window_log: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&MAGIC);
    let single = window_log >= 63 || (1u64 << window_log) >= content_size;
    let fcs = u8::from(content_size >= 256)
        + u8::from(content_size >= 65536 + 256)
        + u8::from(content_size >= 0xFFFF_FFFF);
    out.push(fcs << 6 | u8::from(single) << 5);
    if !single {
        out.push((window_log.clamp(10, 41) as u8 - 10) << 3);
    }
    match fcs {
        0 => {
            if single {
                out.push(content_size as u8)
            }
        }
        1 => out.extend_from_slice(&((content_size - 256) as u16).to_le_bytes()),
        2 => out.extend_from_slice(&(content_size as u32).to_le_bytes()),
        _ => out.extend_from_slice(&content_size.to_le_bytes()),
    }
}
