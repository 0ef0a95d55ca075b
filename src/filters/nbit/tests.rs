use super::*;

fn ctx(n: usize) -> ChunkContext {
    ChunkContext::new(1, n)
}

#[test]
fn pieces_match_libhdf5_byte_walk() {
    // 12 significant bits at offset 0 of a LE int16: 4 bits of byte 1, then byte 0.
    assert_eq!(
        atomic_pieces(2, false, 12, 0),
        vec![
            Piece {
                byte: 1,
                bits: 4,
                shift: 0
            },
            Piece {
                byte: 0,
                bits: 8,
                shift: 0
            }
        ]
    );
    // 6 bits at offset 5 of a BE int32: bits 5..11 span LE bytes 1 and 0.
    assert_eq!(
        atomic_pieces(4, true, 6, 5),
        vec![
            Piece {
                byte: 2,
                bits: 3,
                shift: 0
            },
            Piece {
                byte: 3,
                bits: 3,
                shift: 5
            }
        ]
    );
    assert_eq!(
        atomic_pieces(1, false, 3, 2),
        vec![Piece {
            byte: 0,
            bits: 3,
            shift: 2
        }]
    );
}

#[test]
fn twelve_bit_ints_pack_to_6145_bytes() {
    let cd = [8, 0, 4096, 1, 2, 0, 12, 0];
    let data: Vec<u8> = (0..4096i32)
        .flat_map(|i| (((37 * i) % 4096 - 2048) as i16 as u16 & 0x0FFF).to_le_bytes())
        .collect();
    let enc = encode(&data, &cd, &ctx(8192)).unwrap();
    assert_eq!(enc.len(), 6145);
    // First value -2048 & 0xFFF = 0x800 -> bits 1000 0000 0000.
    assert_eq!(enc[0], 0x80);
    assert_eq!(decode(&enc, &cd, &ctx(8192)).unwrap(), data);
    assert!(decode(&enc[..6143], &cd, &ctx(8192)).is_err());
}

#[test]
fn compound_with_array_and_noop_members() {
    // compound of 8 bytes: u16 at 0 (prec 10, offset 3), array of 2 u8 (prec 4) at 2,
    // a 3-byte no-op at 4; byte 7 is not covered.
    let cd: Vec<u32> = vec![
        0, 0, 2, // count filled below, flag, elements
        3, 8, 3, // compound: size 8, 3 members
        0, 1, 2, 0, 10, 3, // member at 0: atomic LE size 2 prec 10 offset 3
        2, 2, 2, 1, 1, 0, 4, 0, // member at 2: array total 2 of atomic u8 prec 4
        4, 4, 3, // member at 4: no-op size 3
    ];
    let mut cd = cd;
    cd[0] = cd.len() as u32;
    let data = [
        0xFF, 0xFF, 0xAB, 0xCD, 1, 2, 3, 9, //
        0x08, 0x00, 0x0F, 0xF0, 4, 5, 6, 9,
    ];
    let enc = encode(&data, &cd, &ctx(16)).unwrap();
    // 2 × (10 + 8 + 24) bits = 84 -> 11 bytes.
    assert_eq!(enc.len(), 11);
    let dec = decode(&enc, &cd, &ctx(16)).unwrap();
    assert_eq!(
        dec,
        vec![
            0xF8, 0x1F, 0x0B, 0x0D, 1, 2, 3, 0, //
            0x08, 0x00, 0x0F, 0x00, 4, 5, 6, 0
        ]
    );
}

#[test]
fn noop_flag_and_bad_parameters() {
    let cd = atomic_cd_values(3, 2, false, 16, 0);
    assert_eq!(cd, vec![8, 1, 3, 1, 2, 0, 16, 0]);
    assert_eq!(decode(&[1, 2, 3], &cd, &ctx(6)).unwrap(), vec![1, 2, 3]);
    assert!(decode(&[0; 8], &[8, 0, 4, 1, 2, 0, 17, 0], &ctx(8)).is_err());
    assert!(decode(&[0; 8], &[7, 0, 4, 1, 2, 0, 12, 0], &ctx(8)).is_err());
    assert!(decode(&[0; 8], &[4, 0, 4, 2], &ctx(8)).is_err());
    // Found by cargo-fuzz: a gigantic atomic size made the piece list huge.
    let giant_atomic = [8, 0, 1, 1, 0xFFFF_FFF0, 0, 0xFFFF_0000, 0];
    assert!(decode(&[0; 8], &giant_atomic, &ctx(8)).is_err());
    let huge = [8, 0, u32::MAX, 1, 8, 0, 1, 0];
    assert!(decode(&[0; 8], &huge, &ctx(8)).is_err());
}

proptest::proptest! {
    #[test]
    fn prop_round_trip(
        values in proptest::collection::vec(proptest::num::u32::ANY, 0..300),
        size in 1u32..=4,
        be in proptest::bool::ANY,
        prec in 1u32..=32,
        off in 0u32..32,
    ) {
        let bits = size * 8;
        let prec = prec.min(bits);
        let off = off % (bits - prec + 1);
        let cd = atomic_cd_values(values.len() as u32, size, be, prec, off);
        let mask = if prec == 32 { u32::MAX } else { ((1u32 << prec) - 1) << off };
        let data: Vec<u8> = values
            .iter()
            .flat_map(|v| {
                let le = v.to_le_bytes();
                let mut e = le[..size as usize].to_vec();
                if be { e.reverse(); }
                e
            })
            .collect();
        let expected: Vec<u8> = values
            .iter()
            .flat_map(|v| {
                let le = (v & mask).to_le_bytes();
                let mut e = le[..size as usize].to_vec();
                if be { e.reverse(); }
                e
            })
            .collect();
        let c = ctx(data.len());
        let enc = encode(&data, &cd, &c).unwrap();
        let dec = decode(&enc, &cd, &c).unwrap();
        if cd[1] == 1 {
            proptest::prop_assert_eq!(dec, data);
        } else {
            proptest::prop_assert_eq!(enc.len(), (values.len() * prec as usize) / 8 + 1);
            proptest::prop_assert_eq!(dec, expected);
        }
    }

    #[test]
    fn prop_garbage_never_panics(
        data in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
        cd in proptest::collection::vec(0u32..40, 0..24),
    ) {
        let mut cd = cd;
        if let Some(first) = cd.first_mut() { *first = 0; }
        let n = cd.len() as u32;
        if let Some(first) = cd.first_mut() { *first = n; }
        let _ = decode(&data, &cd, &ctx(1000));
    }
}
