use super::*;

fn ctx(n: usize) -> ChunkContext {
    ChunkContext::new(1, n)
}

#[test]
fn log2_matches_libhdf5() {
    assert_eq!(log2_ceil(0), 1);
    assert_eq!(log2_ceil(1), 0);
    assert_eq!(log2_ceil(2), 1);
    assert_eq!(log2_ceil(3), 2);
    assert_eq!(log2_ceil(4096), 12);
    assert_eq!(log2_ceil(4097), 13);
    assert_eq!(log2_ceil(u64::MAX), 64);
}

#[test]
fn int16_ramp_header_like_libhdf5() {
    // The vector so_int_auto__i16_ramp_4096: arange(4096) - 2048, fill 0 defined.
    let cd = cd_values(None, 0, 4096, 2, true, false, Some(0));
    let data: Vec<u8> = (0..4096i32)
        .flat_map(|i| ((i - 2048) as i16).to_le_bytes())
        .collect();
    let enc = encode(&data, &cd, &ctx(8192)).unwrap();
    // minbits 13, size byte 8, minval -2048 sign-extended, zero padding.
    assert_eq!(
        &enc[..21],
        &[
            0x0d, 0, 0, 0, 8, 0x00, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0,
            0
        ]
    );
    assert_eq!(enc.len(), 6678);
    assert_eq!(decode(&enc, &cd, &ctx(8192)).unwrap(), data);
}

#[test]
fn full_width_and_constant_chunks() {
    let cd = cd_values(None, 0, 3, 1, false, false, None);
    // span 256 > 253: stored raw after the header.
    let enc = encode(&[0, 255, 7], &cd, &ctx(3)).unwrap();
    assert_eq!(u32::from_le_bytes(enc[..4].try_into().unwrap()), 8);
    assert_eq!(&enc[21..], &[0, 255, 7]);
    assert_eq!(decode(&enc, &cd, &ctx(3)).unwrap(), vec![0, 255, 7]);
    // All equal without fill: minbits 0, 22 bytes.
    let enc = encode(&[9, 9, 9], &cd, &ctx(3)).unwrap();
    assert_eq!(enc.len(), 22);
    assert_eq!(enc[0], 0);
    assert_eq!(decode(&enc, &cd, &ctx(3)).unwrap(), vec![9, 9, 9]);
}

#[test]
fn big_endian_and_fill_codes() {
    let cd = cd_values(None, 0, 4, 4, true, true, Some(0xFFFF_FFFF));
    let vals: [i32; 4] = [-1, 100, 90, -1];
    let data: Vec<u8> = vals.iter().flat_map(|v| v.to_be_bytes()).collect();
    let enc = encode(&data, &cd, &ctx(16)).unwrap();
    // span 11 + fill -> 4 bits; codes 15, 10, 0, 15.
    assert_eq!(enc[0], 4);
    assert_eq!(&enc[21..], &[0xFA, 0x0F, 0x00]);
    assert_eq!(decode(&enc, &cd, &ctx(16)).unwrap(), data);
}

#[test]
fn float_d_scale_is_lossy_and_bounded() {
    let cd = cd_values(Some(2), 0, 5, 8, true, false, None);
    let vals = [1.234f64, -5.5, 3.16159, 0.0, 2.0];
    let data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let enc = encode(&data, &cd, &ctx(40)).unwrap();
    let dec = decode(&enc, &cd, &ctx(40)).unwrap();
    for (v, d) in vals.iter().zip(dec.chunks_exact(8)) {
        let d = f64::from_le_bytes(d.try_into().unwrap());
        assert!((v - d).abs() <= 0.005 + 1e-12, "{v} vs {d}");
    }
}

#[test]
fn rejects_bad_parameters_and_input() {
    let mut cd = cd_values(None, 0, 4, 2, true, false, None);
    assert!(decode(&[0; 30], &cd[..19], &ctx(8)).is_err());
    cd[0] = 1;
    assert!(decode(&[0; 30], &cd, &ctx(8)).is_err(), "E-scale");
    let mut cd = cd_values(None, 0, 4, 3, true, false, None);
    assert!(decode(&[0; 30], &cd, &ctx(8)).is_err(), "size 3");
    cd[4] = 2;
    let mut hdr = vec![17, 0, 0, 0, 8];
    hdr.resize(21, 0);
    assert!(decode(&hdr, &cd, &ctx(8)).is_err(), "minbits > 16");
    hdr[0] = 5;
    assert!(decode(&hdr, &cd, &ctx(8)).is_err(), "no packed data");
    cd[2] = u32::MAX;
    hdr.resize(40, 0);
    assert!(decode(&hdr, &cd, &ctx(8)).is_err(), "beyond the bound");
    // Integer scale factor equal to the width: pass-through.
    let cd = cd_values(None, 16, 4, 2, true, false, None);
    assert_eq!(decode(&[1, 2, 3], &cd, &ctx(8)).unwrap(), vec![1, 2, 3]);
}

proptest::proptest! {
    #[test]
    fn prop_int_round_trip(
        raw in proptest::collection::vec(proptest::num::u64::ANY, 0..200),
        size_pow in 0u32..4,
        signed in proptest::bool::ANY,
        be in proptest::bool::ANY,
        fill in proptest::option::of(0u64..4),
        spread in 1u32..64,
    ) {
        let size = 1usize << size_pow;
        let width = mask(spread.min(size as u32 * 8));
        let data: Vec<u8> = raw
            .iter()
            .flat_map(|v| {
                let mut e = (v & width).to_le_bytes()[..size].to_vec();
                if be { e.reverse(); }
                e
            })
            .collect();
        let cd = cd_values(None, 0, raw.len() as u32, size as u32, signed, be, fill);
        let c = ctx(data.len());
        let enc = encode(&data, &cd, &c).unwrap();
        proptest::prop_assert_eq!(decode(&enc, &cd, &c).unwrap(), data);
    }

    #[test]
    fn prop_float_error_bounded(
        vals in proptest::collection::vec(-1000.0f32..1000.0, 0..200),
        d in 0i32..3,
    ) {
        let cd = cd_values(Some(d), 0, vals.len() as u32, 4, true, false, None);
        let data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        let c = ctx(data.len());
        let enc = encode(&data, &cd, &c).unwrap();
        let dec = decode(&enc, &cd, &c).unwrap();
        proptest::prop_assert_eq!(dec.len(), data.len());
        let tol = 0.5 * 10f32.powi(-d) + 1e-3;
        for (v, out) in vals.iter().zip(dec.chunks_exact(4)) {
            let out = f32::from_le_bytes(out.try_into().unwrap());
            proptest::prop_assert!((v - out).abs() <= tol, "{} vs {}", v, out);
        }
    }

    #[test]
    fn prop_garbage_never_panics(
        data in proptest::collection::vec(proptest::num::u8::ANY, 0..100),
        head in proptest::collection::vec(0u32..20, 8),
    ) {
        let mut cd = vec![0u32; 20];
        cd[..8].copy_from_slice(&head);
        let _ = decode(&data, &cd, &ctx(1000));
    }
}
