//! The chunk grid of a chunked dataset (HDF5 File Format Specification IV.A.2.i):
//! chunks per dimension for the current and maximum extents, the byte size of a
//! chunk, and the row-major linear chunk index the array-based indexes use.

use crate::error::{Error, Result};
use crate::limits;

use super::{ChunkIndexParams, ChunkRecord};

const GRID: &str = "chunk grid";
/// Most chunk records materialised for one dataset.
pub const MAX_CHUNK_RECORDS: u64 = 1 << 26;

/// Validated geometry of a dataset's chunks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Chunk dimensions in elements, one per dataspace dimension (none zero).
    pub chunk_dims: Vec<u64>,
    /// Current dataspace dimensions in elements.
    pub dims: Vec<u64>,
    /// Chunks per dimension covering the current extent.
    pub per_dim: Vec<u64>,
    /// Chunks per dimension covering the maximum extent (`None`: unlimited).
    pub max_per_dim: Vec<Option<u64>>,
    /// Decoded bytes of one chunk.
    pub chunk_bytes: u64,
    /// Size of one dataset element in bytes (never 0).
    pub element_size: u64,
    /// Most chunks the (maximum) dataspace can hold: the cap on any index walk.
    pub max_chunks: u64,
}

fn bad(reason: impl std::fmt::Display) -> Error {
    Error::malformed(GRID, 0, reason)
}

impl Grid {
    /// Validate `p` and derive the grid: rank between 1 and the rank limit, matching ranks, no zero
    /// chunk dimension or element size, and a chunk no larger than the decode limit.
    pub fn new(p: &ChunkIndexParams) -> Result<Self> {
        let rank = p.chunk_dims.len();
        if rank == 0 || rank > limits::MAX_RANK {
            return Err(bad(format!("rank {rank}")));
        }
        if p.dataset_dims.len() != rank || p.max_dims.len() != rank {
            return Err(bad(format!(
                "chunk rank {rank}, dataspace rank {} / {}",
                p.dataset_dims.len(),
                p.max_dims.len()
            )));
        }
        if p.chunk_dims.contains(&0) {
            return Err(bad("chunk dimension 0"));
        }
        if p.element_size == 0 {
            return Err(bad("element size 0"));
        }
        let per_dim: Vec<u64> = p
            .dataset_dims
            .iter()
            .zip(&p.chunk_dims)
            .map(|(&d, &c)| d.div_ceil(c))
            .collect();
        let max_per_dim: Vec<Option<u64>> = p
            .max_dims
            .iter()
            .zip(&p.chunk_dims)
            .map(|(m, &c)| m.map(|m| m.div_ceil(c)))
            .collect();
        let chunk_bytes = p
            .chunk_dims
            .iter()
            .try_fold(u64::from(p.element_size), |a, &c| a.checked_mul(c))
            .filter(|&b| b <= limits::MAX_DECODED)
            .ok_or_else(|| bad("chunk larger than the decode limit"))?;
        let max_chunks = per_dim
            .iter()
            .zip(&max_per_dim)
            .map(|(&cur, m)| m.unwrap_or(cur).max(cur))
            .try_fold(1u64, |a, n| a.checked_mul(n))
            .unwrap_or(u64::MAX)
            .min(MAX_CHUNK_RECORDS);
        Ok(Grid {
            chunk_dims: p.chunk_dims.clone(),
            dims: p.dataset_dims.clone(),
            per_dim,
            max_per_dim,
            chunk_bytes,
            element_size: u64::from(p.element_size),
            max_chunks,
        })
    }

    /// Number of dimensions of the dataset (and of its chunks).
    pub fn rank(&self) -> usize {
        self.chunk_dims.len()
    }

    /// Chunks per dimension of the maximum extent, with unlimited dimensions
    /// taken at their current extent (the extents array indexes linearise over).
    pub fn max_extents(&self) -> Vec<u64> {
        self.max_per_dim
            .iter()
            .zip(&self.per_dim)
            .map(|(m, &c)| m.unwrap_or(c).max(c))
            .collect()
    }

    /// A record for the chunk at `scaled` (chunk units), checked against the grid.
    pub fn record(
        &self,
        scaled: &[u64],
        address: u64,
        size: u64,
        mask: u32,
    ) -> Result<ChunkRecord> {
        if scaled.len() != self.rank() {
            return Err(bad(format!("chunk coordinates of rank {}", scaled.len())));
        }
        let mut offset = Vec::with_capacity(scaled.len());
        for ((&s, &c), m) in scaled.iter().zip(&self.chunk_dims).zip(&self.max_per_dim) {
            if m.is_some_and(|m| s >= m) {
                return Err(bad(format!("chunk {scaled:?} outside the maximum extent")));
            }
            offset.push(
                s.checked_mul(c)
                    .ok_or_else(|| bad(format!("chunk {scaled:?} offset overflows")))?,
            );
        }
        Ok(ChunkRecord {
            offset,
            address,
            size,
            filter_mask: mask,
        })
    }

    /// Number of bytes the filtered chunk-size field takes in layout v4 indexes
    /// (one more than needed for an unfiltered chunk, at most 8).
    pub fn v4_size_len(&self) -> usize {
        let log2 = 63 - self.chunk_bytes.max(1).leading_zeros() as usize;
        (1 + (log2 + 8) / 8).min(8)
    }
}

/// Row-major coordinates of linear index `idx` over `extents` (the first extent
/// is not needed: it is the slowest dimension). `None` when `idx` is past the end
/// of a bounded first dimension.
pub fn unravel(mut idx: u64, extents: &[u64]) -> Option<Vec<u64>> {
    let mut out = vec![0u64; extents.len()];
    for (i, &e) in extents.iter().enumerate().skip(1).rev() {
        if e == 0 {
            return None;
        }
        out[i] = idx % e;
        idx /= e;
    }
    if let Some(first) = out.first_mut() {
        *first = idx;
    }
    Some(out)
}

/// Row-major linear index of `coords` over `extents`.
pub fn ravel(coords: &[u64], extents: &[u64]) -> Option<u64> {
    let mut idx = 0u64;
    for (i, (&c, &e)) in coords.iter().zip(extents).enumerate() {
        if i > 0 && c >= e {
            return None;
        }
        idx = if i == 0 {
            c
        } else {
            idx.checked_mul(e)?.checked_add(c)?
        };
    }
    Some(idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ravel_unravel_roundtrip() {
        let ext = [3u64, 4, 5];
        for i in 0..60 {
            let c = unravel(i, &ext).unwrap();
            assert_eq!(ravel(&c, &ext), Some(i));
        }
        assert_eq!(unravel(23, &ext), Some(vec![1, 0, 3]));
        assert_eq!(ravel(&[0, 4, 0], &ext), None);
        assert_eq!(unravel(1, &[2, 0]), None);
    }

    #[test]
    fn v4_size_len_matches_libhdf5() {
        let mut p = ChunkIndexParams {
            kind: super::super::ChunkIndexKind::Implicit,
            address: None,
            chunk_dims: vec![64, 64],
            dataset_dims: vec![100, 70],
            max_dims: vec![Some(100), None],
            element_size: 2,
            filtered: true,
            layout_version: 4,
        };
        let g = Grid::new(&p).unwrap();
        // 8192 bytes: log2 = 13, 1 + (13 + 8) / 8 = 3
        assert_eq!(g.v4_size_len(), 3);
        assert_eq!(g.per_dim, vec![2, 2]);
        assert_eq!(g.max_extents(), vec![2, 2]);
        assert_eq!(g.max_chunks, 4);
        assert_eq!(g.record(&[1, 1], 10, 20, 0).unwrap().offset, vec![64, 64]);
        assert!(g.record(&[2, 0], 10, 20, 0).is_err());
        assert!(g.record(&[0, 5], 10, 20, 0).is_ok());
        p.chunk_dims = vec![0, 1];
        assert!(Grid::new(&p).is_err());
        p.chunk_dims = vec![1 << 20, 1 << 20];
        assert!(Grid::new(&p).is_err());
    }
}
