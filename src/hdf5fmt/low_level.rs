//! Low-level access to the HDF5 format: one module per structure as the
//! HDF5 File Format Specification (version 3.0, HDF5 2.0) names it, each
//! decoding and encoding its structure side by side, plus the object-graph
//! copier and the writer's building blocks.
//!
//! Ordinary reading and writing does not need this module: the crate root
//! ([`crate::File`], [`crate::Dataset`], [`crate::FileWriter`], ...) is the
//! supported API. These modules serve the purehdf tools (`h5`, the medh5
//! container) and users who need the format as stored: superblocks, object
//! headers, messages, heaps, B-trees, chunk indexes. Their items may change
//! between minor versions.

#[path = "attribute.rs"]
pub mod attribute;
#[path = "batch.rs"]
pub mod batch;
#[path = "btree_v1.rs"]
pub mod btree_v1;
#[path = "btree_v2/mod.rs"]
pub mod btree_v2;
#[path = "cache_image.rs"]
pub mod cache_image;
#[path = "checksum.rs"]
pub mod checksum;
#[path = "chunk_index/mod.rs"]
pub mod chunk_index;
#[path = "convert.rs"]
pub mod convert;
#[path = "copy/mod.rs"]
pub mod copy;
#[path = "cursor.rs"]
pub mod cursor;
#[path = "dataset.rs"]
pub mod dataset;
#[path = "dataspace_selection/mod.rs"]
pub mod dataspace_selection;
#[path = "datatype.rs"]
pub mod datatype;
/// In-place editing of existing files ([`crate::File::open_rw`]).
#[cfg(unix)]
#[path = "edit/mod.rs"]
pub mod edit;
#[path = "encode.rs"]
pub mod encode;
#[path = "fetch/mod.rs"]
pub mod fetch;
#[path = "file.rs"]
pub mod file;
#[path = "file_core.rs"]
pub(crate) mod file_core;
#[path = "fractal_heap/mod.rs"]
pub mod fractal_heap;
#[path = "global_heap.rs"]
pub mod global_heap;
#[path = "group.rs"]
pub mod group;
#[path = "limits.rs"]
pub mod limits;
#[path = "link.rs"]
pub mod link;
#[path = "link_walk.rs"]
pub mod link_walk;
#[path = "local_heap.rs"]
pub mod local_heap;
#[path = "manifest/mod.rs"]
pub mod manifest;
#[cfg(all(feature = "mmap", target_os = "linux"))]
#[path = "mapguard.rs"]
pub mod mapguard;
#[path = "messages/mod.rs"]
pub mod messages;
#[path = "meta_cache.rs"]
pub mod meta_cache;
#[path = "named_datatype.rs"]
pub(crate) mod named_datatype;
#[path = "object_header.rs"]
pub mod object_header;
#[path = "raw_chunks.rs"]
pub mod raw_chunks;
#[path = "records/mod.rs"]
pub mod records;
#[cfg(feature = "remote")]
#[path = "remote/mod.rs"]
pub mod remote;
#[path = "rows.rs"]
pub mod rows;
#[path = "selection.rs"]
pub mod selection;
#[path = "signature.rs"]
pub mod signature;
#[path = "slice.rs"]
pub mod slice;
#[path = "source.rs"]
pub mod source;
#[path = "superblock.rs"]
pub mod superblock;
/// Single-writer/multiple-reader access shared with libhdf5 ([`crate::File::open_swmr`]).
#[cfg(unix)]
#[path = "swmr/mod.rs"]
pub mod swmr;
#[path = "typed.rs"]
pub mod typed;
#[cfg(feature = "ndarray")]
#[path = "typed_ndarray.rs"]
pub mod typed_ndarray;
#[path = "views.rs"]
pub mod views;
#[path = "virtual_layout/mod.rs"]
pub mod virtual_layout;
#[path = "write/mod.rs"]
pub mod write;

/// Sizes of offsets (addresses) and lengths in bytes, from the superblock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Size of offsets (file addresses) in bytes: 2, 4 or 8 (8 by default).
    pub offset: u8,
    /// Size of lengths (sizes and counts stored in the file) in bytes: 2, 4 or 8 (8 by default).
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
