//! Extensible array chunk index (HDF5 File Format Specification III.J
//! "Extensible Array" and IV.A.2.i layout v4 index type 4): header `EAHD`, index
//! block `EAIB` (a few elements inline, then data-block and super-block
//! addresses), super blocks `EASB` and data blocks `EADB` (paged when larger
//! than 2^page_bits elements). Super block `s` holds 2^(s/2) data blocks of
//! 2^((s+1)/2) * min elements each. The linear element index is row-major over
//! the chunk grid with the unlimited dimension moved first.

use crate::btree_v2::verify_checksum;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::limits;
use crate::signature;
use crate::source::Source;
use crate::Sizes;

use super::fixed_array::ElementFormat;
use super::grid::{unravel, Grid};
use super::{ChunkIndexParams, ChunkRecord};

const HEADER: &str = "extensible array header";
const IBLOCK: &str = "extensible array index block";
const SBLOCK: &str = "extensible array super block";
const DBLOCK: &str = "extensible array data block";
const PAGE: &str = "extensible array data block page";

/// Creation parameters and derived geometry.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Params {
    fmt: ElementFormat,
    max_bits: u8,
    idx_blk_elmts: u64,
    dblk_min_elmts: u64,
    sblk_min_dptrs: u64,
    page_nelmts: u64,
    max_idx_set: u64,
    iblock: Option<u64>,
    arr_off_size: usize,
}

/// Geometry of one super block (III.J): how many data blocks it holds, how
/// many elements each data block holds, and the first element index it covers
/// (counted past the index block's own elements). Shared by the reader and the
/// writer (`crate::write::extensible_array`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SuperInfo {
    /// Data blocks in this super block: 2^(s/2).
    pub(crate) ndblks: u64,
    /// Elements per data block: 2^ceil(s/2) x the data block minimum.
    pub(crate) dblk_nelmts: u64,
    /// First element covered, relative to the end of the index block elements.
    pub(crate) start_idx: u64,
}

/// Number of super blocks of an array with `max_bits` element-index bits and
/// `dblk_min_elmts` (a power of two) elements in its smallest data block.
pub(crate) fn super_block_count(max_bits: u8, dblk_min_elmts: u64) -> u64 {
    let lg = u64::from(dblk_min_elmts.trailing_zeros());
    1 + u64::from(max_bits).saturating_sub(lg)
}

/// Geometry of every super block, in order (saturating: a malformed header
/// cannot overflow it).
pub(crate) fn super_blocks(max_bits: u8, dblk_min_elmts: u64) -> Vec<SuperInfo> {
    let mut out = Vec::new();
    let mut start = 0u64;
    for s in 0..super_block_count(max_bits, dblk_min_elmts) {
        let ndblks = 1u64.checked_shl((s / 2) as u32).unwrap_or(u64::MAX);
        let dblk_nelmts = 1u64
            .checked_shl(s.div_ceil(2) as u32)
            .and_then(|v| v.checked_mul(dblk_min_elmts))
            .unwrap_or(u64::MAX);
        out.push(SuperInfo {
            ndblks,
            dblk_nelmts,
            start_idx: start,
        });
        start = start.saturating_add(ndblks.saturating_mul(dblk_nelmts));
    }
    out
}

/// Super blocks whose data blocks hang off the index block directly.
pub(crate) fn index_block_super_blocks(sblk_min_dptrs: u64) -> u64 {
    2 * u64::from(sblk_min_dptrs.trailing_zeros())
}

/// Data block addresses the index block holds (those of its super blocks).
pub(crate) fn index_block_data_blocks(sblk_min_dptrs: u64) -> u64 {
    2 * sblk_min_dptrs.saturating_sub(1)
}

/// Which super block holds element `rel` (counted past the index block
/// elements), for `dblk_min_elmts` a power of two.
pub(crate) fn super_block_of(rel: u64, dblk_min_elmts: u64) -> usize {
    let q = (rel / dblk_min_elmts.max(1)).saturating_add(1);
    (63 - q.leading_zeros()) as usize
}

fn log2_exact(v: u64) -> Option<u32> {
    (v != 0 && v.is_power_of_two()).then(|| v.trailing_zeros())
}

impl Params {
    fn nsblks(&self) -> u64 {
        super_block_count(self.max_bits, self.dblk_min_elmts)
    }

    fn super_info(&self) -> Vec<SuperInfo> {
        super_blocks(self.max_bits, self.dblk_min_elmts)
    }
}

fn parse_header(
    src: &dyn Source,
    sizes: Sizes,
    params: &ChunkIndexParams,
    address: u64,
) -> Result<Params> {
    let (o, l) = (u64::from(sizes.offset), u64::from(sizes.length));
    let bytes = src.read(HEADER, address, 4 + 1 + 1 + 6 + 6 * l + o + 4)?;
    let mut c = Cursor::new(&bytes, address, HEADER);
    c.signature(signature::EAHD)?;
    let version = c.u8()?;
    if version != 0 {
        return Err(c.unsupported(format!("version {version}")));
    }
    let client = c.u8()?;
    let elem_size = c.u8()?;
    let max_bits = c.u8()?;
    let idx_blk_elmts = u64::from(c.u8()?);
    let dblk_min_elmts = u64::from(c.u8()?);
    let sblk_min_dptrs = u64::from(c.u8()?);
    let page_bits = c.u8()?;
    for _ in 0..4 {
        c.length(sizes.length)?;
    }
    let max_idx_set = c.length(sizes.length)?;
    let _realized = c.length(sizes.length)?;
    let iblock = c.addr(sizes.offset)?;
    verify_checksum(&bytes, address, HEADER)?;
    let fmt = ElementFormat::new(HEADER, address, sizes, params.filtered, elem_size, client)?;
    let bad = |r: String| Error::malformed(HEADER, address, r);
    if max_bits == 0 || max_bits > 64 {
        return Err(bad(format!("maximum element bits {max_bits}")));
    }
    let min_lg = log2_exact(dblk_min_elmts)
        .ok_or_else(|| bad(format!("data block minimum {dblk_min_elmts}")))?;
    if min_lg > u32::from(max_bits) {
        return Err(bad("data block minimum above the array maximum".into()));
    }
    log2_exact(sblk_min_dptrs)
        .ok_or_else(|| bad(format!("super block minimum pointers {sblk_min_dptrs}")))?;
    if page_bits >= 64 {
        return Err(bad(format!("page bits {page_bits}")));
    }
    Ok(Params {
        fmt,
        max_bits,
        idx_blk_elmts,
        dblk_min_elmts,
        sblk_min_dptrs,
        page_nelmts: 1u64 << page_bits,
        max_idx_set,
        iblock,
        arr_off_size: usize::from(max_bits).div_ceil(8),
    })
}

/// Walk the array and push every written chunk.
pub(super) fn chunks(
    src: &dyn Source,
    sizes: Sizes,
    params: &ChunkIndexParams,
    grid: &Grid,
    address: u64,
    push: &mut dyn FnMut(ChunkRecord) -> Result<()>,
) -> Result<()> {
    let mut p = parse_header(src, sizes, params, address)?;
    // A dataset shrunk along its unlimited dimension keeps the elements set
    // before (libhdf5 never lowers `max_idx_set`); the unlimited dimension is
    // the slowest in the linear index, so elements at or past the grid's chunk
    // count lie beyond the current extent, and libhdf5 ignores them on read.
    p.max_idx_set = p.max_idx_set.min(grid.max_chunks);
    let Some(iblock) = p.iblock else {
        return Ok(());
    };
    // Linearisation: the unlimited dimension first, the others in order.
    let unlim = params
        .max_dims
        .iter()
        .position(Option::is_none)
        .unwrap_or(0);
    let ext = grid.max_extents();
    let mut swizzled_ext = vec![ext.get(unlim).copied().unwrap_or(1)];
    swizzled_ext.extend(
        ext.iter()
            .enumerate()
            .filter(|&(i, _)| i != unlim)
            .map(|(_, &e)| e),
    );
    let mut emit = |idx: u64, c: &mut Cursor<'_>| -> Result<()> {
        let el = p.fmt.decode(c, grid.chunk_bytes)?;
        if idx >= p.max_idx_set {
            return Ok(());
        }
        if let Some((a, size, mask)) = el {
            let sw = unravel(idx, &swizzled_ext)
                .ok_or_else(|| Error::malformed(IBLOCK, iblock, "empty chunk grid"))?;
            let mut scaled = sw.get(1..).unwrap_or(&[]).to_vec();
            scaled.insert(unlim.min(scaled.len()), sw.first().copied().unwrap_or(0));
            push(grid.record(&scaled, a, size, mask)?)?;
        }
        Ok(())
    };

    let o = u64::from(sizes.offset);
    let esize = p.fmt.len() as u64;
    let infos = p.super_info();
    let iblock_nsblks = index_block_super_blocks(p.sblk_min_dptrs);
    let ndblk_addrs = index_block_data_blocks(p.sblk_min_dptrs);
    let nsblk_addrs = p.nsblks().saturating_sub(iblock_nsblks);
    let len = 4 + 1 + 1 + o + p.idx_blk_elmts * esize + (ndblk_addrs + nsblk_addrs) * o + 4;
    let bytes = src.read(IBLOCK, iblock, len)?;
    let mut c = super::array_block_prefix(&bytes, iblock, IBLOCK, signature::EAIB, sizes, address)?;
    verify_checksum(&bytes, iblock, IBLOCK)?;
    for i in 0..p.idx_blk_elmts {
        emit(i, &mut c)?;
    }
    let mut dblk_addrs = Vec::with_capacity(ndblk_addrs as usize);
    for _ in 0..ndblk_addrs {
        dblk_addrs.push(c.addr(sizes.offset)?);
    }
    let mut sblk_addrs = Vec::with_capacity(nsblk_addrs as usize);
    for _ in 0..nsblk_addrs {
        sblk_addrs.push(c.addr(sizes.offset)?);
    }

    let mut walker = DataBlocks {
        src,
        sizes,
        p: &p,
        header: address,
        nodes: 0,
    };
    let mut next_dblk = dblk_addrs.iter();
    for (s, info) in infos.iter().enumerate() {
        let first = p.idx_blk_elmts.saturating_add(info.start_idx);
        if first >= p.max_idx_set {
            break;
        }
        if (s as u64) < iblock_nsblks {
            for d in 0..info.ndblks {
                let Some(Some(a)) = next_dblk.next() else {
                    continue;
                };
                let start = first + d * info.dblk_nelmts;
                if start >= p.max_idx_set {
                    continue;
                }
                walker.data_block(*a, start, info.dblk_nelmts, None, &mut emit)?;
            }
            continue;
        }
        let k = s - iblock_nsblks as usize;
        let Some(Some(sb)) = sblk_addrs.get(k) else {
            continue;
        };
        walker.super_block(*sb, first, info, &mut emit)?;
    }
    Ok(())
}

struct DataBlocks<'a> {
    src: &'a dyn Source,
    sizes: Sizes,
    p: &'a Params,
    header: u64,
    nodes: usize,
}

impl DataBlocks<'_> {
    fn count(&mut self, at: u64, structure: &'static str) -> Result<()> {
        self.nodes += 1;
        if self.nodes > limits::MAX_TREE_NODES {
            return Err(Error::Limit {
                structure,
                offset: at,
                what: "blocks visited",
                value: self.nodes as u64,
                limit: limits::MAX_TREE_NODES as u64,
            });
        }
        Ok(())
    }

    fn super_block(
        &mut self,
        at: u64,
        first: u64,
        info: &SuperInfo,
        emit: &mut dyn FnMut(u64, &mut Cursor<'_>) -> Result<()>,
    ) -> Result<()> {
        self.count(at, SBLOCK)?;
        let o = u64::from(self.sizes.offset);
        let paged = info.dblk_nelmts > self.p.page_nelmts;
        let npages = if paged {
            info.dblk_nelmts / self.p.page_nelmts
        } else {
            0
        };
        let init_size = npages.div_ceil(8);
        let ndblks = info.ndblks.min(
            self.p
                .max_idx_set
                .saturating_sub(first)
                .div_ceil(info.dblk_nelmts.max(1))
                .max(1),
        );
        // Read the full block (its checksum covers every data block address).
        let len = 4 + 1 + 1 + o + self.p.arr_off_size as u64 + info.ndblks * (init_size + o) + 4;
        let bytes = self.src.read(SBLOCK, at, len)?;
        let mut c = super::array_block_prefix(
            &bytes,
            at,
            SBLOCK,
            signature::EASB,
            self.sizes,
            self.header,
        )?;
        verify_checksum(&bytes, at, SBLOCK)?;
        c.uint(self.p.arr_off_size)?;
        let bitmaps = c.bytes_u64(info.ndblks * init_size)?;
        for d in 0..info.ndblks {
            let a = c.addr(self.sizes.offset)?;
            if d >= ndblks {
                continue;
            }
            let Some(a) = a else {
                continue;
            };
            // One bit per page, numbered across the data blocks of this super block.
            let bm = paged.then_some((bitmaps, d * npages));
            self.data_block(a, first + d * info.dblk_nelmts, info.dblk_nelmts, bm, emit)?;
        }
        Ok(())
    }

    fn data_block(
        &mut self,
        at: u64,
        start: u64,
        nelmts: u64,
        page_init: Option<(&[u8], u64)>,
        emit: &mut dyn FnMut(u64, &mut Cursor<'_>) -> Result<()>,
    ) -> Result<()> {
        self.count(at, DBLOCK)?;
        let o = u64::from(self.sizes.offset);
        let esize = self.p.fmt.len() as u64;
        let pre = 4 + 1 + 1 + o + self.p.arr_off_size as u64;
        let paged = nelmts > self.p.page_nelmts;
        let body = if paged { 0 } else { nelmts * esize };
        let bytes = self.src.read(DBLOCK, at, pre + body + 4)?;
        let mut c = super::array_block_prefix(
            &bytes,
            at,
            DBLOCK,
            signature::EADB,
            self.sizes,
            self.header,
        )?;
        verify_checksum(&bytes, at, DBLOCK)?;
        c.uint(self.p.arr_off_size)?;
        if !paged {
            for i in 0..nelmts {
                emit(start + i, &mut c)?;
            }
            return Ok(());
        }
        let pn = self.p.page_nelmts;
        let npages = nelmts / pn;
        let page_size = pn * esize + 4;
        for pg in 0..npages {
            if start + pg * pn >= self.p.max_idx_set {
                break;
            }
            let init = page_init.is_none_or(|(bm, first_bit)| {
                let bit = first_bit + pg;
                bm.get((bit / 8) as usize)
                    .is_some_and(|b| b & (0x80 >> (bit % 8)) != 0)
            });
            if !init {
                continue;
            }
            let pa = at
                .checked_add(pre + 4 + pg * page_size)
                .ok_or(Error::Overflow {
                    structure: PAGE,
                    offset: at,
                    what: "page address",
                })?;
            let page = self.src.read(PAGE, pa, page_size)?;
            verify_checksum(&page, pa, PAGE)?;
            let mut c = Cursor::new(&page, pa, PAGE);
            for i in 0..pn {
                emit(start + pg * pn + i, &mut c)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn super_block_geometry() {
        let p = Params {
            fmt: ElementFormat {
                addr_len: 8,
                size_len: None,
            },
            max_bits: 32,
            idx_blk_elmts: 4,
            dblk_min_elmts: 16,
            sblk_min_dptrs: 4,
            page_nelmts: 1024,
            max_idx_set: 0,
            iblock: None,
            arr_off_size: 4,
        };
        assert_eq!(p.nsblks(), 29);
        let s = p.super_info();
        let got: Vec<(u64, u64, u64)> = s[..5]
            .iter()
            .map(|i| (i.ndblks, i.dblk_nelmts, i.start_idx))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 16, 0),
                (1, 32, 16),
                (2, 32, 48),
                (2, 64, 112),
                (4, 64, 240)
            ]
        );
    }

    #[test]
    fn super_block_of_matches_the_geometry() {
        let info = super_blocks(32, 16);
        assert_eq!(info.len(), 29);
        for (s, si) in info.iter().enumerate().take(20) {
            let last = si.start_idx + si.ndblks * si.dblk_nelmts - 1;
            assert_eq!(super_block_of(si.start_idx, 16), s);
            assert_eq!(super_block_of(last, 16), s);
        }
        assert_eq!(super_block_of(0, 16), 0);
        assert_eq!(super_block_of(15, 16), 0);
        assert_eq!(super_block_of(16, 16), 1);
        assert_eq!(super_block_of(48, 16), 2);
    }
}
