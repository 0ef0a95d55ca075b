//! Filter `lz4` (id 32004): the HDF5 LZ4 plugin framing, `docs/filters-format.md` §5.2.
//!
//! Stored chunk: u64 BE original size, u32 BE block size, then per block a u32 BE
//! compressed size and a raw LZ4 block (or the block itself when the compressed
//! size equals the block's uncompressed size). `cd_values = [block bytes]`, 0 = 1 GiB.

use crate::error::{Error, Result};
use crate::ChunkContext;

const NAME: &str = "lz4";
/// The plugin's default block size (1 GiB) when `cd_values[0]` is 0 or absent.
pub const DEFAULT_BLOCK: usize = 1 << 30;
const HEADER: usize = 12;

fn err(reason: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, reason)
}

fn be_u32(input: &[u8], pos: usize) -> Result<u32> {
    let b = input
        .get(pos..pos.saturating_add(4))
        .ok_or_else(|| err(format!("truncated at byte {pos}")))?;
    Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Undo the filter.
pub fn decode(input: &[u8], _cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let hi = be_u32(input, 0)?;
    let lo = be_u32(input, 4)?;
    let orig = (u64::from(hi) << 32) | u64::from(lo);
    let orig = usize::try_from(orig)
        .ok()
        .filter(|&n| n <= ctx.max_output)
        .ok_or_else(|| {
            err(format!(
                "original size {orig} exceeds the bound {}",
                ctx.max_output
            ))
        })?;
    // LZ4 expands at most ~255:1, so a header claiming more is corrupt; this also
    // keeps a tiny chunk from making us zero a huge buffer.
    if orig / 256 > input.len() {
        return Err(err(format!(
            "original size {orig} impossible for {} stored bytes",
            input.len()
        )));
    }
    let block = be_u32(input, 8)? as usize;
    let block = block.min(orig);
    if block == 0 && orig > 0 {
        return Err(err("block size 0"));
    }
    let mut out = vec![0u8; orig];
    let mut pos = HEADER;
    let mut done = 0usize;
    while done < orig {
        let this = block.min(orig - done);
        let csize = be_u32(input, pos)? as usize;
        pos += 4;
        let end = pos
            .checked_add(csize)
            .filter(|&e| e <= input.len())
            .ok_or_else(|| err(format!("block at byte {pos} runs past the end")))?;
        let src = &input[pos..end];
        let dst = &mut out[done..done + this];
        if csize == this {
            dst.copy_from_slice(src);
        } else {
            let n = lz4_flex::block::decompress_into(src, dst)
                .map_err(|e| err(format!("corrupt LZ4 block at byte {pos}: {e}")))?;
            if n != this {
                return Err(err(format!(
                    "LZ4 block at byte {pos} gives {n} bytes, expected {this}"
                )));
            }
        }
        pos = end;
        done += this;
    }
    Ok(out)
}

/// Apply the filter with the block size of `cd_values[0]` (0 or absent: 1 GiB).
pub fn encode(input: &[u8], cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    let block = match cd_values.first() {
        Some(&b) if b > 0 => b as usize,
        _ => DEFAULT_BLOCK,
    };
    let block = block.min(input.len());
    let block_u32 = u32::try_from(block).map_err(|_| err("block size exceeds u32"))?;
    let mut out = Vec::with_capacity(HEADER + input.len() / 2 + 64);
    out.extend_from_slice(&(input.len() as u64).to_be_bytes());
    out.extend_from_slice(&block_u32.to_be_bytes());
    if block == 0 {
        return Ok(out);
    }
    for chunk in input.chunks(block) {
        let packed = lz4_flex::block::compress(chunk);
        // The plugin stores the block raw unless LZ4 made it strictly smaller.
        let body: &[u8] = if packed.len() >= chunk.len() {
            chunk
        } else {
            &packed
        };
        let len = u32::try_from(body.len()).map_err(|_| err("block exceeds u32"))?;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(body);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(n: usize) -> ChunkContext {
        ChunkContext::new(1, n)
    }

    #[test]
    fn header_and_blocks() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i / 7) as u8).collect();
        let enc = encode(&data, &[1000], &ctx(5000)).unwrap();
        assert_eq!(
            &enc[..12],
            &[0, 0, 0, 0, 0, 0, 0x13, 0x88, 0, 0, 0x03, 0xe8]
        );
        assert_eq!(decode(&enc, &[1000], &ctx(5000)).unwrap(), data);
        let enc = encode(&data, &[0], &ctx(5000)).unwrap();
        assert_eq!(
            &enc[8..12],
            &5000u32.to_be_bytes(),
            "block capped at the size"
        );
        assert_eq!(decode(&enc, &[0], &ctx(5000)).unwrap(), data);
    }

    #[test]
    fn incompressible_block_is_stored_raw() {
        let mut x = 1u32;
        let data: Vec<u8> = (0..256)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (x >> 16) as u8
            })
            .collect();
        let enc = encode(&data, &[], &ctx(256)).unwrap();
        assert_eq!(&enc[12..16], &256u32.to_be_bytes());
        assert_eq!(&enc[16..], &data[..]);
        assert_eq!(decode(&enc, &[], &ctx(256)).unwrap(), data);
    }

    #[test]
    fn rejects_bad_input() {
        let data = vec![5u8; 3000];
        let enc = encode(&data, &[0], &ctx(3000)).unwrap();
        for cut in 0..enc.len() {
            assert!(decode(&enc[..cut], &[0], &ctx(3000)).is_err(), "cut {cut}");
        }
        let mut huge = enc.clone();
        huge[0] = 0x10;
        assert!(decode(&huge, &[0], &ctx(3000)).is_err());
        let mut inflated = enc.clone();
        inflated[4..8].copy_from_slice(&2_000_000u32.to_be_bytes());
        let roomy = ChunkContext::new(1, 4_000_000);
        assert!(decode(&inflated, &[0], &roomy).is_err(), "impossible ratio");
        let mut zero_block = enc;
        zero_block[8..12].copy_from_slice(&[0; 4]);
        assert!(decode(&zero_block, &[0], &ctx(3000)).is_err());
    }

    proptest::proptest! {
        #[test]
        fn prop_round_trip(data in proptest::collection::vec(0u8..4, 0..3000), block in 0u32..700) {
            let c = ctx(data.len());
            let enc = encode(&data, &[block], &c).unwrap();
            proptest::prop_assert_eq!(decode(&enc, &[block], &c).unwrap(), data);
        }

        #[test]
        fn prop_garbage_never_panics(data in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            let _ = decode(&data, &[0], &ctx(1000));
        }
    }
}
