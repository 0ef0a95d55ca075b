//! Raw chunk access: list the stored chunks, fetch a batch of them as bytes
//! borrowed from the file (order and duplicates kept, Fletcher-32 checked),
//! decode one. `cargo run --example raw_chunks [FILE.h5 DATASET]`.
use purehdf::File;

fn main() -> purehdf::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| golden("sb3_latest.h5"));
    let name = args.next().unwrap_or_else(|| "filters/all_three".into());
    let file = File::from_bytes(std::fs::read(&path).map_err(|e| purehdf::Error::io(&path, e))?)?;
    let ds = file.root()?.dataset(&name)?;
    let list = ds.chunks()?;
    println!(
        "{name}: {} chunks, first at {:#x} ({} bytes)",
        list.len(),
        list[0].address,
        list[0].size
    );
    let reader = ds.chunk_reader()?;
    let batch = reader.raw_chunks(&[[3u64, 1], [0, 0], [3, 1]], true)?;
    for c in batch.iter().flatten() {
        println!(
            "chunk {:?}: {} bytes, borrowed {}, checksum verified {}",
            c.coords,
            c.bytes.len(),
            c.is_borrowed(),
            c.verified
        );
    }
    let decoded = reader.decode(batch[1].as_ref().expect("chunk (0, 0) is stored"))?;
    assert_eq!(decoded.len(), 16 * 25 * 4);
    Ok(())
}

fn golden(name: &str) -> String {
    format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"))
}
