//! Encoders for the object header messages the writer emits (HDF5 File Format
//! Specification IV.A.2) that have not yet moved beside their decoders in
//! [`crate::hdf5fmt::messages`]: link info, datatype (in `datatype_message.rs`),
//! fill value (v3), group info, filter pipeline (v2), attribute (v3), attribute
//! info and reference count. The dataspace, link and data layout encoders live
//! with their decoders. Every encoder appends little-endian bytes to a
//! `Vec<u8>`; none parses.

pub use super::datatype_message::datatype;
use crate::error::{Error, Result};
use crate::filters::FilterSpec;

use crate::hdf5fmt::encode::{put_u16, put_u32, put_u64, u16_len};

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
