//! The optimal parser of our Zstandard encoder (RFC 8878 §3.1.1.3): it cuts a
//! block into literals and sequences, choosing the path of least estimated
//! bit cost through all matches the match finder lists (forward dynamic
//! programming over stretches of up to 4 Ki bytes), with symbol prices from
//! running statistics, the repeat offsets tracked along every path, and a
//! first pass over the first block to seed the statistics — the scheme of
//! libzstd's `btultra2` strategy (levels 20–22).

mod matcher;
mod price;

pub(crate) use matcher::MatchFinder;
pub(crate) use matcher::Params;
use matcher::{Match, OPT_NUM};
use price::{Stats, MAX_PRICE};

use super::Seq;

/// Repeat offsets at the start of a frame (RFC 8878 §3.1.2.5).
pub(crate) const INITIAL_REPS: [u32; 3] = [1, 4, 8];
/// Shortest match.
const MIN_MATCH: u32 = 3;

/// The repeat offsets after a sequence with `off_value` (RFC `Offset_Value`)
/// and `ll0` (no literals), per RFC 8878 §3.1.1.5.
#[inline]
pub(crate) fn update_reps(rep: [u32; 3], off_value: u32, ll0: bool) -> [u32; 3] {
    if off_value > 3 {
        return [off_value - 3, rep[0], rep[1]];
    }
    let code = off_value - 1 + u32::from(ll0);
    match code {
        0 => rep,
        1 => [rep[1], rep[0], rep[2]],
        2 => [rep[2], rep[0], rep[1]],
        _ => [rep[0].wrapping_sub(1), rep[0], rep[1]],
    }
}

/// Level-22 parameters for a source of `src_len` bytes: libzstd's table row
/// for that size class, with the window, tree and hash shrunk to the source.
pub(crate) fn params_level22(src_len: usize) -> Params {
    let (w, c, h, s) = if src_len <= 16 << 10 {
        (14, 15, 15, 10)
    } else if src_len <= 128 << 10 {
        (17, 18, 17, 11)
    } else if src_len <= 256 << 10 {
        (18, 19, 19, 13)
    } else {
        (27, 27, 25, 9)
    };
    let src_log = if src_len < 64 {
        6
    } else {
        64 - ((src_len - 1) as u64).leading_zeros()
    };
    let window_log = (w as u32).min(src_log).max(10);
    let hash_log = (h as u32).min(window_log + 1);
    let mut chain_log = c as u32;
    let cycle = chain_log - 1;
    if cycle > window_log {
        chain_log -= cycle - window_log;
    }
    Params {
        window_log,
        chain_log,
        hash_log,
        search_log: s,
        target_length: 999,
    }
}

/// One node of the forward pass: the cheapest way found to reach this
/// position, as a match (`mlen` > 0, `off_value`) followed by `litlen`
/// literals, and the repeat offsets after it.
#[derive(Clone, Copy, Default)]
struct Node {
    price: i32,
    off_value: u32,
    mlen: u32,
    litlen: u32,
    rep: [u32; 3],
}

/// Slots of the forward pass: a power of two above the longest stretch
/// ([`OPT_NUM`] + a few), so that an index taken modulo the length is the
/// index itself for every slot the parser uses.
const OPT_SLOTS: usize = (OPT_NUM as usize + 4).next_power_of_two();

/// The nodes of one stretch, indexed modulo [`OPT_SLOTS`] (the identity for
/// the indices the parser uses, all ≤ `OPT_NUM + 1`), which lets the
/// compiler drop the bounds checks of the hot loops.
struct Slots(Box<[Node; OPT_SLOTS]>);

impl Slots {
    fn new() -> Slots {
        // Built on the heap (the array is 224 KiB); the length is right.
        match vec![Node::default(); OPT_SLOTS]
            .into_boxed_slice()
            .try_into()
        {
            Ok(b) => Slots(b),
            Err(_) => unreachable!("a slice of OPT_SLOTS nodes"),
        }
    }
}

impl std::ops::Index<usize> for Slots {
    type Output = Node;
    #[inline(always)]
    fn index(&self, i: usize) -> &Node {
        &self.0[i % OPT_SLOTS]
    }
}

impl std::ops::IndexMut<usize> for Slots {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut Node {
        &mut self.0[i % OPT_SLOTS]
    }
}

/// Parser state kept across the blocks of one frame.
pub(crate) struct Parser {
    mf: MatchFinder,
    stats: Stats,
    opt: Slots,
    matches: Vec<Match>,
    path: Vec<(u32, u32, u32)>,
    scratch_lits: Vec<u8>,
    scratch_seqs: Vec<Seq>,
}

impl Parser {
    /// A parser with tables for `p`.
    pub(crate) fn new(p: Params) -> Parser {
        Parser::with_finder(MatchFinder::new(p))
    }

    /// A parser around match-finder tables made ready for this input
    /// ([`MatchFinder::start_input`]), e.g. reused from an earlier input.
    pub(crate) fn with_finder(mf: MatchFinder) -> Parser {
        Parser {
            mf,
            stats: Stats::new(),
            opt: Slots::new(),
            matches: Vec::with_capacity(1024),
            path: Vec::with_capacity(64),
            scratch_lits: Vec::new(),
            scratch_seqs: Vec::new(),
        }
    }

    /// The match-finder tables, for reuse on a later input.
    pub(crate) fn into_finder(self) -> MatchFinder {
        self.mf
    }

    /// Parse `src[start..end]` (one block; earlier bytes of `src` are the
    /// window), appending the block's literals and sequences; `rep` goes in
    /// as the repeat offsets before the block and comes out as those after.
    pub(crate) fn parse_block(
        &mut self,
        src: &[u8],
        start: usize,
        end: usize,
        rep: &mut [u32; 3],
        literals: &mut Vec<u8>,
        seqs: &mut Vec<Seq>,
    ) {
        let end = end.min(src.len());
        let start = start.min(end);
        if self.stats.is_fresh()
            && start == 0
            && self.mf.next_to_update == self.mf.low()
            && end - start > 8
        {
            // Seed the statistics with a throw-away pass over the first block.
            let mut tmp = *rep;
            let mut l = std::mem::take(&mut self.scratch_lits);
            let mut s = std::mem::take(&mut self.scratch_seqs);
            self.pass(src, start, end, &mut tmp, &mut l, &mut s);
            l.clear();
            s.clear();
            self.scratch_lits = l;
            self.scratch_seqs = s;
            self.mf.forget(end - start);
        }
        self.pass(src, start, end, rep, literals, seqs);
    }

    fn pass(
        &mut self,
        src: &[u8],
        start: usize,
        end: usize,
        rep: &mut [u32; 3],
        literals: &mut Vec<u8>,
        seqs: &mut Vec<Seq>,
    ) {
        self.stats.rescale(&src[start..end]);
        let iend = end;
        let ilimit = end.saturating_sub(8);
        let sufficient = 999u32.min(OPT_NUM - 1);
        let mut next3 = self.mf.next_to_update;
        let mut ip = start;
        let mut anchor = start;
        if self.mf.index(ip) == self.mf.low() {
            ip += 1;
        }
        let mut matches = std::mem::take(&mut self.matches);
        while ip < ilimit {
            let mut last_pos: u32;
            let last: Node;
            {
                let litlen = (ip - anchor) as u32;
                let ll0 = litlen == 0;
                self.mf
                    .all_matches(src, ip, iend, rep, ll0, &mut next3, &mut matches);
                let Some(&longest) = matches.last() else {
                    ip += 1;
                    continue;
                };
                let opt = &mut self.opt;
                opt[0] = Node {
                    price: self.stats.ll(litlen),
                    off_value: 0,
                    mlen: 0,
                    litlen,
                    rep: *rep,
                };
                if longest.len > sufficient {
                    last = Node {
                        price: 0,
                        off_value: longest.off_value,
                        mlen: longest.len,
                        litlen: 0,
                        rep: [0; 3],
                    };
                    last_pos = longest.len;
                    self.store(
                        src,
                        &mut ip,
                        &mut anchor,
                        last_pos,
                        last,
                        rep,
                        literals,
                        seqs,
                    );
                    continue;
                }
                let mut pos = 1u32;
                while pos < MIN_MATCH {
                    opt[pos as usize] = Node {
                        price: MAX_PRICE,
                        off_value: 0,
                        mlen: 0,
                        litlen: litlen + pos,
                        rep: *rep,
                    };
                    pos += 1;
                }
                let base = opt[0].price + self.stats.ll(0);
                for m in matches.iter() {
                    let mbase = base + self.stats.off_part(m.off_value);
                    while pos <= m.len {
                        opt[pos as usize] = Node {
                            price: mbase + self.stats.ml_part(pos),
                            off_value: m.off_value,
                            mlen: pos,
                            litlen: 0,
                            rep: *rep,
                        };
                        pos += 1;
                    }
                }
                last_pos = pos - 1;
                opt[pos as usize].price = MAX_PRICE;
            }

            let mut jumped: Option<Node> = None;
            let mut cur: u32 = 1;
            while cur <= last_pos {
                let inr = ip + cur as usize;
                let c = cur as usize;
                // One more literal after the path to cur - 1?
                {
                    let prev = self.opt[c - 1];
                    let litlen = prev.litlen + 1;
                    let lit_at = src[inr - 1];
                    let price = prev.price
                        + self.stats.lit(lit_at)
                        + (self.stats.ll(litlen) - self.stats.ll(litlen - 1));
                    if price <= self.opt[c].price {
                        let prev_match = self.opt[c];
                        self.opt[c] = prev;
                        self.opt[c].litlen = litlen;
                        self.opt[c].price = price;
                        let inc1 = self.stats.ll(1) - self.stats.ll(0);
                        if prev_match.litlen == 0 && inc1 < 0 && inr < iend {
                            let lit_next = self.stats.lit(src[inr]);
                            let with1 = prev_match.price + lit_next + inc1;
                            let with_more = price
                                + lit_next
                                + (self.stats.ll(litlen + 1) - self.stats.ll(litlen));
                            if with1 < with_more && with1 < self.opt[c + 1].price {
                                let pv = (cur - prev_match.mlen) as usize;
                                let pn = self.opt[pv];
                                let reps =
                                    update_reps(pn.rep, prev_match.off_value, pn.litlen == 0);
                                self.opt[c + 1] = Node {
                                    price: with1,
                                    off_value: prev_match.off_value,
                                    mlen: prev_match.mlen,
                                    litlen: 1,
                                    rep: reps,
                                };
                                if last_pos < cur + 1 {
                                    last_pos = cur + 1;
                                }
                            }
                        }
                    }
                }
                if self.opt[c].litlen == 0 {
                    let n = self.opt[c];
                    let pv = (cur - n.mlen) as usize;
                    let pn = self.opt[pv];
                    self.opt[c].rep = update_reps(pn.rep, n.off_value, pn.litlen == 0);
                }
                if inr > ilimit {
                    cur += 1;
                    continue;
                }
                if cur == last_pos {
                    break;
                }
                let here = self.opt[c];
                let ll0 = here.litlen == 0;
                let base = here.price + self.stats.ll(0);
                self.mf
                    .all_matches(src, inr, iend, &here.rep, ll0, &mut next3, &mut matches);
                if let Some(&longest) = matches.last() {
                    if longest.len > sufficient
                        || cur + longest.len >= OPT_NUM
                        || inr + longest.len as usize >= iend
                    {
                        jumped = Some(Node {
                            price: 0,
                            off_value: longest.off_value,
                            mlen: longest.len,
                            litlen: 0,
                            rep: [0; 3],
                        });
                        last_pos = cur + longest.len;
                        break;
                    }
                    let mut start_ml = MIN_MATCH;
                    for m in matches.iter() {
                        if m.len < start_ml {
                            continue;
                        }
                        let mbase = base + self.stats.off_part(m.off_value);
                        // Open every slot this match reaches first: prices
                        // stay far below MAX_PRICE, so a fresh slot takes
                        // the match below, as if it had been opened on
                        // demand. `cur + m.len < OPT_NUM` (the jump above).
                        let top = cur + m.len;
                        while last_pos < top {
                            last_pos += 1;
                            let e = &mut self.opt[last_pos as usize];
                            e.price = MAX_PRICE;
                            e.litlen = 1;
                        }
                        // Each length reaches its own slot: any order.
                        let lo = (cur + start_ml) as usize;
                        let nodes = &mut self.opt.0[lo..=top as usize];
                        for (ml, node) in (start_ml..).zip(nodes.iter_mut()) {
                            let price = mbase + self.stats.ml_part(ml);
                            debug_assert!(price < MAX_PRICE);
                            if price < node.price {
                                *node = Node {
                                    price,
                                    off_value: m.off_value,
                                    mlen: ml,
                                    litlen: 0,
                                    rep: [0; 3],
                                };
                            }
                        }
                        start_ml = m.len + 1;
                    }
                }
                self.opt[last_pos as usize + 1].price = MAX_PRICE;
                cur += 1;
            }
            match jumped {
                Some(n) => last = n,
                None => last = self.opt[last_pos as usize],
            }
            self.store(
                src,
                &mut ip,
                &mut anchor,
                last_pos,
                last,
                rep,
                literals,
                seqs,
            );
        }
        self.matches = matches;
        literals.extend_from_slice(&src[anchor..end]);
    }

    /// Walk back from the end of the stretch and emit its sequences.
    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        src: &[u8],
        ip: &mut usize,
        anchor: &mut usize,
        last_pos: u32,
        last: Node,
        rep: &mut [u32; 3],
        literals: &mut Vec<u8>,
        seqs: &mut Vec<Seq>,
    ) {
        if last.mlen == 0 {
            *ip += last_pos as usize;
            return;
        }
        // (start, mlen, off_value), last match first.
        self.path.clear();
        let (mut p, mut n) = (last_pos, last);
        loop {
            let start = p - n.litlen - n.mlen;
            self.path.push((start, n.mlen, n.off_value));
            let prev = self.opt[start as usize];
            if prev.mlen == 0 {
                break;
            }
            p = start;
            n = prev;
        }
        let base = *ip;
        for &(start, mlen, off_value) in self.path.iter().rev() {
            let mstart = base + start as usize;
            let lits = &src[*anchor..mstart];
            self.stats.update(lits, off_value, mlen);
            literals.extend_from_slice(lits);
            let lit_len = lits.len() as u32;
            *rep = update_reps(*rep, off_value, lit_len == 0);
            seqs.push(Seq {
                lit_len,
                match_len: mlen,
                off_value,
            });
            *anchor = mstart + mlen as usize;
        }
        *ip = *anchor;
        self.stats.set_prices();
    }
}

#[cfg(test)]
/// Thread CPU time in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`; 0 where there is none).
pub(crate) fn thread_cpu_ns() -> u64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec, and the clock id is a constant.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rebuild a block from its literals and sequences (RFC 8878 §3.1.1.4).
    pub(crate) fn reconstruct(
        out: &mut Vec<u8>,
        literals: &[u8],
        seqs: &[Seq],
        rep: &mut [u32; 3],
    ) -> usize {
        let mut lp = 0usize;
        for s in seqs {
            out.extend_from_slice(&literals[lp..lp + s.lit_len as usize]);
            lp += s.lit_len as usize;
            let off = if s.off_value > 3 {
                s.off_value - 3
            } else {
                let code = s.off_value - 1 + u32::from(s.lit_len == 0);
                match code {
                    0 => rep[0],
                    1 => rep[1],
                    2 => rep[2],
                    _ => rep[0] - 1,
                }
            };
            *rep = update_reps(*rep, s.off_value, s.lit_len == 0);
            assert_eq!(off, rep[0]);
            assert!(off as usize <= out.len() && off > 0);
            assert!(s.match_len >= 3);
            for _ in 0..s.match_len {
                let b = out[out.len() - off as usize];
                out.push(b);
            }
        }
        out.extend_from_slice(&literals[lp..]);
        lp
    }

    fn roundtrip(src: &[u8]) -> usize {
        let mut p = Parser::new(params_level22(src.len()));
        let mut rep = INITIAL_REPS;
        let mut drep = INITIAL_REPS;
        let mut out = Vec::new();
        let mut nseq = 0;
        let mut start = 0;
        while start < src.len() || start == 0 {
            let end = (start + (128 << 10)).min(src.len());
            let (mut l, mut s) = (Vec::new(), Vec::new());
            p.parse_block(src, start, end, &mut rep, &mut l, &mut s);
            reconstruct(&mut out, &l, &s, &mut drep);
            assert_eq!(rep, drep);
            nseq += s.len();
            assert_eq!(out.len(), end);
            start = end;
            if end == src.len() {
                break;
            }
        }
        assert_eq!(out, src);
        nseq
    }

    /// Rough coded size of a block: Shannon cost of the literals and of
    /// the three code streams, plus the extra bits.
    fn estimate(literals: &[u8], seqs: &[Seq]) -> f64 {
        fn ent(counts: &[u32]) -> f64 {
            let n: u32 = counts.iter().sum();
            let n = f64::from(n.max(1));
            counts
                .iter()
                .filter(|&&c| c > 0)
                .map(|&c| -f64::from(c) * (f64::from(c) / n).log2())
                .sum()
        }
        let mut lc = [0u32; 256];
        for &b in literals {
            lc[b as usize] += 1;
        }
        let (mut llc, mut mlc, mut ofc) = ([0u32; 36], [0u32; 53], [0u32; 32]);
        let mut extra = 0f64;
        for s in seqs {
            let l = price::ll_code(s.lit_len);
            let m = price::ml_code(s.match_len - 3);
            let o = price::highbit(s.off_value) as usize;
            llc[l] += 1;
            mlc[m] += 1;
            ofc[o] += 1;
            extra += f64::from(price::LL_BITS[l]) + f64::from(price::ML_BITS[m]) + o as f64;
        }
        (ent(&lc) + ent(&llc) + ent(&mlc) + ent(&ofc) + extra) / 8.0 + 60.0
    }

    /// `ZENC_DIR=/tmp/zblk cargo test --release --lib bench_parse -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn bench_parse() {
        let Ok(dir) = std::env::var("ZENC_DIR") else {
            println!("skipped: ZENC_DIR unset");
            return;
        };
        let filt = std::env::var("ZENC_FILTER").unwrap_or_default();
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "bin"))
            .filter(|p| p.to_string_lossy().contains(&filt))
            .collect();
        names.sort();
        let (mut t_ours, mut t_rusty, mut s_ours, mut s_rusty, mut s_ref) =
            (0u64, 0u64, 0f64, 0usize, 0usize);
        let with_rusty = std::env::var("ZENC_RUSTY").is_ok();
        for p in &names {
            let src = std::fs::read(p).unwrap();
            let refsize = std::fs::metadata(p.with_extension("bin.ref"))
                .map(|m| m.len() as usize)
                .unwrap_or(0);
            let t0 = thread_cpu_ns();
            let mut parser = Parser::new(params_level22(src.len()));
            let mut rep = INITIAL_REPS;
            let mut est = 13.0;
            let mut start = 0;
            while start < src.len() {
                let end = (start + (128 << 10)).min(src.len());
                let (mut l, mut s) = (Vec::new(), Vec::new());
                parser.parse_block(&src, start, end, &mut rep, &mut l, &mut s);
                est += estimate(&l, &s).min((end - start) as f64 + 3.0);
                start = end;
            }
            let t1 = thread_cpu_ns();
            let mut rs = 0;
            if with_rusty {
                let r = rusty_zstd::compress_with(
                    &src,
                    rusty_zstd::CompressOptions {
                        level: 22,
                        checksum: false,
                    },
                );
                rs = r.map(|v| v.len()).unwrap_or(0);
            }
            let t2 = thread_cpu_ns();
            t_ours += t1 - t0;
            t_rusty += t2 - t1;
            s_ours += est;
            s_rusty += rs;
            s_ref += refsize;
            println!(
                "{} est {:.0} ref {} rusty {} | ours {:.3}s rusty {:.3}s",
                p.file_name().unwrap().to_string_lossy(),
                est,
                refsize,
                rs,
                (t1 - t0) as f64 * 1e-9,
                (t2 - t1) as f64 * 1e-9
            );
        }
        println!(
            "TOTAL est {:.0} ref {} rusty {} est/ref {:.4} | cpu ours {:.2}s rusty {:.2}s",
            s_ours,
            s_ref,
            s_rusty,
            s_ours / s_ref.max(1) as f64,
            t_ours as f64 * 1e-9,
            t_rusty as f64 * 1e-9
        );
    }

    #[test]
    fn params_match_libzstd_for_one_mebibyte() {
        let p = params_level22(1 << 20);
        assert_eq!(
            (p.window_log, p.chain_log, p.hash_log, p.search_log),
            (20, 21, 21, 9)
        );
    }

    #[test]
    fn parses_reproduce_the_input() {
        assert_eq!(roundtrip(&[]), 0);
        roundtrip(b"abc");
        roundtrip(&[7u8; 100]);
        let mut x = 1u32;
        let mut v: Vec<u8> = (0..300_000)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                if i % 1000 < 500 {
                    (x >> 28) as u8
                } else {
                    (i % 7) as u8
                }
            })
            .collect();
        assert!(roundtrip(&v) > 100);
        v.truncate(1000);
        roundtrip(&v);
        let text: Vec<u8> = b"the quick brown fox jumps over the lazy dog "
            .iter()
            .cycle()
            .take(200_000)
            .copied()
            .collect();
        assert!(roundtrip(&text) < 50);
    }
}
