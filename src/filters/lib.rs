//! purehdf-filters: every HDF5 filter as a pure encode/decode pair over
//! bytes and element sizes — deflate, shuffle, fletcher32, szip, nbit,
//! scaleoffset, LZF, bzip2, LZ4, Zstd (our own bounded decoder), bitshuffle,
//! Blosc1, Blosc2 frames and B2ND. No HDF5 file knowledge, no C.
//!
//! The crate maps a filter id (as an HDF5 filter pipeline message stores it,
//! and the registered plugin ids) with its client data values to a codec:
//! [`decode`] / [`encode`] one stage given a [`FilterSpec`] and a
//! [`ChunkContext`] (element size, chunk size, output cap). Every decoder
//! refuses to produce more than [`ChunkContext::max_output`] bytes and
//! reports bad input as a typed [`Error`], never a panic.
//!
//! The thread policy shared by every purehdf crate lives here too
//! ([`threads`]): one thread runs everything inline, more build one pool.
//!
//! # Example
//!
//! A shuffle + deflate pipeline, written in order and read back in reverse:
//!
//! ```
//! use purehdf_filters::{decode, encode, ids, ChunkContext, Error, FilterSpec};
//!
//! // 1024 little-endian u16 values: a 2048-byte chunk of 2-byte elements.
//! let data: Vec<u8> = (0u16..1024).flat_map(|v| (v / 7).to_le_bytes()).collect();
//! let ctx = ChunkContext::new(2, data.len());
//!
//! let shuffle = FilterSpec { id: ids::SHUFFLE, flags: 0, cd_values: vec![2], name: None };
//! let deflate = FilterSpec { id: ids::DEFLATE, flags: 0, cd_values: vec![6], name: None };
//!
//! // Write direction: the pipeline in order.
//! let stored = encode(&deflate, &ctx, &encode(&shuffle, &ctx, &data)?)?;
//! assert!(stored.len() < data.len());
//!
//! // Read direction: the pipeline in reverse.
//! let restored = decode(&shuffle, &ctx, &decode(&deflate, &ctx, &stored)?)?;
//! assert_eq!(restored, data);
//!
//! // A decoder never produces more than `max_output` bytes.
//! let tight = ChunkContext { max_output: 100, ..ctx };
//! assert!(matches!(
//!     decode(&deflate, &tight, &stored),
//!     Err(Error::Filter { id: ids::DEFLATE, .. })
//! ));
//! # Ok::<(), Error>(())
//! ```

pub(crate) mod cpu;
pub mod error;
pub mod spec;
#[cfg(test)]
mod test_support;
pub mod threads;

pub use error::{Error, Result};
pub use spec::{filter_name, ids, ChunkContext, FilterSpec};

pub mod bitshuffle;
pub mod blosc;
pub mod blosc2;
pub mod blosclz;
pub mod bzip2;
pub mod deflate;
pub mod deflate_encode;
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

/// The filter ids [`decode`] undoes (every other id is refused as unsupported).
pub const DECODABLE: [u32; 13] = [
    ids::DEFLATE,
    ids::SHUFFLE,
    ids::FLETCHER32,
    ids::SZIP,
    ids::NBIT,
    ids::SCALEOFFSET,
    ids::BZIP2,
    ids::LZF,
    ids::BLOSC,
    ids::LZ4,
    ids::BITSHUFFLE,
    ids::ZSTD,
    ids::BLOSC2,
];

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
    /// The last stage's output when a shuffle stage follows it.
    stage: Vec<u8>,
    /// One inflate state (and its window) for every deflate chunk.
    inflate: Option<flate2::Decompress>,
}

impl DecodeScratch {
    /// The Blosc2 decoder state and a block-sized scratch, for callers that
    /// decode Blosc2 chunks block by block.
    pub fn blosc2_parts(&mut self) -> (&mut blosc2::chunk::ChunkDecoder, &mut Vec<u8>) {
        (&mut self.blosc2, &mut self.block)
    }

    /// Bytes of buffer this scratch holds on to.
    pub fn retained_bytes(&self) -> usize {
        self.out
            .capacity()
            .saturating_add(self.block.capacity())
            .saturating_add(self.stage.capacity())
    }
}

/// Decode one deflate or Zstd stage of a chunk expected to be exactly
/// `ctx.chunk_bytes` long into `buf` (resized to that length; memory kept
/// from call to call, so nothing is allocated or zeroed again). `Ok(false)`
/// when the stream is not exactly one chunk long, or the stage is another
/// codec: the caller then decodes through [`decode`], which gives the same
/// bytes or the same error as if this fast path did not exist.
fn decode_stage_exact(
    spec: &FilterSpec,
    ctx: &ChunkContext,
    input: &[u8],
    buf: &mut Vec<u8>,
    inflate: &mut Option<flate2::Decompress>,
) -> Result<bool> {
    let n = ctx.chunk_bytes;
    if n == 0 || n > ctx.max_output || input.is_empty() {
        return Ok(false);
    }
    match spec.id {
        ids::DEFLATE => {
            buf.resize(n, 0);
            let z = inflate.get_or_insert_with(|| flate2::Decompress::new(true));
            match deflate::decode_into(input, z, buf) {
                Ok(Some(m)) if m == n => Ok(true),
                Ok(_) => Ok(false),
                Err(e) => Err(tag(e, spec)),
            }
        }
        ids::ZSTD => {
            buf.resize(n, 0);
            // A size mismatch is an error here but may be valid in the
            // general path (a chunk decoding to more than its size): retry.
            Ok(zstd_decode::decompress_exact(input, buf).is_ok())
        }
        _ => Ok(false),
    }
}

/// [`decode_pipeline`] into `scratch.out`, reusing its allocation (and the
/// Blosc2 decoder's buffers) from call to call, so a reader decoding many
/// chunks does not fault in fresh pages for each one. A lone Blosc2 stage
/// decodes in place; deflate or Zstd, alone or under shuffle, decode into the
/// kept buffers (and the kept inflate state) when the chunk decodes to
/// exactly `ctx.chunk_bytes`; other pipelines fall back to [`decode_pipeline`].
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
        .filter(|(i, _)| *i >= 32 || mask & (1 << i) == 0)
        .map(|(_, s)| s);
    let stages = (active.next(), active.next(), active.next());
    match stages {
        (Some(spec), None, None) if spec.id == ids::BLOSC2 => {
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
        (Some(spec), None, None)
            if decode_stage_exact(spec, ctx, input, &mut scratch.out, &mut scratch.inflate)? =>
        {
            return Ok(());
        }
        (Some(sh), Some(spec), None) if sh.id == ids::SHUFFLE => {
            // Element size as the shuffle filter takes it (cd_values[0], else
            // the datatype's); without one the general path reports the error.
            let ts = match sh.cd_values.first() {
                Some(&v) => usize::try_from(v).ok(),
                None => Some(ctx.element_size).filter(|&e| e > 0),
            };
            if let Some(ts) = ts {
                if decode_stage_exact(spec, ctx, input, &mut scratch.stage, &mut scratch.inflate)? {
                    scratch.out.resize(scratch.stage.len(), 0);
                    shuffle::unshuffle(&scratch.stage, &mut scratch.out, ts);
                    return Ok(());
                }
            }
        }
        _ => {}
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
    encode_stages(pipeline, ctx, input, encode)
}

/// Every stage of `pipeline` in order, each through `stage`.
fn encode_stages(
    pipeline: &[FilterSpec],
    ctx: &ChunkContext,
    input: &[u8],
    stage: fn(&FilterSpec, &ChunkContext, &[u8]) -> Result<Vec<u8>>,
) -> Result<Vec<u8>> {
    let mut buf: Option<Vec<u8>> = None;
    for spec in pipeline {
        let cur: &[u8] = buf.as_deref().unwrap_or(input);
        buf = Some(stage(spec, ctx, cur)?);
    }
    Ok(buf.unwrap_or_else(|| input.to_vec()))
}

/// [`encode_pipeline`] with every stage applied, also where the filter
/// declines because its output would not be smaller (LZF, szip and Blosc, as
/// their C filters do, so libhdf5 stores such a chunk with the stage
/// skipped). For readers that cannot skip a stage per chunk, such as chunk
/// manifests read through Zarr: the output decodes through the whole
/// pipeline to `input`.
pub fn encode_pipeline_unskipped(
    pipeline: &[FilterSpec],
    ctx: &ChunkContext,
    input: &[u8],
) -> Result<Vec<u8>> {
    encode_stages(pipeline, ctx, input, |spec, ctx, cur| match spec.id {
        ids::LZF => Ok(lzf::compress(cur)),
        ids::SZIP => szip::encode_unskipped(cur, &spec.cd_values, ctx).map_err(|e| tag(e, spec)),
        ids::BLOSC => blosc::encode_unskipped(cur, &spec.cd_values, ctx).map_err(|e| tag(e, spec)),
        _ => encode(spec, ctx, cur),
    })
}

#[cfg(test)]
mod reuse_tests {
    //! [`decode_pipeline_reusing`]'s fast paths against the general
    //! [`decode_pipeline`] (the reference): equal bytes, equal errors.
    use super::*;

    fn spec(id: u32, cd: &[u32]) -> FilterSpec {
        FilterSpec {
            id,
            flags: 0,
            cd_values: cd.to_vec(),
            name: None,
        }
    }

    /// The pipelines with a fast path, and a few without, for `elem`-byte elements.
    fn pipelines(elem: u32) -> Vec<Vec<FilterSpec>> {
        vec![
            vec![spec(ids::DEFLATE, &[4])],
            vec![spec(ids::SHUFFLE, &[elem]), spec(ids::DEFLATE, &[1])],
            vec![spec(ids::ZSTD, &[3])],
            vec![spec(ids::SHUFFLE, &[elem]), spec(ids::ZSTD, &[1])],
            vec![spec(ids::SHUFFLE, &[]), spec(ids::DEFLATE, &[6])],
            vec![spec(ids::FLETCHER32, &[]), spec(ids::DEFLATE, &[6])],
            vec![
                spec(ids::SHUFFLE, &[elem]),
                spec(ids::DEFLATE, &[6]),
                spec(ids::FLETCHER32, &[]),
            ],
        ]
    }

    /// Decode `stored` both ways (the reused scratch already holds an earlier
    /// chunk) and require the same bytes or the same error.
    fn same(p: &[FilterSpec], mask: u32, ctx: &ChunkContext, stored: &[u8], s: &mut DecodeScratch) {
        let want = decode_pipeline(p, mask, ctx, stored);
        let got = decode_pipeline_reusing(p, mask, ctx, stored, s).map(|()| s.out.clone());
        match (&want, &got) {
            (Ok(a), Ok(b)) => assert!(a == b, "pipeline {p:?} mask {mask}: bytes differ"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "pipeline {p:?}"),
            _ => panic!("pipeline {p:?} mask {mask}: {want:?} vs {got:?}"),
        }
    }

    #[test]
    fn unskipped_pipeline_applies_the_stage_the_filter_declines() {
        let ctx = ChunkContext::new(4, 4000);
        let mut x = 7u32;
        let noise: Vec<u8> = (0..4000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        let p = vec![spec(ids::SHUFFLE, &[4]), spec(ids::LZF, &[4, 261, 4000])];
        // the filter declines (libhdf5 would store the chunk with the stage skipped)
        assert!(encode_pipeline(&p, &ctx, &noise).is_err());
        let forced = encode_pipeline_unskipped(&p, &ctx, &noise).unwrap();
        assert!(forced.len() > noise.len());
        assert_eq!(decode_pipeline(&p, 0, &ctx, &forced).unwrap(), noise);
        // where the filter accepts, both agree byte for byte
        let smooth: Vec<u8> = (0..4000u32).map(|i| (i / 64) as u8).collect();
        assert_eq!(
            encode_pipeline_unskipped(&p, &ctx, &smooth).unwrap(),
            encode_pipeline(&p, &ctx, &smooth).unwrap()
        );
    }

    fn data(len: usize, seed: u32) -> Vec<u8> {
        let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
        (0..len)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                ((x >> 28) as u8).wrapping_add((i / 64) as u8)
            })
            .collect()
    }

    #[test]
    fn fast_paths_equal_the_general_path() {
        let mut s = DecodeScratch::default();
        for elem in [1u32, 2, 4, 8] {
            for p in pipelines(elem) {
                for (k, len) in [4096usize, 4096, 1000, 8, 0].into_iter().enumerate() {
                    let raw = data(len, k as u32 + elem);
                    let ctx = ChunkContext::new(elem as usize, len);
                    let stored = encode_pipeline(&p, &ctx, &raw).unwrap();
                    same(&p, 0, &ctx, &stored, &mut s);
                    if len > 0 {
                        assert_eq!(s.out, raw, "pipeline {p:?} len {len}");
                    }
                    // Every stage skipped by the mask but the last one.
                    let last = p.len() - 1;
                    let only = encode_pipeline(&p[last..], &ctx, &raw).unwrap();
                    same(
                        &p,
                        !(1u32 << last) & ((1 << p.len()) - 1),
                        &ctx,
                        &only,
                        &mut s,
                    );
                }
            }
        }
    }

    #[test]
    fn corrupt_and_truncated_streams_give_the_same_errors() {
        let mut s = DecodeScratch::default();
        for p in pipelines(2) {
            let raw = data(8192, 9);
            let ctx = ChunkContext::new(2, raw.len());
            let stored = encode_pipeline(&p, &ctx, &raw).unwrap();
            for cut in [
                0,
                1,
                2,
                7,
                stored.len() / 2,
                stored.len() - 4,
                stored.len() - 1,
            ] {
                same(&p, 0, &ctx, &stored[..cut], &mut s);
                assert!(decode_pipeline_reusing(&p, 0, &ctx, &stored[..cut], &mut s).is_err());
            }
            for at in [
                0,
                1,
                3,
                stored.len() / 3,
                stored.len() / 2,
                stored.len() - 2,
            ] {
                let mut bad = stored.clone();
                bad[at] ^= 0x5A;
                same(&p, 0, &ctx, &bad, &mut s);
            }
        }
    }

    #[test]
    fn chunks_of_another_size_take_the_general_path() {
        let mut s = DecodeScratch::default();
        for p in pipelines(2) {
            for len in [
                4094usize,
                4098,
                4096 + 600,
                2 * 4096 + 65_536,
                2 * 4096 + 65_538,
            ] {
                let raw = data(len, 3);
                let ctx = ChunkContext::new(2, 4096);
                let stored = encode_pipeline(&p, &ChunkContext::new(2, len), &raw).unwrap();
                same(&p, 0, &ctx, &stored, &mut s);
                if p.iter().any(|f| f.id == ids::FLETCHER32) {
                    continue; // its checksum makes the deflate stage 4 bytes longer
                }
                let r = decode_pipeline_reusing(&p, 0, &ctx, &stored, &mut s);
                if len > ctx.max_output {
                    assert!(r.is_err(), "pipeline {p:?}: {len} bytes accepted");
                } else {
                    assert!(r.is_ok() && s.out == raw, "pipeline {p:?} len {len}");
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn prop_reused_scratch_equals_fresh_decode(
            chunks in proptest::collection::vec(
                proptest::collection::vec(0u8..6, 0..3000), 1..5),
            which in 0usize..7,
            elem in proptest::sample::select(vec![1u32, 2, 4, 8]),
            garble in proptest::option::of((0usize..4000, 1u8..=255)),
        ) {
            let p = &pipelines(elem)[which];
            let mut s = DecodeScratch::default();
            let len = chunks[0].len();
            for c in &chunks {
                let mut raw = c.clone();
                raw.resize(len, 7);
                let ctx = ChunkContext::new(elem as usize, len);
                let mut stored = encode_pipeline(p, &ctx, &raw).unwrap();
                if let Some((at, x)) = garble {
                    if let Some(b) = stored.get_mut(at) {
                        *b ^= x;
                    }
                }
                same(p, 0, &ctx, &stored, &mut s);
            }
        }
    }
}
