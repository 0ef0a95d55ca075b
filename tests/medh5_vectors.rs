//! medh5 known answers: Python float repr table, the vector recipes of
//! `shared/vectors/medh5/README.md` (digests and `content_id`s), profiles and
//! the chunk optimiser table of `shared/spec/medh5.md` §6.4.

use std::path::{Path, PathBuf};

use purehdf::medh5::pyfloat;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

#[allow(dead_code)]
fn shared_dir() -> Option<PathBuf> {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if local.is_dir() {
        return Some(local);
    }
    let abs = PathBuf::from("/work/shared");
    if abs.is_dir() {
        return Some(abs);
    }
    println!("skipped: ../shared absent");
    None
}

#[test]
fn pyfloat_matches_python_table() {
    let text = std::fs::read_to_string(data_dir().join("pyfloat_table.txt")).unwrap();
    let mut n = 0;
    for line in text.lines() {
        let (hex, want) = line.split_once(' ').unwrap();
        let v = f64::from_bits(u64::from_str_radix(hex, 16).unwrap());
        assert_eq!(pyfloat::repr(v), want, "bits {hex}");
        n += 1;
    }
    assert!(n > 8000, "table has {n} rows");
}
