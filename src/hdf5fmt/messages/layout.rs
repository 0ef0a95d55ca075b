//! Data layout message (HDF5 File Format Specification IV.A.2.i): decodes
//! versions 1–5 (compact, contiguous, chunked with the chunk-index parameters,
//! virtual) and encodes versions 3 and 4 (what the writer emits).

use crate::chunk_index::{ChunkIndexKind, ChunkIndexParams};
use crate::cursor::Cursor;
use crate::encode::{limit_enc_size, put_u16, put_u32, put_var, u16_len, UNDEF};
use crate::error::{Error, Result};
use crate::messages::dataspace::Dataspace;
use crate::{limits, Sizes};

/// How a dataset's raw data is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Data inside the layout message.
    Compact {
        /// The raw data bytes, stored in the message itself (their size is a 32-bit field in
        /// versions 1 and 2, a 16-bit one from version 3 on).
        data: Vec<u8>,
    },
    /// One block at `address` (`None` = never written). `size` is stored from
    /// version 3 on; older messages imply it from the dataspace and datatype.
    Contiguous {
        /// Address of the contiguous block in the file; `None` when stored as the undefined address
        /// (all ones: storage never allocated).
        address: Option<u64>,
        /// Size of the contiguous block in bytes (stored from version 3 on; `None` for versions 1
        /// and 2).
        size: Option<u64>,
    },
    /// Chunks found through an index.
    Chunked {
        /// Layout message version (1–5): selects the encoding and which chunk indexes are possible
        /// (below 4: v1 B-tree only).
        version: u8,
        /// Chunk dimensions in elements (the trailing element-size entry removed).
        chunk_dims: Vec<u64>,
        /// The trailing "dimension" that stores the element size.
        element_size: u64,
        /// Version 4+ flags (bit 0: partial edge chunks unfiltered).
        flags: u8,
        /// Chunk indexing type (v1 B-tree for versions below 4; single chunk, implicit, fixed
        /// array, extensible array or v2 B-tree from version 4), with its parameters.
        kind: ChunkIndexKind,
        /// Address of the chunk index (for a single-chunk index, of the chunk itself); `None` when
        /// undefined (all ones: no chunk allocated yet).
        address: Option<u64>,
    },
    /// A virtual dataset: its mapping lives in the global heap.
    Virtual {
        /// Address of the global heap collection holding the virtual dataset's mappings; `None`
        /// when undefined (all ones).
        heap_address: Option<u64>,
        /// Index of the mapping object within that global heap collection.
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

    /// Encode the message. Compact and contiguous layouts are written as
    /// version 3, virtual ones as version 4, chunked ones at their `version`
    /// (3: v1 B-tree index; 4 or 5: any index, chunk dimensions in the fewest
    /// bytes that hold the largest). A single-chunk index stores its filtered
    /// size and mask when `flags` bit 1 is set.
    pub fn encode(&self, sizes: Sizes) -> Result<Vec<u8>> {
        let (off, len) = (usize::from(sizes.offset), usize::from(sizes.length));
        let addr = |out: &mut Vec<u8>, a: &Option<u64>| put_var(out, a.unwrap_or(UNDEF), off);
        let bad = |what: String| Error::InvalidArgument(format!("layout message: {what}"));
        match self {
            Layout::Compact { data } => {
                let mut out = vec![3, 0];
                put_u16(&mut out, u16_len(data.len(), "compact data")?);
                out.extend_from_slice(data);
                Ok(out)
            }
            Layout::Contiguous { address, size } => {
                let size = size.ok_or_else(|| bad("contiguous storage without a size".into()))?;
                let mut out = vec![3, 1];
                addr(&mut out, address);
                put_var(&mut out, size, len);
                Ok(out)
            }
            Layout::Chunked {
                version,
                chunk_dims,
                element_size,
                flags,
                kind,
                address,
            } => {
                let mut dims = chunk_dims.clone();
                dims.push(*element_size);
                let ndims = u8::try_from(dims.len())
                    .ok()
                    .filter(|_| dims.len() <= limits::MAX_RANK + 1)
                    .ok_or_else(|| bad(format!("{} chunk dimensions", dims.len())))?;
                match (version, kind) {
                    (3, ChunkIndexKind::BTreeV1) => {
                        let mut out = vec![3, 2, ndims];
                        addr(&mut out, address);
                        for &d in &dims {
                            let d = u32::try_from(d)
                                .map_err(|_| bad(format!("chunk dimension {d} over 32 bits")))?;
                            put_u32(&mut out, d);
                        }
                        Ok(out)
                    }
                    (4 | 5, _) => {
                        let max = dims.iter().copied().max().unwrap_or(1);
                        let enc = limit_enc_size(max).min(8);
                        let mut out = vec![*version, 2, *flags, ndims, enc as u8];
                        for &d in &dims {
                            put_var(&mut out, d, enc);
                        }
                        match kind {
                            ChunkIndexKind::SingleChunk {
                                filtered_size,
                                filter_mask,
                            } => {
                                out.push(1);
                                if flags & 0x02 != 0 {
                                    put_var(&mut out, *filtered_size, len);
                                    put_u32(&mut out, *filter_mask);
                                }
                            }
                            ChunkIndexKind::Implicit => out.push(2),
                            ChunkIndexKind::FixedArray { page_bits } => {
                                out.extend_from_slice(&[3, *page_bits])
                            }
                            ChunkIndexKind::ExtensibleArray {
                                max_bits,
                                index_elements,
                                min_pointers,
                                min_elements,
                                page_bits,
                            } => out.extend_from_slice(&[
                                4,
                                *max_bits,
                                *index_elements,
                                *min_pointers,
                                *min_elements,
                                *page_bits,
                            ]),
                            ChunkIndexKind::BTreeV2 {
                                node_size,
                                split_percent,
                                merge_percent,
                            } => {
                                out.push(5);
                                put_u32(&mut out, *node_size);
                                out.extend_from_slice(&[*split_percent, *merge_percent]);
                            }
                            ChunkIndexKind::BTreeV1 => {
                                return Err(bad("a v1 B-tree index needs layout version 3".into()))
                            }
                        }
                        addr(&mut out, address);
                        Ok(out)
                    }
                    (v, k) => Err(bad(format!("cannot encode version {v} with {k:?}"))),
                }
            }
            Layout::Virtual {
                heap_address,
                index,
            } => {
                let mut out = vec![4, 3];
                addr(&mut out, heap_address);
                put_u32(&mut out, *index);
                Ok(out)
            }
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
            kind: crate::messages::dataspace::SpaceKind::Simple,
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

    fn round_trip(l: Layout) -> Vec<u8> {
        let b = l.encode(Sizes::default()).unwrap();
        assert_eq!(dec(&b).unwrap(), l, "{b:?}");
        b
    }

    fn chunked(version: u8, flags: u8, kind: ChunkIndexKind, address: Option<u64>) -> Layout {
        Layout::Chunked {
            version,
            chunk_dims: vec![10, 20],
            element_size: 4,
            flags,
            kind,
            address,
        }
    }

    #[test]
    fn encode_bytes_and_round_trip() {
        let b = round_trip(chunked(
            4,
            0,
            ChunkIndexKind::FixedArray { page_bits: 10 },
            Some(0x100),
        ));
        assert_eq!(&b[..5], &[4, 2, 0, 3, 1]);
        assert_eq!(&b[5..8], &[10, 20, 4]);
        assert_eq!(&b[8..10], &[3, 10]);
        assert_eq!(&b[10..], &0x100u64.to_le_bytes());
        let c = round_trip(Layout::Contiguous {
            address: Some(0x800),
            size: Some(96),
        });
        assert_eq!(c.len(), 18);
        assert_eq!(
            round_trip(Layout::Compact { data: vec![5, 6] }),
            vec![3, 0, 2, 0, 5, 6]
        );
        round_trip(Layout::Contiguous {
            address: None,
            size: Some(0),
        });
        round_trip(chunked(3, 0, ChunkIndexKind::BTreeV1, None));
        let single = ChunkIndexKind::SingleChunk {
            filtered_size: 77,
            filter_mask: 1,
        };
        let b = round_trip(chunked(4, 2, single, Some(0x99)));
        assert_eq!(b.len(), 5 + 3 + 1 + 8 + 4 + 8);
        let plain = ChunkIndexKind::SingleChunk {
            filtered_size: 0,
            filter_mask: 0,
        };
        round_trip(chunked(4, 0, plain, None));
        round_trip(chunked(4, 1, ChunkIndexKind::Implicit, Some(64)));
        round_trip(chunked(
            4,
            0,
            ChunkIndexKind::ExtensibleArray {
                max_bits: 32,
                index_elements: 4,
                min_pointers: 4,
                min_elements: 16,
                page_bits: 10,
            },
            Some(0x2000),
        ));
        round_trip(chunked(
            5,
            0,
            ChunkIndexKind::BTreeV2 {
                node_size: 2048,
                split_percent: 100,
                merge_percent: 40,
            },
            Some(0x3000),
        ));
        round_trip(Layout::Virtual {
            heap_address: Some(0x40),
            index: 2,
        });
        // what the encoder cannot write
        assert!(chunked(4, 0, ChunkIndexKind::BTreeV1, None)
            .encode(Sizes::default())
            .is_err());
        assert!(Layout::Contiguous {
            address: None,
            size: None
        }
        .encode(Sizes::default())
        .is_err());
        assert!(Layout::Compact {
            data: vec![0; 70_000]
        }
        .encode(Sizes::default())
        .is_err());
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
