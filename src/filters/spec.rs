//! What a codec is told: one stage of a filter pipeline as an HDF5 filter
//! pipeline message stores it (HDF5 File Format Specification IV.A.2.l:
//! filter id, flags, name, client data values), the registered filter ids,
//! and the chunk a codec works on. The registry in the crate root maps these
//! to codecs; every codec imports them from here.

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
    /// Deflate (zlib), HDF5 filter 1.
    pub const DEFLATE: u32 = 1;
    /// Byte shuffle, HDF5 filter 2.
    pub const SHUFFLE: u32 = 2;
    /// Fletcher-32 checksum, HDF5 filter 3.
    pub const FLETCHER32: u32 = 3;
    /// Szip (CCSDS 121.0 / libaec), HDF5 filter 4.
    pub const SZIP: u32 = 4;
    /// N-bit packing, HDF5 filter 5.
    pub const NBIT: u32 = 5;
    /// Scale-offset, HDF5 filter 6.
    pub const SCALEOFFSET: u32 = 6;
    /// BZip2, registered plugin filter 307.
    pub const BZIP2: u32 = 307;
    /// LZO, registered plugin filter 305 (not supported by this crate).
    pub const LZO: u32 = 305;
    /// LZF, registered plugin filter 32000.
    pub const LZF: u32 = 32000;
    /// Blosc (Blosc1), registered plugin filter 32001.
    pub const BLOSC: u32 = 32001;
    /// MAFISC, registered plugin filter 32002 (not supported by this crate).
    pub const MAFISC: u32 = 32002;
    /// LZ4 (HDF5 LZ4 framing), registered plugin filter 32004.
    pub const LZ4: u32 = 32004;
    /// Bitshuffle (with optional LZ4/Zstd), registered plugin filter 32008.
    pub const BITSHUFFLE: u32 = 32008;
    /// ZFP, registered plugin filter 32013 (not supported by this crate).
    pub const ZFP: u32 = 32013;
    /// Zstandard, registered plugin filter 32015.
    pub const ZSTD: u32 = 32015;
    /// SZ, registered plugin filter 32017 (not supported by this crate).
    pub const SZ: u32 = 32017;
    /// FCIDECOMP, registered plugin filter 32018 (not supported by this crate).
    pub const FCIDECOMP: u32 = 32018;
    /// JPEG, registered plugin filter 32019 (not supported by this crate).
    pub const JPEG: u32 = 32019;
    /// SZ3, registered plugin filter 32024 (not supported by this crate).
    pub const SZ3: u32 = 32024;
    /// Blosc2 (frames and B2ND), registered plugin filter 32026.
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
