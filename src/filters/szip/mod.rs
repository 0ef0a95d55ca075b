//! Filter `szip` (id 4): SZIP / CCSDS 121.0-B as libhdf5 + libaec store it,
//! `docs/filters-format.md` §2.4.
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
mod encode;

use crate::error::{Error, Result};
use crate::ChunkContext;

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

/// Split pixels into byte planes (the inverse of [`planes_to_pixels`]).
fn pixels_to_planes(pixels: &[u8], width: usize) -> Vec<u8> {
    let count = pixels.len() / width;
    let mut out = pixels.to_vec();
    for i in 0..count {
        for j in 0..width {
            out[j * count + i] = pixels[i * width + j];
        }
    }
    out
}

/// Apply the filter. Like the C filter it fails when the coded stream would be
/// larger than the input (libhdf5 then stores the chunk unfiltered).
pub fn encode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let out = encode_unskipped(input, cd_values, ctx)?;
    if out.len() > input.len().saturating_add(4) {
        return Err(err("data does not compress; store the chunk unfiltered"));
    }
    Ok(out)
}

/// [`encode`] also where the stream is larger than the chunk (libaec's
/// filter declines then): a stream every szip decoder reads.
pub(crate) fn encode_unskipped(
    input: &[u8],
    cd_values: &[u32],
    _ctx: &ChunkContext,
) -> Result<Vec<u8>> {
    let sz = sz_params(cd_values)?;
    let size = u32::try_from(input.len()).map_err(|_| err("chunk exceeds 4 GiB"))?;
    let p = sz.aec();
    let pixel = p.sample_bytes();
    let width = if sz.interleaved() {
        sz.bits_per_pixel as usize / 8
    } else {
        pixel
    };
    if !input.len().is_multiple_of(width) {
        return Err(err("chunk is not a whole number of pixels"));
    }
    let data = if sz.interleaved() {
        pixels_to_planes(input, width)
    } else {
        input.to_vec()
    };
    let mask = if p.bits >= 32 {
        u32::MAX
    } else {
        (1u32 << p.bits) - 1
    };
    let values: Vec<u32> = data
        .chunks_exact(pixel)
        .map(|b| {
            let mut le = [0u8; 4];
            le[..pixel].copy_from_slice(b);
            if p.msb {
                le[..pixel].reverse();
            }
            u32::from_le_bytes(le) & mask
        })
        .collect();
    // Each scanline becomes one RSI, padded with its last pixel (NN) or zeros.
    let padded_line = p.rsi * p.block;
    let mut samples = Vec::with_capacity(values.len().div_ceil(sz.scanline) * padded_line);
    for line in values.chunks(sz.scanline) {
        samples.extend_from_slice(line);
        let pad = match (p.preprocess, line.last()) {
            (true, Some(&last)) => last,
            _ => 0,
        };
        samples.resize(samples.len() + padded_line - line.len(), pad);
    }
    let stream = encode::encode(&samples, &p);
    let mut out = Vec::with_capacity(4 + stream.len());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&stream);
    Ok(out)
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

    fn round_trip(data: &[u8], cd: [u32; 4]) {
        let ctx = ChunkContext::new(1, data.len());
        match encode(data, &cd, &ctx) {
            Ok(enc) => assert_eq!(decode(&enc, &cd, &ctx).unwrap(), data, "cd {cd:?}"),
            Err(e) => assert!(e.to_string().contains("does not compress"), "{e}"),
        }
    }

    #[test]
    fn encoder_round_trips_smooth_data() {
        let ramp: Vec<u8> = (0..4096i32)
            .flat_map(|i| ((i - 2048) as i16).to_le_bytes())
            .collect();
        let cd = [169, 8, 16, 1024];
        let enc = encode(&ramp, &cd, &ChunkContext::new(2, 8192)).unwrap();
        assert_eq!(&enc[..4], &8192u32.to_le_bytes());
        assert_eq!(enc.len(), 1803, "the size libaec writes");
        round_trip(&ramp, cd);
        round_trip(&ramp, [177, 8, 16, 1000]);
        let f32s: Vec<u8> = (0..1000)
            .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
            .collect();
        round_trip(&f32s, [169, 8, 32, 10]);
        let f64s: Vec<u8> = (0..600).flat_map(|i| (i as f64).to_be_bytes()).collect();
        round_trip(&f64s, [177, 4, 64, 50]);
        round_trip(&[0u8; 1000], [141, 16, 8, 100]);
        round_trip(&[], [169, 8, 16, 32]);
        // Zero runs use multi-block zero codes: 20000 zero bytes in 21 bytes, as libaec.
        let zeros = encode(
            &[0u8; 20_000],
            &[169, 32, 32, 4096],
            &ChunkContext::new(4, 20_000),
        );
        assert_eq!(zeros.unwrap().len(), 21);
        round_trip(&[0u8; 20_000], [169, 32, 32, 4096]);
        let mut runs = vec![0u8; 3000];
        runs[1500] = 9;
        round_trip(&runs, [141, 8, 8, 700]);
    }

    proptest::proptest! {
        #[test]
        fn prop_round_trip(
            values in proptest::collection::vec(0u32..70_000, 0..600),
            mask in proptest::sample::select(vec![136u32, 168, 169, 177, 141, 4, 36]),
            block in proptest::sample::select(vec![2u32, 4, 8, 16, 32, 64]),
            bits_sel in 0usize..6,
            scanline in 1u32..200,
        ) {
            let bits = [5u32, 8, 12, 16, 24, 32][bits_sel];
            let width = match bits { 0..=8 => 1, 9..=16 => 2, _ => 4 };
            let limit = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            let data: Vec<u8> = values
                .iter()
                .flat_map(|&v| {
                    let v = v.wrapping_mul(2_654_435_761) >> (v % 32) & limit;
                    let v = if v % 3 == 0 { v & 0xF } else { v };
                    let b = if mask & 16 != 0 { v.to_be_bytes() } else { v.to_le_bytes() };
                    if mask & 16 != 0 { b[4 - width..].to_vec() } else { b[..width].to_vec() }
                })
                .collect();
            round_trip(&data, [mask, block, bits, scanline]);
        }

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
