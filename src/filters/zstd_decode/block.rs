//! Blocks of a Zstandard frame, RFC 8878 §3.1.1.2: the 3-byte block header,
//! raw, RLE and compressed blocks (§3.1.1.3: literals then sequences), and the
//! block maximum size bound.

use super::execute::Target;
use super::huffman::HufTable;
use super::literals::{self, Literals};
use super::sequences::{self, SeqState};
use super::{corrupt, Result};

/// State carried from block to block within a frame, and scratch memory.
pub(crate) struct BlockState {
    pub(crate) huf: HufTable,
    pub(crate) seq: SeqState,
    pub(crate) lits: Vec<u8>,
}

impl BlockState {
    pub(crate) fn new() -> Self {
        BlockState {
            huf: HufTable::new(),
            seq: SeqState::new(),
            lits: Vec::new(),
        }
    }

    /// Forget the entropy tables and repeat offsets: a new frame starts.
    pub(crate) fn reset(&mut self) {
        self.huf.valid = false;
        self.huf.x2.valid = false;
        self.seq.reset();
    }
}

/// A parsed block header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) last: bool,
    pub(crate) kind: u8,
    pub(crate) size: usize,
}

pub(crate) fn header(src: &[u8], offset: usize) -> Result<Header> {
    let h = src
        .get(..3)
        .ok_or_else(|| corrupt(offset, "truncated block header"))?;
    let v = u32::from(h[0]) | (u32::from(h[1]) << 8) | (u32::from(h[2]) << 16);
    let kind = ((v >> 1) & 3) as u8;
    if kind == 3 {
        return Err(corrupt(offset, "reserved block type"));
    }
    Ok(Header {
        last: v & 1 == 1,
        kind,
        size: (v >> 3) as usize,
    })
}

/// Bytes of input the block's content takes after its header.
pub(crate) fn content_len(h: &Header) -> usize {
    if h.kind == 1 {
        1
    } else {
        h.size
    }
}

/// Decode one block's content `body` into `t` (at most `t.limit - t.pos` bytes,
/// which the caller sets to the block maximum or less).
pub(crate) fn decode(
    h: &Header,
    body: &[u8],
    st: &mut BlockState,
    t: &mut Target,
    block_max: usize,
    offset: usize,
) -> Result<()> {
    match h.kind {
        0 | 1 => {
            if h.size > block_max {
                return Err(corrupt(
                    offset,
                    format!(
                        "block of {} bytes exceeds the block maximum {block_max}",
                        h.size
                    ),
                ));
            }
            let end = t.pos + h.size;
            if end > t.limit {
                return Err(corrupt(offset, "block decodes past the output bound"));
            }
            let dst = t
                .buf
                .get_mut(t.pos..end)
                .ok_or_else(|| corrupt(offset, "block decodes past the output bound"))?;
            if h.kind == 0 {
                let src = body
                    .get(..h.size)
                    .ok_or_else(|| corrupt(offset, "truncated raw block"))?;
                dst.copy_from_slice(src);
            } else {
                let &b = body
                    .first()
                    .ok_or_else(|| corrupt(offset, "truncated RLE block"))?;
                dst.fill(b);
            }
            t.pos = end;
            Ok(())
        }
        _ => {
            if h.size > block_max {
                return Err(corrupt(
                    offset,
                    format!(
                        "compressed block of {} bytes exceeds the block maximum {block_max}",
                        h.size
                    ),
                ));
            }
            let body = body
                .get(..h.size)
                .ok_or_else(|| corrupt(offset, "truncated compressed block"))?;
            let mut lits = std::mem::take(&mut st.lits);
            let res = compressed(body, st, &mut lits, t, offset);
            st.lits = lits;
            res
        }
    }
}

fn compressed(
    body: &[u8],
    st: &mut BlockState,
    lits: &mut Vec<u8>,
    t: &mut Target,
    offset: usize,
) -> Result<()> {
    let (l, used) = literals::read(body, &mut st.huf, lits, offset)?;
    let seq = body.get(used..).unwrap_or(&[]);
    let o = offset + used;
    match l {
        Literals::Raw { start, len } => {
            let raw = body.get(start..).unwrap_or(&[]);
            sequences::decode_and_execute(seq, &mut st.seq, raw, len, t, o)
        }
        Literals::Buffer { len } => {
            sequences::decode_and_execute(seq, &mut st.seq, lits, len, t, o)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields() {
        // last = 1, type = 2 (compressed), size = 5: 5 << 3 | 2 << 1 | 1 = 45.
        assert_eq!(
            header(&[45, 0, 0], 0).unwrap(),
            Header {
                last: true,
                kind: 2,
                size: 5
            }
        );
        assert!(header(&[6, 0, 0], 0).is_err());
        assert!(header(&[1, 0], 0).is_err());
    }
}
