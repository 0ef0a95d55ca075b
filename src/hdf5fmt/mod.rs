//! The HDF5 file format (HDF5 File Format Specification version 3.0 / HDF5 2.0):
//! a reader over borrowed bytes and, apart from it, a writer.
//!
//! Internal: for the crate's own tools and tests; may change. The supported
//! API is re-exported at the crate root.

pub mod attribute;
pub mod btree_v1;
pub mod btree_v2;
pub mod cache_image;
pub mod checksum;
pub mod chunk_index;
pub mod convert;
pub mod copy;
pub mod cursor;
pub mod dataset;
pub mod dataspace_selection;
pub mod datatype;
pub mod encode;
pub mod file;
pub mod fractal_heap;
pub mod global_heap;
pub mod group;
pub mod limits;
pub mod link;
pub mod link_walk;
pub mod local_heap;
#[cfg(all(feature = "mmap", target_os = "linux"))]
pub mod mapguard;
pub mod messages;
pub mod object_header;
pub mod raw_chunks;
pub mod selection;
pub mod signature;
pub mod slice;
pub mod source;
pub mod superblock;
pub mod typed;
#[cfg(feature = "ndarray")]
pub mod typed_ndarray;
pub mod virtual_layout;
pub mod write;

/// Sizes of offsets (addresses) and lengths in bytes, from the superblock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    pub offset: u8,
    pub length: u8,
}

impl Default for Sizes {
    fn default() -> Self {
        Sizes {
            offset: 8,
            length: 8,
        }
    }
}
