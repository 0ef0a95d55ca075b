use super::*;
use crate::source::MemSource;

const SIZES: Sizes = Sizes {
    offset: 8,
    length: 8,
};

/// One entry to serialise: address, type, flags, parent addresses, bytes.
struct E<'a> {
    addr: u64,
    type_id: u8,
    flags: u8,
    children: u16,
    parents: &'a [u64],
    data: &'a [u8],
}

fn entry(addr: u64, data: &[u8]) -> E<'_> {
    E {
        addr,
        type_id: 5,
        flags: 0x01,
        children: 0,
        parents: &[],
        data,
    }
}

/// Serialise an image block the way a writer lays it out.
fn build(entries: &[E<'_>]) -> Vec<u8> {
    let mut body = Vec::new();
    for e in entries {
        body.push(e.type_id);
        body.push(e.flags);
        body.push(1); // ring
        body.push(0); // age
        body.extend_from_slice(&e.children.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&(e.parents.len() as u16).to_le_bytes());
        body.extend_from_slice(&(-1i32).to_le_bytes());
        body.extend_from_slice(&e.addr.to_le_bytes());
        body.extend_from_slice(&(e.data.len() as u64).to_le_bytes());
        for p in e.parents {
            body.extend_from_slice(&p.to_le_bytes());
        }
        body.extend_from_slice(e.data);
    }
    let total = 4 + 1 + 1 + 8 + 4 + body.len() + 4;
    let mut b = b"MDCI".to_vec();
    b.push(0);
    b.push(0);
    b.extend_from_slice(&(total as u64).to_le_bytes());
    b.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    b.extend(body);
    seal(b)
}

/// Append the checksum.
fn seal(mut b: Vec<u8>) -> Vec<u8> {
    let ck = metadata_checksum(&b);
    b.extend_from_slice(&ck.to_le_bytes());
    b
}

/// Replace the checksum after editing the body.
fn reseal(mut b: Vec<u8>) -> Vec<u8> {
    b.truncate(b.len() - 4);
    seal(b)
}

fn two_entries() -> Vec<u8> {
    build(&[
        entry(0x40, b"OHDRheader"),
        E {
            addr: 0x100,
            type_id: 22,
            flags: 0x01 | FD_CHILD,
            children: 0,
            parents: &[0x40],
            data: b"FAHD",
        },
    ])
}

#[test]
fn decodes_hand_built_image() {
    let img = CacheImage::decode(two_entries(), 0x500, SIZES).unwrap();
    let e: Vec<_> = img.entries().collect();
    assert_eq!(e.len(), 2);
    assert_eq!((e[0].address, e[0].type_id, e[0].len()), (0x40, 5, 10));
    assert_eq!(img.entry_bytes(e[0]), b"OHDRheader");
    assert_eq!((e[1].address, e[1].type_id, e[1].ring), (0x100, 22, 1));
    assert_eq!(img.entry_bytes(e[1]), b"FAHD");
    assert_eq!(img.end, 0x104);
    assert!(img.overlaps(0x49, 0x4a));
    assert!(!img.overlaps(0x4a, 0x100));
    assert!(img.overlaps(0, 0x41));
}

#[test]
fn overlay_reads_entries_before_file_bytes() {
    let file: Vec<u8> = (0..0x102u32).map(|i| i as u8).collect();
    let img = CacheImage::decode(two_entries(), 0x500, SIZES).unwrap();
    let src = OverlaySource::new(Arc::new(MemSource::new(file.clone())), img);
    // Entries extend the source past the file's end.
    assert_eq!(src.len(), 0x104);
    assert!(src.as_slice().is_none());
    // Untouched range: the file's bytes, borrowed.
    let r = src.read("t", 0x10, 8).unwrap();
    assert!(matches!(r, Cow::Borrowed(_)));
    assert_eq!(&*r, &file[0x10..0x18]);
    // Exactly an entry.
    assert_eq!(&*src.read("t", 0x40, 10).unwrap(), b"OHDRheader");
    // Straddling: file bytes, then the entry's first bytes.
    let r = src.read("t", 0x3e, 4).unwrap();
    assert_eq!(&*r, &[0x3e, 0x3f, b'O', b'H']);
    // Past the end of the file but inside an entry.
    assert_eq!(&*src.read("t", 0x100, 4).unwrap(), b"FAHD");
    assert_eq!(&*src.read_upto("t", 0x102, 100).unwrap(), b"HD");
    // Past the end of everything.
    assert!(matches!(
        src.read("t", 0x101, 4),
        Err(Error::Truncated { .. })
    ));
    assert!(src.read("t", u64::MAX, 2).is_err());
}

#[test]
fn overlay_refuses_gaps_past_the_file() {
    // File of 0x20 bytes; entries at 0x40 and 0x100: 0x20..0x40 is in neither.
    let img = CacheImage::decode(two_entries(), 0x500, SIZES).unwrap();
    let src = OverlaySource::new(Arc::new(MemSource::new(vec![0u8; 0x20])), img);
    assert!(src.read("t", 0x30, 0x14).is_err());
    assert_eq!(&*src.read("t", 0x40, 10).unwrap(), b"OHDRheader");
    let mut buf = [0u8; 4];
    assert!(src.read_exact_at(0x1e, &mut buf).is_err());
    src.read_exact_at(0x1c, &mut buf).unwrap();
    assert_eq!(buf, [0; 4]);
}

#[test]
fn message_decodes() {
    let mut b = vec![0u8];
    b.extend_from_slice(&0x5620u64.to_le_bytes());
    b.extend_from_slice(&0x58bu64.to_le_bytes());
    let m = CacheImageMessage::decode(&mut Cursor::new(&b, 0x40, MESSAGE), SIZES).unwrap();
    assert_eq!(
        m,
        CacheImageMessage {
            address: Some(0x5620),
            length: 0x58b
        }
    );
    b[0] = 1;
    assert!(matches!(
        CacheImageMessage::decode(&mut Cursor::new(&b, 0x40, MESSAGE), SIZES),
        Err(Error::Unsupported { .. })
    ));
    let mut over = vec![0u8];
    over.extend_from_slice(&(u64::MAX - 1).to_le_bytes());
    over.extend_from_slice(&8u64.to_le_bytes());
    assert!(matches!(
        CacheImageMessage::decode(&mut Cursor::new(&over, 0, MESSAGE), SIZES),
        Err(Error::Overflow { .. })
    ));
    b[0] = 0;
    assert!(matches!(
        CacheImageMessage::decode(&mut Cursor::new(&b[..5], 0x40, MESSAGE), SIZES),
        Err(Error::Truncated { .. })
    ));
}

#[test]
fn read_from_source_and_undefined_address() {
    let img = two_entries();
    let mut file = vec![0u8; 0x200];
    file.extend_from_slice(&img);
    let src = MemSource::new(file);
    let m = CacheImageMessage {
        address: Some(0x200),
        length: img.len() as u64,
    };
    let got = CacheImage::read(&src, SIZES, &m).unwrap().unwrap();
    assert_eq!(got.entries().count(), 2);
    let none = CacheImageMessage {
        address: None,
        length: 0,
    };
    assert!(CacheImage::read(&src, SIZES, &none).unwrap().is_none());
    let past = CacheImageMessage {
        address: Some(0x210),
        length: img.len() as u64,
    };
    assert!(matches!(
        CacheImage::read(&src, SIZES, &past),
        Err(Error::Truncated { .. })
    ));
    let huge = CacheImageMessage {
        address: Some(0),
        length: limits::MAX_CACHE_IMAGE + 1,
    };
    assert!(matches!(
        CacheImage::read(&src, SIZES, &huge),
        Err(Error::Limit { .. })
    ));
}

fn err(b: Vec<u8>) -> Error {
    CacheImage::decode(b, 0x500, SIZES).unwrap_err()
}

fn reason(e: &Error) -> String {
    match e {
        Error::Malformed {
            structure, reason, ..
        } => {
            assert_eq!(*structure, STRUCTURE);
            reason.clone()
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn truncated_images_are_typed_errors() {
    let good = two_entries();
    for cut in [0, 3, 4, 10, 21, 30, good.len() - 5, good.len() - 1] {
        let e = err(good[..cut].to_vec());
        assert!(
            matches!(
                e,
                Error::Truncated { .. }
                    | Error::Malformed { .. }
                    | Error::Checksum { .. }
                    | Error::Limit { .. }
            ),
            "cut {cut}: {e:?}"
        );
    }
    // A shortened block whose header length and checksum are patched to match:
    // the last entry's bytes run out.
    let mut b = good[..good.len() - 6].to_vec();
    let n = (b.len() + 4) as u64;
    b[6..14].copy_from_slice(&n.to_le_bytes());
    let e = err(seal(b));
    assert!(matches!(e, Error::Truncated { .. }), "{e:?}");
}

#[test]
fn corrupted_images_are_typed_errors() {
    let good = two_entries();
    // Signature.
    let mut b = good.clone();
    b[0] = b'X';
    assert!(reason(&err(b)).contains("signature"));
    // Version.
    let mut b = good.clone();
    b[4] = 1;
    assert!(matches!(err(b), Error::Unsupported { .. }));
    // Resize status flag.
    let mut b = good.clone();
    b[5] = 1;
    assert!(matches!(err(b), Error::Unsupported { .. }));
    // Image length differs from the block.
    let mut b = good.clone();
    b[6] ^= 1;
    assert!(reason(&err(b)).contains("image data length"));
    // Checksum.
    let mut b = good.clone();
    let n = b.len();
    b[n - 10] ^= 0x40;
    match err(b) {
        Error::Checksum {
            structure, offset, ..
        } => assert_eq!((structure, offset), (STRUCTURE, 0x500)),
        other => panic!("{other:?}"),
    }
    // No entries.
    let mut b = good.clone();
    b[14..18].copy_from_slice(&0u32.to_le_bytes());
    assert!(reason(&err(reseal(b))).contains("no entries"));
    // More entries than the block can hold.
    let mut b = good.clone();
    b[14..18].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(err(reseal(b)), Error::Limit { .. }));
    // Fewer entries than present: bytes left over.
    let mut b = good.clone();
    b[14..18].copy_from_slice(&1u32.to_le_bytes());
    assert!(reason(&err(reseal(b))).contains("after the last entry"));
}

#[test]
fn bad_entry_fields_are_typed_errors() {
    let first = 18; // first entry starts after the 18-byte header
    let cases: [(usize, u8, &str); 5] = [
        (0, NUM_TYPES, "entry type"),
        (2, NUM_RINGS, "entry ring"),
        (3, MAX_AGE + 1, "entry age"),
        (1, 0x01 | FD_PARENT, "child count"),
        (1, 0x01 | FD_CHILD, "parent count"),
    ];
    for (at, v, what) in cases {
        let mut b = two_entries();
        b[first + at] = v;
        let e = err(reseal(b));
        let r = reason(&e);
        assert!(r.contains(what), "{what}: {r}");
        match e {
            Error::Malformed { offset, .. } => assert_eq!(offset, 0x500 + first as u64),
            _ => unreachable!(),
        }
    }
    // Undefined address, zero length, overlapping entries, address overflow.
    let b = build(&[entry(u64::MAX, b"x")]);
    assert!(reason(&err(b)).contains("undefined entry address"));
    let b = build(&[entry(0x40, b"")]);
    assert!(reason(&err(b)).contains("length 0"));
    let b = build(&[entry(0x40, b"abcd"), entry(0x42, b"efgh")]);
    assert!(reason(&err(b)).contains("overlaps"));
    let b = build(&[entry(0x40, b"abcd"), entry(0x40, b"efgh")]);
    assert!(reason(&err(b)).contains("overlaps"));
    let b = build(&[entry(u64::MAX - 2, b"abcd")]);
    assert!(matches!(err(b), Error::Overflow { .. }));
    let b = build(&[E {
        addr: 0x40,
        type_id: 5,
        flags: FD_CHILD,
        children: 0,
        parents: &[u64::MAX],
        data: b"z",
    }]);
    assert!(reason(&err(b)).contains("parent address"));
    // Dirty-children above children.
    let mut b = build(&[E {
        addr: 0x40,
        type_id: 5,
        flags: FD_PARENT,
        children: 1,
        parents: &[],
        data: b"z",
    }]);
    b[first + 6] = 2;
    assert!(reason(&err(reseal(b))).contains("dirty child count"));
}

/// Every single-byte change and every truncation of a valid image gives an
/// error or a valid image, never a panic.
#[test]
fn mutations_never_panic() {
    let good = two_entries();
    for i in 0..good.len() {
        for v in [0u8, 1, 0x7f, 0xff] {
            let mut b = good.clone();
            b[i] = v;
            let _ = CacheImage::decode(b.clone(), 0, SIZES);
            let _ = CacheImage::decode(reseal(b), 0, SIZES);
        }
        let _ = CacheImage::decode(good[..i].to_vec(), 0, SIZES);
    }
}

/// The real file written by libhdf5 with a cache image (tools/test/misc
/// testfiles of HDF5) decodes, and its root object header lives in the image.
#[test]
fn corpus_file_with_cache_image() {
    let here = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let rel = "hdf5/tools/test/misc/testfiles/h5clear_mdc_image.h5";
    let found = std::fs::read(here.join("../shared/corpus").join(rel)).ok();
    let Some(bytes) = found else {
        return; // corpus absent
    };
    let m = CacheImageMessage {
        address: Some(0x5620),
        length: 0x58b,
    };
    let img = CacheImage::read(&MemSource::new(bytes), SIZES, &m)
        .unwrap()
        .unwrap();
    let e: Vec<_> = img.entries().collect();
    assert_eq!(e.len(), 4);
    let root = e.iter().find(|e| e.address == 0x30).unwrap();
    assert_eq!(root.type_id, 5);
    assert_eq!(img.entry_bytes(root).get(..4), Some(&b"OHDR"[..]));
    let fa = e.iter().find(|e| e.address == 0x1df).unwrap();
    assert_eq!((fa.type_id, fa.len()), (22, 0x1c));
    assert_eq!(img.entry_bytes(fa).get(..4), Some(&b"FAHD"[..]));
}
