//! The LZ77 parse of zlib's deflate.c at levels 1–9: a 64 KiB window that
//! slides by 32 KiB, a rolling 3-byte hash of 15 bits with hash chains, the
//! greedy parse (`deflate_fast`, levels 1–3) and the lazy one
//! (`deflate_slow`, levels 4–9) with zlib's per-level limits. Every choice
//! — including which bytes the match search may see past the input's end —
//! is zlib's, so that the symbols, and with [`super::trees`] the bits, are
//! the ones zlib writes for one `compress` call.

use super::bitwriter::BitWriter;
use super::search::{first_match3, longest_match, longest_match4, rd32};
use super::trees::Blocks;
use super::window::{
    Window, MAX_DIST, MAX_MATCH, MIN_LOOKAHEAD, MIN_MATCH, WINDOW_SIZE, WMASK, WSIZE,
};

const HASH_BITS: usize = 15;
const HASH_SIZE: usize = 1 << HASH_BITS;
const HASH_MASK: usize = HASH_SIZE - 1;
const HASH_SHIFT: usize = HASH_BITS.div_ceil(3);
/// Bytes past the data that the match search may read (zeroed once).
const WIN_INIT: usize = MAX_MATCH;
/// Bits of the 4-byte hash.
const HASH4_BITS: u32 = 15;
/// Lazy parse: 3-byte matches farther than this are dropped.
const TOO_FAR: usize = 4096;

/// zlib's configuration table: (good_length, max_lazy, nice_length, max_chain).
const CONFIG: [(usize, usize, usize, usize); 10] = [
    (0, 0, 0, 0),
    (4, 4, 8, 4),
    (4, 5, 16, 8),
    (4, 6, 32, 32),
    (4, 4, 16, 16),
    (8, 16, 32, 32),
    (8, 16, 128, 128),
    (8, 32, 128, 256),
    (32, 128, 258, 1024),
    (32, 258, 258, 4096),
];

/// Parse state and tables, kept from input to input.
pub(super) struct Lz {
    level: usize,
    good_match: usize,
    /// Greedy: longest match whose inner positions are hashed. Lazy: no
    /// second search after a match this long.
    max_lazy: usize,
    nice_match: usize,
    max_chain: usize,
    window: Box<Window>,
    /// Per 3-byte hash: the latest position (low 16 bits) and how many
    /// positions went into the bucket (high 16 bits, wrapping).
    head: Box<[u32; HASH_SIZE]>,
    prev: Box<[u16; WSIZE]>,
    /// Whether the search takes the 4-byte chains (see [`super::search`]).
    use4: bool,
    head4: Box<[u16; 1 << HASH4_BITS]>,
    /// Per position: the previous position with the same 4-byte hash (low
    /// 16 bits) and the position's count in its 3-byte bucket, i.e. its rank
    /// on the 3-byte chain (high 16 bits; one load serves the 4-byte walk).
    link4: Box<[u32; WSIZE]>,
    /// The rank of the position inserted last.
    last_rank: u16,
    strstart: usize,
    /// Where the current block starts, in window positions (negative once
    /// its start has slid out of the window).
    block_start: isize,
    lookahead: usize,
    /// Start of the match found last (window position; may wrap below zero
    /// after a slide, as zlib's unsigned one does).
    match_start: usize,
    match_length: usize,
    prev_length: usize,
    prev_match: usize,
    match_available: bool,
    ins_h: usize,
    high_water: usize,
    /// Input bytes already moved into the window.
    next_in: usize,
    blocks: Blocks,
}

impl Lz {
    /// A parser at `level` (1–9).
    pub(super) fn new(level: u32) -> Self {
        let level = (level as usize).clamp(1, 9);
        let (good, lazy, nice, chain) = CONFIG[level];
        Lz {
            level,
            good_match: good,
            max_lazy: lazy,
            nice_match: nice,
            max_chain: chain,
            window: boxed(),
            head: boxed(),
            prev: boxed(),
            use4: level >= 3,
            head4: boxed(),
            link4: boxed(),
            last_rank: 0,
            strstart: 0,
            block_start: 0,
            lookahead: 0,
            match_start: 0,
            match_length: MIN_MATCH - 1,
            prev_length: MIN_MATCH - 1,
            prev_match: 0,
            match_available: false,
            ins_h: 0,
            high_water: 0,
            next_in: 0,
            blocks: Blocks::new(),
        }
    }

    /// The same parser with the 4-byte shortcut off (zlib's plain chain
    /// walk everywhere), to check that the shortcut changes nothing.
    #[cfg(test)]
    pub(super) fn without_shortcut(mut self) -> Self {
        self.use4 = false;
        self
    }

    /// Write the deflate body of `input` (all its blocks, the last one marked).
    pub(super) fn deflate(&mut self, input: &[u8], w: &mut BitWriter) {
        self.head.fill(0);
        self.head4.fill(0);
        self.strstart = 0;
        self.block_start = 0;
        self.lookahead = 0;
        self.match_start = 0;
        self.match_length = MIN_MATCH - 1;
        self.prev_length = MIN_MATCH - 1;
        self.prev_match = 0;
        self.match_available = false;
        self.ins_h = 0;
        self.high_water = 0;
        self.next_in = 0;
        self.blocks.init_block();
        if self.level <= 3 {
            self.deflate_fast(input, w);
        } else {
            self.deflate_slow(input, w);
        }
    }

    #[inline(always)]
    fn update_hash(&self, h: usize, c: u8) -> usize {
        ((h << HASH_SHIFT) ^ c as usize) & HASH_MASK
    }

    /// Put the string at `pos` into its hash chain; the previous head.
    #[inline(always)]
    fn insert_string(&mut self, pos: usize) -> u16 {
        self.ins_h = self.update_hash(self.ins_h, self.window[pos + MIN_MATCH - 1]);
        let e = self.head[self.ins_h];
        let head = e as u16;
        let rank = ((e >> 16) as u16).wrapping_add(1);
        self.prev[pos & WMASK] = head;
        self.head[self.ins_h] = pos as u32 | u32::from(rank) << 16;
        if self.use4 {
            self.last_rank = rank;
            let h4 =
                (rd32(&self.window, pos).wrapping_mul(0x9E37_79B1) >> (32 - HASH4_BITS)) as usize;
            self.link4[pos & WMASK] = u32::from(self.head4[h4]) | u32::from(rank) << 16;
            self.head4[h4] = pos as u16;
        }
        head
    }

    /// Slide by 32 KiB when the window is nearly full, then read input until
    /// there is enough lookahead (zlib's `fill_window`).
    fn fill_window(&mut self, input: &[u8]) {
        loop {
            let mut more = WINDOW_SIZE - self.lookahead - self.strstart;
            if self.strstart >= WSIZE + MAX_DIST {
                self.window.copy_within(WSIZE..2 * WSIZE - more, 0);
                self.match_start = self.match_start.wrapping_sub(WSIZE);
                self.strstart -= WSIZE;
                self.block_start -= WSIZE as isize;
                for e in self.head.iter_mut() {
                    let p = (*e as u16).saturating_sub(WSIZE as u16);
                    *e = (*e & 0xFFFF_0000) | u32::from(p);
                }
                slide(&mut self.prev[..]);
                if self.use4 {
                    slide(&mut self.head4[..]);
                    for e in self.link4.iter_mut() {
                        let p = (*e as u16).saturating_sub(WSIZE as u16);
                        *e = (*e & 0xFFFF_0000) | u32::from(p);
                    }
                }
                more += WSIZE;
            }
            if self.next_in == input.len() {
                break;
            }
            let n = more.min(input.len() - self.next_in);
            let at = self.strstart + self.lookahead;
            self.window[at..at + n].copy_from_slice(&input[self.next_in..self.next_in + n]);
            self.next_in += n;
            self.lookahead += n;
            if self.lookahead >= MIN_MATCH {
                let s = self.strstart;
                self.ins_h = self.window[s] as usize;
                self.ins_h = self.update_hash(self.ins_h, self.window[s + 1]);
            }
            if self.lookahead >= MIN_LOOKAHEAD || self.next_in == input.len() {
                break;
            }
        }
        // Zero what the match search may read past the data, once.
        if self.high_water < WINDOW_SIZE {
            let curr = self.strstart + self.lookahead;
            if self.high_water < curr {
                let init = (WINDOW_SIZE - curr).min(WIN_INIT);
                self.window[curr..curr + init].fill(0);
                self.high_water = curr + init;
            } else if self.high_water < curr + WIN_INIT {
                let init = (curr + WIN_INIT - self.high_water).min(WINDOW_SIZE - self.high_water);
                self.window[self.high_water..self.high_water + init].fill(0);
                self.high_water += init;
            }
        }
    }

    /// The longest match at `strstart` along the chain from `cur`, longer
    /// than `prev_length`; sets `match_start` (zlib's `longest_match`).
    #[inline(always)]
    fn longest_match(&mut self, cur: u16) -> usize {
        let mut chain = self.max_chain;
        if self.prev_length >= self.good_match {
            chain >>= 2;
        }
        let nice = self.nice_match.min(self.lookahead);
        let (len, start) = if self.use4 && self.lookahead >= MAX_MATCH + 4 {
            let (w, s) = (&self.window, self.strstart);
            let rank_h = self.last_rank.wrapping_sub(1);
            let beat = self.prev_length.max(MIN_MATCH);
            let found = longest_match4(w, &self.link4, s, cur as usize, rank_h, beat, chain, nice);
            if found.1.is_some() || self.prev_length >= MIN_MATCH {
                found
            } else {
                // Nothing longer than 3 bytes: zlib takes the first 3-byte match.
                match first_match3(w, &self.prev, s, cur as usize, chain) {
                    Some(c) => (MIN_MATCH, Some(c)),
                    None => (self.prev_length, None),
                }
            }
        } else {
            longest_match(
                &self.window,
                &self.prev,
                self.strstart,
                cur,
                self.prev_length,
                chain,
                nice,
            )
        };
        if let Some(start) = start {
            self.match_start = start;
        }
        len.min(self.lookahead)
    }

    /// Write the block from `block_start` to `strstart`.
    fn flush_block(&mut self, w: &mut BitWriter, last: bool) {
        let len = (self.strstart as isize - self.block_start) as usize;
        let stored = (self.block_start >= 0).then(|| {
            let b = self.block_start as usize;
            &self.window[b..b + len]
        });
        self.blocks.flush(w, stored, len, last);
        self.block_start = self.strstart as isize;
    }

    /// Greedy parse, levels 1–3 (zlib's `deflate_fast`).
    fn deflate_fast(&mut self, input: &[u8], w: &mut BitWriter) {
        loop {
            if self.lookahead < MIN_LOOKAHEAD {
                self.fill_window(input);
                if self.lookahead == 0 {
                    break;
                }
            }
            let mut hash_head = 0;
            if self.lookahead >= MIN_MATCH {
                hash_head = self.insert_string(self.strstart);
            }
            if hash_head != 0 && self.strstart - hash_head as usize <= MAX_DIST {
                self.match_length = self.longest_match(hash_head);
            }
            let full;
            if self.match_length >= MIN_MATCH {
                full = self.blocks.dist(
                    self.strstart - self.match_start,
                    self.match_length - MIN_MATCH,
                );
                self.lookahead -= self.match_length;
                if self.match_length <= self.max_lazy && self.lookahead >= MIN_MATCH {
                    // Hash the positions inside a short match.
                    for _ in 1..self.match_length {
                        self.strstart += 1;
                        self.insert_string(self.strstart);
                    }
                    self.strstart += 1;
                } else {
                    self.strstart += self.match_length;
                    let s = self.strstart;
                    self.ins_h = self.window[s] as usize;
                    self.ins_h = self.update_hash(self.ins_h, self.window[s + 1]);
                }
                self.match_length = 0;
            } else {
                full = self.blocks.lit(self.window[self.strstart]);
                self.lookahead -= 1;
                self.strstart += 1;
            }
            if full {
                self.flush_block(w, false);
            }
        }
        self.flush_block(w, true);
    }

    /// Lazy parse, levels 4–9 (zlib's `deflate_slow`): a match is taken
    /// only when the next position has no longer one.
    fn deflate_slow(&mut self, input: &[u8], w: &mut BitWriter) {
        loop {
            if self.lookahead < MIN_LOOKAHEAD {
                self.fill_window(input);
                if self.lookahead == 0 {
                    break;
                }
            }
            let mut hash_head = 0;
            if self.lookahead >= MIN_MATCH {
                hash_head = self.insert_string(self.strstart);
            }
            self.prev_length = self.match_length;
            self.prev_match = self.match_start;
            self.match_length = MIN_MATCH - 1;
            if hash_head != 0
                && self.prev_length < self.max_lazy
                && self.strstart - hash_head as usize <= MAX_DIST
            {
                self.match_length = self.longest_match(hash_head);
                if self.match_length == MIN_MATCH
                    && self.strstart.wrapping_sub(self.match_start) > TOO_FAR
                {
                    self.match_length = MIN_MATCH - 1;
                }
            }
            if self.prev_length >= MIN_MATCH && self.match_length <= self.prev_length {
                // The previous match is at least as long: take it.
                let max_insert = self.strstart + self.lookahead - MIN_MATCH;
                let dist = (self.strstart - 1).wrapping_sub(self.prev_match);
                let full = self.blocks.dist(dist, self.prev_length - MIN_MATCH);
                self.lookahead -= self.prev_length - 1;
                for _ in 0..self.prev_length - 2 {
                    self.strstart += 1;
                    if self.strstart <= max_insert {
                        self.insert_string(self.strstart);
                    }
                }
                self.match_available = false;
                self.match_length = MIN_MATCH - 1;
                self.strstart += 1;
                if full {
                    self.flush_block(w, false);
                }
            } else if self.match_available {
                // The previous position's byte as a literal.
                if self.blocks.lit(self.window[self.strstart - 1]) {
                    self.flush_block(w, false);
                }
                self.strstart += 1;
                self.lookahead -= 1;
            } else {
                self.match_available = true;
                self.strstart += 1;
                self.lookahead -= 1;
            }
        }
        if self.match_available {
            self.blocks.lit(self.window[self.strstart - 1]);
            self.match_available = false;
        }
        self.flush_block(w, true);
    }
}

/// A zeroed fixed-size array on the heap.
fn boxed<T: Copy + Default, const N: usize>() -> Box<[T; N]> {
    vec![T::default(); N]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("N elements"))
}

/// Move every position down by 32 KiB; those that leave the window become 0.
fn slide(t: &mut [u16]) {
    for p in t {
        *p = p.saturating_sub(WSIZE as u16);
    }
}
