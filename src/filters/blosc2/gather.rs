//! Gathering the padded blocks of a B2ND chunk (`docs/filters-format.md`
//! §3.5) out of a C-order array, one block at a time into a block-sized
//! (cache-resident) scratch, so the encoder never reorders a whole chunk into
//! a second chunk-sized buffer. The array is usually the C-order chunk itself;
//! a [`Region`] can also name one chunk of a whole dataset (fill value outside
//! it), though gathering small rows straight from a large array is slower
//! than extracting the chunk first (the rows are cache misses).

use super::b2nd::Meta;
use super::encode_chunk::BlockSource;
use crate::shuffle;

/// One HDF5 chunk inside a C-order array of `dims`: the chunk of shape
/// `chunk` whose first element is at `start`. Items of the chunk outside the
/// array are the fill value (`fill`, one element; empty or all zero = zeros).
#[derive(Clone, Copy, Debug)]
pub struct Region<'a> {
    /// The whole C-order array, `elem` bytes per item.
    pub data: &'a [u8],
    /// Array shape, in items per axis.
    pub dims: &'a [u64],
    /// Array index (per axis, in items) of the chunk's first element.
    pub start: &'a [u64],
    /// Chunk shape, in items per axis.
    pub chunk: &'a [u64],
    /// Item size in bytes.
    pub elem: usize,
    /// Fill value for chunk items outside the array: one item's bytes
    /// (empty or all zero = zeros).
    pub fill: &'a [u8],
}

/// The padded blocks of a B2ND chunk (geometry `meta`, items of `elem` bytes)
/// read from a [`Region`]: padding beyond the chunk is zero, as C-Blosc2 writes it.
pub struct B2ndBlocks<'a> {
    region: Region<'a>,
    chunkshape: &'a [usize],
    blockshape: &'a [usize],
    grid: Vec<usize>,
    fill: Option<&'a [u8]>,
    /// Row start offsets of the block being gathered (kept between blocks).
    offs: Vec<usize>,
}

impl<'a> B2ndBlocks<'a> {
    /// `None` unless the region and the geometry agree (same rank, the chunk
    /// shape is the region's chunk, the data holds the whole array).
    pub fn new(region: Region<'a>, meta: &'a Meta) -> Option<Self> {
        let rank = region.dims.len();
        let fits = rank >= 1
            && region.start.len() == rank
            && region.chunk.len() == rank
            && meta.chunkshape.len() == rank
            && meta.blockshape.len() == rank
            && meta
                .chunkshape
                .iter()
                .zip(region.chunk)
                .all(|(&c, &r)| c as u64 == r)
            && meta.blockshape.iter().all(|&b| b > 0)
            && region.elem > 0;
        let items = region
            .dims
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))?;
        if !fits || items.checked_mul(region.elem as u64) != Some(region.data.len() as u64) {
            return None;
        }
        let grid = meta
            .chunkshape
            .iter()
            .zip(&meta.blockshape)
            .map(|(&c, &b)| c.div_ceil(b))
            .collect();
        let fill = (region.fill.len() == region.elem && region.fill.iter().any(|&b| b != 0))
            .then_some(region.fill);
        Some(B2ndBlocks {
            region,
            chunkshape: &meta.chunkshape,
            blockshape: &meta.blockshape,
            grid,
            fill,
            offs: Vec::new(),
        })
    }

    /// Walk the rows of block `k` (all axes but the last), in block order:
    /// `row(r, at, data_items, fill_items)` gets row `r`'s items taken from
    /// the array (`data_items` of them from byte `at`), then how many fill
    /// items follow; the rest of the row is zero padding.
    fn rows(&self, k: usize, mut row: impl FnMut(usize, usize, usize, usize)) {
        let r = &self.region;
        let (cs, bsh, elem) = (self.chunkshape, self.blockshape, r.elem);
        let rank = cs.len();
        let last = rank - 1;
        // Grid coordinates of block k, then its first chunk coordinate per axis.
        let mut origin = [0usize; super::b2nd::MAX_DIM];
        let mut rem = k;
        for d in (0..rank).rev() {
            origin[d] = rem % self.grid[d] * bsh[d];
            rem /= self.grid[d];
        }
        // Items of a row inside the chunk, and of those inside the array.
        let x0 = origin[last];
        let in_chunk = bsh[last].min(cs[last].saturating_sub(x0));
        let col0 = r.start[last] + x0 as u64;
        let in_data = (in_chunk as u64).min(r.dims[last].saturating_sub(col0)) as usize;
        let nrows: usize = bsh[..last].iter().product();
        let mut bidx = [0usize; super::b2nd::MAX_DIM];
        for ri in 0..nrows {
            // Where this row is: padding, fill, or (partly) array data.
            let mut in_chunk_row = true;
            let mut in_array_row = true;
            let mut lin = 0u64;
            for d in 0..last {
                let x = origin[d] + bidx[d];
                if x >= cs[d] {
                    in_chunk_row = false;
                    break;
                }
                let a = r.start[d] + x as u64;
                in_array_row &= a < r.dims[d];
                lin = lin * r.dims[d] + a;
            }
            match (in_chunk_row, in_array_row) {
                (false, _) => row(ri, 0, 0, 0),
                (true, false) => row(ri, 0, 0, in_chunk),
                (true, true) if in_data == 0 => row(ri, 0, 0, in_chunk),
                (true, true) => {
                    let at = (lin * r.dims[last] + col0) as usize * elem;
                    row(ri, at, in_data, in_chunk - in_data);
                }
            }
            // Next row of the block (odometer over all axes but the last).
            for d in (0..last).rev() {
                bidx[d] += 1;
                if bidx[d] < bsh[d] {
                    break;
                }
                bidx[d] = 0;
            }
        }
    }

    /// Write block `k` into `dst` (`dst.len()` = the block's padded bytes).
    fn gather(&self, k: usize, dst: &mut [u8]) {
        let elem = self.region.elem;
        let data = self.region.data;
        let rowb = self.blockshape[self.blockshape.len() - 1] * elem;
        self.rows(k, |ri, at, data_items, fill_items| {
            let out = &mut dst[ri * rowb..(ri + 1) * rowb];
            let nd = data_items * elem;
            out[..nd].copy_from_slice(&data[at..at + nd]);
            let filled = &mut out[nd..nd + fill_items * elem];
            match self.fill {
                Some(f) => filled
                    .chunks_exact_mut(elem)
                    .for_each(|e| e.copy_from_slice(f)),
                None => filled.fill(0),
            }
            out[nd + fill_items * elem..].fill(0);
        });
    }

    /// Write block `k` byte-shuffled (element size = item size) into `dst`.
    fn gather_shuffled(&mut self, k: usize, dst: &mut [u8]) {
        let elem = self.region.elem;
        let data = self.region.data;
        let row_items = self.blockshape[self.blockshape.len() - 1];
        let n = dst.len() / elem;
        // Rows all whole array rows (the usual block inside a chunk inside
        // the array): one call shuffles them all.
        let mut offs = std::mem::take(&mut self.offs);
        offs.clear();
        let mut whole = true;
        self.rows(k, |_, at, data_items, _| {
            whole &= data_items == row_items;
            offs.push(at);
        });
        if whole && shuffle::shuffle_rows_into_planes(data, &offs, row_items, dst, elem) {
            self.offs = offs;
            return;
        }
        self.offs = offs;
        self.rows(k, |ri, at, data_items, fill_items| {
            let at_item = ri * row_items;
            let src = &data[at..at + data_items * elem];
            shuffle::shuffle_into_planes(src, dst, n, at_item, elem);
            for j in 0..elem {
                let plane = &mut dst[j * n + at_item + data_items..j * n + at_item + row_items];
                let f = self.fill.map_or(0, |f| f[j]);
                plane[..fill_items].fill(f);
                plane[fill_items..].fill(0);
            }
        });
    }
}

impl BlockSource for B2ndBlocks<'_> {
    fn block<'s>(
        &'s mut self,
        k: usize,
        _bs: usize,
        len: usize,
        scratch: &'s mut Vec<u8>,
    ) -> &'s [u8] {
        if scratch.len() < len {
            scratch.resize(len, 0);
        }
        self.gather(k, &mut scratch[..len]);
        &scratch[..len]
    }

    fn block_shuffled(&mut self, k: usize, ts: usize, dst: &mut [u8]) -> bool {
        let block = self.blockshape.iter().product::<usize>() * self.region.elem;
        if ts != self.region.elem || dst.len() != block {
            return false;
        }
        self.gather_shuffled(k, dst);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blosc2::b2nd;
    use proptest::prelude::*;

    /// The chunk at `scaled` (in chunk units) of a row-major `dims` array,
    /// element by element; elements past the array's edge are `fill`. A
    /// deliberately naive reference for the gatherer.
    fn extract_chunk(
        data: &[u8],
        dims: &[u64],
        chunk: &[u64],
        scaled: &[u64],
        elem: usize,
        fill: &[u8],
    ) -> Vec<u8> {
        let rank = dims.len();
        let n: u64 = chunk.iter().product();
        let mut out = Vec::with_capacity(n as usize * elem);
        for i in 0..n {
            let mut rest = i;
            let mut local = vec![0u64; rank];
            for d in (0..rank).rev() {
                local[d] = rest % chunk[d];
                rest /= chunk[d];
            }
            let global: Vec<u64> = (0..rank).map(|d| scaled[d] * chunk[d] + local[d]).collect();
            if (0..rank).all(|d| global[d] < dims[d]) {
                let flat = (0..rank).fold(0u64, |acc, d| acc * dims[d] + global[d]) as usize;
                out.extend_from_slice(&data[flat * elem..(flat + 1) * elem]);
            } else {
                out.extend_from_slice(fill);
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Gathering block by block equals extracting the chunk and reordering it.
        #[test]
        fn gather_equals_extract_then_reorder(
            dims in proptest::collection::vec(1u64..12, 2..5),
            chunk_seed in proptest::collection::vec(1u64..7, 4),
            block_seed in proptest::collection::vec(1usize..5, 4),
            pick in proptest::collection::vec(0u64..4, 4),
            elem in 1usize..4,
            fill in any::<u8>(),
        ) {
            let rank = dims.len();
            let chunk: Vec<u64> = chunk_seed[..rank].to_vec();
            let scaled: Vec<u64> = (0..rank).map(|i| pick[i] % dims[i].div_ceil(chunk[i])).collect();
            let start: Vec<u64> = scaled.iter().zip(&chunk).map(|(s, c)| s * c).collect();
            let n: u64 = dims.iter().product();
            let data: Vec<u8> = (0..n as usize * elem).map(|i| (i % 251) as u8 + 1).collect();
            let fill = vec![fill; elem];
            let cs: Vec<usize> = chunk.iter().map(|&c| c as usize).collect();
            let meta = b2nd::Meta {
                shape: chunk.clone(),
                chunkshape: cs.clone(),
                blockshape: (0..rank).map(|i| block_seed[i].min(cs[i])).collect(),
            };
            let mut c = extract_chunk(&data, &dims, &chunk, &scaled, elem, &fill);
            let padded = meta.padded_items().unwrap() * elem;
            let mut want = vec![0u8; padded];
            b2nd::reorder(&meta, elem, &mut want, &mut c, false).unwrap();
            let region = Region { data: &data, dims: &dims, start: &start, chunk: &chunk, elem, fill: &fill };
            let mut src = B2ndBlocks::new(region, &meta).unwrap();
            let bs = meta.blockshape.iter().product::<usize>() * elem;
            let mut got = Vec::new();
            let mut scratch = vec![0xEE; 3];
            for k in 0..padded / bs {
                got.extend_from_slice(src.block(k, bs, bs, &mut scratch));
            }
            let mut planes = Vec::new();
            for k in 0..padded / bs {
                let mut p = vec![0xEE; bs];
                prop_assert!(src.block_shuffled(k, elem, &mut p));
                planes.extend_from_slice(&p);
            }
            let mut want_planes = vec![0u8; padded];
            for (w, g) in want_planes.chunks_mut(bs).zip(want.chunks(bs)) {
                shuffle::shuffle(g, w, elem);
            }
            prop_assert_eq!(planes, want_planes);
            prop_assert_eq!(got, want);
        }
    }
}
