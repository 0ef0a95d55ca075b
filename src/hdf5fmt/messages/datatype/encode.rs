//! Encoder of the datatype message (HDF5 File Format Specification IV.A.2.d),
//! beside its decoder in the parent module: every class the writer emits, at
//! the lowest version the tree
//! needs (1 for atomic trees, 3 with compounds, enums, arrays or VAX floats, 4
//! with revised references, 5 with complex numbers).

use crate::datatype::{ByteOrder, CharSet, Datatype, ReferenceKind, StringPad};
use crate::encode::{limit_enc_size, put_u16, put_u32, put_var};
use crate::error::{Error, Result};

/// Datatype message version a tree needs: 5 for complex numbers, 4 with revised
/// references inside, 3 with compounds, enums or arrays or VAX floats (libhdf5
/// ignores the VAX bit below version 3), else 1.
fn version_needed(dt: &Datatype) -> u8 {
    match dt {
        Datatype::Reference {
            kind: ReferenceKind::ObjectV2 | ReferenceKind::RegionV2 | ReferenceKind::AttributeV2,
            ..
        } => 4,
        Datatype::Compound { members, .. } => {
            // a plain loop: rustc 1.95 -O miscompiled the iterator form
            // (`map(version_needed).max().unwrap_or(3).max(3)` returned 1)
            let mut v = 3;
            for m in members {
                v = v.max(version_needed(&m.dtype));
            }
            v
        }
        Datatype::Enum { base, .. } | Datatype::Array { base, .. } => version_needed(base).max(3),
        Datatype::VarSequence { base, .. } => version_needed(base),
        Datatype::Complex { .. } => 5,
        Datatype::Float {
            order: ByteOrder::Vax,
            ..
        } => 3,
        _ => 1,
    }
}

/// Datatype message (version 1 for atomic trees, 3 when compounds, enums or
/// arrays appear, 4 with revised references).
pub fn encode(dt: &Datatype) -> Result<Vec<u8>> {
    let version = version_needed(dt);
    let mut out = Vec::new();
    encode_datatype(dt, version, &mut out, 0)?;
    Ok(out)
}

/// Reference type bits (class 7): the `H5R_type_t` value, plus encoding version
/// 1 in bits 4-7 for revised references.
fn reference_bits(kind: ReferenceKind) -> Result<u32> {
    match kind {
        ReferenceKind::Object => Ok(0),
        ReferenceKind::Region => Ok(1),
        ReferenceKind::ObjectV2 => Ok(2 | 1 << 4),
        ReferenceKind::RegionV2 => Ok(3 | 1 << 4),
        ReferenceKind::AttributeV2 => Ok(4 | 1 << 4),
        ReferenceKind::Unknown(t) => Err(Error::InvalidArgument(format!(
            "unknown reference type {t}"
        ))),
    }
}

fn order_bit(order: ByteOrder) -> Result<u32> {
    match order {
        ByteOrder::Little => Ok(0),
        ByteOrder::Big => Ok(1),
        ByteOrder::Vax => Err(Error::InvalidArgument(
            "the writer does not encode VAX byte order".into(),
        )),
    }
}

/// Float byte-order bits (class 1): bit 0 big-endian, bits 0 and 6 together
/// VAX mixed-endian.
fn float_order_bits(order: ByteOrder) -> u32 {
    match order {
        ByteOrder::Little => 0,
        ByteOrder::Big => 1,
        ByteOrder::Vax => 1 | 1 << 6,
    }
}

fn pad_bits(pad: StringPad) -> u32 {
    match pad {
        StringPad::NullTerm => 0,
        StringPad::NullPad => 1,
        StringPad::SpacePad => 2,
    }
}

fn cset_bits(cset: CharSet) -> u32 {
    match cset {
        CharSet::Ascii => 0,
        CharSet::Utf8 => 1,
    }
}

fn header(out: &mut Vec<u8>, class: u8, version: u8, bits: u32, size: u64) -> Result<()> {
    out.push(class | (version << 4));
    out.extend_from_slice(&bits.to_le_bytes()[..3]);
    let size = u32::try_from(size)
        .map_err(|_| Error::InvalidArgument(format!("datatype size {size} too large")))?;
    put_u32(out, size);
    Ok(())
}

fn encode_datatype(dt: &Datatype, version: u8, out: &mut Vec<u8>, depth: usize) -> Result<()> {
    if depth > crate::limits::MAX_DATATYPE_DEPTH {
        return Err(Error::InvalidArgument("datatype nested too deeply".into()));
    }
    match dt {
        Datatype::Integer {
            size,
            order,
            signed,
            bit_offset,
            precision,
        } => {
            let bits = order_bit(*order)? | (u32::from(*signed) << 3);
            header(out, 0, version, bits, u64::from(*size))?;
            put_u16(out, *bit_offset);
            put_u16(out, *precision);
        }
        Datatype::Float {
            size,
            order,
            layout,
        } => {
            let mut bits = float_order_bits(*order);
            for (i, p) in layout.pad.iter().enumerate() {
                bits |= u32::from(*p) << (1 + i);
            }
            bits |= u32::from(layout.norm & 3) << 4;
            bits |= u32::from(layout.sign_pos) << 8;
            header(out, 1, version, bits, u64::from(*size))?;
            put_u16(out, layout.bit_offset);
            put_u16(out, layout.precision);
            out.extend_from_slice(&[
                layout.exp_pos,
                layout.exp_size,
                layout.mant_pos,
                layout.mant_size,
            ]);
            put_u32(out, layout.exp_bias);
        }
        Datatype::String { size, pad, cset } => {
            let bits = pad_bits(*pad) | (cset_bits(*cset) << 4);
            header(out, 3, version, bits, u64::from(*size))?;
        }
        Datatype::Bitfield {
            size,
            order,
            bit_offset,
            precision,
        } => {
            header(out, 4, version, order_bit(*order)?, u64::from(*size))?;
            put_u16(out, *bit_offset);
            put_u16(out, *precision);
        }
        Datatype::Opaque { size, tag } => {
            let padded = (tag.len() + 1).div_ceil(8) * 8;
            if padded > 255 {
                return Err(Error::InvalidArgument("opaque tag too long".into()));
            }
            header(out, 5, version, padded as u32, u64::from(*size))?;
            out.extend_from_slice(tag.as_bytes());
            out.resize(out.len() + padded - tag.len(), 0);
        }
        Datatype::Compound { size, members } => {
            if version < 3 {
                return Err(Error::InvalidArgument("compound needs version 3".into()));
            }
            let n = u16::try_from(members.len())
                .map_err(|_| Error::InvalidArgument("too many compound members".into()))?;
            header(out, 6, version, u32::from(n), u64::from(*size))?;
            let off_bytes = limit_enc_size(u64::from(*size));
            for m in members {
                if m.name.as_bytes().contains(&0) || m.name.is_empty() {
                    return Err(Error::InvalidArgument(format!(
                        "bad compound member name {:?}",
                        m.name
                    )));
                }
                let end = u64::from(m.offset) + m.dtype.size();
                if end > u64::from(*size) {
                    return Err(Error::InvalidArgument(format!(
                        "compound member {} ends past the compound size",
                        m.name
                    )));
                }
                out.extend_from_slice(m.name.as_bytes());
                out.push(0);
                put_var(out, u64::from(m.offset), off_bytes);
                encode_datatype(&m.dtype, version, out, depth + 1)?;
            }
        }
        Datatype::Enum { base, members } => {
            if version < 3 {
                return Err(Error::InvalidArgument("enum needs version 3".into()));
            }
            let n = u16::try_from(members.len())
                .map_err(|_| Error::InvalidArgument("too many enum members".into()))?;
            header(out, 8, version, u32::from(n), base.size())?;
            encode_datatype(base, version, out, depth + 1)?;
            for m in members {
                out.extend_from_slice(m.name.as_bytes());
                out.push(0);
            }
            for m in members {
                if m.value.len() as u64 != base.size() {
                    return Err(Error::InvalidArgument(format!(
                        "enum value of {} has the wrong size",
                        m.name
                    )));
                }
                out.extend_from_slice(&m.value);
            }
        }
        Datatype::VarString { pad, cset, .. } => {
            let bits = 1 | (pad_bits(*pad) << 4) | (cset_bits(*cset) << 8);
            header(out, 9, version, bits, 16)?;
            encode_datatype(&Datatype::int(1, false), version, out, depth + 1)?;
        }
        Datatype::VarSequence { base, .. } => {
            header(out, 9, version, 0, 16)?;
            encode_datatype(base, version, out, depth + 1)?;
        }
        Datatype::Array { base, dims } => {
            if version < 3 {
                return Err(Error::InvalidArgument("array needs version 3".into()));
            }
            header(out, 10, version, 0, dt.size())?;
            out.push(dims.len() as u8);
            for &d in dims {
                let d = u32::try_from(d)
                    .map_err(|_| Error::InvalidArgument("array dimension too large".into()))?;
                put_u32(out, d);
            }
            encode_datatype(base, version, out, depth + 1)?;
        }
        Datatype::Reference { size, kind } => {
            header(out, 7, version, reference_bits(*kind)?, u64::from(*size))?;
        }
        Datatype::Complex { size, base } => {
            // homogeneous, rectangular form
            header(out, 11, version, 1, u64::from(*size))?;
            encode_datatype(base, version, out, depth + 1)?;
        }
        Datatype::Time {
            size,
            order,
            precision,
        } => {
            header(out, 2, version, order_bit(*order)?, u64::from(*size))?;
            put_u16(out, *precision);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datatype_versions() {
        use crate::datatype::CompoundMember;
        let comp = Datatype::Compound {
            size: 12,
            members: vec![
                CompoundMember {
                    name: "a".into(),
                    offset: 0,
                    dtype: Datatype::int(4, true),
                },
                CompoundMember {
                    name: "r".into(),
                    offset: 4,
                    dtype: Datatype::Reference {
                        size: 8,
                        kind: ReferenceKind::Object,
                    },
                },
            ],
        };
        assert_eq!(version_needed(&comp), 3);
        assert_eq!(encode(&comp).unwrap()[0], 0x36);
        let rev = Datatype::Reference {
            size: 18,
            kind: ReferenceKind::ObjectV2,
        };
        assert_eq!(encode(&rev).unwrap(), vec![0x47, 0x12, 0, 0, 18, 0, 0, 0]);
        let seq = Datatype::VarSequence {
            size: 16,
            base: Box::new(Datatype::Reference {
                size: 8,
                kind: ReferenceKind::Object,
            }),
        };
        assert_eq!(encode(&seq).unwrap()[..2], [0x19, 0]);
        assert_eq!(encode(&Datatype::int(2, false)).unwrap()[0], 0x10);
        let arr = Datatype::Array {
            base: Box::new(comp.clone()),
            dims: vec![2],
        };
        assert_eq!(version_needed(&arr), 3);
        let with_rev = Datatype::Compound {
            size: 18,
            members: vec![CompoundMember {
                name: "r".into(),
                offset: 0,
                dtype: rev.clone(),
            }],
        };
        assert_eq!(version_needed(&with_rev), 4);
        let cplx = Datatype::Complex {
            size: 8,
            base: Box::new(Datatype::float(4)),
        };
        assert_eq!(encode(&cplx).unwrap()[..8], [0x5B, 1, 0, 0, 8, 0, 0, 0]);
        let time = Datatype::Time {
            size: 4,
            order: ByteOrder::Big,
            precision: 32,
        };
        assert_eq!(
            encode(&time).unwrap(),
            vec![0x12, 1, 0, 0, 4, 0, 0, 0, 32, 0]
        );
    }

    #[test]
    fn int_and_float_datatypes() {
        let b = encode(&Datatype::int(4, true)).unwrap();
        assert_eq!(b, vec![0x10, 0x08, 0, 0, 4, 0, 0, 0, 0, 0, 32, 0]);
        let f = encode(&Datatype::float(8)).unwrap();
        assert_eq!(&f[..8], &[0x11, 0x20, 63, 0, 8, 0, 0, 0]);
        assert_eq!(&f[8..], &[0, 0, 64, 0, 52, 11, 0, 52, 0xFF, 3, 0, 0]);
    }

    #[test]
    fn vax_float_round_trips_through_the_reader() {
        use crate::cursor::Cursor;
        use crate::datatype::FloatLayout;
        let vax = Datatype::Float {
            size: 4,
            order: ByteOrder::Vax,
            layout: FloatLayout {
                bit_offset: 0,
                precision: 32,
                sign_pos: 31,
                exp_pos: 23,
                exp_size: 8,
                mant_pos: 0,
                mant_size: 23,
                exp_bias: 129,
                norm: 2,
                pad: [false; 3],
            },
        };
        let b = encode(&vax).unwrap();
        // Class 1, version 3; bits 0 and 6 (VAX), norm 2 in bits 4-5.
        assert_eq!(&b[..4], &[0x31, 0x61, 31, 0]);
        let back = super::super::decode(&mut Cursor::new(&b, 0, "t")).unwrap();
        assert_eq!(back, vax);
        // Integers have no VAX order.
        let bad = Datatype::Integer {
            size: 4,
            order: ByteOrder::Vax,
            signed: true,
            bit_offset: 0,
            precision: 32,
        };
        assert!(encode(&bad).is_err());
    }
}
