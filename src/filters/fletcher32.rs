//! Filter `fletcher32` (id 3): libhdf5's Fletcher-32 checksum, `docs/filters-format.md` §2.3.
//!
//! Encoding appends the checksum as a little-endian u32; decoding verifies and
//! strips it. The sums run over big-endian 16-bit words with end-around-carry
//! folding (so a half may end as `0xFFFF`), an odd last byte counting as the high
//! byte of a final word. libhdf5 also accepts the value with the bytes of each
//! 16-bit half swapped, written by libhdf5 before 1.6.3.

use crate::error::{Error, Result};
use crate::ChunkContext;

const NAME: &str = "fletcher32";

fn err(reason: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, reason)
}

/// The checksum libhdf5 computes over `data`.
pub fn checksum(data: &[u8]) -> u32 {
    fn fold(x: u32) -> u32 {
        (x & 0xFFFF) + (x >> 16)
    }
    let (mut s1, mut s2) = (0u32, 0u32);
    let mut words = data.chunks_exact(2);
    // 360 words keep both sums below 2^32 before folding.
    loop {
        let mut any = false;
        for w in words.by_ref().take(360) {
            any = true;
            s1 += (u32::from(w[0]) << 8) | u32::from(w[1]);
            s2 += s1;
        }
        if !any {
            break;
        }
        s1 = fold(s1);
        s2 = fold(s2);
    }
    if let [last] = words.remainder() {
        s1 += u32::from(*last) << 8;
        s2 += s1;
        s1 = fold(s1);
        s2 = fold(s2);
    }
    s1 = fold(s1);
    s2 = fold(s2);
    (s2 << 16) | s1
}

/// The checksum as libhdf5 before 1.6.3 stored it (bytes of each half swapped).
fn legacy(sum: u32) -> u32 {
    ((sum & 0x00FF_00FF) << 8) | ((sum & 0xFF00_FF00) >> 8)
}

/// Undo the filter: check the trailing checksum and strip it.
pub fn decode(input: &[u8], _cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    let split = input
        .len()
        .checked_sub(4)
        .ok_or_else(|| err("chunk shorter than its 4-byte checksum"))?;
    let (data, tail) = input.split_at(split);
    let stored = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let computed = checksum(data);
    if stored != computed && stored != legacy(computed) {
        return Err(Error::Checksum {
            structure: "fletcher32 filter",
            offset: split as u64,
            stored,
            computed,
        });
    }
    Ok(data.to_vec())
}

/// Apply the filter: append the checksum (little-endian).
pub fn encode(input: &[u8], _cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(input.len() + 4);
    out.extend_from_slice(input);
    out.extend_from_slice(&checksum(input).to_le_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ChunkContext {
        ChunkContext::new(1, 0)
    }

    fn stored(data: &[u8]) -> [u8; 4] {
        let enc = encode(data, &[], &ctx()).unwrap();
        enc[data.len()..].try_into().unwrap()
    }

    #[test]
    fn known_answers_from_libhdf5() {
        assert_eq!(stored(&[1, 2, 3]), [0x02, 0x04, 0x04, 0x05]);
        assert_eq!(stored(&[1, 2, 3, 4]), [0x06, 0x04, 0x08, 0x05]);
        assert_eq!(stored(&[1, 2, 3, 4, 5, 6, 7]), [0x0c, 0x10, 0x20, 0x1e]);
        assert_eq!(stored(&[0xFF; 1000]), [0xFF; 4]);
        assert_eq!(stored(&[0x34, 0x12, 0xcd, 0xab]), [0xbe, 0x01, 0xd0, 0x35]);
    }

    #[test]
    fn verifies_strips_and_accepts_legacy() {
        let data: Vec<u8> = (0..999u32).map(|i| (i * 7) as u8).collect();
        let mut enc = encode(&data, &[], &ctx()).unwrap();
        assert_eq!(decode(&enc, &[], &ctx()).unwrap(), data);
        let sum = checksum(&data);
        let n = data.len();
        enc[n..].copy_from_slice(&legacy(sum).to_le_bytes());
        assert_eq!(decode(&enc, &[], &ctx()).unwrap(), data);
        enc[0] ^= 1;
        assert!(matches!(
            decode(&enc, &[], &ctx()),
            Err(Error::Checksum { offset: 999, .. })
        ));
        assert!(decode(&[1, 2, 3], &[], &ctx()).is_err());
        assert_eq!(decode(&[0; 4], &[], &ctx()).unwrap(), Vec::<u8>::new());
    }

    proptest::proptest! {
        #[test]
        fn prop_round_trip(data in proptest::collection::vec(proptest::num::u8::ANY, 0..3000)) {
            let enc = encode(&data, &[], &ctx()).unwrap();
            proptest::prop_assert_eq!(enc.len(), data.len() + 4);
            proptest::prop_assert_eq!(decode(&enc, &[], &ctx()).unwrap(), data);
        }

        #[test]
        fn prop_corruption_is_detected(data in proptest::collection::vec(proptest::num::u8::ANY, 1..500), at in 0usize..500, bit in 0u8..8) {
            let mut enc = encode(&data, &[], &ctx()).unwrap();
            let at = at % data.len();
            enc[at] ^= 1 << bit;
            // Fletcher's 16-bit sums detect every single-bit error (0x0000/0xFFFF aside).
            let r = decode(&enc, &[], &ctx());
            if r.is_ok() {
                let word = [enc[at & !1], enc.get((at & !1) + 1).copied().unwrap_or(0)];
                proptest::prop_assert!(word == [0, 0] || word == [0xFF, 0xFF] || word == [0xFF, 0] || word == [0, 0xFF]);
            }
        }
    }
}
