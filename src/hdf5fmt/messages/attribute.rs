//! Attribute message (HDF5 File Format Specification IV.A.2.m): decodes
//! versions 1–3, with shared datatypes/dataspaces resolved through a
//! caller-supplied lookup, and encodes version 3.

use crate::cursor::Cursor;
use crate::datatype::Datatype;
use crate::encode::{put_u16, u16_len};
use crate::error::{Error, Result};
use crate::messages::dataspace::Dataspace;
use crate::messages::shared::SharedRef;
use crate::messages::{datatype, types};
use crate::Sizes;

/// A decoded attribute: name, type, space and raw value bytes in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttributeMessage {
    /// Attribute name, up to its first null byte (the stored name's terminator and padding
    /// dropped).
    pub name: String,
    /// Attribute datatype, resolved through the shared-message lookup when the message flags mark
    /// it shared.
    pub dtype: Datatype,
    /// Attribute dataspace, resolved through the shared-message lookup when the message flags mark
    /// it shared.
    pub space: Dataspace,
    /// Raw attribute value: the dataspace's element count times the datatype size, in bytes as
    /// stored (variable-length elements are global heap references).
    pub data: Vec<u8>,
}

/// Returns the body of the message of type `mtype` a shared reference points at.
pub type SharedLookup<'a> = &'a dyn Fn(u16, &SharedRef) -> Result<Vec<u8>>;

fn padded(n: usize, pad: bool) -> usize {
    if pad {
        n.div_ceil(8) * 8
    } else {
        n
    }
}

impl AttributeMessage {
    /// Decode an attribute message body.
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes, lookup: SharedLookup<'_>) -> Result<Self> {
        let version = c.u8()?;
        if !(1..=3).contains(&version) {
            return Err(c.unsupported(format!("attribute message version {version}")));
        }
        let flags = c.u8()?;
        let name_len = usize::from(c.u16()?);
        let dt_len = usize::from(c.u16()?);
        let ds_len = usize::from(c.u16()?);
        if version == 3 {
            c.u8()?; // name character set
        }
        let pad = version == 1;
        let mut nc = c.sub(padded(name_len, pad).min(c.remaining().max(name_len)))?;
        let raw = nc.bytes(name_len)?;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        let name = String::from_utf8_lossy(raw.get(..end).unwrap_or(&[])).into_owned();
        let mut dc = c.sub(padded(dt_len, pad).min(c.remaining().max(dt_len)))?;
        let dtype = if version >= 2 && flags & 1 != 0 {
            let r = SharedRef::decode(&mut dc, sizes)?;
            let body = lookup(types::DATATYPE, &r)?;
            datatype::decode(&mut Cursor::new(&body, c.offset(), "shared datatype"))?
        } else {
            datatype::decode(&mut dc)?
        };
        let mut sc = c.sub(padded(ds_len, pad).min(c.remaining().max(ds_len)))?;
        let space = if version >= 2 && flags & 2 != 0 {
            let r = SharedRef::decode(&mut sc, sizes)?;
            let body = lookup(types::DATASPACE, &r)?;
            Dataspace::decode(
                &mut Cursor::new(&body, c.offset(), "shared dataspace"),
                sizes,
            )?
        } else {
            Dataspace::decode(&mut sc, sizes)?
        };
        let n = space
            .num_elements()
            .and_then(|e| e.checked_mul(dtype.size()))
            .ok_or_else(|| c.malformed("attribute data size overflows"))?;
        let data = c.bytes_u64(n)?.to_vec();
        Ok(AttributeMessage {
            name,
            dtype,
            space,
            data,
        })
    }
}

/// Encode an attribute message, version 3: `dtype_msg` and `space_msg` are
/// encoded datatype and dataspace messages, `data` the raw element bytes.
/// `flags` bit 0: `dtype_msg` is a shared message pointing at a committed
/// datatype. The name's character set is UTF-8 when it is not ASCII.
pub fn encode(
    name: &str,
    flags: u8,
    dtype_msg: &[u8],
    space_msg: &[u8],
    data: &[u8],
) -> Result<Vec<u8>> {
    if name.is_empty() || name.as_bytes().contains(&0) {
        return Err(Error::InvalidArgument(format!(
            "bad attribute name {name:?}"
        )));
    }
    let mut out = vec![3, flags & 1];
    put_u16(&mut out, u16_len(name.len() + 1, "attribute name")?);
    put_u16(&mut out, u16_len(dtype_msg.len(), "attribute datatype")?);
    put_u16(&mut out, u16_len(space_msg.len(), "attribute dataspace")?);
    out.push(u8::from(!name.is_ascii()));
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    out.extend_from_slice(dtype_msg);
    out.extend_from_slice(space_msg);
    out.extend_from_slice(data);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_shared(_: u16, _: &SharedRef) -> Result<Vec<u8>> {
        Err(Error::NotFound("shared".into()))
    }

    fn int4() -> Vec<u8> {
        vec![0x10, 0x08, 0, 0, 4, 0, 0, 0, 0, 0, 32, 0]
    }

    #[test]
    fn encode_v3_round_trip() {
        let space = Dataspace::simple(&[2]);
        let data: Vec<u8> = [5i32, -6].iter().flat_map(|v| v.to_le_bytes()).collect();
        for name in ["temp", "température"] {
            let b = encode(name, 0, &int4(), &space.encode(Sizes::default()), &data).unwrap();
            let a = AttributeMessage::decode(
                &mut Cursor::new(&b, 0, "a"),
                Sizes::default(),
                &no_shared,
            )
            .unwrap();
            let want = AttributeMessage {
                name: name.into(),
                dtype: Datatype::int(4, true),
                space: space.clone(),
                data: data.clone(),
            };
            assert_eq!(a, want);
        }
        assert!(encode("", 0, &int4(), &[2, 0, 0, 0], &[]).is_err());
        assert!(encode("a\0b", 0, &int4(), &[2, 0, 0, 0], &[]).is_err());
        // flags bit 0 marks a shared datatype, the decoder asks the lookup
        let shared = crate::messages::shared::SharedRef::ObjectHeader(0x40);
        let b = encode(
            "s",
            1,
            &shared.encode(Sizes::default()),
            &Dataspace::scalar().encode(Sizes::default()),
            &[1, 0, 0, 0],
        )
        .unwrap();
        let lookup = |t: u16, r: &SharedRef| -> Result<Vec<u8>> {
            assert_eq!((t, r), (types::DATATYPE, &shared));
            Ok(int4())
        };
        let a = AttributeMessage::decode(&mut Cursor::new(&b, 0, "a"), Sizes::default(), &lookup)
            .unwrap();
        assert_eq!(a.dtype, Datatype::int(4, true));
    }

    #[test]
    fn v1_and_v3() {
        // v1: name "ab\0" padded to 8, i4 type (12 -> 16), scalar v1 space (8).
        let mut b = vec![1u8, 0, 3, 0, 12, 0, 8, 0];
        b.extend_from_slice(b"ab\0\0\0\0\0\0");
        b.extend(int4());
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        b.extend_from_slice(&7i32.to_le_bytes());
        let a =
            AttributeMessage::decode(&mut Cursor::new(&b, 0, "a"), Sizes::default(), &no_shared)
                .unwrap();
        assert_eq!(a.name, "ab");
        assert_eq!(a.dtype, Datatype::int(4, true));
        assert_eq!(a.data, 7i32.to_le_bytes().to_vec());

        // v3: 1-d space of 2 elements.
        let mut b = vec![3u8, 0, 2, 0, 12, 0, 12, 0, 0];
        b.extend_from_slice(b"x\0");
        b.extend(int4());
        b.extend_from_slice(&[2, 1, 0, 1]);
        b.extend_from_slice(&2u64.to_le_bytes());
        b.extend_from_slice(&1i32.to_le_bytes());
        b.extend_from_slice(&2i32.to_le_bytes());
        let a =
            AttributeMessage::decode(&mut Cursor::new(&b, 0, "a"), Sizes::default(), &no_shared)
                .unwrap();
        assert_eq!(a.space.dims, vec![2]);
        assert_eq!(a.data.len(), 8);
        // truncated data
        let short = &b[..b.len() - 1];
        assert!(AttributeMessage::decode(
            &mut Cursor::new(short, 0, "a"),
            Sizes::default(),
            &no_shared
        )
        .is_err());
        // shared datatype flag goes through the lookup
        let mut s = b.clone();
        s[1] = 1;
        assert!(AttributeMessage::decode(
            &mut Cursor::new(&s, 0, "a"),
            Sizes::default(),
            &no_shared
        )
        .is_err());
    }
}
