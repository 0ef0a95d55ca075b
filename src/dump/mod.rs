//! `h5 dump --json`: a description of a whole HDF5 file — every group, dataset,
//! named datatype and link, with shapes, numpy dtype strings, attributes and a
//! SHA-256 of each dataset's data — in the format of the shared corpus's
//! `expected/*.json` (made with h5py/libhdf5 by `make_expected.py`), so that a dump
//! can be compared with the oracle object by object.
//!
//! - [`numpy`]: h5py's datatype → numpy dtype string mapping.
//! - [`canonical`]: the canonical data hash (`raw-le-packed`, `object-tlv`,
//!   `raw-file-bytes`).
//! - [`json`]: attribute values as JSON, the way the oracle renders them.
//! - [`compare`]: the oracle's comparison of a dump with an expected description.

pub mod canonical;
pub mod compare;
pub mod float;
pub mod json;
pub mod numpy;
pub mod walk;

#[cfg(test)]
mod numpy_corpus_tests;

pub use canonical::{hash_kind, DataHasher, HashKind, VlenResolver};
pub use walk::{dump_file, Dump};
