//! HDF5 filters as pure encode/decode pairs over bytes.
//!
//! Internal: for the crate's own tools and tests; may change. The supported
//! API is re-exported at the crate root.
//!
//! This module knows nothing of HDF5 files: it maps a filter id (HDF5 filter
//! pipeline message, and the registered plugin ids) with its client data values
//! to a codec. Formats: `shared/spec/filters.md`.

use crate::error::{Error, Result};

pub mod bitshuffle;
pub mod blosc;
pub mod blosc2;
pub mod blosclz;
pub mod bzip2;
pub mod deflate;
pub mod fletcher32;
pub mod limits;
pub mod lz4;
pub mod lzf;
pub mod nbit;
pub mod scaleoffset;
pub mod shuffle;
pub mod szip;
pub mod zstd;
pub mod zstd_codec;
pub mod zstd_decode;
pub(crate) mod zstd_encode;

/// One stage of a filter pipeline as stored in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterSpec {
    /// Registered filter id (1 = deflate, 32026 = Blosc2, ...).
    pub id: u32,
    /// Pipeline flags (bit 0: optional).
    pub flags: u16,
    /// Client data values.
    pub cd_values: Vec<u32>,
    /// Name stored in the file, if any.
    pub name: Option<String>,
}

/// What a codec knows of the chunk it works on.
#[derive(Clone, Copy, Debug)]
pub struct ChunkContext {
    /// Size in bytes of one dataset element (the datatype size).
    pub element_size: usize,
    /// Size in bytes of the decoded chunk (all elements of a full chunk).
    pub chunk_bytes: usize,
    /// Upper bound on any decoded stage; decoders refuse to allocate beyond it.
    pub max_output: usize,
}

impl ChunkContext {
    /// A context for a chunk of `chunk_bytes` bytes of `element_size`-byte elements,
    /// with a decode cap of twice the chunk plus 64 KiB (stages may expand slightly).
    pub fn new(element_size: usize, chunk_bytes: usize) -> Self {
        ChunkContext {
            element_size,
            chunk_bytes,
            max_output: chunk_bytes.saturating_mul(2).saturating_add(65_536),
        }
    }
}

/// Registered filter ids.
pub mod ids {
    pub const DEFLATE: u32 = 1;
    pub const SHUFFLE: u32 = 2;
    pub const FLETCHER32: u32 = 3;
    pub const SZIP: u32 = 4;
    pub const NBIT: u32 = 5;
    pub const SCALEOFFSET: u32 = 6;
    pub const BZIP2: u32 = 307;
    pub const LZO: u32 = 305;
    pub const LZF: u32 = 32000;
    pub const BLOSC: u32 = 32001;
    pub const MAFISC: u32 = 32002;
    pub const LZ4: u32 = 32004;
    pub const BITSHUFFLE: u32 = 32008;
    pub const ZFP: u32 = 32013;
    pub const ZSTD: u32 = 32015;
    pub const SZ: u32 = 32017;
    pub const FCIDECOMP: u32 = 32018;
    pub const JPEG: u32 = 32019;
    pub const SZ3: u32 = 32024;
    pub const BLOSC2: u32 = 32026;
}

/// The short name of a filter id (as `make_expected.py` labels them).
pub fn filter_name(id: u32) -> &'static str {
    match id {
        1 => "deflate",
        2 => "shuffle",
        3 => "fletcher32",
        4 => "szip",
        5 => "nbit",
        6 => "scaleoffset",
        305 => "lzo",
        307 => "bzip2",
        32000 => "lzf",
        32001 => "blosc",
        32002 => "mafisc",
        32004 => "lz4",
        32008 => "bitshuffle",
        32013 => "zfp",
        32015 => "zstd",
        32017 => "sz",
        32018 => "fcidecomp",
        32019 => "jpeg",
        32020 => "vbz",
        32022 => "bitgroom",
        32023 => "granularbr",
        32024 => "sz3",
        32026 => "blosc2",
        _ => "unknown",
    }
}

/// Undo one filter stage (read direction).
pub fn decode(spec: &FilterSpec, ctx: &ChunkContext, input: &[u8]) -> Result<Vec<u8>> {
    let cd = spec.cd_values.as_slice();
    let out = match spec.id {
        ids::DEFLATE => deflate::decode(input, cd, ctx),
        ids::SHUFFLE => shuffle::decode(input, cd, ctx),
        ids::FLETCHER32 => fletcher32::decode(input, cd, ctx),
        ids::SZIP => szip::decode(input, cd, ctx),
        ids::NBIT => nbit::decode(input, cd, ctx),
        ids::SCALEOFFSET => scaleoffset::decode(input, cd, ctx),
        ids::BZIP2 => bzip2::decode(input, cd, ctx),
        ids::LZF => lzf::decode(input, cd, ctx),
        ids::BLOSC => blosc::decode(input, cd, ctx),
        ids::LZ4 => lz4::decode(input, cd, ctx),
        ids::BITSHUFFLE => bitshuffle::decode(input, cd, ctx),
        ids::ZSTD => zstd::decode(input, cd, ctx),
        ids::BLOSC2 => blosc2::decode(input, cd, ctx),
        id => return Err(unsupported(spec, id)),
    };
    out.map_err(|e| tag(e, spec))
}

/// Apply one filter stage (write direction).
pub fn encode(spec: &FilterSpec, ctx: &ChunkContext, input: &[u8]) -> Result<Vec<u8>> {
    let cd = spec.cd_values.as_slice();
    let out = match spec.id {
        ids::DEFLATE => deflate::encode(input, cd, ctx),
        ids::SHUFFLE => shuffle::encode(input, cd, ctx),
        ids::FLETCHER32 => fletcher32::encode(input, cd, ctx),
        ids::SZIP => szip::encode(input, cd, ctx),
        ids::NBIT => nbit::encode(input, cd, ctx),
        ids::SCALEOFFSET => scaleoffset::encode(input, cd, ctx),
        ids::BZIP2 => bzip2::encode(input, cd, ctx),
        ids::LZF => lzf::encode(input, cd, ctx),
        ids::BLOSC => blosc::encode(input, cd, ctx),
        ids::LZ4 => lz4::encode(input, cd, ctx),
        ids::BITSHUFFLE => bitshuffle::encode(input, cd, ctx),
        ids::ZSTD => zstd::encode(input, cd, ctx),
        ids::BLOSC2 => blosc2::encode(input, cd, ctx),
        id => return Err(unsupported(spec, id)),
    };
    out.map_err(|e| tag(e, spec))
}

fn unsupported(spec: &FilterSpec, id: u32) -> Error {
    let name = match filter_name(id) {
        "unknown" => spec.name.clone().unwrap_or_else(|| "unknown".into()),
        n => n.to_string(),
    };
    Error::UnsupportedFilter { id, name }
}

/// Codecs report errors without knowing their registered id; fill it in.
fn tag(e: Error, spec: &FilterSpec) -> Error {
    match e {
        Error::UnsupportedFilter { id: 0, .. } => Error::UnsupportedFilter {
            id: spec.id,
            name: filter_name(spec.id).to_string(),
        },
        Error::Filter { id: 0, reason, .. } => Error::Filter {
            id: spec.id,
            name: filter_name(spec.id).to_string(),
            reason,
        },
        other => other,
    }
}

/// Undo a whole pipeline (stages applied in reverse), honouring the chunk's filter
/// mask: bit `i` set means stage `i` was skipped when the chunk was written.
pub fn decode_pipeline(
    pipeline: &[FilterSpec],
    mask: u32,
    ctx: &ChunkContext,
    input: &[u8],
) -> Result<Vec<u8>> {
    let mut buf: Option<Vec<u8>> = None;
    for (i, spec) in pipeline.iter().enumerate().rev() {
        if i < 32 && mask & (1 << i) != 0 {
            continue;
        }
        let cur: &[u8] = buf.as_deref().unwrap_or(input);
        let out = decode(spec, ctx, cur)?;
        if out.len() > ctx.max_output {
            return Err(Error::filter(
                spec.id,
                filter_name(spec.id),
                "decoded stage exceeds the chunk bound",
            ));
        }
        buf = Some(out);
    }
    Ok(buf.unwrap_or_else(|| input.to_vec()))
}

/// Scratch reused by [`decode_pipeline_reusing`] from one chunk to the next.
#[derive(Default)]
pub struct DecodeScratch {
    /// The decoded chunk of the last call.
    pub out: Vec<u8>,
    blosc2: blosc2::chunk::ChunkDecoder,
    block: Vec<u8>,
}

impl DecodeScratch {
    /// The Blosc2 decoder state and a block-sized scratch, for callers that
    /// decode Blosc2 chunks block by block.
    pub fn blosc2_parts(&mut self) -> (&mut blosc2::chunk::ChunkDecoder, &mut Vec<u8>) {
        (&mut self.blosc2, &mut self.block)
    }
}

/// [`decode_pipeline`] into `scratch.out`, reusing its allocation (and the
/// Blosc2 decoder's buffers) from call to call, so a reader decoding many
/// chunks does not fault in fresh pages for each one. A lone Blosc2 stage
/// decodes in place; other pipelines fall back to [`decode_pipeline`].
pub fn decode_pipeline_reusing(
    pipeline: &[FilterSpec],
    mask: u32,
    ctx: &ChunkContext,
    input: &[u8],
    scratch: &mut DecodeScratch,
) -> Result<()> {
    let mut active = pipeline
        .iter()
        .enumerate()
        .filter(|(i, _)| *i >= 32 || mask & (1 << i) == 0);
    if let (Some((_, spec)), None) = (active.next(), active.next()) {
        if spec.id == ids::BLOSC2 {
            let n = blosc2::decoded_len(input, ctx.max_output).map_err(|e| tag(e, spec))?;
            if n > ctx.max_output {
                return Err(Error::filter(
                    spec.id,
                    filter_name(spec.id),
                    "decoded stage exceeds the chunk bound",
                ));
            }
            scratch.out.resize(n, 0);
            return blosc2::decode_into(
                input,
                &spec.cd_values,
                &mut scratch.blosc2,
                &mut scratch.out,
            )
            .map_err(|e| tag(e, spec));
        }
    }
    scratch.out = decode_pipeline(pipeline, mask, ctx, input)?;
    Ok(())
}

/// Apply a whole pipeline (write direction), stages in order.
pub fn encode_pipeline(
    pipeline: &[FilterSpec],
    ctx: &ChunkContext,
    input: &[u8],
) -> Result<Vec<u8>> {
    let mut buf: Option<Vec<u8>> = None;
    for spec in pipeline {
        let cur: &[u8] = buf.as_deref().unwrap_or(input);
        buf = Some(encode(spec, ctx, cur)?);
    }
    Ok(buf.unwrap_or_else(|| input.to_vec()))
}
