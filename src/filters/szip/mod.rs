//! Filter `szip` (id 4): SZIP / CCSDS 121.0-B as libhdf5 + libaec store it,
//! `shared/spec/filters.md` §2.4.
//!
//! `cd_values = [options mask, pixels per block, bits per pixel, pixels per
//! scanline]`; mask bits: 1 K13, 2 CHIP, 4 EC, 8 LSB, 16 MSB, 32 NN, 128 RAW.
//! Stored chunk: u32 little-endian decoded size, then the entropy-coded stream
//! ([`aec`]). As in libaec's SZIP layer: each scanline is one reference sample
//! interval of `ceil(scanline / block)` blocks, padded to whole blocks (the padding
//! is dropped after decoding); 32- and 64-bit pixels are coded as 8-bit samples
//! after splitting the chunk into byte planes (plane `j` holds byte `j` of every
//! pixel); other widths use 1, 2 or 4 bytes per sample in the mask's byte order.

pub mod aec;

use crate::error::{Error, Result};
use crate::filters::ChunkContext;

const NAME: &str = "szip";
const MSB: u32 = 16;
const NN: u32 = 32;

fn err(reason: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, reason)
}

/// The SZIP parameter block from `cd_values`.
#[derive(Clone, Copy, Debug)]
struct SzParams {
    mask: u32,
    block: usize,
    bits_per_pixel: u32,
    scanline: usize,
}

fn sz_params(cd: &[u32]) -> Result<SzParams> {
    let [mask, block, bits_per_pixel, scanline] = *cd else {
        return Err(err(format!("{} cd_values, 4 expected", cd.len())));
    };
    if !(2..=64).contains(&block) || block % 2 != 0 {
        return Err(err(format!(
            "pixels per block {block} not an even number 2-64"
        )));
    }
    if !(1..=32).contains(&bits_per_pixel) && bits_per_pixel != 64 {
        return Err(err(format!(
            "bits per pixel {bits_per_pixel} not 1-32 or 64"
        )));
    }
    if scanline == 0 {
        return Err(err("zero pixels per scanline"));
    }
    Ok(SzParams {
        mask,
        block: block as usize,
        bits_per_pixel,
        scanline: scanline as usize,
    })
}

impl SzParams {
    /// Pixels of 32/64 bits are coded as byte planes of 8-bit samples.
    fn interleaved(&self) -> bool {
        self.bits_per_pixel == 32 || self.bits_per_pixel == 64
    }

    fn aec(&self) -> aec::Params {
        aec::Params {
            bits: if self.interleaved() {
                8
            } else {
                self.bits_per_pixel
            },
            block: self.block,
            rsi: self.scanline.div_ceil(self.block),
            preprocess: self.mask & NN != 0,
            msb: self.mask & MSB != 0,
        }
    }
}

/// Undo the filter.
pub fn decode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let sz = sz_params(cd_values)?;
    let header: [u8; 4] = input
        .get(..4)
        .and_then(|h| h.try_into().ok())
        .ok_or_else(|| err("chunk shorter than its 4-byte size header"))?;
    let size = u32::from_le_bytes(header) as usize;
    if size > ctx.max_output {
        return Err(err(format!(
            "decoded size {size} exceeds the bound {}",
            ctx.max_output
        )));
    }
    let p = sz.aec();
    let pixel = p.sample_bytes();
    let line = sz.scanline * pixel;
    let padded_line = p.rsi * p.block * pixel;
    // Bytes the coder produces: whole padded scanlines, or exactly `size` bytes.
    let coded_bytes = if sz.scanline % sz.block != 0 {
        (size / pixel).div_ceil(sz.scanline) * padded_line
    } else {
        size
    };
    if coded_bytes % pixel != 0 {
        return Err(err("decoded size is not a whole number of samples"));
    }
    if coded_bytes > ctx.max_output.saturating_mul(2).saturating_add(65_536) {
        return Err(err("padded size exceeds the bound"));
    }
    let coded = aec::decode(&input[4..], &p, coded_bytes / pixel).map_err(|e| match e {
        aec::AecError::Truncated => err("stream ends before the data"),
        aec::AecError::Corrupt(what) => err(what),
    })?;
    let mut out = if sz.scanline % sz.block != 0 {
        let mut out = Vec::with_capacity(size);
        for l in coded.chunks(padded_line) {
            out.extend_from_slice(&l[..line.min(l.len())]);
        }
        out.truncate(size);
        out
    } else {
        coded
    };
    if out.len() != size {
        return Err(err(format!(
            "decoded {} bytes, header says {size}",
            out.len()
        )));
    }
    if sz.interleaved() {
        out = planes_to_pixels(&out, sz.bits_per_pixel as usize / 8);
    }
    Ok(out)
}

/// Undo the byte-plane split: byte `j` of pixel `i` is at `j × count + i`.
fn planes_to_pixels(planes: &[u8], width: usize) -> Vec<u8> {
    let count = planes.len() / width;
    let mut out = planes.to_vec();
    for i in 0..count {
        for j in 0..width {
            out[i * width + j] = planes[j * count + i];
        }
    }
    out
}

/// Apply the filter (not implemented: szip chunks are read-only here).
pub fn encode(_input: &[u8], _cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    Err(Error::UnsupportedFilter {
        id: 0,
        name: "szip encoder".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes() {
        assert_eq!(
            planes_to_pixels(&[1, 2, 3, 10, 20, 30], 2),
            vec![1, 10, 2, 20, 3, 30]
        );
    }

    #[test]
    fn rejects_bad_parameters() {
        let ctx = ChunkContext::new(2, 16);
        let chunk = [16, 0, 0, 0, 0xff, 0xff];
        assert!(decode(&chunk, &[169, 7, 16, 8], &ctx).is_err(), "odd block");
        assert!(decode(&chunk, &[169, 8, 0, 8], &ctx).is_err(), "0 bits");
        assert!(
            decode(&chunk, &[169, 8, 16, 0], &ctx).is_err(),
            "0 scanline"
        );
        assert!(decode(&chunk, &[169, 8, 16], &ctx).is_err(), "3 values");
        assert!(
            decode(&chunk[..3], &[169, 8, 16, 8], &ctx).is_err(),
            "short header"
        );
        let huge = [0xff, 0xff, 0xff, 0x7f, 0];
        assert!(
            decode(&huge, &[169, 8, 16, 8], &ctx).is_err(),
            "over the bound"
        );
    }

    proptest::proptest! {
        #[test]
        fn prop_garbage_never_panics(
            data in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
            mask in 0u32..256,
            block in 1u32..70,
            bits in 0u32..70,
            scanline in 0u32..300,
        ) {
            let ctx = ChunkContext::new(4, 4096);
            let mut chunk = (data.len() as u32 * 3).to_le_bytes().to_vec();
            chunk.extend_from_slice(&data);
            if let Ok(out) = decode(&chunk, &[mask, block, bits, scanline], &ctx) {
                proptest::prop_assert_eq!(out.len(), data.len() * 3);
            }
            let _ = decode(&data, &[mask, block, bits, scanline], &ctx);
        }
    }
}
