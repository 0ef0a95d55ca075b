//! The offset and length sizes of every file the writer emits.

/// Offset and length sizes of every file the writer emits (superblock v2
/// with 8-byte offsets and lengths).
pub const WRITER_SIZES: crate::Sizes = crate::Sizes {
    offset: 8,
    length: 8,
};
