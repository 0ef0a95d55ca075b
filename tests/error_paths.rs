//! Errors name the object they come from: a damaged chunk's error carries the
//! dataset's path (not the chunk index's address).

use purehdf::{DatasetSpec, Error, File, FileWriter, Filter};

/// A file with `/g/ct` (deflate-compressed chunks) and where its first
/// chunk's stored bytes start.
fn file_with_chunks() -> (Vec<u8>, u64) {
    let mut w = FileWriter::in_memory();
    let g = w.create_group(w.root(), "g").unwrap();
    let data: Vec<i32> = (0..4096).map(|i| (i * 7) % 1000).collect();
    let spec =
        DatasetSpec::of::<i32>(&[64, 64]).chunked(&[32, 32], vec![Filter::deflate(6).unwrap()]);
    w.write_dataset(g, "ct", spec, &data).unwrap();
    let bytes = w.finish().unwrap();
    let f = File::from_bytes(bytes.clone()).unwrap();
    let ds = f.root().unwrap().dataset("g/ct").unwrap();
    let first = ds.chunks().unwrap()[0].address;
    (bytes, first)
}

#[test]
fn a_damaged_chunk_names_the_dataset_path() {
    let (mut bytes, at) = file_with_chunks();
    // Overwrite the deflate stream's header and first block.
    for b in &mut bytes[at as usize..at as usize + 16] {
        *b = 0xFF;
    }
    let f = File::from_bytes(bytes).unwrap();
    let ds = f.root().unwrap().dataset("g/ct").unwrap();
    let err = ds.read::<i32>().unwrap_err();
    match &err {
        Error::Chunk {
            dataset, coords, ..
        } => {
            assert_eq!(dataset, "/g/ct");
            assert_eq!(coords, &vec![0, 0]);
        }
        other => panic!("expected a chunk error, got {other:?}"),
    }
    assert!(err.to_string().contains("/g/ct"), "{err}");
}
