//! Selections on a dataspace: the whole extent or one hyperslab (start, count; unit
//! stride and block), and the plans that map a selection onto storage pieces.

/// What part of a dataset to read or write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// Every element.
    All,
    /// A box: `start[i] .. start[i] + count[i]` along each dimension.
    Hyperslab {
        /// First index along each dimension.
        start: Vec<u64>,
        /// Number of elements along each dimension.
        count: Vec<u64>,
    },
}

impl Selection {
    /// Number of elements selected in a dataspace of `dims`.
    pub fn num_elements(&self, dims: &[u64]) -> Option<u64> {
        let counts: &[u64] = match self {
            Selection::All => dims,
            Selection::Hyperslab { count, .. } => count,
        };
        counts.iter().try_fold(1u64, |acc, &c| acc.checked_mul(c))
    }

    /// The selection as explicit start/count for a dataspace of `dims`, checked to lie inside it.
    /// Resolve against `dims` for a read of `esize`-byte elements into a
    /// buffer of `out_len` bytes: `(start, count, bytes needed)`, or a typed
    /// error when the selection is outside the shape, its size overflows, or
    /// the buffer's length differs from what it needs.
    pub fn resolve_for_buffer(
        &self,
        dims: &[u64],
        esize: usize,
        out_len: usize,
    ) -> crate::error::Result<(Vec<u64>, Vec<u64>, u64)> {
        use crate::error::Error;
        let (start, count) = self.resolve(dims).ok_or_else(|| {
            Error::InvalidArgument(format!("selection {self:?} outside shape {dims:?}"))
        })?;
        let need = self
            .num_elements(dims)
            .and_then(|n| n.checked_mul(esize as u64))
            .ok_or_else(|| Error::InvalidArgument("selection size overflows".into()))?;
        if out_len as u64 != need {
            return Err(Error::InvalidArgument(format!(
                "output buffer holds {out_len} bytes, selection needs {need}"
            )));
        }
        Ok((start, count, need))
    }

    /// The selection as explicit `(start, count)` for a dataspace of `dims`,
    /// or `None` when it does not fit inside it.
    pub fn resolve(&self, dims: &[u64]) -> Option<(Vec<u64>, Vec<u64>)> {
        match self {
            Selection::All => Some((vec![0; dims.len()], dims.to_vec())),
            Selection::Hyperslab { start, count } => {
                if start.len() != dims.len() || count.len() != dims.len() {
                    return None;
                }
                for ((&s, &c), &d) in start.iter().zip(count).zip(dims) {
                    if s.checked_add(c)? > d {
                        return None;
                    }
                }
                Some((start.clone(), count.clone()))
            }
        }
    }
}

/// Where a C-order array sits in dataset coordinates: its first element's
/// coordinates and its shape.
#[derive(Clone, Copy, Debug)]
pub struct Placement<'a> {
    /// Dataset coordinates (in elements) of the array's first element, one per dimension.
    pub origin: &'a [u64],
    /// Extent of the array in elements, one per dimension (C order: the last varies fastest).
    pub shape: &'a [u64],
}

impl Placement<'_> {
    fn elements(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |a, &s| a.checked_mul(s))
    }
}

/// Chunks (in chunk units) touched by the box `start .. start + count`:
/// `lo .. hi` per dimension. Every count must be non-zero.
pub fn touched_chunks(
    start: &[u64],
    count: &[u64],
    chunk_dims: &[u64],
) -> Option<(Vec<u64>, Vec<u64>)> {
    let mut lo = Vec::with_capacity(start.len());
    let mut hi = Vec::with_capacity(start.len());
    for ((&s, &n), &c) in start.iter().zip(count).zip(chunk_dims) {
        let last = s.checked_add(n.checked_sub(1)?)?;
        lo.push(s.checked_div(c)?);
        hi.push(last.checked_div(c)? + 1);
    }
    Some((lo, hi))
}

/// Call `f` with every coordinate tuple of the box `lo .. hi`, in C order.
pub fn for_each_in_box<E>(
    lo: &[u64],
    hi: &[u64],
    mut f: impl FnMut(&[u64]) -> Result<(), E>,
) -> Result<(), E> {
    if lo.len() != hi.len() || lo.iter().zip(hi).any(|(l, h)| l >= h) {
        return Ok(());
    }
    let mut cur = lo.to_vec();
    loop {
        f(&cur)?;
        let mut d = cur.len();
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            cur[d] += 1;
            if cur[d] < hi[d] {
                break;
            }
            cur[d] = lo[d];
        }
    }
}

/// The intersection of two boxes given as `origin`/`shape`, as absolute `lo .. hi`.
pub fn intersect(a: Placement<'_>, b: Placement<'_>) -> Option<(Vec<u64>, Vec<u64>)> {
    let mut lo = Vec::with_capacity(a.origin.len());
    let mut hi = Vec::with_capacity(a.origin.len());
    for i in 0..a.origin.len() {
        let l = (*a.origin.get(i)?).max(*b.origin.get(i)?);
        let h = a.origin[i]
            .checked_add(*a.shape.get(i)?)?
            .min(b.origin[i].checked_add(*b.shape.get(i)?)?);
        if l >= h {
            return None;
        }
        lo.push(l);
        hi.push(h);
    }
    Some((lo, hi))
}

/// Copy the box `lo .. hi` (absolute coordinates) from the C-order array `src`
/// placed at `sp` into the C-order array `dst` placed at `dp`, `elem` bytes per
/// element. Trailing dimensions that both arrays hold whole are merged into one
/// contiguous run. `None` when the box or a buffer does not fit.
pub fn copy_box(
    src: &[u8],
    sp: Placement<'_>,
    dst: &mut [u8],
    dp: Placement<'_>,
    lo: &[u64],
    hi: &[u64],
    elem: usize,
) -> Option<()> {
    box_runs(
        sp,
        dp,
        lo,
        hi,
        elem,
        src.len(),
        dst.len(),
        &mut |s, d, n| {
            dst.get_mut(d..d + n)?.copy_from_slice(src.get(s..s + n)?);
            Some(())
        },
    )
}

/// Fill the box `lo .. hi` of the array `dst` placed at `dp` with `value`
/// (one element, `value.len()` bytes).
pub fn fill_box(
    dst: &mut [u8],
    dp: Placement<'_>,
    lo: &[u64],
    hi: &[u64],
    value: &[u8],
) -> Option<()> {
    let elem = value.len();
    let zero = value.iter().all(|&b| b == 0);
    box_runs(
        dp,
        dp,
        lo,
        hi,
        elem,
        dst.len(),
        dst.len(),
        &mut |_, d, n| {
            let run = dst.get_mut(d..d + n)?;
            if zero || elem == 0 {
                run.fill(0);
            } else {
                fill_pattern(run, value);
            }
            Some(())
        },
    )
}

/// Fill `run` (a whole number of elements) with the element `value`: one element,
/// then doubling copies, so the cost is a handful of `memcpy` calls per run.
fn fill_pattern(run: &mut [u8], value: &[u8]) {
    let elem = value.len();
    if elem == 1 {
        run.fill(value[0]);
        return;
    }
    let Some(first) = run.get_mut(..elem) else {
        return;
    };
    first.copy_from_slice(value);
    let mut done = elem;
    while done < run.len() {
        let n = done.min(run.len() - done);
        run.copy_within(..n, done);
        done += n;
    }
}

/// Enumerate the contiguous runs of a box copy as (src byte, dst byte, bytes).
#[allow(clippy::too_many_arguments)]
pub fn box_runs<F>(
    sp: Placement<'_>,
    dp: Placement<'_>,
    lo: &[u64],
    hi: &[u64],
    elem: usize,
    src_len: usize,
    dst_len: usize,
    f: &mut F,
) -> Option<()>
where
    F: FnMut(usize, usize, usize) -> Option<()> + ?Sized,
{
    let rank = lo.len();
    if rank == 0 || hi.len() != rank || sp.shape.len() != rank || dp.shape.len() != rank {
        return None;
    }
    if (sp.elements()? as u128) * elem as u128 > src_len as u128
        || (dp.elements()? as u128) * elem as u128 > dst_len as u128
    {
        return None;
    }
    // The box must lie inside both arrays.
    for i in 0..rank {
        for p in [sp, dp] {
            let end = p.origin.get(i)?.checked_add(*p.shape.get(i)?)?;
            if lo[i] < p.origin[i] || hi[i] > end {
                return None;
            }
        }
    }
    let ext: Vec<usize> = lo
        .iter()
        .zip(hi)
        .map(|(l, h)| usize::try_from(h.saturating_sub(*l)).ok())
        .collect::<Option<_>>()?;
    if ext.contains(&0) {
        return Some(());
    }
    // Byte strides and the byte offsets of the box's first element; everything is
    // inside buffers whose sizes were checked above, so no sum below overflows.
    let strides = |p: Placement<'_>| -> Option<Vec<usize>> {
        let mut st = vec![elem; rank];
        for i in (0..rank - 1).rev() {
            st[i] = st[i + 1].checked_mul(usize::try_from(p.shape[i + 1]).ok()?)?;
        }
        Some(st)
    };
    let (ss, ds) = (strides(sp)?, strides(dp)?);
    let first = |p: Placement<'_>, st: &[usize]| -> Option<usize> {
        (0..rank).try_fold(0usize, |acc, i| {
            let rel = usize::try_from(lo[i] - p.origin[i]).ok()?;
            acc.checked_add(rel.checked_mul(st[i])?)
        })
    };
    let (mut s, mut t) = (first(sp, &ss)?, first(dp, &ds)?);
    // Merge trailing dimensions that both arrays and the box span whole.
    let mut d = rank - 1;
    let mut run = ext[d];
    while d > 0 && ext[d] as u64 == sp.shape[d] && ext[d] as u64 == dp.shape[d] {
        d -= 1;
        run = run.checked_mul(ext[d])?;
    }
    let run_bytes = run.checked_mul(elem)?;
    // Odometer over the outer dimensions 0..d, moving both offsets by strides.
    let mut idx = vec![0usize; d];
    loop {
        f(s, t, run_bytes)?;
        let mut k = d;
        loop {
            if k == 0 {
                return Some(());
            }
            k -= 1;
            idx[k] += 1;
            s += ss[k];
            t += ds[k];
            if idx[k] < ext[k] {
                break;
            }
            s -= ss[k] * ext[k];
            t -= ds[k] * ext[k];
            idx[k] = 0;
        }
    }
}

#[cfg(test)]
mod fill_tests {
    use super::fill_pattern;

    #[test]
    fn pattern_fill_equals_elementwise() {
        for elem in 1..=9usize {
            for count in [0usize, 1, 2, 3, 7, 64, 1000] {
                let value: Vec<u8> = (0..elem as u8)
                    .map(|b| b.wrapping_mul(37).wrapping_add(1))
                    .collect();
                let mut run = vec![0u8; elem * count];
                fill_pattern(&mut run, &value);
                let want: Vec<u8> = value.iter().copied().cycle().take(elem * count).collect();
                assert_eq!(run, want, "elem {elem} count {count}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_and_count() {
        let s = Selection::Hyperslab {
            start: vec![1, 2],
            count: vec![2, 3],
        };
        assert_eq!(s.num_elements(&[4, 5]), Some(6));
        assert_eq!(s.resolve(&[4, 5]), Some((vec![1, 2], vec![2, 3])));
        assert_eq!(s.resolve(&[2, 5]), None);
        assert_eq!(Selection::All.resolve(&[3]), Some((vec![0], vec![3])));
    }

    #[test]
    fn touched_and_box_iteration() {
        let (lo, hi) = touched_chunks(&[3, 0], &[6, 4], &[4, 4]).unwrap();
        assert_eq!((lo, hi), (vec![0, 0], vec![3, 1]));
        assert!(touched_chunks(&[0], &[0], &[4]).is_none());
        let mut seen = Vec::new();
        for_each_in_box::<()>(&[0, 1], &[2, 3], |x| {
            seen.push(x.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, vec![vec![0, 1], vec![0, 2], vec![1, 1], vec![1, 2]]);
    }

    #[test]
    fn copy_and_fill_boxes() {
        // 4x4 source at origin (4, 0) holding values 0..16; copy rows 5..7, cols 1..3
        // into a 3x3 destination placed at (5, 0).
        let src: Vec<u8> = (0..16).collect();
        let mut dst = vec![0xffu8; 9];
        let sp = Placement {
            origin: &[4, 0],
            shape: &[4, 4],
        };
        let dp = Placement {
            origin: &[5, 0],
            shape: &[3, 3],
        };
        copy_box(&src, sp, &mut dst, dp, &[5, 1], &[7, 3], 1).unwrap();
        assert_eq!(dst, vec![0xff, 5, 6, 0xff, 9, 10, 0xff, 0xff, 0xff]);
        fill_box(&mut dst, dp, &[7, 0], &[8, 3], &[7]).unwrap();
        assert_eq!(&dst[6..], &[7, 7, 7]);
        // Whole-row boxes merge into one run.
        let mut whole = vec![0u8; 16];
        copy_box(&src, sp, &mut whole, sp, &[4, 0], &[8, 4], 1).unwrap();
        assert_eq!(whole, src);
        // Out-of-range boxes are refused.
        assert!(copy_box(&src, sp, &mut dst, dp, &[0, 0], &[2, 2], 1).is_none());
        let i = intersect(sp, dp).unwrap();
        assert_eq!(i, (vec![5, 0], vec![8, 3]));
    }
}
