//! The one raw-chunk copier (HDF5 File Format Specification IV.A.2.i layout
//! v4, IV.A.2.l filter masks): a chunked dataset's stored chunks move to a
//! [`FileWriter`] dataset as they are, never decoded, each with its filter
//! mask; chunks left beyond a shrunken extent are dropped (libhdf5 cannot
//! read them either). `h5 copy`, `medh5 fix` (and recompress, amend, pack)
//! use it.

use crate::chunk_index;
use crate::dataset::Dataset;
use crate::error::Result;
use crate::file::File;
use crate::messages::layout::Layout as ReadLayout;
use crate::write::{DatasetId, FileWriter};

/// What [`copy_stored_chunks`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawCopy {
    /// Chunks written as they are.
    pub chunks: usize,
    /// Chunks beyond the current extent, dropped.
    pub outside: usize,
}

/// True when `ds`'s stored chunks can be copied as they are: chunked, values
/// of fixed size (variable-length data and references point into the source
/// file), and partial edge chunks not stored unfiltered (layout flag bit 0,
/// which the writer cannot set: such datasets must be re-encoded).
pub fn raw_copyable(ds: &Dataset) -> bool {
    let edge_unfiltered = matches!(
        ds.layout(),
        ReadLayout::Chunked { flags, .. } if flags & 1 != 0
    );
    ds.chunk_dims().is_some() && !ds.dtype().has_vlen_or_ref() && !edge_unfiltered
}

/// The dataset's chunk shape (without the element-size dimension of old layouts).
pub fn chunk_shape(ds: &Dataset) -> Option<Vec<u64>> {
    let rank = ds.shape().len();
    ds.chunk_dims().map(|c| c.get(..rank).unwrap_or(c).to_vec())
}

/// Copy every stored chunk of `ds` (of file `src`) into `dst`, a chunked
/// dataset of the same shape, chunk shape and pipeline created with
/// `DatasetData::None`; the pipeline is marked as stored (its client data is
/// final). Call only when [`raw_copyable`] holds.
pub fn copy_stored_chunks(
    src: &File,
    ds: &Dataset,
    w: &mut FileWriter,
    dst: DatasetId,
) -> Result<RawCopy> {
    super::choices::keep_pipeline(ds, w, dst)?;
    let mut done = RawCopy::default();
    let (Some(params), Some(chunk)) = (ds.chunk_params(), chunk_shape(ds)) else {
        return Ok(done);
    };
    for r in chunk_index::chunks(src.source(), src.sizes(), &params)? {
        let coords: Vec<u64> = r
            .offset
            .iter()
            .zip(chunk.iter())
            .map(|(o, c)| o / c.max(&1))
            .collect();
        let outside = coords
            .iter()
            .zip(ds.shape().iter().zip(chunk.iter()))
            .any(|(&s, (&d, &c))| s >= d.div_ceil(c.max(1)));
        if outside {
            done.outside += 1;
            continue;
        }
        let bytes = chunk_index::stored_bytes(src.source(), &r)?.into_owned();
        w.write_raw_chunk(dst, &coords, bytes, r.filter_mask)?;
        done.chunks += 1;
    }
    Ok(done)
}
