//! Encoders for the object header messages the writer emits (HDF5 File Format
//! Specification IV.A.2): dataspace (v2, 0x0001), link info (0x0002), datatype
//! (0x0003, in `datatype_message.rs`), fill value (v3, 0x0005), link (0x0006), data layout
//! (v3 compact/contiguous, v4 chunked, 0x0008), group info (0x000A), filter
//! pipeline (v2, 0x000B), attribute (v3, 0x000C) and attribute info (0x0015).
//! Every encoder appends little-endian bytes to a `Vec<u8>`; none parses.

pub use super::datatype_message::datatype;
use crate::error::{Error, Result};
use crate::filters::FilterSpec;

/// The undefined address (all bits set).
pub const UNDEF: u64 = u64::MAX;

/// Message type numbers.
pub mod kind {
    pub const DATASPACE: u8 = 0x01;
    pub const LINK_INFO: u8 = 0x02;
    pub const DATATYPE: u8 = 0x03;
    pub const FILL_VALUE: u8 = 0x05;
    pub const LINK: u8 = 0x06;
    pub const LAYOUT: u8 = 0x08;
    pub const GROUP_INFO: u8 = 0x0A;
    pub const FILTER_PIPELINE: u8 = 0x0B;
    pub const ATTRIBUTE: u8 = 0x0C;
    pub const CONTINUATION: u8 = 0x10;
    pub const ATTRIBUTE_INFO: u8 = 0x15;
    pub const REFCOUNT: u8 = 0x16;
}

/// The shape of a dataset or attribute (dataspace message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Space {
    /// One element, rank 0.
    Scalar,
    /// No elements at all.
    Null,
    /// `dims` with optional maximum sizes (`None` = unlimited). `max` empty means fixed.
    Simple {
        dims: Vec<u64>,
        max: Vec<Option<u64>>,
    },
}

impl Space {
    /// The writer's dataspace for one read from a file (maximum sizes kept
    /// only when some differ from the current ones), as copies need it.
    pub fn from_read(ds: &crate::hdf5fmt::messages::dataspace::Dataspace) -> Space {
        use crate::hdf5fmt::messages::dataspace::SpaceKind;
        match ds.kind {
            SpaceKind::Scalar => Space::Scalar,
            SpaceKind::Null => Space::Null,
            SpaceKind::Simple => {
                let fixed = ds.max_dims.len() != ds.dims.len()
                    || ds
                        .max_dims
                        .iter()
                        .zip(&ds.dims)
                        .all(|(m, d)| *m == Some(*d));
                Space::Simple {
                    dims: ds.dims.clone(),
                    max: if fixed {
                        Vec::new()
                    } else {
                        ds.max_dims.clone()
                    },
                }
            }
        }
    }

    /// A fixed simple dataspace.
    pub fn simple(dims: &[u64]) -> Self {
        Space::Simple {
            dims: dims.to_vec(),
            max: Vec::new(),
        }
    }

    /// Number of elements (0 for null).
    pub fn num_elements(&self) -> Option<u64> {
        match self {
            Space::Scalar => Some(1),
            Space::Null => Some(0),
            Space::Simple { dims, .. } => dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d)),
        }
    }

    /// Current dimensions (empty for scalar and null).
    pub fn dims(&self) -> &[u64] {
        match self {
            Space::Simple { dims, .. } => dims,
            _ => &[],
        }
    }

    /// Maximum dimensions (`None` = unlimited); equal to dims when fixed.
    pub fn max_dims(&self) -> Vec<Option<u64>> {
        match self {
            Space::Simple { max, .. } if !max.is_empty() => max.clone(),
            Space::Simple { dims, .. } => dims.iter().map(|&d| Some(d)).collect(),
            _ => Vec::new(),
        }
    }
}

/// Bytes needed to hold values from 0 to `limit` (HDF5's `limit_enc_size`).
pub fn limit_enc_size(limit: u64) -> usize {
    (log2_floor(limit) / 8 + 1) as usize
}

/// Floor of log2 (0 for 0).
pub fn log2_floor(v: u64) -> u32 {
    if v == 0 {
        0
    } else {
        63 - v.leading_zeros()
    }
}

/// Append the low `n` bytes of `v`, little-endian.
pub fn put_var(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend_from_slice(&v.to_le_bytes()[..n.min(8)]);
}

pub(super) fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub(super) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn u16_len(n: usize, what: &str) -> Result<u16> {
    u16::try_from(n).map_err(|_| Error::InvalidArgument(format!("{what} too long ({n} bytes)")))
}

/// Dataspace message, version 2.
pub fn dataspace(space: &Space) -> Vec<u8> {
    let mut out = vec![2u8];
    match space {
        Space::Scalar => out.extend_from_slice(&[0, 0, 0]),
        Space::Null => out.extend_from_slice(&[0, 0, 2]),
        Space::Simple { dims, .. } => {
            let max = space.max_dims();
            let has_max = max.iter().zip(dims).any(|(m, d)| *m != Some(*d));
            out.push(dims.len() as u8);
            out.push(u8::from(has_max));
            out.push(1);
            for &d in dims {
                put_u64(&mut out, d);
            }
            if has_max {
                for m in max {
                    put_u64(&mut out, m.unwrap_or(UNDEF));
                }
            }
        }
    }
    out
}

/// Shared message, version 3, pointing at a committed object's header (type 2).
pub fn shared_committed(address: u64) -> Vec<u8> {
    let mut out = vec![3, 2];
    put_u64(&mut out, address);
    out
}

/// When storage space is allocated (fill value message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocTime {
    Early = 1,
    Late = 2,
    Incremental = 3,
}

/// Fill value message, version 3; fill written "if set".
pub fn fill_value(alloc: AllocTime, value: Option<&[u8]>) -> Result<Vec<u8>> {
    let mut flags = alloc as u8 | (2 << 2);
    if value.is_some() {
        flags |= 1 << 5;
    }
    let mut out = vec![3, flags];
    if let Some(v) = value {
        let n = u32::try_from(v.len())
            .map_err(|_| Error::InvalidArgument("fill value too large".into()))?;
        put_u32(&mut out, n);
        out.extend_from_slice(v);
    }
    Ok(out)
}

/// Layout message v3, compact storage holding `data`.
pub fn layout_compact(data: &[u8]) -> Result<Vec<u8>> {
    let mut out = vec![3, 0];
    put_u16(&mut out, u16_len(data.len(), "compact data")?);
    out.extend_from_slice(data);
    Ok(out)
}

/// Layout message v3, contiguous storage.
pub fn layout_contiguous(address: u64, size: u64) -> Vec<u8> {
    let mut out = vec![3, 1];
    put_u64(&mut out, address);
    put_u64(&mut out, size);
    out
}

/// Chunk index chosen for a chunked layout, with its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChunkIndexInfo {
    /// One chunk; `filtered` holds (stored size, filter mask) when the pipeline is not empty.
    Single { filtered: Option<(u64, u32)> },
    /// Fixed array with `page_bits`.
    FixedArray { page_bits: u8 },
    /// Extensible array parameters.
    ExtensibleArray {
        max_bits: u8,
        index_elements: u8,
        min_pointers: u8,
        min_elements: u8,
        page_bits: u8,
    },
    /// Version 2 B-tree.
    BTreeV2 {
        node_size: u32,
        split: u8,
        merge: u8,
    },
}

/// Layout message v4, chunked storage. `chunk_dims` excludes the element size.
pub fn layout_chunked(
    chunk_dims: &[u64],
    element_size: u64,
    index: &ChunkIndexInfo,
    address: u64,
) -> Vec<u8> {
    let mut dims: Vec<u64> = chunk_dims.to_vec();
    dims.push(element_size);
    let max = dims.iter().copied().max().unwrap_or(1);
    let enc = limit_enc_size(max).min(8);
    let flags = match index {
        ChunkIndexInfo::Single { filtered: Some(_) } => 2u8,
        _ => 0,
    };
    let mut out = vec![4, 2, flags, dims.len() as u8, enc as u8];
    for d in &dims {
        put_var(&mut out, *d, enc);
    }
    match index {
        ChunkIndexInfo::Single { filtered } => {
            out.push(1);
            if let Some((size, mask)) = filtered {
                put_u64(&mut out, *size);
                put_u32(&mut out, *mask);
            }
        }
        ChunkIndexInfo::FixedArray { page_bits } => out.extend_from_slice(&[3, *page_bits]),
        ChunkIndexInfo::ExtensibleArray {
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
        ChunkIndexInfo::BTreeV2 {
            node_size,
            split,
            merge,
        } => {
            out.push(5);
            put_u32(&mut out, *node_size);
            out.extend_from_slice(&[*split, *merge]);
        }
    }
    put_u64(&mut out, address);
    out
}

/// Filter pipeline message, version 2.
pub fn filter_pipeline(filters: &[FilterSpec]) -> Result<Vec<u8>> {
    if filters.len() > 32 {
        return Err(Error::InvalidArgument("more than 32 filters".into()));
    }
    let mut out = vec![2, filters.len() as u8];
    for f in filters {
        let id = u16::try_from(f.id)
            .map_err(|_| Error::InvalidArgument(format!("filter id {} too large", f.id)))?;
        put_u16(&mut out, id);
        let name: Vec<u8> = match (&f.name, id >= 256) {
            (Some(n), true) => {
                let mut v = n.as_bytes().to_vec();
                v.push(0);
                v
            }
            _ => Vec::new(),
        };
        if id >= 256 {
            put_u16(&mut out, u16_len(name.len(), "filter name")?);
        }
        put_u16(&mut out, f.flags);
        put_u16(&mut out, u16_len(f.cd_values.len(), "filter client data")?);
        out.extend_from_slice(&name);
        for &c in &f.cd_values {
            put_u32(&mut out, c);
        }
    }
    Ok(out)
}

/// Target of a link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkTarget {
    /// Hard link to the object header at this address.
    Hard(u64),
    /// Soft link to a path.
    Soft(String),
    /// External link: object `path` in file `file` (link type 64).
    External { file: String, path: String },
}

/// Link message, version 1.
pub fn link(name: &str, target: &LinkTarget) -> Result<Vec<u8>> {
    link_ordered(name, target, None)
}

/// Link message, version 1, with its creation order when the group tracks it.
pub fn link_ordered(name: &str, target: &LinkTarget, order: Option<u64>) -> Result<Vec<u8>> {
    let nlen = name.len();
    if nlen == 0 {
        return Err(Error::InvalidArgument("empty link name".into()));
    }
    let (size_code, size_bytes) = match nlen {
        0..=0xFF => (0u8, 1),
        0x100..=0xFFFF => (1, 2),
        _ => (2, 4),
    };
    let utf8 = !name.is_ascii();
    let link_type = match target {
        LinkTarget::Hard(_) => None,
        LinkTarget::Soft(_) => Some(1u8),
        LinkTarget::External { .. } => Some(64),
    };
    let flags = size_code
        | (u8::from(order.is_some()) << 2)
        | (u8::from(link_type.is_some()) << 3)
        | (u8::from(utf8) << 4);
    let mut out = vec![1, flags];
    if let Some(t) = link_type {
        out.push(t);
    }
    if let Some(o) = order {
        put_u64(&mut out, o);
    }
    if utf8 {
        out.push(1);
    }
    put_var(&mut out, nlen as u64, size_bytes);
    out.extend_from_slice(name.as_bytes());
    match target {
        LinkTarget::Hard(addr) => put_u64(&mut out, *addr),
        LinkTarget::Soft(path) => {
            put_u16(&mut out, u16_len(path.len(), "soft link path")?);
            out.extend_from_slice(path.as_bytes());
        }
        LinkTarget::External { file, path } => {
            // version 0, no flags, then two null-terminated names
            let len = 1 + file.len() + 1 + path.len() + 1;
            put_u16(&mut out, u16_len(len, "external link")?);
            out.push(0);
            out.extend_from_slice(file.as_bytes());
            out.push(0);
            out.extend_from_slice(path.as_bytes());
            out.push(0);
        }
    }
    Ok(out)
}

/// Link info message, version 0 (no creation order).
pub fn link_info(heap: u64, name_index: u64) -> Vec<u8> {
    let mut out = vec![0, 0];
    put_u64(&mut out, heap);
    put_u64(&mut out, name_index);
    out
}

/// Link info message, version 0, with creation-order flags `bits` (1 tracked:
/// `max_order` written; 2 indexed: `order_index` written).
pub fn link_info_ordered(
    bits: u8,
    max_order: Option<u64>,
    heap: u64,
    name_index: u64,
    order_index: u64,
) -> Vec<u8> {
    ordered_info(
        bits,
        |out| put_u64(out, max_order.unwrap_or(0)),
        heap,
        name_index,
        order_index,
    )
}

/// Attribute info message, version 0, with creation-order flags `bits` (as
/// [`link_info_ordered`]; the maximum creation index is 16 bits).
pub fn attribute_info_ordered(
    bits: u8,
    max_order: Option<u16>,
    heap: u64,
    name_index: u64,
    order_index: u64,
) -> Vec<u8> {
    ordered_info(
        bits,
        |out| put_u16(out, max_order.unwrap_or(0)),
        heap,
        name_index,
        order_index,
    )
}

/// The shared layout of the link info and attribute info messages: version,
/// flags, the maximum creation index (its width differs) when tracked, the
/// heap and name index, the creation-order index when indexed.
fn ordered_info(
    bits: u8,
    put_max: impl FnOnce(&mut Vec<u8>),
    heap: u64,
    name_index: u64,
    order_index: u64,
) -> Vec<u8> {
    let mut out = vec![0, bits & 3];
    if bits & 1 != 0 {
        put_max(&mut out);
    }
    put_u64(&mut out, heap);
    put_u64(&mut out, name_index);
    if bits & 2 != 0 {
        put_u64(&mut out, order_index);
    }
    out
}

/// Group info message, version 0, default phase-change values.
pub fn group_info() -> Vec<u8> {
    vec![0, 0]
}

/// Attribute info message, version 0 (no creation order).
pub fn attribute_info(heap: u64, name_index: u64) -> Vec<u8> {
    let mut out = vec![0, 0];
    put_u64(&mut out, heap);
    put_u64(&mut out, name_index);
    out
}

/// Object reference count message (0x16), version 0: the number of hard links
/// to an object whose header is version 2.
pub fn refcount(count: u32) -> Vec<u8> {
    let mut out = vec![0];
    put_u32(&mut out, count);
    out
}

/// Attribute message, version 3: `dtype_msg` and `space_msg` are encoded messages,
/// `data` the raw element bytes.
pub fn attribute(name: &str, dtype_msg: &[u8], space_msg: &[u8], data: &[u8]) -> Result<Vec<u8>> {
    attribute_with_flags(name, 0, dtype_msg, space_msg, data)
}

/// [`attribute`] with message flags (bit 0: `dtype_msg` is a shared datatype
/// message pointing at a committed datatype).
pub fn attribute_with_flags(
    name: &str,
    flags: u8,
    dtype_msg: &[u8],
    space_msg: &[u8],
    data: &[u8],
) -> Result<Vec<u8>> {
    if name.is_empty() || name.as_bytes().contains(&0) {
        return Err(Error::InvalidArgument(format!(
            "bad attribute name {name:?}"
        )));
    }
    let mut out = vec![3, flags & 1];
    put_u16(&mut out, u16_len(name.len() + 1, "attribute name")?);
    put_u16(&mut out, u16_len(dtype_msg.len(), "attribute datatype")?);
    put_u16(&mut out, u16_len(space_msg.len(), "attribute dataspace")?);
    out.push(u8::from(!name.is_ascii()));
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    out.extend_from_slice(dtype_msg);
    out.extend_from_slice(space_msg);
    out.extend_from_slice(data);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_link_message() {
        let b = link(
            "e",
            &LinkTarget::External {
                file: "f.h5".into(),
                path: "/x".into(),
            },
        )
        .unwrap();
        let mut want = vec![1, 0x08, 64, 1, b'e', 9, 0, 0];
        want.extend_from_slice(b"f.h5\0/x\0");
        assert_eq!(b, want);
    }

    #[test]
    fn dataspace_simple_with_unlimited() {
        let s = Space::Simple {
            dims: vec![3],
            max: vec![None],
        };
        let b = dataspace(&s);
        assert_eq!(&b[..4], &[2, 1, 1, 1]);
        assert_eq!(&b[4..12], &3u64.to_le_bytes());
        assert_eq!(&b[12..20], &[0xFF; 8]);
        assert_eq!(dataspace(&Space::Scalar), vec![2, 0, 0, 0]);
        assert_eq!(dataspace(&Space::Null), vec![2, 0, 0, 2]);
    }

    #[test]
    fn limit_enc_sizes() {
        assert_eq!(limit_enc_size(0), 1);
        assert_eq!(limit_enc_size(255), 1);
        assert_eq!(limit_enc_size(256), 2);
        assert_eq!(limit_enc_size(65535), 2);
        assert_eq!(limit_enc_size(65536), 3);
    }

    #[test]
    fn link_messages() {
        let b = link("a", &LinkTarget::Hard(0x30)).unwrap();
        assert_eq!(b, vec![1, 0, 1, b'a', 0x30, 0, 0, 0, 0, 0, 0, 0]);
        let s = link("é", &LinkTarget::Soft("/x".into())).unwrap();
        assert_eq!(s, vec![1, 0x18, 1, 1, 2, 0xC3, 0xA9, 2, 0, b'/', b'x']);
    }

    #[test]
    fn layout_chunked_fixed_array() {
        let b = layout_chunked(
            &[10, 20],
            4,
            &ChunkIndexInfo::FixedArray { page_bits: 10 },
            0x100,
        );
        assert_eq!(&b[..5], &[4, 2, 0, 3, 1]);
        assert_eq!(&b[5..8], &[10, 20, 4]);
        assert_eq!(&b[8..10], &[3, 10]);
        assert_eq!(&b[10..], &0x100u64.to_le_bytes());
    }
}
