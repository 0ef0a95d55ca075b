//! Datatype message (HDF5 File Format Specification IV.A.2.d): every class (fixed
//! point, float, time, string, bitfield, opaque, compound v1–v3, reference, enum,
//! variable-length, array v2/v3, complex) decoded into the shared
//! [`Datatype`] model here, and encoded from it by [`encode()`].

mod encode;
pub use encode::encode;

use crate::cursor::Cursor;
use crate::datatype::{
    ByteOrder, CharSet, CompoundMember, Datatype, EnumMember, FloatLayout, ReferenceKind, StringPad,
};
use crate::error::{Error, Result};
use crate::limits;

/// Decode one datatype message body (or an embedded member type).
pub fn decode(c: &mut Cursor<'_>) -> Result<Datatype> {
    decode_depth(c, 0)
}

fn decode_depth(c: &mut Cursor<'_>, depth: usize) -> Result<Datatype> {
    if depth > limits::MAX_DATATYPE_DEPTH {
        return Err(Error::Limit {
            structure: c.structure(),
            offset: c.offset(),
            what: "datatype nesting depth",
            value: depth as u64,
            limit: limits::MAX_DATATYPE_DEPTH as u64,
        });
    }
    let start = c.offset();
    let cv = c.u8()?;
    let class = cv & 0x0f;
    let version = cv >> 4;
    let bits = c.array::<3>()?;
    let b0 = bits[0];
    let bits16 = u16::from_le_bytes([bits[0], bits[1]]);
    let size = c.u32()?;
    if !(1..=5).contains(&version) {
        return Err(Error::unsupported(
            c.structure(),
            start,
            format!("datatype version {version}"),
        ));
    }
    let order = if b0 & 1 != 0 {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };
    let dt = match class {
        0 => {
            let bit_offset = c.u16()?;
            let precision = c.u16()?;
            Datatype::Integer {
                size,
                order,
                signed: b0 & 0x08 != 0,
                bit_offset,
                precision,
            }
        }
        1 => {
            let order = match (b0 & 0x01, b0 & 0x40) {
                (0, 0) => ByteOrder::Little,
                (1, 0) => ByteOrder::Big,
                (1, _) => ByteOrder::Vax,
                _ => return Err(Error::malformed(c.structure(), start, "float byte order")),
            };
            let layout = FloatLayout {
                bit_offset: c.u16()?,
                precision: c.u16()?,
                exp_pos: c.u8()?,
                exp_size: c.u8()?,
                mant_pos: c.u8()?,
                mant_size: c.u8()?,
                exp_bias: c.u32()?,
                sign_pos: bits[1],
                norm: (b0 >> 4) & 0x03,
                pad: [b0 & 0x02 != 0, b0 & 0x04 != 0, b0 & 0x08 != 0],
            };
            Datatype::Float {
                size,
                order,
                layout,
            }
        }
        2 => Datatype::Time {
            size,
            order,
            precision: c.u16()?,
        },
        3 => Datatype::String {
            size,
            pad: string_pad(b0 & 0x0f),
            cset: char_set(b0 >> 4),
        },
        4 => Datatype::Bitfield {
            size,
            order,
            bit_offset: c.u16()?,
            precision: c.u16()?,
        },
        5 => {
            let tag_len = usize::from(b0);
            let tag = c.bytes(tag_len)?;
            let end = tag.iter().position(|&b| b == 0).unwrap_or(tag.len());
            let tag = String::from_utf8_lossy(tag.get(..end).unwrap_or(&[])).into_owned();
            Datatype::Opaque { size, tag }
        }
        6 => compound(c, version, size, bits16, depth)?,
        7 => {
            let t = b0 & 0x0f;
            let kind = match (version, t) {
                (_, 0) => ReferenceKind::Object,
                (_, 1) => ReferenceKind::Region,
                (4.., 2) => ReferenceKind::ObjectV2,
                (4.., 3) => ReferenceKind::RegionV2,
                (4.., 4) => ReferenceKind::AttributeV2,
                (_, t) => ReferenceKind::Unknown(t),
            };
            Datatype::Reference { size, kind }
        }
        8 => {
            let base = decode_depth(c, depth + 1)?;
            let n = usize::from(bits16);
            let mut names = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                names.push(member_name(c, version < 3)?);
            }
            let vsize = usize::try_from(base.size()).map_err(|_| c.malformed("enum base size"))?;
            let mut members = Vec::with_capacity(n.min(1024));
            for name in names {
                members.push(EnumMember {
                    name,
                    value: c.bytes(vsize)?.to_vec(),
                });
            }
            Datatype::Enum {
                base: Box::new(base),
                members,
            }
        }
        9 => {
            let base = decode_depth(c, depth + 1)?;
            match b0 & 0x0f {
                0 => Datatype::VarSequence {
                    size,
                    base: Box::new(base),
                },
                1 => Datatype::VarString {
                    size,
                    pad: string_pad(b0 >> 4),
                    cset: char_set(bits[1] & 0x0f),
                },
                t => {
                    return Err(Error::malformed(
                        c.structure(),
                        start,
                        format!("vlen type {t}"),
                    ))
                }
            }
        }
        10 => {
            let rank = usize::from(c.u8()?);
            if rank > limits::MAX_RANK {
                return Err(c.malformed(format!("array rank {rank}")));
            }
            if version < 3 {
                c.skip(3)?;
            }
            let mut dims = Vec::with_capacity(rank);
            for _ in 0..rank {
                dims.push(u64::from(c.u32()?));
            }
            if version < 3 {
                c.skip(4 * rank)?; // permutation indices (unused by the library)
            }
            let base = decode_depth(c, depth + 1)?;
            Datatype::Array {
                base: Box::new(base),
                dims,
            }
        }
        11 => {
            let base = decode_depth(c, depth + 1)?;
            Datatype::Complex {
                size,
                base: Box::new(base),
            }
        }
        k => {
            return Err(Error::unsupported(
                c.structure(),
                start,
                format!("datatype class {k}"),
            ))
        }
    };
    Ok(dt)
}

fn string_pad(v: u8) -> StringPad {
    match v {
        1 => StringPad::NullPad,
        2 => StringPad::SpacePad,
        _ => StringPad::NullTerm,
    }
}

fn char_set(v: u8) -> CharSet {
    if v == 1 {
        CharSet::Utf8
    } else {
        CharSet::Ascii
    }
}

/// A NUL-terminated member name, padded to a multiple of 8 bytes when `padded`.
fn member_name(c: &mut Cursor<'_>, padded: bool) -> Result<String> {
    let s = c.cstr()?;
    if padded {
        let used = s.len() + 1;
        c.skip((8 - used % 8) % 8)?;
    }
    Ok(String::from_utf8_lossy(s).into_owned())
}

fn compound(
    c: &mut Cursor<'_>,
    version: u8,
    size: u32,
    nmembers: u16,
    depth: usize,
) -> Result<Datatype> {
    let n = usize::from(nmembers);
    let mut members = Vec::with_capacity(n.min(1024));
    let off_len = match size {
        0..=0xff => 1,
        0x100..=0xffff => 2,
        0x1_0000..=0xff_ffff => 3,
        _ => 4,
    };
    for _ in 0..n {
        let name = member_name(c, version < 3)?;
        let offset = if version >= 3 {
            c.uint(off_len)? as u32
        } else {
            c.u32()?
        };
        let dtype = if version == 1 {
            let rank = usize::from(c.u8()?);
            c.skip(3 + 4 + 4)?;
            let mut dims = Vec::new();
            for i in 0..4 {
                let d = c.u32()?;
                if i < rank {
                    dims.push(u64::from(d));
                }
            }
            if rank > 4 {
                return Err(c.malformed(format!("compound v1 member rank {rank}")));
            }
            let base = decode_depth(c, depth + 1)?;
            if rank == 0 {
                base
            } else {
                Datatype::Array {
                    base: Box::new(base),
                    dims,
                }
            }
        } else {
            decode_depth(c, depth + 1)?
        };
        members.push(CompoundMember {
            name,
            offset,
            dtype,
        });
    }
    Ok(Datatype::Compound { size, members })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(b: &[u8]) -> Result<Datatype> {
        decode(&mut Cursor::new(b, 0, "datatype"))
    }

    fn hdr(class: u8, version: u8, bits: [u8; 3], size: u32) -> Vec<u8> {
        let mut v = vec![class | (version << 4)];
        v.extend_from_slice(&bits);
        v.extend_from_slice(&size.to_le_bytes());
        v
    }

    fn int_le(size: u32, signed: bool) -> Vec<u8> {
        let mut b = hdr(0, 1, [if signed { 8 } else { 0 }, 0, 0], size);
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&((size * 8) as u16).to_le_bytes());
        b
    }

    #[test]
    fn integer_and_float() {
        assert_eq!(dec(&int_le(4, true)).unwrap(), Datatype::int(4, true));
        let mut b = hdr(1, 1, [0x20, 63, 0], 8);
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&64u16.to_le_bytes());
        b.extend_from_slice(&[52, 11, 0, 52]);
        b.extend_from_slice(&1023u32.to_le_bytes());
        assert_eq!(dec(&b).unwrap(), Datatype::float(8));
        let mut b = hdr(1, 1, [0x21, 15, 0], 2);
        b.extend_from_slice(&[0, 0, 16, 0, 10, 5, 0, 10, 15, 0, 0, 0]);
        match dec(&b).unwrap() {
            Datatype::Float { order, layout, .. } => {
                assert_eq!(order, ByteOrder::Big);
                assert_eq!(layout, FloatLayout::ieee(2));
            }
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn strings() {
        let b = hdr(3, 1, [0x11, 0, 0], 7);
        assert_eq!(
            dec(&b).unwrap(),
            Datatype::String {
                size: 7,
                pad: StringPad::NullPad,
                cset: CharSet::Utf8
            }
        );
        let mut b = hdr(9, 1, [0x01, 0x01, 0], 16);
        b.extend(hdr(0, 1, [0, 0, 0], 1));
        b.extend_from_slice(&[0, 0, 8, 0]);
        assert_eq!(
            dec(&b).unwrap(),
            Datatype::VarString {
                size: 16,
                pad: StringPad::NullTerm,
                cset: CharSet::Utf8
            }
        );
    }

    #[test]
    fn compound_v1_v3_enum_array() {
        // v1 compound: member "a" (padded to 8), offset 0, no dims, i4.
        let mut b = hdr(6, 1, [1, 0, 0], 4);
        b.extend_from_slice(b"a\0\0\0\0\0\0\0");
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&[0; 4 + 4 + 4 + 16]);
        b.extend(int_le(4, true));
        let Datatype::Compound { members, .. } = dec(&b).unwrap() else {
            panic!()
        };
        assert_eq!(members[0].name, "a");
        assert_eq!(members[0].dtype, Datatype::int(4, true));
        // v3 compound: two members, 1-byte offsets, unpadded names.
        let mut b = hdr(6, 3, [2, 0, 0], 5);
        b.extend_from_slice(b"x\0\0");
        b.extend(int_le(1, false));
        b.extend_from_slice(b"yy\0\x01");
        b.extend(int_le(4, false));
        let Datatype::Compound { size, members } = dec(&b).unwrap() else {
            panic!()
        };
        assert_eq!(size, 5);
        assert_eq!(members[1].name, "yy");
        assert_eq!(members[1].offset, 1);
        // v3 enum with two members.
        let mut b = hdr(8, 3, [2, 0, 0], 1);
        b.extend(int_le(1, false));
        b.extend_from_slice(b"RED\0GREEN\0");
        b.extend_from_slice(&[0, 1]);
        let Datatype::Enum { members, .. } = dec(&b).unwrap() else {
            panic!()
        };
        assert_eq!(members[1].name, "GREEN");
        assert_eq!(members[1].value, vec![1]);
        // v3 array of 2x3 i4.
        let mut b = hdr(10, 3, [0, 0, 0], 24);
        b.push(2);
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&3u32.to_le_bytes());
        b.extend(int_le(4, true));
        let dt = dec(&b).unwrap();
        assert_eq!(dt.size(), 24);
    }

    #[test]
    fn references_and_errors() {
        assert_eq!(
            dec(&hdr(7, 1, [0, 0, 0], 8)).unwrap(),
            Datatype::Reference {
                size: 8,
                kind: ReferenceKind::Object
            }
        );
        assert!(dec(&hdr(12, 1, [0, 0, 0], 8)).is_err());
        assert!(dec(&hdr(0, 1, [0, 0, 0], 8)).is_err());
        assert!(dec(&[]).is_err());
        // Deeply nested vlen-of-vlen... hits the depth limit, not the stack.
        let mut b = Vec::new();
        for _ in 0..100 {
            b.extend(hdr(9, 1, [0, 0, 0], 16));
        }
        assert!(matches!(
            dec(&b),
            Err(Error::Limit { .. }) | Err(Error::Truncated { .. })
        ));
    }
}
