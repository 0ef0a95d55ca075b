//! The HDF5 filter pipeline as a codec list: one [`Codec`] per stage (filter
//! id, client data, and the element and chunk sizes the codec needs),
//! refusing filters this crate cannot decode.

use crate::datatype::{ByteOrder, Datatype};
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
    /// For N-bit over a signed integer of fewer significant bits than its
    /// size: the precision in bits, whose top bit the decoded values must be
    /// sign-extended from (as libhdf5's conversion does for h5py).
    pub sign_extend: Option<u16>,
    /// True when the elements are big-endian (for `sign_extend`).
    pub big_endian: bool,
}

/// The codec list of `pipeline`, or the name of the first filter no codec decodes.
pub(crate) fn of(
    pipeline: &[FilterSpec],
    dtype: &Datatype,
    chunk_bytes: u64,
) -> Result<Vec<Codec>, String> {
    let element_size = u32::try_from(dtype.size()).map_err(|_| "element size".to_string())?;
    let (sign_extend, big_endian) = match dtype {
        Datatype::Integer {
            size,
            order,
            signed,
            bit_offset,
            precision,
        } => {
            if *bit_offset != 0 && pipeline.iter().any(|f| f.id == ids::NBIT) {
                return Err(format!("n-bit integer with bit offset {bit_offset}"));
            }
            let short = u32::from(*precision) < size.saturating_mul(8);
            (
                (*signed && short).then_some(*precision),
                *order == ByteOrder::Big,
            )
        }
        Datatype::Float { size, layout, .. }
            if u32::from(layout.precision) < size.saturating_mul(8)
                && pipeline.iter().any(|f| f.id == ids::NBIT) =>
        {
            return Err(format!(
                "n-bit float of {} bits needs a type conversion",
                layout.precision
            ))
        }
        _ => (None, false),
    };
    pipeline
        .iter()
        .map(|f| {
            if !purehdf_filters::DECODABLE.contains(&f.id) {
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
                sign_extend: if f.id == ids::NBIT { sign_extend } else { None },
                big_endian,
            })
        })
        .collect()
}
