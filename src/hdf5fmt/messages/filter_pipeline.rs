//! Filter pipeline message (HDF5 File Format Specification IV.A.2.l): versions 1
//! and 2 decoded into [`FilterSpec`]s, version 2 encoded from them.

use crate::cursor::Cursor;
use crate::encode::{put_u16, put_u32, u16_len};
use crate::error::{Error, Result};
use purehdf_filters::FilterSpec;

/// Most client-data values in one filter description.
const MAX_CD_VALUES: usize = 4096;

/// Decode a filter pipeline message body.
pub fn decode(c: &mut Cursor<'_>) -> Result<Vec<FilterSpec>> {
    let version = c.u8()?;
    let n = usize::from(c.u8()?);
    if n > 32 {
        return Err(c.malformed(format!("{n} filters in a pipeline")));
    }
    match version {
        1 => c.skip(6)?,
        2 => {}
        v => return Err(c.unsupported(format!("filter pipeline version {v}"))),
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let id = c.u16()?;
        let name_len = if version == 1 || id >= 256 {
            usize::from(c.u16()?)
        } else {
            0
        };
        let flags = c.u16()?;
        let ncd = usize::from(c.u16()?);
        if ncd > MAX_CD_VALUES {
            return Err(c.malformed(format!("{ncd} client data values")));
        }
        let name = if name_len > 0 {
            let raw = c.bytes(name_len)?;
            let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
            Some(String::from_utf8_lossy(raw.get(..end).unwrap_or(&[])).into_owned())
        } else {
            None
        };
        let mut cd_values = Vec::with_capacity(ncd);
        for _ in 0..ncd {
            cd_values.push(c.u32()?);
        }
        if version == 1 && ncd % 2 == 1 {
            c.skip(4)?;
        }
        out.push(FilterSpec {
            id: u32::from(id),
            flags,
            cd_values,
            name,
        });
    }
    Ok(out)
}

/// Encode a filter pipeline message, version 2 (names stored only for
/// filters numbered 256 and up, as the version allows).
pub fn encode(filters: &[FilterSpec]) -> Result<Vec<u8>> {
    if filters.len() > 32 {
        return Err(Error::InvalidArgument("more than 32 filters".into()));
    }
    let mut out = vec![2, filters.len() as u8];
    for f in filters {
        let id = u16::try_from(f.id)
            .map_err(|_| Error::InvalidArgument(format!("filter id {} too large", f.id)))?;
        put_u16(&mut out, id);
        let name: Vec<u8> = match (&f.name, id >= 256) {
            (Some(n), true) => {
                let mut v = n.as_bytes().to_vec();
                v.push(0);
                v
            }
            _ => Vec::new(),
        };
        if id >= 256 {
            put_u16(&mut out, u16_len(name.len(), "filter name")?);
        }
        put_u16(&mut out, f.flags);
        put_u16(&mut out, u16_len(f.cd_values.len(), "filter client data")?);
        out.extend_from_slice(&name);
        for &c in &f.cd_values {
            put_u32(&mut out, c);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_v2_and_round_trip() {
        let specs = vec![
            FilterSpec {
                id: 2,
                flags: 0,
                cd_values: vec![4],
                name: None,
            },
            FilterSpec {
                id: 1,
                flags: 1,
                cd_values: vec![6],
                name: None,
            },
            FilterSpec {
                id: 32001,
                flags: 1,
                cd_values: vec![2, 2, 4, 1000, 5, 1, 1],
                name: Some("blosc".into()),
            },
        ];
        let b = encode(&specs).unwrap();
        assert_eq!(&b[..2], &[2, 3]);
        assert_eq!(&b[2..12], &[2, 0, 0, 0, 1, 0, 4, 0, 0, 0]);
        assert_eq!(dec(&b).unwrap(), specs);
        assert_eq!(dec(&encode(&[]).unwrap()).unwrap(), vec![]);
        let too_many = vec![specs[0].clone(); 33];
        assert!(encode(&too_many).is_err());
        let big_id = FilterSpec {
            id: 70_000,
            ..specs[0].clone()
        };
        assert!(encode(&[big_id]).is_err());
    }

    fn dec(b: &[u8]) -> Result<Vec<FilterSpec>> {
        decode(&mut Cursor::new(b, 0, "filter pipeline"))
    }

    #[test]
    fn v1_deflate_and_v2_plugin() {
        let mut b = vec![1u8, 1, 0, 0, 0, 0, 0, 0];
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&8u16.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(b"deflate\0");
        b.extend_from_slice(&6u32.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        let f = dec(&b).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].id, 1);
        assert_eq!(f[0].name.as_deref(), Some("deflate"));
        assert_eq!(f[0].cd_values, vec![6]);
        assert_eq!(f[0].flags, 1);

        let mut b = vec![2u8, 2];
        b.extend_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&32000u16.to_le_bytes());
        b.extend_from_slice(&4u16.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(b"lzf\0");
        b.extend_from_slice(&4u32.to_le_bytes());
        b.extend_from_slice(&261u32.to_le_bytes());
        let f = dec(&b).unwrap();
        assert_eq!(f[0].id, 2);
        assert_eq!(f[0].name, None);
        assert_eq!(f[1].id, 32000);
        assert_eq!(f[1].name.as_deref(), Some("lzf"));
        assert_eq!(f[1].cd_values, vec![4, 261]);
    }

    #[test]
    fn malformed() {
        assert!(dec(&[3, 0]).is_err());
        assert!(dec(&[2, 1, 1, 0]).is_err());
        assert!(dec(&[2, 200]).is_err());
        assert!(dec(&[]).is_err());
    }
}
