//! Object header rewrite: an object's new message list laid out into its
//! first chunk (same address, same size, so every link and reference to the
//! object stays valid) plus, when they do not all fit, one new continuation
//! chunk; the first chunk is then patched in one write of its changed bytes
//! and the old continuation chunks are freed. Version 2 headers use the
//! writer's encoder (`crate::write::object_header`); version 1 headers
//! (8-byte aligned messages, message count in the prefix) are laid out here,
//! the writer having no version 1 encoder.

use super::commit::Txn;
use super::Editor;
use crate::checksum::metadata_checksum;
use crate::error::{Error, Result};
use crate::messages::continuation::Continuation;
use crate::messages::types;
use crate::object_header::{ObjectHeader, ATTR_PHASE_CHANGE_STORED, TIMES_STORED};
use crate::signature;
use crate::write::object_header::{
    encode_continuation, put_messages, Message, ATTR_ORDER_TRACKED, MAX_MESSAGE_BODY,
};

/// The name stored in an attribute message body (versions 1–3).
pub(super) fn attr_name(body: &[u8]) -> Option<String> {
    let version = *body.first()?;
    let len = usize::from(u16::from_le_bytes([*body.get(2)?, *body.get(3)?]));
    let start: usize = if version >= 3 { 9 } else { 8 };
    let raw = body.get(start..start.checked_add(len)?)?;
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    Some(String::from_utf8_lossy(&raw[..end]).into_owned())
}

/// The first chunk of a header as stored.
pub(super) struct Chunk0 {
    pub(super) version: u8,
    /// v2 header flags.
    pub(super) flags: u8,
    /// Bytes before the message area.
    prefix: usize,
    /// Size of the message area.
    data: usize,
    /// The whole chunk (prefix, messages, v2 checksum).
    image: Vec<u8>,
}

impl Chunk0 {
    fn tracked(&self) -> bool {
        self.version == 2 && self.flags & ATTR_ORDER_TRACKED != 0
    }

    /// Prefix bytes of a message of `body` bytes, and its whole size.
    fn size_of(&self, body: usize) -> usize {
        match (self.version, self.tracked()) {
            (1, _) => 8 + body.div_ceil(8) * 8,
            (_, true) => 6 + body,
            _ => 4 + body,
        }
    }

    /// Attribute phase change values of a version 2 header (maximum compact,
    /// minimum dense): stored in the prefix when flag bit 4 is set, else
    /// libhdf5's defaults (8, 6).
    pub(super) fn attr_phase_change(&self) -> (usize, usize) {
        if self.version != 2 || self.flags & ATTR_PHASE_CHANGE_STORED == 0 {
            return (8, 6);
        }
        let at = if self.flags & TIMES_STORED != 0 {
            22
        } else {
            6
        };
        match self.image.get(at..at + 4) {
            Some(b) => (
                usize::from(u16::from_le_bytes([b[0], b[1]])),
                usize::from(u16::from_le_bytes([b[2], b[3]])),
            ),
            None => (8, 6),
        }
    }

    /// Whether attribute messages carry a creation order (version 2 header
    /// flag bit 2).
    pub(super) fn attr_order_tracked(&self) -> bool {
        self.tracked()
    }

    /// v1 reference count (from the prefix).
    pub(super) fn refcount_v1(&self) -> u32 {
        u32::from_le_bytes([self.image[4], self.image[5], self.image[6], self.image[7]])
    }
}

fn bad(at: u64, why: &str) -> Error {
    Error::malformed("object header", at, why)
}

/// Read the first chunk of the header at `addr`.
pub(super) fn chunk0(ed: &Editor, addr: u64) -> Result<Chunk0> {
    let src = ed.reader.source();
    let head = src.read_upto("object header", addr, 16)?.into_owned();
    if head.get(..4) == Some(signature::OHDR) {
        let flags = *head.get(5).ok_or_else(|| bad(addr, "short"))?;
        let mut prefix = 6usize;
        if flags & 0x20 != 0 {
            prefix += 16;
        }
        if flags & 0x10 != 0 {
            prefix += 4;
        }
        let width = 1usize << (flags & 3);
        let sz = src.read("object header", addr + prefix as u64, width as u64)?;
        let mut le = [0u8; 8];
        le[..width].copy_from_slice(&sz);
        let data = usize::try_from(u64::from_le_bytes(le)).map_err(|_| bad(addr, "size"))?;
        let prefix = prefix + width;
        let total = prefix
            .checked_add(data)
            .and_then(|n| n.checked_add(4))
            .ok_or_else(|| bad(addr, "size"))?;
        let image = src.read("object header", addr, total as u64)?.into_owned();
        Ok(Chunk0 {
            version: 2,
            flags,
            prefix,
            data,
            image,
        })
    } else {
        if head.first() != Some(&1) {
            return Err(bad(addr, "not a version 1 or 2 object header"));
        }
        let data = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
        let image = src
            .read("object header", addr, 16 + data as u64)?
            .into_owned();
        Ok(Chunk0 {
            version: 1,
            flags: 0,
            prefix: 16,
            data,
            image,
        })
    }
}

/// The messages of `h` to carry over: all but null and continuation
/// messages, bodies as stored.
pub(super) fn messages_of(h: &ObjectHeader) -> Vec<Message> {
    h.messages
        .iter()
        .filter(|m| m.mtype != types::NIL && m.mtype != types::CONTINUATION)
        .map(|m| Message {
            kind: m.mtype,
            body: m.data.clone(),
            flags: m.flags,
            order: m.creation_order.unwrap_or(0),
        })
        .collect()
}

fn v1_messages(out: &mut Vec<u8>, msgs: &[Message]) -> Result<()> {
    for m in msgs {
        let padded = m.body.len().div_ceil(8) * 8;
        let size = u16::try_from(padded)
            .map_err(|_| Error::InvalidArgument("message too large for a header".into()))?;
        out.extend_from_slice(&m.kind.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&[m.flags, 0, 0, 0]);
        out.extend_from_slice(&m.body);
        out.resize(out.len() + padded - m.body.len(), 0);
    }
    Ok(())
}

/// Null messages filling `gap` bytes of a chunk.
fn nulls(c: &Chunk0, mut gap: usize) -> Vec<Message> {
    let per = c.size_of(0);
    let mut out = Vec::new();
    while gap >= per {
        let body = (gap - per).min(MAX_MESSAGE_BODY & !7);
        out.push(Message::new(types::NIL, vec![0; body]));
        gap -= per + body;
    }
    out
}

impl Editor {
    /// Rewrite the header at `addr` to hold `msgs` (no null or continuation
    /// messages among them); `refcount`: a new v1 prefix reference count.
    pub(super) fn rewrite_header(
        &mut self,
        addr: u64,
        h: &ObjectHeader,
        msgs: Vec<Message>,
        refcount: Option<u32>,
        txn: &mut Txn,
    ) -> Result<()> {
        let c = chunk0(self, addr)?;
        for m in &msgs {
            if m.body.len() > MAX_MESSAGE_BODY - 8 {
                return Err(Error::Unsupported {
                    structure: "object header",
                    offset: addr,
                    what: format!("a {}-byte header message", m.body.len()),
                });
            }
        }
        let total: usize = msgs.iter().map(|m| c.size_of(m.body.len())).sum();
        let (mut first, rest): (Vec<Message>, Vec<Message>) = if total <= c.data {
            (msgs, Vec::new())
        } else {
            let room = c
                .data
                .checked_sub(c.size_of(16))
                .ok_or_else(|| bad(addr, "first chunk too small for a continuation"))?;
            let mut used = 0usize;
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for m in msgs {
                let s = c.size_of(m.body.len());
                if used + s <= room {
                    used += s;
                    a.push(m);
                } else {
                    b.push(m);
                }
            }
            (a, b)
        };
        let mut nrest = 0usize;
        if !rest.is_empty() {
            let chunk = if c.version == 1 {
                let mut out = Vec::new();
                v1_messages(&mut out, &rest)?;
                out
            } else {
                encode_continuation(&rest, c.flags)?
            };
            nrest = rest.len();
            let at = self.alloc(chunk.len() as u64)?;
            let mut body = at.to_le_bytes().to_vec();
            body.extend_from_slice(&(chunk.len() as u64).to_le_bytes());
            first.push(Message::new(types::CONTINUATION, body));
            txn.writes.push((at, chunk));
        }
        let used: usize = first.iter().map(|m| c.size_of(m.body.len())).sum();
        first.extend(nulls(&c, c.data - used));
        let mut image = c.image[..c.prefix].to_vec();
        if c.version == 1 {
            let n = u16::try_from(first.len() + nrest)
                .map_err(|_| Error::InvalidArgument("too many header messages".into()))?;
            image[2..4].copy_from_slice(&n.to_le_bytes());
            if let Some(r) = refcount {
                image[4..8].copy_from_slice(&r.to_le_bytes());
            }
            v1_messages(&mut image, &first)?;
            image.resize(c.prefix + c.data, 0);
        } else {
            put_messages(&mut image, &first, c.tracked())?;
            image.resize(c.prefix + c.data, 0);
            let sum = metadata_checksum(&image);
            image.extend_from_slice(&sum.to_le_bytes());
        }
        if image.len() != c.image.len() {
            return Err(bad(addr, "rewritten first chunk changed size"));
        }
        if let Some(lo) = image.iter().zip(&c.image).position(|(a, b)| a != b) {
            let hi = image.len()
                - image
                    .iter()
                    .rev()
                    .zip(c.image.iter().rev())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
            txn.patches.push((addr + lo as u64, image[lo..hi].to_vec()));
        }
        for m in h.all(types::CONTINUATION) {
            let k = Continuation::decode(&mut m.cursor("continuation"), self.reader.sizes())?;
            txn.frees.push((k.address, k.length));
        }
        Ok(())
    }
}
