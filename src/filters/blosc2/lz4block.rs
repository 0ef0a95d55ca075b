//! Raw LZ4 block decoding (the stream format of Blosc codecs lz4/lz4hc,
//! `shared/spec/filters.md` §3.7): tokens of literal length / match length,
//! 16-bit little-endian offsets, the last sequence literals only.
//!
//! Written for the Blosc hot path: short literals and matches are moved as
//! 16-byte blocks (the surplus bytes are overwritten by the next tokens),
//! overlapping matches are expanded by doubling, and every access is
//! bounds-checked, so any input gives either the block or an error.

/// Why a block is invalid.
pub type DecodeError = &'static str;

#[inline(always)]
fn read_len(src: &[u8], ip: &mut usize, mut n: usize) -> Result<usize, DecodeError> {
    loop {
        let b = *src.get(*ip).ok_or("truncated length")?;
        *ip += 1;
        n = n.checked_add(usize::from(b)).ok_or("length overflow")?;
        if b != 255 {
            return Ok(n);
        }
    }
}

/// Decode one block into `out`; returns the number of bytes written.
pub fn decode(src: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is available (checked above); the body is safe code.
            return unsafe { decode_avx2(src, out) };
        }
    }
    decode_impl(src, out)
}

/// The same safe decoder compiled with AVX2 enabled (32-byte moves).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn decode_avx2(src: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
    decode_impl(src, out)
}

#[inline(always)]
fn decode_impl(src: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
    let (n, on) = (src.len(), out.len());
    let (mut ip, mut op) = (0usize, 0usize);
    loop {
        let token = *src.get(ip).ok_or("truncated token")?;
        ip += 1;
        let mut lit = usize::from(token >> 4);
        if lit == 15 {
            lit = read_len(src, &mut ip, lit)?;
        }
        if lit <= 16 && ip + 16 <= n && op + 16 <= on {
            out[op..op + 16].copy_from_slice(&src[ip..ip + 16]);
        } else {
            let s = src.get(ip..ip + lit).ok_or("literals past input end")?;
            out.get_mut(op..op + lit)
                .ok_or("literals past output end")?
                .copy_from_slice(s);
        }
        ip += lit;
        op += lit;
        if ip >= n {
            return if ip == n {
                Ok(op)
            } else {
                Err("literals past input end")
            };
        }
        let off = src.get(ip..ip + 2).ok_or("truncated offset")?;
        let off = usize::from(off[0]) | usize::from(off[1]) << 8;
        ip += 2;
        let mut ml = usize::from(token & 15);
        if ml == 15 {
            ml = read_len(src, &mut ip, ml)?;
        }
        ml += 4;
        if off == 0 {
            return Err("zero offset");
        }
        let from = op.checked_sub(off).ok_or("offset before output start")?;
        let end = op
            .checked_add(ml)
            .filter(|&e| e <= on)
            .ok_or("match past output end")?;
        copy_match(out, from, op, ml, end);
        op = end;
    }
}

#[inline(always)]
fn copy_match(out: &mut [u8], from: usize, op: usize, ml: usize, end: usize) {
    let off = op - from;
    let on = out.len();
    if off >= 32 && end + 32 <= on {
        let mut k = 0;
        while k < ml {
            let mut t = [0u8; 32];
            t.copy_from_slice(&out[from + k..from + k + 32]);
            out[op + k..op + k + 32].copy_from_slice(&t);
            k += 32;
        }
    } else if off >= 16 && end + 16 <= on {
        // Non-overlapping 16-byte steps; surplus bytes are rewritten later.
        let mut k = 0;
        while k < ml {
            let mut t = [0u8; 16];
            t.copy_from_slice(&out[from + k..from + k + 16]);
            out[op + k..op + k + 16].copy_from_slice(&t);
            k += 16;
        }
    } else if off >= ml {
        out.copy_within(from..from + ml, op);
    } else if off == 1 {
        let b = out[from];
        out[op..end].fill(b);
    } else if off < 16 && end + 16 <= on {
        // Short period: 16 bytes of the pattern, stored at steps of the
        // largest multiple of the period that is ≤ 16 (overlapping stores).
        let mut pat = [0u8; 16];
        pat[..off].copy_from_slice(&out[from..op]);
        for i in off..16 {
            pat[i] = pat[i - off];
        }
        let step = 16 - 16 % off;
        let mut k = 0;
        while k < ml {
            out[op + k..op + k + 16].copy_from_slice(&pat);
            k += step;
        }
    } else {
        // Overlapping: the pattern of `off` bytes repeats; double it each step.
        let mut done = 0;
        while done < ml {
            let step = (op + done - from).min(ml - done);
            out.copy_within(from..from + step, op + done);
            done += step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_garbage() {
        let mut out = [0u8; 64];
        assert!(decode(&[0x1f, 1, 0, 0], &mut out).is_err());
        assert!(decode(&[0xf0], &mut out).is_err());
        assert!(decode(&[], &mut out).is_err());
    }

    proptest! {
        #[test]
        fn matches_lz4_flex(data in proptest::collection::vec(0u8..3, 0..20000), rep in 1usize..40) {
            let data: Vec<u8> = data.iter().flat_map(|&b| std::iter::repeat(b).take(rep % 7 + 1)).collect();
            let c = lz4_flex::block::compress(&data);
            let mut out = vec![0u8; data.len()];
            prop_assert_eq!(decode(&c, &mut out).unwrap(), data.len());
            prop_assert_eq!(out, data);
        }
    }
}
