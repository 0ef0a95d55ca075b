//! A pipeline of up to four stages and a filter mask on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    let mut t = common::Take(data);
    let stages = usize::from(t.u8() % 4) + 1;
    let pipeline: Vec<_> = (0..stages).map(|_| t.spec()).collect();
    let mask = u32::from(t.u8() & 0x0F);
    let ctx = t.ctx();
    let _ = purehdf_filters::decode_pipeline(&pipeline, mask, &ctx, t.0);
});
