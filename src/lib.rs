//! purehdf: HDF5 and the medh5 medical-imaging container in pure Rust.
//!
//! - [`hdf5fmt`]: the HDF5 format — a reader over borrowed bytes and a writer.
//! - [`filters`]: every HDF5 filter as encode/decode pairs.
//! - [`medh5`]: the medh5 container.

pub mod dump;
pub mod error;
pub mod filters;
pub mod hdf5fmt;
pub mod medh5;
pub mod npy;
pub mod threads;
pub mod tools;

#[cfg(test)]
mod test_support;

pub use error::{Error, Result};
pub use hdf5fmt::attribute::Attribute;
pub use hdf5fmt::dataset::Dataset;
pub use hdf5fmt::file::{File, NamedDatatype, Object};
pub use hdf5fmt::group::Group;
pub use hdf5fmt::link::Link;
pub use hdf5fmt::selection::Selection;
