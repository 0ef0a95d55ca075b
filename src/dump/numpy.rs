//! How h5py (3.16, over libhdf5 2.0) maps an HDF5 datatype
//! (File Format Specification IV.A.2.d) to a numpy dtype, and the `dtype.str`
//! spelling of the result (`<i8`, `|S10`, `|O`, `|b1`, `|V16`, ...).
//!
//! The dump compares these strings with the oracle's `expected/*.json`, so the rules
//! follow h5py's translation exactly, including its choices for unusual types:
//! non-IEEE floats widen to the smallest numpy float that holds them, a compound of
//! two floats named `r`/`i` is a complex number, a 1-byte-or-wider enum with exactly
//! the members `FALSE`=0 / `TRUE`=1 is numpy `bool`, opaque types tagged `NUMPY:<dt>`
//! are that dtype, and types numpy cannot hold (time class, 128-bit integers, IEEE
//! quad floats, new-style references, VAX floats) have no dtype at all.

//!
//! The mapping itself lives with the datatype model (`Datatype::numpy_str`,
//! `numpy_itemsize`, `is_bool_enum`, `complex_compound_part`,
//! `FloatLayout::numpy_float_size`, which also give `Datatype`'s `Display`);
//! what is here is only what the dump's hashing rules add to it.

use purehdf::low_level::datatype::Datatype;

/// True when numpy would hold Python objects for `dt` (vlen strings, vlen sequences,
/// object and region references anywhere inside).
pub fn has_object(dt: &Datatype) -> bool {
    match dt {
        Datatype::VarString { .. } | Datatype::VarSequence { .. } | Datatype::Reference { .. } => {
            true
        }
        Datatype::Compound { members, .. } => members.iter().any(|m| has_object(&m.dtype)),
        Datatype::Array { base, .. } | Datatype::Enum { base, .. } => has_object(base),
        _ => false,
    }
}

/// True when the compound's members, in file order, overlap or go backwards — numpy
/// then refuses `dtype.descr` and the oracle falls back to raw file bytes.
pub fn compound_out_of_order(dt: &Datatype) -> bool {
    match dt {
        Datatype::Compound { members, .. } => {
            if dt.complex_compound_part().is_some() {
                return false;
            }
            let mut end = 0u64;
            for m in members {
                let start = u64::from(m.offset);
                if start < end {
                    return true;
                }
                end = start.saturating_add(m.dtype.numpy_itemsize().unwrap_or(m.dtype.size()));
                if compound_out_of_order(&m.dtype) {
                    return true;
                }
            }
            false
        }
        Datatype::Array { base, .. } => compound_out_of_order(base),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use purehdf::low_level::datatype::{
        ByteOrder, CharSet, CompoundMember, EnumMember, FloatLayout, ReferenceKind, StringPad,
    };

    fn int(size: u32, order: ByteOrder, signed: bool) -> Datatype {
        Datatype::Integer {
            size,
            order,
            signed,
            bit_offset: 0,
            precision: (size * 8) as u16,
        }
    }

    fn float(size: u32, order: ByteOrder, fields: [u8; 5], bias: u32) -> Datatype {
        let [sign_pos, exp_pos, exp_size, mant_pos, mant_size] = fields;
        Datatype::Float {
            size,
            order,
            layout: FloatLayout {
                bit_offset: 0,
                precision: (size * 8) as u16,
                sign_pos,
                exp_pos,
                exp_size,
                mant_pos,
                mant_size,
                exp_bias: bias,
                norm: 2,
                pad: [false; 3],
            },
        }
    }

    fn member(name: &str, offset: u32, dtype: Datatype) -> CompoundMember {
        CompoundMember {
            name: name.into(),
            offset,
            dtype,
        }
    }

    fn enum_of(base: Datatype, names: &[(&str, u8)]) -> Datatype {
        Datatype::Enum {
            base: Box::new(base),
            members: names
                .iter()
                .map(|(n, v)| EnumMember {
                    name: (*n).into(),
                    value: vec![*v],
                })
                .collect(),
        }
    }

    /// Every row is a (type, dtype string) pair seen in the shared corpus's
    /// expected/*.json (h5py 3.16 over libhdf5 2.0).
    #[test]
    fn dtype_strings_match_the_oracle() {
        use ByteOrder::{Big as BE, Little as LE};
        let x87 = [79, 64, 15, 0, 64];
        let vstr = Datatype::VarString {
            size: 16,
            pad: StringPad::NullTerm,
            cset: CharSet::Utf8,
        };
        let table: Vec<(Datatype, Option<&str>)> = vec![
            (int(1, LE, true), Some("|i1")),
            (int(1, BE, false), Some("|u1")),
            (int(2, BE, true), Some(">i2")),
            (int(4, LE, true), Some("<i4")),
            (int(4, BE, false), Some(">u4")),
            (int(8, LE, false), Some("<u8")),
            (int(16, BE, false), None),
            (Datatype::float(2), Some("<f2")),
            (float(2, BE, [15, 10, 5, 0, 10], 15), Some(">f2")),
            (Datatype::float(4), Some("<f4")),
            (float(8, BE, [63, 52, 11, 0, 52], 1023), Some(">f8")),
            // bfloat16 widens to f4
            (float(2, BE, [15, 7, 8, 0, 7], 127), Some(">f4")),
            (float(4, LE, [26, 20, 6, 7, 13], 31), Some("<f4")),
            (float(12, LE, x87, 16383), Some("<f16")),
            (float(16, LE, x87, 16383), Some("<f16")),
            // IEEE quad and IBM double-double: no numpy type
            (float(16, LE, [127, 112, 15, 0, 112], 16383), None),
            (float(16, BE, [127, 116, 11, 0, 116], 1023), None),
            (
                Datatype::Float {
                    size: 8,
                    order: ByteOrder::Vax,
                    layout: FloatLayout::ieee(8),
                },
                None,
            ),
            (
                Datatype::String {
                    size: 10,
                    pad: StringPad::NullPad,
                    cset: CharSet::Ascii,
                },
                Some("|S10"),
            ),
            (vstr.clone(), Some("|O")),
            (
                Datatype::VarSequence {
                    size: 16,
                    base: Box::new(int(4, LE, true)),
                },
                Some("|O"),
            ),
            (
                Datatype::Reference {
                    size: 8,
                    kind: ReferenceKind::Object,
                },
                Some("|O"),
            ),
            (
                Datatype::Reference {
                    size: 12,
                    kind: ReferenceKind::Region,
                },
                Some("|O"),
            ),
            (
                Datatype::Reference {
                    size: 64,
                    kind: ReferenceKind::ObjectV2,
                },
                None,
            ),
            (
                Datatype::Bitfield {
                    size: 1,
                    order: BE,
                    bit_offset: 0,
                    precision: 8,
                },
                Some("|u1"),
            ),
            (
                Datatype::Bitfield {
                    size: 2,
                    order: LE,
                    bit_offset: 0,
                    precision: 16,
                },
                Some("<u2"),
            ),
            (
                Datatype::Opaque {
                    size: 7,
                    tag: "Character array".into(),
                },
                Some("|V7"),
            ),
            (
                Datatype::Opaque {
                    size: 8,
                    tag: "NUMPY:<M8[s]".into(),
                },
                Some("<M8[s]"),
            ),
            (
                Datatype::Opaque {
                    size: 21,
                    tag: "NUMPY:|S21".into(),
                },
                Some("|S21"),
            ),
            (
                Datatype::Time {
                    size: 4,
                    order: LE,
                    precision: 32,
                },
                None,
            ),
            (
                enum_of(int(1, LE, true), &[("FALSE", 0), ("TRUE", 1)]),
                Some("|b1"),
            ),
            (
                enum_of(int(1, BE, true), &[("FALSE", 0), ("TRUE", 1)]),
                Some("|b1"),
            ),
            (
                enum_of(int(1, LE, true), &[("FALSE", 0), ("TRUE", 2)]),
                Some("|i1"),
            ),
            (
                enum_of(int(1, LE, false), &[("A", 0), ("B", 1), ("C", 2)]),
                Some("|u1"),
            ),
            (
                Datatype::Enum {
                    base: Box::new(int(2, BE, true)),
                    members: vec![],
                },
                Some(">i2"),
            ),
            (
                Datatype::Complex {
                    size: 8,
                    base: Box::new(Datatype::float(4)),
                },
                Some("<c8"),
            ),
            (
                Datatype::Complex {
                    size: 32,
                    base: Box::new(float(16, BE, x87, 16383)),
                },
                Some(">c32"),
            ),
            // tcomplex.h5 /DatasetLongDoubleComplex: binary128 parts, still complex256
            (
                Datatype::Complex {
                    size: 32,
                    base: Box::new(float(16, LE, [127, 112, 15, 0, 112], 16383)),
                },
                Some("<c32"),
            ),
            (
                Datatype::Compound {
                    size: 16,
                    members: vec![
                        member("r", 0, Datatype::float(8)),
                        member("i", 8, Datatype::float(8)),
                    ],
                },
                Some("<c16"),
            ),
            (
                Datatype::Compound {
                    size: 4,
                    members: vec![
                        member("r", 0, Datatype::float(2)),
                        member("i", 2, Datatype::float(2)),
                    ],
                },
                Some("|V4"),
            ),
            (
                Datatype::Compound {
                    size: 16,
                    members: vec![
                        member("a", 0, int(4, LE, true)),
                        member("b", 8, Datatype::float(8)),
                    ],
                },
                Some("|V16"),
            ),
            (
                Datatype::Compound {
                    size: 16,
                    members: vec![member(
                        "t",
                        0,
                        Datatype::Time {
                            size: 4,
                            order: LE,
                            precision: 32,
                        },
                    )],
                },
                None,
            ),
            (
                Datatype::Array {
                    base: Box::new(int(4, LE, true)),
                    dims: vec![3],
                },
                Some("|V12"),
            ),
            (
                Datatype::Array {
                    base: Box::new(Datatype::Array {
                        base: Box::new(int(4, LE, true)),
                        dims: vec![6, 3],
                    }),
                    dims: vec![4],
                },
                Some("|V288"),
            ),
            // object pointers are 8 bytes in numpy: array[3] of vlen str -> |V24
            (
                Datatype::Array {
                    base: Box::new(vstr),
                    dims: vec![3],
                },
                Some("|V24"),
            ),
            (
                Datatype::Array {
                    base: Box::new(Datatype::Complex {
                        size: 8,
                        base: Box::new(Datatype::float(4)),
                    }),
                    dims: vec![10, 10],
                },
                Some("|V800"),
            ),
        ];
        for (dt, want) in table {
            assert_eq!(dt.numpy_str().as_deref(), want, "{dt:?}");
        }
    }

    #[test]
    fn compounds_with_vlen_strings_shrink_to_memory_size() {
        // golden sb0_earliest.h5 /types/compound_vlen: {id <i4 @0, label vlen str @4},
        // 20 bytes in the file, |V12 for h5py (char* is 8 bytes)
        let dt = Datatype::Compound {
            size: 20,
            members: vec![
                member("id", 0, int(4, ByteOrder::Little, true)),
                member(
                    "label",
                    4,
                    Datatype::VarString {
                        size: 16,
                        pad: StringPad::NullTerm,
                        cset: CharSet::Utf8,
                    },
                ),
            ],
        };
        assert_eq!(dt.numpy_str().as_deref(), Some("|V12"));
    }

    #[test]
    fn out_of_order_compounds() {
        // hdf5-json sample.h5 /dset2: members c@8, b@4 -> numpy refuses descr
        let dt = Datatype::Compound {
            size: 16,
            members: vec![
                member("c", 8, Datatype::float(8)),
                member("b", 4, Datatype::float(4)),
            ],
        };
        assert!(compound_out_of_order(&dt));
        let ok = Datatype::Compound {
            size: 16,
            members: vec![
                member("b", 4, Datatype::float(4)),
                member("c", 8, Datatype::float(8)),
            ],
        };
        assert!(!compound_out_of_order(&ok));
    }
}
