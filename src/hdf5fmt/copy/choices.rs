//! How a copied dataset is stored: the chunk shape guessed for one that
//! becomes chunked, the dataspace written, whether its type holds references,
//! and its pipeline kept as stored.

use crate::datatype::Datatype;
use crate::error::Result;
use crate::messages::dataspace::Dataspace;
use crate::write::FileWriter;

/// h5py's `guess_chunk`: halve dimensions in turn until a chunk is near a target
/// size that grows with the dataset (8 KiB to 1 MiB).
pub fn guess_chunk(shape: &[u64], type_size: u64) -> Vec<u64> {
    const BASE: f64 = 16.0 * 1024.0;
    const MIN: f64 = 8.0 * 1024.0;
    const MAX: f64 = 1024.0 * 1024.0;
    let mut chunks: Vec<f64> = shape
        .iter()
        .map(|&d| if d == 0 { 1024.0 } else { d as f64 })
        .collect();
    if chunks.is_empty() {
        return Vec::new();
    }
    let ts = type_size.max(1) as f64;
    let dset_size = chunks.iter().product::<f64>() * ts;
    let target = (BASE * 2f64.powf((dset_size / (1024.0 * 1024.0)).log10())).clamp(MIN, MAX);
    let n = chunks.len();
    let mut idx = 0usize;
    loop {
        let count: f64 = chunks.iter().product();
        let bytes = count * ts;
        if (bytes < target || (bytes - target).abs() / target < 0.5) && bytes < MAX {
            break;
        }
        if count <= 1.0 {
            break;
        }
        if let Some(c) = chunks.get_mut(idx % n) {
            *c = (*c / 2.0).ceil();
        }
        idx += 1;
    }
    chunks.iter().map(|&c| c.max(1.0) as u64).collect()
}

/// The writer's dataspace for a reader's dataspace (`fixed`: drop maximum sizes
/// The writer's dataspace for a reader's dataspace.
pub(super) fn space_of(ds: &Dataspace) -> Dataspace {
    ds.clone()
}

pub(super) fn has_reference(dt: &Datatype) -> bool {
    match dt {
        Datatype::Reference { .. } => true,
        Datatype::Compound { members, .. } => members.iter().any(|m| has_reference(&m.dtype)),
        Datatype::Array { base, .. }
        | Datatype::Enum { base, .. }
        | Datatype::VarSequence { base, .. } => has_reference(base),
        _ => false,
    }
}

/// Mark the pipeline of `dst` (a copy of `ds` with its stored pipeline) as
/// stored, with the source's own message body when it lies in the dataset's
/// header (a shared message is re-encoded from its decoded stages).
pub(super) fn keep_pipeline(
    ds: &crate::dataset::Dataset,
    w: &mut FileWriter,
    dst: crate::write::DatasetId,
) -> Result<()> {
    match ds
        .header()
        .first(crate::messages::types::FILTER_PIPELINE)
        .filter(|m| !m.is_shared())
    {
        Some(m) => w.keep_pipeline_message(dst, m.data.clone()),
        None => w.keep_pipeline_as_stored(dst),
    }
}
