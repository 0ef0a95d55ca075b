//! BloscLZ, codec 0 of Blosc1 and Blosc2 (`docs/filters-format.md` §4.5):
//! a byte-oriented LZ77 with 5-bit literal-run controls and matches of
//! 13-bit (near) or 16-bit + 8191 (far) distance.

/// Why a BloscLZ stream is invalid.
pub type DecodeError = &'static str;

/// Decode one stream into exactly `dst.len()` bytes.
pub fn decode_into(src: &[u8], dst: &mut [u8]) -> Result<(), DecodeError> {
    let Some(&first) = src.first() else {
        return Err("empty stream");
    };
    let mut ctrl = usize::from(first & 31);
    let mut ip = 1usize;
    let mut op = 0usize;
    loop {
        if ctrl >= 32 {
            let mut len = (ctrl >> 5) - 1;
            let hi = (ctrl & 31) << 8;
            if len == 6 {
                loop {
                    let code = *src.get(ip).ok_or("truncated match length")?;
                    ip += 1;
                    len += usize::from(code);
                    if code != 255 {
                        break;
                    }
                }
            }
            let code = usize::from(*src.get(ip).ok_or("truncated match distance")?);
            ip += 1;
            len += 3;
            let mut dist = hi + code + 1;
            if code == 255 && hi == 31 << 8 {
                let f = src.get(ip..ip + 2).ok_or("truncated far distance")?;
                ip += 2;
                dist = (usize::from(f[0]) << 8 | usize::from(f[1])) + 8192;
            }
            // The C decoder stops here, without copying, when the input is exhausted.
            if ip >= src.len() {
                break;
            }
            let from = op.checked_sub(dist).ok_or("match before output start")?;
            let end = op.checked_add(len).filter(|&e| e <= dst.len());
            let end = end.ok_or("match past output end")?;
            if dist >= len {
                dst.copy_within(from..from + len, op);
            } else {
                for k in 0..len {
                    dst[op + k] = dst[from + k];
                }
            }
            op = end;
        } else {
            let n = ctrl + 1;
            let lit = src.get(ip..ip + n).ok_or("truncated literal run")?;
            let out = dst.get_mut(op..op + n).ok_or("literals past output end")?;
            out.copy_from_slice(lit);
            ip += n;
            op += n;
            if ip >= src.len() {
                break;
            }
        }
        ctrl = usize::from(src[ip]);
        ip += 1;
    }
    if op == dst.len() {
        Ok(())
    } else {
        Err("stream shorter than expected")
    }
}

const MAX_NEAR: usize = 8191;
const MAX_FAR: usize = 65535 + 8191;

/// Compress `src`; returns an empty vector when the stream would not be
/// smaller than the input (the caller then stores it raw).
pub fn compress(src: &[u8], clevel: u8) -> Vec<u8> {
    let len = src.len();
    if len < 16 {
        return Vec::new();
    }
    let hashlog = match clevel {
        0 | 1 => 12,
        2 => 13,
        _ => 14,
    };
    let mut table = vec![u32::MAX; 1 << hashlog];
    let hash = |p: usize| -> usize {
        let v = u32::from_le_bytes([src[p], src[p + 1], src[p + 2], src[p + 3]]);
        (v.wrapping_mul(2_654_435_761) >> (32 - hashlog)) as usize
    };
    let mut out = Vec::with_capacity(len);
    let limit = len - 12;
    let mut ip = 0usize;
    let mut lit_start = 0usize;
    while ip < limit {
        let h = hash(ip);
        let cand = table[h] as usize;
        table[h] = ip as u32;
        if cand < ip && ip - cand - 1 <= MAX_FAR && src[cand..cand + 4] == src[ip..ip + 4] {
            let mut m = 4;
            while ip + m < len - 4 && src[cand + m] == src[ip + m] {
                m += 1;
            }
            let dist1 = ip - cand - 1;
            if m >= 6 && (dist1 < MAX_NEAR || m >= 8) {
                emit_literals(&mut out, &src[lit_start..ip]);
                emit_match(&mut out, m, dist1);
                ip += m;
                lit_start = ip;
                if ip < limit {
                    table[hash(ip - 1)] = (ip - 1) as u32;
                }
                if out.len() >= len {
                    return Vec::new();
                }
                continue;
            }
        }
        ip += 1;
    }
    emit_literals(&mut out, &src[lit_start..]);
    if let Some(b) = out.first_mut() {
        *b |= 0x20;
    }
    if out.len() >= len {
        return Vec::new();
    }
    out
}

fn emit_literals(out: &mut Vec<u8>, lits: &[u8]) {
    for run in lits.chunks(32) {
        out.push((run.len() - 1) as u8);
        out.extend_from_slice(run);
    }
}

/// Encode a match of `m ≥ 3` bytes at distance `dist1 + 1`.
fn emit_match(out: &mut Vec<u8>, m: usize, dist1: usize) {
    let l = m - 2;
    let far = dist1 >= MAX_NEAR;
    let hi = if far { 31 } else { (dist1 >> 8) as u8 };
    if l < 7 {
        out.push(((l as u8) << 5) | hi);
    } else {
        out.push((7 << 5) | hi);
        let mut rem = l - 7;
        while rem >= 255 {
            out.push(255);
            rem -= 255;
        }
        out.push(rem as u8);
    }
    if far {
        out.push(255);
        let f = (dist1 - MAX_NEAR) as u16;
        out.extend_from_slice(&f.to_be_bytes());
    } else {
        out.push((dist1 & 255) as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spec_worked_example() {
        let stream = [
            0x2a, 0x48, 0x44, 0x46, 0x35, 0x2d, 0x42, 0x6c, 0x6f, 0x73, 0x63, 0x2d, 0xe0, 0xff,
            0x16, 0x0a, 0x02, 0x48, 0x44, 0x46,
        ];
        let mut out = vec![0u8; 300];
        decode_into(&stream, &mut out).unwrap();
        let expect: Vec<u8> = b"HDF5-Blosc-".iter().copied().cycle().take(300).collect();
        assert_eq!(out, expect);
    }

    #[test]
    fn rejects_bad_distance() {
        let mut out = vec![0u8; 20];
        assert!(decode_into(&[0x20, 1, 0x40, 50, 0], &mut out).is_err());
    }

    #[test]
    fn far_matches_round_trip() {
        let mut data: Vec<u8> = (0..20000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let head = data[..3000].to_vec();
        data.extend_from_slice(&head);
        let c = compress(&data, 5);
        assert!(!c.is_empty() && c.len() < data.len());
        let mut out = vec![0u8; data.len()];
        decode_into(&c, &mut out).unwrap();
        assert_eq!(out, data);
    }

    proptest! {
        #[test]
        fn round_trip(data in proptest::collection::vec(0u8..4, 0..5000), clevel in 1u8..=9) {
            let c = compress(&data, clevel);
            if !c.is_empty() {
                let mut out = vec![0u8; data.len()];
                decode_into(&c, &mut out).unwrap();
                prop_assert_eq!(out, data);
            }
        }
    }
}
