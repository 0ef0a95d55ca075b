//! Fixed array chunk index (HDF5 File Format Specification III.K "Fixed Array"
//! and IV.A.2.i layout v4 index type 3): header `FAHD`, data block `FADB`, whose
//! elements are split into checksummed pages (with a page-initialised bitmap)
//! when there are more than 2^page_bits of them. Element `i` is the chunk with
//! row-major linear index `i` over the maximum extent's chunk grid.

use crate::btree_v2::verify_checksum;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::signature;
use crate::source::Source;
use crate::Sizes;

use super::grid::{unravel, Grid};
use super::{ChunkIndexParams, ChunkRecord};

const HEADER: &str = "fixed array header";
const DBLOCK: &str = "fixed array data block";
const PAGE: &str = "fixed array data block page";

/// The element layout shared by the array indexes: address, then for filtered
/// chunks a size field of `size_len` bytes and a 4-byte mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ElementFormat {
    pub addr_len: u8,
    pub size_len: Option<usize>,
}

impl ElementFormat {
    /// Derive the format from the stored element size.
    pub(super) fn new(
        structure: &'static str,
        at: u64,
        sizes: Sizes,
        filtered: bool,
        elem_size: u8,
        client: u8,
    ) -> Result<Self> {
        let o = usize::from(sizes.offset);
        let e = usize::from(elem_size);
        if client != u8::from(filtered) {
            return Err(Error::malformed(
                structure,
                at,
                format!(
                    "client id {client} for a {}filtered dataset",
                    if filtered { "" } else { "un" }
                ),
            ));
        }
        let size_len = if filtered {
            let w = e.checked_sub(o + 4).filter(|w| (1..=8).contains(w));
            Some(w.ok_or_else(|| {
                Error::malformed(structure, at, format!("filtered element of {e} bytes"))
            })?)
        } else {
            if e != o {
                return Err(Error::malformed(
                    structure,
                    at,
                    format!("element of {e} bytes"),
                ));
            }
            None
        };
        Ok(ElementFormat {
            addr_len: sizes.offset,
            size_len,
        })
    }

    pub(super) fn len(&self) -> usize {
        usize::from(self.addr_len) + self.size_len.map_or(0, |w| w + 4)
    }

    /// Decode one element: `(address, stored size, mask)`, or `None` when unwritten.
    pub(super) fn decode(
        &self,
        c: &mut Cursor<'_>,
        chunk_bytes: u64,
    ) -> Result<Option<(u64, u64, u32)>> {
        let addr = c.addr(self.addr_len)?;
        let (size, mask) = match self.size_len {
            Some(w) => (c.uint(w)?, c.u32()?),
            None => (chunk_bytes, 0),
        };
        Ok(addr.map(|a| (a, size, mask)))
    }
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
    let o = u64::from(sizes.offset);
    let l = u64::from(sizes.length);
    let hdr = src.read(HEADER, address, 4 + 1 + 1 + 1 + 1 + l + o + 4)?;
    let mut c = Cursor::new(&hdr, address, HEADER);
    c.signature(signature::FAHD)?;
    let version = c.u8()?;
    if version != 0 {
        return Err(c.unsupported(format!("version {version}")));
    }
    let client = c.u8()?;
    let elem_size = c.u8()?;
    let page_bits = c.u8()?;
    let nelmts = c.length(sizes.length)?;
    let dblock = c.addr(sizes.offset)?;
    verify_checksum(&hdr, address, HEADER)?;
    let fmt = ElementFormat::new(HEADER, address, sizes, params.filtered, elem_size, client)?;
    if nelmts > grid.max_chunks {
        return Err(Error::Limit {
            structure: HEADER,
            offset: address,
            what: "elements",
            value: nelmts,
            limit: grid.max_chunks,
        });
    }
    if page_bits >= 64 {
        return Err(Error::malformed(
            HEADER,
            address,
            format!("page bits {page_bits}"),
        ));
    }
    let Some(dblock) = dblock else {
        return Ok(());
    };
    let extents = grid.max_extents();
    let mut emit = |i: u64, c: &mut Cursor<'_>| -> Result<()> {
        if let Some((a, size, mask)) = fmt.decode(c, grid.chunk_bytes)? {
            let scaled = unravel(i, &extents)
                .ok_or_else(|| Error::malformed(DBLOCK, dblock, "empty chunk grid"))?;
            push(grid.record(&scaled, a, size, mask)?)?;
        }
        Ok(())
    };
    let esize = fmt.len() as u64;
    let page_nelmts = 1u64 << page_bits;
    let prefix = 4 + 1 + 1 + o;
    if nelmts <= page_nelmts {
        let bytes = src.read(DBLOCK, dblock, prefix + nelmts * esize + 4)?;
        let mut c =
            super::array_block_prefix(&bytes, dblock, DBLOCK, signature::FADB, sizes, address)?;
        verify_checksum(&bytes, dblock, DBLOCK)?;
        for i in 0..nelmts {
            emit(i, &mut c)?;
        }
        return Ok(());
    }
    let npages = nelmts.div_ceil(page_nelmts);
    let bitmap_len = npages.div_ceil(8);
    let bytes = src.read(DBLOCK, dblock, prefix + bitmap_len + 4)?;
    let mut c = super::array_block_prefix(&bytes, dblock, DBLOCK, signature::FADB, sizes, address)?;
    verify_checksum(&bytes, dblock, DBLOCK)?;
    let bitmap = c.bytes_u64(bitmap_len)?;
    let page_size = page_nelmts * esize + 4;
    let first_page = dblock + prefix + bitmap_len + 4;
    for p in 0..npages {
        let init = bitmap
            .get((p / 8) as usize)
            .is_some_and(|b| b & (0x80 >> (p % 8)) != 0);
        if !init {
            continue;
        }
        let n = (nelmts - p * page_nelmts).min(page_nelmts);
        let at = first_page
            .checked_add(p * page_size)
            .ok_or(Error::Overflow {
                structure: PAGE,
                offset: dblock,
                what: "page address",
            })?;
        let page = src.read(PAGE, at, n * esize + 4)?;
        verify_checksum(&page, at, PAGE)?;
        let mut c = Cursor::new(&page, at, PAGE);
        for i in 0..n {
            emit(p * page_nelmts + i, &mut c)?;
        }
    }
    Ok(())
}
