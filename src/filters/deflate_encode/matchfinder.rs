//! Hash-chain match finder over one input buffer for LZ77 (RFC 1951 §4: a
//! 32 KiB window, matches of 3–258 bytes), with tables kept across inputs.
//!
//! Two tables: the latest position of each 4-byte hash (one candidate, the
//! nearest 4-byte match), and hash chains over 6-byte hashes, so that the
//! chain walk, a dependent load per step, only visits positions that share
//! six bytes with the current one (with 4-byte chains, on 64^3 int16 CT
//! chunks, 24 steps per search did not reach as far back as 8 steps do here).
//!
//! Positions are stored as `base + offset` so that one call's entries are out
//! of every later call's window without clearing the tables: `base` moves past
//! each input plus a window's gap.

/// Deflate window size (largest distance).
pub(super) const WINDOW: usize = 32768;
pub(super) const MIN_MATCH: usize = 3;
pub(super) const MAX_MATCH: usize = 258;
/// Bits of the chain heads' 6-byte hash and of the 4-byte hash: 64 KiB tables each.
const HASH_BITS: u32 = 14;
const HASH_SIZE: usize = 1 << HASH_BITS;
const HASH4_BITS: u32 = 14;
const HASH4_SIZE: usize = 1 << HASH4_BITS;

pub(super) struct MatchFinder {
    /// Latest position (`base + offset`) of each 6-byte hash: the chain heads.
    head: Box<[u32]>,
    /// Latest position of each 4-byte hash (no chain).
    head4: Box<[u32]>,
    /// For each position (modulo the window), how far back the previous one
    /// with the same hash is; `u16::MAX` (beyond any window) ends the chain.
    /// Deltas keep this table at 64 KiB, which the chain walk reads
    /// position after position.
    prev: Box<[u16]>,
    base: u32,
}

/// Little-endian `u32` at `data[at..at + 4]`.
///
/// # Safety
/// `at + 4 <= data.len()`.
#[inline(always)]
unsafe fn rd32(data: &[u8], at: usize) -> u32 {
    debug_assert!(at + 4 <= data.len());
    // SAFETY: the caller guarantees the 4 bytes are inside `data`; unaligned read of plain bytes.
    unsafe { data.as_ptr().add(at).cast::<u32>().read_unaligned() }.to_le()
}

/// Little-endian `u64` at `data[at..at + 8]`.
///
/// # Safety
/// `at + 8 <= data.len()`.
#[inline(always)]
unsafe fn rd64(data: &[u8], at: usize) -> u64 {
    debug_assert!(at + 8 <= data.len());
    // SAFETY: the caller guarantees the 8 bytes are inside `data`; unaligned read of plain bytes.
    unsafe { data.as_ptr().add(at).cast::<u64>().read_unaligned() }.to_le()
}

#[inline(always)]
fn hash4(v: u32) -> usize {
    (v.wrapping_mul(0x9E37_79B1) >> (32 - HASH4_BITS)) as usize
}

/// Hash of the low 6 bytes of `v` (the 8 bytes at a position).
#[inline(always)]
fn hash6(v: u64) -> usize {
    ((v << 16).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - HASH_BITS)) as usize
}

/// Length of the common prefix of `data[a..]` and `data[b..]`, at most `max`.
///
/// # Safety
/// `a < b` and `b + max <= data.len()`.
#[inline(always)]
unsafe fn match_len(data: &[u8], a: usize, b: usize, max: usize) -> usize {
    let mut l = 0usize;
    while l + 8 <= max {
        // SAFETY: a + l + 8 <= b + l + 8 <= b + max <= data.len().
        let x = unsafe { rd64(data, a + l) ^ rd64(data, b + l) };
        if x != 0 {
            return l + (x.trailing_zeros() / 8) as usize;
        }
        l += 8;
    }
    while l < max && data[a + l] == data[b + l] {
        l += 1;
    }
    l
}

/// The largest input one call handles (positions stay far from `u32` overflow).
pub const MAX_INPUT: usize = 1 << 30;
/// Above `u16::MAX + WINDOW`, so that stepping back by `u16::MAX` from any
/// position in the window cannot wrap below zero.
const FIRST_BASE: u32 = 4 * WINDOW as u32;

impl MatchFinder {
    pub(super) fn new() -> Self {
        MatchFinder {
            head: vec![0u32; HASH_SIZE].into_boxed_slice(),
            head4: vec![0u32; HASH4_SIZE].into_boxed_slice(),
            prev: vec![u16::MAX; WINDOW].into_boxed_slice(),
            base: FIRST_BASE,
        }
    }

    /// Get ready for an input of `n` bytes (at most [`MAX_INPUT`]).
    pub(super) fn start(&mut self, n: usize) {
        let need = u64::from(self.base) + n as u64 + 2 * WINDOW as u64;
        if need > u64::from(u32::MAX) {
            self.head.fill(0);
            self.head4.fill(0);
            self.base = FIRST_BASE;
        }
    }

    /// Move past an input of `n` bytes: its entries fall out of the next window.
    pub(super) fn end(&mut self, n: usize) {
        self.base += n as u32 + WINDOW as u32 + 1;
    }

    /// Insert position `pos` (`pos + 4 <= data.len()`): into the 4-byte
    /// table, and into the chains when the 8 bytes from `pos` are in `data`.
    #[inline(always)]
    pub(super) fn insert(&mut self, data: &[u8], pos: usize) {
        let abs = self.base + pos as u32;
        let h4 = hash4(u32::from_le_bytes([
            data[pos],
            data[pos + 1],
            data[pos + 2],
            data[pos + 3],
        ]));
        // SAFETY: `hash4` is below HASH4_SIZE = head4.len().
        unsafe { *self.head4.get_unchecked_mut(h4) = abs };
        if pos + 8 > data.len() {
            return;
        }
        // SAFETY: `pos + 8 <= data.len()`, checked above.
        let h = hash6(unsafe { rd64(data, pos) });
        // SAFETY: `hash6` is below HASH_SIZE = head.len(), the mask keeps the
        // other index below WINDOW = prev.len().
        unsafe {
            let slot = self.head.get_unchecked_mut(h);
            let delta = (abs - *slot).min(u32::from(u16::MAX)) as u16;
            *self.prev.get_unchecked_mut(abs as usize & (WINDOW - 1)) = delta;
            *slot = abs;
        }
    }

    /// Longest match for `pos` (`pos + 4 <= data.len()`) longer than `best`,
    /// trying at most `chain` candidates and stopping at `nice`:
    /// `(len, dist)`, or `(best, 0)` when none is longer.
    #[inline(always)]
    pub(super) fn find(
        &self,
        data: &[u8],
        pos: usize,
        chain: u32,
        nice: usize,
        best: usize,
    ) -> (usize, usize) {
        let max = (data.len() - pos).min(MAX_MATCH);
        let nice = nice.min(max);
        let mut best = best;
        let mut best_dist = 0usize;
        if best >= max {
            return (best, 0);
        }
        let cur = self.base + pos as u32;
        let lim = cur - WINDOW as u32;
        assert!(pos + max <= data.len() && max >= 4);
        // SAFETY (all reads below): every candidate read is checked to be a
        // position before `pos` (`cp < pos`, the loop condition; entries of
        // earlier inputs are below `lim` anyway, see the module notes);
        // offsets stay below `max` and `pos + max <= data.len()` (asserted above).
        // SAFETY: `pos + 4 <= pos + max <= data.len()`, as `max >= 4` (asserted above).
        let first = unsafe { rd32(data, pos) };
        // The 4 bytes ending at index `best` must match to beat `best`.
        let mut off = best.saturating_sub(3);
        // SAFETY: (as for all reads here) `best < max` (returned above
        // otherwise), so `off + 4 <= max` and the read ends by `pos + max`.
        let mut end4 = unsafe { rd32(data, pos + off) };
        // The nearest 4-byte match.
        // SAFETY: hash4 < HASH4_SIZE = head4.len().
        let c4 = unsafe { *self.head4.get_unchecked(hash4(first)) };
        let cp = c4.wrapping_sub(self.base) as usize;
        // No chain walk either when the nearest position with this 4-byte
        // hash holds other bytes (it almost never finds anything then, and
        // literal stretches, e.g. the low bytes of shuffled int16, get a
        // search per byte).
        // SAFETY: (as for all reads here) the read runs only after `cp < pos`
        // held (`&&`), so `cp + 4 <= pos + 4 <= data.len()`.
        if !(c4 >= lim && cp < pos && unsafe { rd32(data, cp) == first }) {
            return (best, 0);
        }
        // SAFETY: (as for all reads here) `cp + 4 < pos + 4` since `cp < pos`,
        // and `pos + 4 + (max - 4) = pos + max <= data.len()`.
        let l = 4 + unsafe { match_len(data, cp + 4, pos + 4, max - 4) };
        if l > best {
            best = l;
            best_dist = pos - cp;
            if l >= nice {
                return (best, best_dist);
            }
            off = best - 3;
            // SAFETY: (as for all reads here) `l < nice <= max` (returned
            // above otherwise), so `off + 4 = l + 1 <= max`.
            end4 = unsafe { rd32(data, pos + off) };
        }
        if pos + 8 > data.len() {
            return (best, best_dist);
        }
        // SAFETY: hash6 < HASH_SIZE = head.len(); `pos + 8 <= data.len()`.
        let mut cand = unsafe { *self.head.get_unchecked(hash6(rd64(data, pos))) };
        let mut chain = chain;
        while cand >= lim && chain > 0 {
            let cp = cand.wrapping_sub(self.base) as usize;
            if cp >= pos {
                break;
            }
            // The next candidate's load comes first, so that a mispredicted
            // compare below does not hold it back.
            // SAFETY: masked below WINDOW = prev.len().
            let next =
                cand - u32::from(unsafe { *self.prev.get_unchecked(cand as usize & (WINDOW - 1)) });
            // SAFETY: (as for all reads here) `cp < pos` (checked above) and
            // `off + 4 <= max`, so both reads end by `pos + max <= data.len()`.
            if unsafe { rd32(data, cp + off) == end4 && rd32(data, cp) == first } {
                // SAFETY: (as for all reads here) `cp + 4 < pos + 4` and
                // `pos + 4 + (max - 4) <= data.len()`.
                let l = 4 + unsafe { match_len(data, cp + 4, pos + 4, max - 4) };
                if l > best {
                    best = l;
                    best_dist = pos - cp;
                    if l >= nice {
                        break;
                    }
                    off = best - 3;
                    // SAFETY: (as for all reads here) `l < nice <= max`, so
                    // `off + 4 <= max`.
                    end4 = unsafe { rd32(data, pos + off) };
                }
            }
            cand = next;
            chain -= 1;
        }
        (best, best_dist)
    }
}
