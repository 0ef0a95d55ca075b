//! Unit tests of the chunk manifest over files the writer makes.

use super::*;
use crate::file::File;
use crate::write::{DatasetSpec, FileWriter, Filter};

fn file_with(spec: DatasetSpec, data: &[u16]) -> File {
    let mut w = FileWriter::in_memory();
    w.write_dataset(w.root(), "x", spec, data).unwrap();
    File::from_bytes(w.finish().unwrap()).unwrap()
}

fn bytes_of(f: &File, loc: &ChunkLocation) -> Vec<u8> {
    match loc {
        ChunkLocation::Range { offset, length } => {
            f.source().read("t", *offset, *length).unwrap().to_vec()
        }
        ChunkLocation::Inline(b) => b.clone(),
        ChunkLocation::File { .. } => panic!("a file of its own has no other file"),
    }
}

#[test]
fn chunked_ranges_decode_to_the_data() {
    let data: Vec<u16> = (0..30).map(|i| i * 3).collect();
    let spec = DatasetSpec::of::<u16>(&[5, 6]).chunked(
        &[2, 4],
        vec![
            Filter::shuffle(),
            Filter::deflate(4).unwrap(),
            Filter::fletcher32(),
        ],
    );
    let f = file_with(spec, &data);
    let m = f
        .root()
        .unwrap()
        .dataset("x")
        .unwrap()
        .chunk_manifest()
        .unwrap();
    assert_eq!(m.chunk_shape, vec![2, 4]);
    assert_eq!(m.chunks.len(), 6);
    assert_eq!(
        m.element,
        ElementKind::Fixed(ZarrDtype::Scalar("<u2".into()))
    );
    let names: Vec<_> = m.codecs.iter().map(|c| c.name).collect();
    assert_eq!(names, ["shuffle", "deflate", "fletcher32"]);
    // chunk (2, 1): rows 4..6 (row 5 padding), columns 4..8 (6, 7 padding)
    let last = m.chunks.last().unwrap();
    assert_eq!(last.coords, vec![2, 1]);
    let specs: Vec<_> = m
        .codecs
        .iter()
        .map(|c| purehdf_filters::FilterSpec {
            id: c.filter_id,
            flags: 0,
            cd_values: c.cd_values.clone(),
            name: None,
        })
        .collect();
    let ctx = purehdf_filters::ChunkContext::new(2, m.codecs[0].chunk_bytes as usize);
    let dec =
        purehdf_filters::decode_pipeline(&specs, 0, &ctx, &bytes_of(&f, &last.location)).unwrap();
    assert_eq!(dec.len(), 16);
    assert_eq!(&dec[..4], &[(28 * 3) as u8, 0, (29 * 3) as u8, 0]);
}

#[test]
fn contiguous_and_compact_are_pseudo_chunks() {
    let data: Vec<u16> = (0..12).collect();
    let f = file_with(DatasetSpec::of::<u16>(&[3, 4]), &data);
    let m = f
        .root()
        .unwrap()
        .dataset("x")
        .unwrap()
        .chunk_manifest()
        .unwrap();
    assert_eq!(
        (m.layout, m.chunk_shape.clone(), m.chunks.len()),
        ("contiguous", vec![3, 4], 1)
    );
    let want: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(bytes_of(&f, &m.chunks[0].location), want);
    let f = file_with(DatasetSpec::of::<u16>(&[3, 4]).compact(), &data);
    let m = f
        .root()
        .unwrap()
        .dataset("x")
        .unwrap()
        .chunk_manifest()
        .unwrap();
    assert_eq!(m.layout, "compact");
    assert_eq!(m.chunks[0].location, ChunkLocation::Inline(want));
}
