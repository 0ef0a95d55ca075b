//! Contiguous and compact datasets as Zarr chunks: contiguous data as
//! pseudo-chunks of whole rows along the first axis (each a byte range of the
//! one stored block), compact data inlined; and the fill value's bytes.

use super::{refuse, ChunkEntry, ChunkLocation};
use crate::dataset::Dataset;
use crate::datatype::StringPad;
use crate::error::Result;
use crate::messages::fill_value::FillValue;

/// Largest pseudo-chunk of contiguous data, in bytes.
pub(crate) const PSEUDO_CHUNK_BYTES: u64 = 64 << 20;

/// One element's fill bytes in file order (zeros without a user value).
pub(crate) fn fill_bytes(ds: &Dataset) -> Result<Vec<u8>> {
    let n = usize::try_from(ds.dtype().size()).map_err(|_| refuse(ds, "element size"))?;
    Ok(match ds.fill_value() {
        FillValue::User(b) if b.len() == n => b.clone(),
        _ => vec![0; n],
    })
}

fn whole_shape(ds: &Dataset) -> Vec<u64> {
    ds.shape().iter().map(|&d| d.max(1)).collect()
}

fn logical_bytes(ds: &Dataset) -> Result<u64> {
    ds.shape()
        .iter()
        .try_fold(ds.dtype().size(), |a, &d| a.checked_mul(d))
        .ok_or_else(|| refuse(ds, "size overflows"))
}

/// Pseudo-chunks of a contiguous dataset: `k` rows each, `k` the largest
/// divisor of the first dimension keeping a chunk under
/// [`PSEUDO_CHUNK_BYTES`] (so every chunk is whole).
pub(crate) fn contiguous(ds: &Dataset) -> Result<(Vec<u64>, Vec<ChunkEntry>)> {
    if ds.external_files().is_some() {
        return Err(refuse(ds, "external raw data files"));
    }
    let mut shape = whole_shape(ds);
    let crate::messages::layout::Layout::Contiguous { address, .. } = ds.layout() else {
        return Err(refuse(ds, "not contiguous"));
    };
    let total = logical_bytes(ds)?;
    let Some(address) = *address else {
        return Ok((shape, Vec::new()));
    };
    let address = address
        .checked_add(ds.file().superblock().base_address)
        .ok_or_else(|| refuse(ds, "address overflows"))?;
    if total == 0 {
        return Ok((shape, Vec::new()));
    }
    if ds.storage_size()? < total {
        return Err(refuse(ds, "contiguous storage smaller than the data"));
    }
    if shape.is_empty() {
        let entry = ChunkEntry {
            coords: Vec::new(),
            location: ChunkLocation::Range {
                offset: address,
                length: total,
            },
        };
        return Ok((shape, vec![entry]));
    }
    let rows = shape[0];
    let row_bytes = total / rows;
    let k = if total <= PSEUDO_CHUNK_BYTES {
        rows
    } else {
        let max_rows = (PSEUDO_CHUNK_BYTES / row_bytes.max(1)).max(1);
        (1..=max_rows.min(rows))
            .rev()
            .find(|&k| rows.is_multiple_of(k))
            .unwrap_or(1)
    };
    shape[0] = k;
    let chunk_len = row_bytes * k;
    let mut out = Vec::new();
    for i in 0..rows / k {
        let mut coords = vec![0u64; shape.len()];
        coords[0] = i;
        out.push(ChunkEntry {
            coords,
            location: ChunkLocation::Range {
                offset: address
                    .checked_add(i * chunk_len)
                    .ok_or_else(|| refuse(ds, "address overflows"))?,
                length: chunk_len,
            },
        });
    }
    Ok((shape, out))
}

/// Fixed-length strings padded otherwise than with NULs, as libhdf5 converts
/// them for h5py (NUL-terminated: zeros after the first NUL; space-padded:
/// trailing spaces become NULs), inlined as one chunk of at most
/// [`PSEUDO_CHUNK_BYTES`].
pub(crate) fn converted_strings(
    ds: &Dataset,
    pad: StringPad,
) -> Result<(Vec<u64>, Vec<ChunkEntry>)> {
    let shape = whole_shape(ds);
    let total = logical_bytes(ds)?;
    if total > PSEUDO_CHUNK_BYTES {
        return Err(refuse(
            ds,
            "fixed-length strings not NUL-padded, too many to convert inline",
        ));
    }
    if total == 0 {
        return Ok((shape, Vec::new()));
    }
    let mut raw = ds.read_all_raw()?;
    let n = usize::try_from(ds.dtype().size()).map_err(|_| refuse(ds, "element size"))?;
    for s in raw.chunks_mut(n.max(1)) {
        let keep = match pad {
            StringPad::NullTerm => s.iter().position(|&b| b == 0).unwrap_or(s.len()),
            _ => s.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1),
        };
        s[keep..].fill(0);
    }
    let entry = ChunkEntry {
        coords: vec![0; shape.len()],
        location: ChunkLocation::Inline(raw),
    };
    Ok((shape, vec![entry]))
}

/// A compact dataset as one inlined chunk.
pub(crate) fn compact(ds: &Dataset, data: &[u8]) -> Result<(Vec<u64>, Vec<ChunkEntry>)> {
    let shape = whole_shape(ds);
    let total = logical_bytes(ds)?;
    if total == 0 {
        return Ok((shape, Vec::new()));
    }
    let n = usize::try_from(total).map_err(|_| refuse(ds, "size"))?;
    let bytes = data
        .get(..n)
        .ok_or_else(|| refuse(ds, "compact data shorter than the dataset"))?;
    let entry = ChunkEntry {
        coords: vec![0; shape.len()],
        location: ChunkLocation::Inline(bytes.to_vec()),
    };
    Ok((shape, vec![entry]))
}
