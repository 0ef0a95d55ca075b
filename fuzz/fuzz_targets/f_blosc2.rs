//! Blosc2 on arbitrary bytes: filter 32026 (frames, B2ND frames) when the first
//! byte is even, a bare chunk through `ChunkDecoder` (whole chunk, then each
//! block alone) when it is odd.
#![no_main]

use libfuzzer_sys::fuzz_target;
use purehdf_filters::blosc2::chunk::{ChunkDecoder, Header};

mod common;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        return common::filter(purehdf_filters::ids::BLOSC2, rest);
    }
    let mut dec = ChunkDecoder::new();
    let Ok(h) = Header::parse(rest) else {
        return;
    };
    if h.nbytes > 4 << 20 {
        return;
    }
    let whole = dec.decode(rest, 4 << 20);
    if let Ok(out) = &whole {
        assert_eq!(out.len(), h.nbytes);
    }
    if let Ok((blocksize, nblocks)) = purehdf_filters::blosc2::chunk::block_layout(&h) {
        let mut buf = vec![0u8; blocksize];
        for k in 0..nblocks.min(64) {
            let len = blocksize.min(h.nbytes.saturating_sub(k * blocksize));
            let one = dec.decode_single_block(rest, k, &mut buf[..len]);
            // A chunk that decodes whole decodes block by block to the same bytes.
            if let (Ok(out), Ok(())) = (&whole, &one) {
                assert_eq!(out[k * blocksize..k * blocksize + len], buf[..len]);
            }
        }
    }
});
