//! The B2ND metalayer and block order (`docs/filters-format.md` §3.5): parse
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
    /// Array shape, in items per axis.
    pub shape: Vec<u64>,
    /// Chunk shape, in items per axis.
    pub chunkshape: Vec<usize>,
    /// Block shape, in items per axis: the chunk is stored as blocks of this
    /// shape, padded where the chunk does not divide evenly.
    pub blockshape: Vec<usize>,
}

/// Big-endian fixed-width field at `p`, behind a one-byte marker C skips.
fn field(b: &[u8], p: &mut usize, n: usize) -> Result<u64> {
    let s = b.get(*p + 1..*p + 1 + n).ok_or_else(|| bad("truncated"))?;
    *p += 1 + n;
    Ok(s.iter().fold(0u64, |a, &x| a << 8 | u64::from(x)))
}

impl Meta {
    /// Parse a `b2nd` or `caterva` metalayer as C-Blosc2 does: fixed-width
    /// fields (int64 shape, int32 chunk and block shapes) whose msgpack
    /// markers are skipped, not checked; an optional dtype (format byte,
    /// str32 marker, length) that must lie inside the content.
    pub fn parse(content: &[u8]) -> Result<Meta> {
        let rank = *content.get(2).ok_or_else(|| bad("truncated"))?;
        let rank = usize::from(rank);
        if !(1..=MAX_DIM).contains(&rank) {
            return Err(bad(format!("rank {rank} out of range")));
        }
        let mut p = 3;
        let mut shape = Vec::with_capacity(rank);
        p += 1;
        for _ in 0..rank {
            let v = field(content, &mut p, 8)? as i64;
            shape.push(u64::try_from(v).map_err(|_| bad("negative shape"))?);
        }
        let dims = |p: &mut usize| -> Result<Vec<usize>> {
            *p += 1;
            (0..rank)
                .map(|_| {
                    let v = field(content, p, 4)? as i32;
                    usize::try_from(v)
                        .ok()
                        .filter(|&x| x > 0)
                        .ok_or_else(|| bad("non-positive extent"))
                })
                .collect()
        };
        let chunkshape = dims(&mut p)?;
        let blockshape = dims(&mut p)?;
        if p < content.len() {
            // dtype format, then the dtype as a str32
            if content.get(p + 1) != Some(&0xDB) {
                return Err(bad("dtype is not a str32"));
            }
            let mut q = p + 1;
            let len = field(content, &mut q, 4)? as usize;
            if content.len() - q < len {
                return Err(bad("dtype outside the metalayer"));
            }
        }
        Ok(Meta {
            shape,
            chunkshape,
            blockshape,
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

    /// Bytes of one block of `typesize`-byte items; `None` on overflow or
    /// for an empty block shape's zero size.
    pub fn block_bytes(&self, typesize: usize) -> Option<usize> {
        self.blockshape
            .iter()
            .try_fold(typesize, |a, &b| a.checked_mul(b))
            .filter(|&b| b > 0)
    }

    /// Items in the array (the B2ND shape).
    pub fn array_items(&self) -> Option<usize> {
        self.shape
            .iter()
            .try_fold(1usize, |a, &s| a.checked_mul(usize::try_from(s).ok()?))
    }

    /// Items in the chunk.
    pub fn chunk_items(&self) -> Option<usize> {
        self.chunkshape
            .iter()
            .try_fold(1usize, |a, &c| a.checked_mul(c))
    }

    /// Is the padded block order the same as C order of the chunk (no reordering)?
    pub fn is_c_order(&self) -> bool {
        if self
            .shape
            .iter()
            .zip(&self.chunkshape)
            .any(|(&s, &c)| s != c as u64)
        {
            return false;
        }
        let n = self.chunkshape.len();
        (0..n).any(|k| {
            self.blockshape[..k].iter().all(|&b| b == 1)
                && self.chunkshape[k].is_multiple_of(self.blockshape[k])
                && self.blockshape[k + 1..] == self.chunkshape[k + 1..]
        })
    }
}

/// Largest chunk (padded to whole blocks) C-Blosc2 handles: its sizes are int32.
const MAX_CHUNK_BYTES: usize = i32::MAX as usize;

impl Meta {
    /// Check the geometry as C-Blosc2 needs it for a one-chunk array: the
    /// (non-empty) array fits in its chunk, whose padded size (whole blocks)
    /// fits in int32 bytes. Returns the padded chunk size in bytes.
    pub fn check_one_chunk(&self, typesize: usize) -> Result<usize> {
        let rank = self.shape.len();
        if self.chunkshape.len() != rank || self.blockshape.len() != rank {
            return Err(bad("rank mismatch"));
        }
        if self
            .shape
            .iter()
            .zip(&self.chunkshape)
            .any(|(&s, &c)| s > c as u64 || s == 0)
        {
            return Err(bad("array does not fit in one chunk"));
        }
        self.padded_items()
            .and_then(|p| p.checked_mul(typesize))
            .filter(|&b| b <= MAX_CHUNK_BYTES)
            .filter(|_| {
                self.block_bytes(typesize)
                    .is_some_and(|b| b <= MAX_CHUNK_BYTES)
            })
            .ok_or_else(|| bad("chunk geometry too large"))
    }
}

/// Does C-Blosc2 read the array block by block from the stored chunk (its
/// "compact" path: the blocks the array meets take at most 1/16 of the padded
/// chunk) rather than decoding the chunk whole (which needs the stored chunk
/// to hold as many blocks as the padded chunk)? Also returns the number of
/// the highest block the array meets plus one, in the padded chunk's grid.
pub fn compact_read(meta: &Meta, typesize: usize, padded: usize) -> (bool, usize) {
    let bs = &meta.blockshape;
    let block_bytes: usize = bs.iter().product::<usize>() * typesize;
    let rank = bs.len();
    let (mut needed, mut last, mut stride) = (1usize, 0usize, 1usize);
    for d in (0..rank).rev() {
        let n = (meta.shape[d] as usize).div_ceil(bs[d]);
        needed = needed.saturating_mul(n);
        last += (n - 1) * stride;
        stride *= meta.chunkshape[d].div_ceil(bs[d]);
    }
    let compact = needed.saturating_mul(block_bytes).saturating_mul(16) <= padded;
    (compact, last + 1)
}

/// Copy the array (C order, `dst`) out of its decoded chunk `src`, which
/// holds whole blocks of `blockshape` in C order of the block grid, as
/// C-Blosc2 reads it. Items past the end of `src` (a block shape that does
/// not fit the stored chunk) read as zeros, where C reads whatever its
/// buffer held.
pub fn gather(meta: &Meta, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let rank = meta.shape.len();
    let (cs, bs) = (&meta.chunkshape, &meta.blockshape);
    let shape: Vec<usize> = meta.shape.iter().map(|&s| s as usize).collect();
    let items = meta.array_items().ok_or_else(|| bad("size overflow"))?;
    if rank == 0 || items.checked_mul(typesize) != Some(dst.len()) || items == 0 {
        return Err(bad("buffer sizes do not match the block geometry"));
    }
    let block_items: usize = bs.iter().product();
    let grid: Vec<usize> = cs.iter().zip(bs).map(|(&c, &b)| c.div_ceil(b)).collect();
    let mut gstride = vec![1usize; rank];
    let mut bstride = vec![1usize; rank];
    for d in (0..rank - 1).rev() {
        gstride[d] = gstride[d + 1] * grid[d + 1];
        bstride[d] = bstride[d + 1] * bs[d + 1];
    }
    let last = rank - 1;
    let rowb = shape[last] * typesize;
    let mut idx = vec![0usize; rank];
    for row in dst.chunks_mut(rowb) {
        let (mut blk, mut inb) = (0usize, 0usize);
        for d in 0..last {
            blk += idx[d] / bs[d] * gstride[d];
            inb += idx[d] % bs[d] * bstride[d];
        }
        let mut x = 0usize;
        while x < shape[last] {
            let run = (bs[last] - x % bs[last]).min(shape[last] - x);
            let item = (blk + x / bs[last]) * block_items + inb + x % bs[last];
            let out = &mut row[x * typesize..(x + run) * typesize];
            let start = item.saturating_mul(typesize).min(src.len());
            let have = (src.len() - start).min(out.len());
            out[..have].copy_from_slice(&src[start..start + have]);
            out[have..].fill(0);
            x += run;
        }
        for d in (0..last).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(())
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
    let bsh = &meta.blockshape;
    if meta.chunkshape.is_empty() || bsh.len() != meta.chunkshape.len() {
        return Err(bad("rank mismatch"));
    }
    let block_items = bsh.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
    if block_items.and_then(|b| b.checked_mul(typesize)) != Some(block.len()) {
        return Err(bad("buffer sizes do not match the block geometry"));
    }
    // The rows, the chunk's size and the block index are checked there.
    for_each_row(meta, typesize, k, c.len(), |item, n, co| {
        let (src, dst) = (item * typesize, co * typesize);
        let len = n * typesize;
        copy_row(&mut c[dst..dst + len], &block[src..src + len]);
    })
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
    if let [p0, p1] = planes {
        if !c.len().is_multiple_of(2) {
            return Err(bad("buffer sizes do not match the block geometry"));
        }
        if let Some(g) = block_rows3(meta, k, c.len() / 2)? {
            // The rows kernel checks the planes against the geometry; the
            // destination end is checked here.
            if g.dst_end()
                .and_then(|e| e.checked_mul(2))
                .is_some_and(|e| e <= c.len())
            {
                // SAFETY: `c` holds `2 · g.dst_end()` bytes (checked above)
                // and is borrowed mutably for the call.
                if unsafe { crate::shuffle::unshuffle2_rows(p0, p1, &g, c.as_mut_ptr()) } {
                    return Ok(());
                }
            }
            return Err(bad("planes do not match the block geometry"));
        }
    }
    let mut sub: Vec<&[u8]> = planes.to_vec();
    for_each_row(meta, ts, k, c.len(), |item, n, co| {
        for (s, p) in sub.iter_mut().zip(planes) {
            *s = &p[item..item + n];
        }
        crate::shuffle::unshuffle_planes(&sub, &mut c[co * ts..(co + n) * ts]);
    })
}

/// The rows of block `k` inside a C-order chunk of `c_items` items, as one
/// [`Rows3`](crate::shuffle::Rows3) box copy (source: item indices
/// in the padded block; destination: item indices in the chunk), for ranks
/// 1 to 3; `Ok(None)` for higher ranks.
fn block_rows3(meta: &Meta, k: usize, c_items: usize) -> Result<Option<crate::shuffle::Rows3>> {
    let (cs, bsh) = (&meta.chunkshape, &meta.blockshape);
    let rank = cs.len();
    if rank == 0 || rank > 3 {
        return Ok(None);
    }
    if bsh.len() != rank || bsh.contains(&0) {
        return Err(bad("rank mismatch"));
    }
    if meta.chunk_items() != Some(c_items) {
        return Err(bad("buffer sizes do not match the block geometry"));
    }
    // Pad to rank 3 with leading axes of one item.
    let pad = 3 - rank;
    let dim = |v: &[usize], d: usize| if d < pad { 1 } else { v[d - pad] };
    let (c3, b3) = (
        [dim(cs, 0), dim(cs, 1), dim(cs, 2)],
        [dim(bsh, 0), dim(bsh, 1), dim(bsh, 2)],
    );
    let mut g = [0usize; 3];
    block_coords(&c3, &b3, k, &mut g)?;
    let o = [g[0] * b3[0], g[1] * b3[1], g[2] * b3[2]];
    let ext = |d: usize| b3[d].min(c3[d] - o[d]);
    Ok(Some(crate::shuffle::Rows3 {
        n: ext(2),
        outer: ext(0),
        inner: ext(1),
        src0: 0,
        ss: [b3[1] * b3[2], b3[2]],
        dst0: o[0] * c3[1] * c3[2] + o[1] * c3[2] + o[2],
        ds: [c3[1] * c3[2], c3[2]],
    }))
}

/// The grid coordinates of block `k` (C order over the blocks of `chunk`
/// cut into `block`), written to `g` (one per axis).
fn block_coords(chunk: &[usize], block: &[usize], k: usize, g: &mut [usize]) -> Result<()> {
    let mut rem = k;
    for d in (0..g.len()).rev() {
        let n = chunk[d].div_ceil(block[d]);
        g[d] = rem % n;
        rem /= n;
    }
    if rem != 0 {
        return Err(bad("block index out of range"));
    }
    Ok(())
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
    block_coords(cs, bsh, k, &mut g)?;
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

    #[test]
    fn scatter_planes_refuses_a_chunk_buffer_of_another_size() {
        let meta = Meta {
            shape: vec![5],
            chunkshape: vec![5],
            blockshape: vec![4],
        };
        let (p0, p1) = ([1u8; 4], [2u8; 4]);
        for len in [9, 11, 12] {
            let mut c = vec![0u8; len];
            assert!(
                scatter_planes(&meta, 0, &[&p0, &p1], &mut c).is_err(),
                "{len}"
            );
        }
        let mut c = vec![0u8; 10];
        scatter_planes(&meta, 0, &[&p0, &p1], &mut c).unwrap();
        assert_eq!(&c[..8], &[1, 2, 1, 2, 1, 2, 1, 2]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Interleaving a block's byte planes straight into the chunk (the
        /// rows kernel for 2-byte items up to rank 3, per-row SIMD otherwise)
        /// gives the bytes of interleaving the block first and copying it.
        #[test]
        fn scatter_planes_is_scatter_block(
            dims in proptest::collection::vec((1usize..24, 1usize..12), 1..5),
            ts in proptest::sample::select(vec![1usize, 2, 3, 4, 8]),
            seed in proptest::prelude::any::<u8>(),
        ) {
            let meta = Meta {
                shape: dims.iter().map(|&(c, _)| c as u64).collect(),
                chunkshape: dims.iter().map(|&(c, _)| c).collect(),
                blockshape: dims.iter().map(|&(c, b)| b.min(c + 3)).collect(),
            };
            let block_items: usize = meta.blockshape.iter().product();
            let items = meta.chunk_items().unwrap();
            let nblocks: usize = meta
                .chunkshape
                .iter()
                .zip(&meta.blockshape)
                .map(|(c, b)| c.div_ceil(*b))
                .product();
            let mut want = vec![0u8; items * ts];
            let mut got = vec![0u8; items * ts];
            for k in 0..nblocks {
                let planes: Vec<Vec<u8>> = (0..ts)
                    .map(|j| {
                        (0..block_items)
                            .map(|i| (i * 31 + j * 7 + k * 13) as u8 ^ seed)
                            .collect()
                    })
                    .collect();
                let refs: Vec<&[u8]> = planes.iter().map(|p| p.as_slice()).collect();
                let mut block = vec![0u8; block_items * ts];
                crate::shuffle::unshuffle_planes(&refs, &mut block);
                scatter_block(&meta, ts, k, &block, &mut want).unwrap();
                scatter_planes(&meta, k, &refs, &mut got).unwrap();
            }
            proptest::prop_assert_eq!(got, want);
        }
    }
}
