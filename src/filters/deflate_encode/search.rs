//! The match search of [`super::lz`]: zlib's walk along a 3-byte hash
//! chain, and an exact shortcut along a 4-byte one.
//!
//! zlib takes, among the first `chain` candidates of the 3-byte chain (those
//! within the distance limit), the first one with the longest match beyond
//! the length to beat, or the first that reaches `nice`. When that length
//! is at least 3, only candidates sharing 4 bytes can win; they are the
//! 3-byte chain's candidates that are also on a 4-byte chain, in the same
//! order. Each position records its rank in its 3-byte chain (a count per
//! hash bucket), so the 4-byte walk knows when a candidate lies beyond
//! zlib's `chain` limit. The answer is zlib's; far fewer candidates are
//! visited where many strings share 3 bytes but not 4.

use super::window::{Window, MAX_DIST, MAX_MATCH, MIN_MATCH, WMASK, WSIZE};

/// zlib's `longest_match` over the window: the first of the chain's
/// candidates from `cur` (at most `chain` of them, none at or before 32 KiB
/// − 262 back) with the longest match at `scan` beyond `best_len`, stopping
/// at `nice`; its length and start (`None` when nothing beat `best_len`).
/// The length may run past the data (the caller caps it).
#[inline(always)]
pub(super) fn longest_match(
    w: &Window,
    prev: &[u16; WSIZE],
    scan: usize,
    cur: u16,
    mut best_len: usize,
    mut chain: usize,
    nice: usize,
) -> (usize, Option<usize>) {
    let limit = scan.saturating_sub(MAX_DIST);
    let mut start = None;
    let rd16 = |i: usize| u16::from_le_bytes([w[i], w[i + 1]]);
    let scan_start = rd16(scan);
    // Offset of the two bytes ending at the length to beat (at most 257).
    let mut off = (best_len - 1).min(MAX_MATCH - 1);
    let mut scan_end = rd16(scan + off);
    let mut cur = cur as usize;
    loop {
        // The next candidate's load goes first, so that it is under way
        // whatever the compares below decide.
        let next = prev[cur & WMASK];
        // The two bytes ending at the length to beat, then the first two
        // (the third is equal when the hashes are).
        if rd16(cur + off) == scan_end && rd16(cur) == scan_start {
            let len = MIN_MATCH + common(w, scan + 3, cur + 3, MAX_MATCH - 3);
            if len > best_len {
                start = Some(cur);
                best_len = len;
                if len >= nice {
                    break;
                }
                off = (best_len - 1).min(MAX_MATCH - 1);
                scan_end = rd16(scan + off);
            }
        }
        cur = next as usize;
        chain -= 1;
        if cur <= limit || chain == 0 {
            break;
        }
    }
    (best_len, start)
}

/// [`longest_match`] by the 4-byte chain (`link4`: previous position in
/// the low 16 bits, 3-byte rank in the high 16; from `scan`'s own link), for a length to beat `best_len` ≥ 3: `rank_h` is the 3-byte
/// rank of the 3-byte chain's head `h` (the first candidate, allowed at
/// exactly [`MAX_DIST`]). Only with at least [`MAX_MATCH`] + 4 bytes of data
/// from `scan` (so every byte compared is data).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn longest_match4(
    w: &Window,
    link4: &[u32; WSIZE],
    scan: usize,
    h: usize,
    rank_h: u16,
    mut best_len: usize,
    chain: usize,
    nice: usize,
) -> (usize, Option<usize>) {
    debug_assert!(best_len >= MIN_MATCH);
    let limit = scan.saturating_sub(MAX_DIST);
    let mut start = None;
    let rd16 = |i: usize| u16::from_le_bytes([w[i], w[i + 1]]);
    let s4 = rd32(w, scan);
    let mut off = (best_len - 1).min(MAX_MATCH - 1);
    let mut scan_end = rd16(scan + off);
    let mut cur = link4[scan & WMASK] as u16 as usize;
    loop {
        if cur <= limit && cur != h {
            break;
        }
        let link = link4[cur & WMASK];
        if rd32(w, cur) == s4 {
            // On the 3-byte chain: stop past zlib's `chain` candidates.
            if usize::from(rank_h.wrapping_sub((link >> 16) as u16)) >= chain {
                break;
            }
            if rd16(cur + off) == scan_end {
                let len = 4 + common(w, scan + 4, cur + 4, MAX_MATCH - 4);
                if len > best_len {
                    start = Some(cur);
                    best_len = len;
                    if len >= nice {
                        break;
                    }
                    off = (best_len - 1).min(MAX_MATCH - 1);
                    scan_end = rd16(scan + off);
                }
            }
        }
        cur = link as u16 as usize;
    }
    (best_len, start)
}

/// The first candidate of the 3-byte chain from `h` (at most `chain` of
/// them) that shares 3 bytes with `scan`: zlib's pick when no candidate
/// shares 4.
#[inline(always)]
pub(super) fn first_match3(
    w: &Window,
    prev: &[u16; WSIZE],
    scan: usize,
    h: usize,
    mut chain: usize,
) -> Option<usize> {
    let limit = scan.saturating_sub(MAX_DIST);
    let s3 = rd32(w, scan) & 0x00FF_FFFF;
    let mut cur = h;
    loop {
        if rd32(w, cur) & 0x00FF_FFFF == s3 {
            return Some(cur);
        }
        cur = prev[cur & WMASK] as usize;
        chain -= 1;
        if cur <= limit || chain == 0 {
            return None;
        }
    }
}

/// The 4 bytes at `i`.
#[inline(always)]
pub(super) fn rd32(w: &Window, i: usize) -> u32 {
    u32::from_le_bytes([w[i], w[i + 1], w[i + 2], w[i + 3]])
}

/// Equal bytes of `w[a..]` and `w[b..]`, at most `max` (`a + max + 8` within `w`).
#[inline(always)]
fn common(w: &Window, a: usize, b: usize, max: usize) -> usize {
    let mut n = 0;
    while n < max {
        let x = u64::from_le_bytes(w[a + n..a + n + 8].try_into().unwrap());
        let y = u64::from_le_bytes(w[b + n..b + n + 8].try_into().unwrap());
        let d = x ^ y;
        if d != 0 {
            return (n + (d.trailing_zeros() / 8) as usize).min(max);
        }
        n += 8;
    }
    max
}
