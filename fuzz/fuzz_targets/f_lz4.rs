//! Filter `lz4` (HDF5 LZ4 framing) on arbitrary bytes, and the raw LZ4 block
//! decoder of the Blosc codecs checked against `lz4_flex` (first byte odd).
#![no_main]

use libfuzzer_sys::fuzz_target;
use purehdf_filters::blosc2::lz4block;

mod common;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        return common::filter(purehdf_filters::ids::LZ4, rest);
    }
    // Raw block: u16 LE output size, then the block.
    let Some((n, block)) = rest.split_first_chunk::<2>() else {
        return;
    };
    let n = usize::from(u16::from_le_bytes(*n));
    let mut ours = vec![0u8; n];
    let mut theirs = vec![0u8; n];
    let a = lz4block::decode(block, &mut ours);
    let b = lz4_flex::block::decompress_into(block, &mut theirs);
    if let (Ok(a), Ok(b)) = (&a, &b) {
        assert_eq!(a, b, "decoded lengths differ");
        assert_eq!(ours[..*a], theirs[..*b], "decoded bytes differ");
    }
    // A block lz4_flex accepts in full must decode for us too.
    if let Ok(b) = b {
        if b == n {
            assert!(a.is_ok(), "lz4_flex decodes, we refuse: {a:?}");
        }
    }
});
