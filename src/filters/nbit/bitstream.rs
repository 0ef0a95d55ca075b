//! The MSB-first bit stream shared by the n-bit and scale-offset filters
//! (`docs/filters-format.md` §2.5–2.6): values are written most significant bit
//! first, filling each byte from its high bit, with no alignment between values.

/// Reads MSB-first values from a byte slice; `None` once the bytes run out.
#[derive(Debug)]
pub struct BitReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> BitReader<'a> {
    /// A reader at the first bit of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        BitReader { data, pos: 0 }
    }

    /// The next `n` bits (`n ≤ 64`) as an unsigned integer.
    pub fn read(&mut self, n: u32) -> Option<u64> {
        debug_assert!(n <= 64);
        let mut value = 0u64;
        let mut left = n;
        while left > 0 {
            let byte = u32::from(*self.data.get(self.pos / 8)?);
            let avail = 8 - (self.pos % 8) as u32;
            let take = avail.min(left);
            let bits = (byte >> (avail - take)) & ((1u32 << take) - 1);
            value = (value << take) | u64::from(bits);
            left -= take;
            self.pos += take as usize;
        }
        Some(value)
    }
}

/// Writes MSB-first values into a growing byte vector.
#[derive(Debug, Default)]
pub struct BitWriter {
    out: Vec<u8>,
    pos: usize,
}

impl BitWriter {
    /// An empty writer with room for `bytes` bytes.
    pub fn with_capacity(bytes: usize) -> Self {
        BitWriter {
            out: Vec::with_capacity(bytes),
            pos: 0,
        }
    }

    /// Append the low `n` bits (`n ≤ 64`) of `value`, most significant first.
    pub fn write(&mut self, value: u64, n: u32) {
        debug_assert!(n <= 64);
        let mut left = n;
        while left > 0 {
            if self.pos.is_multiple_of(8) {
                self.out.push(0);
            }
            let avail = 8 - (self.pos % 8) as u32;
            let take = avail.min(left);
            let bits = ((value >> (left - take)) & ((1u64 << take) - 1)) as u8;
            if let Some(last) = self.out.last_mut() {
                *last |= bits << (avail - take);
            }
            left -= take;
            self.pos += take as usize;
        }
    }

    /// Bits written so far.
    pub fn bit_len(&self) -> usize {
        self.pos
    }

    /// The bytes written, the last one padded with zero bits.
    pub fn finish(self) -> Vec<u8> {
        self.out
    }

    /// The bytes written, padded with zero bits, plus the one spare byte the C
    /// filters always count: `floor(bits / 8) + 1` bytes in all.
    pub fn finish_with_spare_byte(mut self) -> Vec<u8> {
        self.out.resize(self.pos / 8 + 1, 0);
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msb_first_packing() {
        let mut w = BitWriter::default();
        w.write(0b101, 3);
        w.write(0xABC, 12);
        w.write(1, 1);
        let bytes = w.finish_with_spare_byte();
        assert_eq!(bytes, vec![0b1011_0101, 0b0111_1001, 0]);
        let mut r = BitReader::new(&bytes);
        assert_eq!(r.read(3), Some(0b101));
        assert_eq!(r.read(12), Some(0xABC));
        assert_eq!(r.read(1), Some(1));
        assert_eq!(r.read(8), Some(0));
        assert_eq!(r.read(1), None);
    }

    #[test]
    fn full_width_values() {
        let mut w = BitWriter::default();
        w.write(u64::MAX - 5, 64);
        w.write(0, 0);
        let bytes = w.finish_with_spare_byte();
        assert_eq!(bytes.len(), 9);
        assert_eq!(BitReader::new(&bytes).read(64), Some(u64::MAX - 5));
    }
}
