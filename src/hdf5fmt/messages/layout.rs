//! Data layout message (HDF5 File Format Specification IV.A.2.i), versions 1–5:
//! compact, contiguous, chunked (with the chunk-index parameters) and virtual.

use crate::error::Result;
use crate::hdf5fmt::chunk_index::{ChunkIndexKind, ChunkIndexParams};
use crate::hdf5fmt::cursor::Cursor;
use crate::hdf5fmt::messages::dataspace::Dataspace;
use crate::hdf5fmt::{limits, Sizes};

/// How a dataset's raw data is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Data inside the layout message.
    Compact { data: Vec<u8> },
    /// One block at `address` (`None` = never written). `size` is stored from
    /// version 3 on; older messages imply it from the dataspace and datatype.
    Contiguous {
        address: Option<u64>,
        size: Option<u64>,
    },
    /// Chunks found through an index.
    Chunked {
        version: u8,
        /// Chunk dimensions in elements (the trailing element-size entry removed).
        chunk_dims: Vec<u64>,
        /// The trailing "dimension" that stores the element size.
        element_size: u64,
        /// Version 4+ flags (bit 0: partial edge chunks unfiltered).
        flags: u8,
        kind: ChunkIndexKind,
        address: Option<u64>,
    },
    /// A virtual dataset: its mapping lives in the global heap.
    Virtual {
        heap_address: Option<u64>,
        index: u32,
    },
}

impl Layout {
    /// `"compact"`, `"contiguous"`, `"chunked"` or `"virtual"`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Layout::Compact { .. } => "compact",
            Layout::Contiguous { .. } => "contiguous",
            Layout::Chunked { .. } => "chunked",
            Layout::Virtual { .. } => "virtual",
        }
    }

    /// The chunk-index parameters of a chunked layout, for the given dataspace,
    /// element size and whether a filter pipeline is present.
    pub fn chunk_params(
        &self,
        space: &Dataspace,
        element_size: u32,
        filtered: bool,
    ) -> Option<ChunkIndexParams> {
        match self {
            Layout::Chunked {
                version,
                chunk_dims,
                kind,
                address,
                ..
            } => Some(ChunkIndexParams {
                kind: kind.clone(),
                address: *address,
                chunk_dims: chunk_dims.clone(),
                dataset_dims: space.dims.clone(),
                max_dims: space.max_dims.clone(),
                element_size,
                filtered,
                layout_version: *version,
            }),
            _ => None,
        }
    }

    /// Decode a layout message body.
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let version = c.u8()?;
        match version {
            1 | 2 => decode_v1(c, sizes, version),
            3..=5 => decode_v3(c, sizes, version),
            v => Err(c.unsupported(format!("layout message version {v}"))),
        }
    }
}

fn rank(c: &mut Cursor<'_>) -> Result<usize> {
    let n = usize::from(c.u8()?);
    if n == 0 || n > limits::MAX_RANK + 1 {
        return Err(c.malformed(format!("layout dimensionality {n}")));
    }
    Ok(n)
}

fn split_element_size(mut dims: Vec<u64>) -> (Vec<u64>, u64) {
    let e = dims.pop().unwrap_or(0);
    (dims, e)
}

fn decode_v1(c: &mut Cursor<'_>, sizes: Sizes, version: u8) -> Result<Layout> {
    let ndims = rank(c)?;
    let class = c.u8()?;
    c.skip(5)?;
    let address = if class != 0 {
        c.addr(sizes.offset)?
    } else {
        None
    };
    let mut dims = Vec::with_capacity(ndims);
    for _ in 0..ndims {
        dims.push(u64::from(c.u32()?));
    }
    match class {
        0 => {
            let n = c.u32()?;
            let data = c.bytes_u64(u64::from(n))?.to_vec();
            Ok(Layout::Compact { data })
        }
        1 => Ok(Layout::Contiguous {
            address,
            size: None,
        }),
        2 => {
            let (chunk_dims, element_size) = split_element_size(dims);
            Ok(Layout::Chunked {
                version,
                chunk_dims,
                element_size,
                flags: 0,
                kind: ChunkIndexKind::BTreeV1,
                address,
            })
        }
        k => Err(c.malformed(format!("layout class {k}"))),
    }
}

fn decode_v3(c: &mut Cursor<'_>, sizes: Sizes, version: u8) -> Result<Layout> {
    let class = c.u8()?;
    match class {
        0 => {
            let n = c.u16()?;
            let data = c.bytes(usize::from(n))?.to_vec();
            Ok(Layout::Compact { data })
        }
        1 => {
            let address = c.addr(sizes.offset)?;
            let size = c.length(sizes.length)?;
            Ok(Layout::Contiguous {
                address,
                size: Some(size),
            })
        }
        2 if version == 3 => {
            let ndims = rank(c)?;
            let address = c.addr(sizes.offset)?;
            let mut dims = Vec::with_capacity(ndims);
            for _ in 0..ndims {
                dims.push(u64::from(c.u32()?));
            }
            let (chunk_dims, element_size) = split_element_size(dims);
            Ok(Layout::Chunked {
                version,
                chunk_dims,
                element_size,
                flags: 0,
                kind: ChunkIndexKind::BTreeV1,
                address,
            })
        }
        2 => {
            let flags = c.u8()?;
            let ndims = rank(c)?;
            let enc = usize::from(c.u8()?);
            if !(1..=8).contains(&enc) {
                return Err(c.malformed(format!("chunk dimension encoding size {enc}")));
            }
            let mut dims = Vec::with_capacity(ndims);
            for _ in 0..ndims {
                dims.push(c.uint(enc)?);
            }
            let kind = match c.u8()? {
                1 => {
                    if flags & 0x02 != 0 {
                        ChunkIndexKind::SingleChunk {
                            filtered_size: c.length(sizes.length)?,
                            filter_mask: c.u32()?,
                        }
                    } else {
                        ChunkIndexKind::SingleChunk {
                            filtered_size: 0,
                            filter_mask: 0,
                        }
                    }
                }
                2 => ChunkIndexKind::Implicit,
                3 => ChunkIndexKind::FixedArray { page_bits: c.u8()? },
                4 => ChunkIndexKind::ExtensibleArray {
                    max_bits: c.u8()?,
                    index_elements: c.u8()?,
                    min_pointers: c.u8()?,
                    min_elements: c.u8()?,
                    page_bits: c.u8()?,
                },
                5 => ChunkIndexKind::BTreeV2 {
                    node_size: c.u32()?,
                    split_percent: c.u8()?,
                    merge_percent: c.u8()?,
                },
                t => return Err(c.malformed(format!("chunk index type {t}"))),
            };
            let address = c.addr(sizes.offset)?;
            let (chunk_dims, element_size) = split_element_size(dims);
            Ok(Layout::Chunked {
                version,
                chunk_dims,
                element_size,
                flags,
                kind,
                address,
            })
        }
        3 if version >= 4 => {
            let heap_address = c.addr(sizes.offset)?;
            let index = c.u32()?;
            Ok(Layout::Virtual {
                heap_address,
                index,
            })
        }
        k => Err(c.malformed(format!("layout class {k}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(b: &[u8]) -> Result<Layout> {
        Layout::decode(&mut Cursor::new(b, 0, "layout"), Sizes::default())
    }

    #[test]
    fn v3_contiguous_compact_chunked() {
        let mut b = vec![3u8, 1];
        b.extend_from_slice(&0x800u64.to_le_bytes());
        b.extend_from_slice(&96u64.to_le_bytes());
        assert_eq!(
            dec(&b).unwrap(),
            Layout::Contiguous {
                address: Some(0x800),
                size: Some(96)
            }
        );
        assert_eq!(
            dec(&[3, 0, 2, 0, 5, 6]).unwrap(),
            Layout::Compact { data: vec![5, 6] }
        );
        let mut b = vec![3u8, 2, 3];
        b.extend_from_slice(&[0xff; 8]);
        for d in [10u32, 20, 4] {
            b.extend_from_slice(&d.to_le_bytes());
        }
        let l = dec(&b).unwrap();
        let Layout::Chunked {
            chunk_dims,
            element_size,
            address,
            ..
        } = &l
        else {
            panic!()
        };
        assert_eq!(
            (chunk_dims.as_slice(), *element_size, *address),
            (&[10, 20][..], 4, None)
        );
        let space = Dataspace {
            kind: crate::hdf5fmt::messages::dataspace::SpaceKind::Simple,
            dims: vec![100, 100],
            max_dims: vec![Some(100), None],
        };
        let p = l.chunk_params(&space, 4, false).unwrap();
        assert_eq!(p.kind, ChunkIndexKind::BTreeV1);
        assert_eq!(p.dataset_dims, vec![100, 100]);
    }

    #[test]
    fn v4_indexes() {
        // fixed array, 2 dims encoded in 2 bytes each
        let mut b = vec![4u8, 2, 0, 2, 2, 8, 0, 8, 0, 3, 10];
        b.extend_from_slice(&0x1234u64.to_le_bytes());
        let Layout::Chunked {
            kind,
            address,
            chunk_dims,
            ..
        } = dec(&b).unwrap()
        else {
            panic!()
        };
        assert_eq!(kind, ChunkIndexKind::FixedArray { page_bits: 10 });
        assert_eq!(address, Some(0x1234));
        assert_eq!(chunk_dims, vec![8]);
        // single chunk, filtered
        let mut b = vec![4u8, 2, 2, 2, 1, 4, 4, 1];
        b.extend_from_slice(&77u64.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&0x99u64.to_le_bytes());
        let Layout::Chunked { kind, .. } = dec(&b).unwrap() else {
            panic!()
        };
        assert_eq!(
            kind,
            ChunkIndexKind::SingleChunk {
                filtered_size: 77,
                filter_mask: 1
            }
        );
        // virtual
        let mut b = vec![4u8, 3];
        b.extend_from_slice(&0x40u64.to_le_bytes());
        b.extend_from_slice(&2u32.to_le_bytes());
        assert_eq!(dec(&b).unwrap().kind_name(), "virtual");
    }

    #[test]
    fn v1_and_errors() {
        let mut b = vec![1u8, 2, 1, 0, 0, 0, 0, 0];
        b.extend_from_slice(&0x10u64.to_le_bytes());
        b.extend_from_slice(&[4, 0, 0, 0, 8, 0, 0, 0]);
        assert_eq!(
            dec(&b).unwrap(),
            Layout::Contiguous {
                address: Some(0x10),
                size: None
            }
        );
        assert!(dec(&[3, 7]).is_err());
        assert!(dec(&[6, 1]).is_err());
        assert!(dec(&[3, 0, 9, 0, 1]).is_err());
        assert!(dec(&[4, 2, 0, 1, 9, 1]).is_err());
        assert!(dec(&[]).is_err());
    }
}
