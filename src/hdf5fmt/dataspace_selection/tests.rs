//! Decoder tests over real encodings (cut from the VDS mapping lists that
//! h5py/libhdf5 2.0 wrote into tests/golden/vds/*.h5) and hand-built ones for
//! the older versions, plus truncations and corruptions.

use super::*;
use crate::error::Error;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn dec(b: &[u8]) -> Result<(DataspaceSelection, usize)> {
    let mut c = Cursor::new(b, 0, "dataspace selection");
    let s = decode(&mut c)?;
    Ok((s, c.pos()))
}

fn hd(start: u64, stride: u64, count: Option<u64>, block: Option<u64>) -> HyperDim {
    HyperDim {
        start,
        stride,
        count,
        block,
    }
}

/// vds_several.h5, mapping 0: source "all".
const ALL: &str = "030000000100000000000000000000000000";
/// vds_several.h5, mapping 1 source: regular v3, 2-byte fields, rows 0:4:2, cols 1..5.
const REGULAR_V3_2: &str = "020000000300000001020200000000000200020001000100010001000400";
/// vds_printf.h5: virtual selection with an unlimited count (0xffff).
const UNLIMITED_COUNT: &str = "020000000300000001020200000000000200ffff02000000010001000300";
/// vds_unlimited.h5: unlimited block.
const UNLIMITED_BLOCK: &str = "0200000003000000010202000000000001000100ffff0000010001000400";
/// vds_same_file.h5 "irregular": two blocks, (0,2)-(1,2) and (3,1)-(3,3).
const IRREGULAR_V3_2: &str = "02000000030000000002020000000200000002000100020003000100030003000000";

#[test]
fn real_all_and_regular() {
    let (s, n) = dec(&hex(ALL)).unwrap();
    assert_eq!((s, n), (DataspaceSelection::All, 16));
    let (s, n) = dec(&hex(REGULAR_V3_2)).unwrap();
    assert_eq!(n, 30);
    assert_eq!(
        s,
        DataspaceSelection::Regular(vec![hd(0, 2, Some(2), Some(1)), hd(1, 1, Some(1), Some(4))])
    );
    assert_eq!(s.rank(), Some(2));
    assert_eq!(s.unlimited_dim(), None);
}

#[test]
fn real_unlimited() {
    let (s, _) = dec(&hex(UNLIMITED_COUNT)).unwrap();
    assert_eq!(
        s,
        DataspaceSelection::Regular(vec![hd(0, 2, None, Some(2)), hd(0, 1, Some(1), Some(3))])
    );
    assert_eq!(s.unlimited_dim(), Some(0));
    let (s, _) = dec(&hex(UNLIMITED_BLOCK)).unwrap();
    assert_eq!(
        s,
        DataspaceSelection::Regular(vec![hd(0, 1, Some(1), None), hd(0, 1, Some(1), Some(4))])
    );
}

#[test]
fn real_irregular() {
    let b = hex(IRREGULAR_V3_2);
    let (s, n) = dec(&b).unwrap();
    assert_eq!(n, b.len() - 2);
    assert_eq!(
        s,
        DataspaceSelection::Irregular {
            rank: 2,
            blocks: vec![0, 2, 1, 2, 3, 1, 3, 3]
        }
    );
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn older_versions_and_wide_fields() {
    // Hyperslab v1: 8 header bytes, 4-byte fields, irregular only.
    let mut b = u32s(&[2, 1, 0, 28, 1, 1]);
    b.extend(u32s(&[5, 9]));
    assert_eq!(
        dec(&b).unwrap().0,
        DataspaceSelection::Irregular {
            rank: 1,
            blocks: vec![5, 9]
        }
    );
    // Hyperslab v2: flags, 4-byte length, 8-byte fields, regular, unlimited count.
    let mut b = u32s(&[2, 2]);
    b.push(1);
    b.extend(u32s(&[32, 1]));
    for v in [3u64, 4, u64::MAX, 2] {
        b.extend(v.to_le_bytes());
    }
    assert_eq!(
        dec(&b).unwrap().0,
        DataspaceSelection::Regular(vec![hd(3, 4, None, Some(2))])
    );
    // Hyperslab v3 with 4-byte fields (0xffffffff = unlimited block).
    let mut b = u32s(&[2, 3]);
    b.extend([1u8, 4]);
    b.extend(u32s(&[1, 7, 1, 1, u32::MAX]));
    assert_eq!(
        dec(&b).unwrap().0,
        DataspaceSelection::Regular(vec![hd(7, 1, Some(1), None)])
    );
    // Points v1 (4-byte) and v2 (2-byte and 8-byte).
    let mut b = u32s(&[1, 1, 0, 0, 2, 2]);
    b.extend(u32s(&[1, 2, 3, 4]));
    assert_eq!(
        dec(&b).unwrap().0,
        DataspaceSelection::Points {
            rank: 2,
            coords: vec![1, 2, 3, 4]
        }
    );
    let mut b = u32s(&[1, 2]);
    b.push(2);
    b.extend(u32s(&[1]));
    b.extend([3, 0, 9, 0, 8, 0, 7, 0]);
    assert_eq!(
        dec(&b).unwrap().0,
        DataspaceSelection::Points {
            rank: 1,
            coords: vec![9, 8, 7]
        }
    );
    let mut b = u32s(&[1, 2]);
    b.push(8);
    b.extend(u32s(&[1]));
    b.extend(1u64.to_le_bytes());
    b.extend((1u64 << 40).to_le_bytes());
    assert_eq!(
        dec(&b).unwrap().0,
        DataspaceSelection::Points {
            rank: 1,
            coords: vec![1 << 40]
        }
    );
    // None.
    assert_eq!(
        dec(&u32s(&[0, 1, 0, 0])).unwrap().0,
        DataspaceSelection::None
    );
}

#[test]
fn every_truncation_is_a_typed_error() {
    for enc in [
        ALL,
        REGULAR_V3_2,
        UNLIMITED_COUNT,
        UNLIMITED_BLOCK,
        IRREGULAR_V3_2,
    ] {
        let b = hex(enc);
        let (_, used) = dec(&b).unwrap();
        for cut in 0..used {
            match dec(&b[..cut]) {
                Err(Error::Truncated { .. }) => {}
                other => panic!("{enc} cut at {cut}: {other:?}"),
            }
        }
    }
}

#[test]
fn corrupt_fields_are_rejected() {
    let bad = |b: &[u8]| matches!(dec(b), Err(Error::Malformed { .. }));
    // unknown selection type, versions, flags, field size, rank
    assert!(bad(&u32s(&[4, 1, 0, 0])));
    assert!(bad(&u32s(&[3, 2, 0, 0])));
    let mut b = hex(REGULAR_V3_2);
    b[4] = 4;
    assert!(bad(&b));
    let mut b = hex(REGULAR_V3_2);
    b[8] = 3;
    assert!(bad(&b));
    let mut b = hex(REGULAR_V3_2);
    b[9] = 3;
    assert!(bad(&b));
    let mut b = hex(REGULAR_V3_2);
    b[10] = 0;
    assert!(bad(&b));
    let mut b = hex(REGULAR_V3_2);
    b[10] = 33;
    assert!(bad(&b));
    // overlapping blocks: block 3 > stride 2 with count 2
    let mut b = hex(REGULAR_V3_2);
    b[20] = 3;
    assert!(bad(&b));
    // count and block both unlimited
    let mut b = hex(UNLIMITED_COUNT);
    b[20] = 0xff;
    b[21] = 0xff;
    assert!(bad(&b));
    // two unlimited dimensions
    let mut b = hex(UNLIMITED_COUNT);
    b[26] = 0xff;
    b[27] = 0xff;
    assert!(bad(&b));
    // irregular block whose end precedes its start
    let mut b = hex(IRREGULAR_V3_2);
    b[18] = 5;
    assert!(bad(&b));
    // a huge point count cannot allocate: it is a truncation
    let mut b = u32s(&[1, 2]);
    b.push(8);
    b.extend(u32s(&[3]));
    b.extend(u64::MAX.to_le_bytes());
    assert!(matches!(dec(&b), Err(Error::Truncated { .. })));
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// Encode a regular hyperslab as libhdf5 does with version 3 (test-only
    /// encoder, so decode is checked against an independent writer).
    fn encode_regular(dims: &[HyperDim], enc: usize) -> Vec<u8> {
        let mut b = u32s(&[2, 3]);
        b.extend([1u8, enc as u8]);
        b.extend(u32s(&[dims.len() as u32]));
        let ones = if enc == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * enc)) - 1
        };
        for d in dims {
            for v in [
                d.start,
                d.stride,
                d.count.unwrap_or(ones),
                d.block.unwrap_or(ones),
            ] {
                b.extend(&v.to_le_bytes()[..enc]);
            }
        }
        b
    }

    proptest! {
        #[test]
        fn regular_round_trip(
            raw in proptest::collection::vec((0u64..1000, 1u64..50, 1u64..50), 1..5),
            unlim in proptest::option::of(0usize..4),
            enc in prop_oneof![Just(2usize), Just(4), Just(8)],
        ) {
            let dims: Vec<HyperDim> = raw
                .iter()
                .enumerate()
                .map(|(i, &(start, block, count))| HyperDim {
                    start,
                    stride: block + 1,
                    count: if unlim == Some(i) { None } else { Some(count) },
                    block: Some(block),
                })
                .collect();
            let b = encode_regular(&dims, enc);
            let (s, used) = dec(&b).unwrap();
            prop_assert_eq!(used, b.len());
            prop_assert_eq!(s, DataspaceSelection::Regular(dims));
        }

        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = dec(&b);
        }
    }
}
