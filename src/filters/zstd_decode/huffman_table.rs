//! What the one- and two-symbol Huffman decoders of RFC 8878 §4.2.1–4.2.2
//! share: the table geometry and the four-stream window helpers of their
//! fast loops.

use super::bits::BackBits;

/// Largest code length (RFC 8878 §4.2.1: Max_Number_of_Bits <= 11).
pub(crate) const MAX_BITS: u32 = 11;
/// Cells of a decoding table indexed by the next [`MAX_BITS`] bits.
pub(crate) const TABLE_SIZE: usize = 1 << MAX_BITS;

/// Where the four readers stand, for a fast loop over raw pointers: each
/// stream's window start in `body` and the bits consumed of it. None unless
/// every window starts inside its stream and at most at `lim` (so 8 bytes
/// from it lie in `body`) with fewer than 64 bits consumed: readers keep them
/// so, and the check here lets the pointer arithmetic of the loops rest on
/// nothing outside them.
#[inline(always)]
pub(crate) fn windows(
    readers: &[&mut BackBits; 4],
    starts: [usize; 4],
    lim: usize,
) -> Option<([usize; 4], [u32; 4])> {
    let mut pos = [0usize; 4];
    let mut used = [0u32; 4];
    for k in 0..4 {
        let (p, c) = readers[k].position();
        pos[k] = starts[k].checked_add(p)?;
        used[k] = c;
        if pos[k] > lim || c > 63 {
            return None;
        }
    }
    Some((pos, used))
}

/// The 8 bytes at `at` in `body`, little-endian (0 past its end).
#[inline(always)]
pub(crate) fn load(body: &[u8], at: usize) -> u64 {
    match body.get(at..at + 8) {
        Some(s) => {
            let mut b = [0u8; 8];
            b.copy_from_slice(s);
            u64::from_le_bytes(b)
        }
        None => 0,
    }
}
