//! medh5 open + verify from arbitrary bytes (issue 16 item 4): the bytes are
//! opened as an HDF5 file in memory and run through the self-contained check,
//! `medh5 verify`'s digest and content_id recomputation, `tree`, `info`'s
//! summary and the validator's structural level. Any outcome but a panic, hang or runaway allocation is
//! fine; the data budget (`limits::data_budget`, 2 GiB floor for small
//! inputs) bounds what a damaged file can make verify hash, so the fuzzer
//! runs with a 64 MiB budget to stay fast.
#![no_main]

use libfuzzer_sys::fuzz_target;
use purehdf::low_level::file::File;
use purehdf::low_level::limits;

fuzz_target!(|data: &[u8]| {
    limits::set_data_budget(Some(64 << 20));
    let Ok(file) = File::from_bytes(data.to_vec()) else {
        return;
    };
    let _ = purehdf_medh5::self_contained::check(&file, "fuzz");
    let _ = purehdf_medh5::verify::verify_file(&file, "fuzz", None);
    let _ = purehdf_medh5::info::tree_file(&file, "fuzz");
    let _ = purehdf_medh5::verify::compute_content_id(&file);
    let sample = purehdf_medh5::sample::SampleFile::from_file(file);
    let _ = sample.root_attrs();
    let _ = sample.meta_bytes();
});
