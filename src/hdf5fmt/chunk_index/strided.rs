//! Stepped hyperslabs in the chunked read path: which chunks a selection
//! `start + k * step` touches (a chunk holding none of its elements is never
//! decoded), where it meets each one, and the gather of those elements from
//! the decoded chunk straight into the dense output (C order over the
//! selection), so every touched chunk is decoded once whatever the steps.

use std::mem::MaybeUninit;

use crate::error::{Error, Result};
use crate::Hyperslab;

use super::out_buf::{copy_run, write_slice, OutBuf};

/// A validated stepped selection: along each dimension the indices
/// `start + k * step` for `k in 0..count` (every count and step at least 1,
/// every index inside the dataspace).
#[derive(Clone, Debug)]
pub(super) struct Strided {
    pub(super) start: Vec<u64>,
    pub(super) count: Vec<u64>,
    pub(super) step: Vec<u64>,
}

/// Where the selection meets one chunk along one dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Span {
    /// Index inside the chunk of the first selected element.
    pub(super) first: u64,
    /// Selected elements inside the chunk (at least 1).
    pub(super) n: u64,
    /// Position of the first of them in the output (its `k`).
    pub(super) k0: u64,
}

fn outside(what: String) -> Error {
    Error::InvalidArgument(format!("strided selection {what}"))
}

impl Strided {
    /// Check `h` against `dims`: matching ranks, steps and counts at least 1,
    /// the last index of each dimension inside it.
    pub(super) fn new(h: &Hyperslab, dims: &[u64]) -> Result<Self> {
        let rank = dims.len();
        if h.start.len() != rank || h.count.len() != rank || h.step.len() != rank {
            return Err(outside(format!("of rank {} on rank {rank}", h.start.len())));
        }
        for (d, &extent) in dims.iter().enumerate() {
            let (s, c, st) = (h.start[d], h.count[d], h.step[d]);
            if c == 0 || st == 0 {
                return Err(outside(format!("count {c}, step {st} along dimension {d}")));
            }
            let last = (c - 1).checked_mul(st).and_then(|x| x.checked_add(s));
            if last.is_none_or(|l| l >= extent) {
                return Err(outside(format!(
                    "start {s}, count {c}, step {st} past extent {extent}"
                )));
            }
        }
        Ok(Strided {
            start: h.start.clone(),
            count: h.count.clone(),
            step: h.step.clone(),
        })
    }

    /// Where the selection meets chunk `ci` (edge `c`) along dimension `d`,
    /// or `None` when that chunk holds none of its indices there.
    pub(super) fn span(&self, d: usize, ci: u64, c: u64) -> Option<Span> {
        let (s, count, st) = (*self.start.get(d)?, *self.count.get(d)?, *self.step.get(d)?);
        let lo = ci.checked_mul(c)?;
        let hi = lo.checked_add(c)?;
        let k0 = if lo <= s { 0 } else { (lo - s).div_ceil(st) };
        if k0 >= count {
            return None;
        }
        // Inside the dataspace (checked by `new`), so no overflow.
        let x0 = s + k0 * st;
        if x0 >= hi {
            return None;
        }
        let k1 = count.min((hi - s).div_ceil(st));
        Some(Span {
            first: x0 - lo,
            n: k1 - k0,
            k0,
        })
    }

    /// The first chunk at or after `ci` along dimension `d` that holds a
    /// selected index.
    fn next_touched(&self, d: usize, ci: u64, c: u64) -> Option<u64> {
        let (s, count, st) = (self.start[d], self.count[d], self.step[d]);
        let lo = ci.checked_mul(c)?;
        let k0 = if lo <= s { 0 } else { (lo - s).div_ceil(st) };
        (k0 < count).then(|| (s + k0 * st) / c)
    }

    /// Number of chunks the selection touches (`None` on overflow): along
    /// each dimension every chunk between the first and the last when the
    /// step is below the chunk edge, one per selected index otherwise.
    pub(super) fn touched(&self, chunk_dims: &[u64]) -> Option<u64> {
        (0..self.start.len()).try_fold(1u64, |a, d| {
            let (s, count, st, c) = (self.start[d], self.count[d], self.step[d], chunk_dims[d]);
            let n = if st >= c {
                count
            } else {
                (s + (count - 1) * st) / c - s / c + 1
            };
            a.checked_mul(n)
        })
    }

    /// True when the chunk at `scaled` (chunk units) holds a selected element.
    pub(super) fn holds(&self, scaled: &[u64], chunk_dims: &[u64]) -> bool {
        scaled.len() == self.start.len()
            && scaled
                .iter()
                .zip(chunk_dims)
                .enumerate()
                .all(|(d, (&ci, &c))| self.span(d, ci, c).is_some())
    }

    /// Call `f` with the position (chunk units) of every touched chunk, in C
    /// order; chunks holding no selected element are skipped without being
    /// visited.
    pub(super) fn for_each_touched(
        &self,
        chunk_dims: &[u64],
        mut f: impl FnMut(&[u64]) -> Result<()>,
    ) -> Result<()> {
        let rank = self.start.len();
        let first: Option<Vec<u64>> = (0..rank)
            .map(|d| self.next_touched(d, 0, *chunk_dims.get(d)?))
            .collect();
        let Some(mut cur) = first else {
            return Ok(());
        };
        loop {
            f(&cur)?;
            let mut d = rank;
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                let next = cur[d]
                    .checked_add(1)
                    .and_then(|n| self.next_touched(d, n, chunk_dims[d]));
                if let Some(n) = next {
                    cur[d] = n;
                    break;
                }
                cur[d] = self.next_touched(d, 0, chunk_dims[d]).unwrap_or(0);
            }
        }
    }
}

fn bad_gather() -> Error {
    Error::malformed("chunked read", 0, "strided gather outside its buffers")
}

/// Byte strides of a C-order array of `shape`, `elem` bytes per element,
/// and its size in bytes.
fn strides(shape: &[u64], elem: usize) -> Option<(Vec<usize>, usize)> {
    let mut st = vec![0usize; shape.len()];
    let mut acc = elem;
    for (s, &n) in st.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.checked_mul(usize::try_from(n).ok()?)?;
    }
    Some((st, acc))
}

/// Copy `dst.len() / E` elements, `sstep` bytes apart in `src` from `so`.
#[inline(always)]
fn gather_row<const E: usize>(
    dst: &mut [MaybeUninit<u8>],
    src: &[u8],
    so: usize,
    sstep: usize,
) -> Option<()> {
    let mut s = so;
    for d in dst.chunks_exact_mut(E) {
        let v: &[u8; E] = src.get(s..s.checked_add(E)?)?.try_into().ok()?;
        write_slice(d, v);
        s = s.wrapping_add(sstep);
    }
    Some(())
}

/// [`gather_row`] for any element size.
fn gather_row_any(
    dst: &mut [MaybeUninit<u8>],
    src: &[u8],
    so: usize,
    sstep: usize,
    elem: usize,
) -> Option<()> {
    let mut s = so;
    for d in dst.chunks_exact_mut(elem) {
        write_slice(d, src.get(s..s.checked_add(elem)?)?);
        s = s.wrapping_add(sstep);
    }
    Some(())
}

impl OutBuf {
    /// Gather the selected elements of the decoded chunk `chunk` (C order,
    /// `chunk_dims`) into this buffer, the dense C-order array of shape
    /// `sel.count`: `spans` says where the selection meets the chunk along
    /// each dimension. Chunks write disjoint parts of the output (each
    /// selected element lies in exactly one chunk).
    pub(super) fn gather(
        &self,
        chunk: &[u8],
        chunk_dims: &[u64],
        sel: &Strided,
        spans: &[Span],
        elem: usize,
    ) -> Result<()> {
        let rank = spans.len();
        let (cs, csize) = strides(chunk_dims, elem).ok_or_else(bad_gather)?;
        let (ds, dsize) = strides(&sel.count, elem).ok_or_else(bad_gather)?;
        if rank == 0 || chunk.len() < csize || dsize != self.len || sel.step.len() != rank {
            return Err(bad_gather());
        }
        // First element and the last one's end on both sides, checked once;
        // every row below lies between them.
        let mut so = 0usize;
        let mut dof = 0usize;
        let mut s_end = elem;
        let mut d_end = elem;
        let mut sstep = vec![0usize; rank];
        for d in 0..rank {
            let sp = spans[d];
            let first = usize::try_from(sp.first).map_err(|_| bad_gather())?;
            let k0 = usize::try_from(sp.k0).map_err(|_| bad_gather())?;
            let n1 = usize::try_from(sp.n - 1).map_err(|_| bad_gather())?;
            let st = usize::try_from(sel.step[d]).map_err(|_| bad_gather())?;
            sstep[d] = st.checked_mul(cs[d]).ok_or_else(bad_gather)?;
            so = first
                .checked_mul(cs[d])
                .and_then(|x| x.checked_add(so))
                .ok_or_else(bad_gather)?;
            dof = k0
                .checked_mul(ds[d])
                .and_then(|x| x.checked_add(dof))
                .ok_or_else(bad_gather)?;
            s_end = n1
                .checked_mul(sstep[d])
                .and_then(|x| x.checked_add(s_end))
                .ok_or_else(bad_gather)?;
            d_end = n1
                .checked_mul(ds[d])
                .and_then(|x| x.checked_add(d_end))
                .ok_or_else(bad_gather)?;
        }
        if so.checked_add(s_end).is_none_or(|e| e > csize)
            || dof.checked_add(d_end).is_none_or(|e| e > self.len)
        {
            return Err(bad_gather());
        }
        let last = rank - 1;
        let n_last = spans[last].n as usize;
        let row = n_last * elem;
        let step_last = sstep[last];
        let mut idx = vec![0u64; last];
        let (mut s, mut t) = (so, dof);
        loop {
            // SAFETY: `t + row <= len` (the checks above bound every row);
            // the row belongs to this chunk's elements only (see above), so
            // no other reference to these bytes exists while it is written.
            // `MaybeUninit<u8>` has no validity requirement.
            let dst = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(t), row) };
            let done = if step_last == elem {
                chunk.get(s..s + row).is_some_and(|r| copy_run(dst, r))
            } else {
                match elem {
                    1 => gather_row::<1>(dst, chunk, s, step_last),
                    2 => gather_row::<2>(dst, chunk, s, step_last),
                    4 => gather_row::<4>(dst, chunk, s, step_last),
                    8 => gather_row::<8>(dst, chunk, s, step_last),
                    _ => gather_row_any(dst, chunk, s, step_last, elem),
                }
                .is_some()
            };
            if !done {
                return Err(bad_gather());
            }
            self.add_written(row);
            let mut d = last;
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                idx[d] += 1;
                s += sstep[d];
                t += ds[d];
                if idx[d] < spans[d].n {
                    break;
                }
                s -= sstep[d] * spans[d].n as usize;
                t -= ds[d] * spans[d].n as usize;
                idx[d] = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(start: &[u64], count: &[u64], step: &[u64], dims: &[u64]) -> Strided {
        let h = Hyperslab {
            start: start.to_vec(),
            count: count.to_vec(),
            step: step.to_vec(),
            indexed: vec![false; start.len()],
        };
        Strided::new(&h, dims).unwrap()
    }

    /// Every chunk the enumeration visits holds a selected index, every
    /// selected index lies in a visited chunk, and the spans add up to the
    /// counts, for steps below, at and above the chunk edge.
    #[test]
    fn touched_chunks_and_spans_cover_the_selection() {
        for (start, count, step, c, dim) in [
            (0u64, 10u64, 3u64, 4u64, 30u64),
            (1, 7, 4, 4, 30),
            (2, 4, 9, 4, 30),
            (5, 1, 1, 4, 30),
            (3, 9, 1, 5, 12),
            (0, 3, 13, 5, 30),
        ] {
            let s = sel(&[start], &[count], &[step], &[dim]);
            let mut seen = Vec::new();
            s.for_each_touched(&[c], |x| {
                seen.push(x[0]);
                Ok(())
            })
            .unwrap();
            let want: Vec<u64> = {
                let mut v: Vec<u64> = (0..count).map(|k| (start + k * step) / c).collect();
                v.dedup();
                v
            };
            assert_eq!(seen, want, "{start} {count} {step} {c}");
            assert_eq!(s.touched(&[c]), Some(want.len() as u64));
            let mut k = 0;
            for ci in 0..dim.div_ceil(c) {
                match s.span(0, ci, c) {
                    Some(sp) => {
                        assert!(want.contains(&ci));
                        assert_eq!(sp.k0, k);
                        assert_eq!(ci * c + sp.first, start + k * step);
                        k += sp.n;
                    }
                    None => assert!(!want.contains(&ci)),
                }
            }
            assert_eq!(k, count);
        }
    }

    #[test]
    fn out_of_range_selections_are_refused() {
        let h = |start: u64, count: u64, step: u64| Hyperslab {
            start: vec![start],
            count: vec![count],
            step: vec![step],
            indexed: vec![false],
        };
        assert!(Strided::new(&h(0, 5, 2), &[9]).is_ok());
        assert!(Strided::new(&h(0, 5, 2), &[8]).is_err());
        assert!(Strided::new(&h(0, 0, 2), &[8]).is_err());
        assert!(Strided::new(&h(0, 2, 0), &[8]).is_err());
        assert!(Strided::new(&h(1, 2, u64::MAX), &[8]).is_err());
        assert!(Strided::new(&h(0, 2, 1), &[8, 8]).is_err());
    }
}
