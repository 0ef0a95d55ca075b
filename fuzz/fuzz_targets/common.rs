//! Shared decoding of fuzzer bytes into filter stages.
#![allow(dead_code)]

use purehdf_filters::{ids, ChunkContext, FilterSpec};

/// Every filter id the dispatch knows, implemented or not.
pub const IDS: [u32; 20] = [
    ids::DEFLATE,
    ids::SHUFFLE,
    ids::FLETCHER32,
    ids::SZIP,
    ids::NBIT,
    ids::SCALEOFFSET,
    ids::BZIP2,
    ids::LZO,
    ids::LZF,
    ids::BLOSC,
    ids::MAFISC,
    ids::LZ4,
    ids::BITSHUFFLE,
    ids::ZFP,
    ids::ZSTD,
    ids::SZ,
    ids::FCIDECOMP,
    ids::JPEG,
    ids::SZ3,
    ids::BLOSC2,
];

/// Reads little structured values off the front of the fuzzer input.
pub struct Take<'a>(pub &'a [u8]);

impl<'a> Take<'a> {
    pub fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// A cd value: small values are far more useful than uniform u32s.
    pub fn cd_value(&mut self) -> u32 {
        match self.u8() {
            tag @ 0..=191 => u32::from(tag % 64),
            192..=223 => u32::from(self.u8()) << 8 | u32::from(self.u8()),
            _ => self.u32(),
        }
    }

    /// One stage: id selector, cd count, cd values.
    pub fn spec(&mut self) -> FilterSpec {
        let id = IDS[usize::from(self.u8()) % IDS.len()];
        let n = usize::from(self.u8() % 25);
        let cd_values = (0..n).map(|_| self.cd_value()).collect();
        FilterSpec {
            id,
            flags: 1,
            cd_values,
            name: None,
        }
    }

    /// Element size and chunk size (chunk ≤ 1 MiB so runs stay fast).
    pub fn ctx(&mut self) -> ChunkContext {
        let element_size = [1, 2, 4, 8, 3, 12, 16, 0][usize::from(self.u8() % 8)];
        let chunk_bytes = (self.u32() & 0xF_FFFF) as usize;
        ChunkContext::new(element_size, chunk_bytes)
    }
}

/// Decode `data` with filter `id`: a cd-value count and cd values, a chunk
/// context, then the stored bytes (the layout `fuzz/seed.py` writes).
/// Any outcome but a panic is fine; a decoded stage stays within its bound.
#[allow(dead_code)]
pub fn filter(id: u32, data: &[u8]) {
    let mut t = Take(data);
    let n = usize::from(t.u8() % 25);
    let cd_values = (0..n).map(|_| t.cd_value()).collect();
    let ctx = t.ctx();
    let spec = FilterSpec {
        id,
        flags: 1,
        cd_values,
        name: None,
    };
    if let Ok(out) = purehdf_filters::decode(&spec, &ctx, t.0) {
        assert!(out.len() <= ctx.max_output.max(t.0.len()));
    }
}
