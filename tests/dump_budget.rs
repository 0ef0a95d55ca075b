//! Issue 16 item 2 for `h5 dump`: the dump holds datasets to the crate's one
//! data budget (`limits::data_budget`), not a cap of its own. A dataset over
//! it is not hashed; its `read_skipped` is the `Error::OverBudget` text naming
//! the dataset and its size, and the dump still counts it as read (as the
//! oracle's "dataset too large to hash" records). One test in its own binary:
//! the budget is process-wide.

use purehdf::low_level::datatype::Datatype;
use purehdf::low_level::limits::set_data_budget;
use purehdf::low_level::write::{DatasetData, DatasetSpec, FileWriter};
use purehdf_cli::dump::walk::dump_file;
use serde_json::Value;

fn record<'a>(doc: &'a Value, path: &str) -> &'a Value {
    doc["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in the dump"))
}

#[test]
fn dump_follows_the_data_budget() {
    let dir = std::env::temp_dir().join(format!("purehdf-dump-budget-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("small.h5");
    let mut w = FileWriter::create(&p).unwrap();
    let r = w.root();
    let values: Vec<u8> = (0..64).collect();
    let spec = DatasetSpec::new(Datatype::int(4, true), &[4, 4]);
    w.create_dataset(r, "small", spec, DatasetData::Raw(values))
        .unwrap();
    w.commit().unwrap();

    // Default budget (2 GiB floor): 64 bytes are hashed.
    set_data_budget(None);
    let doc = dump_file(&p).unwrap().doc;
    let rec = record(&doc, "/small");
    assert_eq!(rec["read_ok"], true);
    assert_eq!(rec["sha256"].as_str().map(str::len), Some(64), "{rec}");
    assert!(rec.get("read_skipped").is_none(), "{rec}");

    // A 32-byte budget: the 64-byte dataset is over it, named with its size.
    set_data_budget(Some(32));
    let doc = dump_file(&p).unwrap().doc;
    set_data_budget(None);
    let rec = record(&doc, "/small");
    assert_eq!(rec["read_ok"], true);
    assert!(rec.get("sha256").is_none(), "{rec}");
    assert_eq!(
        rec["read_skipped"],
        "/small: logical size of 64 bytes exceeds the data budget of 32 bytes (PUREHDF_DATA_BUDGET)"
    );
    let _ = std::fs::remove_dir_all(&dir);

    // The corpus's 4 GiB dataset in a 6 KiB file: over the default budget, as
    // the oracle's 2 GiB cap.
    let big = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/hdf5/tools/test/h5dump/testfiles/tbigdims.h5");
    if !big.is_file() {
        println!("skipped: tbigdims.h5 (../shared/corpus absent)");
        return;
    }
    let doc = dump_file(&big).unwrap().doc;
    let rec = record(&doc, "/dset4gb");
    assert_eq!(rec["read_ok"], true);
    assert_eq!(
        rec["read_skipped"],
        "/dset4gb: logical size of 4294967306 bytes exceeds the data budget of 2147483648 bytes (PUREHDF_DATA_BUDGET)"
    );
}
