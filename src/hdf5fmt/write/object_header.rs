//! Version 2 object header encoder (HDF5 File Format Specification IV.A.1.b,
//! "Version 2 Object Header"): no times, attribute creation order tracked
//! (and indexed) on request, with the Jenkins lookup3 checksum; one chunk, plus a continuation chunk (`OCHK`) for messages
//! written after every object has its address.

use crate::checksum::metadata_checksum;
use crate::error::{Error, Result};
use crate::object_header::{MessagePrefixV2, SIZE_FIELD_MASK};
use crate::signature;

/// One message: type and body.
#[derive(Clone, Debug)]
pub struct Message {
    /// Message type ([`crate::messages::types`]).
    pub kind: u16,
    /// The encoded message body (at most [`MAX_MESSAGE_BODY`] bytes).
    pub body: Vec<u8>,
    /// Message flags ([`crate::object_header::FLAG_CONSTANT`], ...).
    pub flags: u8,
    /// Creation order (of an attribute message), written when the header
    /// tracks attribute creation order.
    pub order: u16,
}

pub use crate::object_header::{ATTR_ORDER_INDEXED, ATTR_ORDER_TRACKED};

impl Message {
    /// A message of type `kind` with body `body`, no flags and creation order 0.
    pub fn new(kind: u16, body: Vec<u8>) -> Self {
        Message {
            kind,
            body,
            flags: 0,
            order: 0,
        }
    }
}

/// Largest message body a v2 header can hold (the size field is 16 bits).
pub const MAX_MESSAGE_BODY: usize = 0xFFFF;

/// Smallest message area of a chunk (libhdf5's `H5O_MIN_SIZE`): room for a
/// message prefix (6 bytes with creation order) and a continuation message
/// body (8-byte address, 8-byte length).
///
/// libhdf5 grows a header it cannot extend in place by adding a chunk and
/// putting a continuation message into an existing one: into a null message
/// of 16 bytes or more, or into the place of a message of 16 bytes or more
/// that it moves out; failing both, it moves every message of the last
/// chunk out and writes the continuation over that whole chunk, assuming
/// (only asserting, in debug builds) that every chunk can hold one. A chunk
/// smaller than this — a continuation chunk holding only a compact layout of
/// one reference (12 bytes), a committed datatype's header holding only an
/// integer type (12 bytes) — gets a continuation message cut short, and the
/// object no longer opens. Chunks below this size are padded with a null
/// message (of at least 16 bytes, so that the continuation fits there).
pub const MIN_CHUNK_DATA: usize = 22;

/// Size of the continuation message body (address and length).
const CONTINUATION_BODY: usize = 16;

/// `messages` with a null message added when their encoded size (`per`
/// bytes of prefix each) is under [`MIN_CHUNK_DATA`]: before a trailing
/// continuation message (patched in place later), else at the end.
fn padded(messages: &[Message], per: usize) -> std::borrow::Cow<'_, [Message]> {
    let area: usize = messages.iter().map(|m| per + m.body.len()).sum();
    if area >= MIN_CHUNK_DATA {
        return std::borrow::Cow::Borrowed(messages);
    }
    let body = (MIN_CHUNK_DATA - area)
        .saturating_sub(per)
        .max(CONTINUATION_BODY);
    let null = Message::new(crate::messages::types::NIL, vec![0; body]);
    let mut out = messages.to_vec();
    let at = match out.last() {
        Some(m) if m.kind == crate::messages::types::CONTINUATION => out.len() - 1,
        _ => out.len(),
    };
    out.insert(at, null);
    std::borrow::Cow::Owned(out)
}

/// Encode a whole object header from its messages.
pub fn encode(messages: &[Message]) -> Result<Vec<u8>> {
    encode_with(messages, 0)
}

/// [`encode`] with header flags `attr_order` ([`ATTR_ORDER_TRACKED`],
/// [`ATTR_ORDER_INDEXED`]).
pub fn encode_with(messages: &[Message], attr_order: u8) -> Result<Vec<u8>> {
    let attr_order = attr_order & (ATTR_ORDER_TRACKED | ATTR_ORDER_INDEXED);
    let tracked = attr_order & ATTR_ORDER_TRACKED != 0;
    let per = MessagePrefixV2::len(tracked) as u64;
    let messages = padded(messages, per as usize);
    let messages = &messages[..];
    let mut body_len: u64 = 0;
    for m in messages {
        if m.body.len() > MAX_MESSAGE_BODY {
            return Err(Error::InvalidArgument(format!(
                "object header message of type {:#x} is {} bytes (max {MAX_MESSAGE_BODY})",
                m.kind,
                m.body.len()
            )));
        }
        body_len += per + m.body.len() as u64;
    }
    let (size_code, size_bytes) = match body_len {
        0..=0xFF => (0u8, 1usize),
        0x100..=0xFFFF => (1, 2),
        0x1_0000..=0xFFFF_FFFF => (2, 4),
        _ => (3, 8),
    };
    let mut out = Vec::with_capacity(body_len as usize + 16);
    out.extend_from_slice(signature::OHDR);
    out.push(2);
    out.push((size_code & SIZE_FIELD_MASK) | attr_order);
    out.extend_from_slice(&body_len.to_le_bytes()[..size_bytes]);
    put_messages(&mut out, messages, tracked)?;
    let sum = metadata_checksum(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Ok(out)
}

pub(crate) fn put_messages(out: &mut Vec<u8>, messages: &[Message], tracked: bool) -> Result<()> {
    for m in messages {
        let len = u16::try_from(m.body.len()).map_err(|_| {
            Error::InvalidArgument(format!(
                "object header message of type {:#x} is {} bytes (max {MAX_MESSAGE_BODY})",
                m.kind,
                m.body.len()
            ))
        })?;
        let kind = u8::try_from(m.kind).map_err(|_| {
            Error::InvalidArgument(format!(
                "message type {:#x} does not fit a version 2 header",
                m.kind
            ))
        })?;
        MessagePrefixV2 {
            mtype: kind,
            size: len,
            flags: m.flags,
            creation_order: tracked.then_some(m.order),
        }
        .encode(out);
        out.extend_from_slice(&m.body);
    }
    Ok(())
}

/// Encode a continuation chunk (`OCHK`, messages, checksum) of a version 2 header.
pub fn encode_continuation(messages: &[Message], attr_order: u8) -> Result<Vec<u8>> {
    let tracked = attr_order & ATTR_ORDER_TRACKED != 0;
    let messages = padded(messages, MessagePrefixV2::len(tracked));
    let mut out = signature::OCHK.to_vec();
    put_messages(&mut out, &messages, tracked)?;
    let sum = metadata_checksum(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Ok(out)
}

/// Overwrite the body of the last message of an encoded header (same length)
/// and recompute the checksum.
pub fn patch_last_message(header: &mut [u8], body: &[u8]) -> Result<()> {
    let end = header
        .len()
        .checked_sub(4)
        .ok_or_else(|| Error::InvalidArgument("header too short".into()))?;
    let start = end
        .checked_sub(body.len())
        .ok_or_else(|| Error::InvalidArgument("header too short".into()))?;
    if let Some(dst) = header.get_mut(start..end) {
        dst.copy_from_slice(body);
    }
    let sum = metadata_checksum(header.get(..end).unwrap_or_default());
    if let Some(dst) = header.get_mut(end..) {
        dst.copy_from_slice(&sum.to_le_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::types;

    #[test]
    fn header_layout_and_checksum() {
        let h = encode(&[Message::new(types::LINK_INFO, vec![0; 18])]).unwrap();
        assert_eq!(&h[..7], b"OHDR\x02\x00\x16");
        assert_eq!(&h[7..11], &[0x02, 18, 0, 0]);
        let sum = metadata_checksum(&h[..29]);
        assert_eq!(&h[29..], &sum.to_le_bytes());
    }

    #[test]
    fn small_chunks_get_room_for_a_continuation() {
        // a lone group info message (6 bytes) gets a 16-byte null message
        let h = encode(&[Message::new(types::GROUP_INFO, vec![0, 0])]).unwrap();
        assert_eq!(&h[..7], b"OHDR\x02\x00\x1A");
        assert_eq!(&h[7..13], &[0x0A, 2, 0, 0, 0, 0]);
        assert_eq!(&h[13..17], &[0x00, 16, 0, 0]);
        assert_eq!(&h[17..33], &[0; 16]);
        assert_eq!(&h[33..], &metadata_checksum(&h[..33]).to_le_bytes());
        // a continuation chunk holding a compact layout of one reference
        let c = encode_continuation(&[Message::new(types::LAYOUT, vec![3; 12])], 0).unwrap();
        assert_eq!(c.len(), 4 + 16 + 20 + 4);
        assert_eq!(&c[20..24], &[0x00, 16, 0, 0]);
        // with creation order tracked the prefix is 6 bytes
        let c = encode_continuation(&[Message::new(types::LAYOUT, vec![3; 12])], 4).unwrap();
        assert_eq!(c.len(), 4 + 18 + 22 + 4);
        // a trailing continuation message stays last (it is patched in place)
        let h = encode(&[Message::new(types::CONTINUATION, vec![0xFF; 16])]).unwrap();
        assert_eq!(&h[6..11], &[40, 0x00, 16, 0, 0]);
        let n = h.len();
        assert_eq!(&h[n - 24..n - 20], &[0x10, 16, 0, 0]);
        // chunks already large enough are left alone
        let h = encode(&[Message::new(types::LAYOUT, vec![0; 18])]).unwrap();
        assert_eq!(h.len(), 7 + 22 + 4);
    }

    #[test]
    fn large_header_uses_wider_size_field() {
        let h = encode(&[Message::new(types::DATASPACE, vec![0; 300])]).unwrap();
        assert_eq!(h[5], 1);
        assert_eq!(u16::from_le_bytes([h[6], h[7]]), 304);
        assert!(encode(&[Message::new(types::DATASPACE, vec![0; 70_000])]).is_err());
    }

    #[test]
    fn continuation_chunk_and_patch() {
        let c = encode_continuation(&[Message::new(types::ATTRIBUTE, vec![7; 18])], 0).unwrap();
        assert_eq!(&c[..11], b"OCHK\x0C\x12\x00\x00\x07\x07\x07");
        assert_eq!(&c[26..], &metadata_checksum(&c[..26]).to_le_bytes());
        let mut h = encode(&[Message::new(types::CONTINUATION, vec![0xFF; 16])]).unwrap();
        patch_last_message(&mut h, &[1; 16]).unwrap();
        let n = h.len();
        assert_eq!(&h[n - 20..n - 4], &[1; 16]);
        assert_eq!(&h[n - 4..], &metadata_checksum(&h[..n - 4]).to_le_bytes());
        assert!(patch_last_message(&mut [0u8; 3], &[1]).is_err());
    }
}
