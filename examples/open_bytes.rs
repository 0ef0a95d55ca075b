//! Open an HDF5 file held in memory (as in a browser or a service that got
//! the bytes over the network), walk the root group and read a Blosc2 dataset.
//! `cargo run --example open_bytes [FILE.h5]`.
use purehdf::{File, Object};

fn main() -> purehdf::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| golden("sb3_latest.h5"));
    let bytes = std::fs::read(&path).map_err(|e| purehdf::Error::io(&path, e))?;
    let file = File::from_bytes(bytes)?;
    for (name, _link) in file.root()?.links()? {
        let kind = file
            .object(&name)
            .map(|o| o.kind_name())
            .unwrap_or("unresolved");
        println!("/{name}: {kind}");
    }
    if let Object::Dataset(ds) = file.object("filters/blosc2_zstd_bitshuffle")? {
        let v: Vec<i64> = ds.read()?;
        println!(
            "{}: shape {:?}, sum {}",
            ds.path(),
            ds.shape(),
            v.iter().sum::<i64>()
        );
        assert_eq!(v.len(), 64 * 50);
    }
    Ok(())
}

fn golden(name: &str) -> String {
    format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"))
}
