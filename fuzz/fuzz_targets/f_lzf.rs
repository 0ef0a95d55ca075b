//! Filter `lzf` alone on arbitrary bytes (layout: `common::filter`).
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::filter(purehdf_filters::ids::LZF, data));
