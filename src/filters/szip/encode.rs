//! CCSDS 121.0-B adaptive entropy encoder producing streams that libaec's SZIP
//! layer (and [`super::aec`]) decode: per block it picks the cheapest of one
//! zero-block run, second extension, split sample `k` and no compression. On the
//! szip vector (an int16 ramp) the output is byte-identical to libaec's.

use super::aec::Params;
use crate::nbit::bitstream::BitWriter;

/// Map one sample against the previous one (unit-delay predictor), the inverse
/// of the decoder's reconstruction.
fn map(x: u32, last: u32, xmax: u32) -> u32 {
    let theta = last.min(xmax - last);
    if x >= last {
        let delta = x - last;
        if delta <= theta {
            2 * delta
        } else {
            theta + delta
        }
    } else {
        let delta = last - x;
        if delta <= theta {
            2 * delta - 1
        } else {
            theta + delta
        }
    }
}

fn fs_len(v: u32, k: u32) -> u64 {
    u64::from(v >> k) + 1
}

/// Encode `samples` (each `< 2^bits`) into a stream; the caller pads every
/// scanline to whole RSIs, so `samples` holds whole RSIs.
pub(super) fn encode(samples: &[u32], p: &Params) -> Vec<u8> {
    let xmax = if p.bits >= 32 {
        u32::MAX
    } else {
        (1u32 << p.bits) - 1
    };
    let id_len = match p.bits {
        0..=8 => 3,
        9..=16 => 4,
        _ => 5,
    };
    let uncomp_id = (1u32 << id_len) - 1;
    let kmax = uncomp_id - 2;
    let mut w = BitWriter::with_capacity(samples.len() * p.sample_bytes() / 2 + 16);
    let nblocks = samples.len() / p.block;
    let mut mapped = vec![0u32; p.block];
    let mut prev = 0u32;
    let mut bi = 0usize;
    while bi < nblocks {
        let raw = &samples[bi * p.block..(bi + 1) * p.block];
        let in_rsi = bi % p.rsi;
        let reference = p.preprocess && in_rsi == 0;
        for (i, &x) in raw.iter().enumerate() {
            mapped[i] = if !p.preprocess || (i == 0 && reference) {
                x
            } else {
                map(x, prev, xmax)
            };
            prev = x;
        }
        let start = usize::from(reference);
        let coded = &mapped[start..];
        let ref_bits = if reference { u64::from(p.bits) } else { 0 };

        if coded.iter().all(|&v| v == 0) {
            // A run of zero blocks, within this RSI and this 64-block segment.
            let limit = (p.rsi - in_rsi).min(64 - in_rsi % 64);
            let mut run = 1;
            while run < limit {
                let next = &samples[(bi + run) * p.block..(bi + run + 1) * p.block];
                let zero = if p.preprocess {
                    next.iter().all(|&x| x == prev)
                } else {
                    next.iter().all(|&x| x == 0)
                };
                if !zero {
                    break;
                }
                run += 1;
            }
            w.write(0, id_len);
            w.write(0, 1);
            if reference {
                w.write(u64::from(raw[0]), p.bits);
            }
            let fs = if run == limit {
                4 // "remainder of segment"
            } else if run <= 4 {
                run as u32 - 1
            } else {
                run as u32
            };
            write_fs(&mut w, fs);
            bi += run;
            continue;
        }

        // Costs in bits (excluding the id and reference sample).
        let uncomp_cost = u64::from(p.bits) * p.block as u64 - ref_bits;
        let mut best_k = 0u32;
        let mut best_cost = u64::MAX;
        for k in 0..=kmax.min(p.bits) {
            let cost: u64 = coded.iter().map(|&v| fs_len(v, k) + u64::from(k)).sum();
            if cost < best_cost {
                best_cost = cost;
                best_k = k;
            }
        }
        let se_cost = second_extension_cost(&mapped, start);

        if se_cost.is_some_and(|c| c + 1 < best_cost.min(uncomp_cost)) {
            w.write(0, id_len);
            w.write(1, 1);
            if reference {
                w.write(u64::from(raw[0]), p.bits);
            }
            write_second_extension(&mut w, &mapped, start);
        } else if best_cost < uncomp_cost {
            w.write(u64::from(best_k + 1), id_len);
            if reference {
                w.write(u64::from(raw[0]), p.bits);
            }
            for &v in coded {
                write_fs(&mut w, v >> best_k);
            }
            for &v in coded {
                w.write(u64::from(v) & ((1u64 << best_k) - 1), best_k);
            }
        } else {
            w.write(u64::from(uncomp_id), id_len);
            for &v in &mapped {
                w.write(u64::from(v), p.bits);
            }
        }
        bi += 1;
    }
    w.finish()
}

fn write_fs(w: &mut BitWriter, zeros: u32) {
    let mut left = zeros;
    while left >= 32 {
        w.write(0, 32);
        left -= 32;
    }
    w.write(1, left + 1);
}

/// Pairs as the decoder reads them: with a reference the first pair is only its
/// second value. Returns `None` when a pair sum exceeds 12.
fn pairs(block: &[u32], start: usize) -> Option<Vec<u32>> {
    let mut codes = Vec::with_capacity(block.len() / 2 + 1);
    let mut i = start;
    while i < block.len() {
        let (d0, d1) = if i.is_multiple_of(2) {
            let d0 = block[i];
            let d1 = *block.get(i + 1)?;
            i += 2;
            (d0, d1)
        } else {
            i += 1;
            (0, block[i - 1])
        };
        let beta = d0.checked_add(d1)?;
        if beta > 12 {
            return None;
        }
        codes.push(beta * (beta + 1) / 2 + d1);
    }
    Some(codes)
}

fn second_extension_cost(block: &[u32], start: usize) -> Option<u64> {
    pairs(block, start).map(|c| c.iter().map(|&m| u64::from(m) + 1).sum())
}

fn write_second_extension(w: &mut BitWriter, block: &[u32], start: usize) {
    for m in pairs(block, start).unwrap_or_default() {
        write_fs(w, m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_inverts_the_decoder() {
        let xmax = 255;
        for last in [0u32, 1, 100, 127, 128, 200, 255] {
            let mut seen = std::collections::HashSet::new();
            for x in 0..=255u32 {
                let d = map(x, last, xmax);
                assert!(d <= xmax, "d {d} for x {x} last {last}");
                assert!(seen.insert(d), "collision at x {x} last {last}");
            }
        }
    }
}
