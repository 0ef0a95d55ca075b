//! Extent arithmetic of unlimited virtual mappings (HDF5 File Format
//! Specification IV.A.2.i; the behaviour of libhdf5's default "last available"
//! view): how many slices of an unlimited hyperslab dimension lie below a
//! clip size, the virtual extent that holds a given number of slices, the
//! `j`-th block of a printf mapping, and the smallest extent every limited
//! virtual selection needs.

use crate::dataspace_selection::{DataspaceSelection, HyperDim};

/// The coordinates of one regular-hyperslab dimension (count or block may be
/// unlimited) that lie below `clip`.
pub fn slices_below(d: &HyperDim, clip: u64) -> u64 {
    if d.start >= clip {
        return 0;
    }
    let span = clip - d.start;
    let block = match d.block {
        None => return span,
        Some(b) => b,
    };
    if block == 0 {
        return 0;
    }
    if block >= d.stride {
        // Touching blocks: one run from start (count may still bound it).
        let total = d.count.map_or(u64::MAX, |n| n.saturating_mul(block));
        return span.min(total);
    }
    let stride = d.stride;
    let mut count = span.div_ceil(stride);
    if let Some(n) = d.count {
        count = count.min(n);
    }
    if count == 0 {
        return 0;
    }
    let full = count.saturating_mul(block);
    let end = stride.saturating_mul(count - 1).saturating_add(block);
    if end > span {
        full - (end - span)
    } else {
        full
    }
}

/// The smallest extent of the unlimited dimension `d` that holds `n` slices
/// (an extent may end inside a block).
pub fn extent_for_slices(d: &HyperDim, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let block = match d.block {
        None => return d.start.saturating_add(n),
        Some(b) => b,
    };
    if block == 0 || block >= d.stride {
        return d.start.saturating_add(n);
    }
    let full = n / block;
    let rem = n - full * block;
    if rem > 0 {
        d.start
            .saturating_add(full.saturating_mul(d.stride))
            .saturating_add(rem)
    } else {
        d.start
            .saturating_add((full - 1).saturating_mul(d.stride))
            .saturating_add(block)
    }
}

/// Block `j` of a regular hyperslab unlimited in dimension `dim`: the same
/// hyperslab with count 1 starting at the `j`-th block. `None` on overflow.
pub fn unlimited_block(dims: &[HyperDim], dim: usize, j: u64) -> Option<Vec<HyperDim>> {
    let mut out = dims.to_vec();
    let d = out.get_mut(dim)?;
    d.start = d.start.checked_add(j.checked_mul(d.stride)?)?;
    d.count = Some(1);
    Some(out)
}

/// Exclusive end of block `j` along the unlimited dimension.
pub fn block_end(d: &HyperDim, j: u64) -> Option<u64> {
    d.start
        .checked_add(j.checked_mul(d.stride)?)?
        .checked_add(d.block?)
}

/// Raise `min` so it holds every limited dimension of `sel` (all and none
/// selections do not count; `skip` is the mapping's unlimited dimension).
pub fn update_min_dims(min: &mut [u64], sel: &DataspaceSelection, skip: Option<usize>) {
    let mut raise = |i: usize, end: u64| {
        if Some(i) != skip {
            if let Some(m) = min.get_mut(i) {
                *m = (*m).max(end);
            }
        }
    };
    match sel {
        DataspaceSelection::None | DataspaceSelection::All => {}
        DataspaceSelection::Regular(dims) => {
            for (i, d) in dims.iter().enumerate() {
                if let (Some(n), Some(b)) = (d.count, d.block) {
                    if n > 0 && b > 0 {
                        let end = d
                            .start
                            .saturating_add(d.stride.saturating_mul(n - 1))
                            .saturating_add(b);
                        raise(i, end);
                    }
                }
            }
        }
        DataspaceSelection::Irregular { rank, blocks } => {
            for b in blocks.chunks_exact((*rank).max(1) * 2) {
                for i in 0..*rank {
                    raise(i, b.get(rank + i).copied().unwrap_or(0).saturating_add(1));
                }
            }
        }
        DataspaceSelection::Points { rank, coords } => {
            for p in coords.chunks_exact((*rank).max(1)) {
                for (i, &x) in p.iter().enumerate() {
                    raise(i, x.saturating_add(1));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hd(start: u64, stride: u64, count: Option<u64>, block: Option<u64>) -> HyperDim {
        HyperDim {
            start,
            stride,
            count,
            block,
        }
    }

    /// Brute force: coordinates of the pattern below `clip`.
    fn brute(d: &HyperDim, clip: u64) -> u64 {
        (0..clip)
            .filter(|&x| {
                if x < d.start {
                    return false;
                }
                let off = x - d.start;
                match d.block {
                    None => true,
                    Some(b) => {
                        let k = off / d.stride.max(1);
                        d.count.is_none_or(|n| k < n) && off % d.stride.max(1) < b
                    }
                }
            })
            .count() as u64
    }

    #[test]
    fn slices_match_brute_force() {
        for d in [
            hd(0, 4, None, Some(1)),
            hd(1, 4, None, Some(1)),
            hd(0, 3, None, Some(3)),
            hd(2, 5, None, Some(2)),
            hd(0, 1, Some(1), None),
            hd(3, 1, Some(1), None),
            hd(0, 5, Some(3), Some(2)),
        ] {
            for clip in 0..40 {
                assert_eq!(slices_below(&d, clip), brute(&d, clip), "{d:?} clip {clip}");
            }
        }
    }

    #[test]
    fn extent_for_slices_is_the_smallest_holding_n() {
        for d in [
            hd(0, 4, None, Some(1)),
            hd(3, 4, None, Some(1)),
            hd(0, 3, None, Some(3)),
            hd(2, 5, None, Some(2)),
            hd(0, 1, Some(1), None),
        ] {
            for n in 0..20 {
                let e = extent_for_slices(&d, n);
                assert_eq!(brute(&d, e), n, "{d:?} n {n}");
                if n > 0 {
                    assert!(brute(&d, e - 1) < n, "{d:?} n {n}");
                }
            }
        }
    }

    #[test]
    fn blocks_and_min_dims() {
        let dims = [hd(0, 3, None, Some(3)), hd(0, 1, Some(1), Some(4))];
        let b2 = unlimited_block(&dims, 0, 2).unwrap();
        assert_eq!(b2[0], hd(6, 3, Some(1), Some(3)));
        assert_eq!(block_end(&dims[0], 2), Some(9));
        assert!(unlimited_block(&dims, 0, u64::MAX).is_none());
        let mut min = vec![0u64; 2];
        update_min_dims(
            &mut min,
            &DataspaceSelection::Regular(dims.to_vec()),
            Some(0),
        );
        assert_eq!(min, vec![0, 4]);
        update_min_dims(
            &mut min,
            &DataspaceSelection::Irregular {
                rank: 2,
                blocks: vec![1, 1, 7, 2],
            },
            None,
        );
        assert_eq!(min, vec![8, 4]);
        update_min_dims(&mut min, &DataspaceSelection::All, None);
        assert_eq!(min, vec![8, 4]);
    }
}
