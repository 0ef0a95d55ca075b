//! Known answers taken from the shared corpus's `expected/*.json` (the oracle,
//! h5py 3.16 / libhdf5 2.0): each test rebuilds the stored bytes of a small dataset
//! from its `values` preview and checks the SHA-256 the oracle recorded.

use super::*;
use purehdf::low_level::datatype::{
    CharSet, CompoundMember, EnumMember, FloatLayout, ReferenceKind,
};

fn sha(dt: &Datatype, data: &[u8], r: VlenResolver) -> (HashKind, String) {
    let mut h = DataHasher::new(dt).expect("hashable");
    h.update(data, r).expect("hash");
    (h.kind(), h.finish())
}

fn no_vlen(_: &[u8]) -> Result<Vec<u8>> {
    Err(Error::InvalidArgument("no heap".into()))
}

fn fixed(size: u32, pad: StringPad) -> Datatype {
    Datatype::String {
        size,
        pad,
        cset: CharSet::Ascii,
    }
}

fn be_int(size: u32, signed: bool) -> Datatype {
    Datatype::Integer {
        size,
        order: ByteOrder::Big,
        signed,
        bit_offset: 0,
        precision: (size * 8) as u16,
    }
}

/// A fake global heap: the pointer's bytes 4..12 hold an index into `objs`.
fn heap_ptr(count: u32, idx: u64) -> Vec<u8> {
    let mut p = count.to_le_bytes().to_vec();
    p.extend_from_slice(&idx.to_le_bytes());
    p.extend_from_slice(&0u32.to_le_bytes());
    p
}

#[test]
fn spacepad_strings_become_null_padded() {
    // hdf5-json fixed_string_dset.h5 /DS1, |S7 spacepad
    let data = b"Partingis suchsweet  sorrow.";
    let (k, h) = sha(&fixed(7, StringPad::SpacePad), data, &no_vlen);
    assert_eq!(k, HashKind::RawLePacked);
    assert_eq!(
        h,
        "6c166515b1a9d2ce1cd11815488da99d9fd550398c14619f311c6d7749dce8aa"
    );
}

#[test]
fn nullterm_strings_stop_at_the_first_nul() {
    // h5diff_dset1.h5 /g1/string, |S3 nullterm ["ab", "de"]; garbage after the NUL is dropped
    let data = b"ab\0de\0";
    let (_, h) = sha(&fixed(3, StringPad::NullTerm), data, &no_vlen);
    assert_eq!(
        h,
        "fef58f74fd39fd1bc0aec9586786c5052ace427fdc893952a56a319f1fbca3cb"
    );
    let mut out = Vec::new();
    convert_fixed_string(b"a\0zz", StringPad::NullTerm, &mut out);
    assert_eq!(out, b"a\0\0\0");
    out.clear();
    convert_fixed_string(b"a\0zz", StringPad::NullPad, &mut out);
    assert_eq!(out, b"a\0zz");
}

#[test]
fn big_endian_integers_hash_as_little_endian() {
    // types_dset.h5: /H5T_STD_I16BE and /H5T_STD_I16LE both [0..10) with one hash
    let want = "3c7acfa845b57df9e3a46779d4f17c7eb9d697d63dd8b2c30c176c6fec90051b";
    let be: Vec<u8> = (0i16..10).flat_map(|v| v.to_be_bytes()).collect();
    let le: Vec<u8> = (0i16..10).flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(sha(&be_int(2, true), &be, &no_vlen).1, want);
    assert_eq!(sha(&Datatype::int(2, true), &le, &no_vlen).1, want);
    // tall.h5 /g1/g1.1/dset1.1.2 >i4 0..20
    let be4: Vec<u8> = (0i32..20).flat_map(|v| v.to_be_bytes()).collect();
    assert_eq!(
        sha(&be_int(4, true), &be4, &no_vlen).1,
        "a9551fcf2864b95f8f2422220d046cb5d775ebbfdcacbedf132e3b06de46f3c5"
    );
}

#[test]
#[allow(clippy::approx_constant)]
fn big_endian_floats() {
    // h5py vlen_string_s390x.h5 /DSBEfloat >f8
    let be: Vec<u8> = [3.14f64, 1.61, 2.71, 2.41, 1.2]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let dt = Datatype::Float {
        size: 8,
        order: ByteOrder::Big,
        layout: FloatLayout::ieee(8),
    };
    assert_eq!(
        sha(&dt, &be, &no_vlen).1,
        "4f5448ed87f53638cb57581974a6026fed4909c9f418a5099bb56a9cd29d5b30"
    );
}

#[test]
fn x87_long_double_in_12_bytes_widens_to_16() {
    // h5diff_basic1.h5 /g1/ld: 12-byte x87 floats, all 1.0, shape [3, 2] -> <f16
    let layout = FloatLayout {
        bit_offset: 0,
        precision: 80,
        sign_pos: 79,
        exp_pos: 64,
        exp_size: 15,
        mant_pos: 0,
        mant_size: 64,
        exp_bias: 16383,
        norm: 0,
        pad: [false; 3],
    };
    let dt = Datatype::Float {
        size: 12,
        order: ByteOrder::Little,
        layout,
    };
    let mut one = 0x8000_0000_0000_0000u64.to_le_bytes().to_vec();
    one.extend_from_slice(&0x3fffu16.to_le_bytes());
    one.extend_from_slice(&[0xaa, 0xbb]); // padding bytes of the 12-byte slot
    let data: Vec<u8> = one.iter().copied().cycle().take(72).collect();
    assert_eq!(
        sha(&dt, &data, &no_vlen).1,
        "d5f31e2dc4d33eb1b4f10791710f0742e04bc2948af611f677ec15683d849ed4"
    );
}

#[test]
fn bool_enum_is_one_byte() {
    // anndata v0.5.0 /uns/rank_genes_groups/params/use_raw: [true]
    let dt = Datatype::Enum {
        base: Box::new(Datatype::int(1, true)),
        members: vec![
            EnumMember {
                name: "FALSE".into(),
                value: vec![0],
            },
            EnumMember {
                name: "TRUE".into(),
                value: vec![1],
            },
        ],
    };
    assert_eq!(
        sha(&dt, &[1], &no_vlen).1,
        "4bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a"
    );
}

#[test]
fn compound_with_array_members() {
    // h5wasm array.h5 /compound |V52: floaty f8[2,2], stringy S5[2,2]
    let dt = Datatype::Compound {
        size: 52,
        members: vec![
            CompoundMember {
                name: "floaty".into(),
                offset: 0,
                dtype: Datatype::Array {
                    base: Box::new(Datatype::float(8)),
                    dims: vec![2, 2],
                },
            },
            CompoundMember {
                name: "stringy".into(),
                offset: 32,
                dtype: Datatype::Array {
                    base: Box::new(fixed(5, StringPad::NullPad)),
                    dims: vec![2, 2],
                },
            },
        ],
    };
    let mut data = Vec::new();
    for k in 0..2 {
        for i in 0..4 {
            data.extend_from_slice(&f64::from(4 * k + i).to_le_bytes());
        }
        data.extend_from_slice(b"hellotherehellothere");
    }
    assert_eq!(
        sha(&dt, &data, &no_vlen).1,
        "39dedf8b25a0eb2e2d9ba6a8e1478c97ab63ede92c17d3c42c7fbb85fd3cf09b"
    );
}

#[test]
fn compound_padding_is_dropped_and_members_swapped() {
    // a {b: >i2 at 4, a: u1 at 0} compound of size 8 -> bytes of b (LE) then a
    let dt = Datatype::Compound {
        size: 8,
        members: vec![
            CompoundMember {
                name: "a".into(),
                offset: 0,
                dtype: Datatype::int(1, false),
            },
            CompoundMember {
                name: "b".into(),
                offset: 4,
                dtype: be_int(2, true),
            },
        ],
    };
    let mut out = Vec::new();
    canonical_bytes(
        &dt,
        &[7, 0xee, 0xee, 0xee, 0x01, 0x02, 0xee, 0xee],
        &mut out,
    )
    .unwrap();
    assert_eq!(out, vec![7, 0x02, 0x01]);
}

#[test]
fn vlen_strings_tlv() {
    // h5py vlen_string_dset.h5 /DS1: ["Parting", "is such", "sweet", "sorrow."]
    let words: [&[u8]; 4] = [b"Parting", b"is such", b"sweet\0junk", b"sorrow."];
    let data: Vec<u8> = words
        .iter()
        .enumerate()
        .flat_map(|(i, w)| heap_ptr(w.len() as u32, i as u64))
        .collect();
    let resolve = |p: &[u8]| -> Result<Vec<u8>> {
        let i = u64::from_le_bytes(p[4..12].try_into().unwrap()) as usize;
        Ok(words[i].to_vec())
    };
    let dt = Datatype::VarString {
        size: 16,
        pad: StringPad::SpacePad,
        cset: CharSet::Ascii,
    };
    let (k, h) = sha(&dt, &data, &resolve);
    assert_eq!(k, HashKind::ObjectTlv);
    assert_eq!(
        h,
        "b4b80d147cc95f4281047852c77c996c49b32139d3df09294ea027b96fcf2858"
    );
}

#[test]
fn vlen_sequences_tlv() {
    // h5wasm vlen.h5 /float32_oneD: [[0], [0, 1], [0, 1, 2]]
    let seqs: Vec<Vec<u8>> = (1..=3)
        .map(|n| (0..n).flat_map(|v| (v as f32).to_le_bytes()).collect())
        .collect();
    let data: Vec<u8> = (0..3).flat_map(|i| heap_ptr(i as u32 + 1, i)).collect();
    let resolve = |p: &[u8]| -> Result<Vec<u8>> {
        let i = u64::from_le_bytes(p[4..12].try_into().unwrap()) as usize;
        Ok(seqs[i].clone())
    };
    let dt = Datatype::VarSequence {
        size: 16,
        base: Box::new(Datatype::float(4)),
    };
    assert_eq!(
        sha(&dt, &data, &resolve).1,
        "f758bb9e465f310a384e67fa22cbbcc55a9ed564f966764d5e0a5ad60113c2f0"
    );
}

#[test]
fn references_hash_as_r() {
    // hdf5-json regionref_dset.h5 /DS1 (2 region refs) and null_objref_dset.h5 /DS1
    let region = Datatype::Reference {
        size: 12,
        kind: ReferenceKind::Region,
    };
    assert_eq!(
        sha(&region, &[0u8; 24], &no_vlen).1,
        "e6c5af58dda1be3d2123e9274eac9111265d7619cb9f70f5d545704d56eb1996"
    );
    let obj = Datatype::Reference {
        size: 8,
        kind: ReferenceKind::Object,
    };
    assert_eq!(
        sha(&obj, &[0u8; 8], &no_vlen).1,
        "8c2574892063f995fdf756bce07f46c1a5193e54cd52837ed91e32008ccf41ac"
    );
}

#[test]
fn opaque_and_be_bitfield_hash_file_bytes() {
    // hdf5-json opaque_dset.h5 /DS1 "OPAQUE0".."OPAQUE3", tag "Character array"
    let dt = Datatype::Opaque {
        size: 7,
        tag: "Character array".into(),
    };
    let data: Vec<u8> = (0..4)
        .flat_map(|i| format!("OPAQUE{i}").into_bytes())
        .collect();
    let (k, h) = sha(&dt, &data, &no_vlen);
    assert_eq!(k, HashKind::RawFileBytes);
    assert_eq!(
        h,
        "18dbec88b9778ed2f5821d267e2796a943e3cfdfb2838849397ebf886db233b2"
    );
    let bf = Datatype::Bitfield {
        size: 1,
        order: ByteOrder::Big,
        bit_offset: 0,
        precision: 8,
    };
    assert_eq!(hash_kind(&bf), Some(HashKind::RawFileBytes));
}

#[test]
fn hash_kinds() {
    assert_eq!(
        hash_kind(&Datatype::int(4, true)),
        Some(HashKind::RawLePacked)
    );
    let time = Datatype::Time {
        size: 4,
        order: ByteOrder::Little,
        precision: 32,
    };
    assert_eq!(hash_kind(&time), Some(HashKind::RawFileBytes));
    let new_ref = Datatype::Reference {
        size: 64,
        kind: ReferenceKind::ObjectV2,
    };
    assert_eq!(hash_kind(&new_ref), None);
    let vlen = Datatype::VarSequence {
        size: 16,
        base: Box::new(Datatype::int(4, true)),
    };
    assert_eq!(hash_kind(&vlen), Some(HashKind::ObjectTlv));
    let untagged = Datatype::Opaque {
        size: 64,
        tag: String::new(),
    };
    assert_eq!(hash_kind(&untagged), Some(HashKind::RawLePacked));
}

#[test]
fn partial_precision_integers_sign_extend() {
    let dt = Datatype::Integer {
        size: 4,
        order: ByteOrder::Little,
        signed: true,
        bit_offset: 0,
        precision: 16,
    };
    let mut out = Vec::new();
    canonical_bytes(&dt, &[0xff, 0xff, 0x12, 0x34], &mut out).unwrap();
    assert_eq!(out, (-1i32).to_le_bytes().to_vec());
    out.clear();
    canonical_bytes(&dt, &[0x05, 0x00, 0xff, 0xff], &mut out).unwrap();
    assert_eq!(out, 5i32.to_le_bytes().to_vec());
}

#[test]
fn compound_with_vlen_string_field_is_a_record() {
    // {id: <i4, name: vlen str, tag: S4} -> N+id, B+name, B+tag (trailing NULs stripped)
    let dt = Datatype::Compound {
        size: 24,
        members: vec![
            CompoundMember {
                name: "id".into(),
                offset: 0,
                dtype: Datatype::int(4, true),
            },
            CompoundMember {
                name: "name".into(),
                offset: 4,
                dtype: Datatype::VarString {
                    size: 16,
                    pad: StringPad::NullTerm,
                    cset: CharSet::Utf8,
                },
            },
            CompoundMember {
                name: "tag".into(),
                offset: 20,
                dtype: fixed(4, StringPad::NullPad),
            },
        ],
    };
    let mut data = 9i32.to_le_bytes().to_vec();
    data.extend(heap_ptr(2, 0));
    data.extend_from_slice(b"ab\0\0");
    let resolve = |_: &[u8]| -> Result<Vec<u8>> { Ok(b"hi".to_vec()) };
    let mut out = Vec::new();
    tlv_bytes(&dt, &data, &resolve, &mut out).unwrap();
    let mut want = b"N".to_vec();
    want.extend_from_slice(&9i32.to_le_bytes());
    want.extend_from_slice(b"B\x02\0\0\0\0\0\0\0hi");
    want.extend_from_slice(b"B\x02\0\0\0\0\0\0\0ab");
    assert_eq!(out, want);
}

#[test]
fn short_data_is_an_error_not_a_panic() {
    let dt = Datatype::Compound {
        size: 8,
        members: vec![CompoundMember {
            name: "x".into(),
            offset: 6,
            dtype: Datatype::int(4, true),
        }],
    };
    let mut out = Vec::new();
    assert!(canonical_bytes(&dt, &[0u8; 8], &mut out).is_err());
    let vs = Datatype::VarString {
        size: 16,
        pad: StringPad::NullTerm,
        cset: CharSet::Ascii,
    };
    assert!(tlv_bytes(&vs, &[1, 0], &no_vlen, &mut out).is_ok()); // less than one element
    assert!(tlv_bytes(&vs, &heap_ptr(3, 0), &no_vlen, &mut out).is_err());
}

#[test]
fn big_endian_vlen_sequences_keep_file_order() {
    // golden sb0_earliest.h5 /types/vlen_f8_be: [[0.5, 1.5, 2.5], [-1.0]] stored >f8;
    // the oracle hashed the big-endian bytes
    let seqs: Vec<Vec<u8>> = vec![
        [0.5f64, 1.5, 2.5]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect(),
        (-1.0f64).to_be_bytes().to_vec(),
    ];
    let data: Vec<u8> = [3u32, 1]
        .iter()
        .enumerate()
        .flat_map(|(i, &n)| heap_ptr(n, i as u64))
        .collect();
    let resolve = |p: &[u8]| -> Result<Vec<u8>> {
        let i = u64::from_le_bytes(p[4..12].try_into().unwrap()) as usize;
        Ok(seqs[i].clone())
    };
    let dt = Datatype::VarSequence {
        size: 16,
        base: Box::new(Datatype::Float {
            size: 8,
            order: ByteOrder::Big,
            layout: FloatLayout::ieee(8),
        }),
    };
    assert_eq!(
        sha(&dt, &data, &resolve).1,
        "0be683d8a633f712ee910764c57667064842b6564bcdbc6c5bc30048f1197f9e"
    );
}
