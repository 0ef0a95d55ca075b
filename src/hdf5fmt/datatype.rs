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
