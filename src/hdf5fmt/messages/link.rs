//! Link message (HDF5 File Format Specification IV.A.2.g): hard, soft, external
//! and user-defined links stored in a group's object header (or, for dense
//! groups, as fractal-heap objects).

use crate::error::Result;
use crate::hdf5fmt::cursor::Cursor;
use crate::hdf5fmt::Sizes;

/// Where a link points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// Object header address in this file.
    Hard(u64),
    /// A path in this file.
    Soft(String),
    /// An object in another file.
    External { file: String, path: String },
    /// A user-defined link class (type >= 65) the library cannot follow.
    UserDefined { kind: u8, data: Vec<u8> },
}

/// A decoded link message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkMessage {
    pub name: String,
    pub link: Link,
    pub creation_order: Option<u64>,
}

fn utf8(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl LinkMessage {
    /// Decode a link message body.
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let version = c.u8()?;
        if version != 1 {
            return Err(c.unsupported(format!("link message version {version}")));
        }
        let flags = c.u8()?;
        let kind = if flags & 0x08 != 0 { c.u8()? } else { 0 };
        let creation_order = if flags & 0x04 != 0 {
            Some(c.u64()?)
        } else {
            None
        };
        if flags & 0x10 != 0 {
            c.u8()?; // character set of the name
        }
        let name_len = c.uint(1 << (flags & 0x03))?;
        let name = utf8(c.bytes_u64(name_len)?);
        if name.is_empty() {
            return Err(c.malformed("empty link name"));
        }
        let link = match kind {
            0 => Link::Hard(
                c.addr(sizes.offset)?
                    .ok_or_else(|| c.malformed("hard link to undefined address"))?,
            ),
            1 => {
                let n = c.u16()?;
                Link::Soft(utf8(c.bytes(usize::from(n))?))
            }
            64 => {
                let n = c.u16()?;
                let mut d = c.sub(usize::from(n))?;
                let _flags = d.u8()?;
                let file = utf8(d.cstr()?);
                let path = utf8(d.cstr()?);
                Link::External { file, path }
            }
            k if k >= 65 => {
                let n = c.u16()?;
                Link::UserDefined {
                    kind: k,
                    data: c.bytes(usize::from(n))?.to_vec(),
                }
            }
            k => return Err(c.malformed(format!("link type {k}"))),
        };
        Ok(LinkMessage {
            name,
            link,
            creation_order,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(b: &[u8]) -> Result<LinkMessage> {
        LinkMessage::decode(&mut Cursor::new(b, 0, "link"), Sizes::default())
    }

    #[test]
    fn hard_soft_external() {
        let mut b = vec![1u8, 0x04];
        b.extend_from_slice(&3u64.to_le_bytes());
        b.push(2);
        b.extend_from_slice(b"ab");
        b.extend_from_slice(&0x60u64.to_le_bytes());
        let m = dec(&b).unwrap();
        assert_eq!(m.name, "ab");
        assert_eq!(m.link, Link::Hard(0x60));
        assert_eq!(m.creation_order, Some(3));

        let mut b = vec![1u8, 0x18, 1, 0, 1, b's', 3, 0];
        b.extend_from_slice(b"/xy");
        assert_eq!(dec(&b).unwrap().link, Link::Soft("/xy".into()));

        let mut b = vec![1u8, 0x08, 64, 1, b'e', 9, 0, 0];
        b.extend_from_slice(b"f.h5\0/a\0");
        assert_eq!(
            dec(&b).unwrap().link,
            Link::External {
                file: "f.h5".into(),
                path: "/a".into()
            }
        );
    }

    #[test]
    fn malformed() {
        assert!(dec(&[2, 0]).is_err());
        assert!(dec(&[1, 0, 0]).is_err());
        assert!(dec(&[1, 0x08, 7, 1, b'a']).is_err());
        assert!(dec(&[1, 0, 5, b'a']).is_err());
        assert!(dec(&[1, 0x08, 64, 1, b'e', 3, 0, 0, b'f', b'x']).is_err());
    }
}
