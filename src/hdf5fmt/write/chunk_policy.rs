//! The "halve the largest axis" chunk policy VneuroTK applies to its arrays
//! (`docs/neighbours.md`, V7), as a writer option: start from the whole
//! shape (each axis at least 1) and halve the largest axis, rounding up, ties
//! going to the first largest, until the chunk holds at most the target
//! bytes (1 MiB by default) or the largest axis is 1. Scalars, empty arrays
//! and variable-length ("object") arrays are left contiguous. Arrays are
//! chunked even without compression; shuffle is added only for numeric
//! types.
//!
//! ```
//! use purehdf::{ChunkPolicy, DatasetSpec};
//! assert_eq!(ChunkPolicy::chunk_shape(&[200_000, 128], 4, 1 << 20), Some(vec![1563, 128]));
//! let spec = DatasetSpec::of::<f32>(&[200_000, 128]).with_chunk_policy(&ChunkPolicy::default())?;
//! assert!(matches!(spec.layout, purehdf::low_level::write::Layout::Chunked { ref chunk_dims, .. } if chunk_dims == &[1563, 128]));
//! # Ok::<(), purehdf::Error>(())
//! ```

use super::{DatasetSpec, Filter};
use crate::datatype::Datatype;
use crate::error::Result;
use crate::messages::dataspace::SpaceKind;

/// The chunk target and compression of [`DatasetSpec::with_chunk_policy`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkPolicy {
    /// Largest chunk in bytes (VneuroTK: 1 MiB).
    pub target_bytes: u64,
    /// Deflate level 1–9, or `None` for chunks without compression
    /// (VneuroTK: gzip 4).
    pub deflate: Option<u32>,
}

impl Default for ChunkPolicy {
    fn default() -> Self {
        ChunkPolicy {
            target_bytes: 1 << 20,
            deflate: Some(4),
        }
    }
}

impl ChunkPolicy {
    /// The chunk shape for an array of `shape` with `elem_size`-byte
    /// elements; `None` for a scalar (empty `shape`) or empty array.
    pub fn chunk_shape(shape: &[u64], elem_size: u64, target_bytes: u64) -> Option<Vec<u64>> {
        if shape.is_empty() || shape.contains(&0) {
            return None;
        }
        let mut c: Vec<u64> = shape.iter().map(|&d| d.max(1)).collect();
        let item = elem_size.max(1);
        let bytes = |c: &[u64]| {
            c.iter()
                .try_fold(item, |acc, &d| acc.checked_mul(d))
                .unwrap_or(u64::MAX)
        };
        while bytes(&c) > target_bytes {
            let mut axis = 0;
            for (i, &d) in c.iter().enumerate() {
                if d > c[axis] {
                    axis = i;
                }
            }
            if c[axis] == 1 {
                break;
            }
            c[axis] = c[axis].div_ceil(2);
        }
        Some(c)
    }
}

fn is_numeric(d: &Datatype) -> bool {
    matches!(
        d,
        Datatype::Integer { .. }
            | Datatype::Float { .. }
            | Datatype::Enum { .. }
            | Datatype::Bitfield { .. }
            | Datatype::Complex { .. }
    ) || matches!(d, Datatype::Compound { members, .. }
        if members.len() == 2 && members.iter().all(|m| matches!(m.dtype, Datatype::Float { .. })))
}

impl DatasetSpec {
    /// Chunk as `policy` says (see the module documentation): a simple,
    /// non-empty dataset of a fixed-size type gets the halved chunk shape,
    /// shuffle when its type is numeric, and deflate at the policy's level;
    /// any other dataset is returned unchanged.
    pub fn with_chunk_policy(self, policy: &ChunkPolicy) -> Result<DatasetSpec> {
        let variable = matches!(
            self.dtype,
            Datatype::VarString { .. } | Datatype::VarSequence { .. }
        );
        if self.shape.kind != SpaceKind::Simple || variable {
            return Ok(self);
        }
        let Some(chunk) =
            ChunkPolicy::chunk_shape(&self.shape.dims, self.dtype.size(), policy.target_bytes)
        else {
            return Ok(self);
        };
        let mut filters = Vec::new();
        if let Some(level) = policy.deflate {
            if is_numeric(&self.dtype) {
                filters.push(Filter::shuffle());
            }
            filters.push(Filter::deflate(level)?);
        }
        Ok(self.chunked(&chunk, filters))
    }
}
