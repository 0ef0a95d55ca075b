//! Fill value messages (HDF5 File Format Specification IV.A.2.e "Fill Value
//! (Old)" and IV.A.2.f "Fill Value"): decodes versions 1–3, encodes version 3.

use crate::cursor::{bounded, Cursor};
use crate::encode::put_u32;
use crate::error::{Error, Result};
use crate::limits;

/// Whether and how a fill value was defined (`H5Pfill_value_defined`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FillValue {
    /// No fill value: unwritten data is undefined.
    Undefined,
    /// The library default (zeros).
    Default,
    /// A user-defined value (bytes of one element in file order).
    User(Vec<u8>),
}

impl FillValue {
    /// `"undefined"`, `"default"` or `"user"`.
    pub fn state_name(&self) -> &'static str {
        match self {
            FillValue::Undefined => "undefined",
            FillValue::Default => "default",
            FillValue::User(_) => "user",
        }
    }

    /// The user bytes, if any.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            FillValue::User(b) => Some(b),
            _ => None,
        }
    }
}

fn value(c: &mut Cursor<'_>) -> Result<FillValue> {
    let at = c.offset();
    let n = c.u32()?;
    let n = bounded(
        u64::from(n),
        limits::MAX_HEADER_CHUNK,
        c.structure(),
        at,
        "fill value size",
    )?;
    if n == 0 {
        return Ok(FillValue::Default);
    }
    Ok(FillValue::User(c.bytes(n)?.to_vec()))
}

/// Decode the old fill value message (type 4): a size and the value bytes.
pub fn decode_old(c: &mut Cursor<'_>) -> Result<FillValue> {
    value(c)
}

/// Decode the fill value message (type 5).
pub fn decode(c: &mut Cursor<'_>) -> Result<FillValue> {
    let version = c.u8()?;
    match version {
        1 | 2 => {
            let _alloc_time = c.u8()?;
            let _write_time = c.u8()?;
            let defined = c.u8()?;
            // libhdf5 reads the size only when a value is defined (any version).
            if defined != 0 {
                value(c)
            } else {
                Ok(FillValue::Undefined)
            }
        }
        3 => {
            let flags = c.u8()?;
            if flags & 0x10 != 0 {
                Ok(FillValue::Undefined)
            } else if flags & 0x20 != 0 {
                value(c)
            } else {
                Ok(FillValue::Default)
            }
        }
        v => Err(c.unsupported(format!("fill value message version {v}"))),
    }
}

/// When storage space is allocated (fill value message, bits 0-1 of the
/// version 3 flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocTime {
    /// Allocate the whole dataset's storage when the dataset is created (value 1).
    Early = 1,
    /// Allocate storage only when data is first written (value 2).
    Late = 2,
    /// Allocate storage chunk by chunk as each chunk is written (value 3).
    Incremental = 3,
}

/// Encode a fill value message, version 3, with the fill written "if set" and
/// `value` (one element's bytes) defined when given, else the default.
pub fn encode(alloc: AllocTime, value: Option<&[u8]>) -> Result<Vec<u8>> {
    let mut flags = alloc as u8 | (2 << 2);
    if value.is_some() {
        flags |= 1 << 5;
    }
    let mut out = vec![3, flags];
    if let Some(v) = value {
        let n = u32::try_from(v.len())
            .map_err(|_| Error::InvalidArgument("fill value too large".into()))?;
        put_u32(&mut out, n);
        out.extend_from_slice(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_v3_and_round_trip() {
        let b = encode(AllocTime::Late, Some(&[7, 8])).unwrap();
        assert_eq!(b, vec![3, 0x2A, 2, 0, 0, 0, 7, 8]);
        assert_eq!(dec(&b).unwrap(), FillValue::User(vec![7, 8]));
        let d = encode(AllocTime::Incremental, None).unwrap();
        assert_eq!(d, vec![3, 0x0B]);
        assert_eq!(dec(&d).unwrap(), FillValue::Default);
        assert_eq!(encode(AllocTime::Early, None).unwrap(), vec![3, 0x09]);
    }

    fn dec(b: &[u8]) -> Result<FillValue> {
        decode(&mut Cursor::new(b, 0, "fill value"))
    }

    #[test]
    fn versions() {
        assert_eq!(dec(&[2, 2, 2, 0]).unwrap(), FillValue::Undefined);
        assert_eq!(
            dec(&[2, 2, 2, 1, 2, 0, 0, 0, 7, 8]).unwrap(),
            FillValue::User(vec![7, 8])
        );
        assert_eq!(dec(&[2, 2, 2, 1, 0, 0, 0, 0]).unwrap(), FillValue::Default);
        assert_eq!(dec(&[3, 0x10]).unwrap(), FillValue::Undefined);
        assert_eq!(dec(&[3, 0x02]).unwrap(), FillValue::Default);
        assert_eq!(
            dec(&[3, 0x20, 1, 0, 0, 0, 9]).unwrap().bytes(),
            Some(&[9u8][..])
        );
        let old = decode_old(&mut Cursor::new(&[1, 0, 0, 0, 5], 0, "f")).unwrap();
        assert_eq!(old.state_name(), "user");
    }

    #[test]
    fn truncated() {
        assert!(dec(&[3, 0x20, 9, 0, 0, 0, 1]).is_err());
        assert!(dec(&[2, 2, 2, 1, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(dec(&[9]).is_err());
        assert!(dec(&[]).is_err());
    }
}
