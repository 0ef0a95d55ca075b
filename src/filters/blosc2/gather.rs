//! Gathering the padded blocks of a B2ND chunk (`shared/spec/filters.md`
//! §3.5) out of a C-order array, one block at a time into a block-sized
//! (cache-resident) scratch, so the encoder never reorders a whole chunk into
//! a second chunk-sized buffer. The array is usually the C-order chunk itself;
//! a [`Region`] can also name one chunk of a whole dataset (fill value outside
//! it), though gathering small rows straight from a large array is slower
//! than extracting the chunk first (the rows are cache misses).

use super::b2nd::Meta;
use super::encode_chunk::BlockSource;

/// One HDF5 chunk inside a C-order array of `dims`: the chunk of shape
/// `chunk` whose first element is at `start`. Items of the chunk outside the
/// array are the fill value (`fill`, one element; empty or all zero = zeros).
#[derive(Clone, Copy, Debug)]
pub struct Region<'a> {
    pub data: &'a [u8],
    pub dims: &'a [u64],
    pub start: &'a [u64],
    pub chunk: &'a [u64],
    pub elem: usize,
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
        })
    }

    /// Write block `k` into `dst` (`dst.len()` = the block's padded bytes).
    fn gather(&self, k: usize, dst: &mut [u8]) {
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
        let row_items = bsh[last];
        let rowb = row_items * elem;
        // Items of the row inside the chunk, and of those inside the array.
        let x0 = origin[last];
        let in_chunk = row_items.min(cs[last].saturating_sub(x0));
        let col0 = r.start[last] + x0 as u64;
        let in_data = (in_chunk as u64).min(r.dims[last].saturating_sub(col0)) as usize;
        let mut bidx = [0usize; super::b2nd::MAX_DIM];
        for out in dst.chunks_exact_mut(rowb) {
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
            let (data_items, fill_items) = match (in_chunk_row, in_array_row) {
                (false, _) => (0, 0),
                (true, false) => (0, in_chunk),
                (true, true) => (in_data, in_chunk - in_data),
            };
            if data_items > 0 {
                let s = (lin * r.dims[last] + col0) as usize * elem;
                out[..data_items * elem].copy_from_slice(&r.data[s..s + data_items * elem]);
            }
            let filled = &mut out[data_items * elem..(data_items + fill_items) * elem];
            match self.fill {
                Some(f) => filled
                    .chunks_exact_mut(elem)
                    .for_each(|e| e.copy_from_slice(f)),
                None => filled.fill(0),
            }
            out[(data_items + fill_items) * elem..].fill(0);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filters::blosc2::b2nd;
    use crate::hdf5fmt::write::chunks::extract_chunk;
    use proptest::prelude::*;

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
            prop_assert_eq!(got, want);
        }
    }
}
