//! Object headers (HDF5 File Format Specification IV.A): version 1 (8-byte
//! aligned messages) and version 2 (`OHDR`, checksummed, `OCHK` continuation
//! blocks), with the continuation chain followed under cycle detection and the
//! caps of [`limits`].

use std::collections::{BTreeSet, HashSet};

use crate::checksum::metadata_checksum;
use crate::cursor::{add, bounded, Cursor};
use crate::error::{Error, Result};
use crate::messages::continuation::Continuation;
use crate::messages::{message_name, types};
use crate::signature;
use crate::source::Source;
use crate::{limits, Sizes};

/// Message flag bit 0: the message is constant (never changes).
pub const FLAG_CONSTANT: u8 = 0x01;
/// Message flag bit 1: the body is a shared-message reference.
pub const FLAG_SHARED: u8 = 0x02;

/// Version 2 header flag bits 0–1: width code of the chunk 0 size field
/// (1, 2, 4 or 8 bytes).
pub const SIZE_FIELD_MASK: u8 = 0x03;
/// Version 2 header flag bit 2: attribute creation order tracked (each message
/// then carries a 2-byte creation order).
pub const ATTR_ORDER_TRACKED: u8 = 0x04;
/// Version 2 header flag bit 3: attributes are indexed by creation order (set
/// together with [`ATTR_ORDER_TRACKED`]).
pub const ATTR_ORDER_INDEXED: u8 = 0x08;
/// Version 2 header flag bit 4: non-default attribute storage phase change
/// values are stored (4 bytes).
pub const ATTR_PHASE_CHANGE_STORED: u8 = 0x10;
/// Version 2 header flag bit 5: access, modification, change and birth times
/// are stored (16 bytes).
pub const TIMES_STORED: u8 = 0x20;

/// The prefix of one message in a version 2 header or continuation chunk
/// (IV.A.1.b): type, body size, flags and, when the header tracks attribute
/// creation order, the creation order. Read by [`ObjectHeader::read`] and
/// written by the writer's header encoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessagePrefixV2 {
    /// Header message type number (8 bits in a v2 header).
    pub mtype: u8,
    /// Size of the body in bytes.
    pub size: u16,
    /// Message flags ([`FLAG_CONSTANT`], [`FLAG_SHARED`], ...).
    pub flags: u8,
    /// Creation order, present exactly when the header has [`ATTR_ORDER_TRACKED`].
    pub creation_order: Option<u16>,
}

impl MessagePrefixV2 {
    /// Encoded size: 4 bytes, 6 with creation order tracked.
    pub fn len(tracked: bool) -> usize {
        if tracked {
            6
        } else {
            4
        }
    }

    /// Decode a prefix; `tracked`: the header has [`ATTR_ORDER_TRACKED`].
    pub fn decode(c: &mut Cursor<'_>, tracked: bool) -> Result<Self> {
        let mtype = c.u8()?;
        let size = c.u16()?;
        let flags = c.u8()?;
        let creation_order = if tracked { Some(c.u16()?) } else { None };
        Ok(MessagePrefixV2 {
            mtype,
            size,
            flags,
            creation_order,
        })
    }

    /// Append the encoded prefix.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.mtype);
        out.extend_from_slice(&self.size.to_le_bytes());
        out.push(self.flags);
        if let Some(order) = self.creation_order {
            out.extend_from_slice(&order.to_le_bytes());
        }
    }
}

/// One header message, body copied out of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Header message type number (one of [`types`]; 8 bits in v2 headers, 16 in v1).
    pub mtype: u16,
    /// Header message flags: bit 0 constant, bit 1 the body is a shared-message reference
    /// ([`FLAG_SHARED`]), bits 2–7 sharing and unknown-message handling.
    pub flags: u8,
    /// File offset (relative to the base address) of the body.
    pub offset: u64,
    /// The message body bytes as stored (its size is the message's 16-bit size field; v1 padding to
    /// 8 bytes not included).
    pub data: Vec<u8>,
    /// v2 headers that track attribute creation order.
    pub creation_order: Option<u16>,
}

impl Message {
    /// True when the body is a shared-message reference.
    pub fn is_shared(&self) -> bool {
        self.flags & FLAG_SHARED != 0
    }

    /// A cursor over the body.
    pub fn cursor(&self, structure: &'static str) -> Cursor<'_> {
        Cursor::new(&self.data, self.offset, structure)
    }
}

/// A parsed object header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectHeader {
    /// Address of the object header (of its first block) in the file.
    pub address: u64,
    /// Object header version: 1, or 2 for headers starting with the `OHDR` signature.
    pub version: u8,
    /// v2 header flags (0 for v1).
    pub flags: u8,
    /// Object reference count (hard links) from the v1 prefix; always 1 for v2 headers, whose
    /// count, when above one, is in a reference count message.
    pub refcount: u32,
    /// Number of header blocks (the first plus continuations).
    pub nchunks: usize,
    /// Every message in file order, including nil and continuation messages.
    pub messages: Vec<Message>,
}

impl ObjectHeader {
    /// Read the object header at `address` and all its continuation blocks.
    pub fn read(src: &dyn Source, sizes: Sizes, address: u64) -> Result<Self> {
        let first = src.read_upto("object header", address, 16)?;
        let h = if first.get(..4) == Some(signature::OHDR) {
            read_v2(src, sizes, address)?
        } else {
            read_v1(src, sizes, address)?
        };
        // The messages are copies: refuse them if the mapping faulted meanwhile.
        src.check()?;
        Ok(h)
    }

    /// The first message of type `mtype`.
    pub fn first(&self, mtype: u16) -> Option<&Message> {
        self.messages.iter().find(|m| m.mtype == mtype)
    }

    /// Every message of type `mtype`.
    pub fn all(&self, mtype: u16) -> impl Iterator<Item = &Message> {
        self.messages.iter().filter(move |m| m.mtype == mtype)
    }

    /// True when a message of type `mtype` is present.
    pub fn has(&self, mtype: u16) -> bool {
        self.first(mtype).is_some()
    }

    /// Names of the distinct message types present (nil excluded), sorted, as
    /// libhdf5 2.0 reports them: types it does not know (9 "bogus" and anything
    /// above 24) are all counted as its "unknown" type 25 (`"msg25"`).
    pub fn message_names(&self) -> Vec<String> {
        let set: BTreeSet<String> = self
            .messages
            .iter()
            .filter(|m| m.mtype != types::NIL)
            .map(|m| match m.mtype {
                types::BOGUS | 25.. => message_name(25),
                t => message_name(t),
            })
            .collect();
        set.into_iter().collect()
    }

    /// Names of the distinct message types stored as shared references, sorted.
    pub fn shared_message_names(&self) -> Vec<String> {
        let set: BTreeSet<String> = self
            .messages
            .iter()
            .filter(|m| m.is_shared())
            .map(|m| message_name(m.mtype))
            .collect();
        set.into_iter().collect()
    }
}

struct Walk {
    pending: Vec<Continuation>,
    seen: HashSet<u64>,
    nchunks: usize,
    messages: Vec<Message>,
}

impl Walk {
    fn new(address: u64) -> Self {
        let mut seen = HashSet::new();
        seen.insert(address);
        Walk {
            pending: Vec::new(),
            seen,
            nchunks: 1,
            messages: Vec::new(),
        }
    }

    fn push(&mut self, m: Message, sizes: Sizes) -> Result<()> {
        if self.messages.len() >= limits::MAX_MESSAGES {
            return Err(Error::Limit {
                structure: "object header",
                offset: m.offset,
                what: "messages",
                value: self.messages.len() as u64,
                limit: limits::MAX_MESSAGES as u64,
            });
        }
        if m.mtype == types::CONTINUATION {
            let k = Continuation::decode(&mut m.cursor("continuation message"), sizes)?;
            if !self.seen.insert(k.address) {
                return Err(Error::Cycle {
                    structure: "object header continuation",
                    offset: k.address,
                });
            }
            self.nchunks += 1;
            if self.nchunks > limits::MAX_HEADER_CHUNKS {
                return Err(Error::Limit {
                    structure: "object header",
                    offset: k.address,
                    what: "continuation blocks",
                    value: self.nchunks as u64,
                    limit: limits::MAX_HEADER_CHUNKS as u64,
                });
            }
            self.pending.push(k);
        }
        self.messages.push(m);
        Ok(())
    }

    /// The next continuation block in file order of discovery.
    fn next(&mut self) -> Option<Continuation> {
        if self.pending.is_empty() {
            None
        } else {
            Some(self.pending.remove(0))
        }
    }
}

fn chunk_len(len: u64, at: u64) -> Result<usize> {
    bounded(
        len,
        limits::MAX_HEADER_CHUNK,
        "object header",
        at,
        "header block size",
    )
}

fn read_v1(src: &dyn Source, sizes: Sizes, address: u64) -> Result<ObjectHeader> {
    let head = src.read("object header", address, 16)?;
    let mut c = Cursor::new(&head, address, "object header");
    let version = c.u8()?;
    if version != 1 {
        return Err(Error::malformed(
            "object header",
            address,
            format!("unknown object header version {version}"),
        ));
    }
    c.skip(1)?;
    let _nmesgs = c.u16()?;
    let refcount = c.u32()?;
    let size = c.u32()?;
    let mut walk = Walk::new(address);
    let mut block = Continuation {
        address: add(address, 16, "object header", address, "first block")?,
        length: u64::from(size),
    };
    loop {
        let n = chunk_len(block.length, block.address)?;
        let bytes = src.read("object header block", block.address, n as u64)?;
        let mut c = Cursor::new(&bytes, block.address, "object header v1 message");
        while c.remaining() >= 8 {
            let mtype = c.u16()?;
            let len = c.u16()?;
            let flags = c.u8()?;
            c.skip(3)?;
            let offset = c.offset();
            let data = c.bytes(usize::from(len))?.to_vec();
            walk.push(
                Message {
                    mtype,
                    flags,
                    offset,
                    data,
                    creation_order: None,
                },
                sizes,
            )?;
            c.align(8).or_else(|_| c.seek(c.data().len()))?;
        }
        match walk.next() {
            Some(k) => block = k,
            None => break,
        }
    }
    Ok(ObjectHeader {
        address,
        version: 1,
        flags: 0,
        refcount,
        nchunks: walk.nchunks,
        messages: walk.messages,
    })
}

fn verify(bytes: &[u8], at: u64, structure: &'static str) -> Result<()> {
    let n = bytes.len().checked_sub(4).ok_or(Error::Truncated {
        structure,
        offset: at,
        needed: 4,
        available: bytes.len() as u64,
    })?;
    let (body, ck) = bytes.split_at(n);
    let stored = u32::from_le_bytes([ck[0], ck[1], ck[2], ck[3]]);
    let computed = metadata_checksum(body);
    if stored != computed {
        return Err(Error::Checksum {
            structure,
            offset: at,
            stored,
            computed,
        });
    }
    Ok(())
}

fn read_v2(src: &dyn Source, sizes: Sizes, address: u64) -> Result<ObjectHeader> {
    let head = src.read_upto("object header", address, 6 + 16 + 4 + 8)?;
    let mut c = Cursor::new(&head, address, "object header");
    c.signature(signature::OHDR)?;
    let version = c.u8()?;
    if version != 2 {
        return Err(c.unsupported(format!("object header version {version}")));
    }
    let flags = c.u8()?;
    if flags & TIMES_STORED != 0 {
        c.skip(16)?;
    }
    if flags & ATTR_PHASE_CHANGE_STORED != 0 {
        c.skip(4)?;
    }
    let size = c.uint(1 << (flags & SIZE_FIELD_MASK))?;
    let prefix = c.pos() as u64;
    let total = add(prefix, size, "object header", address, "header size")?;
    let total = add(total, 4, "object header", address, "header size")?;
    let n = chunk_len(total, address)?;
    let bytes = src.read("object header", address, n as u64)?;
    verify(&bytes, address, "object header")?;
    let mut walk = Walk::new(address);
    let track_order = flags & ATTR_ORDER_TRACKED != 0;
    let body = bytes.get(prefix as usize..n - 4).unwrap_or(&[]);
    let base = address + prefix;
    v2_messages(body, base, track_order, sizes, &mut walk)?;
    while let Some(k) = walk.next() {
        let n = chunk_len(k.length, k.address)?;
        let bytes = src.read("object header continuation", k.address, n as u64)?;
        let mut c = Cursor::new(&bytes, k.address, "object header continuation");
        c.signature(signature::OCHK)?;
        verify(&bytes, k.address, "object header continuation")?;
        let body = bytes.get(4..n.saturating_sub(4)).unwrap_or(&[]);
        v2_messages(body, k.address + 4, track_order, sizes, &mut walk)?;
    }
    Ok(ObjectHeader {
        address,
        version: 2,
        flags,
        refcount: 1,
        nchunks: walk.nchunks,
        messages: walk.messages,
    })
}

fn v2_messages(
    body: &[u8],
    base: u64,
    track_order: bool,
    sizes: Sizes,
    walk: &mut Walk,
) -> Result<()> {
    let mut c = Cursor::new(body, base, "object header v2 message");
    let hlen = MessagePrefixV2::len(track_order);
    while c.remaining() >= hlen {
        let p = MessagePrefixV2::decode(&mut c, track_order)?;
        let offset = c.offset();
        let data = c.bytes(usize::from(p.size))?.to_vec();
        walk.push(
            Message {
                mtype: u16::from(p.mtype),
                flags: p.flags,
                offset,
                data,
                creation_order: p.creation_order,
            },
            sizes,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod prefix_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn v2_message_prefix_round_trips(mtype: u8, size: u16, flags: u8, creation_order: Option<u16>) {
            let p = MessagePrefixV2 { mtype, size, flags, creation_order };
            let mut b = Vec::new();
            p.encode(&mut b);
            let tracked = creation_order.is_some();
            prop_assert_eq!(b.len(), MessagePrefixV2::len(tracked));
            let mut c = Cursor::new(&b, 0, "t");
            prop_assert_eq!(MessagePrefixV2::decode(&mut c, tracked).unwrap(), p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemSource;

    fn v1_msg(mtype: u16, data: &[u8]) -> Vec<u8> {
        let mut b = mtype.to_le_bytes().to_vec();
        let len = data.len().div_ceil(8) * 8;
        b.extend_from_slice(&(len as u16).to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(data);
        b.resize(8 + len, 0);
        b
    }

    fn v1_header(msgs: &[u8], nmsgs: u16) -> Vec<u8> {
        let mut b = vec![1u8, 0];
        b.extend_from_slice(&nmsgs.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&(msgs.len() as u32).to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(msgs);
        b
    }

    fn cont(addr: u64, len: u64) -> Vec<u8> {
        let mut d = addr.to_le_bytes().to_vec();
        d.extend_from_slice(&len.to_le_bytes());
        d
    }

    #[test]
    fn v1_with_continuation() {
        // header at 0 with one dataspace msg + continuation to block at 200.
        let mut msgs = v1_msg(1, &[1, 0, 0, 0, 0, 0, 0, 0]);
        msgs.extend(v1_msg(0x10, &cont(200, 16)));
        let mut f = v1_header(&msgs, 3);
        f.resize(200, 0);
        f.extend(v1_msg(0x11, &[0; 16][..8]));
        let h = ObjectHeader::read(&MemSource::new(f), Sizes::default(), 0).unwrap();
        assert_eq!(h.version, 1);
        assert_eq!(h.nchunks, 2);
        assert_eq!(h.messages.len(), 3);
        assert_eq!(
            h.message_names(),
            vec!["continuation", "dataspace", "symbol_table"]
        );
        assert_eq!(h.messages[0].offset, 24);
    }

    #[test]
    fn v1_cycle_detected() {
        let msgs = v1_msg(0x10, &cont(16, 24));
        let f = v1_header(&msgs, 1);
        let e = ObjectHeader::read(&MemSource::new(f), Sizes::default(), 0).unwrap_err();
        assert!(matches!(e, Error::Cycle { .. }), "{e:?}");
    }

    fn v2_header(msgs: &[u8]) -> Vec<u8> {
        let mut b = b"OHDR\x02\x02".to_vec();
        b.extend_from_slice(&(msgs.len() as u32).to_le_bytes());
        b.extend_from_slice(msgs);
        let ck = metadata_checksum(&b);
        b.extend_from_slice(&ck.to_le_bytes());
        b
    }

    #[test]
    fn v2_with_ochk() {
        let mut msgs = vec![0x01u8, 4, 0, 0, 2, 0, 0, 0];
        msgs.push(0x10);
        msgs.extend_from_slice(&16u16.to_le_bytes());
        msgs.push(0);
        msgs.extend(cont(100, 16));
        msgs.extend_from_slice(&[0, 0]); // gap shorter than a message header
        let mut f = v2_header(&msgs);
        f.resize(100, 0);
        let mut ochk = b"OCHK".to_vec();
        ochk.extend_from_slice(&[0x03, 4, 0, 0, 1, 2, 3, 4]);
        let ck = metadata_checksum(&ochk);
        ochk.extend_from_slice(&ck.to_le_bytes());
        f.extend(ochk);
        let h = ObjectHeader::read(&MemSource::new(f.clone()), Sizes::default(), 0).unwrap();
        assert_eq!(h.version, 2);
        assert_eq!(h.nchunks, 2);
        assert_eq!(h.messages.len(), 3);
        assert_eq!(h.first(types::DATATYPE).unwrap().data, vec![1, 2, 3, 4]);
        // corrupt the OCHK body: checksum error
        let mut bad = f.clone();
        bad[106] ^= 0xff;
        assert!(matches!(
            ObjectHeader::read(&MemSource::new(bad), Sizes::default(), 0),
            Err(Error::Checksum { .. })
        ));
        // truncated file
        assert!(
            ObjectHeader::read(&MemSource::new(f[..20].to_vec()), Sizes::default(), 0).is_err()
        );
    }

    #[test]
    fn garbage_never_panics() {
        for seed in 0u8..=255 {
            let f: Vec<u8> = (0..64u32)
                .map(|i| (i as u8).wrapping_mul(seed).wrapping_add(seed))
                .collect();
            let _ = ObjectHeader::read(&MemSource::new(f), Sizes::default(), 0);
        }
    }
}
