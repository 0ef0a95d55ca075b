//! A greedy Zstandard encoder for the middle levels on block-sized inputs
//! (Blosc2 `zstd:3` = libzstd level 5, the `balanced` profile): hash chains
//! searched a few candidates deep, the last repeat offset tried one byte
//! ahead first, and the shared entropy back end ([`super::entropy`]).
//!
//! libzstd's `greedy` strategy (RFC 8878 leaves the parse to the encoder)
//! works the same way; its row-hash tables are not copied. The tables stay
//! with the thread between inputs and are never cleared: every input gets
//! indices above all earlier ones (`base`), so older entries read as out of
//! the window. Long matches insert only their first and last positions (the
//! middle of a long run is never the best start of a later match), which
//! keeps run-heavy blocks (bit-shuffled labels) cheap.

use super::entropy::{write_frame_header, BlockEncoder, BlockKind};
use super::opt::{update_reps, INITIAL_REPS};
use super::Seq;
use crate::zstd_decode::BLOCK_MAX;
use std::cell::RefCell;

/// Match-finder settings (libzstd's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GreedyParams {
    /// Hash table of `1 << hash_log` heads.
    pub(crate) hash_log: u32,
    /// Chain of `1 << chain_log` links (older candidates of a head).
    pub(crate) chain_log: u32,
    /// Candidates compared per position: `1 << search_log`.
    pub(crate) search_log: u32,
    /// Shortest match taken, 4..=7 (hashed over this many bytes).
    pub(crate) min_match: u32,
}

/// Largest input encoded here (the frames use a window covering the input).
pub(crate) const MAX_SRC: usize = 1 << 20;

/// Matches longer than this insert only their ends into the tables.
const SKIP_INSERT_AFTER: usize = 384;
/// Positions inserted at the start and end of such a stretch.
const INSERT_HEAD: usize = 96;
const INSERT_TAIL: usize = 32;
/// Misses widen the step by one per `1 << SEARCH_STRENGTH` literals.
const SEARCH_STRENGTH: u32 = 8;

/// Tables and scratch kept per thread.
struct State {
    p: GreedyParams,
    hash: Vec<u32>,
    chain: Vec<u32>,
    /// Index of position 0 of the current input; entries below it are stale.
    base: u32,
    /// `base` of the next input.
    next_base: u32,
    lits: Vec<u8>,
    seqs: Vec<Seq>,
    /// Block writer reused across inputs ([`BlockEncoder::reset`] per frame:
    /// its predefined tables are built once per thread).
    enc: Option<Box<BlockEncoder>>,
}

impl State {
    fn new(p: GreedyParams) -> State {
        State {
            p,
            hash: vec![0; 1 << p.hash_log],
            chain: vec![0; 1 << p.chain_log],
            base: 1,
            next_base: 1,
            lits: Vec::new(),
            seqs: Vec::new(),
            enc: None,
        }
    }

    /// Start an input of `len` bytes: indices `base..base + len` are its.
    fn start(&mut self, len: usize) {
        let len = len as u64;
        if u64::from(self.next_base) + len + 1 >= u64::from(u32::MAX) {
            self.hash.fill(0);
            self.chain.fill(0);
            self.next_base = 1;
        }
        self.base = self.next_base;
        // `len` ≤ MAX_SRC, so this stays below u32::MAX (checked above).
        self.next_base = self.base + len as u32 + 1;
    }
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

/// Little-endian u64 at `p` (zero-padded past the end).
#[inline(always)]
fn read64(src: &[u8], p: usize) -> u64 {
    match src.get(p..p + 8) {
        Some(s) => {
            let mut b = [0u8; 8];
            b.copy_from_slice(s);
            u64::from_le_bytes(b)
        }
        None => {
            let mut b = [0u8; 8];
            if let Some(s) = src.get(p..) {
                b[..s.len().min(8)].copy_from_slice(&s[..s.len().min(8)]);
            }
            u64::from_le_bytes(b)
        }
    }
}

#[inline(always)]
fn read32(src: &[u8], p: usize) -> u32 {
    read64(src, p) as u32
}

/// Length of the common prefix of `src[a..]` and `src[b..]` (b < a), not
/// reaching past `limit`.
#[inline(always)]
fn count(src: &[u8], a: usize, b: usize, limit: usize) -> usize {
    let limit = limit.min(src.len());
    let mut n = 0usize;
    // 32 bytes per step while they agree (runs of labels make long
    // matches); the first differing piece is resolved below.
    if let (Some(x), Some(y)) = (src.get(a..limit), src.get(b..)) {
        for (p, q) in x.chunks_exact(32).zip(y.chunks_exact(32)) {
            match (<&[u8; 32]>::try_from(p), <&[u8; 32]>::try_from(q)) {
                (Ok(p), Ok(q)) if p == q => n += 32,
                _ => break,
            }
        }
    }
    while a + n + 8 <= limit {
        let d = read64(src, a + n) ^ read64(src, b + n);
        if d != 0 {
            return n + (d.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    while a + n < limit && src.get(a + n) == src.get(b + n) {
        n += 1;
    }
    n
}

/// Hash of the `mm` bytes at `p` into `log` bits.
#[inline(always)]
fn hash(src: &[u8], p: usize, mm: u32, log: u32) -> usize {
    const PRIME: u64 = 0xCF1B_BCDC_B7A5_6463;
    let v = read64(src, p) << (64 - 8 * mm);
    (v.wrapping_mul(PRIME) >> (64 - log)) as usize
}

/// `src` as one frame (content size, no checksum), or `None` when it is
/// larger than [`MAX_SRC`] or the parameters are out of range.
pub(crate) fn compress(src: &[u8], p: GreedyParams) -> Option<Vec<u8>> {
    if src.len() > MAX_SRC
        || !(4..=7).contains(&p.min_match)
        || !(6..=24).contains(&p.hash_log)
        || !(6..=24).contains(&p.chain_log)
        || p.search_log > 10
    {
        return None;
    }
    STATE
        .try_with(|cell| {
            let mut guard = cell.try_borrow_mut().ok();
            match guard.as_deref_mut() {
                Some(slot) => {
                    if slot.as_ref().is_none_or(|s| s.p != p) {
                        *slot = Some(State::new(p));
                    }
                    slot.as_mut().map(|st| compress_in(src, st))
                }
                None => Some(compress_in(src, &mut State::new(p))),
            }
        })
        .ok()
        .flatten()
}

fn compress_in(src: &[u8], st: &mut State) -> Vec<u8> {
    let n = src.len();
    let window_log = if n <= 1 << 10 {
        10
    } else {
        64 - ((n - 1) as u64).leading_zeros()
    };
    let mut out = Vec::with_capacity(n / 4 + 64);
    write_frame_header(n as u64, window_log, &mut out);
    if n == 0 {
        out.extend_from_slice(&[1, 0, 0]);
        return out;
    }
    st.start(n);
    let mut enc = st.enc.take().unwrap_or_default();
    enc.reset();
    let mut rep = INITIAL_REPS;
    let mut next_insert = 0usize;
    let mut start = 0;
    let mut lits = std::mem::take(&mut st.lits);
    let mut seqs = std::mem::take(&mut st.seqs);
    while start < n {
        let end = n.min(start + BLOCK_MAX);
        lits.clear();
        seqs.clear();
        let before = rep;
        parse_block(
            src,
            start,
            end,
            st,
            &mut rep,
            &mut next_insert,
            &mut lits,
            &mut seqs,
        );
        let kind = enc.encode_block(&src[start..end], &lits, &seqs, end == n, &mut out);
        if kind != BlockKind::Compressed {
            rep = before;
        }
        start = end;
    }
    st.lits = lits;
    st.seqs = seqs;
    st.enc = Some(enc);
    out
}

/// Insert positions `from..to` into the hash chains.
#[inline(always)]
fn insert(src: &[u8], st: &mut State, from: usize, to: usize) {
    let (mm, hl, cmask) = (
        st.p.min_match,
        st.p.hash_log,
        (1usize << st.p.chain_log) - 1,
    );
    let base = st.base;
    for q in from..to {
        let h = hash(src, q, mm, hl);
        if let (Some(head), Some(link)) = (st.hash.get(h).copied(), st.chain.get_mut(q & cmask)) {
            *link = head;
        }
        if let Some(head) = st.hash.get_mut(h) {
            *head = base + q as u32;
        }
    }
}

/// Greedy parse of `src[start..end]` (earlier bytes are the window) into
/// `lits` and `seqs`; `rep` and `next_insert` carry over between blocks.
#[allow(clippy::too_many_arguments)]
fn parse_block(
    src: &[u8],
    start: usize,
    end: usize,
    st: &mut State,
    rep: &mut [u32; 3],
    next_insert: &mut usize,
    lits: &mut Vec<u8>,
    seqs: &mut Vec<Seq>,
) {
    let mm = st.p.min_match as usize;
    let chain_size = 1usize << st.p.chain_log;
    let cmask = chain_size - 1;
    let attempts = 1u32 << st.p.search_log;
    let base = st.base;
    let mut anchor = start;
    // Position 0 has no history.
    let mut ip = start + usize::from(start == 0);
    // Room for the 8-byte reads of a match start.
    let ilimit = end.saturating_sub(8);
    while ip < ilimit {
        // The last offset, one byte ahead (libzstd's greedy does the same).
        let r0 = rep[0] as usize;
        let (mut ml, mut mstart, mut off_value) = (0usize, ip, 0u32);
        if r0 > 0 && r0 <= ip + 1 && read32(src, ip + 1) == read32(src, ip + 1 - r0) {
            ml = 4 + count(src, ip + 5, ip + 5 - r0, end);
            mstart = ip + 1;
            off_value = 1;
        } else {
            if *next_insert < ip {
                if ip - *next_insert > SKIP_INSERT_AFTER {
                    insert(src, st, *next_insert, *next_insert + INSERT_HEAD);
                    *next_insert = ip - INSERT_TAIL;
                }
                insert(src, st, *next_insert, ip);
                *next_insert = ip;
            }
            let h = hash(src, ip, st.p.min_match, st.p.hash_log);
            let mut m = st.hash.get(h).copied().unwrap_or(0);
            let mut best = mm - 1;
            for _ in 0..attempts {
                if m < base {
                    break;
                }
                let mpos = (m - base) as usize;
                if mpos >= ip {
                    break;
                }
                if src.get(mpos + best) == src.get(ip + best) {
                    let len = count(src, ip, mpos, end);
                    if len > best {
                        best = len;
                        ml = len;
                        off_value = (ip - mpos) as u32 + 3;
                        if ip + len >= end {
                            break;
                        }
                    }
                }
                if ip - mpos >= chain_size {
                    break;
                }
                m = st.chain.get(mpos & cmask).copied().unwrap_or(0);
            }
            if ml < mm {
                ip += 1 + ((ip - anchor) >> SEARCH_STRENGTH);
                continue;
            }
            // Extend backwards over equal bytes.
            let off = (off_value - 3) as usize;
            while mstart > anchor
                && mstart > off
                && src.get(mstart - 1) == src.get(mstart - 1 - off)
            {
                mstart -= 1;
                ml += 1;
            }
        }
        // Store the sequence.
        let lit_len = mstart - anchor;
        lits.extend_from_slice(&src[anchor..mstart]);
        seqs.push(Seq {
            lit_len: lit_len as u32,
            match_len: ml as u32,
            off_value,
        });
        *rep = update_reps(*rep, off_value, lit_len == 0);
        ip = mstart + ml;
        anchor = ip;
        // Immediate repeats of the second offset (no literals between).
        while ip < ilimit {
            let r1 = rep[1] as usize;
            if r1 == 0 || r1 > ip || read32(src, ip) != read32(src, ip - r1) {
                break;
            }
            let l = 4 + count(src, ip + 4, ip + 4 - r1, end);
            seqs.push(Seq {
                lit_len: 0,
                match_len: l as u32,
                off_value: 1,
            });
            *rep = update_reps(*rep, 1, true);
            ip += l;
            anchor = ip;
        }
    }
    lits.extend_from_slice(&src[anchor..end]);
    // Positions past the matches are inserted by the next block's searches.
    if *next_insert < start {
        *next_insert = start;
    }
}

#[cfg(test)]
mod tests {
    use super::super::compress::tests::check_cli;
    use super::*;
    use crate::zstd_codec::decode_bounded;
    use proptest::prelude::*;

    const P: GreedyParams = GreedyParams {
        hash_log: 13,
        chain_log: 13,
        search_log: 3,
        min_match: 5,
    };

    fn check(src: &[u8], p: GreedyParams) -> Vec<u8> {
        let z = compress(src, p).expect("in range");
        let back = decode_bounded(&z, src.len(), "zstd").expect("our decoder");
        assert!(back == src, "round trip ({} bytes)", src.len());
        let mut out = Vec::with_capacity(src.len());
        ruzstd::decoding::FrameDecoder::new()
            .decode_all_to_vec(&z, &mut out)
            .expect("ruzstd");
        assert!(out == src);
        z
    }

    fn mixed(n: usize, seed: u32) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                match (i / 3000) % 5 {
                    0 => (x >> 29) as u8,
                    1 => (i % 13) as u8,
                    2 => 0,
                    3 => ((i / 7) as u8) ^ ((x >> 31) as u8),
                    _ => (x >> 24) as u8,
                }
            })
            .collect()
    }

    #[test]
    fn frames_decode_everywhere() {
        let sparse: Vec<u8> = (0..32_768)
            .map(|i| if i % 4093 < 3 { (i / 4093) as u8 } else { 0 })
            .collect();
        for src in [
            Vec::new(),
            b"a".to_vec(),
            b"abcdabcdabcdabcdabcd".to_vec(),
            vec![7u8; 100_000],
            sparse,
            mixed(32_768, 1),
            mixed(200_000, 2),
            mixed(MAX_SRC, 3),
        ] {
            for mm in 4..=7 {
                let z = check(&src, GreedyParams { min_match: mm, ..P });
                check_cli(&z, &src);
            }
        }
        assert!(compress(&vec![0u8; MAX_SRC + 1], P).is_none());
        assert!(compress(b"x", GreedyParams { min_match: 3, ..P }).is_none());
    }

    /// Tables reused across inputs (other content, other sizes, and after
    /// the indices wrap) give the frames of fresh tables.
    #[test]
    fn reused_tables_match_fresh_ones() {
        let inputs = [
            mixed(40_000, 4),
            mixed(32_768, 5),
            vec![0u8; 5000],
            mixed(40_000, 4),
        ];
        let fresh: Vec<Vec<u8>> = inputs
            .iter()
            .map(|s| {
                let mut st = State::new(P);
                compress_in(s, &mut st)
            })
            .collect();
        let mut st = State::new(P);
        for (s, f) in inputs.iter().zip(&fresh) {
            assert!(compress_in(s, &mut st) == *f);
        }
        st.next_base = u32::MAX - 10;
        for (s, f) in inputs.iter().zip(&fresh) {
            assert!(compress_in(s, &mut st) == *f);
        }
        for (s, f) in inputs.iter().zip(&fresh) {
            assert!(compress(s, P).expect("P") == *f);
        }
    }

    /// `count` against a byte-by-byte prefix length, for matches ending in
    /// every position of the 32-byte pieces and at the limit.
    #[test]
    fn count_equals_bytewise() {
        let naive = |src: &[u8], a: usize, b: usize, limit: usize| {
            let limit = limit.min(src.len());
            (0..limit.saturating_sub(a))
                .take_while(|&k| src[a + k] == src[b + k])
                .count()
        };
        let mut x = 7u32;
        for len in [0usize, 1, 7, 8, 31, 32, 33, 64, 100, 300] {
            for diff_at in 0..len + 2 {
                let mut src = vec![5u8; 2 * len + 40];
                let (b, a) = (3usize, 3 + len + 17);
                if let Some(v) = src.get_mut(a + diff_at) {
                    *v = 6;
                }
                for limit in [a + diff_at, a + len, a + len + 1, src.len(), src.len() + 9] {
                    assert_eq!(count(&src, a, b, limit), naive(&src, a, b, limit));
                }
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let lim = (x >> 8) as usize % (src.len() + 1);
                assert_eq!(count(&src, a, b, lim), naive(&src, a, b, lim));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn count_random(
            v in proptest::collection::vec(0u8..2, 0..400),
            b in 0usize..200,
            gap in 1usize..200,
            limit in 0usize..500,
        ) {
            let a = b + gap;
            let expect = (0..limit.min(v.len()).saturating_sub(a))
                .take_while(|&k| v[a + k] == v[b + k])
                .count();
            prop_assert_eq!(count(&v, a, b, limit), expect);
        }

        #[test]
        fn random_and_skewed_inputs_round_trip(
            v in proptest::collection::vec(any::<u8>(), 0..5000),
            skew in proptest::collection::vec(0u8..4, 0..20_000),
            mm in 4u32..=7,
        ) {
            let p = GreedyParams { min_match: mm, ..P };
            check(&v, p);
            check(&skew, p);
        }

        #[test]
        fn run_heavy_inputs_round_trip(
            runs in proptest::collection::vec((any::<u8>(), 1usize..3000), 1..60),
            noise in proptest::collection::vec((0usize..200_000, any::<u8>()), 0..40),
            mm in 4u32..=7,
            hl in 8u32..=16,
        ) {
            let mut v: Vec<u8> = runs.iter().flat_map(|&(b, k)| std::iter::repeat_n(b, k)).collect();
            for (i, b) in noise {
                if let Some(x) = v.get_mut(i) {
                    *x = b;
                }
            }
            let p = GreedyParams { min_match: mm, hash_log: hl, chain_log: hl.min(14), search_log: 3 };
            check(&v, p);
        }
    }
}
