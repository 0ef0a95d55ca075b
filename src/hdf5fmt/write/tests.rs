//! Unit tests of the writer: handles, raw chunks and contiguous parts, dense
//! groups for long link names, atomic commit.
use super::*;

#[test]
fn duplicate_and_bad_names_are_refused() {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    w.create_group(r, "a").unwrap();
    assert!(w.create_group(r, "a").is_err());
    assert!(w.create_group(r, "x/y").is_err());
    assert!(w.create_group(r, "").is_err());
}

#[test]
fn minimal_file_has_superblock_and_root() {
    let w = FileWriter::in_memory();
    let b = w.finish().unwrap();
    assert_eq!(&b[..8], b"\x89HDF\r\n\x1a\n");
    assert_eq!(b[8], 2);
    let eof = u64::from_le_bytes(b[28..36].try_into().unwrap());
    assert_eq!(eof, b.len() as u64);
    let root = u64::from_le_bytes(b[36..44].try_into().unwrap()) as usize;
    assert_eq!(&b[root..root + 4], b"OHDR");
}

#[test]
fn sparse_huge_fixed_grid_gets_a_btree_of_stored_chunks() {
    use crate::chunk_index::ChunkIndexKind;
    let mut w = FileWriter::in_memory();
    let r = w.root();
    // 10 elements now, 1e11 at most, chunks of 1: a 1e11-cell grid
    let mut spec = DatasetSpec::new(Datatype::int(1, false), &[10]).chunked(&[1], vec![]);
    spec.shape = Dataspace::with_max(&[10], &[Some(100_000_000_000)]);
    let d = w.create_dataset(r, "d", spec, DatasetData::None).unwrap();
    w.write_raw_chunk(d, &[3], vec![7], 0).unwrap();
    w.write_raw_chunk(d, &[9], vec![9], 0).unwrap();
    let b = w.finish().unwrap();
    assert!(b.len() < 8192, "{} bytes", b.len());
    let f = crate::file::File::from_bytes(b).unwrap();
    let ds = f.root().unwrap().dataset("d").unwrap();
    let params = ds.chunk_params().unwrap();
    assert!(matches!(params.kind, ChunkIndexKind::BTreeV2 { .. }));
    assert_eq!(
        ds.read_all_raw().unwrap(),
        vec![0, 0, 0, 7, 0, 0, 0, 0, 0, 9]
    );
}

#[test]
fn link_messages_over_64k_make_the_group_dense() {
    use crate::messages::link::Link as ReadLink;
    let long: String = (0..70_000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let g = w.create_group(r, &long).unwrap();
    w.create_group(g, "short").unwrap();
    w.soft_link(r, &format!("{long}-soft"), "/grp1").unwrap();
    w.create_group(r, "grp1").unwrap();
    // a 200 KB attribute value: dense attribute storage, huge heap object
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
    w.set_attr(
        r,
        "big",
        AttrValue::raw(
            Datatype::int(1, false),
            Dataspace::simple(&[200_000]),
            big.clone(),
        ),
    )
    .unwrap();
    let f = crate::file::File::from_bytes(w.finish().unwrap()).unwrap();
    let root = f.root().unwrap();
    let links = root.links().unwrap();
    assert_eq!(links.len(), 3);
    let names: Vec<usize> = links.iter().map(|(n, _)| n.len()).collect();
    assert!(names.contains(&70_000) && names.contains(&70_005) && names.contains(&4));
    let soft = links.iter().find(|(n, _)| n.len() == 70_005).unwrap();
    assert!(matches!(&soft.1, ReadLink::Soft(t) if t == "/grp1"));
    let sub = root.group(&long).unwrap();
    assert_eq!(sub.links().unwrap().len(), 1);
    let attrs = root.attributes().unwrap();
    assert_eq!(attrs.len(), 1);
    assert_eq!(attrs[0].data, big);
}

#[test]
fn raw_chunks_are_written_at_once_and_replaced_by_later_ones() {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let spec = DatasetSpec::new(Datatype::int(1, false), &[6]).chunked(&[4], vec![]);
    let d = w.create_dataset(r, "d", spec, DatasetData::None).unwrap();
    w.write_raw_chunk(d, &[1], vec![5, 6, 0, 0], 0).unwrap();
    w.write_raw_chunk(d, &[0], vec![1; 4], 0).unwrap();
    w.write_raw_chunk(d, &[0], vec![1, 2, 3, 4], 0).unwrap();
    assert!(w.set_data(d, vec![0u8; 6]).is_err());
    let f = crate::file::File::from_bytes(w.finish().unwrap()).unwrap();
    let ds = f.root().unwrap().dataset("d").unwrap();
    assert_eq!(ds.read_all_raw().unwrap(), vec![1, 2, 3, 4, 5, 6]);
}

#[test]
fn a_failed_raw_chunk_write_fails_the_file() {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let spec = DatasetSpec::new(Datatype::int(1, false), &[400]).chunked(&[200], vec![]);
    let d = w.create_dataset(r, "d", spec, DatasetData::None).unwrap();
    w.inject_failure_after(300);
    w.write_raw_chunk(d, &[0], vec![1; 200], 0).unwrap();
    assert!(w.write_raw_chunk(d, &[1], vec![2; 200], 0).is_err());
    let e = w.finish().unwrap_err().to_string();
    assert!(e.contains("raw chunk could not be written"), "{e}");
}

#[test]
fn contiguous_parts_stream_back_to_back() {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let spec = DatasetSpec::new(Datatype::int(1, false), &[3, 2]);
    let d = w.create_dataset(r, "d", spec, DatasetData::None).unwrap();
    w.write_contiguous_part(d, &[1, 2]).unwrap();
    w.write_contiguous_part(d, &[3, 4, 5, 6]).unwrap();
    assert!(w.write_contiguous_part(d, &[7]).is_err(), "past the end");
    assert!(w.set_data(d, vec![0u8; 6]).is_err());
    let f = crate::file::File::from_bytes(w.finish().unwrap()).unwrap();
    let ds = f.root().unwrap().dataset("d").unwrap();
    assert_eq!(ds.read_all_raw().unwrap(), vec![1, 2, 3, 4, 5, 6]);

    // another dataset's part in between breaks the run; a short one fails
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let spec = DatasetSpec::new(Datatype::int(1, false), &[4]);
    let a = w
        .create_dataset(r, "a", spec.clone(), DatasetData::None)
        .unwrap();
    let b = w.create_dataset(r, "b", spec, DatasetData::None).unwrap();
    w.write_contiguous_part(a, &[1, 2]).unwrap();
    w.write_contiguous_part(b, &[1, 2, 3, 4]).unwrap();
    assert!(w.write_contiguous_part(a, &[3, 4]).is_err());
    let e = w.finish().unwrap_err().to_string();
    assert!(e.contains("2 of the dataset's 4 bytes"), "{e}");
}

#[test]
fn wrong_data_size_is_an_error() {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    w.create_dataset(
        r,
        "d",
        DatasetSpec::new(Datatype::int(4, true), &[3]),
        vec![0u8; 5],
    )
    .unwrap();
    assert!(w.finish().is_err());
}

#[test]
fn drop_without_commit_removes_temp() {
    let dir = std::env::temp_dir().join(format!("purehdf-w-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("drop.h5");
    std::fs::write(&target, b"old").unwrap();
    let w = FileWriter::create(&target).unwrap();
    let tmp = w.temp_path().unwrap().to_path_buf();
    assert!(tmp.exists());
    drop(w);
    assert!(!tmp.exists());
    assert_eq!(std::fs::read(&target).unwrap(), b"old");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failed_commit_keeps_old_file_and_removes_temp() {
    let dir = std::env::temp_dir().join(format!("purehdf-f-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("fail.h5");
    std::fs::write(&target, b"old").unwrap();
    let mut w = FileWriter::create(&target).unwrap();
    let r = w.root();
    w.create_dataset(
        r,
        "d",
        DatasetSpec::new(Datatype::int(1, false), &[10_000]),
        vec![1u8; 10_000],
    )
    .unwrap();
    w.inject_failure_after(5000);
    let tmp = w.temp_path().unwrap().to_path_buf();
    assert!(w.commit().is_err());
    assert!(!tmp.exists());
    assert_eq!(std::fs::read(&target).unwrap(), b"old");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn commit_replaces_target() {
    let dir = std::env::temp_dir().join(format!("purehdf-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("ok.h5");
    std::fs::write(&target, b"old").unwrap();
    let w = FileWriter::create(&target).unwrap();
    w.commit().unwrap();
    let b = std::fs::read(&target).unwrap();
    assert_eq!(&b[..4], b"\x89HDF");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest::proptest! {
    /// The bulk `to_bytes` equals each value's `to_le_bytes` in order.
    #[test]
    fn prop_to_bytes_is_le_bytes(
        a in proptest::collection::vec(proptest::num::i16::ANY, 0..300),
        b in proptest::collection::vec(proptest::num::u64::ANY, 0..100),
        c in proptest::collection::vec(proptest::num::f32::ANY, 0..100),
    ) {
        let le16: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
        proptest::prop_assert_eq!(to_bytes(&a), le16);
        let le64: Vec<u8> = b.iter().flat_map(|v| v.to_le_bytes()).collect();
        proptest::prop_assert_eq!(to_bytes(&b), le64);
        let lef: Vec<u8> = c.iter().flat_map(|v| v.to_le_bytes()).collect();
        proptest::prop_assert_eq!(to_bytes(&c), lef);
        proptest::prop_assert_eq!(to_bytes(&[true, false]), vec![1u8, 0]);
    }
}

/// Every stored chunk of dataset `name`: coordinates, filter mask, bytes.
fn stored_chunks(f: &crate::file::File, name: &str) -> Vec<(Vec<u64>, u32, Vec<u8>)> {
    let ds = f.root().unwrap().dataset(name).unwrap();
    let reader = ds.chunk_reader().unwrap();
    let mut out = Vec::new();
    for c in ds.chunks().unwrap() {
        let raw = reader.raw_chunk(&c.coords, true).unwrap().unwrap();
        out.push((c.coords, raw.filter_mask, raw.bytes.into_owned()));
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// `write_dataset` of a chunked dataset encodes its chunks straight from
    /// the typed slice at once, and `write_slab` does per slab; both store
    /// the same chunks (coordinates, masks, bytes) as the commit-time path
    /// over the dataset's bytes, and read back as the data.
    #[test]
    fn prop_chunks_from_typed_slices_equal_commit_time_chunks(
        dims in proptest::collection::vec(1u64..9, 1..4),
        chunk_seed in proptest::collection::vec(1u64..5, 3),
        pipe in 0usize..5,
        fill in proptest::option::of(proptest::num::i16::ANY),
        seed in proptest::num::u64::ANY,
        slab_rows in 1u64..4,
    ) {
        let chunk: Vec<u64> = dims.iter().zip(&chunk_seed).map(|(&d, &c)| c.min(d + 1)).collect();
        let filters = match pipe {
            0 => vec![],
            1 => vec![Filter::shuffle(), Filter::deflate(4).unwrap()],
            2 => vec![Filter::deflate(1).unwrap()],
            3 => vec![Filter::lz4(), Filter::fletcher32()],
            _ => vec![Filter::shuffle(), Filter::zstd(3).unwrap()],
        };
        let n: u64 = dims.iter().product();
        let mut x = seed | 1;
        let data: Vec<i16> = (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // runs so the codecs find matches
                if i % 5 < 3 { (i / 7) as i16 } else { x as i16 }
            })
            .collect();
        let mut spec = DatasetSpec::of::<i16>(&dims).chunked(&chunk, filters);
        if let Some(v) = fill {
            spec = spec.with_fill(v.to_le_bytes().to_vec());
        }
        let mut w = FileWriter::in_memory();
        let r = w.root();
        // the commit-time path: the dataset's bytes held until the file is written
        w.create_dataset(r, "held", spec.clone(), DatasetData::Raw(to_bytes(&data)))
            .unwrap();
        w.write_dataset(r, "typed", spec.clone(), &data).unwrap();
        let s = w.create_chunked(r, "slabs", spec).unwrap();
        let row: u64 = dims[1..].iter().product();
        let step = (slab_rows * chunk[0]) as usize;
        for (k, part) in data.chunks(step * row as usize).enumerate() {
            w.write_slab(s, (k * step) as u64, part).unwrap();
        }
        let f = crate::file::File::from_bytes(w.finish().unwrap()).unwrap();
        let held = stored_chunks(&f, "held");
        proptest::prop_assert_eq!(&stored_chunks(&f, "typed"), &held);
        proptest::prop_assert_eq!(&stored_chunks(&f, "slabs"), &held);
        for name in ["held", "typed", "slabs"] {
            let got = f.root().unwrap().dataset(name).unwrap().read::<i16>().unwrap();
            proptest::prop_assert_eq!(&got, &data);
        }
    }
}

#[test]
fn a_chunk_that_fails_to_encode_fails_write_dataset_and_the_file() {
    // A mandatory stage of a filter we have no encoder for.
    let unknown = FilterSpec {
        id: 40_000,
        flags: 0,
        cd_values: vec![],
        name: None,
    };
    let spec = DatasetSpec::new(Datatype::int(2, true), &[4]).chunked_stored(&[2], vec![unknown]);
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let e = w.write_dataset(r, "x", spec, &[1i16, 2, 3, 4]);
    assert!(e.is_err(), "{e:?}");
    let err = w.finish().unwrap_err().to_string();
    assert!(err.contains("\"x\""), "{err}");
}
