//! Reading a box of a virtual dataset (HDF5 File Format Specification
//! IV.A.2.i): the box is filled with the fill value, then for every mapping
//! with an open source the virtual and source selections are walked in step
//! (the `i`-th selected virtual element takes the `i`-th selected source
//! element), the source elements that land inside the box are read through
//! the source's own read path — in one read of their bounding box when it is
//! small enough — converted to the virtual datatype and scattered. A box that
//! touches a missing source fails with [`Error::MissingVdsSource`] unless the
//! file's options ask for the fill value.

use super::convert::Conversion;
use super::locate::{record_filled, FilledSource};
use super::resolve::{Piece, Plan, Source};
use crate::cursor::bounded;
use crate::dataset::Dataset;
use crate::dataspace_selection::rows::Placed;
use crate::error::{Error, Result};
use crate::limits;
use crate::selection::Selection;

/// Largest request handled in one pass; bigger ones are split along dimension 0.
const SLAB_BYTES: u64 = 64 << 20;
/// Largest source bounding box read at once; sparser mappings read row by row.
const BBOX_BYTES: u64 = 64 << 20;
/// Most selection rows walked for one request (bad files cannot spin forever).
const MAX_ROWS: u64 = 1 << 27;

/// The requested box of the virtual dataset.
struct Target<'a> {
    start: &'a [u64],
    count: &'a [u64],
}

impl Target<'_> {
    /// Clip the run of `n` elements starting at `vc` (along the last dimension)
    /// to the box: (elements skipped, elements kept), `None` when outside.
    fn clip(&self, vc: &[u64], n: u64) -> Option<(u64, u64)> {
        let Some((&last, outer)) = vc.split_last() else {
            return Some((0, n));
        };
        for ((&x, &s), &c) in outer.iter().zip(self.start).zip(self.count) {
            if x < s || x - s >= c {
                return None;
            }
        }
        let (s, c) = (*self.start.get(outer.len())?, *self.count.get(outer.len())?);
        let lo = last.max(s);
        let hi = last.saturating_add(n).min(s.saturating_add(c));
        (lo < hi).then(|| (lo - last, hi - lo))
    }

    /// True once C-ordered rows starting at `vc` can no longer reach the box.
    fn passed(&self, vc: &[u64]) -> bool {
        match (vc.first(), self.start.first(), self.count.first()) {
            (Some(&v), Some(&s), Some(&c)) => v >= s.saturating_add(c),
            _ => false,
        }
    }

    /// Element index inside the box of coordinates `vc` (inside the box).
    fn index(&self, vc: &[u64]) -> u64 {
        linear(vc, self.start, self.count)
    }
}

/// C-order index of `c - origin` in an array of `shape`.
fn linear(c: &[u64], origin: &[u64], shape: &[u64]) -> u64 {
    c.iter()
        .zip(origin)
        .zip(shape)
        .fold(0u64, |acc, ((&x, &o), &n)| {
            acc.wrapping_mul(n).wrapping_add(x.wrapping_sub(o))
        })
}

/// Read `selection` of the virtual dataset `ds`, resolved as `plan`, into
/// `out` (C order, virtual datatype, file byte order).
pub fn read(ds: &Dataset, plan: &Plan, selection: &Selection, out: &mut [u8]) -> Result<()> {
    let esize = bounded(
        ds.dtype().size(),
        limits::MAX_DECODED,
        "virtual dataset",
        ds.address(),
        "element size",
    )?;
    let dims = &plan.dims;
    let (start, count, need) = selection.resolve_for_buffer(dims, esize, out.len())?;
    if need == 0 {
        return Ok(());
    }
    // Split big requests into slabs along dimension 0 (contiguous in `out`).
    let rows0 = count.first().copied().unwrap_or(1);
    let per_row = need / rows0.max(1);
    if need > SLAB_BYTES && rows0 > 1 {
        let step = (SLAB_BYTES / per_row.max(1)).max(1);
        let mut done = 0u64;
        while done < rows0 {
            let n = step.min(rows0 - done);
            let mut s = start.clone();
            let mut c = count.clone();
            if let (Some(s0), Some(c0)) = (s.first_mut(), c.first_mut()) {
                *s0 += done;
                *c0 = n;
            }
            let a = (done * per_row) as usize;
            let b = ((done + n) * per_row) as usize;
            let part = out
                .get_mut(a..b)
                .ok_or_else(|| Error::InvalidArgument("output buffer too small".into()))?;
            read_box(
                ds,
                plan,
                &Target {
                    start: &s,
                    count: &c,
                },
                esize,
                part,
            )?;
            done += n;
        }
        return Ok(());
    }
    read_box(
        ds,
        plan,
        &Target {
            start: &start,
            count: &count,
        },
        esize,
        out,
    )
}

fn read_box(ds: &Dataset, plan: &Plan, t: &Target<'_>, esize: usize, out: &mut [u8]) -> Result<()> {
    let mut rows = 0u64;
    check_missing(ds, plan, t, &mut rows)?;
    fill(out, ds.fill_value().bytes(), esize);
    for piece in &plan.pieces {
        read_piece(ds, piece, t, esize, out, &mut rows)?;
    }
    Ok(())
}

/// Fail when the box touches a missing source, unless the file's options
/// ask for the fill value (then the source is recorded as filled).
fn check_missing(ds: &Dataset, plan: &Plan, t: &Target<'_>, rows: &mut u64) -> Result<()> {
    for m in &plan.missing {
        let touched = match &m.virtual_select {
            None => true,
            Some(v) => touches(v, t, rows)?,
        };
        if !touched {
            continue;
        }
        if ds.file().virtual_options().fill_missing {
            record_filled(FilledSource {
                dataset: ds.path().to_string(),
                source_file: m.source_file.clone(),
                source_dataset: m.source_dataset.clone(),
                reason: m.reason.clone(),
            });
        } else {
            return Err(Error::MissingVdsSource {
                dataset: ds.path().to_string(),
                source_file: m.source_file.clone(),
                source_dataset: m.source_dataset.clone(),
                reason: m.reason.clone(),
            });
        }
    }
    Ok(())
}

/// True when some element of `v` lies in the box.
fn touches(v: &Placed, t: &Target<'_>, rows: &mut u64) -> Result<bool> {
    let ordered = v.is_c_ordered();
    let mut it = v.rows();
    let mut vc = Vec::new();
    while let Some(n) = it.next_row(&mut vc) {
        *rows += 1;
        if *rows > MAX_ROWS {
            return Err(Error::Limit {
                structure: "virtual dataset",
                offset: 0,
                what: "selection rows walked for one read",
                value: *rows,
                limit: MAX_ROWS,
            });
        }
        if ordered && t.passed(&vc) {
            return Ok(false);
        }
        if t.clip(&vc, n).is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

fn fill(out: &mut [u8], value: Option<&[u8]>, esize: usize) {
    match value {
        Some(v) if v.len() == esize && esize > 0 && v.iter().any(|&b| b != 0) => {
            for e in out.chunks_exact_mut(esize) {
                e.copy_from_slice(v);
            }
        }
        _ => out.fill(0),
    }
}

/// Walk the virtual and source selections of a piece in step, calling `f`
/// with (virtual run start, source run start, length) for each common run.
/// `f` returns false to stop.
fn for_each_pair(
    v: &Placed,
    s: &Placed,
    rows: &mut u64,
    mut f: impl FnMut(&[u64], &[u64], u64) -> Result<bool>,
) -> Result<()> {
    let (mut vi, mut si) = (v.rows(), s.rows());
    let (mut vc, mut sc) = (Vec::new(), Vec::new());
    let (mut vleft, mut sleft) = (0u64, 0u64);
    loop {
        *rows += 1;
        if *rows > MAX_ROWS {
            return Err(Error::Limit {
                structure: "virtual dataset",
                offset: 0,
                what: "selection rows walked for one read",
                value: *rows,
                limit: MAX_ROWS,
            });
        }
        if vleft == 0 {
            match vi.next_row(&mut vc) {
                Some(n) => vleft = n,
                None => return Ok(()),
            }
        }
        if sleft == 0 {
            match si.next_row(&mut sc) {
                Some(n) => sleft = n,
                None => return Ok(()),
            }
        }
        let n = vleft.min(sleft);
        if !f(&vc, &sc, n)? {
            return Ok(());
        }
        vleft -= n;
        sleft -= n;
        if let Some(l) = vc.last_mut() {
            *l = l.saturating_add(n);
        }
        if let Some(l) = sc.last_mut() {
            *l = l.saturating_add(n);
        }
    }
}

fn read_piece(
    ds: &Dataset,
    piece: &Piece,
    t: &Target<'_>,
    esize: usize,
    out: &mut [u8],
    rows: &mut u64,
) -> Result<()> {
    let src = &piece.source;
    if ds.dtype().has_vlen_or_ref() && src.dataset.file().path() != ds.file().path() {
        return Err(Error::unsupported(
            "virtual dataset",
            ds.address(),
            "variable-length or reference data from another file",
        ));
    }
    let conv = Conversion::new(src.dataset.dtype(), ds.dtype())?;
    let ssize = bounded(
        src.dataset.dtype().size(),
        limits::MAX_DECODED,
        "virtual dataset source",
        src.dataset.address(),
        "element size",
    )?;
    let ordered = piece.virtual_select.is_c_ordered();
    // Pass 1: the bounding box of the source elements that land in the box.
    let srank = src.dims.len();
    let (mut lo, mut hi) = (vec![u64::MAX; srank], vec![0u64; srank]);
    let mut any = false;
    for_each_pair(
        &piece.virtual_select,
        &piece.source_select,
        rows,
        |vc, sc, n| {
            if ordered && t.passed(vc) {
                return Ok(false);
            }
            if let Some((skip, keep)) = t.clip(vc, n) {
                any = true;
                for (i, ((&x, l), h)) in sc.iter().zip(lo.iter_mut()).zip(hi.iter_mut()).enumerate()
                {
                    let (a, b) = if i + 1 == srank {
                        let a = x.saturating_add(skip);
                        (a, a.saturating_add(keep))
                    } else {
                        (x, x.saturating_add(1))
                    };
                    *l = (*l).min(a);
                    *h = (*h).max(b);
                }
            }
            Ok(true)
        },
    )?;
    if !any {
        return Ok(());
    }
    let shape: Vec<u64> = hi.iter().zip(&lo).map(|(h, l)| h - l).collect();
    let box_bytes = shape
        .iter()
        .try_fold(ssize as u64, |a, &n| a.checked_mul(n))
        .unwrap_or(u64::MAX);
    let bulk = if box_bytes <= BBOX_BYTES {
        let mut buf = vec![0u8; box_bytes as usize];
        read_source(src, &lo, &shape, &mut buf)?;
        Some(buf)
    } else {
        None
    };
    // Pass 2: convert and scatter.
    let mut row = Vec::new();
    for_each_pair(
        &piece.virtual_select,
        &piece.source_select,
        rows,
        |vc, sc, n| {
            if ordered && t.passed(vc) {
                return Ok(false);
            }
            let Some((skip, keep)) = t.clip(vc, n) else {
                return Ok(true);
            };
            let mut s0 = sc.to_vec();
            if let Some(l) = s0.last_mut() {
                *l += skip;
            }
            let mut v0 = vc.to_vec();
            if let Some(l) = v0.last_mut() {
                *l += skip;
            }
            let keep_us = keep as usize;
            let src_bytes: &[u8] = match &bulk {
                Some(buf) => {
                    let at = (linear(&s0, &lo, &shape) as usize) * ssize;
                    buf.get(at..at + keep_us * ssize).ok_or_else(|| {
                        Error::malformed("virtual dataset", 0, "source run outside its box")
                    })?
                }
                None => {
                    let mut cnt = vec![1u64; srank];
                    if let Some(l) = cnt.last_mut() {
                        *l = keep;
                    }
                    row.clear();
                    row.resize(keep_us * ssize, 0);
                    read_source(src, &s0, &cnt, &mut row)?;
                    &row
                }
            };
            let at = (t.index(&v0) as usize) * esize;
            let dst = out.get_mut(at..at + keep_us * esize).ok_or_else(|| {
                Error::malformed("virtual dataset", 0, "virtual run outside the box")
            })?;
            conv.apply(src_bytes, dst).ok_or_else(|| {
                Error::malformed("virtual dataset", 0, "element conversion size mismatch")
            })?;
            Ok(true)
        },
    )
}

/// Read the box `start .. start + count` of a source, virtual or not.
fn read_source(src: &Source, start: &[u64], count: &[u64], out: &mut [u8]) -> Result<()> {
    let sel = if start.is_empty() {
        Selection::All
    } else {
        Selection::Hyperslab {
            start: start.to_vec(),
            count: count.to_vec(),
        }
    };
    match &src.nested {
        Some(p) => read(&src.dataset, p, &sel, out),
        None => src.dataset.read_raw(&sel, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_and_index() {
        let t = Target {
            start: &[1, 2],
            count: &[2, 3],
        };
        assert_eq!(t.clip(&[1, 0], 10), Some((2, 3)));
        assert_eq!(t.clip(&[2, 3], 1), Some((0, 1)));
        assert_eq!(t.clip(&[0, 2], 3), None);
        assert_eq!(t.clip(&[1, 5], 3), None);
        assert!(t.passed(&[3, 0]));
        assert!(!t.passed(&[2, 9]));
        assert_eq!(t.index(&[2, 4]), 5);
        let scalar = Target {
            start: &[],
            count: &[],
        };
        assert_eq!(scalar.clip(&[], 1), Some((0, 1)));
    }

    #[test]
    fn fill_pattern() {
        let mut b = vec![9u8; 6];
        fill(&mut b, Some(&[1, 2]), 2);
        assert_eq!(b, vec![1, 2, 1, 2, 1, 2]);
        fill(&mut b, None, 2);
        assert_eq!(b, vec![0; 6]);
    }
}
