//! Version 2 object header encoder (HDF5 File Format Specification IV.A.1.b,
//! "Version 2 Object Header"): no times, attribute creation order tracked
//! (and indexed) on request, with the Jenkins lookup3 checksum; one chunk, plus a continuation chunk (`OCHK`) for messages
//! written after every object has its address.

use crate::error::{Error, Result};
use crate::checksum::metadata_checksum;
use crate::signature;

/// One message: type and body.
#[derive(Clone, Debug)]
pub struct Message {
    /// Message type ([`crate::messages::types`]).
    pub kind: u16,
    pub body: Vec<u8>,
    /// Message flags (bit 0: constant).
    pub flags: u8,
    /// Creation order (of an attribute message), written when the header
    /// tracks attribute creation order.
    pub order: u16,
}

/// Header flag bit 2: attribute creation order tracked (each message then
/// carries a 2-byte creation order); bit 3: indexed.
pub const ATTR_ORDER_TRACKED: u8 = 0x04;
pub const ATTR_ORDER_INDEXED: u8 = 0x08;

impl Message {
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

/// Encode a whole object header from its messages.
pub fn encode(messages: &[Message]) -> Result<Vec<u8>> {
    encode_with(messages, 0)
}

/// [`encode`] with header flags `attr_order` ([`ATTR_ORDER_TRACKED`],
/// [`ATTR_ORDER_INDEXED`]).
pub fn encode_with(messages: &[Message], attr_order: u8) -> Result<Vec<u8>> {
    let attr_order = attr_order & (ATTR_ORDER_TRACKED | ATTR_ORDER_INDEXED);
    let tracked = attr_order & ATTR_ORDER_TRACKED != 0;
    let per = if tracked { 6 } else { 4 };
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
    out.push(size_code | attr_order);
    out.extend_from_slice(&body_len.to_le_bytes()[..size_bytes]);
    put_messages(&mut out, messages, tracked)?;
    let sum = metadata_checksum(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Ok(out)
}

fn put_messages(out: &mut Vec<u8>, messages: &[Message], tracked: bool) -> Result<()> {
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
        out.push(kind);
        out.extend_from_slice(&len.to_le_bytes());
        out.push(m.flags);
        if tracked {
            out.extend_from_slice(&m.order.to_le_bytes());
        }
        out.extend_from_slice(&m.body);
    }
    Ok(())
}

/// Encode a continuation chunk (`OCHK`, messages, checksum) of a version 2 header.
pub fn encode_continuation(messages: &[Message], attr_order: u8) -> Result<Vec<u8>> {
    let mut out = signature::OCHK.to_vec();
    put_messages(&mut out, messages, attr_order & ATTR_ORDER_TRACKED != 0)?;
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
        let h = encode(&[Message::new(types::GROUP_INFO, vec![0, 0])]).unwrap();
        assert_eq!(&h[..7], b"OHDR\x02\x00\x06");
        assert_eq!(&h[7..13], &[0x0A, 2, 0, 0, 0, 0]);
        let sum = metadata_checksum(&h[..13]);
        assert_eq!(&h[13..], &sum.to_le_bytes());
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
        let c = encode_continuation(&[Message::new(types::ATTRIBUTE, vec![7; 3])], 0).unwrap();
        assert_eq!(&c[..11], b"OCHK\x0C\x03\x00\x00\x07\x07\x07");
        assert_eq!(&c[11..], &metadata_checksum(&c[..11]).to_le_bytes());
        let mut h = encode(&[Message::new(types::CONTINUATION, vec![0xFF; 16])]).unwrap();
        patch_last_message(&mut h, &[1; 16]).unwrap();
        let n = h.len();
        assert_eq!(&h[n - 20..n - 4], &[1; 16]);
        assert_eq!(&h[n - 4..], &metadata_checksum(&h[..n - 4]).to_le_bytes());
        assert!(patch_last_message(&mut [0u8; 3], &[1]).is_err());
    }
}
