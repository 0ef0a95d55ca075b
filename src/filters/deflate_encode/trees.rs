//! Deflate block coding as zlib's trees.c does it: symbol tallies, Huffman
//! trees built by the same heap with the same tie-breaks and the same
//! length-overflow repair, the same code-length run coding, and the same
//! stored / fixed / dynamic choice by exact bit cost, so that the bits are
//! zlib's.

use super::bitwriter::BitWriter;

/// Literal/length codes (256 literals, end of block, 29 lengths).
const L_CODES: usize = 286;
/// Distance codes.
const D_CODES: usize = 30;
/// Code-length codes.
const BL_CODES: usize = 19;
/// Nodes of the largest tree (leaves and internal nodes, plus zlib's guard).
const HEAP_SIZE: usize = 2 * L_CODES + 1;
/// Longest code of the literal/length and distance trees.
const MAX_BITS: usize = 15;
/// Longest code of the code-length tree.
const MAX_BL_BITS: usize = 7;
const END_BLOCK: usize = 256;
/// Code-length symbols: repeat the previous length 3–6 times, zeros 3–10, zeros 11–138.
const REP_3_6: usize = 16;
const REPZ_3_10: usize = 17;
const REPZ_11_138: usize = 18;

/// Symbols per block: zlib's `lit_bufsize - 1` at memLevel 8.
pub(super) const SYM_END: usize = (1 << 14) - 1;

const EXTRA_LBITS: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const EXTRA_DBITS: [u8; D_CODES] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];
const EXTRA_BLBITS: [u8; BL_CODES] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7];
/// The order code-length code lengths are sent in (RFC 1951 §3.2.7).
const BL_ORDER: [usize; BL_CODES] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// Length code (0–28) of each match length minus 3, and the first length of each code.
static LENGTH_CODE: [u8; 256] = tables().0;
static BASE_LENGTH: [u8; 29] = tables().1;
/// Distance code of distance−1 below 256 (`[..256]`) and of (distance−1)>>7 (`[256..]`).
static DIST_CODE: [u8; 512] = tables().2;
static BASE_DIST: [u16; D_CODES] = tables().3;

#[allow(clippy::type_complexity)]
const fn tables() -> ([u8; 256], [u8; 29], [u8; 512], [u16; D_CODES]) {
    let mut length_code = [0u8; 256];
    let mut base_length = [0u8; 29];
    let mut length = 0usize;
    let mut code = 0usize;
    while code < 28 {
        base_length[code] = length as u8;
        let mut n = 0;
        while n < (1 << EXTRA_LBITS[code]) {
            length_code[length] = code as u8;
            length += 1;
            n += 1;
        }
        code += 1;
    }
    // Length 258 (index 255) has its own code, 28 (symbol 285).
    length_code[255] = 28;
    let mut dist_code = [0u8; 512];
    let mut base_dist = [0u16; D_CODES];
    let mut dist = 0usize;
    code = 0;
    while code < 16 {
        base_dist[code] = dist as u16;
        let mut n = 0;
        while n < (1 << EXTRA_DBITS[code]) {
            dist_code[dist] = code as u8;
            dist += 1;
            n += 1;
        }
        code += 1;
    }
    dist >>= 7;
    while code < D_CODES {
        base_dist[code] = (dist << 7) as u16;
        let mut n = 0;
        while n < (1 << (EXTRA_DBITS[code] - 7)) {
            dist_code[256 + dist] = code as u8;
            dist += 1;
            n += 1;
        }
        code += 1;
    }
    (length_code, base_length, dist_code, base_dist)
}

/// Distance code of `dist` − 1.
#[inline(always)]
fn d_code(d: usize) -> usize {
    if d < 256 {
        DIST_CODE[d] as usize
    } else {
        DIST_CODE[256 + (d >> 7)] as usize
    }
}

/// Code lengths and codes of the fixed trees (RFC 1951 §3.2.6).
struct Fixed {
    llen: [u16; 288],
    lcode: [u16; 288],
    dlen: [u16; D_CODES],
    dcode: [u16; D_CODES],
}

fn fixed() -> &'static Fixed {
    static FIXED: std::sync::OnceLock<Fixed> = std::sync::OnceLock::new();
    FIXED.get_or_init(|| {
        let mut llen = [0u16; 288];
        let mut count = [0u16; MAX_BITS + 1];
        for (n, l) in llen.iter_mut().enumerate() {
            *l = match n {
                0..=143 => 8,
                144..=255 => 9,
                256..=279 => 7,
                _ => 8,
            };
            count[*l as usize] += 1;
        }
        let mut lcode = [0u16; 288];
        gen_codes(&llen, &mut lcode, 287, &count);
        let dlen = [5u16; D_CODES];
        let mut dcode = [0u16; D_CODES];
        for (n, c) in dcode.iter_mut().enumerate() {
            *c = bi_reverse(n as u32, 5) as u16;
        }
        Fixed {
            llen,
            lcode,
            dlen,
            dcode,
        }
    })
}

/// What build_tree needs to know of a tree kind (zlib's static_tree_desc).
struct Desc {
    /// Fixed-code lengths, to count the fixed block's cost.
    stree: Option<fn() -> &'static [u16]>,
    extra: &'static [u8],
    extra_base: usize,
    elems: usize,
    max_length: usize,
}

fn stree_l() -> &'static [u16] {
    &fixed().llen
}
fn stree_d() -> &'static [u16] {
    &fixed().dlen
}

const L_DESC: Desc = Desc {
    stree: Some(stree_l),
    extra: &EXTRA_LBITS,
    extra_base: 257,
    elems: L_CODES,
    max_length: MAX_BITS,
};
const D_DESC: Desc = Desc {
    stree: Some(stree_d),
    extra: &EXTRA_DBITS,
    extra_base: 0,
    elems: D_CODES,
    max_length: MAX_BITS,
};
const BL_DESC: Desc = Desc {
    stree: None,
    extra: &EXTRA_BLBITS,
    extra_base: 0,
    elems: BL_CODES,
    max_length: MAX_BL_BITS,
};

/// One dynamic tree: zlib's `ct_data` fields kept apart (zlib overlays
/// freq/code and dad/len; each is read only while it holds its own value).
struct Tree {
    freq: [u32; HEAP_SIZE],
    len: [u16; HEAP_SIZE],
    dad: [u16; HEAP_SIZE],
    code: [u16; HEAP_SIZE],
    /// Largest code with a nonzero frequency.
    max_code: usize,
}

impl Tree {
    /// Every tree has room for the largest one's nodes (fixed sizes let
    /// the symbol tallies index without bounds checks).
    fn new() -> Self {
        Tree {
            freq: [0; HEAP_SIZE],
            len: [0; HEAP_SIZE],
            dad: [0; HEAP_SIZE],
            code: [0; HEAP_SIZE],
            max_code: 0,
        }
    }
}

/// Heap and counters shared by the three trees of a block.
struct Scratch {
    heap: [u16; HEAP_SIZE],
    heap_len: usize,
    heap_max: usize,
    depth: [u8; HEAP_SIZE],
    bl_count: [u16; MAX_BITS + 1],
    /// Bits of the block with dynamic trees, and with the fixed trees
    /// (signed: zlib lets them dip below zero while it adds dummy codes).
    opt_len: i64,
    static_len: i64,
}

/// The symbols of the current block and the trees that code them.
pub(super) struct Blocks {
    /// Tallied symbols: `dist << 8 | lc`, where `dist` is 0 for a literal
    /// `lc`, else the match distance with `lc` its length minus 3.
    syms: Box<[u32; SYM_END]>,
    sym_next: usize,
    ltree: Box<Tree>,
    dtree: Box<Tree>,
    bltree: Box<Tree>,
    s: Box<Scratch>,
}

impl Blocks {
    pub(super) fn new() -> Self {
        let mut b = Blocks {
            syms: vec![0u32; SYM_END]
                .into_boxed_slice()
                .try_into()
                .expect("SYM_END entries"),
            sym_next: 0,
            ltree: Box::new(Tree::new()),
            dtree: Box::new(Tree::new()),
            bltree: Box::new(Tree::new()),
            s: Box::new(Scratch {
                heap: [0; HEAP_SIZE],
                heap_len: 0,
                heap_max: 0,
                depth: [0; HEAP_SIZE],
                bl_count: [0; MAX_BITS + 1],
                opt_len: 0,
                static_len: 0,
            }),
        };
        b.init_block();
        b
    }

    /// Start an empty block (zlib's `init_block`).
    pub(super) fn init_block(&mut self) {
        self.ltree.freq[..L_CODES].fill(0);
        self.dtree.freq[..D_CODES].fill(0);
        self.bltree.freq[..BL_CODES].fill(0);
        self.ltree.freq[END_BLOCK] = 1;
        self.s.opt_len = 0;
        self.s.static_len = 0;
        self.sym_next = 0;
    }

    /// Tally a literal; true when the block is full.
    #[inline(always)]
    pub(super) fn lit(&mut self, c: u8) -> bool {
        self.syms[self.sym_next] = u32::from(c);
        self.sym_next += 1;
        self.ltree.freq[c as usize] += 1;
        self.sym_next == SYM_END
    }

    /// Tally a match of `dist` (1..=32768) and length `lc` + 3; true when the block is full.
    #[inline(always)]
    pub(super) fn dist(&mut self, dist: usize, lc: usize) -> bool {
        self.syms[self.sym_next] = ((dist as u32) << 8) | lc as u32;
        self.sym_next += 1;
        self.ltree.freq[LENGTH_CODE[lc] as usize + 257] += 1;
        self.dtree.freq[d_code(dist - 1)] += 1;
        self.sym_next == SYM_END
    }

    /// Write the block (zlib's `_tr_flush_block`): `stored` is the raw data
    /// when it is still in the window (else a stored block is not possible).
    pub(super) fn flush(
        &mut self,
        w: &mut BitWriter,
        stored: Option<&[u8]>,
        stored_len: usize,
        last: bool,
    ) {
        build_tree(&mut self.ltree, &L_DESC, &mut self.s);
        build_tree(&mut self.dtree, &D_DESC, &mut self.s);
        let max_blindex = self.build_bl_tree();
        let mut opt_lenb = (self.s.opt_len + 3 + 7) as u64 >> 3;
        let static_lenb = (self.s.static_len + 3 + 7) as u64 >> 3;
        if static_lenb <= opt_lenb {
            opt_lenb = static_lenb;
        }
        match stored {
            Some(raw) if stored_len as u64 + 4 <= opt_lenb => stored_block(w, raw, last),
            _ if static_lenb == opt_lenb => {
                w.put(2 | u64::from(last), 3);
                let f = fixed();
                self.compress_block(w, &f.lcode, &f.llen, &f.dcode, &f.dlen);
            }
            _ => {
                w.put(4 | u64::from(last), 3);
                self.send_all_trees(w, max_blindex + 1);
                let (l, d) = (&self.ltree, &self.dtree);
                compress_block(
                    w,
                    &self.syms[..self.sym_next],
                    &l.code,
                    &l.len,
                    &d.code,
                    &d.len,
                );
            }
        }
        self.init_block();
        if last {
            w.align();
        }
    }

    fn compress_block(
        &self,
        w: &mut BitWriter,
        lcode: &[u16],
        llen: &[u16],
        dcode: &[u16],
        dlen: &[u16],
    ) {
        compress_block(w, &self.syms[..self.sym_next], lcode, llen, dcode, dlen);
    }

    /// Tally the code lengths of both trees and build the code-length tree;
    /// the index in [`BL_ORDER`] of the last length to send.
    fn build_bl_tree(&mut self) -> usize {
        scan_tree(&mut self.ltree, &mut self.bltree.freq);
        scan_tree(&mut self.dtree, &mut self.bltree.freq);
        build_tree(&mut self.bltree, &BL_DESC, &mut self.s);
        let mut max_blindex = BL_CODES - 1;
        while max_blindex >= 3 {
            if self.bltree.len[BL_ORDER[max_blindex]] != 0 {
                break;
            }
            max_blindex -= 1;
        }
        self.s.opt_len += 3 * (max_blindex as i64 + 1) + 5 + 5 + 4;
        max_blindex
    }

    fn send_all_trees(&mut self, w: &mut BitWriter, blcodes: usize) {
        let lcodes = self.ltree.max_code + 1;
        let dcodes = self.dtree.max_code + 1;
        w.put((lcodes - 257) as u64, 5);
        w.put((dcodes - 1) as u64, 5);
        w.put((blcodes - 4) as u64, 4);
        w.flush();
        for &o in &BL_ORDER[..blcodes] {
            w.put(u64::from(self.bltree.len[o]), 3);
            w.flush();
        }
        send_tree(w, &self.ltree, &self.bltree);
        send_tree(w, &self.dtree, &self.bltree);
    }
}

/// A stored block: header, pad to a byte, LEN, NLEN, the bytes.
pub(super) fn stored_block(w: &mut BitWriter, raw: &[u8], last: bool) {
    w.put(u64::from(last), 3);
    w.align();
    let n = raw.len() as u16;
    w.put(u64::from(n) | u64::from(!n) << 16, 32);
    w.flush();
    w.put_bytes(raw);
}

fn compress_block(
    w: &mut BitWriter,
    syms: &[u32],
    lcode: &[u16],
    llen: &[u16],
    dcode: &[u16],
    dlen: &[u16],
) {
    // Per block: each literal's code, each length's code with its extra
    // bits, as (bits, count) ready to write.
    let mut lit = [(0u32, 0u32); 256];
    for (c, e) in lit.iter_mut().enumerate() {
        *e = (u32::from(lcode[c]), u32::from(llen[c]));
    }
    let mut len = [(0u32, 0u32); 256];
    for (lc, e) in len.iter_mut().enumerate() {
        let code = LENGTH_CODE[lc] as usize;
        let n = u32::from(llen[code + 257]);
        // Length 258 (code 28) has no extra bits.
        let extra = (lc - BASE_LENGTH[code] as usize) as u32 & ((1 << EXTRA_LBITS[code]) - 1);
        *e = (
            u32::from(lcode[code + 257]) | extra << n,
            n + u32::from(EXTRA_LBITS[code]),
        );
    }
    for &sym in syms {
        let dist = (sym >> 8) as usize;
        let lc = (sym & 0xff) as usize;
        if dist == 0 {
            let (v, n) = lit[lc];
            w.put(u64::from(v), n);
        } else {
            let (v, n) = len[lc];
            w.put(u64::from(v), n);
            let d = dist - 1;
            let code = d_code(d);
            let n = u32::from(dlen[code]);
            let v = u64::from(dcode[code]) | ((d - BASE_DIST[code] as usize) as u64) << n;
            w.put(v, n + u32::from(EXTRA_DBITS[code]));
        }
        w.flush();
    }
    w.put(u64::from(lcode[END_BLOCK]), u32::from(llen[END_BLOCK]));
    w.flush();
}

/// Tie-break of the heap: less frequent, or as frequent and not deeper.
#[inline(always)]
fn smaller(tree: &Tree, depth: &[u8], n: usize, m: usize) -> bool {
    tree.freq[n] < tree.freq[m] || (tree.freq[n] == tree.freq[m] && depth[n] <= depth[m])
}

fn pqdownheap(tree: &Tree, s: &mut Scratch, mut k: usize) {
    let v = s.heap[k] as usize;
    let mut j = k << 1;
    while j <= s.heap_len {
        if j < s.heap_len && smaller(tree, &s.depth, s.heap[j + 1] as usize, s.heap[j] as usize) {
            j += 1;
        }
        if smaller(tree, &s.depth, v, s.heap[j] as usize) {
            break;
        }
        s.heap[k] = s.heap[j];
        k = j;
        j <<= 1;
    }
    s.heap[k] = v as u16;
}

/// Huffman code lengths and codes for `tree` (zlib's `build_tree`), adding
/// the block's cost with these codes to `opt_len` and with the fixed codes
/// to `static_len`.
fn build_tree(tree: &mut Tree, desc: &Desc, s: &mut Scratch) {
    let stree = desc.stree.map(|f| f());
    s.heap_len = 0;
    s.heap_max = HEAP_SIZE;
    let mut max_code: isize = -1;
    for n in 0..desc.elems {
        if tree.freq[n] != 0 {
            s.heap_len += 1;
            s.heap[s.heap_len] = n as u16;
            max_code = n as isize;
            s.depth[n] = 0;
        } else {
            tree.len[n] = 0;
        }
    }
    // At least two codes, so that every code has at least one bit.
    while s.heap_len < 2 {
        let node = if max_code < 2 {
            max_code += 1;
            max_code as usize
        } else {
            0
        };
        s.heap_len += 1;
        s.heap[s.heap_len] = node as u16;
        tree.freq[node] = 1;
        s.depth[node] = 0;
        s.opt_len -= 1;
        if let Some(st) = stree {
            s.static_len -= i64::from(st[node]);
        }
    }
    let max_code = max_code as usize;
    tree.max_code = max_code;
    for n in (1..=s.heap_len / 2).rev() {
        pqdownheap(tree, s, n);
    }
    let mut node = desc.elems;
    loop {
        // The two least frequent nodes.
        let n = s.heap[1] as usize;
        s.heap[1] = s.heap[s.heap_len];
        s.heap_len -= 1;
        pqdownheap(tree, s, 1);
        let m = s.heap[1] as usize;
        s.heap_max -= 1;
        s.heap[s.heap_max] = n as u16;
        s.heap_max -= 1;
        s.heap[s.heap_max] = m as u16;
        tree.freq[node] = tree.freq[n] + tree.freq[m];
        s.depth[node] = s.depth[n].max(s.depth[m]) + 1;
        tree.dad[n] = node as u16;
        tree.dad[m] = node as u16;
        s.heap[1] = node as u16;
        node += 1;
        pqdownheap(tree, s, 1);
        if s.heap_len < 2 {
            break;
        }
    }
    s.heap_max -= 1;
    s.heap[s.heap_max] = s.heap[1];
    gen_bitlen(tree, desc, stree, s);
    let bl_count = s.bl_count;
    let Tree { len, code, .. } = tree;
    gen_codes(len, code, max_code, &bl_count);
}

/// Code lengths from the tree, limited to `max_length` by zlib's repair
/// (move leaves down from the deepest level that can take them).
fn gen_bitlen(tree: &mut Tree, desc: &Desc, stree: Option<&[u16]>, s: &mut Scratch) {
    let max_code = tree.max_code;
    let max_length = desc.max_length;
    s.bl_count = [0; MAX_BITS + 1];
    let mut overflow = 0i32;
    tree.len[s.heap[s.heap_max] as usize] = 0;
    for h in s.heap_max + 1..HEAP_SIZE {
        let n = s.heap[h] as usize;
        let mut bits = tree.len[tree.dad[n] as usize] as usize + 1;
        if bits > max_length {
            bits = max_length;
            overflow += 1;
        }
        tree.len[n] = bits as u16;
        if n > max_code {
            continue;
        }
        s.bl_count[bits] += 1;
        let xbits = if n >= desc.extra_base {
            desc.extra[n - desc.extra_base] as usize
        } else {
            0
        };
        let f = i64::from(tree.freq[n]);
        s.opt_len += f * (bits + xbits) as i64;
        if let Some(st) = stree {
            s.static_len += f * (st[n] as usize + xbits) as i64;
        }
    }
    if overflow == 0 {
        return;
    }
    loop {
        let mut bits = max_length - 1;
        while s.bl_count[bits] == 0 {
            bits -= 1;
        }
        s.bl_count[bits] -= 1;
        s.bl_count[bits + 1] += 2;
        s.bl_count[max_length] -= 1;
        overflow -= 2;
        if overflow <= 0 {
            break;
        }
    }
    let mut h = HEAP_SIZE;
    for bits in (1..=max_length).rev() {
        let mut n = s.bl_count[bits];
        while n != 0 {
            h -= 1;
            let m = s.heap[h] as usize;
            if m > max_code {
                continue;
            }
            if tree.len[m] as usize != bits {
                s.opt_len += (bits as i64 - i64::from(tree.len[m])) * i64::from(tree.freq[m]);
                tree.len[m] = bits as u16;
            }
            n -= 1;
        }
    }
}

/// Canonical codes (bit-reversed for LSB-first output) from the lengths.
fn gen_codes(len: &[u16], code: &mut [u16], max_code: usize, bl_count: &[u16; MAX_BITS + 1]) {
    let mut next = [0u16; MAX_BITS + 1];
    let mut c = 0u32;
    for bits in 1..=MAX_BITS {
        c = (c + u32::from(bl_count[bits - 1])) << 1;
        next[bits] = c as u16;
    }
    for n in 0..=max_code {
        let l = len[n] as usize;
        if l == 0 {
            continue;
        }
        code[n] = bi_reverse(u32::from(next[l]), l as u32) as u16;
        next[l] = next[l].wrapping_add(1);
    }
}

fn bi_reverse(code: u32, len: u32) -> u32 {
    code.reverse_bits() >> (32 - len)
}

/// The run-length parameters after a code length `cur` followed by `next`.
#[inline(always)]
fn run_limits(cur: u16, next: u16) -> (usize, usize) {
    if next == 0 {
        (138, 3)
    } else if cur == next {
        (6, 3)
    } else {
        (7, 4)
    }
}

/// Count the code-length symbols that [`send_tree`] will send for `tree`.
fn scan_tree(tree: &mut Tree, bl_freq: &mut [u32]) {
    let max_code = tree.max_code;
    let mut prevlen: i32 = -1;
    let mut nextlen = tree.len[0];
    let (mut max_count, mut min_count) = if nextlen == 0 { (138, 3) } else { (7, 4) };
    let mut count = 0usize;
    tree.len[max_code + 1] = 0xffff; // guard
    for n in 0..=max_code {
        let curlen = nextlen;
        nextlen = tree.len[n + 1];
        count += 1;
        if count < max_count && curlen == nextlen {
            continue;
        } else if count < min_count {
            bl_freq[curlen as usize] += count as u32;
        } else if curlen != 0 {
            if i32::from(curlen) != prevlen {
                bl_freq[curlen as usize] += 1;
            }
            bl_freq[REP_3_6] += 1;
        } else if count <= 10 {
            bl_freq[REPZ_3_10] += 1;
        } else {
            bl_freq[REPZ_11_138] += 1;
        }
        count = 0;
        prevlen = i32::from(curlen);
        (max_count, min_count) = run_limits(curlen, nextlen);
    }
}

/// Send the code lengths of `tree` with the code-length code `bl`.
fn send_tree(w: &mut BitWriter, tree: &Tree, bl: &Tree) {
    let send = |w: &mut BitWriter, c: usize| {
        w.put(u64::from(bl.code[c]), u32::from(bl.len[c]));
    };
    let max_code = tree.max_code;
    let mut prevlen: i32 = -1;
    let mut nextlen = tree.len[0];
    let (mut max_count, mut min_count) = if nextlen == 0 { (138, 3) } else { (7, 4) };
    let mut count = 0usize;
    for n in 0..=max_code {
        let curlen = nextlen;
        nextlen = tree.len[n + 1];
        count += 1;
        if count < max_count && curlen == nextlen {
            continue;
        } else if count < min_count {
            while count != 0 {
                send(w, curlen as usize);
                w.flush();
                count -= 1;
            }
        } else if curlen != 0 {
            if i32::from(curlen) != prevlen {
                send(w, curlen as usize);
                count -= 1;
            }
            send(w, REP_3_6);
            w.put((count - 3) as u64, 2);
        } else if count <= 10 {
            send(w, REPZ_3_10);
            w.put((count - 3) as u64, 3);
        } else {
            send(w, REPZ_11_138);
            w.put((count - 11) as u64, 7);
        }
        w.flush();
        count = 0;
        prevlen = i32::from(curlen);
        (max_count, min_count) = run_limits(curlen, nextlen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_tables_match_rfc1951() {
        // Lengths 3, 10, 11, 257, 258 and distances 1, 4, 5, 24577, 32768.
        assert_eq!(LENGTH_CODE[0], 0);
        assert_eq!(LENGTH_CODE[7], 7);
        assert_eq!(LENGTH_CODE[8], 8);
        assert_eq!(LENGTH_CODE[254], 27);
        assert_eq!(LENGTH_CODE[255], 28);
        assert_eq!(BASE_LENGTH[27], 227 - 3);
        assert_eq!(d_code(0), 0);
        assert_eq!(d_code(3), 3);
        assert_eq!(d_code(4), 4);
        assert_eq!(d_code(24576), 29);
        assert_eq!(d_code(32767), 29);
        assert_eq!(BASE_DIST[29], 24576);
        assert_eq!(BASE_DIST[15], 192);
        assert_eq!(fixed().lcode[256], 0);
        assert_eq!(fixed().llen[0], 8);
        assert_eq!(fixed().lcode[0], bi_reverse(0x30, 8) as u16);
    }
}
