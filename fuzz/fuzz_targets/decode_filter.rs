//! One filter stage on arbitrary bytes: `purehdf_filters::decode` must return
//! (Ok or Err) without panicking and within its output bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    let mut t = common::Take(data);
    let spec = t.spec();
    let ctx = t.ctx();
    if let Ok(out) = purehdf_filters::decode(&spec, &ctx, t.0) {
        assert!(out.len() <= ctx.max_output.max(t.0.len()));
    }
});
