//! Our own Zstandard encoder (RFC 8878 §3.1.1) for the levels where the
//! `rusty_zstd` crate falls short: level 22, Blosc2's `zstd:9` and the
//! `archive` profile (`docs/filters-format.md` §3.7, `notes/perf-zstd22.md`).
//!
//! Three parts, each in its own file:
//! * [`opt`]: the match finder and the optimal parser, turning a block into
//!   literals and [`Seq`]s priced from per-symbol statistics;
//! * [`entropy`]: the block writer, coding literals (Huffman) and sequences
//!   (FSE) and choosing Raw/RLE blocks when they are smaller;
//! * [`compress`]: the frame, tying the two together.
#![allow(dead_code)]

pub(crate) mod codes;
pub(crate) mod compress;
pub(crate) mod entropy;
pub(crate) mod greedy;
pub(crate) mod opt;

/// One Zstandard sequence (RFC 8878 §3.1.1.3.2): `lit_len` literals copied
/// from the block's literal section, then `match_len` bytes copied from
/// `off_value`'s offset back in the output.
///
/// `off_value` is the RFC's `Offset_Value`, already resolved by the parser:
/// `1..=3` name a repeat offset (with the RFC's shift when `lit_len == 0`),
/// any larger value is a real offset plus 3. `match_len` is at least 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seq {
    /// Literals before the match.
    pub(crate) lit_len: u32,
    /// Length of the match (≥ 3).
    pub(crate) match_len: u32,
    /// The RFC's `Offset_Value` (repeat code 1–3, or offset + 3).
    pub(crate) off_value: u32,
}
