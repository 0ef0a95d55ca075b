//! The datatype model (HDF5 File Format Specification IV.A.2.d, "Datatype Message"),
//! shared by the reader (`messages/datatype.rs` parses it) and the writer
//! (`write/` encodes it). Pure data: no parsing here.

/// Byte order of a numeric type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
    /// VAX mixed-endian floats (class 1, byte-order bits 0b11).
    Vax,
}

/// Padding of fixed-length strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StringPad {
    /// Ends at the first NUL (`H5T_STR_NULLTERM`).
    NullTerm,
    /// Padded with NULs (`H5T_STR_NULLPAD`).
    NullPad,
    /// Padded with spaces, Fortran style (`H5T_STR_SPACEPAD`).
    SpacePad,
}

/// Character set of strings and names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CharSet {
    /// US-ASCII.
    Ascii,
    /// UTF-8.
    Utf8,
}

/// Kind of a reference type (class 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReferenceKind {
    /// Object reference (an address), HDF5 < 1.12 style.
    Object,
    /// Dataset region reference (global-heap pointer), HDF5 < 1.12 style.
    Region,
    /// HDF5 1.12+ revised reference (`H5R_ref_t`, encoded in the global heap).
    ObjectV2,
    /// HDF5 1.12+ revised dataset region reference.
    RegionV2,
    /// HDF5 1.12+ revised attribute reference.
    AttributeV2,
    /// A reference type code this crate does not know.
    Unknown(u8),
}

/// Layout of a floating-point number's bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatLayout {
    /// Bit offset of the first significant bit.
    pub bit_offset: u16,
    /// Number of significant bits.
    pub precision: u16,
    /// Bit position of the sign bit.
    pub sign_pos: u8,
    /// Bit position of the exponent's lowest bit.
    pub exp_pos: u8,
    /// Exponent size in bits.
    pub exp_size: u8,
    /// Bit position of the mantissa's lowest bit.
    pub mant_pos: u8,
    /// Mantissa size in bits.
    pub mant_size: u8,
    /// Exponent bias.
    pub exp_bias: u32,
    /// Mantissa normalisation: 0 none, 1 msb always set, 2 implied msb.
    pub norm: u8,
    /// Padding bits: low, high, internal.
    pub pad: [bool; 3],
}

impl FloatLayout {
    /// The IEEE 754 layout of a float of `size` bytes (2, 4 or 8; other sizes get a
    /// plausible extended layout).
    pub fn ieee(size: u32) -> Self {
        let (exp_size, mant_size, bias) = match size {
            2 => (5u8, 10u8, 15u32),
            4 => (8, 23, 127),
            8 => (11, 52, 1023),
            16 => (15, 112, 16383),
            _ => (8, 23, 127),
        };
        let precision = (size * 8) as u16;
        FloatLayout {
            bit_offset: 0,
            precision,
            sign_pos: (precision - 1) as u8,
            exp_pos: mant_size,
            exp_size,
            mant_pos: 0,
            mant_size,
            exp_bias: bias,
            norm: 2,
            pad: [false; 3],
        }
    }
}

/// One member of a compound type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompoundMember {
    /// Member name.
    pub name: String,
    /// Byte offset of the member inside the compound element.
    pub offset: u32,
    /// Member type.
    pub dtype: Datatype,
}

/// One member of an enumeration: name and raw value bytes (in the base type's size and order).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnumMember {
    /// Member name.
    pub name: String,
    /// Raw value bytes.
    pub value: Vec<u8>,
}

/// An HDF5 datatype.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Datatype {
    /// Class 0. `precision`/`bit_offset` in bits.
    Integer {
        /// Size in bytes.
        size: u32,
        /// Byte order.
        order: ByteOrder,
        /// Two's-complement signed.
        signed: bool,
        /// Offset of the first significant bit.
        bit_offset: u16,
        /// Number of significant bits.
        precision: u16,
    },
    /// Class 1.
    Float {
        /// Size in bytes.
        size: u32,
        /// Byte order.
        order: ByteOrder,
        /// Where sign, exponent and mantissa sit.
        layout: FloatLayout,
    },
    /// Class 2 (time). Rare; read as raw bytes.
    Time {
        /// Size in bytes.
        size: u32,
        /// Byte order.
        order: ByteOrder,
        /// Number of significant bits.
        precision: u16,
    },
    /// Class 3: fixed-length string.
    String {
        /// Size in bytes of one string (padding included).
        size: u32,
        /// How the unused tail is filled.
        pad: StringPad,
        /// Character set.
        cset: CharSet,
    },
    /// Class 4.
    Bitfield {
        /// Size in bytes.
        size: u32,
        /// Byte order.
        order: ByteOrder,
        /// Offset of the first significant bit.
        bit_offset: u16,
        /// Number of significant bits.
        precision: u16,
    },
    /// Class 5.
    Opaque {
        /// Size in bytes.
        size: u32,
        /// The type's ASCII tag.
        tag: String,
    },
    /// Class 6.
    Compound {
        /// Size in bytes of one element.
        size: u32,
        /// Members in stored order.
        members: Vec<CompoundMember>,
    },
    /// Class 7.
    Reference {
        /// Size in bytes.
        size: u32,
        /// Which kind of reference.
        kind: ReferenceKind,
    },
    /// Class 8.
    Enum {
        /// The integer type of the values.
        base: Box<Datatype>,
        /// Names and values.
        members: Vec<EnumMember>,
    },
    /// Class 9: variable-length string (stored as a global-heap pointer).
    VarString {
        /// Size in bytes of the stored pointer.
        size: u32,
        /// Padding of the string bytes.
        pad: StringPad,
        /// Character set.
        cset: CharSet,
    },
    /// Class 9: variable-length sequence of `base`.
    VarSequence {
        /// Size in bytes of the stored pointer.
        size: u32,
        /// Element type of the sequence.
        base: Box<Datatype>,
    },
    /// Class 10.
    Array {
        /// Element type.
        base: Box<Datatype>,
        /// Array dimensions.
        dims: Vec<u64>,
    },
    /// Class 11 (HDF5 2.0): complex number whose parts are `base` floats.
    Complex {
        /// Size in bytes (both parts).
        size: u32,
        /// The float type of each part.
        base: Box<Datatype>,
    },
}

impl Datatype {
    /// The same type stored in byte order `order` (integers and floats; any
    /// other class is returned unchanged).
    pub fn with_order(self, order: ByteOrder) -> Datatype {
        match self {
            Datatype::Integer {
                size,
                signed,
                bit_offset,
                precision,
                ..
            } => Datatype::Integer {
                size,
                order,
                signed,
                bit_offset,
                precision,
            },
            Datatype::Float { size, layout, .. } => Datatype::Float {
                size,
                order,
                layout,
            },
            other => other,
        }
    }

    /// Whether this is a string type, fixed-length or variable-length.
    pub fn is_string(&self) -> bool {
        matches!(self, Datatype::String { .. } | Datatype::VarString { .. })
    }

    /// Size in bytes of one stored element.
    pub fn size(&self) -> u64 {
        match self {
            Datatype::Integer { size, .. }
            | Datatype::Float { size, .. }
            | Datatype::Time { size, .. }
            | Datatype::String { size, .. }
            | Datatype::Bitfield { size, .. }
            | Datatype::Opaque { size, .. }
            | Datatype::Compound { size, .. }
            | Datatype::Reference { size, .. }
            | Datatype::VarString { size, .. }
            | Datatype::VarSequence { size, .. }
            | Datatype::Complex { size, .. } => u64::from(*size),
            Datatype::Enum { base, .. } => base.size(),
            Datatype::Array { base, dims } => dims
                .iter()
                .try_fold(base.size(), |acc, &d| acc.checked_mul(d))
                .unwrap_or(u64::MAX),
        }
    }

    /// True when elements hold variable-length data or references anywhere inside.
    pub fn has_vlen_or_ref(&self) -> bool {
        match self {
            Datatype::VarString { .. }
            | Datatype::VarSequence { .. }
            | Datatype::Reference { .. } => true,
            Datatype::Compound { members, .. } => members.iter().any(|m| m.dtype.has_vlen_or_ref()),
            Datatype::Array { base, .. } | Datatype::Enum { base, .. } => base.has_vlen_or_ref(),
            _ => false,
        }
    }

    /// Little-endian native integer type of `size` bytes.
    pub fn int(size: u32, signed: bool) -> Self {
        Datatype::Integer {
            size,
            order: ByteOrder::Little,
            signed,
            bit_offset: 0,
            precision: (size * 8) as u16,
        }
    }

    /// Little-endian IEEE float of `size` bytes (2, 4 or 8).
    pub fn float(size: u32) -> Self {
        Datatype::Float {
            size,
            order: ByteOrder::Little,
            layout: FloatLayout::ieee(size),
        }
    }
}

// ---------------------------------------------------------------------------
// numpy notation: how h5py (3.16, over libhdf5 2.0) maps a datatype to a
// numpy dtype. The dump (`src/dump/numpy.rs`) compares these strings with
// h5py's own output, so the rules follow h5py exactly, including its choices
// for unusual types: non-IEEE floats widen to the smallest numpy float that
// holds them, a compound of two floats named `r`/`i` is a complex number, an
// enum with exactly the members `FALSE`=0 / `TRUE`=1 is numpy `bool`, opaque
// types tagged `NUMPY:<dt>` are that dtype, and types numpy cannot hold (time
// class, 128-bit integers, IEEE quad floats, new-style references, VAX
// floats) have no dtype at all.

/// One numpy floating-point type as h5py sees it on x86-64:
/// (itemsize, mantissa bits, max exponent, min exponent).
const NUMPY_FLOATS: [(u32, u32, i64, i64); 4] = [
    (2, 10, 16, -14),
    (4, 23, 128, -126),
    (8, 52, 1024, -1022),
    // x87 80-bit long double stored in 16 bytes; h5py counts its explicit integer
    // bit, so 64 mantissa bits.
    (16, 64, 16384, -16382),
];

impl FloatLayout {
    /// numpy itemsize of the float h5py picks for a float of `size` bytes
    /// with this layout, or `None` when no numpy float can hold it.
    pub fn numpy_float_size(&self, size: u32) -> Option<u32> {
        let e_size = u32::from(self.exp_size);
        let m_size = u32::from(self.mant_size);
        if e_size >= 63 {
            return None;
        }
        let bias = i64::from(self.exp_bias);
        let max_needed = (1i64 << e_size) - bias - 1;
        let min_needed = 1 - bias;
        NUMPY_FLOATS
            .iter()
            .find(|&&(np_size, nmant, maxexp, minexp)| {
                np_size >= size && m_size <= nmant && max_needed <= maxexp && min_needed >= minexp
            })
            .map(|&(np_size, ..)| np_size)
    }
}

/// The `dtype.str` order character for a multi-byte numeric type.
fn order_char(order: ByteOrder, size: u32) -> Option<char> {
    if size == 1 {
        return Some('|');
    }
    match order {
        ByteOrder::Little => Some('<'),
        ByteOrder::Big => Some('>'),
        ByteOrder::Vax => None,
    }
}

/// The value of an enum member (`bytes` in the size and order of the
/// integer type `base`) as an i128; `None` when `base` is not an integer.
pub fn enum_value(base: &Datatype, bytes: &[u8]) -> Option<i128> {
    let Datatype::Integer {
        size,
        order,
        signed,
        ..
    } = base
    else {
        return None;
    };
    let n = *size as usize;
    if n == 0 || n > 16 || bytes.len() < n {
        return None;
    }
    let mut le = [0u8; 16];
    let src = bytes.get(..n)?;
    match order {
        ByteOrder::Big => {
            for (d, s) in le.iter_mut().zip(src.iter().rev()) {
                *d = *s;
            }
        }
        _ => le[..n].copy_from_slice(src),
    }
    if *signed && n < 16 && le[n - 1] & 0x80 != 0 {
        for b in le.iter_mut().skip(n) {
            *b = 0xff;
        }
    }
    Some(i128::from_le_bytes(le))
}

/// `<f4` -> `<c8` and so on (numpy only has complex types of 8, 16 and 32 bytes).
fn complex_from_part(part: &str) -> Option<String> {
    let (order, rest) = part.split_at(1);
    let n: u32 = rest.strip_prefix('f')?.parse().ok()?;
    matches!(n, 4 | 8 | 16).then(|| format!("{order}c{}", 2 * n))
}

/// `np.dtype(tag).str` for the numpy dtypes that h5py writes as opaque tags.
fn normalize_numpy_tag(tag: &str) -> Option<String> {
    let t = tag.trim();
    let first = t.chars().next()?;
    let (order, body) = if matches!(first, '<' | '>' | '|' | '=') {
        (Some(first), &t[1..])
    } else {
        (None, t)
    };
    let kind = body.chars().next()?;
    if !kind.is_ascii_alphabetic() {
        return None;
    }
    let digits: String = body[1..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    let size: u32 = digits
        .parse()
        .unwrap_or(if kind == 'b' || kind == '?' { 1 } else { 0 });
    let order_free = matches!(kind, 'S' | 'V' | 'b' | '?' | 'O') || size == 1;
    let order = if order_free {
        '|'
    } else {
        match order {
            Some('>') => '>',
            _ => '<',
        }
    };
    Some(format!("{order}{body}"))
}

impl Datatype {
    /// True for an enum h5py turns into numpy `bool`: exactly two members,
    /// `FALSE` = 0 and `TRUE` = 1 (what h5py and [`crate::FileWriter`] write
    /// for `bool`).
    pub fn is_bool_enum(&self) -> bool {
        let Datatype::Enum { base, members } = self else {
            return false;
        };
        if members.len() != 2 {
            return false;
        }
        let value_of = |name: &str| {
            members
                .iter()
                .find(|m| m.name == name)
                .and_then(|m| enum_value(base, &m.value))
        };
        value_of("FALSE") == Some(0) && value_of("TRUE") == Some(1)
    }

    /// When a compound is what h5py reads as a numpy complex number: two
    /// members named `r` and `i` of the same float dtype of itemsize 4, 8 or
    /// 16. Returns that float's `dtype.str` (e.g. `<f4`).
    pub fn complex_compound_part(&self) -> Option<String> {
        let Datatype::Compound { members, .. } = self else {
            return None;
        };
        let [r, i] = members.as_slice() else {
            return None;
        };
        if r.name != "r" || i.name != "i" {
            return None;
        }
        let (rs, is) = (r.dtype.numpy_str()?, i.dtype.numpy_str()?);
        if rs != is || !matches!(r.dtype, Datatype::Float { .. }) {
            return None;
        }
        matches!(&rs[1..], "f4" | "f8" | "f16").then_some(rs)
    }

    /// numpy `dtype.str` of what h5py makes of this type (`<i8`, `|S10`,
    /// `|O`, `|b1`, `|V16`, ...), or `None` when h5py has no numpy
    /// equivalent. Compounds and arrays are `|V<itemsize>` here; the
    /// [`Display`](std::fmt::Display) form spells them out.
    pub fn numpy_str(&self) -> Option<String> {
        match self {
            Datatype::Integer {
                size,
                order,
                signed,
                ..
            } => {
                if !matches!(size, 1 | 2 | 4 | 8) {
                    return None;
                }
                let kind = if *signed { 'i' } else { 'u' };
                Some(format!("{}{kind}{size}", order_char(*order, *size)?))
            }
            Datatype::Bitfield { size, order, .. } => {
                if !matches!(size, 1 | 2 | 4 | 8) {
                    return None;
                }
                Some(format!("{}u{size}", order_char(*order, *size)?))
            }
            Datatype::Float {
                size,
                order,
                layout,
            } => {
                let np = layout.numpy_float_size(*size)?;
                Some(format!("{}f{np}", order_char(*order, 2)?))
            }
            // h5py maps the complex class by size alone (numpy complex64/128/256)
            Datatype::Complex { size, base } => {
                let order = match **base {
                    Datatype::Float { order, .. } => order_char(order, 2)?,
                    _ => return None,
                };
                matches!(size, 8 | 16 | 32).then(|| format!("{order}c{size}"))
            }
            Datatype::String { size, .. } => Some(format!("|S{size}")),
            Datatype::VarString { .. } => Some("|O".to_string()),
            // h5py builds the sequence's dtype from its base's: no base dtype, no dtype
            Datatype::VarSequence { base, .. } => base.numpy_str().map(|_| "|O".to_string()),
            Datatype::Reference { kind, .. } => match kind {
                ReferenceKind::Object | ReferenceKind::Region => Some("|O".to_string()),
                _ => None,
            },
            Datatype::Opaque { size, tag } => match tag.strip_prefix("NUMPY:") {
                Some(np) => normalize_numpy_tag(np),
                None => Some(format!("|V{size}")),
            },
            Datatype::Enum { base, .. } => {
                if self.is_bool_enum() {
                    return Some("|b1".to_string());
                }
                base.numpy_str()
            }
            Datatype::Compound { .. } => {
                if let Some(part) = self.complex_compound_part() {
                    return complex_from_part(&part);
                }
                Some(format!("|V{}", self.numpy_itemsize()?))
            }
            Datatype::Array { .. } => Some(format!("|V{}", self.numpy_itemsize()?)),
            Datatype::Time { .. } => None,
        }
    }

    /// numpy itemsize of the dtype h5py makes of this type (objects are
    /// 8-byte pointers), or `None` when it has no numpy dtype.
    pub fn numpy_itemsize(&self) -> Option<u64> {
        match self {
            Datatype::VarString { .. }
            | Datatype::VarSequence { .. }
            | Datatype::Reference { .. } => self.numpy_str().map(|_| 8),
            Datatype::Float { size, layout, .. } => layout.numpy_float_size(*size).map(u64::from),
            Datatype::Complex { size, .. } => self.numpy_str().map(|_| u64::from(*size)),
            Datatype::Enum { base, .. } => {
                if self.is_bool_enum() {
                    Some(1)
                } else {
                    base.numpy_itemsize()
                }
            }
            Datatype::Compound { size, members } => {
                if let Some(part) = self.complex_compound_part() {
                    let n: u64 = part.get(2..)?.parse().ok()?;
                    return Some(2 * n);
                }
                let delta = self.memory_size_delta();
                for m in members {
                    let msize = m.dtype.numpy_itemsize()?;
                    if delta == 0 && u64::from(m.offset).checked_add(msize)? > u64::from(*size) {
                        return None;
                    }
                }
                u64::try_from(i64::from(*size).checked_add(delta)?).ok()
            }
            Datatype::Array { base, dims } => dims
                .iter()
                .try_fold(base.numpy_itemsize()?, |acc, &d| acc.checked_mul(d)),
            Datatype::Opaque { size, .. } => Some(u64::from(*size)),
            _ => self.numpy_str().map(|_| self.size()),
        }
    }

    /// How much bigger (negative: smaller) this type is in memory than in
    /// the file, as libhdf5 lays it out when h5py asks for a dataset's type
    /// (`H5Dget_type` sets the memory location): a vlen string becomes a
    /// `char*` (8 bytes), a vlen sequence an `hvl_t` (16 bytes), and compound
    /// members after them shift accordingly.
    pub fn memory_size_delta(&self) -> i64 {
        match self {
            Datatype::VarString { size, .. } => 8 - i64::from(*size),
            Datatype::VarSequence { size, .. } => 16 - i64::from(*size),
            Datatype::Compound { members, .. } => {
                members.iter().map(|m| m.dtype.memory_size_delta()).sum()
            }
            Datatype::Array { base, dims } => {
                let n = dims.iter().fold(1i64, |a, &d| {
                    a.saturating_mul(i64::try_from(d).unwrap_or(i64::MAX))
                });
                n.saturating_mul(base.memory_size_delta())
            }
            _ => 0,
        }
    }

    /// A readable name for a type numpy cannot hold (128-bit integers, IEEE
    /// quad and VAX floats, the time class, new-style references).
    fn fallback_name(&self) -> String {
        let order = |o: ByteOrder| match o {
            ByteOrder::Little => "<",
            ByteOrder::Big => ">",
            ByteOrder::Vax => "vax:",
        };
        match self {
            Datatype::Integer {
                size,
                order: o,
                signed,
                ..
            } => format!("{}{}{size}", order(*o), if *signed { 'i' } else { 'u' }),
            Datatype::Bitfield { size, order: o, .. } => format!("{}u{size}", order(*o)),
            Datatype::Float { size, order: o, .. } => format!("{}f{size}", order(*o)),
            Datatype::Complex { size, .. } => format!("c{size}"),
            Datatype::Time { size, .. } => format!("time{}", size * 8),
            Datatype::Reference { .. }
            | Datatype::VarString { .. }
            | Datatype::VarSequence { .. } => "object".to_string(),
            _ => format!("|V{}", self.size()),
        }
    }

    /// `dtype.str` where numpy has one (every reference shows as an
    /// object, h5py's `Reference`), else the fallback name.
    fn leaf_str(&self) -> String {
        match self {
            Datatype::Reference { .. } => "|O".to_string(),
            _ => self.numpy_str().unwrap_or_else(|| self.fallback_name()),
        }
    }

    /// True for a compound numpy holds as a structured dtype (not as a
    /// complex number).
    fn is_struct(&self) -> bool {
        matches!(self, Datatype::Compound { .. }) && self.complex_compound_part().is_none()
    }

    /// numpy's short construction form (`_construction_repr(short=True)`),
    /// as it spells the fields of a structured dtype: `'<i4'`, `'i1'`, `'?'`,
    /// `'O'`, `'S5'`, `'V8'`, a nested struct, or `(base, shape)`.
    fn short_repr(&self) -> String {
        if self.is_struct() {
            return self.struct_str();
        }
        if let Datatype::Array { .. } = self {
            return self.subarray_str();
        }
        let leaf = self.leaf_str();
        let short = match leaf.as_str() {
            "|b1" => "?",
            s => s.strip_prefix('|').unwrap_or(s),
        };
        quote(short)
    }

    /// A subarray as numpy's `str(dtype)`: `('<f4', (3,))`; nested arrays
    /// join their dimensions as numpy does.
    fn subarray_str(&self) -> String {
        let mut dims = Vec::new();
        let mut base = self;
        while let Datatype::Array { base: b, dims: d } = base {
            dims.extend_from_slice(d);
            base = b;
        }
        format!("({}, {})", base.short_repr(), shape_tuple(&dims))
    }

    /// A structured type as numpy's `str(dtype)`: the list form
    /// `[('id', '<i4'), ('x', '<f8')]` when the fields follow each other
    /// in order with no gap, else the dict form with names, formats,
    /// offsets and itemsize. Offsets are numpy's (libhdf5's memory layout:
    /// a vlen member is an 8-byte pointer, later members move up).
    fn struct_str(&self) -> String {
        let Datatype::Compound { size, members } = self else {
            return quote(&self.leaf_str());
        };
        let mut by_offset: Vec<usize> = (0..members.len()).collect();
        by_offset.sort_by_key(|&i| members[i].offset);
        let mut mem_offset = vec![0i64; members.len()];
        let mut shift = 0i64;
        for &i in &by_offset {
            mem_offset[i] = i64::from(members[i].offset) + shift;
            shift += members[i].dtype.memory_size_delta();
        }
        let itemsize = i64::from(*size) + shift;
        let width = |m: &CompoundMember| {
            m.dtype
                .numpy_itemsize()
                .and_then(|n| i64::try_from(n).ok())
                .unwrap_or(m.dtype.size() as i64)
        };
        let mut end = 0i64;
        let mut packed = true;
        for (m, &off) in members.iter().zip(&mem_offset) {
            packed &= off == end;
            end = off + width(m);
        }
        if packed && end == itemsize {
            let items: Vec<String> = members
                .iter()
                .map(|m| match &m.dtype {
                    Datatype::Array { .. } => {
                        let sub = m.dtype.subarray_str();
                        // `(base, shape)` -> `('name', base, shape)`
                        format!("({}, {}", quote(&m.name), &sub[1..])
                    }
                    d => format!("({}, {})", quote(&m.name), d.short_repr()),
                })
                .collect();
            return format!("[{}]", items.join(", "));
        }
        let names: Vec<String> = members.iter().map(|m| quote(&m.name)).collect();
        let formats: Vec<String> = members.iter().map(|m| m.dtype.short_repr()).collect();
        let offsets: Vec<String> = mem_offset.iter().map(i64::to_string).collect();
        format!(
            "{{'names': [{}], 'formats': [{}], 'offsets': [{}], 'itemsize': {itemsize}}}",
            names.join(", "),
            formats.join(", "),
            offsets.join(", ")
        )
    }
}

/// A Python string literal of `s`, as `repr` writes it (single quotes
/// unless the text holds a single quote and no double one).
pub(crate) fn quote(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// A Python tuple of dimensions: `(3,)`, `(2, 3)`.
pub(crate) fn shape_tuple(dims: &[u64]) -> String {
    match dims {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            dims.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl std::fmt::Display for Datatype {
    /// The type in numpy notation, as h5py shows a dataset's `dtype`: the
    /// `dtype.str` of a plain type (`<f4`, `>i2`, `|u1`, `|S10`, `|b1` for
    /// h5py's bool enum, an enum as its base, `|V8` for opaque), `object`
    /// for variable-length strings and sequences and for references
    /// (numpy's `O`), and numpy's `str(dtype)` for compounds
    /// (`[('id', '<i4'), ('x', '<f8')]`, fields in numpy's short form such
    /// as `'i1'`, `'O'`, `'S5'`; a dict of names, formats, offsets and
    /// itemsize when the fields leave gaps) and arrays (`('<f4', (3,))`).
    /// Types numpy cannot hold get a readable name (`<i16`, `time64`).
    ///
    /// ```
    /// use purehdf::{CompoundMember, Datatype};
    /// assert_eq!(Datatype::float(4).to_string(), "<f4");
    /// assert_eq!(Datatype::int(1, false).to_string(), "|u1");
    /// let v = Datatype::Array { base: Box::new(Datatype::float(4)), dims: vec![3] };
    /// assert_eq!(v.to_string(), "('<f4', (3,))");
    /// let member = |name: &str, offset, dtype| CompoundMember { name: name.into(), offset, dtype };
    /// let c = Datatype::Compound {
    ///     size: 12,
    ///     members: vec![member("id", 0, Datatype::int(4, true)), member("x", 4, Datatype::float(8))],
    /// };
    /// assert_eq!(c.to_string(), "[('id', '<i4'), ('x', '<f8')]");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Datatype::VarString { .. }
            | Datatype::VarSequence { .. }
            | Datatype::Reference { .. } => f.write_str("object"),
            Datatype::Array { .. } => f.write_str(&self.subarray_str()),
            _ if self.is_struct() => f.write_str(&self.struct_str()),
            _ => f.write_str(&self.leaf_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str, offset: u32, dtype: Datatype) -> CompoundMember {
        CompoundMember {
            name: name.into(),
            offset,
            dtype,
        }
    }

    fn be(dt: Datatype) -> Datatype {
        dt.with_order(ByteOrder::Big)
    }

    /// Each row: a type and how h5py shows its dtype (`dtype.str`, the
    /// `descr` of compounds, `(base, shape)` of subarrays, `object` for `O`).
    #[test]
    fn display_is_numpy_notation() {
        let vstr = Datatype::VarString {
            size: 16,
            pad: StringPad::NullTerm,
            cset: CharSet::Utf8,
        };
        let rows: Vec<(Datatype, &str)> = vec![
            (Datatype::float(4), "<f4"),
            (be(Datatype::float(8)), ">f8"),
            (Datatype::float(2), "<f2"),
            (be(Datatype::int(2, true)), ">i2"),
            (Datatype::int(1, false), "|u1"),
            (Datatype::int(1, true), "|i1"),
            (Datatype::int(8, false), "<u8"),
            (
                Datatype::String {
                    size: 10,
                    pad: StringPad::NullPad,
                    cset: CharSet::Ascii,
                },
                "|S10",
            ),
            (vstr.clone(), "object"),
            (
                Datatype::VarSequence {
                    size: 16,
                    base: Box::new(Datatype::int(4, true)),
                },
                "object",
            ),
            (
                Datatype::Reference {
                    size: 8,
                    kind: ReferenceKind::Object,
                },
                "object",
            ),
            (
                Datatype::Reference {
                    size: 64,
                    kind: ReferenceKind::ObjectV2,
                },
                "object",
            ),
            (crate::write::bool_type(), "|b1"),
            (
                Datatype::Enum {
                    base: Box::new(be(Datatype::int(2, false))),
                    members: vec![EnumMember {
                        name: "A".into(),
                        value: vec![0, 7],
                    }],
                },
                ">u2",
            ),
            (
                Datatype::Opaque {
                    size: 8,
                    tag: "raw".into(),
                },
                "|V8",
            ),
            (
                Datatype::Compound {
                    size: 12,
                    members: vec![
                        member("id", 0, Datatype::int(4, true)),
                        member("x", 4, Datatype::float(8)),
                    ],
                },
                "[('id', '<i4'), ('x', '<f8')]",
            ),
            // gaps and a trailing pad, members listed out of offset order
            (
                Datatype::Compound {
                    size: 24,
                    members: vec![
                        member("b", 8, Datatype::float(8)),
                        member("a", 0, Datatype::int(4, true)),
                    ],
                },
                "{'names': ['b', 'a'], 'formats': ['<f8', '<i4'], 'offsets': [8, 0], 'itemsize': 24}",
            ),
            // vlen members: 8-byte pointers in memory, later members move up
            (
                Datatype::Compound {
                    size: 24,
                    members: vec![
                        member("name", 0, vstr.clone()),
                        member("n", 16, Datatype::int(8, true)),
                    ],
                },
                "[('name', 'O'), ('n', '<i8')]",
            ),
            (
                Datatype::Compound {
                    size: 20,
                    members: vec![
                        member("v", 0, Datatype::Array {
                            base: Box::new(Datatype::float(4)),
                            dims: vec![3],
                        }),
                        member("p", 12, Datatype::Compound {
                            size: 8,
                            members: vec![member("q", 0, Datatype::int(8, false))],
                        }),
                    ],
                },
                "[('v', '<f4', (3,)), ('p', [('q', '<u8')])]",
            ),
            (
                Datatype::Compound {
                    size: 16,
                    members: vec![
                        member("r", 0, Datatype::float(8)),
                        member("i", 8, Datatype::float(8)),
                    ],
                },
                "<c16",
            ),
            (
                Datatype::Array {
                    base: Box::new(Datatype::float(4)),
                    dims: vec![3],
                },
                "('<f4', (3,))",
            ),
            (
                Datatype::Array {
                    base: Box::new(Datatype::Array {
                        base: Box::new(Datatype::int(2, true)),
                        dims: vec![2, 3],
                    }),
                    dims: vec![4],
                },
                "('<i2', (4, 2, 3))",
            ),
            (
                Datatype::Compound {
                    size: 8,
                    members: vec![
                        member("b", 0, crate::write::bool_type()),
                        member("s", 1, Datatype::String {
                            size: 5,
                            pad: StringPad::NullPad,
                            cset: CharSet::Ascii,
                        }),
                        member("o", 6, Datatype::Opaque {
                            size: 1,
                            tag: String::new(),
                        }),
                        member("t", 7, Datatype::int(1, false)),
                    ],
                },
                "[('b', '?'), ('s', 'S5'), ('o', 'V1'), ('t', 'u1')]",
            ),
            (
                Datatype::Array {
                    base: Box::new(Datatype::int(1, false)),
                    dims: vec![3],
                },
                "('u1', (3,))",
            ),
            (
                Datatype::Complex {
                    size: 8,
                    base: Box::new(Datatype::float(4)),
                },
                "<c8",
            ),
            // no numpy dtype: a readable name
            (Datatype::int(16, true), "<i16"),
            (
                Datatype::Time {
                    size: 8,
                    order: ByteOrder::Little,
                    precision: 64,
                },
                "time64",
            ),
        ];
        for (dt, want) in rows {
            assert_eq!(dt.to_string(), want, "{dt:?}");
        }
    }

    #[test]
    fn python_quoting_of_names() {
        assert_eq!(quote("it's"), "\"it's\"");
        assert_eq!(quote("a\"b'c"), "'a\"b\\'c'");
        assert_eq!(quote("αβ\n"), "'αβ\\n'");
        assert_eq!(shape_tuple(&[3]), "(3,)");
        assert_eq!(shape_tuple(&[2, 3]), "(2, 3)");
    }
}
