//! Match finder for the optimal parser: a binary tree of suffixes over a
//! hash of the first 3 bytes, plus a small table of the latest position of
//! each 3-byte hash for near matches, the search libzstd's `btultra2`
//! strategy runs. It lists, for one position, the repeat-offset matches and
//! then matches of strictly increasing length (RFC 8878 §3.1.1.3.2 offsets).

/// Longest stretch the parser prices at once.
pub(crate) const OPT_NUM: u32 = 1 << 12;
/// Near matches from the 3-byte table are kept only below this distance.
const HASH3_MAX_DIST: u32 = 1 << 18;
/// Index of the first byte of the source (0 means "no entry").
const START_INDEX: u32 = 2;
/// Reused tables are zeroed (and indices restart) once an input's indices
/// could pass this; below it, a new input simply starts above every index
/// already in the tables, so stale entries fall below `low` and are never
/// followed.
const INDEX_LIMIT: u32 = 1 << 31;

/// One candidate: `off_value` as the RFC's `Offset_Value`, `len` ≥ 3.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Match {
    pub(crate) off_value: u32,
    pub(crate) len: u32,
}

/// Table sizes and search effort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    pub(crate) window_log: u32,
    pub(crate) chain_log: u32,
    pub(crate) hash_log: u32,
    pub(crate) search_log: u32,
    pub(crate) target_length: u32,
}

/// Read 8 bytes at `p` (zero-padded past the end).
#[inline(always)]
fn rd64(src: &[u8], p: usize) -> u64 {
    match src.get(p..p + 8) {
        Some(s) => {
            let mut w = [0u8; 8];
            w.copy_from_slice(s);
            u64::from_le_bytes(w)
        }
        None => {
            let mut w = [0u8; 8];
            for (i, b) in w.iter_mut().enumerate() {
                *b = src.get(p + i).copied().unwrap_or(0);
            }
            u64::from_le_bytes(w)
        }
    }
}

/// Number of equal bytes at `a` and `b` (`b < a`), not reading at or past `limit`.
#[inline(always)]
fn count(src: &[u8], a: usize, b: usize, limit: usize) -> usize {
    let limit = limit.min(src.len());
    if a >= limit {
        return 0;
    }
    match_len(&src[..limit], a, b, 0).0
}

/// Read 8 bytes at `p` as a little-endian word.
///
/// # Safety
/// `p .. p + 8` must lie inside one allocation the caller may read.
#[inline(always)]
unsafe fn word_at(p: *const u8) -> u64 {
    // SAFETY: the caller guarantees `p .. p + 8` is readable; unaligned
    // reads are allowed by `read_unaligned`.
    u64::from_le(unsafe { p.cast::<u64>().read_unaligned() })
}

/// Length of the common prefix of `s[a..]` and `s[b..]` (`b < a`), the
/// first `start` bytes being known equal, and whether at the first
/// difference the byte at `b` is the smaller one (`false` when the
/// prefix runs to the end of `s`). Returns `(0, false)` if `b >= a` or
/// `start > s.len() - a` (callers never ask that).
#[inline(always)]
fn match_len(s: &[u8], a: usize, b: usize, start: usize) -> (usize, bool) {
    let n = s.len().saturating_sub(a);
    if b >= a || start > n {
        return (0, false);
    }
    let pa = s.as_ptr().wrapping_add(a);
    let pb = s.as_ptr().wrapping_add(b);
    let mut i = start;
    while i + 8 <= n {
        // SAFETY: `a + n == s.len()` and `b < a`, so with `i + 8 <= n`
        // both `a + i .. a + i + 8` and `b + i .. b + i + 8` lie in `s`.
        let (x, y) = unsafe { (word_at(pa.add(i)), word_at(pb.add(i))) };
        let d = x ^ y;
        if d != 0 {
            let k = d.trailing_zeros() & !7;
            return (i + (k / 8) as usize, ((y >> k) as u8) < ((x >> k) as u8));
        }
        i += 8;
    }
    while i < n {
        let (x, y) = (s[a + i], s[b + i]);
        if x != y {
            return (i, y < x);
        }
        i += 1;
    }
    (n, false)
}

/// Ask the cache for `t[slot]` (a tree node's two slots, a hash entry);
/// a hint only, no effect on results. `slot` may be out of range: the
/// address is only computed (wrapping), never dereferenced.
#[inline(always)]
fn prefetch_node(t: &[u32], slot: usize) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: `_mm_prefetch` only hints the cache and never faults or
    // reads memory visible to the program; the pointer is not dereferenced.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            t.as_ptr().wrapping_add(slot).cast::<i8>(),
        );
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = (t, slot);
}

/// Hash of the 3 bytes at `p` to `log` bits.
#[inline(always)]
fn hash3(src: &[u8], p: usize, log: u32) -> usize {
    let v = (rd64(src, p) as u32) << 8;
    (v.wrapping_mul(506_832_829) >> (32 - log)) as usize
}

const DUMMY: usize = usize::MAX;

/// The two open links of one descent of the binary tree: where the next
/// candidate smaller (larger) than the current position will be hung, and
/// how many leading bytes every candidate on that side shares with it.
struct Descent {
    smaller: usize,
    larger: usize,
    common_s: usize,
    common_l: usize,
}

impl Descent {
    /// A descent for the position whose two tree slots start at `slot`.
    #[inline(always)]
    fn new(slot: usize) -> Self {
        Descent {
            smaller: slot,
            larger: slot + 1,
            common_s: 0,
            common_l: 0,
        }
    }

    /// Bytes every remaining candidate is known to share with the position.
    #[inline(always)]
    fn common(&self) -> usize {
        self.common_s.min(self.common_l)
    }

    /// Hang candidate `m` (equal for `len` bytes, its slots at `next`) on
    /// the side its next byte puts it, and follow its child on the other
    /// side: the next candidate, or `None` when the tree ends (`m` at or
    /// below `bt_low`).
    #[inline(always)]
    fn step(
        &mut self,
        bt: &mut [u32],
        m: u32,
        next: usize,
        len: usize,
        smaller_side: bool,
        bt_low: u32,
    ) -> Option<u32> {
        if smaller_side {
            bt[self.smaller] = m;
            self.common_s = len;
            if m <= bt_low {
                self.smaller = DUMMY;
                return None;
            }
            self.smaller = next + 1;
            Some(bt[next + 1])
        } else {
            bt[self.larger] = m;
            self.common_l = len;
            if m <= bt_low {
                self.larger = DUMMY;
                return None;
            }
            self.larger = next;
            Some(bt[next])
        }
    }

    /// End the descent: the links still open point nowhere.
    #[inline(always)]
    fn close(&self, bt: &mut [u32]) {
        if self.smaller != DUMMY {
            bt[self.smaller] = 0;
        }
        if self.larger != DUMMY {
            bt[self.larger] = 0;
        }
    }
}

/// The tables, sized from the parameters (no larger than the source needs).
pub(crate) struct MatchFinder {
    p: Params,
    hash: Vec<u32>,
    bt: Vec<u32>,
    bt_mask: u32,
    hash3: Vec<u32>,
    hash3_log: u32,
    /// `index = position + base`.
    base: u32,
    /// Lowest valid index.
    low: u32,
    /// Next index the tree has not seen.
    pub(crate) next_to_update: u32,
    /// Length of the current input: every index in the tables is below
    /// `base + span`.
    span: u32,
}

impl MatchFinder {
    /// Tables for `p`; `None` if they would not fit 32-bit indices.
    pub(crate) fn new(p: Params) -> MatchFinder {
        let hash3_log = p.window_log.min(17);
        MatchFinder {
            p,
            hash: vec![0; 1usize << p.hash_log],
            bt: vec![0; 1usize << p.chain_log],
            bt_mask: (1u32 << (p.chain_log - 1)) - 1,
            hash3: vec![0; 1usize << hash3_log],
            hash3_log,
            base: START_INDEX,
            low: START_INDEX,
            next_to_update: START_INDEX,
            span: 0,
        }
    }

    /// The parameters the tables were sized for.
    pub(crate) fn params(&self) -> Params {
        self.p
    }

    /// Make the tables ready for a new input of `src_len` bytes (with
    /// room for the seeding pass's [`Self::forget`]): the input's indices
    /// start above every index already stored, so nothing stale is ever
    /// followed; only when indices would pass [`INDEX_LIMIT`] are the
    /// tables zeroed. Results are those of fresh tables.
    pub(crate) fn start_input(&mut self, src_len: usize) {
        let len = u32::try_from(src_len).unwrap_or(u32::MAX);
        let next = if self.span == 0 && self.base == START_INDEX {
            Some(START_INDEX)
        } else {
            self.base
                .checked_add(self.span)
                .and_then(|b| b.checked_add(8))
        };
        let fits = |b: u32| {
            len.checked_mul(2)
                .and_then(|l| l.checked_add(b))
                .and_then(|e| e.checked_add(64))
                .is_some_and(|e| e < INDEX_LIMIT)
        };
        let base = match next {
            Some(b) if fits(b) => b,
            _ => {
                self.hash.fill(0);
                self.bt.fill(0);
                self.hash3.fill(0);
                START_INDEX
            }
        };
        self.base = base;
        self.low = base;
        self.next_to_update = base;
        self.span = len;
    }

    /// Move the next input's indices to just below [`INDEX_LIMIT`] (tests
    /// of the zeroing path).
    #[cfg(test)]
    pub(crate) fn push_base_near_limit(&mut self, src_len: usize) {
        self.base = INDEX_LIMIT - 2 * src_len as u32 - 80;
        self.span = 0;
    }

    /// Index of source position `pos`.
    #[inline(always)]
    pub(crate) fn index(&self, pos: usize) -> u32 {
        pos as u32 + self.base
    }

    /// Lowest valid index (the start of the window's valid data).
    pub(crate) fn low(&self) -> u32 {
        self.low
    }

    /// Forget everything inserted so far, as if the first `len` bytes had
    /// been a separate earlier input: they get new indices on the next pass.
    pub(crate) fn forget(&mut self, len: usize) {
        self.base += len as u32;
        self.low = self.base;
        self.next_to_update = self.base;
    }

    /// Prefetch the nodes of both children of the node at `slot`: the walk
    /// follows one of them next, after comparing the current candidate.
    #[inline(always)]
    fn prefetch_children(&self, slot: usize) {
        let mask = self.bt_mask;
        if let Some(&[c0, c1]) = self.bt.get(slot..slot + 2) {
            prefetch_node(&self.bt, 2 * (c0 & mask) as usize);
            prefetch_node(&self.bt, 2 * (c1 & mask) as usize);
        }
    }

    #[inline(always)]
    fn window_low(&self, cur: u32) -> u32 {
        let max_dist = 1u32 << self.p.window_log;
        if cur - self.low > max_dist {
            cur - max_dist
        } else {
            self.low
        }
    }

    /// Insert one position in the tree; returns how many positions to advance.
    fn insert_bt1(&mut self, src: &[u8], pos: usize, iend: usize, target: u32) -> u32 {
        let h = hash3(src, pos, self.p.hash_log);
        let cur = self.index(pos);
        let s = &src[..iend.min(src.len())];
        let bt_mask = self.bt_mask;
        let bt_low = cur.saturating_sub(bt_mask);
        let mut d = Descent::new(2 * (cur & bt_mask) as usize);
        let window_low = self.window_low(target);
        let mut match_end = cur + 9;
        let mut best = 8usize;
        let mut compares = 1u32 << self.p.search_log;
        // The next position's root, looked up next (a hint).
        prefetch_node(&self.hash, hash3(src, pos + 1, self.p.hash_log));
        let mut m = self.hash[h];
        self.hash[h] = cur;
        while compares > 0 && m >= window_low {
            compares -= 1;
            let next = 2 * (m & bt_mask) as usize;
            self.prefetch_children(next);
            let mpos = (m - self.base) as usize;
            let (len, smaller_side) = match_len(s, pos, mpos, d.common());
            if len > best {
                best = len;
                if len as u32 > match_end - m {
                    match_end = m + len as u32;
                }
            }
            if pos + len == iend {
                break;
            }
            match d.step(&mut self.bt, m, next, len, smaller_side, bt_low) {
                Some(n) => m = n,
                None => break,
            }
        }
        d.close(&mut self.bt);
        let positions = if best > 384 {
            (best as u32 - 384).min(192)
        } else {
            0
        };
        positions.max(match_end - (cur + 8))
    }

    /// Insert every position before `pos` not yet in the tree.
    fn update_tree(&mut self, src: &[u8], pos: usize, iend: usize) {
        let target = self.index(pos);
        let mut idx = self.next_to_update;
        while idx < target {
            let fwd = self.insert_bt1(src, (idx - self.base) as usize, iend, target);
            idx += fwd;
        }
        self.next_to_update = target;
    }

    /// All useful matches at `pos` (≤ `iend - 8`), not reaching past `iend`:
    /// repeat offsets first, then ever longer ones; `ll0` says the
    /// sequence has no literals (the RFC's repeat-code shift).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn all_matches(
        &mut self,
        src: &[u8],
        pos: usize,
        iend: usize,
        rep: &[u32; 3],
        ll0: bool,
        next3: &mut u32,
        out: &mut Vec<Match>,
    ) {
        out.clear();
        let cur = self.index(pos);
        if cur < self.next_to_update {
            return;
        }
        self.update_tree(src, pos, iend);
        let sufficient = self.p.target_length.min(OPT_NUM - 1) as usize;
        let window_low = self.window_low(cur);
        let match_low = window_low.max(1);
        let mut best = 2usize;

        // Repeat offsets.
        let ll0u = u32::from(ll0);
        for code in ll0u..3 + ll0u {
            let off = if code == 3 {
                rep[0].wrapping_sub(1)
            } else {
                rep[code as usize]
            };
            if off.wrapping_sub(1) < cur - self.low && cur - off >= window_low {
                let rpos = pos - off as usize;
                let same3 = (rd64(src, pos) ^ rd64(src, rpos)) & 0xFF_FFFF == 0;
                if same3 {
                    let len = 3 + count(src, pos + 3, rpos + 3, iend);
                    if len > best {
                        best = len;
                        out.push(Match {
                            off_value: code - ll0u + 1,
                            len: len as u32,
                        });
                        if len > sufficient || pos + len == iend {
                            return;
                        }
                    }
                }
            }
        }

        // Near 3-byte match.
        if best < 3 {
            let h3log = self.hash3_log;
            let mut i = *next3;
            while i < cur {
                let hh = hash3(src, (i - self.base) as usize, h3log);
                self.hash3[hh] = i;
                i += 1;
            }
            *next3 = cur;
            let m3 = self.hash3[hash3(src, pos, h3log)];
            if m3 >= match_low && cur - m3 < HASH3_MAX_DIST {
                let mpos = (m3 - self.base) as usize;
                let len = count(src, pos, mpos, iend);
                if len >= 3 {
                    best = len;
                    out.push(Match {
                        off_value: cur - m3 + 3,
                        len: len as u32,
                    });
                    if len > sufficient || pos + len == iend {
                        self.next_to_update = cur + 1;
                        return;
                    }
                }
            }
        }

        // The tree.
        let s = &src[..iend.min(src.len())];
        let h = hash3(src, pos, self.p.hash_log);
        let bt_mask = self.bt_mask;
        let bt_low = cur.saturating_sub(bt_mask);
        let mut d = Descent::new(2 * (cur & bt_mask) as usize);
        let mut match_end = cur + 9;
        let mut compares = 1u32 << self.p.search_log;
        // The next position's root, looked up next (a hint).
        prefetch_node(&self.hash, hash3(src, pos + 1, self.p.hash_log));
        let mut m = self.hash[h];
        self.hash[h] = cur;
        while compares > 0 && m >= match_low {
            compares -= 1;
            let next = 2 * (m & bt_mask) as usize;
            self.prefetch_children(next);
            let mpos = (m - self.base) as usize;
            let (len, mut smaller_side) = match_len(s, pos, mpos, d.common());
            if len > best {
                if len as u32 > match_end - m {
                    match_end = m + len as u32;
                }
                best = len;
                out.push(Match {
                    off_value: cur - m + 3,
                    len: len as u32,
                });
                if len > OPT_NUM as usize || pos + len == iend {
                    break;
                }
            }
            if pos + len == iend {
                // Ran to the end of the parsed range: order by the bytes
                // after it (none: the candidate counts as larger).
                smaller_side = src.get(mpos + len) < src.get(pos + len);
            }
            match d.step(&mut self.bt, m, next, len, smaller_side, bt_low) {
                Some(n) => m = n,
                None => break,
            }
        }
        d.close(&mut self.bt);
        self.next_to_update = match_end - 8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Longest match at `pos` against any earlier position, by brute force.
    fn brute_longest(src: &[u8], pos: usize, iend: usize) -> usize {
        (0..pos)
            .map(|j| {
                (0..iend - pos)
                    .take_while(|&i| src[j + i] == src[pos + i])
                    .count()
            })
            .max()
            .unwrap_or(0)
    }

    /// Ask for the matches at every position in turn (no literals between,
    /// repeat offsets fixed) and check each listed match against the bytes;
    /// until the finder first skips positions (after a long match, as
    /// libzstd does), the longest listed match must be the longest there is.
    fn check_finder(src: &[u8]) -> Result<(), TestCaseError> {
        let p = super::super::params_level22(src.len());
        let mut mf = MatchFinder::new(p);
        mf.start_input(src.len());
        let iend = src.len();
        let mut next3 = mf.next_to_update;
        let rep = [1u32, 4, 8];
        let mut out = Vec::new();
        let mut searched_all = true;
        for pos in 1..iend.saturating_sub(8) {
            let skipped = mf.index(pos) < mf.next_to_update;
            mf.all_matches(src, pos, iend, &rep, false, &mut next3, &mut out);
            if skipped {
                searched_all = false;
                prop_assert!(out.is_empty());
                continue;
            }
            let mut prev = 0;
            for m in &out {
                let off = if m.off_value > 3 {
                    m.off_value - 3
                } else {
                    rep[m.off_value as usize - 1]
                } as usize;
                let len = m.len as usize;
                prop_assert!(len >= 3 && len > prev, "lengths {:?} at {}", out, pos);
                prop_assert!(off >= 1 && off <= pos && pos + len <= iend);
                prop_assert_eq!(&src[pos..pos + len], &src[pos - off..pos - off + len]);
                prev = len;
            }
            if searched_all {
                let want = brute_longest(src, pos, iend);
                if want >= 3 {
                    prop_assert_eq!(prev, want, "at {} of {}", pos, iend);
                } else {
                    prop_assert!(out.is_empty());
                }
            }
            if mf.next_to_update > mf.index(pos) + 1 {
                searched_all = false;
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn matches_are_real_and_the_longest_is_found(
            src in proptest::collection::vec(0u8..3, 9..1500)
        ) {
            check_finder(&src)?;
        }

        #[test]
        fn run_heavy_matches_are_real(
            runs in proptest::collection::vec((0u8..4, 1usize..40), 1..80)
        ) {
            let src: Vec<u8> = runs
                .iter()
                .flat_map(|&(b, n)| std::iter::repeat_n(b, n))
                .collect();
            check_finder(&src)?;
        }

        #[test]
        fn match_len_is_the_common_prefix(
            s in proptest::collection::vec(0u8..2, 2..200),
            a in 0usize..200,
            b in 0usize..200,
            start in 0usize..16,
        ) {
            let a = 1 + a % (s.len() - 1);
            let b = b % a;
            let n = s.len() - a;
            let want = (0..n).take_while(|&i| s[a + i] == s[b + i]).count();
            let start = start.min(want);
            let (len, smaller) = match_len(&s, a, b, start);
            prop_assert_eq!(len, want);
            prop_assert_eq!(smaller, len < n && s[b + len] < s[a + len]);
        }
    }
}
