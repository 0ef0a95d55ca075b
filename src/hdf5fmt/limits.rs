//! Explicit caps on every allocation and walk that file bytes can drive.
//! A file that needs more gets [`crate::Error::Limit`], never an unbounded allocation.

/// Largest single read from a byte source (1 GiB).
pub const MAX_READ: u64 = 1 << 30;
/// Largest decoded chunk or contiguous dataset held in memory at once (1 GiB).
pub const MAX_DECODED: u64 = 1 << 30;
/// Largest object-header chunk (v1/v2 header blocks and continuations).
pub const MAX_HEADER_CHUNK: u64 = 64 << 20;
/// Most continuation blocks followed for one object header.
pub const MAX_HEADER_CHUNKS: usize = 65_536;
/// Most messages in one object header.
pub const MAX_MESSAGES: usize = 1 << 20;
/// Deepest B-tree / heap indirect-block nesting.
pub const MAX_TREE_DEPTH: usize = 64;
/// Most nodes visited in one B-tree or heap walk.
pub const MAX_TREE_NODES: usize = 10_000_000;
/// Deepest group nesting in a tree walk.
pub const MAX_GROUP_DEPTH: usize = 1024;
/// Most soft/external link hops in one resolution.
pub const MAX_LINK_HOPS: usize = 32;
/// Deepest datatype nesting (compound in array in vlen ...).
pub const MAX_DATATYPE_DEPTH: usize = 32;
/// Highest dataspace rank (HDF5's H5S_MAX_RANK).
pub const MAX_RANK: usize = 32;
/// Most members in one compound or enum datatype.
pub const MAX_MEMBERS: usize = 65_536;
/// Most elements in one attribute or vlen sequence materialised at once.
pub const MAX_ELEMENTS: u64 = 1 << 28;
/// Largest metadata cache image block read and kept in memory (256 MiB).
pub const MAX_CACHE_IMAGE: u64 = 256 << 20;
