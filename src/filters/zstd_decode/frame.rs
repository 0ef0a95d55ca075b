//! Zstandard frames, RFC 8878 §3.1.1: magic number, frame header (§3.1.1.1:
//! descriptor, window descriptor, dictionary ID, frame content size), the
//! block loop and the content checksum; skippable frames (§3.1.2).

use super::block::{self, BlockState};
use super::execute::Target;
use super::xxhash::xxh64;
use super::{corrupt, Result, BLOCK_MAX, SLACK};
use crate::error::Error;

pub(crate) const MAGIC: u32 = 0xFD2F_B528;
const SKIPPABLE_MASK: u32 = 0xFFFF_FFF0;
const SKIPPABLE: u32 = 0x184D_2A50;
/// Largest window accepted (window log 31, the most libzstd ever decodes).
const MAX_WINDOW_LOG: u32 = 31;

/// A parsed frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameHeader {
    pub(crate) window: u64,
    pub(crate) content_size: Option<u64>,
    pub(crate) checksum: bool,
    /// Header bytes including the magic number.
    pub(crate) len: usize,
}

impl FrameHeader {
    /// RFC 8878 §3.1.1.2.4: Block_Maximum_Size = min(Window_Size, 128 KiB).
    pub(crate) fn block_max(&self) -> usize {
        self.window.min(BLOCK_MAX as u64) as usize
    }
}

fn le(src: &[u8], at: usize, n: usize, offset: usize) -> Result<u64> {
    let b = src
        .get(at..at + n)
        .ok_or_else(|| corrupt(offset + at, "truncated frame header"))?;
    Ok(b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
}

/// Magic number at the start of `src`, if 4 bytes are there.
pub(crate) fn magic(src: &[u8]) -> Option<u32> {
    let b = src.get(..4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Size of a skippable frame starting at `src` (`Some` if it is one).
pub(crate) fn skippable_len(src: &[u8], offset: usize) -> Result<Option<usize>> {
    match magic(src) {
        Some(m) if m & SKIPPABLE_MASK == SKIPPABLE => {
            let size = le(src, 4, 4, offset)? as usize;
            let total = size
                .checked_add(8)
                .filter(|&t| t <= src.len())
                .ok_or_else(|| corrupt(offset, "truncated skippable frame"))?;
            Ok(Some(total))
        }
        _ => Ok(None),
    }
}

/// Parse the frame header at the start of `src` (magic included).
pub(crate) fn header(src: &[u8], offset: usize) -> Result<FrameHeader> {
    if magic(src) != Some(MAGIC) {
        return Err(corrupt(offset, "not a Zstandard frame (bad magic number)"));
    }
    let d = le(src, 4, 1, offset)? as u8;
    let fcs_flag = d >> 6;
    let single = d & 0x20 != 0;
    if d & 0x08 != 0 {
        return Err(corrupt(
            offset + 4,
            "reserved bit set in frame header descriptor",
        ));
    }
    let checksum = d & 0x04 != 0;
    let did_len = [0usize, 1, 2, 4][usize::from(d & 3)];
    let mut at = 5usize;
    let mut window = 0u64;
    if !single {
        let w = le(src, at, 1, offset)? as u32;
        let log = 10 + (w >> 3);
        if log > MAX_WINDOW_LOG {
            return Err(corrupt(
                offset + at,
                format!("window log {log} exceeds {MAX_WINDOW_LOG}"),
            ));
        }
        let base = 1u64 << log;
        window = base + (base / 8) * u64::from(w & 7);
        // Window log 31 with a mantissa is past 2 GiB: libzstd (and ruzstd)
        // refuse such frames ("window size larger than maximum"), so do we.
        if window > 1u64 << MAX_WINDOW_LOG {
            return Err(corrupt(
                offset + at,
                format!("window size {window} exceeds 2^{MAX_WINDOW_LOG}"),
            ));
        }
        at += 1;
    }
    if did_len > 0 {
        let id = le(src, at, did_len, offset)?;
        if id != 0 {
            return Err(Error::filter(
                0,
                "zstd",
                format!("frame at input byte {offset} needs dictionary {id}: dictionaries are not supported"),
            ));
        }
        at += did_len;
    }
    let fcs_len = match fcs_flag {
        0 => usize::from(single),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let content_size = if fcs_len == 0 {
        None
    } else {
        let v = le(src, at, fcs_len, offset)?;
        Some(if fcs_len == 2 { v + 256 } else { v })
    };
    at += fcs_len;
    if single {
        window = content_size.unwrap_or(0);
    }
    Ok(FrameHeader {
        window,
        content_size,
        checksum,
        len: at,
    })
}

/// Where a frame's output goes.
pub(crate) trait Output {
    /// Make `buf[pos..pos + n + SLACK]` writable (when the sink can grow) and
    /// return the buffer.
    fn room(&mut self, pos: usize, n: usize) -> &mut [u8];
    /// Bytes the sink may still take after `pos`.
    fn available(&self, pos: usize) -> usize;
}

/// Growable output with a cap on the bytes appended.
pub(crate) struct VecOut<'a> {
    pub(crate) vec: &'a mut Vec<u8>,
    /// `vec` may not hold more than this many meaningful bytes.
    pub(crate) end_cap: usize,
}

impl Output for VecOut<'_> {
    fn room(&mut self, pos: usize, n: usize) -> &mut [u8] {
        let need = pos + n + SLACK;
        if self.vec.len() < need {
            if self.vec.capacity() < need {
                // Grow geometrically, but never past what the cap can use.
                let target = need.max(
                    self.vec
                        .capacity()
                        .saturating_mul(2)
                        .min(self.end_cap.saturating_add(SLACK)),
                );
                self.vec.reserve_exact(target - self.vec.len());
            }
            self.vec.resize(need, 0);
        }
        self.vec
    }

    fn available(&self, pos: usize) -> usize {
        self.end_cap.saturating_sub(pos)
    }
}

/// Fixed output (exact decoding).
pub(crate) struct SliceOut<'a>(pub(crate) &'a mut [u8]);

impl Output for SliceOut<'_> {
    fn room(&mut self, _pos: usize, _n: usize) -> &mut [u8] {
        self.0
    }

    fn available(&self, pos: usize) -> usize {
        self.0.len().saturating_sub(pos)
    }
}

/// Decode the frame at the start of `src` (offset `offset` in the whole input)
/// into `out` from position `*pos`; returns the input bytes used.
pub(crate) fn decode<O: Output>(
    src: &[u8],
    offset: usize,
    st: &mut BlockState,
    out: &mut O,
    pos: &mut usize,
) -> Result<usize> {
    let h = header(src, offset)?;
    let frame_start = *pos;
    if let Some(fcs) = h.content_size {
        let avail = out.available(frame_start) as u64;
        if fcs > avail {
            return Err(corrupt(
                offset,
                format!("frame content size {fcs} exceeds the output bound {avail}"),
            ));
        }
    }
    let fcs_end = h
        .content_size
        .map_or(usize::MAX, |c| frame_start + c as usize);
    let block_max = h.block_max();
    st.reset();
    let mut at = h.len;
    loop {
        let bh = block::header(src.get(at..).unwrap_or(&[]), offset + at)?;
        at += 3;
        let body_len = block::content_len(&bh);
        let body = src
            .get(at..at + body_len)
            .ok_or_else(|| corrupt(offset + at, "truncated block"))?;
        let cur = *pos;
        let allowed = block_max
            .min(out.available(cur))
            .min(fcs_end.saturating_sub(cur));
        let buf = out.room(cur, allowed);
        let mut t = Target {
            buf,
            pos: cur,
            limit: cur + allowed,
            frame_start,
        };
        block::decode(&bh, body, st, &mut t, block_max, offset + at)?;
        *pos = t.pos;
        at += body_len;
        if bh.last {
            break;
        }
    }
    if let Some(fcs) = h.content_size {
        let got = (*pos - frame_start) as u64;
        if got != fcs {
            return Err(corrupt(
                offset,
                format!("frame decodes to {got} bytes, its header says {fcs}"),
            ));
        }
    }
    if h.checksum {
        let stored = le(src, at, 4, offset)? as u32;
        let buf = out.room(*pos, 0);
        let computed = xxh64(buf.get(frame_start..*pos).unwrap_or(&[])) as u32;
        if stored != computed {
            return Err(corrupt(
                offset + at,
                format!("content checksum {stored:#010x} != computed {computed:#010x}"),
            ));
        }
        at += 4;
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_with_window_and_fcs() {
        // descriptor 0x40: FCS 2 bytes, no single segment; window byte 0x58 -> log 21.
        let src = [0x28, 0xB5, 0x2F, 0xFD, 0x40, 0x58, 0x10, 0x00];
        let h = header(&src, 0).unwrap();
        assert_eq!(h.window, 1 << 21);
        assert_eq!(h.content_size, Some(0x10 + 256));
        assert_eq!(h.len, 8);
        assert_eq!(h.block_max(), BLOCK_MAX);
    }

    #[test]
    fn dictionary_id_refused_zero_accepted() {
        let with = [0x28, 0xB5, 0x2F, 0xFD, 0x21, 0x07, 0x05];
        assert!(header(&with, 0).is_err());
        let zero = [0x28, 0xB5, 0x2F, 0xFD, 0x21, 0x00, 0x05];
        let h = header(&zero, 0).unwrap();
        assert_eq!(h.content_size, Some(5));
        assert_eq!(h.window, 5);
    }

    #[test]
    fn skippable_frames_are_measured() {
        let src = [0x5A, 0x2A, 0x4D, 0x18, 2, 0, 0, 0, 9, 9];
        assert_eq!(skippable_len(&src, 0).unwrap(), Some(10));
        assert!(skippable_len(&src[..9], 0).is_err());
        assert_eq!(skippable_len(&[0x28, 0xB5, 0x2F, 0xFD], 0).unwrap(), None);
    }
}
