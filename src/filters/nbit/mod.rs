//! Filter `nbit` (id 5): libhdf5's n-bit packing, `docs/filters-format.md` §2.5.
//!
//! `cd_values` (from libhdf5's set-local): `[count, nothing-to-do flag, elements,
//! type description…]`, the description being a tree of atomic (class 1: size,
//! order, precision, offset), array (2: total size, base), compound (3: size,
//! member count, then per member its byte offset and description) and no-op
//! (4: size, bytes copied whole) types. The packed chunk is one MSB-first bit
//! stream of each atomic value's significant bits; decoding puts them back and
//! leaves every other bit zero (sign extension is the datatype conversion's job).

pub mod bitstream;

use bitstream::{BitReader, BitWriter};

use crate::error::{Error, Result};
use crate::limits::MAX_DATATYPE_DEPTH;
use crate::ChunkContext;

const NAME: &str = "nbit";

fn err(reason: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, reason)
}

/// Class codes of the type description.
const ATOMIC: u32 = 1;
const ARRAY: u32 = 2;
const COMPOUND: u32 = 3;
const NOOP: u32 = 4;
/// Largest atomic type accepted (HDF5 atomics are at most 16 bytes; this is generous).
const MAX_ATOMIC_SIZE: usize = 256;

/// One byte's share of an atomic value: byte index in the element, bit count,
/// and the shift of those bits inside the byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    byte: usize,
    bits: u32,
    shift: u32,
}

/// A parsed type description.
#[derive(Debug, PartialEq, Eq)]
enum Desc {
    /// Significant bits, most significant byte first.
    Atomic { size: usize, pieces: Vec<Piece> },
    /// `count` copies of `base`, each `stride` bytes.
    Array {
        size: usize,
        stride: usize,
        count: usize,
        base: Box<Desc>,
    },
    /// Members at byte offsets.
    Compound {
        size: usize,
        members: Vec<(usize, Desc)>,
    },
    /// Bytes copied through the stream whole.
    NoOp { size: usize },
}

impl Desc {
    /// Packed bits per element.
    fn packed_bits(&self) -> u64 {
        match self {
            Desc::Atomic { pieces, .. } => pieces.iter().map(|p| u64::from(p.bits)).sum(),
            Desc::Array { count, base, .. } => (*count as u64).saturating_mul(base.packed_bits()),
            Desc::Compound { members, .. } => members
                .iter()
                .fold(0u64, |acc, (_, m)| acc.saturating_add(m.packed_bits())),
            Desc::NoOp { size } => (*size as u64).saturating_mul(8),
        }
    }

    fn size(&self) -> usize {
        match self {
            Desc::Atomic { size, .. }
            | Desc::Array { size, .. }
            | Desc::Compound { size, .. }
            | Desc::NoOp { size } => *size,
        }
    }
}

/// The byte pieces of an atomic value, as libhdf5 walks them.
fn atomic_pieces(size: usize, big_endian: bool, precision: u32, offset: u32) -> Vec<Piece> {
    if precision == 0 {
        return Vec::new();
    }
    let top = ((precision + offset - 1) / 8) as usize;
    let low = (offset / 8) as usize;
    let dlen = size as u32 * 8;
    (low..=top)
        .rev()
        .map(|k| {
            let (bits, shift) = if top == low {
                (precision, offset % 8)
            } else if k == top {
                (8 - (dlen - precision - offset) % 8, 0)
            } else if k == low {
                (8 - offset % 8, offset % 8)
            } else {
                (8, 0)
            };
            let byte = if big_endian { size - 1 - k } else { k };
            Piece { byte, bits, shift }
        })
        .collect()
}

/// Cursor over the cd values of a type description.
struct Params<'a> {
    cd: &'a [u32],
    pos: usize,
}

impl Params<'_> {
    fn next(&mut self) -> Result<u32> {
        let v = *self
            .cd
            .get(self.pos)
            .ok_or_else(|| err("type description runs past cd_values"))?;
        self.pos += 1;
        Ok(v)
    }

    fn peek(&self) -> Result<u32> {
        self.cd
            .get(self.pos)
            .copied()
            .ok_or_else(|| err("type description runs past cd_values"))
    }

    /// Parse the description of a type of class `class` (its parameters follow).
    fn desc(&mut self, class: u32, depth: usize) -> Result<Desc> {
        if depth > MAX_DATATYPE_DEPTH {
            return Err(err("type description nested too deeply"));
        }
        match class {
            ATOMIC => {
                let size = self.next()? as usize;
                let order = self.next()?;
                let precision = self.next()?;
                let offset = self.next()?;
                let bits = size as u64 * 8;
                if size > MAX_ATOMIC_SIZE
                    || u64::from(precision) + u64::from(offset) > bits
                    || order > 1
                {
                    return Err(err(format!(
                        "invalid atomic type: size {size}, order {order}, precision {precision}, offset {offset}"
                    )));
                }
                let pieces = atomic_pieces(size, order == 1, precision, offset);
                Ok(Desc::Atomic { size, pieces })
            }
            ARRAY => {
                let size = self.next()? as usize;
                let base_class = self.next()?;
                if base_class == NOOP {
                    // libhdf5 copies the array's whole size for a no-op base.
                    self.next()?;
                    return Ok(Desc::NoOp { size });
                }
                let base = self.desc(base_class, depth + 1)?;
                let stride = base.size();
                if stride == 0 {
                    return Err(err("array of zero-size elements"));
                }
                Ok(Desc::Array {
                    size,
                    stride,
                    count: size / stride,
                    base: Box::new(base),
                })
            }
            COMPOUND => {
                let size = self.next()? as usize;
                let nmembers = self.next()?;
                let mut members = Vec::new();
                let mut used = 0usize;
                for _ in 0..nmembers {
                    let offset = self.next()? as usize;
                    let member_class = self.next()?;
                    let member_size = self.peek()? as usize;
                    used = used.saturating_add(member_size);
                    if member_size == 0 || used > size || offset.saturating_add(member_size) > size
                    {
                        return Err(err("compound member overflows the compound"));
                    }
                    let member = self.desc(member_class, depth + 1)?;
                    members.push((offset, member));
                }
                Ok(Desc::Compound { size, members })
            }
            NOOP => Ok(Desc::NoOp {
                size: self.next()? as usize,
            }),
            other => Err(err(format!("unknown type class {other}"))),
        }
    }
}

/// The parsed parameters: `None` when the filter is a no-op.
struct Plan {
    elements: usize,
    desc: Desc,
}

fn plan(cd: &[u32]) -> Result<Option<Plan>> {
    let count = *cd.first().ok_or_else(|| err("no cd_values"))?;
    if count as usize != cd.len() {
        return Err(err(format!(
            "cd_values[0] = {count} but {} values stored",
            cd.len()
        )));
    }
    if cd.get(1).copied().unwrap_or(0) != 0 {
        return Ok(None);
    }
    let elements = *cd.get(2).ok_or_else(|| err("element count missing"))? as usize;
    let mut params = Params { cd, pos: 3 };
    let class = params.next()?;
    let desc = params.desc(class, 0)?;
    Ok(Some(Plan { elements, desc }))
}

fn unpack(desc: &Desc, elem: &mut [u8], r: &mut BitReader) -> Option<()> {
    match desc {
        Desc::Atomic { pieces, .. } => {
            for p in pieces {
                let v = r.read(p.bits)? as u8;
                *elem.get_mut(p.byte)? |= v << p.shift;
            }
        }
        Desc::Array {
            stride,
            count,
            base,
            ..
        } => {
            for i in 0..*count {
                unpack(base, elem.get_mut(i * stride..(i + 1) * stride)?, r)?;
            }
        }
        Desc::Compound { members, .. } => {
            for (off, m) in members {
                unpack(m, elem.get_mut(*off..off + m.size())?, r)?;
            }
        }
        Desc::NoOp { size } => {
            for b in elem.get_mut(..*size)? {
                *b = r.read(8)? as u8;
            }
        }
    }
    Some(())
}

fn pack(desc: &Desc, elem: &[u8], w: &mut BitWriter) -> Option<()> {
    match desc {
        Desc::Atomic { pieces, .. } => {
            for p in pieces {
                let v = (elem.get(p.byte)? >> p.shift) as u64 & ((1u64 << p.bits) - 1);
                w.write(v, p.bits);
            }
        }
        Desc::Array {
            stride,
            count,
            base,
            ..
        } => {
            for i in 0..*count {
                pack(base, elem.get(i * stride..(i + 1) * stride)?, w)?;
            }
        }
        Desc::Compound { members, .. } => {
            for (off, m) in members {
                pack(m, elem.get(*off..off + m.size())?, w)?;
            }
        }
        Desc::NoOp { size } => {
            for &b in elem.get(..*size)? {
                w.write(u64::from(b), 8);
            }
        }
    }
    Some(())
}

/// Undo the filter: `elements × size` bytes with only the significant bits set.
pub fn decode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let Some(plan) = plan(cd_values)? else {
        return Ok(input.to_vec());
    };
    let size = plan.desc.size();
    let total = plan
        .elements
        .checked_mul(size)
        .filter(|&n| n <= ctx.max_output)
        .ok_or_else(|| err("decoded size exceeds the chunk bound"))?;
    // Refuse before allocating when the packed data cannot be there.
    let needed = (plan.elements as u64).saturating_mul(plan.desc.packed_bits());
    if needed > (input.len() as u64).saturating_mul(8) {
        return Err(err("packed data truncated"));
    }
    let mut out = vec![0u8; total];
    if size == 0 {
        return Ok(out);
    }
    let mut r = BitReader::new(input);
    for elem in out.chunks_exact_mut(size) {
        unpack(&plan.desc, elem, &mut r).ok_or_else(|| err("packed data truncated"))?;
    }
    Ok(out)
}

/// Apply the filter: pack the significant bits (`floor(bits / 8) + 1` bytes).
pub fn encode(input: &[u8], cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    let Some(plan) = plan(cd_values)? else {
        return Ok(input.to_vec());
    };
    let size = plan.desc.size();
    if plan.elements.checked_mul(size) != Some(input.len()) {
        return Err(err(format!(
            "input of {} bytes is not {} elements of {size} bytes",
            input.len(),
            plan.elements
        )));
    }
    let mut w = BitWriter::with_capacity(input.len() + 1);
    if size > 0 {
        for elem in input.chunks_exact(size) {
            pack(&plan.desc, elem, &mut w)
                .ok_or_else(|| err("type description outside the element"))?;
        }
    }
    Ok(w.finish_with_spare_byte())
}

/// The `cd_values` libhdf5's set-local stores for `elements` atomic values.
pub fn atomic_cd_values(
    elements: u32,
    size: u32,
    big_endian: bool,
    precision: u32,
    offset: u32,
) -> Vec<u32> {
    let noop = u32::from(precision == size * 8 && offset == 0);
    vec![
        8,
        noop,
        elements,
        ATOMIC,
        size,
        u32::from(big_endian),
        precision,
        offset,
    ]
}

#[cfg(test)]
mod tests;
