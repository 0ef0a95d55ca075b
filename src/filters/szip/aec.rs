//! CCSDS 121.0-B adaptive entropy decoder, as libaec implements it for SZIP
//! compatibility (unsigned samples, no restricted ids, no RSI padding).
//!
//! Stream: per block of `J` samples an option id of 3 (≤ 8-bit samples), 4
//! (≤ 16) or 5 (≤ 32) bits, most significant bit first:
//! * 0 + bit 0: zero blocks, their count a fundamental sequence (FS) `m`:
//!   `m + 1` blocks for `m < 4`, `m` blocks for `m > 4`, and `m = 4` ("remainder of
//!   segment") up to the next multiple of 64 blocks or the end of the RSI;
//! * 0 + bit 1: second extension, pairs coded as one FS `m`
//!   (`β = ⌊(√(8m+1)−1)/2⌋`, `d1 = m − β(β+1)/2`, `d0 = β − d1`);
//! * all ones: `J` uncompressed `n`-bit samples;
//! * otherwise split sample with `k = id − 1`: `J` FS high parts, then `J`
//!   `k`-bit low parts.
//!
//! With preprocessing, the first block of each reference sample interval (RSI,
//! `rsi` blocks) starts with an `n`-bit reference sample right after the id (and
//! the low-entropy bit) and codes one sample fewer; the others are mapped
//! prediction residuals, undone here (unit-delay predictor).

/// Decoder parameters.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Bits per sample `n`, 1–32.
    pub bits: u32,
    /// Samples per block `J`.
    pub block: usize,
    /// Blocks per reference sample interval.
    pub rsi: usize,
    /// Nearest-neighbour preprocessing (reference samples + mapped residuals).
    pub preprocess: bool,
    /// Samples stored big-endian in the output (else little-endian).
    pub msb: bool,
}

impl Params {
    /// Output bytes per sample.
    pub fn sample_bytes(&self) -> usize {
        match self.bits {
            0..=8 => 1,
            9..=16 => 2,
            _ => 4,
        }
    }

    fn id_len(&self) -> u32 {
        match self.bits {
            0..=8 => 3,
            9..=16 => 4,
            _ => 5,
        }
    }
}

/// Why decoding stopped early.
#[derive(Debug, PartialEq, Eq)]
pub enum AecError {
    /// The input ended before the output was complete.
    Truncated,
    /// A coded value that the format does not allow.
    Corrupt(&'static str),
}

/// MSB-first bit reader with a 64-bit accumulator.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    acc: u64,
    nbits: u32,
}

impl<'a> Bits<'a> {
    fn new(data: &'a [u8]) -> Self {
        Bits {
            data,
            pos: 0,
            acc: 0,
            nbits: 0,
        }
    }

    fn refill(&mut self) {
        while self.nbits <= 56 {
            let Some(&b) = self.data.get(self.pos) else {
                break;
            };
            self.acc = (self.acc << 8) | u64::from(b);
            self.nbits += 8;
            self.pos += 1;
        }
    }

    fn get(&mut self, n: u32) -> Result<u32, AecError> {
        if n == 0 {
            return Ok(0);
        }
        if self.nbits < n {
            self.refill();
            if self.nbits < n {
                return Err(AecError::Truncated);
            }
        }
        self.nbits -= n;
        Ok(((self.acc >> self.nbits) & ((1u64 << n) - 1)) as u32)
    }

    /// A fundamental sequence: the number of 0 bits before the next 1 bit.
    fn fs(&mut self) -> Result<u32, AecError> {
        let mut count = 0u32;
        loop {
            if self.nbits == 0 {
                self.refill();
                if self.nbits == 0 {
                    return Err(AecError::Truncated);
                }
            }
            let valid = self.acc & (u64::MAX >> (64 - self.nbits));
            if valid == 0 {
                count = count.saturating_add(self.nbits);
                self.nbits = 0;
                continue;
            }
            let top = 63 - valid.leading_zeros();
            count = count.saturating_add(self.nbits - 1 - top);
            self.nbits = top;
            return Ok(count);
        }
    }
}

/// Second-extension lookup: for `m` ≤ 90, (β, β(β+1)/2).
fn second_extension(m: u32) -> Option<(u32, u32)> {
    if m > 90 {
        return None;
    }
    let mut beta = 0u32;
    while (beta + 1) * (beta + 2) / 2 <= m {
        beta += 1;
    }
    Some((beta, beta * (beta + 1) / 2))
}

/// Receives mapped samples, undoes the preprocessing and writes output bytes.
struct Sink<'p> {
    p: &'p Params,
    out: Vec<u8>,
    cap: usize,
    /// Samples written in the current RSI.
    in_rsi: usize,
    last: u32,
    xmax: u32,
}

impl Sink<'_> {
    fn full(&self) -> bool {
        self.out.len() >= self.cap
    }

    fn put(&mut self, d: u32) {
        if self.full() {
            return;
        }
        // Without preprocessing, and for the reference sample, values are raw.
        let x = if !self.p.preprocess || self.in_rsi == 0 {
            d
        } else {
            let last = self.last;
            let med = self.xmax / 2 + 1;
            let half_d = (d >> 1) + (d & 1);
            let mask = if last & med != 0 { self.xmax } else { 0 };
            if half_d <= (mask ^ last) {
                if d & 1 == 0 {
                    last.wrapping_add(d >> 1)
                } else {
                    last.wrapping_sub((d >> 1) + 1)
                }
            } else {
                mask ^ d
            }
        };
        self.last = x;
        self.in_rsi += 1;
        let n = self.p.sample_bytes();
        if self.p.msb {
            self.out.extend_from_slice(&x.to_be_bytes()[4 - n..]);
        } else {
            self.out.extend_from_slice(&x.to_le_bytes()[..n]);
        }
    }
}

/// Decode `samples` samples (`samples × sample_bytes` output bytes).
pub fn decode(input: &[u8], p: &Params, samples: usize) -> Result<Vec<u8>, AecError> {
    if !(1..=32).contains(&p.bits) || !(1..=64).contains(&p.block) || p.rsi == 0 {
        return Err(AecError::Corrupt("invalid coder parameters"));
    }
    let n = p.sample_bytes();
    let cap = samples.saturating_mul(n);
    let rsi_size = p.rsi.saturating_mul(p.block);
    let mut sink = Sink {
        p,
        // Zero-block runs compress enormously, so the capacity is only a hint.
        out: Vec::with_capacity(cap.min(input.len().saturating_mul(256).max(4096))),
        cap,
        in_rsi: 0,
        last: 0,
        xmax: if p.bits >= 32 {
            u32::MAX
        } else {
            (1u32 << p.bits) - 1
        },
    };
    let mut r = Bits::new(input);
    let id_len = p.id_len();
    let uncomp = (1u32 << id_len) - 1;
    while !sink.full() {
        if sink.in_rsi >= rsi_size {
            sink.in_rsi = 0;
        }
        let reference = p.preprocess && sink.in_rsi == 0;
        let coded = p.block - usize::from(reference);
        let id = r.get(id_len)?;
        if id == 0 {
            let second_ext = r.get(1)? == 1;
            if reference {
                let s = r.get(p.bits)?;
                sink.put(s);
            }
            if second_ext {
                let mut i = usize::from(reference);
                while i < p.block {
                    let m = r.fs()?;
                    let (beta, ms) = second_extension(m)
                        .ok_or(AecError::Corrupt("second-extension code > 90"))?;
                    let d1 = m - ms;
                    if i & 1 == 0 {
                        sink.put(beta - d1);
                        i += 1;
                    }
                    sink.put(d1);
                    i += 1;
                }
            } else {
                let fs = r.fs()?;
                let mut blocks = fs.saturating_add(1) as usize;
                if blocks == 5 {
                    let b = sink.in_rsi / p.block;
                    blocks = (p.rsi - b).min(64 - b % 64);
                } else if blocks > 5 {
                    blocks -= 1;
                }
                let zeros = blocks
                    .saturating_mul(p.block)
                    .saturating_sub(usize::from(reference));
                if zeros > rsi_size - sink.in_rsi {
                    return Err(AecError::Corrupt("zero blocks run past the RSI"));
                }
                for _ in 0..zeros {
                    if sink.full() {
                        break;
                    }
                    sink.put(0);
                }
            }
        } else if id == uncomp {
            for _ in 0..p.block {
                let s = r.get(p.bits)?;
                sink.put(s);
            }
        } else {
            let k = id - 1;
            if reference {
                let s = r.get(p.bits)?;
                sink.put(s);
            }
            let mut high = [0u32; 64];
            for h in high.iter_mut().take(coded) {
                *h = r.fs()?.wrapping_shl(k);
            }
            for h in high.iter().take(coded) {
                let low = r.get(k)?;
                sink.put(h.wrapping_add(low));
            }
        }
    }
    Ok(sink.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_extension_table() {
        assert_eq!(second_extension(0), Some((0, 0)));
        assert_eq!(second_extension(1), Some((1, 1)));
        assert_eq!(second_extension(2), Some((1, 1)));
        assert_eq!(second_extension(3), Some((2, 3)));
        assert_eq!(second_extension(90), Some((12, 78)));
        assert_eq!(second_extension(91), None);
    }

    #[test]
    fn fundamental_sequences_and_bits() {
        // 1 | 001 | 0000 0000 0000 1 | 101
        let data = [0b1001_0000, 0b0000_0000, 0b1101_0000];
        let mut r = Bits::new(&data);
        assert_eq!(r.fs(), Ok(0));
        assert_eq!(r.fs(), Ok(2));
        assert_eq!(r.fs(), Ok(12));
        assert_eq!(r.get(3), Ok(0b101));
        assert_eq!(r.get(4), Ok(0));
        assert_eq!(r.get(1), Err(AecError::Truncated));
    }

    #[test]
    fn split_and_uncompressed_blocks() {
        let p = Params {
            bits: 8,
            block: 8,
            rsi: 2,
            preprocess: false,
            msb: false,
        };
        // Block 1: id 2 (k = 1): FS 0,1,0,0,0,0,0,2 then low bits 1,0,1,0,1,0,1,0.
        // Block 2: id 7 (uncompressed): 8 raw bytes 1..=8.
        let mut bits = String::new();
        bits += "010";
        for fs in [0, 1, 0, 0, 0, 0, 0, 2] {
            bits += &"0".repeat(fs);
            bits += "1";
        }
        bits += "10101010";
        bits += "111";
        for v in 1..=8u8 {
            bits += &format!("{v:08b}");
        }
        while !bits.len().is_multiple_of(8) {
            bits.push('0');
        }
        let data: Vec<u8> = bits
            .as_bytes()
            .chunks(8)
            .map(|c| u8::from_str_radix(std::str::from_utf8(c).unwrap(), 2).unwrap())
            .collect();
        let out = decode(&data, &p, 16).unwrap();
        assert_eq!(out, vec![1, 2, 1, 0, 1, 0, 1, 4, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(
            decode(&data[..data.len() - 2], &p, 16),
            Err(AecError::Truncated)
        );
    }
}
