//! Filter constructors for the writer (HDF5 File Format Specification
//! IV.A.2.l, "Data Storage - Filter Pipeline Message"; the client data of
//! each filter as h5py and hdf5plugin pass it, `shared/spec/filters.md`):
//! `Filter::deflate(6)`, `Filter::shuffle()`, `Filter::blosc2(codec, level,
//! shuffle)` and the others, instead of raw `cd_values`. The writer completes
//! the parameters that depend on the datatype and chunk shape when it stores
//! the pipeline (its "set local" step), so one value serves every dataset.

#![deny(missing_docs)]

use purehdf_filters::{ids, FilterSpec};

/// One stage of a filter pipeline, as the writer is asked to apply it: built
/// with the constructors below ([`Filter::deflate`], [`Filter::blosc2`], ...)
/// or from a stored stage ([`Filter::from_spec`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter(FilterSpec);

impl Filter {
    /// A stage exactly as stored: filter id, flags, client data and name.
    pub fn from_spec(spec: FilterSpec) -> Filter {
        Filter(spec)
    }

    /// The stored form of this stage.
    pub fn spec(&self) -> &FilterSpec {
        &self.0
    }

    /// The registered filter id (1 = deflate, 32026 = Blosc2, ...).
    pub fn id(&self) -> u32 {
        self.0.id
    }

    /// The client data values the stage stores.
    pub fn cd_values(&self) -> &[u32] {
        &self.0.cd_values
    }
}

impl From<Filter> for FilterSpec {
    fn from(f: Filter) -> FilterSpec {
        f.0
    }
}

impl From<FilterSpec> for Filter {
    fn from(spec: FilterSpec) -> Filter {
        Filter(spec)
    }
}

/// The compressor inside a Blosc2 chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Blosc2Codec {
    /// BloscLZ (Blosc's own LZ77).
    BloscLz,
    /// LZ4.
    Lz4,
    /// LZ4 high compression.
    Lz4Hc,
    /// zlib (deflate).
    Zlib,
    /// Zstandard.
    Zstd,
}

impl Blosc2Codec {
    /// The compressor code stored in the filter's client data.
    pub fn code(self) -> u32 {
        match self {
            Blosc2Codec::BloscLz => 0,
            Blosc2Codec::Lz4 => 1,
            Blosc2Codec::Lz4Hc => 2,
            Blosc2Codec::Zlib => 4,
            Blosc2Codec::Zstd => 5,
        }
    }
}

/// The byte rearrangement Blosc2 applies before compressing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Blosc2Shuffle {
    /// No rearrangement.
    None,
    /// Byte shuffle.
    Byte,
    /// Bit shuffle.
    Bit,
}

impl Blosc2Shuffle {
    /// The shuffle code stored in the filter's client data.
    pub fn code(self) -> u32 {
        match self {
            Blosc2Shuffle::None => 0,
            Blosc2Shuffle::Byte => 1,
            Blosc2Shuffle::Bit => 2,
        }
    }
}

/// A stage marked optional (pipeline flags bit 0), as h5py adds its filters:
/// a chunk the stage cannot encode is stored without it.
fn optional(id: u32, cd_values: Vec<u32>) -> Filter {
    Filter(FilterSpec {
        id,
        flags: 1,
        cd_values,
        name: None,
    })
}

impl Filter {
    /// Deflate (gzip) at `level` 0–9 (clamped).
    pub fn deflate(level: u32) -> Filter {
        optional(ids::DEFLATE, vec![level.min(9)])
    }

    /// HDF5's byte shuffle (the element size is filled in by the writer).
    pub fn shuffle() -> Filter {
        optional(ids::SHUFFLE, Vec::new())
    }

    /// Fletcher-32 checksum of each chunk (mandatory, as libhdf5 sets it).
    pub fn fletcher32() -> Filter {
        Filter(FilterSpec {
            id: ids::FLETCHER32,
            flags: 0,
            cd_values: Vec::new(),
            name: None,
        })
    }

    /// LZ4 (hdf5plugin's `LZ4()`, default block size).
    pub fn lz4() -> Filter {
        optional(ids::LZ4, vec![0])
    }

    /// Zstandard at `level` (−131072…22, clamped; hdf5plugin's `Zstd(clevel)`).
    pub fn zstd(level: i32) -> Filter {
        optional(ids::ZSTD, vec![level.clamp(-131_072, 22) as u32])
    }

    /// Blosc2 with `codec` at `level` 0–9 (clamped) after `shuffle`
    /// (hdf5plugin's `Blosc2(cname, clevel, filters)`).
    pub fn blosc2(codec: Blosc2Codec, level: u32, shuffle: Blosc2Shuffle) -> Filter {
        optional(
            ids::BLOSC2,
            vec![0, 0, 0, 0, level.min(9), shuffle.code(), codec.code()],
        )
    }

    /// Bitshuffle, followed by LZ4 when `lz4` (hdf5plugin's `Bitshuffle()`).
    pub fn bitshuffle(lz4: bool) -> Filter {
        optional(ids::BITSHUFFLE, vec![0, if lz4 { 2 } else { 0 }])
    }

    /// bzip2 at `level` 1–9 (clamped).
    pub fn bzip2(level: u32) -> Filter {
        optional(ids::BZIP2, vec![level.clamp(1, 9)])
    }

    /// LZF (h5py's `compression="lzf"`).
    pub fn lzf() -> Filter {
        optional(ids::LZF, Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_give_the_plugin_client_data() {
        let b = Filter::blosc2(Blosc2Codec::Zstd, 3, Blosc2Shuffle::Byte);
        assert_eq!((b.id(), b.cd_values()), (32026, &[0, 0, 0, 0, 3, 1, 5][..]));
        assert_eq!(Filter::deflate(12).cd_values(), &[9]);
        assert_eq!(Filter::zstd(-5).cd_values(), &[(-5i32) as u32]);
        assert_eq!(Filter::shuffle().id(), 2);
        assert_eq!(Filter::fletcher32().spec().flags, 0);
        assert_eq!(Filter::lz4().cd_values(), &[0]);
    }
}
