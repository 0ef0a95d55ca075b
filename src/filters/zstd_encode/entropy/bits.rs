//! Little-endian, LSB-first bit writer for the RFC 8878 bitstreams (§4.1 FSE,
//! §4.2 Huffman, §3.1.1.3.2.1 sequences): written forward, read backward by
//! the decoder after the final 1-bit end marker.

/// A 64-bit accumulator appending whole bytes to a `Vec<u8>`.
pub(crate) struct BitWriter<'a> {
    buf: &'a mut Vec<u8>,
    /// Next byte to write; `buf` is zero-extended ahead of it.
    pos: usize,
    acc: u64,
    nbits: u32,
}

impl<'a> BitWriter<'a> {
    /// A writer appending to `buf`, expecting about `hint` bytes (it grows
    /// past that when needed).
    pub(crate) fn new(buf: &'a mut Vec<u8>, hint: usize) -> Self {
        let pos = buf.len();
        buf.resize(pos + hint + 16, 0);
        BitWriter {
            buf,
            pos,
            acc: 0,
            nbits: 0,
        }
    }

    /// Add the low `n` (≤ 32) bits of `v`. The caller keeps the pending bit
    /// count at most 64 between flushes (each call site documents its budget).
    #[inline(always)]
    pub(crate) fn add(&mut self, v: u64, n: u32) {
        debug_assert!(n <= 32 && self.nbits + n <= 64);
        let masked = v & ((1u64 << n) - 1);
        // nbits < 64 whenever n > 0 (budget above); when n == 0, masked is 0
        // and the shift amount is still below 64 because flushes keep it ≤ 63.
        self.acc |= masked << (self.nbits & 63);
        self.nbits += n;
    }

    /// Move the whole pending bytes to the buffer (leaves at most 7 bits).
    #[inline(always)]
    pub(crate) fn flush(&mut self) {
        let n = (self.nbits >> 3) as usize;
        if self.pos + 8 > self.buf.len() {
            grow(self.buf);
        }
        if let Some(dst) = self.buf.get_mut(self.pos..self.pos + 8) {
            dst.copy_from_slice(&self.acc.to_le_bytes());
        }
        self.pos += n;
        // n ≤ 8; a full 64-bit accumulator is shifted out in two steps.
        self.acc = (self.acc >> (4 * n)) >> (4 * n);
        self.nbits &= 7;
    }

    /// Close a backward-read stream: the 1-bit end marker, then the padding.
    pub(crate) fn finish_marked(mut self) {
        self.flush();
        self.add(1, 1);
        self.finish_plain();
    }

    /// Flush everything, padding the last byte with zero bits.
    pub(crate) fn finish_plain(mut self) {
        self.flush();
        let end = self.pos + usize::from(self.nbits > 0);
        self.buf.truncate(end);
    }
}

/// Extend the zeroed room ahead of the writer (a free function, so that the
/// writer's registers do not escape on the hot path).
#[cold]
#[inline(never)]
fn grow(buf: &mut Vec<u8>) {
    let n = buf.len();
    buf.resize(n + n / 2 + 64, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_lsb_first() {
        let mut v = Vec::new();
        let mut w = BitWriter::new(&mut v, 0);
        w.add(0b101, 3);
        w.add(0xFF, 8);
        w.add(0x1234_5678, 32);
        w.flush();
        w.add(0x3, 2);
        w.finish_marked();
        let mut expect: u128 = 0b101 | (0xFF << 3) | (0x1234_5678 << 11) | (0x3 << 43) | (1 << 45);
        let mut bytes = Vec::new();
        for _ in 0..6 {
            bytes.push(expect as u8);
            expect >>= 8;
        }
        assert_eq!(v, bytes);
    }
}
