//! Hand-built indexes of every kind (and their corruptions), then real files:
//! the filter vectors' manifest, h5py's chunk lists for the corpus, and a
//! proptest of hyperslab reads against full reads.

use super::*;
use crate::btree_v1::tests::chunk_node;
use crate::btree_v1::ChunkKeyV1;
use crate::btree_v2::tests::seal;
use crate::error::Error;
use crate::selection::Selection;
use crate::source::MemSource;

mod bench;
mod corpus;
mod end_to_end;
mod synthetic;

const S: Sizes = Sizes {
    offset: 8,
    length: 8,
};

pub(super) fn place(file: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    if file.len() < at + bytes.len() {
        file.resize(at + bytes.len(), 0);
    }
    file[at..at + bytes.len()].copy_from_slice(bytes);
}

pub(super) fn params(
    kind: ChunkIndexKind,
    address: u64,
    dims: &[u64],
    chunk: &[u64],
) -> ChunkIndexParams {
    ChunkIndexParams {
        kind,
        address: Some(address),
        chunk_dims: chunk.to_vec(),
        dataset_dims: dims.to_vec(),
        max_dims: dims.iter().map(|&d| Some(d)).collect(),
        element_size: 1,
        filtered: false,
        layout_version: 4,
    }
}

fn fixed_array(
    client: u8,
    elem_size: u8,
    page_bits: u8,
    elements: &[Vec<u8>],
    pages: Option<u8>,
) -> Vec<u8> {
    let n = elements.len() as u64;
    let mut f = Vec::new();
    let mut h = b"FAHD".to_vec();
    h.extend_from_slice(&[0, client, elem_size, page_bits]);
    h.extend_from_slice(&n.to_le_bytes());
    h.extend_from_slice(&100u64.to_le_bytes());
    place(&mut f, 0, &seal(h));
    let mut d = b"FADB".to_vec();
    d.extend_from_slice(&[0, client]);
    d.extend_from_slice(&0u64.to_le_bytes());
    match pages {
        None => {
            for e in elements {
                d.extend_from_slice(e);
            }
            place(&mut f, 100, &seal(d));
        }
        Some(bitmap) => {
            d.push(bitmap);
            let d = seal(d);
            let first = 100 + d.len();
            place(&mut f, 100, &d);
            let pn = 1usize << page_bits;
            for (p, page) in elements.chunks(pn).enumerate() {
                let mut v = Vec::new();
                for e in page {
                    v.extend_from_slice(e);
                }
                let at = first + p * (pn * usize::from(elem_size) + 4);
                place(&mut f, at, &seal(v));
            }
        }
    }
    f
}

fn addr(a: u64) -> Vec<u8> {
    a.to_le_bytes().to_vec()
}

#[test]
fn fixed_array_plain_paged_and_filtered() {
    let els: Vec<Vec<u8>> = vec![
        addr(1000),
        addr(1010),
        addr(u64::MAX),
        addr(1030),
        addr(1040),
    ];
    let f = fixed_array(0, 8, 8, &els, None);
    let src = MemSource::new(f.clone());
    let p = params(ChunkIndexKind::FixedArray { page_bits: 8 }, 0, &[10], &[2]);
    let got = chunks(&src, S, &p).unwrap();
    let offs: Vec<(u64, u64, u64)> = got
        .iter()
        .map(|r| (r.offset[0], r.address, r.size))
        .collect();
    assert_eq!(
        offs,
        vec![(0, 1000, 2), (2, 1010, 2), (6, 1030, 2), (8, 1040, 2)]
    );
    // Corrupt the data block: checksum error; claim more elements than chunks: limit.
    let mut bad = f.clone();
    bad[120] ^= 1;
    assert!(matches!(
        chunks(&MemSource::new(bad), S, &p),
        Err(Error::Checksum { .. })
    ));
    let small = params(ChunkIndexKind::FixedArray { page_bits: 8 }, 0, &[8], &[2]);
    assert!(matches!(chunks(&src, S, &small), Err(Error::Limit { .. })));
    // Filtered elements: client id must say so.
    let mut fp = p.clone();
    fp.filtered = true;
    assert!(chunks(&src, S, &fp).is_err());

    // Paged: 2 elements a page, pages 0 and 2 initialised.
    let f = fixed_array(0, 8, 1, &els, Some(0b1010_0000));
    let src = MemSource::new(f);
    let got = chunks(
        &src,
        S,
        &params(ChunkIndexKind::FixedArray { page_bits: 1 }, 0, &[10], &[2]),
    )
    .unwrap();
    let addrs: Vec<u64> = got.iter().map(|r| r.address).collect();
    assert_eq!(addrs, vec![1000, 1010, 1040]);

    // Filtered: address, 3-byte size, mask.
    let el = |a: u64, size: u32, mask: u32| {
        let mut v = addr(a);
        v.extend_from_slice(&size.to_le_bytes()[..3]);
        v.extend_from_slice(&mask.to_le_bytes());
        v
    };
    let f = fixed_array(1, 15, 8, &[el(500, 70000, 0), el(600, 3, 1)], None);
    let got = chunks(&MemSource::new(f), S, &fp_dims(&[4], &[2])).unwrap();
    assert_eq!(
        got.iter()
            .map(|r| (r.address, r.size, r.filter_mask))
            .collect::<Vec<_>>(),
        vec![(500, 70000, 0), (600, 3, 1)]
    );
}

fn fp_dims(dims: &[u64], chunk: &[u64]) -> ChunkIndexParams {
    let mut p = params(ChunkIndexKind::FixedArray { page_bits: 8 }, 0, dims, chunk);
    p.filtered = true;
    p
}

#[test]
fn v1_and_v2_btree_indexes() {
    // v1: a 2-D dataset 4x4 in 2x2 chunks, two chunks written.
    let k = |r: u64, c: u64, size: u32| ChunkKeyV1 {
        size,
        filter_mask: 0,
        offsets: vec![r, c, 0],
    };
    let node = chunk_node(0, &[(k(0, 2, 4), 0x500), (k(2, 0, 4), 0x600)], 3);
    let src = MemSource::new(node);
    let p = params(ChunkIndexKind::BTreeV1, 0, &[4, 4], &[2, 2]);
    let got = chunks(&src, S, &p).unwrap();
    assert_eq!(
        got.iter()
            .map(|r| (r.offset.clone(), r.address))
            .collect::<Vec<_>>(),
        vec![(vec![0, 2], 0x500), (vec![2, 0], 0x600)]
    );
    // Off-grid key is malformed.
    let node = chunk_node(0, &[(k(1, 0, 4), 0x500)], 3);
    assert!(chunks(&MemSource::new(node), S, &p).is_err());

    // v2: type-10 records with scaled offsets.
    let mut h = b"BTHD".to_vec();
    h.extend_from_slice(&[0, 10]);
    h.extend_from_slice(&512u32.to_le_bytes());
    h.extend_from_slice(&24u16.to_le_bytes());
    h.extend_from_slice(&0u16.to_le_bytes());
    h.extend_from_slice(&[100, 40]);
    h.extend_from_slice(&100u64.to_le_bytes());
    h.extend_from_slice(&3u16.to_le_bytes());
    h.extend_from_slice(&3u64.to_le_bytes());
    let mut leaf = b"BTLF".to_vec();
    leaf.extend_from_slice(&[0, 10]);
    for (a, r, c) in [(0x700u64, 0u64, 0u64), (u64::MAX, 0, 1), (0x710, 1, 1)] {
        leaf.extend_from_slice(&a.to_le_bytes());
        leaf.extend_from_slice(&r.to_le_bytes());
        leaf.extend_from_slice(&c.to_le_bytes());
    }
    let mut f = Vec::new();
    place(&mut f, 0, &seal(h));
    place(&mut f, 100, &seal(leaf));
    let p = params(
        ChunkIndexKind::BTreeV2 {
            node_size: 512,
            split_percent: 100,
            merge_percent: 40,
        },
        0,
        &[4, 4],
        &[2, 2],
    );
    let got = chunks(&MemSource::new(f.clone()), S, &p).unwrap();
    assert_eq!(
        got.iter()
            .map(|r| (r.offset.clone(), r.address, r.size))
            .collect::<Vec<_>>(),
        vec![(vec![0, 0], 0x700, 4), (vec![2, 2], 0x710, 4)]
    );
    let mut fp = p.clone();
    fp.filtered = true;
    assert!(chunks(&MemSource::new(f), S, &fp).is_err());
}

#[test]
fn single_implicit_and_empty() {
    let mut p = params(
        ChunkIndexKind::SingleChunk {
            filtered_size: 33,
            filter_mask: 2,
        },
        0x40,
        &[3, 5],
        &[3, 5],
    );
    let r = chunks(&MemSource::new(vec![]), S, &p).unwrap();
    assert_eq!((r[0].address, r[0].size, r[0].filter_mask), (0x40, 15, 0));
    p.filtered = true;
    let r = chunks(&MemSource::new(vec![]), S, &p).unwrap();
    assert_eq!((r[0].size, r[0].filter_mask), (33, 2));
    // Implicit: max dims 6x4 in 2x2 chunks (3x2 grid), current 3x4 → chunks (0,0),(0,1),(1,0),(1,1).
    let mut p = params(ChunkIndexKind::Implicit, 1000, &[3, 4], &[2, 2]);
    p.max_dims = vec![Some(6), Some(4)];
    let r = chunks(&MemSource::new(vec![]), S, &p).unwrap();
    assert_eq!(
        r.iter().map(|r| r.address).collect::<Vec<_>>(),
        vec![1000, 1004, 1008, 1012]
    );
    p.address = None;
    assert!(chunks(&MemSource::new(vec![]), S, &p).unwrap().is_empty());
    p.chunk_dims = vec![2];
    assert!(chunks(&MemSource::new(vec![]), S, &p).is_err());
}

#[test]
fn read_with_missing_chunks_and_fill() {
    // 1-D, 10 elements of 2 bytes, chunks of 4: chunk 1 (elements 4..8) missing.
    let mut f = Vec::new();
    let els = vec![addr(1000), addr(u64::MAX), addr(1008)];
    place(&mut f, 0, &fixed_array(0, 8, 8, &els, None));
    let vals: Vec<u8> = (0u16..4)
        .chain(8..12)
        .flat_map(|v| v.to_le_bytes())
        .collect();
    place(&mut f, 1000, &vals);
    let src = MemSource::new(f);
    let mut p = params(ChunkIndexKind::FixedArray { page_bits: 8 }, 0, &[10], &[4]);
    p.element_size = 2;
    let mut out = vec![0u8; 20];
    read_chunked(
        &src,
        S,
        &p,
        &[],
        Some(&[0xff, 0x7f]),
        &Selection::All,
        &mut out,
    )
    .unwrap();
    let got: Vec<u16> = out
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(got, vec![0, 1, 2, 3, 0x7fff, 0x7fff, 0x7fff, 0x7fff, 8, 9]);
    // The same read into memory that starts uninitialised writes every byte.
    let map = read::ChunkMap::build(&src, S, &p).unwrap();
    let mut raw = vec![std::mem::MaybeUninit::<u8>::uninit(); 20];
    read::read_chunked_uninit(
        &src,
        &map,
        &[],
        Some(&[0xff, 0x7f]),
        &Selection::All,
        &mut raw,
        None,
    )
    .unwrap();
    // SAFETY: `read_chunked_uninit` returned Ok, so all 20 bytes were written.
    let raw: Vec<u8> = raw.iter().map(|b| unsafe { b.assume_init() }).collect();
    assert_eq!(raw, out);
    let mut small = vec![std::mem::MaybeUninit::<u8>::uninit(); 19];
    assert!(
        read::read_chunked_uninit(&src, &map, &[], None, &Selection::All, &mut small, None)
            .is_err()
    );
    let mut out = vec![0u8; 6];
    let sel = Selection::Hyperslab {
        start: vec![7],
        count: vec![3],
    };
    read_chunked(&src, S, &p, &[], None, &sel, &mut out).unwrap();
    assert_eq!(out, vec![0, 0, 8, 0, 9, 0]);
    // Wrong buffer size, selection outside, wrong fill size.
    assert!(read_chunked(&src, S, &p, &[], None, &sel, &mut [0u8; 5]).is_err());
    let far = Selection::Hyperslab {
        start: vec![9],
        count: vec![2],
    };
    assert!(read_chunked(&src, S, &p, &[], None, &far, &mut [0u8; 4]).is_err());
    assert!(read_chunked(&src, S, &p, &[], Some(&[1]), &sel, &mut out).is_err());
    // A chunk whose stored bytes are short is an error naming the chunk.
    let mut short = p.clone();
    short.element_size = 4;
    let e = read_chunked(&src, S, &short, &[], None, &Selection::All, &mut [0u8; 40]).unwrap_err();
    assert!(matches!(e, Error::Chunk { .. }), "{e:?}");
}

#[test]
fn oversized_grids_are_refused_quickly() {
    let mut p = params(ChunkIndexKind::Implicit, 0, &[1 << 40, 1 << 40], &[1, 1]);
    p.max_dims = vec![None, None];
    assert!(matches!(
        chunks(&MemSource::new(vec![]), S, &p),
        Err(Error::Limit { .. })
    ));
    let mut out = [0u8; 1];
    let sel = Selection::Hyperslab {
        start: vec![5, 5],
        count: vec![1, 1],
    };
    // The implicit map computes addresses on demand: reading one element is fine
    // (the address lies past the end of the empty source: an error, not a hang).
    assert!(read_chunked(&MemSource::new(vec![]), S, &p, &[], None, &sel, &mut out).is_err());
}
