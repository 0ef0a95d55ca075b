//! Fixed array chunk index (HDF5 File Format Specification III.K "Fixed Array"
//! and IV.A.2.i layout v4 index type 3): header `FAHD`, data block `FADB`, whose
//! elements are split into checksummed pages (with a page-initialised bitmap)
//! when there are more than 2^page_bits of them. Element `i` is the chunk with
//! row-major linear index `i` over the maximum extent's chunk grid.

use crate::btree_v2::verify_checksum;
use crate::checksum::metadata_checksum;
use crate::cursor::Cursor;
use crate::encode::{put_u32, put_var, UNDEF};
use crate::error::{Error, Result};
use crate::signature;
use crate::source::Source;
use crate::Sizes;

use super::grid::{unravel, Grid};
use super::{ChunkIndexParams, ChunkRecord};

const HEADER: &str = "fixed array header";
const DBLOCK: &str = "fixed array data block";
const PAGE: &str = "fixed array data block page";

/// The element layout shared by the array indexes (read and written): address,
/// then for filtered chunks a size field of `size_len` bytes and a 4-byte mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ElementFormat {
    /// Bytes of the chunk address (the file's offset size).
    pub(crate) addr_len: u8,
    /// Bytes of the stored-size field of a filtered chunk (`None`: unfiltered).
    pub(crate) size_len: Option<usize>,
}

impl ElementFormat {
    /// Derive the format from the stored element size.
    pub(crate) fn new(
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

    /// Encoded size of one element in bytes.
    pub(crate) fn len(&self) -> usize {
        usize::from(self.addr_len) + self.size_len.map_or(0, |w| w + 4)
    }

    /// Encode one element, the inverse of [`ElementFormat::decode`]:
    /// `(address, stored size, mask)`, or `None` for an unwritten chunk (an
    /// undefined address and zeroed size and mask).
    pub(crate) fn encode(&self, element: Option<(u64, u64, u32)>, out: &mut Vec<u8>) {
        let (addr, size, mask) = element.unwrap_or((UNDEF, 0, 0));
        put_var(out, addr, usize::from(self.addr_len));
        if let Some(w) = self.size_len {
            put_var(out, size, w);
            put_u32(out, mask);
        }
    }

    /// Decode one element: `(address, stored size, mask)`, or `None` when unwritten.
    pub(crate) fn decode(
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

/// The fixed array header (III.K `FAHD`): client id (0 unfiltered, 1
/// filtered chunks), element size, page bits, element count and data block
/// address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FixedArrayHeader {
    /// Client id: 1 when the chunks are filtered.
    pub(crate) client: u8,
    /// Bytes of one element.
    pub(crate) elem_size: u8,
    /// log2 of the elements per data block page.
    pub(crate) page_bits: u8,
    /// Number of elements.
    pub(crate) nelmts: u64,
    /// Address of the data block (`None` while nothing is stored).
    pub(crate) dblock: Option<u64>,
}

impl FixedArrayHeader {
    /// Encoded size, checksum included.
    pub(crate) fn encoded_len(sizes: Sizes) -> u64 {
        4 + 1 + 1 + 1 + 1 + u64::from(sizes.length) + u64::from(sizes.offset) + 4
    }

    /// Decode and verify a header read at `address`.
    pub(crate) fn decode(bytes: &[u8], address: u64, sizes: Sizes) -> Result<Self> {
        let mut c = Cursor::new(bytes, address, HEADER);
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
        verify_checksum(bytes, address, HEADER)?;
        Ok(FixedArrayHeader {
            client,
            elem_size,
            page_bits,
            nelmts,
            dblock,
        })
    }

    /// Encode the header, checksum included.
    pub(crate) fn encode(&self, sizes: Sizes) -> Vec<u8> {
        let mut h = Vec::with_capacity(Self::encoded_len(sizes) as usize);
        h.extend_from_slice(signature::FAHD);
        h.extend_from_slice(&[0, self.client, self.elem_size, self.page_bits]);
        put_var(&mut h, self.nelmts, usize::from(sizes.length));
        put_var(
            &mut h,
            self.dblock.unwrap_or(UNDEF),
            usize::from(sizes.offset),
        );
        let sum = metadata_checksum(&h);
        put_u32(&mut h, sum);
        h
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
    let hdr = src.read(HEADER, address, FixedArrayHeader::encoded_len(sizes))?;
    let FixedArrayHeader {
        client,
        elem_size,
        page_bits,
        nelmts,
        dblock,
    } = FixedArrayHeader::decode(&hdr, address, sizes)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn header_round_trips(client in 0u8..2, elem_size: u8, page_bits: u8, nelmts: u64, dblock in prop::option::of(0u64..u64::MAX)) {
            let h = FixedArrayHeader { client, elem_size, page_bits, nelmts, dblock };
            let b = h.encode(Sizes::default());
            prop_assert_eq!(b.len() as u64, FixedArrayHeader::encoded_len(Sizes::default()));
            prop_assert_eq!(FixedArrayHeader::decode(&b, 0, Sizes::default()).unwrap(), h);
        }

        #[test]
        fn elements_round_trip(a in prop::option::of(0u64..u64::MAX), size: u64, w in prop::option::of(1usize..=8), mask: u32) {
            let f = ElementFormat { addr_len: 8, size_len: w };
            let size = match w { Some(w) if w < 8 => size & ((1u64 << (8 * w)) - 1), Some(_) => size, None => 100 };
            let mask = if w.is_some() { mask } else { 0 };
            let mut b = Vec::new();
            f.encode(a.map(|a| (a, size, mask)), &mut b);
            prop_assert_eq!(b.len(), f.len());
            let got = f.decode(&mut Cursor::new(&b, 0, "t"), 100).unwrap();
            prop_assert_eq!(got, a.map(|a| (a, size, mask)));
        }
    }
}
