//! Hand-built heaps (every ID kind, corruption, cycles) and real files from the corpus.

use super::*;
use crate::btree_v2::tests::seal;
use crate::checksum::metadata_checksum;
use crate::source::MemSource;

const S: Sizes = Sizes {
    offset: 8,
    length: 8,
};

struct Geo {
    huge_bt: u64,
    /// Filtered root direct block: stored size, mask, encoded pipeline.
    filter: Option<(u64, u32, Vec<u8>)>,
    id_len: u16,
    flags: u8,
    width: u16,
    start: u64,
    max_direct: u64,
    heap_bits: u16,
    root: u64,
    root_rows: u16,
}

fn header(g: &Geo) -> Vec<u8> {
    let mut v = b"FRHP".to_vec();
    v.push(0);
    v.extend_from_slice(&g.id_len.to_le_bytes());
    let flen = g.filter.as_ref().map_or(0, |f| f.2.len() as u16);
    v.extend_from_slice(&flen.to_le_bytes());
    v.push(g.flags);
    v.extend_from_slice(&4096u32.to_le_bytes());
    v.extend_from_slice(&0u64.to_le_bytes()); // next huge id
    v.extend_from_slice(&g.huge_bt.to_le_bytes()); // huge bt
    v.extend_from_slice(&0u64.to_le_bytes()); // free space
    v.extend_from_slice(&u64::MAX.to_le_bytes()); // fs manager
    for _ in 0..8 {
        v.extend_from_slice(&0u64.to_le_bytes());
    }
    v.extend_from_slice(&g.width.to_le_bytes());
    v.extend_from_slice(&g.start.to_le_bytes());
    v.extend_from_slice(&g.max_direct.to_le_bytes());
    v.extend_from_slice(&g.heap_bits.to_le_bytes());
    v.extend_from_slice(&0u16.to_le_bytes());
    v.extend_from_slice(&g.root.to_le_bytes());
    v.extend_from_slice(&g.root_rows.to_le_bytes());
    if let Some((size, mask, pipeline)) = &g.filter {
        v.extend_from_slice(&size.to_le_bytes());
        v.extend_from_slice(&mask.to_le_bytes());
        v.extend_from_slice(pipeline);
    }
    seal(v)
}

/// A direct block of `size` bytes with 4-byte block offsets and a checksum.
fn direct(heap: u64, block_offset: u32, size: usize, objects: &[(usize, &[u8])]) -> Vec<u8> {
    let mut v = b"FHDB".to_vec();
    v.push(0);
    v.extend_from_slice(&heap.to_le_bytes());
    v.extend_from_slice(&block_offset.to_le_bytes());
    v.extend_from_slice(&[0; 4]);
    v.resize(size, 0);
    for &(at, data) in objects {
        v[at..at + data.len()].copy_from_slice(data);
    }
    let c = metadata_checksum(&v);
    v[17..21].copy_from_slice(&c.to_le_bytes());
    v
}

fn place(file: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    if file.len() < at + bytes.len() {
        file.resize(at + bytes.len(), 0);
    }
    file[at..at + bytes.len()].copy_from_slice(bytes);
}

fn managed_id(offset: u32, len: u16) -> Vec<u8> {
    let mut id = vec![0u8];
    id.extend_from_slice(&offset.to_le_bytes());
    id.extend_from_slice(&len.to_le_bytes());
    id
}

fn geo(root: u64, root_rows: u16) -> Geo {
    Geo {
        huge_bt: u64::MAX,
        filter: None,
        id_len: 7,
        flags: 2,
        width: 4,
        start: 512,
        max_direct: 65536,
        heap_bits: 32,
        root,
        root_rows,
    }
}

#[test]
fn root_direct_block_and_tiny_ids() {
    let mut f = Vec::new();
    place(&mut f, 0, &header(&geo(1000, 0)));
    place(
        &mut f,
        1000,
        &direct(0, 0, 512, &[(21, b"hello"), (100, b"world!")]),
    );
    let src = MemSource::new(f.clone());
    let h = FractalHeap::open(&src, S, 0).unwrap();
    assert_eq!(h.id_len, 7);
    assert_eq!(h.object(&src, S, &managed_id(21, 5)).unwrap(), b"hello");
    // Second read goes through the verified-block fast path.
    assert_eq!(h.object(&src, S, &managed_id(100, 6)).unwrap(), b"world!");
    assert_eq!(h.object(&src, S, &managed_id(21, 5)).unwrap(), b"hello");
    // Inside the header, past the block, zero length, past the root block.
    assert!(h.object(&src, S, &managed_id(3, 5)).is_err());
    assert!(h.object(&src, S, &managed_id(510, 5)).is_err());
    assert!(h.object(&src, S, &managed_id(100, 0)).is_err());
    assert!(h.object(&src, S, &managed_id(600, 2)).is_err());
    // Tiny, normal form.
    let tiny = [0x22u8, b'a', b'b', b'c', 0, 0, 0];
    assert_eq!(h.object(&src, S, &tiny).unwrap(), b"abc");
    let too_long = [0x2fu8, 0, 0];
    assert!(h.object(&src, S, &too_long).is_err());
    // Reserved type and version bits.
    assert!(h.object(&src, S, &[0x30, 0, 0, 0, 0, 0, 0]).is_err());
    assert!(h.object(&src, S, &[0x40, 0, 0, 0, 0, 0, 0]).is_err());

    // Corrupt the block: checksum error (fresh heap, nothing cached).
    let mut bad = f.clone();
    bad[1000 + 200] ^= 1;
    let src = MemSource::new(bad);
    let h = FractalHeap::open(&src, S, 0).unwrap();
    assert!(matches!(
        h.object(&src, S, &managed_id(21, 5)),
        Err(Error::Checksum { offset: 1000, .. })
    ));
    // Corrupt the header: checksum error.
    let mut bad = f;
    bad[20] ^= 1;
    assert!(matches!(
        FractalHeap::open(&MemSource::new(bad), S, 0),
        Err(Error::Checksum { .. })
    ));
}

#[test]
fn extended_tiny_and_huge_direct() {
    let mut g = geo(1000, 0);
    g.id_len = 20;
    let mut f = Vec::new();
    place(&mut f, 0, &header(&g));
    place(&mut f, 1000, b"HUGE-OBJECT-BYTES");
    let src = MemSource::new(f);
    let h = FractalHeap::open(&src, S, 0).unwrap();
    let mut tiny = vec![0x20u8, 2, b'x', b'y', b'z'];
    tiny.resize(20, 0);
    assert_eq!(h.object(&src, S, &tiny).unwrap(), b"xyz");
    let mut huge = vec![0x10u8];
    huge.extend_from_slice(&1000u64.to_le_bytes());
    huge.extend_from_slice(&17u64.to_le_bytes());
    huge.extend_from_slice(&[0, 0, 0]);
    assert_eq!(h.object(&src, S, &huge).unwrap(), b"HUGE-OBJECT-BYTES");
    huge[9] = 0xff;
    assert!(h.object(&src, S, &huge).is_err());
    // A huge ID that needs the (absent) B-tree.
    let mut g = geo(1000, 0);
    g.id_len = 8;
    let src = MemSource::new(header(&g));
    let h = FractalHeap::open(&src, S, 0).unwrap();
    assert!(matches!(
        h.parse_id(S, &[0x10, 5, 0, 0, 0, 0, 0, 0]).unwrap(),
        HeapIdKind::HugeIndirect { key: 5 }
    ));
    assert!(h.object(&src, S, &[0x10, 5, 0, 0, 0, 0, 0, 0]).is_err());
}

fn indirect(heap: u64, block_offset: u32, direct: &[u64], indirect: &[u64]) -> Vec<u8> {
    let mut v = b"FHIB".to_vec();
    v.push(0);
    v.extend_from_slice(&heap.to_le_bytes());
    v.extend_from_slice(&block_offset.to_le_bytes());
    for a in direct.iter().chain(indirect) {
        v.extend_from_slice(&a.to_le_bytes());
    }
    seal(v)
}

#[test]
fn root_indirect_block() {
    let u = u64::MAX;
    let mut f = Vec::new();
    place(&mut f, 0, &header(&geo(500, 2)));
    // Row 1 column 2: heap offset 2048 + 2 * 512 = 3072.
    place(
        &mut f,
        500,
        &indirect(0, 0, &[u, u, u, u, u, u, 2000, u], &[]),
    );
    place(&mut f, 2000, &direct(0, 3072, 512, &[(40, b"deep")]));
    let src = MemSource::new(f.clone());
    let h = FractalHeap::open(&src, S, 0).unwrap();
    assert_eq!(
        h.object(&src, S, &managed_id(3072 + 40, 4)).unwrap(),
        b"deep"
    );
    let r = h.locate(&src, S, 3072 + 40).unwrap();
    assert_eq!((r.address, r.size, r.block_offset), (2000, 512, 3072));
    // Unallocated block, and an offset beyond the root's rows.
    assert!(h.object(&src, S, &managed_id(40, 4)).is_err());
    assert!(h.object(&src, S, &managed_id(4096 + 40, 4)).is_err());
    // A direct block whose stored block offset disagrees.
    let mut bad = f;
    place(&mut bad, 2000, &direct(0, 2048, 512, &[(40, b"deep")]));
    let src = MemSource::new(bad);
    let h = FractalHeap::open(&src, S, 0).unwrap();
    assert!(matches!(
        h.object(&src, S, &managed_id(3072 + 40, 4)),
        Err(Error::Malformed { .. })
    ));
}

#[test]
fn indirect_cycle_is_detected() {
    // width 1, start = max direct = 512: rows 0-1 direct, row 2 indirect (2 rows).
    let g = Geo {
        huge_bt: u64::MAX,
        filter: None,
        id_len: 7,
        flags: 2,
        width: 1,
        start: 512,
        max_direct: 512,
        heap_bits: 32,
        root: 500,
        root_rows: 3,
    };
    let u = u64::MAX;
    let mut f = Vec::new();
    place(&mut f, 0, &header(&g));
    place(&mut f, 500, &indirect(0, 0, &[u, u], &[500]));
    let src = MemSource::new(f.clone());
    let h = FractalHeap::open(&src, S, 0).unwrap();
    let e = h.object(&src, S, &managed_id(1024 + 30, 4)).unwrap_err();
    assert!(matches!(e, Error::Cycle { .. }), "{e:?}");
    // The same shape with a real child that has the right offset works.
    place(&mut f, 500, &indirect(0, 0, &[u, u], &[700]));
    place(&mut f, 700, &indirect(0, 1024, &[3000, u], &[]));
    place(&mut f, 3000, &direct(0, 1024, 512, &[(30, b"kid!")]));
    let src = MemSource::new(f);
    let h = FractalHeap::open(&src, S, 0).unwrap();
    assert_eq!(
        h.object(&src, S, &managed_id(1024 + 30, 4)).unwrap(),
        b"kid!"
    );
}

/// A v2 B-tree of huge-object records (type 1: address, length, id).
fn huge_tree(records: &[(u64, u64, u64)]) -> (Vec<u8>, Vec<u8>) {
    let mut h = b"BTHD".to_vec();
    h.extend_from_slice(&[0, 1]);
    h.extend_from_slice(&512u32.to_le_bytes());
    h.extend_from_slice(&24u16.to_le_bytes());
    h.extend_from_slice(&0u16.to_le_bytes());
    h.extend_from_slice(&[100, 40]);
    h.extend_from_slice(&3000u64.to_le_bytes());
    h.extend_from_slice(&(records.len() as u16).to_le_bytes());
    h.extend_from_slice(&(records.len() as u64).to_le_bytes());
    let mut leaf = b"BTLF".to_vec();
    leaf.extend_from_slice(&[0, 1]);
    for (a, l, id) in records {
        for v in [a, l, id] {
            leaf.extend_from_slice(&v.to_le_bytes());
        }
    }
    (seal(h), seal(leaf))
}

#[test]
fn huge_objects_through_the_btree() {
    let mut g = geo(1000, 0);
    g.id_len = 8;
    g.huge_bt = 2000;
    let mut f = Vec::new();
    place(&mut f, 0, &header(&g));
    let (h, leaf) = huge_tree(&[(4000, 5, 1), (4100, 9, 2)]);
    place(&mut f, 2000, &h);
    place(&mut f, 3000, &leaf);
    place(&mut f, 4000, b"first");
    place(&mut f, 4100, b"second!!!");
    let src = MemSource::new(f);
    let heap = FractalHeap::open(&src, S, 0).unwrap();
    let id = |k: u8| [0x10, k, 0, 0, 0, 0, 0, 0];
    assert_eq!(heap.object(&src, S, &id(2)).unwrap(), b"second!!!");
    assert_eq!(heap.object(&src, S, &id(1)).unwrap(), b"first");
    assert!(matches!(
        heap.object(&src, S, &id(3)),
        Err(Error::NotFound(_))
    ));
}

#[test]
fn filtered_root_direct_block() {
    use purehdf_filters::{encode_pipeline, ChunkContext, FilterSpec};
    let block = direct(0, 0, 512, &[(21, b"squeezed")]);
    let spec = FilterSpec {
        id: 1,
        flags: 0,
        cd_values: vec![6],
        name: None,
    };
    let stored = encode_pipeline(&[spec], &ChunkContext::new(1, 512), &block).unwrap();
    // Pipeline message v2: deflate, one client value.
    let pipeline = vec![2u8, 1, 1, 0, 0, 0, 1, 0, 6, 0, 0, 0];
    let mut g = geo(1000, 0);
    g.filter = Some((stored.len() as u64, 0, pipeline));
    let mut f = Vec::new();
    place(&mut f, 0, &header(&g));
    place(&mut f, 1000, &stored);
    let src = MemSource::new(f.clone());
    let heap = FractalHeap::open(&src, S, 0).unwrap();
    assert_eq!(heap.header.pipeline.len(), 1);
    assert_eq!(
        heap.object(&src, S, &managed_id(21, 8)).unwrap(),
        b"squeezed"
    );
    // Cached second read.
    assert_eq!(heap.object(&src, S, &managed_id(23, 3)).unwrap(), b"uee");
    // Garbage instead of a deflate stream: a filter error, not a panic.
    let mut bad = f;
    for b in &mut bad[1000..1010] {
        *b = 0xaa;
    }
    let src = MemSource::new(bad);
    let heap = FractalHeap::open(&src, S, 0).unwrap();
    assert!(heap.object(&src, S, &managed_id(21, 8)).is_err());
}

// ---- real files -------------------------------------------------------------

pub(crate) fn corpus_dir() -> Option<std::path::PathBuf> {
    let here = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    Some(here.join("../shared/corpus")).filter(|p| p.join("MANIFEST.tsv").exists())
}

pub(crate) fn find_all(data: &[u8], sig: &[u8; 4]) -> Vec<u64> {
    data.windows(4)
        .enumerate()
        .filter(|(_, w)| w == sig)
        .map(|(i, _)| i as u64)
        .collect()
}

/// Name in an encoded link message (IV.A.2.g).
fn link_name(msg: &[u8]) -> Option<&[u8]> {
    let flags = *msg.get(1)?;
    let mut p = 2;
    if flags & 0x08 != 0 {
        p += 1;
    }
    if flags & 0x04 != 0 {
        p += 8;
    }
    if flags & 0x10 != 0 {
        p += 1;
    }
    let w = 1usize << (flags & 3);
    let len = msg.get(p..p + w).map(crate::cursor::le_uint)? as usize;
    p += w;
    msg.get(p..p + len)
}

/// Name in an encoded attribute message v1–v3 (IV.A.2.m), without its NUL.
fn attribute_name(msg: &[u8]) -> Option<&[u8]> {
    let version = *msg.first()?;
    let len = u16::from_le_bytes([*msg.get(2)?, *msg.get(3)?]) as usize;
    let p = match version {
        1 | 2 => 8,
        3 => 9,
        _ => return None,
    };
    let name = msg.get(p..p + len)?;
    Some(name.strip_suffix(&[0]).unwrap_or(name))
}

#[test]
fn corpus_dense_links_and_attributes() {
    let Some(dir) = corpus_dir() else {
        println!("skipping: no corpus");
        return;
    };
    let files = [
        "jhdf/jhdf/src/test/resources/hdf5/test_large_group_latest.hdf5",
        "jhdf/jhdf/src/test/resources/hdf5/test_large_attribute.hdf5",
        "jhdf/jhdf/src/test/resources/hdf5/test_attribute_latest.hdf5",
        "netcdf-rust/testdata/hdf5/dense_groups.h5",
        "hdf5-pure-stephenberry/tests/fixtures/dense_attrs_root.h5",
        "scigolib-hdf5/testdata/dense_links.h5",
        "netcdf-c/nc_test4/ref_tst_interops4.nc",
    ];
    let mut total = 0usize;
    for rel in files {
        let Ok(bytes) = std::fs::read(dir.join(rel)) else {
            println!("skipping missing {rel}");
            continue;
        };
        let heaps: Vec<FractalHeap> = {
            let src = MemSource::new(bytes.clone());
            find_all(&bytes, b"FRHP")
                .into_iter()
                .filter_map(|a| FractalHeap::open(&src, S, a).ok())
                .collect()
        };
        assert!(!heaps.is_empty(), "{rel}: no heap");
        let src = MemSource::new(bytes.clone());
        for bt in find_all(&bytes, b"BTHD") {
            let Ok(tree) = BTreeV2::open(&src, S, bt) else {
                continue;
            };
            if !matches!(tree.record_type, 5 | 8) {
                continue;
            }
            let recs = tree.records(&src, S).unwrap();
            assert_eq!(recs.len() as u64, tree.total_records, "{rel}: record count");
            for r in &recs {
                let (hash, id) = if tree.record_type == 5 {
                    let l = btree_v2::records::link_name(r).unwrap();
                    (l.hash, l.heap_id.to_vec())
                } else {
                    let a = btree_v2::records::attribute_name(r).unwrap();
                    (a.hash, a.heap_id.to_vec())
                };
                let ok = heaps.iter().any(|h| {
                    h.object(&src, S, &id).ok().is_some_and(|m| {
                        let name = if tree.record_type == 5 {
                            link_name(&m)
                        } else {
                            attribute_name(&m)
                        };
                        name.is_some_and(|n| crate::checksum::lookup3(n, 0) == hash)
                    })
                });
                assert!(ok, "{rel}: record {r:?} did not resolve to a matching name");
                total += 1;
            }
        }
    }
    println!("resolved {total} dense-storage records");
    assert!(total > 100, "only {total} records resolved");
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Well-checksummed headers with arbitrary geometry, and arbitrary IDs:
        /// answers or errors, never a panic.
        #[test]
        fn arbitrary_geometry_and_ids(
            id_len in 1u16..40,
            width in any::<u16>(),
            start_bits in 0u32..40,
            direct_bits in 0u32..40,
            heap_bits in any::<u16>(),
            root_rows in any::<u16>(),
            id in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            let g = Geo {
                huge_bt: 600,
                filter: None,
                id_len,
                flags: 2,
                width,
                start: 1u64 << start_bits,
                max_direct: 1u64 << direct_bits,
                heap_bits,
                root: 500,
                root_rows,
            };
            let u = u64::MAX;
            let mut f = Vec::new();
            place(&mut f, 0, &header(&g));
            place(&mut f, 500, &indirect(0, 0, &[u, u, 2000, u], &[500]));
            place(&mut f, 2000, &direct(0, 1024, 512, &[(40, b"data")]));
            let src = MemSource::new(f);
            if let Ok(h) = FractalHeap::open(&src, S, 0) {
                let _ = h.object(&src, S, &id);
                let _ = h.object(&src, S, &managed_id(1024 + 40, 4));
            }
        }
    }
}
