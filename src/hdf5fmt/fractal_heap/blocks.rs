//! Fractal heap direct blocks (`FHDB`) and indirect blocks (`FHIB`)
//! (HDF5 File Format Specification III.G, "Fractal Heap Direct Block",
//! "Fractal Heap Indirect Block").

use std::borrow::Cow;

use crate::btree_v2::verify_checksum;
use crate::checksum::metadata_checksum;
use crate::cursor::{bounded, Cursor};
use crate::error::{Error, Result};
use crate::limits;
use crate::signature;
use crate::source::Source;
use crate::Sizes;
use purehdf_filters::{decode_pipeline, ChunkContext};

use super::header::HeapHeader;

pub(crate) const DIRECT: &str = "fractal heap direct block";
pub(crate) const INDIRECT: &str = "fractal heap indirect block";
/// Most child entries accepted in one indirect block.
const MAX_ENTRIES: u64 = 1 << 20;

/// One child direct block of an indirect block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirectEntry {
    /// Address of the child direct block; `None` when undefined (all ones: the block is not
    /// allocated).
    pub address: Option<u64>,
    /// Stored size and filter mask (filtered heaps only).
    pub filtered: Option<(u64, u32)>,
}

/// A parsed indirect block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndirectBlock {
    /// Address of the indirect block (`FHIB` signature) in the file.
    pub address: u64,
    /// Block offset: offset, within the heap's address space, of the first byte this indirect block
    /// covers.
    pub block_offset: u64,
    /// Number of rows of child blocks in this block (direct rows first, then indirect rows).
    pub nrows: usize,
    /// `width` entries per direct row, row-major.
    pub direct: Vec<DirectEntry>,
    /// `width` entries per indirect row, row-major, starting at the first indirect row.
    pub indirect: Vec<Option<u64>>,
}

/// Bytes of a direct block's header (signature .. block offset, plus checksum).
pub fn direct_overhead(hdr: &HeapHeader, sizes: Sizes) -> u64 {
    let sum = if hdr.checksum_direct_blocks() { 4 } else { 0 };
    4 + 1 + u64::from(sizes.offset) + hdr.table.offset_size() as u64 + sum
}

/// Parse the indirect block at `address` holding `nrows` rows.
pub fn parse_indirect(
    src: &dyn Source,
    sizes: Sizes,
    hdr: &HeapHeader,
    heap_address: u64,
    address: u64,
    nrows: usize,
) -> Result<IndirectBlock> {
    let t = &hdr.table;
    let width = t.width;
    let drows = nrows.min(t.max_direct_rows()) as u64;
    let irows = nrows.saturating_sub(t.max_direct_rows()) as u64;
    let ndirect = drows * width;
    let nindirect = irows * width;
    if ndirect + nindirect > MAX_ENTRIES {
        return Err(Error::Limit {
            structure: INDIRECT,
            offset: address,
            what: "child entries",
            value: ndirect + nindirect,
            limit: MAX_ENTRIES,
        });
    }
    let (o, l) = (u64::from(sizes.offset), u64::from(sizes.length));
    let filtered = !hdr.pipeline.is_empty() || hdr.filter_len > 0;
    let dsize = if filtered { o + l + 4 } else { o };
    let len = 4 + 1 + o + t.offset_size() as u64 + ndirect * dsize + nindirect * o + 4;
    let bytes = src.read(INDIRECT, address, len)?;
    let mut c = Cursor::new(&bytes, address, INDIRECT);
    c.signature(signature::FHIB)?;
    let version = c.u8()?;
    if version != 0 {
        return Err(c.unsupported(format!("version {version}")));
    }
    let owner = c.uint(usize::from(sizes.offset))?;
    if owner != heap_address {
        return Err(c.malformed(format!("belongs to heap {owner:#x}, not {heap_address:#x}")));
    }
    let block_offset = c.uint(t.offset_size())?;
    verify_checksum(&bytes, address, INDIRECT)?;
    let mut direct = Vec::with_capacity(ndirect as usize);
    for _ in 0..ndirect {
        let address = c.addr(sizes.offset)?;
        let filtered = if filtered {
            Some((c.length(sizes.length)?, c.u32()?))
        } else {
            None
        };
        direct.push(DirectEntry { address, filtered });
    }
    let mut indirect = Vec::with_capacity(nindirect as usize);
    for _ in 0..nindirect {
        indirect.push(c.addr(sizes.offset)?);
    }
    Ok(IndirectBlock {
        address,
        block_offset,
        nrows,
        direct,
        indirect,
    })
}

/// Where a direct block is and what it should contain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirectRef {
    /// Address of the direct block (`FHDB` signature) in the file.
    pub address: u64,
    /// Decoded size of the block (its row's block size).
    pub size: u64,
    /// Heap offset of the block's first byte.
    pub block_offset: u64,
    /// Stored size and filter mask, for filtered heaps.
    pub filtered: Option<(u64, u32)>,
}

/// Read, un-filter and verify a direct block. Returns the whole decoded block.
pub fn read_direct<'s>(
    src: &'s dyn Source,
    sizes: Sizes,
    hdr: &HeapHeader,
    heap_address: u64,
    r: DirectRef,
) -> Result<Cow<'s, [u8]>> {
    let DirectRef {
        address,
        size,
        block_offset,
        filtered,
    } = r;
    let block: Cow<'s, [u8]> = match filtered {
        Some((stored, mask)) => {
            bounded(
                stored,
                limits::MAX_READ,
                DIRECT,
                address,
                "filtered block size",
            )?;
            let n = bounded(size, limits::MAX_DECODED, DIRECT, address, "block size")?;
            let raw = src.read(DIRECT, address, stored)?;
            let out = decode_pipeline(&hdr.pipeline, mask, &ChunkContext::new(1, n), &raw)?;
            if out.len() as u64 != size {
                return Err(Error::malformed(
                    DIRECT,
                    address,
                    format!("decodes to {} bytes, expected {size}", out.len()),
                ));
            }
            Cow::Owned(out)
        }
        None => src.read(DIRECT, address, size)?,
    };
    let mut c = Cursor::new(&block, address, DIRECT);
    c.signature(signature::FHDB)?;
    let version = c.u8()?;
    if version != 0 {
        return Err(c.unsupported(format!("version {version}")));
    }
    let owner = c.uint(usize::from(sizes.offset))?;
    if owner != heap_address {
        return Err(c.malformed(format!("belongs to heap {owner:#x}, not {heap_address:#x}")));
    }
    let off = c.uint(hdr.table.offset_size())?;
    if off != block_offset {
        return Err(c.malformed(format!("block offset {off}, expected {block_offset}")));
    }
    if hdr.checksum_direct_blocks() {
        let at = c.pos();
        let stored = c.u32()?;
        // The checksum covers the whole block with its own field zeroed.
        let mut copy = block.to_vec();
        if let Some(field) = copy.get_mut(at..at + 4) {
            field.fill(0);
        }
        let computed = metadata_checksum(&copy);
        if stored != computed {
            return Err(Error::Checksum {
                structure: DIRECT,
                offset: address,
                stored,
                computed,
            });
        }
    }
    Ok(block)
}
