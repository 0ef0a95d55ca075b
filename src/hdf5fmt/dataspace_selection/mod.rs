//! Dataspace selections as they are serialized in files (HDF5 File Format
//! Specification, "dataspace selection" encoding, used by the virtual-dataset
//! mapping list of the data layout message IV.A.2.i and by region references):
//! none, all, points (versions 1–2) and hyperslabs (versions 1–3, regular and
//! irregular, 2/4/8-byte fields, unlimited counts and blocks).
//!
//! [`decode`] is pure and bounded: every list it allocates is checked against
//! the bytes that remain first, so a corrupt count is a typed error, not an
//! allocation. [`rows`] turns a decoded selection, placed on an extent, into
//! the runs of elements it selects in libhdf5's iteration order.

pub mod rows;

use crate::cursor::Cursor;
use crate::error::Result;
use crate::limits;

/// Selection type codes (the leading `u32`).
const SEL_NONE: u32 = 0;
const SEL_POINTS: u32 = 1;
const SEL_HYPERSLABS: u32 = 2;
const SEL_ALL: u32 = 3;
/// Hyperslab flag bit 0: the selection is one regular hyperslab.
const FLAG_REGULAR: u8 = 0x01;

/// One dimension of a regular hyperslab. `None` count or block = unlimited
/// (stored as all-ones in the field's width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HyperDim {
    /// Offset of the first selected block along this dimension, in elements.
    pub start: u64,
    /// Distance in elements between the starts of consecutive blocks.
    pub stride: u64,
    /// Number of blocks along this dimension; `None` = unlimited.
    pub count: Option<u64>,
    /// Size of each block in elements; `None` = unlimited.
    pub block: Option<u64>,
}

impl HyperDim {
    /// True when the count or the block is unlimited.
    pub fn is_unlimited(&self) -> bool {
        self.count.is_none() || self.block.is_none()
    }
}

/// A decoded dataspace selection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataspaceSelection {
    /// Nothing selected.
    None,
    /// The whole extent of whatever dataspace the selection is placed on.
    All,
    /// Points in the order they were added; `coords` holds `rank` values per point.
    Points {
        /// Number of dimensions of each point.
        rank: usize,
        /// Point coordinates in elements, `rank` values per point, points in stored order.
        coords: Vec<u64>,
    },
    /// One regular hyperslab (start, stride, count, block per dimension).
    Regular(Vec<HyperDim>),
    /// A union of blocks; `blocks` holds `rank` starts then `rank` inclusive
    /// ends per block.
    Irregular {
        /// Number of dimensions of each block.
        rank: usize,
        /// Per block, `rank` start coordinates then `rank` inclusive end coordinates, in
        /// elements.
        blocks: Vec<u64>,
    },
}

impl DataspaceSelection {
    /// The rank the selection was encoded with (`None` for none/all, which
    /// take the rank of the dataspace they are placed on).
    pub fn rank(&self) -> Option<usize> {
        match self {
            DataspaceSelection::None | DataspaceSelection::All => None,
            DataspaceSelection::Points { rank, .. }
            | DataspaceSelection::Irregular { rank, .. } => Some(*rank),
            DataspaceSelection::Regular(d) => Some(d.len()),
        }
    }

    /// The unlimited dimension of a regular hyperslab, if it has one.
    pub fn unlimited_dim(&self) -> Option<usize> {
        match self {
            DataspaceSelection::Regular(d) => d.iter().position(HyperDim::is_unlimited),
            _ => None,
        }
    }

    /// The regular hyperslab's dimensions, when it is one.
    pub fn regular(&self) -> Option<&[HyperDim]> {
        match self {
            DataspaceSelection::Regular(d) => Some(d),
            _ => None,
        }
    }
}

/// Decode one serialized selection, leaving the cursor just after it.
pub fn decode(c: &mut Cursor<'_>) -> Result<DataspaceSelection> {
    let kind = c.u32()?;
    match kind {
        SEL_NONE | SEL_ALL => {
            let version = c.u32()?;
            if version != 1 {
                return Err(c.malformed(format!("selection version {version}")));
            }
            c.skip(8)?;
            Ok(if kind == SEL_ALL {
                DataspaceSelection::All
            } else {
                DataspaceSelection::None
            })
        }
        SEL_POINTS => decode_points(c),
        SEL_HYPERSLABS => decode_hyperslab(c),
        k => Err(c.malformed(format!("selection type {k}"))),
    }
}

fn check_enc_size(c: &Cursor<'_>, enc: u8) -> Result<usize> {
    match enc {
        2 | 4 | 8 => Ok(usize::from(enc)),
        e => Err(c.malformed(format!("selection field size {e}"))),
    }
}

fn decode_rank(c: &mut Cursor<'_>) -> Result<usize> {
    let rank = c.u32()?;
    if rank == 0 || rank as usize > limits::MAX_RANK {
        return Err(c.malformed(format!("selection rank {rank}")));
    }
    Ok(rank as usize)
}

/// Read `n` groups of `per` values of `enc` bytes each, after checking that the
/// bytes are there (so a corrupt `n` cannot drive the allocation).
fn read_values(c: &mut Cursor<'_>, n: u64, per: usize, enc: usize) -> Result<Vec<u64>> {
    let values = n.checked_mul(per as u64);
    let bytes = values.and_then(|v| v.checked_mul(enc as u64));
    match bytes {
        Some(b) if b <= c.remaining() as u64 => {}
        _ => {
            return Err(crate::error::Error::Truncated {
                structure: c.structure(),
                offset: c.offset(),
                needed: bytes.unwrap_or(u64::MAX),
                available: c.remaining() as u64,
            })
        }
    }
    let count = values.unwrap_or(0) as usize;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        out.push(c.uint(enc)?);
    }
    Ok(out)
}

fn decode_points(c: &mut Cursor<'_>) -> Result<DataspaceSelection> {
    let version = c.u32()?;
    let enc = match version {
        1 => {
            c.skip(8)?;
            4
        }
        2 => {
            let e = c.u8()?;
            check_enc_size(c, e)?
        }
        v => return Err(c.malformed(format!("point selection version {v}"))),
    };
    let rank = decode_rank(c)?;
    let n = c.uint(enc)?;
    let coords = read_values(c, n, rank, enc)?;
    Ok(DataspaceSelection::Points { rank, coords })
}

/// An all-ones field of `enc` bytes means "unlimited".
fn limited(v: u64, enc: usize) -> Option<u64> {
    let all_ones = if enc >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * enc)) - 1
    };
    (v != all_ones).then_some(v)
}

fn decode_hyperslab(c: &mut Cursor<'_>) -> Result<DataspaceSelection> {
    let version = c.u32()?;
    let (flags, enc) = match version {
        1 => {
            c.skip(8)?;
            (0u8, 4usize)
        }
        2 => {
            let f = c.u8()?;
            c.skip(4)?;
            (f, 8)
        }
        3 => {
            let f = c.u8()?;
            let e = c.u8()?;
            (f, check_enc_size(c, e)?)
        }
        v => return Err(c.malformed(format!("hyperslab selection version {v}"))),
    };
    if flags & !FLAG_REGULAR != 0 {
        return Err(c.malformed(format!("hyperslab selection flags {flags:#x}")));
    }
    let rank = decode_rank(c)?;
    if flags & FLAG_REGULAR != 0 {
        let v = read_values(c, 1, 4 * rank, enc)?;
        let dims: Vec<HyperDim> = v
            .chunks_exact(4)
            .filter_map(|q| match *q {
                [start, stride, count, block] => Some(HyperDim {
                    start,
                    stride,
                    count: limited(count, enc),
                    block: limited(block, enc),
                }),
                _ => None,
            })
            .collect();
        check_regular(c, &dims)?;
        return Ok(DataspaceSelection::Regular(dims));
    }
    let n = c.uint(enc)?;
    let blocks = read_values(c, n, 2 * rank, enc)?;
    for b in blocks.chunks_exact(2 * rank) {
        let (start, end) = b.split_at(rank);
        if start.iter().zip(end).any(|(s, e)| e < s) {
            return Err(c.malformed("hyperslab block ends before it starts"));
        }
    }
    Ok(DataspaceSelection::Irregular { rank, blocks })
}

/// The rules libhdf5 applies when a regular hyperslab is selected: at most one
/// unlimited dimension, never both count and block unlimited, and blocks that
/// do not overlap (block ≤ stride whenever more than one block is selected).
fn check_regular(c: &Cursor<'_>, dims: &[HyperDim]) -> Result<()> {
    if dims.iter().filter(|d| d.is_unlimited()).count() > 1 {
        return Err(c.malformed("hyperslab with more than one unlimited dimension"));
    }
    for d in dims {
        match (d.count, d.block) {
            (None, None) => {
                return Err(c.malformed("hyperslab with unlimited count and block"));
            }
            (None, Some(b)) if d.stride == 0 || b > d.stride => {
                return Err(c.malformed("overlapping blocks in an unlimited hyperslab"));
            }
            (Some(n), None) if n > 1 => {
                return Err(c.malformed("several unlimited hyperslab blocks"));
            }
            (Some(n), Some(b)) if n > 1 && (d.stride == 0 || b > d.stride) => {
                return Err(c.malformed("overlapping hyperslab blocks"));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
