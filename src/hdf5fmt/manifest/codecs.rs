//! The HDF5 filter pipeline as a codec list: one [`Codec`] per stage (filter
//! id, client data, and the element and chunk sizes the codec needs),
//! refusing filters this crate cannot decode.

use purehdf_filters::{filter_name, ids, FilterSpec};

/// One pipeline stage as a codec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Codec {
    /// HDF5 filter id.
    pub filter_id: u32,
    /// Its short name (`deflate`, `blosc2`, ...).
    pub name: &'static str,
    /// The client data values stored in the file.
    pub cd_values: Vec<u32>,
    /// Element size in bytes (the datatype size).
    pub element_size: u32,
    /// Bytes of one decoded chunk.
    pub chunk_bytes: u64,
}

const DECODABLE: [u32; 13] = [
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

/// The codec list of `pipeline`, or the name of the first filter no codec decodes.
pub(crate) fn of(
    pipeline: &[FilterSpec],
    element_size: u32,
    chunk_bytes: u64,
) -> Result<Vec<Codec>, String> {
    pipeline
        .iter()
        .map(|f| {
            if !DECODABLE.contains(&f.id) {
                return Err(format!(
                    "filter {} ({}) has no codec",
                    f.id,
                    f.name.as_deref().unwrap_or(filter_name(f.id))
                ));
            }
            Ok(Codec {
                filter_id: f.id,
                name: filter_name(f.id),
                cd_values: f.cd_values.clone(),
                element_size,
                chunk_bytes,
            })
        })
        .collect()
}
