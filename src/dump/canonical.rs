//! Canonical data hashing of `h5 dump --json` (the rules of the corpus oracle,
//! `make_expected.py`): dataset elements, given in file byte order and layout
//! (File Format Specification IV.A.2.d), are turned into the bytes that h5py + numpy
//! would hash:
//!
//! * `raw-le-packed` — no Python objects inside: little-endian, compounds repacked in
//!   file member order without padding, array members expanded in C order, enums as
//!   their base integers, h5py booleans as one byte 0/1, fixed strings as libhdf5
//!   converts them to null-padded memory strings, non-IEEE floats widened to the
//!   numpy float h5py picks.
//! * `object-tlv` — vlen strings / sequences or references inside: elements in C order,
//!   `B`+u64le(len)+bytes for strings, `A`+u64le(count)+payload for arrays, `R` for a
//!   reference, `N`+raw-le-packed bytes for a number, records as their fields.
//! * `raw-file-bytes` — types numpy cannot hold: the stored bytes unchanged.

use sha2::{Digest, Sha256};

use super::float;
use super::numpy::{compound_out_of_order, has_object};
use purehdf::low_level::datatype::{enum_value, ByteOrder, Datatype, StringPad};
use purehdf::{Error, Result};

/// How a dataset's data hash is formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashKind {
    /// `raw-le-packed`: the elements as numpy holds them, little-endian, compounds packed in file
    /// member order (no Python objects inside).
    RawLePacked,
    /// `object-tlv`: a tagged serialisation of elements holding variable-length strings or
    /// sequences or references.
    ObjectTlv,
    /// `raw-file-bytes`: the stored bytes unchanged, for types numpy cannot hold.
    RawFileBytes,
}

impl HashKind {
    /// The name used in the JSON (`hash_kind`).
    pub fn as_str(self) -> &'static str {
        match self {
            HashKind::RawLePacked => "raw-le-packed",
            HashKind::ObjectTlv => "object-tlv",
            HashKind::RawFileBytes => "raw-file-bytes",
        }
    }
}

/// Resolves a variable-length element: given the element's stored bytes (the 4-byte
/// length followed by the global heap ID), returns the heap object's bytes.
pub type VlenResolver<'a> = &'a dyn Fn(&[u8]) -> Result<Vec<u8>>;

/// True when libhdf5 cannot convert `dt` to the memory type h5py asks for, so the
/// oracle reads the stored bytes instead (opaque types with a foreign tag, big-endian
/// bitfields and 32-byte complex numbers, compounds with out-of-order members).
fn conversion_fails(dt: &Datatype) -> bool {
    match dt {
        Datatype::Opaque { tag, .. } => !tag.is_empty() && !tag.starts_with("NUMPY:"),
        Datatype::Bitfield { order, .. } => *order == ByteOrder::Big,
        Datatype::Complex { size, base } => {
            *size == 32
                && matches!(
                    **base,
                    Datatype::Float {
                        order: ByteOrder::Big,
                        ..
                    }
                )
        }
        Datatype::Compound { members, .. } => {
            compound_out_of_order(dt) || members.iter().any(|m| conversion_fails(&m.dtype))
        }
        Datatype::Array { base, .. } | Datatype::Enum { base, .. } => conversion_fails(base),
        _ => false,
    }
}

/// The hash kind the oracle uses for a dataset of `dt`, or `None` when it cannot read
/// the data at all (a type numpy cannot hold that also has vlen data or references).
pub fn hash_kind(dt: &Datatype) -> Option<HashKind> {
    let mappable = dt.numpy_str().is_some() && !conversion_fails(dt);
    if !mappable {
        return (!dt.has_vlen_or_ref()).then_some(HashKind::RawFileBytes);
    }
    Some(if has_object(dt) {
        HashKind::ObjectTlv
    } else {
        HashKind::RawLePacked
    })
}

fn bad(what: &str) -> Error {
    Error::InvalidArgument(format!("canonical bytes: {what}"))
}

fn elem(src: &[u8], offset: u64, len: u64) -> Result<&[u8]> {
    let start = usize::try_from(offset).map_err(|_| bad("offset too large"))?;
    let n = usize::try_from(len).map_err(|_| bad("size too large"))?;
    start
        .checked_add(n)
        .and_then(|end| src.get(start..end))
        .ok_or_else(|| bad("element shorter than its datatype"))
}

/// Little-endian copy of a `bytes.len()`-byte number stored in `order`.
fn push_le(bytes: &[u8], order: ByteOrder, out: &mut Vec<u8>) {
    match order {
        ByteOrder::Big => out.extend(bytes.iter().rev()),
        _ => out.extend_from_slice(bytes),
    }
}

/// An integer with `precision` significant bits at `bit_offset`, converted to the
/// full-precision integer of the same size (sign-extended when signed).
fn push_integer(
    s: &[u8],
    order: ByteOrder,
    signed: bool,
    bit_offset: u16,
    precision: u16,
    out: &mut Vec<u8>,
) {
    let size = s.len();
    if usize::from(precision) == size * 8 && bit_offset == 0 || size > 16 {
        push_le(s, order, out);
        return;
    }
    let bits = float::load_bits(s, order);
    let prec = u32::from(precision).min(128);
    let shifted = if bit_offset >= 128 {
        0
    } else {
        bits >> bit_offset
    };
    let mut v = if prec >= 128 {
        shifted
    } else {
        shifted & ((1u128 << prec) - 1)
    };
    if signed && prec > 0 && prec < 128 && (v >> (prec - 1)) & 1 == 1 {
        v |= !((1u128 << prec) - 1);
    }
    out.extend_from_slice(&v.to_le_bytes()[..size]);
}

/// A fixed-length string as libhdf5 converts it to h5py's null-padded memory string.
pub fn convert_fixed_string(s: &[u8], pad: StringPad, out: &mut Vec<u8>) {
    let n = match pad {
        StringPad::NullPad => {
            out.extend_from_slice(s);
            return;
        }
        StringPad::NullTerm => s.iter().position(|&b| b == 0).unwrap_or(s.len()),
        StringPad::SpacePad => s.len() - s.iter().rev().take_while(|&&b| b == b' ').count(),
    };
    out.extend_from_slice(&s[..n]);
    out.extend(std::iter::repeat_n(0u8, s.len() - n));
}

/// Canonical (`raw-le-packed`) bytes of one element of `dt` stored as `s`.
fn canon_elem(dt: &Datatype, s: &[u8], out: &mut Vec<u8>) -> Result<()> {
    match dt {
        Datatype::Integer {
            order,
            signed,
            bit_offset,
            precision,
            ..
        } => push_integer(s, *order, *signed, *bit_offset, *precision, out),
        Datatype::Bitfield { order, .. } => push_le(s, *order, out),
        Datatype::Float {
            size,
            order,
            layout,
        } => {
            let np = layout
                .numpy_float_size(*size)
                .ok_or_else(|| bad("float without numpy type"))?;
            if np == *size && float::is_ieee(*size, layout) {
                push_le(s, *order, out);
            } else if np == 16
                && *size == 16
                && *order == ByteOrder::Little
                && float::is_x87(layout)
            {
                out.extend_from_slice(s);
            } else {
                let v = float::decode(float::load_bits(s, *order), layout);
                float::encode(v, np, out);
            }
        }
        // numpy complex256 is read without conversion (whatever float layout the
        // file declares); smaller ones are pairs of IEEE floats
        Datatype::Complex { size: 32, .. } => out.extend_from_slice(s),
        Datatype::Complex { base, .. } => {
            let half = base.size();
            canon_elem(base, elem(s, 0, half)?, out)?;
            canon_elem(base, elem(s, half, half)?, out)?;
        }
        Datatype::String { pad, .. } => convert_fixed_string(s, *pad, out),
        Datatype::Opaque { .. } | Datatype::Time { .. } => out.extend_from_slice(s),
        Datatype::Compound { members, .. } => {
            for m in members {
                canon_elem(&m.dtype, elem(s, u64::from(m.offset), m.dtype.size())?, out)?;
            }
        }
        Datatype::Enum { base, members } => {
            if dt.is_bool_enum() {
                let v = enum_value(base, s).unwrap_or(0);
                let _ = members;
                out.push(u8::from(v != 0));
            } else {
                canon_elem(base, s, out)?;
            }
        }
        Datatype::Array { base, dims } => {
            let n = dims
                .iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .ok_or_else(|| bad("array too large"))?;
            let bs = base.size();
            for i in 0..n {
                canon_elem(base, elem(s, i * bs, bs)?, out)?;
            }
        }
        Datatype::VarString { .. } | Datatype::VarSequence { .. } | Datatype::Reference { .. } => {
            return Err(bad(
                "variable-length data or reference in a raw-le-packed hash",
            ))
        }
    }
    Ok(())
}

/// Canonical `raw-le-packed` bytes of consecutive elements of `dt` (file layout).
pub fn canonical_bytes(dt: &Datatype, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let size = dt.size();
    if size == 0 {
        return Ok(());
    }
    let n = data.len() as u64 / size;
    out.reserve(data.len());
    for i in 0..n {
        canon_elem(dt, elem(data, i * size, size)?, out)?;
    }
    Ok(())
}

/// The element count stored at the start of a vlen element (its first 4 bytes).
fn vlen_count(s: &[u8]) -> Result<u64> {
    let b = s
        .get(..4)
        .ok_or_else(|| bad("vlen element shorter than 4 bytes"))?;
    Ok(u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
}

fn push_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// The bytes of a vlen string as h5py returns them (a C string: up to the first NUL).
pub fn vlen_string_bytes(s: &[u8], resolve: VlenResolver) -> Result<Vec<u8>> {
    let n = vlen_count(s)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut bytes = resolve(s)?;
    let n = usize::try_from(n)
        .map_err(|_| bad("vlen length"))?
        .min(bytes.len());
    bytes.truncate(n);
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(nul);
    }
    Ok(bytes)
}

/// The leaf type and multiplicity of nested array types (`Array` flattened).
pub fn flatten_array(dt: &Datatype) -> (&Datatype, u64) {
    let mut cur = dt;
    let mut n = 1u64;
    while let Datatype::Array { base, dims } = cur {
        n = dims.iter().fold(n, |a, &d| a.saturating_mul(d));
        cur = base;
    }
    (cur, n)
}

/// `object-tlv` encoding of one numpy object-array item of `dt` (arrays flattened).
fn tlv_obj(dt: &Datatype, s: &[u8], r: VlenResolver, out: &mut Vec<u8>) -> Result<()> {
    match dt {
        Datatype::VarString { .. } => {
            let b = vlen_string_bytes(s, r)?;
            out.push(b'B');
            push_u64(out, b.len() as u64);
            out.extend_from_slice(&b);
        }
        Datatype::VarSequence { base, .. } => {
            let n = vlen_count(s)?;
            let data = if n == 0 { Vec::new() } else { r(s)? };
            tlv_vlen_array(base, n, &data, r, out)?;
        }
        Datatype::Reference { .. } => out.push(b'R'),
        // a compound numpy reads as a complex number is one number, not a record
        Datatype::Compound { members, .. } if dt.complex_compound_part().is_none() => {
            for m in members {
                tlv_field(
                    &m.dtype,
                    elem(s, u64::from(m.offset), m.dtype.size())?,
                    r,
                    out,
                )?;
            }
        }
        Datatype::Array { .. } => {
            let (leaf, n) = flatten_array(dt);
            let ls = leaf.size();
            for i in 0..n {
                tlv_obj(leaf, elem(s, i * ls, ls)?, r, out)?;
            }
        }
        _ => {
            out.push(b'N');
            canon_elem(dt, s, out)?;
        }
    }
    Ok(())
}

/// `object-tlv` encoding of a record field (`record[name]` in numpy terms).
fn tlv_field(dt: &Datatype, s: &[u8], r: VlenResolver, out: &mut Vec<u8>) -> Result<()> {
    match dt {
        Datatype::Array { base, dims } => {
            let n = dims.iter().fold(1u64, |a, &d| a.saturating_mul(d));
            tlv_ndarray(base, n, s, r, out)
        }
        Datatype::String { pad, .. } => {
            let mut b = Vec::with_capacity(s.len());
            convert_fixed_string(s, *pad, &mut b);
            while b.last() == Some(&0) {
                b.pop();
            }
            out.push(b'B');
            push_u64(out, b.len() as u64);
            out.extend_from_slice(&b);
            Ok(())
        }
        _ => tlv_obj(dt, s, r, out),
    }
}

/// `object-tlv` encoding of a vlen sequence's items. h5py keeps a big-endian numeric
/// base in file byte order but labels the array native, so those bytes are hashed as
/// stored (the oracle's values for such data are byte-swapped garbage).
fn tlv_vlen_array(
    base: &Datatype,
    n: u64,
    data: &[u8],
    r: VlenResolver,
    out: &mut Vec<u8>,
) -> Result<()> {
    if vlen_keeps_file_order(base) {
        let need = n
            .checked_mul(base.size())
            .ok_or_else(|| bad("array too large"))?;
        out.push(b'A');
        push_u64(out, n);
        out.extend_from_slice(elem(data, 0, need)?);
        return Ok(());
    }
    tlv_ndarray(base, n, data, r, out)
}

/// `object-tlv` encoding of a numpy array of `n` items of `dt` stored in `data`.
fn tlv_ndarray(
    dt: &Datatype,
    n: u64,
    data: &[u8],
    r: VlenResolver,
    out: &mut Vec<u8>,
) -> Result<()> {
    let (leaf, mult) = flatten_array(dt);
    let total = n.checked_mul(mult).ok_or_else(|| bad("array too large"))?;
    let ls = leaf.size();
    let need = total
        .checked_mul(ls)
        .ok_or_else(|| bad("array too large"))?;
    let data = elem(data, 0, need)?;
    out.push(b'A');
    push_u64(out, total);
    if has_object(leaf) {
        for i in 0..total {
            tlv_obj(leaf, elem(data, i * ls, ls)?, r, out)?;
        }
        Ok(())
    } else {
        canonical_bytes(leaf, data, out)
    }
}

/// `object-tlv` bytes of consecutive dataset elements of `dt` (file layout).
pub fn tlv_bytes(dt: &Datatype, data: &[u8], r: VlenResolver, out: &mut Vec<u8>) -> Result<()> {
    let size = dt.size();
    if size == 0 {
        return Ok(());
    }
    let n = data.len() as u64 / size;
    for i in 0..n {
        tlv_obj(dt, elem(data, i * size, size)?, r, out)?;
    }
    Ok(())
}

/// Streaming SHA-256 of a dataset's data under the oracle's canonical rules. Feed
/// whole elements in C order with [`DataHasher::update`].
pub struct DataHasher<'a> {
    dt: &'a Datatype,
    kind: HashKind,
    sha: Sha256,
    buf: Vec<u8>,
}

impl<'a> DataHasher<'a> {
    /// A hasher for data of `dt`, or `None` when the oracle would not hash it.
    pub fn new(dt: &'a Datatype) -> Option<Self> {
        Some(DataHasher {
            dt,
            kind: hash_kind(dt)?,
            sha: Sha256::new(),
            buf: Vec::new(),
        })
    }

    /// A hasher with a given kind (attributes hash `raw-le-packed` data of inner
    /// arrays and so on).
    pub fn with_kind(dt: &'a Datatype, kind: HashKind) -> Self {
        DataHasher {
            dt,
            kind,
            sha: Sha256::new(),
            buf: Vec::new(),
        }
    }

    /// The kind of hash being formed.
    pub fn kind(&self) -> HashKind {
        self.kind
    }

    /// Hash more elements (`data.len()` a multiple of the element size).
    pub fn update(&mut self, data: &[u8], resolve: VlenResolver) -> Result<()> {
        match self.kind {
            HashKind::RawFileBytes => {
                self.sha.update(data);
                return Ok(());
            }
            HashKind::RawLePacked => {
                if let Some(order) = plain_numeric(self.dt) {
                    if order != ByteOrder::Big || self.dt.size() == 1 {
                        self.sha.update(data);
                        return Ok(());
                    }
                }
                self.buf.clear();
                canonical_bytes(self.dt, data, &mut self.buf)?;
            }
            HashKind::ObjectTlv => {
                self.buf.clear();
                tlv_bytes(self.dt, data, resolve, &mut self.buf)?;
            }
        }
        self.sha.update(&self.buf);
        Ok(())
    }

    /// Hash bytes that are already canonical.
    pub fn update_canonical(&mut self, bytes: &[u8]) {
        self.sha.update(bytes);
    }

    /// The hex digest.
    pub fn finish(self) -> String {
        hex(&self.sha.finalize())
    }
}

/// True for a big-endian number (or complex number) as a vlen sequence's base: h5py
/// keeps its bytes in file order but labels them native.
pub fn vlen_keeps_file_order(base: &Datatype) -> bool {
    match base {
        Datatype::Complex { base, .. } => plain_numeric(base) == Some(ByteOrder::Big),
        other => plain_numeric(other) == Some(ByteOrder::Big),
    }
}

/// `base` with every byte order set to little-endian (how h5py labels the items of a
/// big-endian vlen sequence).
pub fn relabel_little(base: &Datatype) -> Datatype {
    match base {
        Datatype::Integer {
            size,
            signed,
            bit_offset,
            precision,
            ..
        } => Datatype::Integer {
            size: *size,
            order: ByteOrder::Little,
            signed: *signed,
            bit_offset: *bit_offset,
            precision: *precision,
        },
        Datatype::Float { size, layout, .. } => Datatype::Float {
            size: *size,
            order: ByteOrder::Little,
            layout: *layout,
        },
        Datatype::Complex { size, base } => Datatype::Complex {
            size: *size,
            base: Box::new(relabel_little(base)),
        },
        other => other.clone(),
    }
}

/// `Some(order)` for full-precision integers and IEEE floats, whose canonical form is
/// at most a byte swap.
fn plain_numeric(dt: &Datatype) -> Option<ByteOrder> {
    match dt {
        Datatype::Integer {
            size,
            order,
            bit_offset: 0,
            precision,
            ..
        } if u32::from(*precision) == size * 8 => Some(*order),
        Datatype::Float {
            size,
            order,
            layout,
        } if float::is_ieee(*size, layout) => Some(*order),
        _ => None,
    }
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

#[cfg(test)]
#[path = "canonical_tests.rs"]
mod tests;
