//! Bit readers of RFC 8878 §4.1 (forward, for FSE table descriptions) and
//! §4.1 / §4.2.2 (backward bitstreams read from the last byte toward the first,
//! after the padding bit of the final byte).

use super::{corrupt, Result};

/// Little-endian forward bit reader over a byte slice (FSE table descriptions).
pub(crate) struct ForwardBits<'a> {
    data: &'a [u8],
    /// Bits consumed from the start of `data`.
    bit: usize,
}

impl<'a> ForwardBits<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        ForwardBits { data, bit: 0 }
    }

    /// Next `n` (<= 24) bits without consuming them; bits past the end read as zero.
    pub(crate) fn peek(&self, n: u32) -> u32 {
        let byte = self.bit / 8;
        let mut v: u32 = 0;
        for i in 0..4 {
            let b = self.data.get(byte + i).copied().unwrap_or(0);
            v |= u32::from(b) << (8 * i);
        }
        (v >> (self.bit % 8)) & ((1u32 << n) - 1)
    }

    pub(crate) fn skip(&mut self, n: u32) {
        self.bit += n as usize;
    }

    /// Bytes consumed, rounding the last partial byte up; error if past the end.
    pub(crate) fn bytes_used(&self, offset: usize) -> Result<usize> {
        let used = self.bit.div_ceil(8);
        if used > self.data.len() {
            return Err(corrupt(offset, "FSE table description runs past its input"));
        }
        Ok(used)
    }
}

/// Backward bit reader (RFC 8878 §4.1): reads from the highest unread bit down.
///
/// `container` holds the 8 bytes `data[ptr..ptr + 8]` (or the whole stream,
/// right-aligned, when it is shorter than 8 bytes); `consumed` counts the bits
/// already read from its top. The stream is exactly used up when `ptr == 0`
/// and `consumed == 64`; `consumed > 64` means it was over-read (reads past
/// the start return garbage, detected by [`BackBits::finished`]).
pub(crate) struct BackBits<'a> {
    data: &'a [u8],
    ptr: usize,
    container: u64,
    consumed: u32,
    /// `data.len() - 8` (0 for streams shorter than 8 bytes): the largest
    /// window start.
    lim: usize,
}

fn le64(data: &[u8], at: usize) -> u64 {
    match data.get(at..at + 8) {
        Some(s) => {
            let mut b = [0u8; 8];
            b.copy_from_slice(s);
            u64::from_le_bytes(b)
        }
        None => 0,
    }
}

impl<'a> BackBits<'a> {
    /// Open a backward stream; its last byte must hold the padding marker bit.
    /// (Always inlined: whether LLVM inlined it into the sequence decoder
    /// changed that loop's register allocation by ~4 % of its instructions.)
    #[inline(always)]
    pub(crate) fn new(data: &'a [u8], offset: usize) -> Result<Self> {
        let Some(&last) = data.last() else {
            return Err(corrupt(offset, "empty bitstream"));
        };
        if last == 0 {
            return Err(corrupt(offset, "bitstream's last byte has no end marker"));
        }
        let pad = last.leading_zeros() + 1;
        if data.len() >= 8 {
            let ptr = data.len() - 8;
            Ok(BackBits {
                data,
                ptr,
                container: le64(data, ptr),
                consumed: pad,
                lim: ptr,
            })
        } else {
            let mut v: u64 = 0;
            for (i, &b) in data.iter().enumerate() {
                v |= u64::from(b) << (8 * i);
            }
            Ok(BackBits {
                data,
                ptr: 0,
                container: v,
                consumed: pad + 8 * (8 - data.len() as u32),
                lim: 0,
            })
        }
    }

    /// The next `n` (<= 56) bits as a number, without consuming them.
    #[inline(always)]
    pub(crate) fn peek(&self, n: u32) -> u64 {
        ((self.container << (self.consumed & 63)) >> 1) >> (63 - n)
    }

    #[inline(always)]
    pub(crate) fn consume(&mut self, n: u32) {
        self.consumed += n;
    }

    /// Read `n` (<= 56) bits.
    #[inline(always)]
    pub(crate) fn read(&mut self, n: u32) -> u64 {
        let v = self.peek(n);
        self.consumed += n;
        v
    }

    /// Move the window down so at least 56 bits are available (unless near the start).
    #[inline(always)]
    pub(crate) fn refill(&mut self) {
        let step = ((self.consumed >> 3) as usize).min(self.ptr);
        if step > 0 {
            self.ptr -= step;
            self.consumed -= 8 * step as u32;
            self.container = self.window(self.ptr);
        }
    }

    /// [`BackBits::refill`] without the branch on a zero step (reloading the
    /// same window is harmless): for the sequence loop, which reads enough
    /// bits per refill that the step is almost never zero. (The Huffman
    /// weight decoder refills after every few bits and keeps the branch.)
    #[inline(always)]
    pub(crate) fn refill_always(&mut self) {
        let step = ((self.consumed >> 3) as usize).min(self.ptr);
        self.ptr -= step;
        self.consumed -= 8 * step as u32;
        self.container = self.window(self.ptr);
    }

    /// The 8 bytes at `at`, clamped to the last window of the stream (a
    /// compare and a conditional move; the slice `get` of `le64` costs two
    /// compares and a branch). Streams shorter than 8 bytes keep their
    /// container (right-aligned stream; `ptr` stays 0).
    #[inline(always)]
    fn window(&self, at: usize) -> u64 {
        if self.lim + 8 != self.data.len() {
            return self.container;
        }
        let at = at.min(self.lim);
        // SAFETY: at <= lim = data.len() - 8, so at..at + 8 is in bounds.
        let v = unsafe { self.data.as_ptr().add(at).cast::<u64>().read_unaligned() };
        u64::from_le(v)
    }

    /// Window position (index of its first byte in the stream) and bits consumed.
    pub(crate) fn position(&self) -> (usize, u32) {
        (self.ptr, self.consumed)
    }

    /// Resume at a position reached outside (window at `ptr`, `consumed` bits
    /// of it read), as returned by [`BackBits::position`] and moved only by
    /// whole bytes; `ptr + 8` must lie within the stream of at least 8 bytes.
    pub(crate) fn set_position(&mut self, ptr: usize, consumed: u32) {
        self.ptr = ptr;
        self.consumed = consumed;
        self.container = le64(self.data, ptr);
    }

    /// True once more bits were read than the stream holds.
    #[inline(always)]
    pub(crate) fn overflowed(&self) -> bool {
        self.ptr == 0 && self.consumed > 64
    }

    /// True when every bit was read, no more and no less.
    pub(crate) fn finished(&self) -> bool {
        self.ptr == 0 && self.consumed == 64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backward_reads_from_the_top_after_padding() {
        // last byte 0b0000_0101: padding "00000 1", then bits "01"; first byte 0xA5.
        let data = [0xA5u8, 0b0000_0101];
        let mut r = BackBits::new(&data, 0).unwrap();
        assert_eq!(r.read(2), 0b01);
        assert_eq!(r.read(4), 0xA);
        assert!(!r.finished());
        assert_eq!(r.read(4), 0x5);
        assert!(r.finished());
        r.refill();
        assert_eq!(r.read(1), 0);
        assert!(r.overflowed());
    }

    #[test]
    fn backward_long_stream_refills() {
        // 16 bytes: marker byte 0x01 then 15 bytes of value i.
        let mut data: Vec<u8> = (0..15u8).collect();
        data.push(1);
        let mut r = BackBits::new(&data, 0).unwrap();
        for i in (0..15u8).rev() {
            r.refill();
            assert_eq!(r.read(8) as u8, i);
        }
        assert!(r.finished());
    }

    /// Streams of every length around the 8-byte window (the clamped
    /// refill load) read back every byte, then are exactly finished, with
    /// either refill.
    #[test]
    fn backward_every_length_reads_back_its_bytes() {
        fn refill(r: &mut BackBits, always: bool) {
            if always {
                r.refill_always();
            } else {
                r.refill();
            }
        }
        for (n, always) in (1..=24usize).flat_map(|n| [(n, false), (n, true)]) {
            let mut data: Vec<u8> = (0..n as u8).map(|b| b.wrapping_mul(29) ^ 0x5A).collect();
            data.push(1);
            let mut r = BackBits::new(&data, 0).unwrap();
            for i in (0..n).rev() {
                refill(&mut r, always);
                assert_eq!(r.read(8) as u8, data[i], "len {n} byte {i}");
            }
            refill(&mut r, always);
            assert!(r.finished(), "len {n}");
            r.read(1);
            refill(&mut r, always);
            assert!(r.overflowed(), "len {n}");
        }
    }

    #[test]
    fn forward_reads_lsb_first() {
        let data = [0b1010_1100u8, 0xFF];
        let mut f = ForwardBits::new(&data);
        assert_eq!(f.peek(3), 0b100);
        f.skip(3);
        assert_eq!(f.peek(7), 0b11_10101);
        f.skip(13);
        assert_eq!(f.bytes_used(0).unwrap(), 2);
        f.skip(1);
        assert!(f.bytes_used(0).is_err());
    }

    #[test]
    fn backward_rejects_missing_marker() {
        assert!(BackBits::new(&[1, 0], 0).is_err());
        assert!(BackBits::new(&[], 0).is_err());
    }
}
