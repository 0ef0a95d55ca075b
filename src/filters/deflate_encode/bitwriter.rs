//! Bit output for deflate (RFC 1951 §3.1.1: bits packed from the least
//! significant bit of each byte), through a 64-bit buffer.

/// Writes bits into `buf` from byte `pos` on. `put` adds at most 56 bits
/// between two `flush` calls (the caller's contract: each `flush` leaves at
/// most 7 bits pending).
pub(super) struct BitWriter<'a> {
    buf: &'a mut Vec<u8>,
    pos: usize,
    bits: u64,
    nbits: u32,
}

impl<'a> BitWriter<'a> {
    /// A writer appending to `buf` (its current length is kept).
    pub(super) fn new(buf: &'a mut Vec<u8>) -> Self {
        let pos = buf.len();
        BitWriter {
            buf,
            pos,
            bits: 0,
            nbits: 0,
        }
    }

    /// Add the low `n` bits of `v` (`v` has no bits above them).
    #[inline(always)]
    pub(super) fn put(&mut self, v: u64, n: u32) {
        debug_assert!(self.nbits + n <= 64 && (n == 64 || v >> n == 0));
        self.bits |= v << self.nbits;
        self.nbits += n;
    }

    /// Move the whole bytes of the buffer out (at most 7 bits stay pending).
    #[inline(always)]
    pub(super) fn flush(&mut self) {
        if self.buf.len() < self.pos + 8 {
            self.grow();
        }
        self.buf[self.pos..self.pos + 8].copy_from_slice(&self.bits.to_le_bytes());
        let bytes = self.nbits >> 3;
        self.pos += bytes as usize;
        // Two shifts, each below 64 bits, make a shift by 8 * bytes (up to 64).
        self.bits = (self.bits >> (bytes * 4)) >> (bytes * 4);
        self.nbits &= 7;
    }

    #[cold]
    fn grow(&mut self) {
        // Doubling: within the capacity the caller reserved this only
        // zero-fills (about twice the output in all), never reallocates.
        let want = (self.pos + 8).max(self.buf.len() * 2).max(64);
        self.buf.resize(want, 0);
    }

    /// Pad with zero bits to a byte boundary and flush everything.
    pub(super) fn align(&mut self) {
        self.flush();
        if self.nbits > 0 {
            self.nbits = 8;
            self.flush();
        }
    }

    /// Append whole bytes (after [`align`](Self::align)).
    pub(super) fn put_bytes(&mut self, data: &[u8]) {
        debug_assert_eq!(self.nbits, 0);
        let end = self.pos + data.len();
        if self.buf.len() < end + 8 {
            self.buf.resize(end + 8, 0);
        }
        self.buf[self.pos..end].copy_from_slice(data);
        self.pos = end;
    }

    /// Flush the last partial byte and cut `buf` to the bytes written.
    pub(super) fn finish(mut self) {
        self.align();
        self.buf.truncate(self.pos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn prop_bits_round_trip(
            fields in proptest::collection::vec((0u64..u64::MAX, 0u32..=25), 0..400),
            prefix in proptest::collection::vec(0u8..=255, 0..4),
        ) {
            let mut buf = prefix.clone();
            let mut w = BitWriter::new(&mut buf);
            for (i, &(v, n)) in fields.iter().enumerate() {
                let v = if n == 0 { 0 } else { v & ((1u64 << n) - 1) };
                w.put(v, n);
                if i % 2 == 1 {
                    w.flush();
                }
            }
            w.finish();
            prop_assert_eq!(&buf[..prefix.len()], &prefix[..]);
            let total: u32 = fields.iter().map(|f| f.1).sum();
            prop_assert_eq!(buf.len() - prefix.len(), total.div_ceil(8) as usize);
            // Read back LSB first.
            let body = &buf[prefix.len()..];
            let mut at = 0usize;
            for &(v, n) in &fields {
                let v = if n == 0 { 0 } else { v & ((1u64 << n) - 1) };
                let mut got = 0u64;
                for k in 0..n as usize {
                    let bit = (body[(at + k) / 8] >> ((at + k) % 8)) & 1;
                    got |= u64::from(bit) << k;
                }
                prop_assert_eq!(got, v);
                at += n as usize;
            }
            // Padding bits are zero.
            if !at.is_multiple_of(8) {
                prop_assert_eq!(body[at / 8] >> (at % 8), 0);
            }
        }
    }

    #[test]
    fn align_and_bytes() {
        let mut buf = Vec::new();
        let mut w = BitWriter::new(&mut buf);
        w.put(0b101, 3);
        w.align();
        w.put_bytes(&[0xAA, 0xBB]);
        w.put(1, 1);
        w.finish();
        assert_eq!(buf, vec![0b101, 0xAA, 0xBB, 1]);
    }
}
