//! The datatype model (HDF5 File Format Specification IV.A.2.d, "Datatype Message"),
//! shared by the reader (`messages/datatype.rs` parses it) and the writer
//! (`write/` encodes it). Pure data: no parsing here.

/// Byte order of a numeric type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    Little,
    Big,
    /// VAX mixed-endian floats (class 1, byte-order bits 0b11).
    Vax,
}

/// Padding of fixed-length strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StringPad {
    NullTerm,
    NullPad,
    SpacePad,
}

/// Character set of strings and names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CharSet {
    Ascii,
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
    RegionV2,
    AttributeV2,
    Unknown(u8),
}

/// Layout of a floating-point number's bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatLayout {
    pub bit_offset: u16,
    pub precision: u16,
    pub sign_pos: u8,
    pub exp_pos: u8,
    pub exp_size: u8,
    pub mant_pos: u8,
    pub mant_size: u8,
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
    pub name: String,
    /// Byte offset of the member inside the compound element.
    pub offset: u32,
    pub dtype: Datatype,
}

/// One member of an enumeration: name and raw value bytes (in the base type's size and order).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnumMember {
    pub name: String,
    pub value: Vec<u8>,
}

/// An HDF5 datatype.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Datatype {
    /// Class 0. `precision`/`bit_offset` in bits.
    Integer {
        size: u32,
        order: ByteOrder,
        signed: bool,
        bit_offset: u16,
        precision: u16,
    },
    /// Class 1.
    Float {
        size: u32,
        order: ByteOrder,
        layout: FloatLayout,
    },
    /// Class 2 (time). Rare; read as raw bytes.
    Time {
        size: u32,
        order: ByteOrder,
        precision: u16,
    },
    /// Class 3: fixed-length string.
    String {
        size: u32,
        pad: StringPad,
        cset: CharSet,
    },
    /// Class 4.
    Bitfield {
        size: u32,
        order: ByteOrder,
        bit_offset: u16,
        precision: u16,
    },
    /// Class 5.
    Opaque { size: u32, tag: String },
    /// Class 6.
    Compound {
        size: u32,
        members: Vec<CompoundMember>,
    },
    /// Class 7.
    Reference { size: u32, kind: ReferenceKind },
    /// Class 8.
    Enum {
        base: Box<Datatype>,
        members: Vec<EnumMember>,
    },
    /// Class 9: variable-length string (stored as a global-heap pointer).
    VarString {
        size: u32,
        pad: StringPad,
        cset: CharSet,
    },
    /// Class 9: variable-length sequence of `base`.
    VarSequence { size: u32, base: Box<Datatype> },
    /// Class 10.
    Array { base: Box<Datatype>, dims: Vec<u64> },
    /// Class 11 (HDF5 2.0): complex number whose parts are `base` floats.
    Complex { size: u32, base: Box<Datatype> },
}

impl Datatype {
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
