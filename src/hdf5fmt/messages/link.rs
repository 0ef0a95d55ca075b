//! Link message (HDF5 File Format Specification IV.A.2.g), version 1: hard,
//! soft, external and user-defined links stored in a group's object header (or,
//! for dense groups, as fractal-heap objects). Decoded and encoded here.

use crate::cursor::Cursor;
use crate::encode::{put_u16, put_u64, put_var, u16_len};
use crate::error::{Error, Result};
use crate::Sizes;

/// Where a link points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// Object header address in this file.
    Hard(u64),
    /// A path in this file.
    Soft(String),
    /// An object in another file.
    External {
        /// The file named by the link, as stored.
        file: String,
        /// The object's path inside that file.
        path: String,
    },
    /// A user-defined link class (type >= 65) the library cannot follow.
    UserDefined {
        /// The link class (65–255).
        kind: u8,
        /// The class's link information, unparsed.
        data: Vec<u8>,
    },
}

/// A decoded link message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkMessage {
    /// Link name (never empty), decoded as UTF-8 with invalid bytes replaced.
    pub name: String,
    /// Link type and its information: where the link points.
    pub link: Link,
    /// Creation order of the link in its group, present when flags bit 2 is set (64 bits).
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

    /// Encode as a version 1 link message with `sizes.offset`-byte addresses.
    /// The name's character set is written (as UTF-8) only when it is not ASCII.
    pub fn encode(&self, sizes: Sizes) -> Result<Vec<u8>> {
        let name = &self.name;
        let nlen = name.len();
        if nlen == 0 {
            return Err(Error::InvalidArgument("empty link name".into()));
        }
        let (size_code, size_bytes) = match nlen {
            0..=0xFF => (0u8, 1),
            0x100..=0xFFFF => (1, 2),
            _ => (2, 4),
        };
        let utf8 = !name.is_ascii();
        let link_type = match &self.link {
            Link::Hard(_) => None,
            Link::Soft(_) => Some(1u8),
            Link::External { .. } => Some(64),
            Link::UserDefined { kind, .. } => Some(*kind),
        };
        let flags = size_code
            | (u8::from(self.creation_order.is_some()) << 2)
            | (u8::from(link_type.is_some()) << 3)
            | (u8::from(utf8) << 4);
        let mut out = vec![1, flags];
        if let Some(t) = link_type {
            out.push(t);
        }
        if let Some(o) = self.creation_order {
            put_u64(&mut out, o);
        }
        if utf8 {
            out.push(1);
        }
        put_var(&mut out, nlen as u64, size_bytes);
        out.extend_from_slice(name.as_bytes());
        match &self.link {
            Link::Hard(addr) => put_var(&mut out, *addr, usize::from(sizes.offset)),
            Link::Soft(path) => {
                put_u16(&mut out, u16_len(path.len(), "soft link path")?);
                out.extend_from_slice(path.as_bytes());
            }
            Link::External { file, path } => {
                // version 0, no flags, then two null-terminated names
                let len = 1 + file.len() + 1 + path.len() + 1;
                put_u16(&mut out, u16_len(len, "external link")?);
                out.push(0);
                out.extend_from_slice(file.as_bytes());
                out.push(0);
                out.extend_from_slice(path.as_bytes());
                out.push(0);
            }
            Link::UserDefined { data, .. } => {
                put_u16(&mut out, u16_len(data.len(), "user-defined link")?);
                out.extend_from_slice(data);
            }
        }
        Ok(out)
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

    fn enc(name: &str, link: Link, creation_order: Option<u64>) -> Vec<u8> {
        let m = LinkMessage {
            name: name.into(),
            link,
            creation_order,
        };
        let b = m.encode(Sizes::default()).unwrap();
        assert_eq!(dec(&b).unwrap(), m, "round trip of {b:?}");
        b
    }

    #[test]
    fn encode_bytes_and_round_trip() {
        let b = enc("a", Link::Hard(0x30), None);
        assert_eq!(b, vec![1, 0, 1, b'a', 0x30, 0, 0, 0, 0, 0, 0, 0]);
        let s = enc("é", Link::Soft("/x".into()), None);
        assert_eq!(s, vec![1, 0x18, 1, 1, 2, 0xC3, 0xA9, 2, 0, b'/', b'x']);
        let e = enc(
            "e",
            Link::External {
                file: "f.h5".into(),
                path: "/x".into(),
            },
            None,
        );
        let mut want = vec![1, 0x08, 64, 1, b'e', 9, 0, 0];
        want.extend_from_slice(b"f.h5\0/x\0");
        assert_eq!(e, want);
        enc("ordered", Link::Hard(0x1234), Some(7));
        enc(&"n".repeat(300), Link::Soft("/a/b".into()), Some(0));
        enc(
            "u",
            Link::UserDefined {
                kind: 65,
                data: vec![1, 2, 3],
            },
            None,
        );
        let empty = LinkMessage {
            name: String::new(),
            link: Link::Hard(0),
            creation_order: None,
        };
        assert!(empty.encode(Sizes::default()).is_err());
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
