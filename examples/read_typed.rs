//! Read datasets typed and sliced: numbers converted from any stored type and
//! byte order, strided slices, strings and compound fields.
//! `cargo run --example read_typed [FILE.h5]` (default: a committed golden file).
use purehdf::{s, File};

fn main() -> purehdf::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| golden("sb3_latest.h5"));
    let file = File::open(&path)?;
    let i4 = file.root()?.dataset("types/i4")?; // int32, shape [4, 10], values -20..20
    let all: Vec<f64> = i4.read()?;
    let part: Vec<i64> = i4.read_slice(&s![1..4; 2, ..; 3])?; // rows 1, 3; columns 0, 3, 6, 9
    let be: Vec<u32> = file.root()?.dataset("types/u2_be")?.read()?; // big-endian uint16
    let names: Vec<String> = file.root()?.dataset("types/vlen_str")?.read()?;
    let ids: Vec<u8> = file.root()?.dataset("types/compound")?.read_field("id")?;
    println!(
        "{} values, slice {part:?}, {be:?}, {names:?}, ids {ids:?}",
        all.len()
    );
    assert_eq!(part, vec![-10, -7, -4, -1, 10, 13, 16, 19]);
    assert_eq!(
        (be[9], ids, names[0].as_str()),
        (9, vec![1, 2, 3, 4], "short")
    );
    Ok(())
}

fn golden(name: &str) -> String {
    format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"))
}
