//! The B2ND metalayer and block order (`shared/spec/filters.md` §3.5): parse
//! and write the `b2nd` (and legacy `caterva`) metalayer, move items between
//! the padded block order of a B2ND chunk and C order, and choose the block
//! shape the HDF5 filter uses (§3.5.1).

use crate::error::{Error, Result};

/// Highest rank C-Blosc2 3.x supports (`B2ND_MAX_DIM`).
pub const MAX_DIM: usize = 16;

fn bad(why: impl std::fmt::Display) -> Error {
    Error::filter(0, "blosc2", format!("b2nd metalayer: {why}"))
}

/// The geometry stored in a `b2nd` metalayer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    pub shape: Vec<u64>,
    pub chunkshape: Vec<usize>,
    pub blockshape: Vec<usize>,
}

struct Reader<'a> {
    b: &'a [u8],
    p: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8> {
        let v = *self.b.get(self.p).ok_or_else(|| bad("truncated"))?;
        self.p += 1;
        Ok(v)
    }
    fn int(&mut self) -> Result<i64> {
        let m = self.byte()?;
        let n = match m {
            0x00..=0x7f => return Ok(i64::from(m)),
            0xD0 | 0xCC => 1,
            0xD1 | 0xCD => 2,
            0xD2 | 0xCE => 4,
            0xD3 | 0xCF => 8,
            _ => return Err(bad(format!("unexpected marker {m:#04x}"))),
        };
        let s = self
            .b
            .get(self.p..self.p + n)
            .ok_or_else(|| bad("truncated"))?;
        self.p += n;
        let u = s.iter().fold(0u64, |a, &x| a << 8 | u64::from(x));
        Ok(if m >= 0xD0 {
            // signed: sign-extend from n bytes
            let shift = 64 - 8 * n as u32;
            ((u << shift) as i64) >> shift
        } else {
            u as i64
        })
    }
    fn array(&mut self, rank: usize) -> Result<Vec<i64>> {
        let m = self.byte()?;
        if !(0x90..=0x9f).contains(&m) || usize::from(m - 0x90) != rank {
            return Err(bad("array length differs from the rank"));
        }
        (0..rank).map(|_| self.int()).collect()
    }
}

impl Meta {
    /// Parse a `b2nd` or `caterva` metalayer.
    pub fn parse(content: &[u8]) -> Result<Meta> {
        let mut r = Reader { b: content, p: 0 };
        let head = r.byte()?;
        if head != 0x97 && head != 0x95 {
            return Err(bad("not a fixarray of 5 or 7"));
        }
        let _version = r.byte()?;
        let rank = r.int()?;
        let rank = usize::try_from(rank)
            .ok()
            .filter(|&r| (1..=MAX_DIM).contains(&r))
            .ok_or_else(|| bad(format!("rank {rank} out of range")))?;
        let shape = r.array(rank)?;
        let chunkshape = r.array(rank)?;
        let blockshape = r.array(rank)?;
        let pos = |v: Vec<i64>| -> Result<Vec<usize>> {
            v.into_iter()
                .map(|x| {
                    usize::try_from(x)
                        .ok()
                        .filter(|&x| x > 0)
                        .ok_or_else(|| bad("non-positive extent"))
                })
                .collect()
        };
        let shape = shape
            .into_iter()
            .map(|x| u64::try_from(x).map_err(|_| bad("negative shape")))
            .collect::<Result<Vec<u64>>>()?;
        Ok(Meta {
            shape,
            chunkshape: pos(chunkshape)?,
            blockshape: pos(blockshape)?,
        })
    }

    /// Items in the padded block-ordered chunk.
    pub fn padded_items(&self) -> Option<usize> {
        self.chunkshape
            .iter()
            .zip(&self.blockshape)
            .try_fold(1usize, |acc, (&c, &b)| {
                acc.checked_mul(c.div_ceil(b).checked_mul(b)?)
            })
    }

    /// Items in the chunk.
    pub fn chunk_items(&self) -> Option<usize> {
        self.chunkshape
            .iter()
            .try_fold(1usize, |a, &c| a.checked_mul(c))
    }

    /// Is the padded block order the same as C order of the chunk (no reordering)?
    pub fn is_c_order(&self) -> bool {
        let n = self.chunkshape.len();
        (0..n).any(|k| {
            self.blockshape[..k].iter().all(|&b| b == 1)
                && self.chunkshape[k] % self.blockshape[k] == 0
                && self.blockshape[k + 1..] == self.chunkshape[k + 1..]
        })
    }
}

/// Write a `b2nd` metalayer as the HDF5 filter does (dtype `|V<typesize>`).
pub fn write_meta(chunk: &[usize], block: &[usize], typesize: usize) -> Vec<u8> {
    let rank = chunk.len();
    let mut m = vec![0x97, 0x00, rank as u8, 0x90 + rank as u8];
    for &c in chunk {
        m.push(0xD3);
        m.extend_from_slice(&(c as i64).to_be_bytes());
    }
    m.push(0x90 + rank as u8);
    for &c in chunk {
        m.push(0xD2);
        m.extend_from_slice(&(c as i32).to_be_bytes());
    }
    m.push(0x90 + rank as u8);
    for &b in block {
        m.push(0xD2);
        m.extend_from_slice(&(b as i32).to_be_bytes());
    }
    m.push(0x00);
    let dtype = format!("|V{typesize}");
    m.push(0xDB);
    m.extend_from_slice(&(dtype.len() as u32).to_be_bytes());
    m.extend_from_slice(dtype.as_bytes());
    m
}

/// Copy between padded block order and C order. `to_c = true`: `blocked` →
/// `c`; else `c` → `blocked` (padding written as zero). Lengths are checked.
pub fn reorder(
    meta: &Meta,
    typesize: usize,
    blocked: &mut [u8],
    c: &mut [u8],
    to_c: bool,
) -> Result<()> {
    let rank = meta.chunkshape.len();
    if rank == 0 || meta.blockshape.len() != rank {
        return Err(bad("rank mismatch"));
    }
    let padded = meta.padded_items().ok_or_else(|| bad("size overflow"))?;
    let items = meta.chunk_items().ok_or_else(|| bad("size overflow"))?;
    if padded.checked_mul(typesize) != Some(blocked.len())
        || items.checked_mul(typesize) != Some(c.len())
    {
        return Err(bad("buffer sizes do not match the block geometry"));
    }
    if !to_c {
        blocked.fill(0);
    }
    let cs = &meta.chunkshape;
    let bsh = &meta.blockshape;
    let grid: Vec<usize> = cs.iter().zip(bsh).map(|(&c, &b)| c.div_ceil(b)).collect();
    let block_items: usize = bsh.iter().product();
    // C-order strides of the chunk, in items.
    let mut cstride = vec![1usize; rank];
    for i in (0..rank - 1).rev() {
        cstride[i] = cstride[i + 1] * cs[i + 1];
    }
    let last = rank - 1;
    let row = bsh[last];
    let nblocks: usize = grid.iter().product();
    let mut gidx = vec![0usize; rank];
    let mut bidx = vec![0usize; rank];
    for blk in 0..nblocks {
        let base_blocked = blk * block_items;
        // Walk the rows of this block (all axes but the last).
        bidx.iter_mut().for_each(|x| *x = 0);
        let rows = block_items / row;
        for r in 0..rows {
            let mut inside = true;
            let mut coff = 0usize;
            for d in 0..last {
                let x = gidx[d] * bsh[d] + bidx[d];
                if x >= cs[d] {
                    inside = false;
                    break;
                }
                coff += x * cstride[d];
            }
            if inside {
                let x0 = gidx[last] * row;
                let n = row.min(cs[last] - x0);
                coff += x0;
                let bo = (base_blocked + r * row) * typesize;
                let co = coff * typesize;
                let len = n * typesize;
                if to_c {
                    c[co..co + len].copy_from_slice(&blocked[bo..bo + len]);
                } else {
                    blocked[bo..bo + len].copy_from_slice(&c[co..co + len]);
                }
            }
            // next row within the block
            for d in (0..last).rev() {
                bidx[d] += 1;
                if bidx[d] < bsh[d] {
                    break;
                }
                bidx[d] = 0;
            }
        }
        for d in (0..rank).rev() {
            gidx[d] += 1;
            if gidx[d] < grid[d] {
                break;
            }
            gidx[d] = 0;
        }
    }
    Ok(())
}

/// Copy block `k` (C order of the block grid; `block` holds its padded items)
/// into its place in the C-order chunk `c`, dropping padding.
pub fn scatter_block(
    meta: &Meta,
    typesize: usize,
    k: usize,
    block: &[u8],
    c: &mut [u8],
) -> Result<()> {
    let rank = meta.chunkshape.len();
    let (cs, bsh) = (&meta.chunkshape, &meta.blockshape);
    if rank == 0 || bsh.len() != rank {
        return Err(bad("rank mismatch"));
    }
    let items = meta.chunk_items().ok_or_else(|| bad("size overflow"))?;
    let block_items = bsh.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
    if block_items.and_then(|b| b.checked_mul(typesize)) != Some(block.len())
        || items.checked_mul(typesize) != Some(c.len())
    {
        return Err(bad("buffer sizes do not match the block geometry"));
    }
    // Grid coordinates of block k.
    let mut g = vec![0usize; rank];
    let mut rem = k;
    for d in (0..rank).rev() {
        let n = cs[d].div_ceil(bsh[d]);
        g[d] = rem % n;
        rem /= n;
    }
    if rem != 0 {
        return Err(bad("block index out of range"));
    }
    let last = rank - 1;
    let row = bsh[last];
    let x0 = g[last] * row;
    let n = row.min(cs[last] - x0) * typesize;
    // Clipped extents (items of this block inside the chunk), strides in rows
    // of the block and in items of the chunk.
    let mut ext = vec![0usize; last];
    let mut bstride = vec![0usize; last];
    let mut cstride = vec![0usize; last];
    let (mut brows, mut citems) = (1usize, cs[last]);
    let mut base = x0;
    for d in (0..last).rev() {
        ext[d] = bsh[d].min(cs[d] - g[d] * bsh[d]);
        bstride[d] = brows;
        cstride[d] = citems;
        base += g[d] * bsh[d] * citems;
        brows *= bsh[d];
        citems *= cs[d];
    }
    let outer: usize = ext.iter().product();
    let rowb = row * typesize;
    let (mut src_row, mut coff) = (0usize, base);
    let mut idx = vec![0usize; last];
    for _ in 0..outer {
        let s = &block[src_row * rowb..src_row * rowb + n];
        copy_row(&mut c[coff * typesize..coff * typesize + n], s);
        let mut d = last;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            src_row += bstride[d];
            coff += cstride[d];
            if idx[d] < ext[d] {
                break;
            }
            src_row -= bstride[d] * ext[d];
            coff -= cstride[d] * ext[d];
            idx[d] = 0;
        }
    }
    Ok(())
}

/// Like [`scatter_block`], but the block is given as its byte planes (a
/// byte-shuffled block, `planes[j][i]` = byte `j` of item `i`): each row is
/// interleaved straight into its place in `c`.
pub fn scatter_planes(meta: &Meta, k: usize, planes: &[&[u8]], c: &mut [u8]) -> Result<()> {
    let ts = planes.len();
    let block_items: usize = meta.blockshape.iter().product();
    if ts == 0 || planes.iter().any(|p| p.len() != block_items) {
        return Err(bad("planes do not match the block geometry"));
    }
    let mut sub: Vec<&[u8]> = planes.to_vec();
    for_each_row(meta, ts, k, c.len(), |item, n, co| {
        for (s, p) in sub.iter_mut().zip(planes) {
            *s = &p[item..item + n];
        }
        // Rows are short: the portable kernel (auto-vectorised for 2 and 4 planes)
        // avoids the per-call dispatch of the SIMD one.
        crate::filters::shuffle::unshuffle_planes_scalar(&sub, &mut c[co * ts..(co + n) * ts]);
    })
}

/// Visit the in-chunk rows of block `k`: `(first item in the block, item
/// count, first item in the C-order chunk)`.
fn for_each_row(
    meta: &Meta,
    ts: usize,
    k: usize,
    c_len: usize,
    mut f: impl FnMut(usize, usize, usize),
) -> Result<()> {
    let rank = meta.chunkshape.len();
    let (cs, bsh) = (&meta.chunkshape, &meta.blockshape);
    if rank == 0 || bsh.len() != rank {
        return Err(bad("rank mismatch"));
    }
    let items = meta.chunk_items().ok_or_else(|| bad("size overflow"))?;
    if items.checked_mul(ts) != Some(c_len) {
        return Err(bad("buffer sizes do not match the block geometry"));
    }
    let mut g = vec![0usize; rank];
    let mut rem = k;
    for d in (0..rank).rev() {
        let n = cs[d].div_ceil(bsh[d]);
        g[d] = rem % n;
        rem /= n;
    }
    if rem != 0 {
        return Err(bad("block index out of range"));
    }
    let last = rank - 1;
    let row = bsh[last];
    let x0 = g[last] * row;
    let n = row.min(cs[last] - x0);
    let mut ext = vec![0usize; last];
    let mut bstride = vec![0usize; last];
    let mut cstride = vec![0usize; last];
    let (mut brows, mut citems) = (1usize, cs[last]);
    let mut base = x0;
    for d in (0..last).rev() {
        ext[d] = bsh[d].min(cs[d] - g[d] * bsh[d]);
        bstride[d] = brows;
        cstride[d] = citems;
        base += g[d] * bsh[d] * citems;
        brows *= bsh[d];
        citems *= cs[d];
    }
    let outer: usize = ext.iter().product();
    let (mut src_row, mut coff) = (0usize, base);
    let mut idx = vec![0usize; last];
    for _ in 0..outer {
        f(src_row * row, n, coff);
        let mut d = last;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            src_row += bstride[d];
            coff += cstride[d];
            if idx[d] < ext[d] {
                break;
            }
            src_row -= bstride[d] * ext[d];
            coff -= cstride[d] * ext[d];
            idx[d] = 0;
        }
    }
    Ok(())
}

/// Copy a short row inline in 16-byte pieces (rows are typically 32–256
/// bytes, where a `memcpy` call costs more than the copy).
#[inline(always)]
fn copy_row(dst: &mut [u8], src: &[u8]) {
    fn fixed<const N: usize>(dst: &mut [u8], src: &[u8]) -> bool {
        match (<&mut [u8; N]>::try_from(dst), <&[u8; N]>::try_from(src)) {
            (Ok(d), Ok(s)) => {
                *d = *s;
                true
            }
            _ => false,
        }
    }
    let done = match dst.len() {
        32 => fixed::<32>(dst, src),
        64 => fixed::<64>(dst, src),
        128 => fixed::<128>(dst, src),
        256 => fixed::<256>(dst, src),
        _ => false,
    };
    if !done {
        dst.copy_from_slice(src);
    }
}

/// Block shape the HDF5 filter picks for `chunk` with a target of `target_bytes`.
pub fn block_shape(chunk: &[usize], typesize: usize, target_bytes: usize) -> Vec<usize> {
    let n = target_bytes / typesize.max(1);
    let mut block: Vec<usize> = chunk.iter().map(|&c| if c == 1 { 1 } else { 2 }).collect();
    let mut cur: usize = block.iter().product();
    if cur >= n {
        return block;
    }
    loop {
        let mut changed = false;
        for i in (0..chunk.len()).rev() {
            if 2 * block[i] <= chunk[i] {
                if 2 * cur <= n {
                    block[i] *= 2;
                    cur *= 2;
                    changed = true;
                }
            } else if block[i] < chunk[i] && cur / block[i] * chunk[i] <= n {
                cur = cur / block[i] * chunk[i];
                block[i] = chunk[i];
                changed = true;
            }
        }
        if !changed || cur >= n {
            break;
        }
    }
    block
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_block_shapes() {
        assert_eq!(block_shape(&[64, 64, 128], 2, 65536), vec![32, 32, 32]);
        assert_eq!(block_shape(&[10, 50, 100], 2, 65536), vec![10, 50, 64]);
        assert_eq!(block_shape(&[64, 64], 1, 4096), vec![64, 64]);
    }

    #[test]
    fn reorder_round_trip_with_padding() {
        let meta = Meta {
            shape: vec![5, 7],
            chunkshape: vec![5, 7],
            blockshape: vec![2, 4],
        };
        let mut c: Vec<u8> = (0..35).collect();
        let mut blocked = vec![0xffu8; meta.padded_items().unwrap()];
        reorder(&meta, 1, &mut blocked, &mut c, false).unwrap();
        // first block holds items (0,0..4), (1,0..4)
        assert_eq!(&blocked[..8], &[0, 1, 2, 3, 7, 8, 9, 10]);
        // second block: columns 4..7 and one padding column
        assert_eq!(&blocked[8..16], &[4, 5, 6, 0, 11, 12, 13, 0]);
        let mut back = vec![0u8; 35];
        reorder(&meta, 1, &mut blocked, &mut back, true).unwrap();
        assert_eq!(back, c);
        let mut by_block = vec![0u8; 35];
        for (k, blk) in blocked.chunks(8).enumerate() {
            scatter_block(&meta, 1, k, blk, &mut by_block).unwrap();
        }
        assert_eq!(by_block, c);
    }

    #[test]
    fn meta_round_trip() {
        let m = write_meta(&[10, 50, 100], &[10, 50, 64], 2);
        let p = Meta::parse(&m).unwrap();
        assert_eq!(p.chunkshape, vec![10, 50, 100]);
        assert_eq!(p.blockshape, vec![10, 50, 64]);
        assert_eq!(p.shape, vec![10, 50, 100]);
        assert!(!p.is_c_order());
        assert_eq!(write_meta(&[64, 64], &[64, 64], 1).len(), 53);
    }
}
