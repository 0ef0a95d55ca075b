//! A decoded dataspace selection placed on an extent, walked as runs of
//! consecutive elements along the last dimension ("rows"), in the order libhdf5
//! iterates a selection: C order over the selected coordinates for all and
//! hyperslab selections (an irregular hyperslab is the union of its blocks, as
//! libhdf5's span tree), listed order for point selections.
//!
//! Regular hyperslabs stay lazy (one interval rule per dimension), so a huge
//! count costs no memory; irregular ones become a span tree whose construction
//! work is capped.

use std::sync::Arc;

use super::{DataspaceSelection, HyperDim};
use crate::error::{Error, Result};

/// Most work units (span comparisons) spent building one irregular selection.
const MAX_SPAN_WORK: u64 = 1 << 26;

/// One dimension of a regular pattern: intervals
/// `[start + k·stride, start + k·stride + block) ∩ [0, limit)` for `k < count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim1 {
    /// Coordinate of the first interval's first element.
    pub start: u64,
    /// Distance between the starts of consecutive intervals, in elements.
    pub stride: u64,
    /// Number of intervals before clipping to `limit`.
    pub count: u64,
    /// Length of each interval in elements (0 selects nothing).
    pub block: u64,
    /// Exclusive bound on coordinates: intervals are clipped to `[0, limit)` (the extent, or a clip
    /// of an unlimited dimension).
    pub limit: u64,
}

impl Dim1 {
    /// The `k`-th interval, `None` past the last non-empty one.
    fn interval(&self, k: u64) -> Option<(u64, u64)> {
        if k >= self.count || self.block == 0 {
            return None;
        }
        let lo = self.start.checked_add(k.checked_mul(self.stride)?)?;
        if lo >= self.limit {
            return None;
        }
        Some((lo, lo.saturating_add(self.block).min(self.limit)))
    }
}

/// A level of the selection tree: the selected intervals along one dimension
/// and, for each, what is selected in the remaining dimensions.
#[derive(Debug)]
enum Node {
    /// Past the last dimension.
    Leaf,
    /// Every interval of `dim` has the same `child`.
    Regular { dim: Dim1, child: Arc<Node> },
    /// Sorted, disjoint `[lo, hi)` spans, each with its own child.
    Spans(Vec<(u64, u64, Arc<Node>)>),
}

impl Node {
    /// The first interval with index ≥ `k`: (index, lo, hi, child).
    fn interval_from(&self, k: u64) -> Option<(u64, u64, u64, Arc<Node>)> {
        match self {
            Node::Leaf => None,
            Node::Regular { dim, child } => {
                let (lo, hi) = dim.interval(k)?;
                Some((k, lo, hi, child.clone()))
            }
            Node::Spans(v) => {
                let i = usize::try_from(k).ok()?;
                let (lo, hi, child) = v.get(i)?;
                Some((k, *lo, *hi, child.clone()))
            }
        }
    }
}

/// A selection placed on an extent, ready to be walked.
#[derive(Clone, Debug)]
pub struct Placed {
    rank: usize,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Empty,
    Tree(Arc<Node>),
    Points(Arc<[u64]>),
}

impl Placed {
    /// Place `sel` on a dataspace of `dims`. `clip` = (dimension, size) bounds
    /// the unlimited dimension of a regular hyperslab (without it, the extent
    /// does); other dimensions are not clipped.
    pub fn new(sel: &DataspaceSelection, dims: &[u64], clip: Option<(usize, u64)>) -> Result<Self> {
        let rank = dims.len();
        if let Some(r) = sel.rank() {
            if r != rank {
                return Err(Error::malformed(
                    "dataspace selection",
                    0,
                    format!("selection of rank {r} on a dataspace of rank {rank}"),
                ));
            }
        }
        let kind = match sel {
            DataspaceSelection::None => Kind::Empty,
            DataspaceSelection::All => {
                let pattern: Vec<Dim1> = dims
                    .iter()
                    .map(|&d| Dim1 {
                        start: 0,
                        stride: d.max(1),
                        count: 1,
                        block: d,
                        limit: d,
                    })
                    .collect();
                Kind::Tree(regular_chain(&pattern))
            }
            DataspaceSelection::Points { coords, .. } => Kind::Points(coords.clone().into()),
            DataspaceSelection::Regular(hd) => {
                let pattern: Vec<Dim1> = hd
                    .iter()
                    .enumerate()
                    .map(|(i, h)| regular_dim(h, i, dims, clip))
                    .collect();
                Kind::Tree(regular_chain(&pattern))
            }
            DataspaceSelection::Irregular { blocks, .. } => {
                let boxes: Vec<&[u64]> = blocks.chunks_exact(2 * rank.max(1)).collect();
                let mut work = 0u64;
                Kind::Tree(span_tree(&boxes, 0, rank, &mut work)?)
            }
        };
        Ok(Placed { rank, kind })
    }

    /// A plain box `start .. start + count` (C order).
    pub fn boxed(start: &[u64], count: &[u64]) -> Self {
        let pattern: Vec<Dim1> = start
            .iter()
            .zip(count)
            .map(|(&s, &c)| Dim1 {
                start: s,
                stride: c.max(1),
                count: 1,
                block: c,
                limit: u64::MAX,
            })
            .collect();
        Placed {
            rank: start.len(),
            kind: Kind::Tree(regular_chain(&pattern)),
        }
    }

    /// The selection as one box `(start, count)` when it is one: every level
    /// a single interval (or regular intervals that touch), at least one
    /// element. `None` for points, gaps, several spans or nothing selected.
    pub fn as_box(&self) -> Option<(Vec<u64>, Vec<u64>)> {
        let Kind::Tree(root) = &self.kind else {
            return None;
        };
        let (mut start, mut count) = (Vec::with_capacity(self.rank), Vec::with_capacity(self.rank));
        let mut node = root.clone();
        loop {
            let child = match &*node {
                Node::Leaf => break,
                Node::Regular { dim, child } => {
                    let (lo, hi) = dim.interval(0)?;
                    let hi = if dim.count == 1 || dim.interval(1).is_none() {
                        hi
                    } else if dim.block == dim.stride {
                        // touching intervals: one run up to the last (clipped) one
                        let end = dim.start.checked_add(dim.count.checked_mul(dim.block)?)?;
                        end.min(dim.limit)
                    } else {
                        return None;
                    };
                    start.push(lo);
                    count.push(hi - lo);
                    child.clone()
                }
                Node::Spans(v) => {
                    let [(lo, hi, child)] = v.as_slice() else {
                        return None;
                    };
                    start.push(*lo);
                    count.push(hi.checked_sub(*lo)?);
                    child.clone()
                }
            };
            node = child;
        }
        (start.len() == self.rank && count.iter().all(|&c| c > 0)).then_some((start, count))
    }

    /// Number of dimensions the selection is placed on.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// True when rows come in C order (all but point selections), so a walk
    /// may stop once it is past a region of interest.
    pub fn is_c_ordered(&self) -> bool {
        !matches!(self.kind, Kind::Points(_))
    }

    /// Walk the rows of the selection.
    pub fn rows(&self) -> Rows<'_> {
        Rows {
            sel: self,
            frames: Vec::with_capacity(self.rank),
            next_point: 0,
            started: false,
            done: false,
        }
    }
}

fn regular_dim(h: &HyperDim, i: usize, dims: &[u64], clip: Option<(usize, u64)>) -> Dim1 {
    let extent = dims.get(i).copied().unwrap_or(0);
    let limit = match clip {
        Some((d, size)) if d == i => size,
        _ if h.is_unlimited() => extent,
        _ => u64::MAX,
    };
    match (h.count, h.block) {
        // Unlimited block: one block running to the limit.
        (_, None) => Dim1 {
            start: h.start,
            stride: h.stride.max(1),
            count: 1,
            block: u64::MAX,
            limit,
        },
        (count, Some(block)) => Dim1 {
            start: h.start,
            stride: h.stride,
            count: count.unwrap_or(u64::MAX),
            block,
            limit,
        },
    }
}

fn regular_chain(pattern: &[Dim1]) -> Arc<Node> {
    let mut node = Arc::new(Node::Leaf);
    for dim in pattern.iter().rev() {
        node = Arc::new(Node::Regular {
            dim: *dim,
            child: node,
        });
    }
    node
}

/// The span tree of a union of blocks (each `rank` starts then `rank`
/// inclusive ends) from dimension `d` on.
fn span_tree(boxes: &[&[u64]], d: usize, rank: usize, work: &mut u64) -> Result<Arc<Node>> {
    if d >= rank {
        return Ok(Arc::new(Node::Leaf));
    }
    let lo = |b: &[u64]| b.get(d).copied().unwrap_or(0);
    let hi = |b: &[u64]| b.get(rank + d).copied().unwrap_or(0).saturating_add(1);
    let mut cuts: Vec<u64> = boxes.iter().flat_map(|b| [lo(b), hi(b)]).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut spans: Vec<(u64, u64, Arc<Node>)> = Vec::new();
    for w in cuts.windows(2) {
        let [a, b] = *w else { continue };
        *work = work.saturating_add(boxes.len() as u64);
        if *work > MAX_SPAN_WORK {
            return Err(Error::Limit {
                structure: "hyperslab selection",
                offset: 0,
                what: "span-tree work",
                value: *work,
                limit: MAX_SPAN_WORK,
            });
        }
        let covering: Vec<&[u64]> = boxes
            .iter()
            .copied()
            .filter(|x| lo(x) <= a && hi(x) >= b)
            .collect();
        if covering.is_empty() {
            continue;
        }
        let child = span_tree(&covering, d + 1, rank, work)?;
        // Merge with the previous span when adjacent and the same below.
        if let Some(last) = spans.last_mut() {
            if last.1 == a && same_tree(&last.2, &child) {
                last.1 = b;
                continue;
            }
        }
        spans.push((a, b, child));
    }
    Ok(Arc::new(Node::Spans(spans)))
}

fn same_tree(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Leaf, Node::Leaf) => true,
        (Node::Spans(x), Node::Spans(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| p.0 == q.0 && p.1 == q.1 && same_tree(&p.2, &q.2))
        }
        _ => false,
    }
}

/// One level of the walk: the node, the current interval and coordinate.
struct Frame {
    node: Arc<Node>,
    k: u64,
    c: u64,
    hi: u64,
    child: Arc<Node>,
}

/// Iterator over the rows of a [`Placed`] selection.
pub struct Rows<'a> {
    sel: &'a Placed,
    frames: Vec<Frame>,
    next_point: usize,
    started: bool,
    done: bool,
}

impl Rows<'_> {
    /// The next row: its first element's coordinates go into `coords`, the
    /// return value is its length (elements along the last dimension). A rank-0
    /// selection has one row of one element.
    pub fn next_row(&mut self, coords: &mut Vec<u64>) -> Option<u64> {
        if self.done {
            return None;
        }
        coords.clear();
        let rank = self.sel.rank;
        match &self.sel.kind {
            Kind::Empty => {
                self.done = true;
                None
            }
            Kind::Points(p) => {
                let r = rank.max(1);
                let start = self.next_point.checked_mul(r)?;
                let pt = p.get(start..start.checked_add(r)?);
                match pt {
                    Some(pt) => {
                        coords.extend_from_slice(if rank == 0 { &[] } else { pt });
                        self.next_point += 1;
                        Some(1)
                    }
                    None => {
                        self.done = true;
                        None
                    }
                }
            }
            Kind::Tree(root) => {
                if rank == 0 {
                    self.done = true;
                    return Some(1);
                }
                let ok = if self.started {
                    self.advance()
                } else {
                    self.started = true;
                    self.descend(0, root.clone())
                };
                if !ok {
                    self.done = true;
                    return None;
                }
                coords.extend(self.frames.iter().map(|f| f.c));
                self.frames.last().map(|f| f.hi - f.c)
            }
        }
    }

    /// Fill frames `d..rank` with the first interval of each level.
    fn descend(&mut self, d: usize, mut node: Arc<Node>) -> bool {
        self.frames.truncate(d);
        for _ in d..self.sel.rank {
            let Some((k, lo, hi, child)) = node.interval_from(0) else {
                return false;
            };
            self.frames.push(Frame {
                node: node.clone(),
                k,
                c: lo,
                hi,
                child: child.clone(),
            });
            node = child;
        }
        true
    }

    fn advance(&mut self) -> bool {
        let rank = self.sel.rank;
        let mut d = rank - 1;
        loop {
            let Some(f) = self.frames.get_mut(d) else {
                return false;
            };
            let stepped = if d + 1 == rank {
                false
            } else {
                f.c += 1;
                f.c < f.hi
            };
            if !stepped {
                match f.node.interval_from(f.k + 1) {
                    Some((k, lo, hi, child)) => {
                        f.k = k;
                        f.c = lo;
                        f.hi = hi;
                        f.child = child;
                    }
                    None => {
                        if d == 0 {
                            return false;
                        }
                        d -= 1;
                        continue;
                    }
                }
            }
            if d + 1 == rank {
                return true;
            }
            let child = f.child.clone();
            return self.descend(d + 1, child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_rows(p: &Placed) -> Vec<(Vec<u64>, u64)> {
        let mut out = Vec::new();
        let mut it = p.rows();
        let mut c = Vec::new();
        while let Some(n) = it.next_row(&mut c) {
            out.push((c.clone(), n));
            assert!(out.len() < 10_000);
        }
        out
    }

    fn hd(start: u64, stride: u64, count: Option<u64>, block: Option<u64>) -> HyperDim {
        HyperDim {
            start,
            stride,
            count,
            block,
        }
    }

    #[test]
    fn all_and_box() {
        let p = Placed::new(&DataspaceSelection::All, &[2, 3], None).unwrap();
        assert_eq!(all_rows(&p), vec![(vec![0, 0], 3), (vec![1, 0], 3)]);
        let p = Placed::boxed(&[1, 2], &[2, 1]);
        assert_eq!(all_rows(&p), vec![(vec![1, 2], 1), (vec![2, 2], 1)]);
        let p = Placed::new(&DataspaceSelection::All, &[], None).unwrap();
        assert_eq!(all_rows(&p), vec![(vec![], 1)]);
        let p = Placed::new(&DataspaceSelection::None, &[4], None).unwrap();
        assert!(all_rows(&p).is_empty());
        let p = Placed::new(&DataspaceSelection::All, &[0, 3], None).unwrap();
        assert!(all_rows(&p).is_empty());
    }

    #[test]
    fn regular_with_strides_and_unlimited_clip() {
        // rows 0..2 of every 3rd plane, 2 columns starting at 1, dims (∞, 2, 4)
        let sel = DataspaceSelection::Regular(vec![
            hd(0, 3, None, Some(1)),
            hd(0, 1, Some(1), Some(2)),
            hd(1, 1, Some(1), Some(2)),
        ]);
        let p = Placed::new(&sel, &[7, 2, 4], None).unwrap();
        let rows = all_rows(&p);
        assert_eq!(
            rows,
            vec![
                (vec![0, 0, 1], 2),
                (vec![0, 1, 1], 2),
                (vec![3, 0, 1], 2),
                (vec![3, 1, 1], 2),
                (vec![6, 0, 1], 2),
                (vec![6, 1, 1], 2),
            ]
        );
        let p = Placed::new(&sel, &[7, 2, 4], Some((0, 4))).unwrap();
        assert_eq!(all_rows(&p).len(), 4);
        // Unlimited block clipped to 3.
        let sel = DataspaceSelection::Regular(vec![hd(1, 1, Some(1), None)]);
        let p = Placed::new(&sel, &[100], Some((0, 3))).unwrap();
        assert_eq!(all_rows(&p), vec![(vec![1], 2)]);
        // Strided last dimension gives one row per block.
        let sel = DataspaceSelection::Regular(vec![hd(0, 4, Some(3), Some(2))]);
        let p = Placed::new(&sel, &[12], None).unwrap();
        assert_eq!(all_rows(&p), vec![(vec![0], 2), (vec![4], 2), (vec![8], 2)]);
    }

    #[test]
    fn as_box_only_for_one_box() {
        let b = |sel: &DataspaceSelection, dims: &[u64], clip| {
            Placed::new(sel, dims, clip).unwrap().as_box()
        };
        let all = DataspaceSelection::All;
        assert_eq!(b(&all, &[4, 6], None), Some((vec![0, 0], vec![4, 6])));
        assert_eq!(b(&all, &[], None), Some((vec![], vec![])));
        assert_eq!(b(&all, &[0, 6], None), None);
        let sel = DataspaceSelection::Regular(vec![
            hd(2, 1, Some(1), Some(3)),
            hd(0, 1, Some(1), Some(6)),
        ]);
        assert_eq!(b(&sel, &[10, 6], None), Some((vec![2, 0], vec![3, 6])));
        // touching blocks are one run; gaps are not a box
        let touching = DataspaceSelection::Regular(vec![hd(0, 2, Some(3), Some(2))]);
        assert_eq!(b(&touching, &[12], None), Some((vec![0], vec![6])));
        let gaps = DataspaceSelection::Regular(vec![hd(0, 4, Some(3), Some(2))]);
        assert_eq!(b(&gaps, &[12], None), None);
        let unlimited = DataspaceSelection::Regular(vec![hd(1, 1, Some(1), None)]);
        assert_eq!(
            b(&unlimited, &[100], Some((0, 3))),
            Some((vec![1], vec![2]))
        );
        let one = DataspaceSelection::Irregular {
            rank: 2,
            blocks: vec![1, 1, 2, 3],
        };
        assert_eq!(b(&one, &[4, 4], None), Some((vec![1, 1], vec![2, 3])));
        let two = DataspaceSelection::Irregular {
            rank: 2,
            blocks: vec![0, 0, 1, 1, 1, 1, 2, 3],
        };
        assert_eq!(b(&two, &[4, 4], None), None);
    }

    #[test]
    fn irregular_union_in_c_order() {
        // Two overlapping 2-D boxes: rows 0..2 cols 0..2, and rows 1..3 cols 1..4.
        let sel = DataspaceSelection::Irregular {
            rank: 2,
            blocks: vec![0, 0, 1, 1, 1, 1, 2, 3],
        };
        let p = Placed::new(&sel, &[4, 4], None).unwrap();
        assert_eq!(
            all_rows(&p),
            vec![(vec![0, 0], 2), (vec![1, 0], 4), (vec![2, 1], 3)]
        );
        // Boxes listed out of order come back sorted.
        let sel = DataspaceSelection::Irregular {
            rank: 1,
            blocks: vec![5, 6, 0, 1],
        };
        let p = Placed::new(&sel, &[8], None).unwrap();
        assert_eq!(all_rows(&p), vec![(vec![0], 2), (vec![5], 2)]);
    }

    #[test]
    fn points_in_listed_order_and_rank_mismatch() {
        let sel = DataspaceSelection::Points {
            rank: 2,
            coords: vec![3, 1, 0, 2],
        };
        let p = Placed::new(&sel, &[4, 4], None).unwrap();
        assert_eq!(all_rows(&p), vec![(vec![3, 1], 1), (vec![0, 2], 1)]);
        assert!(Placed::new(&sel, &[4], None).is_err());
    }
}
