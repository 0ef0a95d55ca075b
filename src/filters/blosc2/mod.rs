//! Blosc2 as the HDF5 filter 32026 (`docs/filters-format.md` §3): each stored
//! HDF5 chunk is a contiguous frame (§3.4) holding one Blosc2 chunk (§3.6),
//! a B2ND frame (§3.5) for chunk ranks 2–16.
//!
//! Public pieces: [`chunk`] (Blosc1/Blosc2 chunk decoding), [`encode_chunk`]
//! (Blosc2 chunk encoding), [`frame`] (frames), [`b2nd`] (block order),
//! [`codec`] (the stream codecs), [`jpeg2000`] (JPEG 2000 user codecs,
//! feature `jpeg2000`), and the filter pair [`decode`]/[`encode`].

pub mod b2nd;
pub mod chunk;
pub mod codec;
pub mod encode_chunk;
pub mod frame;
pub mod gather;
pub mod jpeg2000;
pub mod lz4block;

use crate::error::{Error, Result};
use crate::ChunkContext;
use chunk::ChunkDecoder;
use frame::Frame;

const NAME: &str = "blosc2";

fn bad(why: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, why)
}

/// The settings carried by the filter's `cd_values` (§3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// Block size in bytes (`cd_values[1]`); 0 = automatic.
    pub blocksize: usize,
    /// Element size in bytes (`cd_values[2]`; 0 there takes the context's
    /// element size, at least 1).
    pub typesize: usize,
    /// Uncompressed chunk size in bytes (`cd_values[3]`; 0 there takes the
    /// context's `chunk_bytes`).
    pub chunk_bytes: usize,
    /// Compression level 0–9 (`cd_values[4]`, default 5).
    pub clevel: u8,
    /// Blosc2 filter code (`cd_values[5]`, default 1 = byte shuffle); see
    /// [`chunk::filter`].
    pub filter: u8,
    /// Compressor code (`cd_values[6]`, default 0 = BloscLZ); see
    /// [`codec::code`].
    pub codec: u8,
    /// Chunk dims when 2 ≤ rank ≤ 16 were recorded.
    pub dims: Option<Vec<usize>>,
}

impl Params {
    /// Read `cd_values` (missing values default as C does).
    pub fn from_cd(cd: &[u32], ctx: &ChunkContext) -> Result<Params> {
        let get = |i: usize, d: u32| cd.get(i).copied().unwrap_or(d);
        let typesize = match get(2, 0) {
            0 => ctx.element_size.max(1),
            t => t as usize,
        };
        let chunk_bytes = match get(3, 0) {
            0 => ctx.chunk_bytes,
            c => c as usize,
        };
        let clevel = u8::try_from(get(4, 5)).map_err(|_| bad("clevel out of range"))?;
        let filter = u8::try_from(get(5, 1)).map_err(|_| bad("filter out of range"))?;
        let codec = u8::try_from(get(6, 0)).map_err(|_| bad("codec out of range"))?;
        let dims = match cd.get(7) {
            Some(&r) if (2..=b2nd::MAX_DIM as u32).contains(&r) => {
                let d = cd
                    .get(8..8 + r as usize)
                    .ok_or_else(|| bad("cd_values hold fewer dims than the rank"))?;
                Some(d.iter().map(|&x| x as usize).collect())
            }
            _ => None,
        };
        Ok(Params {
            blocksize: get(1, 0) as usize,
            typesize,
            chunk_bytes,
            clevel,
            filter,
            codec,
            dims,
        })
    }

    /// `cd_values` as hdf5plugin 7.1 writes them for this chunk.
    pub fn to_cd(&self) -> Vec<u32> {
        let mut cd = vec![
            1,
            0,
            self.typesize as u32,
            self.chunk_bytes as u32,
            u32::from(self.clevel),
            u32::from(self.filter),
            u32::from(self.codec),
        ];
        if let Some(d) = &self.dims {
            cd.push(d.len() as u32);
            cd.extend(d.iter().map(|&x| x as u32));
        }
        cd
    }
}

/// Uncompressed size of what the filter stored in `input` (the size
/// [`decode_into`] needs), bounded by `max`.
///
/// As hdf5plugin reads a frame: a B2ND frame decodes to its array shape
/// times the type size; any other frame to its first chunk, whose own
/// header gives the size (the frame's `nbytes` only counts its chunks).
pub fn decoded_len(input: &[u8], max: usize) -> Result<usize> {
    let n = if !frame::is_frame(input) {
        chunk::Header::parse(input)?.nbytes
    } else {
        let f = Frame::parse(input, FRAME_CAP)?;
        match b2nd_meta(&f)? {
            Some(m) => m
                .array_items()
                .and_then(|i| i.checked_mul(f.typesize))
                .ok_or_else(|| bad("size overflow"))?,
            // Frames of several chunks (never written by the HDF5 filter,
            // which reads only the first) decode whole.
            None if f.nchunks() > 1 => f.nbytes,
            None => first_chunk_len(&f)?,
        }
    };
    if n > max {
        return Err(bad(format!("decoded size {n} exceeds the bound {max}")));
    }
    Ok(n)
}

fn first_chunk_len(f: &Frame) -> Result<usize> {
    let n = match f.chunk_to_end(0)? {
        frame::ChunkRef::Data(c) => chunk::Header::parse(c)?.nbytes,
        frame::ChunkRef::Special { len, .. } => len,
    };
    if n == 0 {
        return Err(bad("empty chunk"));
    }
    Ok(n)
}

fn b2nd_meta(f: &Frame) -> Result<Option<b2nd::Meta>> {
    match f.metalayer("b2nd").or_else(|| f.metalayer("caterva")) {
        Some(m) => Ok(Some(b2nd::Meta::parse(m)?)),
        None => Ok(None),
    }
}

/// Largest frame (padded B2ND extent included) this decoder accepts.
const FRAME_CAP: usize = crate::limits::MAX_DECODED as usize;

/// Undo the filter.
pub fn decode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let n = decoded_len(input, ctx.max_output)?;
    let mut out = vec![0u8; n];
    decode_into(input, cd_values, &mut ChunkDecoder::new(), &mut out)?;
    Ok(out)
}

/// Check a B2ND frame against the filter values as the HDF5 filter does:
/// rank and array shape equal the chunk dims, the frame's type size the
/// filter's. Returns the padded chunk size in bytes.
fn check_b2nd(f: &Frame, meta: &b2nd::Meta, cd: &[u32]) -> Result<usize> {
    if let Some(&r) = cd.get(7) {
        if (2..=b2nd::MAX_DIM as u32).contains(&r) {
            let dims = dims_of(cd).ok_or_else(|| bad("cd_values hold fewer dims than the rank"))?;
            if meta.shape.len() != dims.len()
                || meta.shape.iter().zip(&dims).any(|(&s, &d)| s != d as u64)
            {
                return Err(bad("B2ND array shape differs from the filter's chunk dims"));
            }
        }
    }
    match cd.get(2) {
        Some(&t) if t != 0 && t as usize != f.typesize => {
            return Err(bad("B2ND type size differs from the filter's"));
        }
        _ => {}
    }
    if f.nchunks() != 1 {
        return Err(Error::unsupported(
            "Blosc2 frame",
            0,
            "B2ND frame with several chunks",
        ));
    }
    meta.check_one_chunk(f.typesize)
}

/// Undo the filter into `dst` (exactly [`decoded_len`] bytes), reusing `dec`.
pub fn decode_into(
    input: &[u8],
    cd_values: &[u32],
    dec: &mut ChunkDecoder,
    dst: &mut [u8],
) -> Result<()> {
    if !frame::is_frame(input) {
        return dec.decode_into(input, dst);
    }
    let f = Frame::parse(input, FRAME_CAP)?;
    let Some(meta) = b2nd_meta(&f)? else {
        if f.nchunks() > 1 {
            return f.decode_into(dec, dst);
        }
        return match f.chunk_to_end(0)? {
            frame::ChunkRef::Data(c) => dec.decode_into(c, dst),
            frame::ChunkRef::Special { kind, len } if len == dst.len() => {
                frame::fill_special(kind, f.typesize, dst)
            }
            frame::ChunkRef::Special { .. } => Err(bad("special chunk size differs")),
        };
    };
    let padded = check_b2nd(&f, &meta, cd_values)?;
    let ts = f.typesize;
    if meta.array_items().and_then(|i| i.checked_mul(ts)) != Some(dst.len()) {
        return Err(Error::InvalidArgument(
            "B2ND output size differs from the array".into(),
        ));
    }
    let block_bytes = meta
        .block_bytes(ts)
        .ok_or_else(|| bad("B2ND block size overflows"))?;
    let c = match f.chunk(0)? {
        frame::ChunkRef::Data(c) => c,
        frame::ChunkRef::Special { kind, len } => {
            // C builds the special chunk with the frame's block size and
            // reads it like a stored one.
            if !special_blocks_fit(&f, &meta, ts, padded, len) {
                return Err(bad("B2ND block count differs from the special chunk's"));
            }
            return frame::fill_special(kind, ts, dst);
        }
    };
    let h = chunk::Header::parse(c)?;
    if h.nbytes > padded || h.nbytes > FRAME_CAP {
        return Err(bad("chunk larger than the B2ND padded chunk"));
    }
    match b2nd::compact_read(&meta, ts, padded) {
        (true, blocks) => {
            if blocks.saturating_mul(block_bytes) > h.nbytes {
                return Err(bad("B2ND blocks past the end of the chunk"));
            }
        }
        (false, _) => {
            let bs = h.blocksize.min(h.nbytes);
            if bs == 0 || h.nbytes.div_ceil(bs) != padded / block_bytes {
                return Err(bad("B2ND block count differs from the chunk's"));
            }
        }
    }
    if meta.is_c_order() && h.nbytes == dst.len() {
        return dec.decode_into(c, dst);
    }
    let whole_only = h.memcpyed()
        || (h.extended && h.special() != 0)
        || h.filters.contains(&chunk::filter::DELTA);
    let same_shape = meta.is_c_order()
        || meta
            .shape
            .iter()
            .zip(&meta.chunkshape)
            .all(|(&s, &c)| s == c as u64);
    if !whole_only && same_shape && h.blocksize == block_bytes && h.nbytes == padded {
        // Each block is decoded into a small scratch and scattered into place.
        let nblocks = h.nbytes / block_bytes;
        let mut scratch = vec![0u8; block_bytes];
        for k in 0..nblocks {
            // Byte-shuffled split blocks are interleaved straight into place.
            if let Some(planes) = dec.block_planes(c, k)? {
                if planes.len() == ts {
                    b2nd::scatter_planes(&meta, k, &planes, dst)?;
                    continue;
                }
            }
            dec.decode_single_block(c, k, &mut scratch)?;
            b2nd::scatter_block(&meta, ts, k, &scratch, dst)?;
        }
        return Ok(());
    }
    let mut tmp = vec![0u8; h.nbytes];
    dec.decode_into(c, &mut tmp)?;
    b2nd::gather(&meta, ts, &tmp, dst)
}

/// Does a special chunk of `len` bytes (built with the frame's block size)
/// suit the B2ND geometry as C-Blosc2 reads it? See [`b2nd::compact_read`].
pub fn special_blocks_fit(
    f: &Frame,
    meta: &b2nd::Meta,
    ts: usize,
    padded: usize,
    len: usize,
) -> bool {
    let Some(block_bytes) = meta.block_bytes(ts) else {
        return false;
    };
    let bs = usize::try_from(f.blocksize).unwrap_or(0).min(len);
    f.blocksize >= 0
        && (b2nd::compact_read(meta, ts, padded).0
            || (bs > 0 && len.div_ceil(bs) == padded / block_bytes))
}

fn dims_of(cd: &[u32]) -> Option<Vec<usize>> {
    let r = *cd.get(7)? as usize;
    if !(2..=b2nd::MAX_DIM).contains(&r) {
        return None;
    }
    Some(cd.get(8..8 + r)?.iter().map(|&x| x as usize).collect())
}

/// Apply the filter: write the frame hdf5plugin 7.1 would write (§3.2, §3.4.6).
pub fn encode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let p = Params::from_cd(cd_values, ctx)?;
    encode_frame(input, &p)
}

/// Encode one HDF5 chunk as a Blosc2 frame with the settings `p`.
pub fn encode_frame(input: &[u8], p: &Params) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(input.len() / 2 + 256);
    encode_frame_into(input, p, &mut encode_chunk::ChunkEncoder::new(), &mut out)?;
    Ok(out)
}

fn check_codec(p: &Params) -> Result<()> {
    if codec::format_of(p.codec).is_none() || p.codec == codec::code::SNAPPY {
        return Err(Error::UnsupportedCodec {
            filter: NAME,
            codec: u32::from(p.codec),
            name: codec::name_of(u32::from(p.codec)).into(),
        });
    }
    Ok(())
}

fn settings(p: &Params, ts: usize, blocksize: usize) -> encode_chunk::Settings {
    encode_chunk::Settings {
        typesize: ts,
        clevel: p.clevel.min(9),
        codec: p.codec,
        filters: [0, 0, 0, 0, 0, p.filter],
        filters_meta: [0; 6],
        blocksize,
    }
}

/// The B2ND geometry the filter uses for chunk `dims` (§3.5.1), and its block bytes.
fn b2nd_geometry(dims: &[usize], ts: usize, p: &Params) -> Result<(b2nd::Meta, usize)> {
    let target = if p.blocksize != 0 {
        p.blocksize
    } else {
        let n = dims.iter().product::<usize>() * ts;
        encode_chunk::stune_blocksize(n, ts, p.clevel.min(9), p.codec, 1)
    };
    let block = b2nd::block_shape(dims, ts, target);
    let meta = b2nd::Meta {
        shape: dims.iter().map(|&d| d as u64).collect(),
        chunkshape: dims.to_vec(),
        blockshape: block,
    };
    let padded = meta.padded_items().ok_or_else(|| bad("size overflow"))? * ts;
    let bs = (meta.blockshape.iter().product::<usize>() * ts).min(padded);
    Ok((meta, bs))
}

/// Encode a B2ND frame whose padded blocks come from `src`, appended to `out`.
fn encode_b2nd(
    p: &Params,
    ts: usize,
    meta: &b2nd::Meta,
    bs: usize,
    src: &mut dyn encode_chunk::BlockSource,
    enc: &mut encode_chunk::ChunkEncoder,
    out: &mut Vec<u8>,
) -> Result<()> {
    let padded = meta.padded_items().ok_or_else(|| bad("size overflow"))? * ts;
    let ml = [(
        "b2nd",
        b2nd::write_meta(&meta.chunkshape, &meta.blockshape, ts),
    )];
    let s = settings(p, ts, bs);
    frame::write_single_into(&spec(p, ts, &ml), out, |o| {
        enc.encode_from(src, padded, &s, o)
    })
}

/// [`encode_frame`] appending the frame to `out` and reusing `enc`'s buffers.
pub fn encode_frame_into(
    input: &[u8],
    p: &Params,
    enc: &mut encode_chunk::ChunkEncoder,
    out: &mut Vec<u8>,
) -> Result<()> {
    check_codec(p)?;
    let ts = p.typesize.max(1);
    let b2nd_dims = p
        .dims
        .as_ref()
        .filter(|d| d.iter().try_fold(ts, |a, &x| a.checked_mul(x)) == Some(input.len()));
    match b2nd_dims {
        Some(dims) => {
            let (meta, bs) = b2nd_geometry(dims, ts, p)?;
            // The chunk itself is the array the blocks are gathered from.
            let shape: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
            let zeros = vec![0u64; dims.len()];
            let region = gather::Region {
                data: input,
                dims: &shape,
                start: &zeros,
                chunk: &shape,
                elem: ts,
                fill: &[],
            };
            let mut src =
                gather::B2ndBlocks::new(region, &meta).ok_or_else(|| bad("B2ND geometry"))?;
            encode_b2nd(p, ts, &meta, bs, &mut src, enc, out)
        }
        None => {
            let s = settings(p, ts, p.blocksize);
            frame::write_single_into(&spec(p, ts, &[]), out, |o| {
                let mut src = encode_chunk::SliceSource(input);
                enc.encode_from(&mut src, input.len(), &s, o)
            })
        }
    }
}

/// [`encode`] appending the frame to `out` and reusing `enc`'s buffers.
pub fn encode_into(
    input: &[u8],
    cd_values: &[u32],
    ctx: &ChunkContext,
    enc: &mut encode_chunk::ChunkEncoder,
    out: &mut Vec<u8>,
) -> Result<()> {
    let p = Params::from_cd(cd_values, ctx)?;
    encode_frame_into(input, &p, enc, out)
}

fn spec<'m>(p: &Params, ts: usize, ml: &'m [(&'m str, Vec<u8>)]) -> frame::FrameSpec<'m> {
    frame::FrameSpec {
        typesize: ts,
        clevel: p.clevel.min(9),
        codec: p.codec,
        filter: p.filter,
        metalayers: ml,
    }
}

#[cfg(test)]
mod parity_tests;

#[cfg(test)]
mod tests {
    use super::encode_chunk::{ChunkEncoder, Settings};
    use super::*;
    use proptest::prelude::*;

    fn data(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| ((i / 3) as u8).wrapping_mul(seed) ^ ((i % 7) as u8))
            .collect()
    }

    #[test]
    fn cd_values_as_hdf5plugin_writes_them() {
        let ctx = ChunkContext::new(2, 100_000);
        let p = Params::from_cd(&[1, 0, 2, 100_000, 3, 1, 5, 3, 10, 50, 100], &ctx).unwrap();
        assert_eq!(p.dims, Some(vec![10, 50, 100]));
        assert_eq!(p.to_cd(), vec![1, 0, 2, 100_000, 3, 1, 5, 3, 10, 50, 100]);
    }

    #[test]
    fn zero_chunk_is_special_offset_frame() {
        let ctx = ChunkContext::new(2, 8192);
        let cd = [1, 0, 2, 8192, 3, 1, 5];
        let f = encode(&[0u8; 8192], &cd, &ctx).unwrap();
        assert_eq!(f.len(), 172);
        assert_eq!(decode(&f, &cd, &ctx).unwrap(), vec![0u8; 8192]);
    }

    #[test]
    fn unknown_codec_is_unsupported() {
        let ctx = ChunkContext::new(2, 64);
        let err = encode(&[1u8; 64], &[1, 0, 2, 64, 5, 1, 37], &ctx).unwrap_err();
        assert!(matches!(err, Error::UnsupportedCodec { codec: 37, .. }));
        // a chunk whose header says "user codec 37"
        let mut c = ChunkEncoder::new()
            .encode(
                &(0..4096).map(|i| (i / 64) as u8).collect::<Vec<u8>>(),
                &Settings {
                    typesize: 2,
                    clevel: 5,
                    codec: 1,
                    filters: [0, 0, 0, 0, 0, 1],
                    filters_meta: [0; 6],
                    blocksize: 0,
                },
            )
            .unwrap();
        c[2] = (c[2] & 0x1f) | (6 << 5);
        c[22] = 37;
        assert_eq!(c[2] & 0x02, 0, "test chunk must not be memcpyed");
        let err = chunk::decode(&c, 1 << 20).unwrap_err();
        if cfg!(feature = "jpeg2000") {
            // decoded as JPEG 2000, and an LZ4 stream is not one
            assert!(err.to_string().contains("jpeg2000"), "{err}");
        } else {
            assert!(
                matches!(err, Error::UnsupportedCodec { codec: 37, .. }),
                "{err}"
            );
        }
        // ids that are no JPEG 2000 codec stay unsupported with the feature too
        c[22] = 38;
        let err = chunk::decode(&c, 1 << 20).unwrap_err();
        assert!(
            matches!(err, Error::UnsupportedCodec { codec: 38, .. }),
            "{err}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn chunk_round_trip(ts in 1usize..=16, n in 0usize..5000,
                            codec in prop::sample::select(vec![0u8, 1, 2, 4, 5]),
                            filter in prop::sample::select(vec![0u8, 1, 2, 3]),
                            clevel in 0u8..=9, bs in prop::sample::select(vec![0usize, 256, 1000, 4096]),
                            seed in any::<u8>()) {
            let src = data(n, seed);
            let s = Settings { typesize: ts, clevel, codec, filters: [0, 0, 0, 0, 0, filter],
                               filters_meta: [0; 6], blocksize: bs };
            let c = ChunkEncoder::new().encode(&src, &s).unwrap();
            prop_assert_eq!(chunk::decode(&c, 1 << 20).unwrap(), src);
        }

        #[test]
        fn filter_round_trip(ts in 1usize..=16, dims in proptest::collection::vec(1usize..40, 1..4),
                             codec in prop::sample::select(vec![0u32, 1, 2, 4, 5]),
                             filter in 0u32..3, seed in any::<u8>()) {
            let items: usize = dims.iter().product();
            let src = data(items * ts, seed);
            let mut cd = vec![1, 0, ts as u32, src.len() as u32, 5, filter, codec];
            if dims.len() >= 2 {
                cd.push(dims.len() as u32);
                cd.extend(dims.iter().map(|&d| d as u32));
            }
            let ctx = ChunkContext::new(ts, src.len());
            let f = encode(&src, &cd, &ctx).unwrap();
            prop_assert_eq!(decode(&f, &cd, &ctx).unwrap(), src);
        }
    }
}
