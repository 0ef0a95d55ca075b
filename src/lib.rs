//! purehdf: HDF5 and the medh5 medical-imaging container in pure Rust — no
//! libhdf5, no C. Every input is untrusted: bad bytes give a typed [`Error`],
//! never a panic or an unbounded allocation. Builds for
//! `wasm32-unknown-unknown` with `default-features = false`.
//!
//! # Quick start
//!
//! Write a chunked, filtered dataset with an attribute, then read it back
//! typed and sliced — all in memory (use [`FileWriter::create`] and
//! [`File::open`] for paths):
//!
//! ```
//! use purehdf::{s, AttrValue, DatasetSpec, File, FileWriter, Filter};
//!
//! let mut w = FileWriter::in_memory();
//! let data: Vec<i16> = (0..24).collect();
//! let spec = DatasetSpec::of::<i16>(&[4, 6]).chunked(&[2, 3], vec![Filter::shuffle(), Filter::deflate(6)]);
//! let ds = w.write_dataset(w.root(), "ct", spec, &data)?;
//! w.set_attr(ds, "spacing", AttrValue::array(&[0.75f64, 0.75]))?;
//! let file = File::from_bytes(w.finish()?)?;
//!
//! let ct = file.root()?.dataset("ct")?;
//! assert_eq!(ct.shape(), &[4, 6]);
//! let all: Vec<f32> = ct.read()?;                  // any numeric type, converted
//! assert_eq!(all[7], 7.0);
//! let part = ct.read_slice::<i64>(&s![1..4; 2, ..; 3])?; // rows 1, 3; columns 0, 3
//! assert_eq!(part, vec![6, 9, 18, 21]);
//! assert!(ct.read::<u8>().is_ok() && ct.read_slice::<i8>(&s![.., 0]).is_ok());
//! assert_eq!(ct.attribute("spacing")?.read_vec::<f64>()?, vec![0.75, 0.75]);
//! # Ok::<(), purehdf::Error>(())
//! ```
//!
//! # The facade
//!
//! The items re-exported here are the supported API:
//!
//! - opening: [`File`] (path, bytes, or any [`Source`]), [`Group`],
//!   [`Dataset`], [`Attribute`], [`Datatype`], [`Object`], [`Link`];
//! - typed reads: [`Dataset::read`], [`Dataset::read_into`],
//!   [`Dataset::read_slice`] with [`s!`] / [`Slice`], [`Dataset::read_field`]
//!   for compound fields, [`Attribute::read_scalar`], [`Attribute::read_vec`],
//!   [`Attribute::read_string_in`]; conversions and errors in [`convert`];
//!   with the `ndarray` feature, `Dataset::read_array`;
//! - raw chunks: [`Dataset::chunks`], [`Dataset::chunk_reader`] and
//!   [`ChunkReader`] (borrowed bytes, batches, Fletcher-32 verification);
//! - writing: [`FileWriter`], [`DatasetSpec`], [`Filter`] constructors,
//!   [`FileWriter::write_dataset`], [`FileWriter::write_slab`], [`AttrValue`];
//! - medh5: [`medh5::sample::SampleFile`] with typed image reads
//!   ([`medh5::typed`]).
//!
//! The other modules (`hdf5fmt`, `filters`, `dump`, `tools`, ...) are
//! internal: public only for the crate's own tools and tests, hidden from
//! these docs, and their items may change between versions.
//!
//! Documentation of the facade is checked: build with
//! `cargo clippy --lib -- --cfg purehdf_doc_audit`, which makes the
//! internal modules private and denies `missing_docs`, so the lint sees
//! exactly the items reachable from here and fails on any undocumented one.

#![cfg_attr(not(purehdf_doc_audit), warn(missing_docs))]
#![cfg_attr(purehdf_doc_audit, deny(missing_docs))]

// Internal: for the crate's own tools and tests; may change.
#[cfg(not(purehdf_doc_audit))]
#[doc(hidden)]
pub mod dump;
#[cfg(purehdf_doc_audit)]
mod dump;
// Internal: for the crate's own tools and tests; may change.
#[cfg(not(purehdf_doc_audit))]
#[doc(hidden)]
pub mod error;
#[cfg(purehdf_doc_audit)]
mod error;
// Internal: for the crate's own tools and tests; may change.
#[cfg(not(purehdf_doc_audit))]
#[doc(hidden)]
pub mod filters;
#[cfg(purehdf_doc_audit)]
mod filters;
// Internal: for the crate's own tools and tests; may change.
#[cfg(not(purehdf_doc_audit))]
#[doc(hidden)]
pub mod hdf5fmt;
#[cfg(purehdf_doc_audit)]
mod hdf5fmt;
pub mod medh5;
// Internal: for the crate's own tools and tests; may change.
#[cfg(not(purehdf_doc_audit))]
#[doc(hidden)]
pub mod npy;
#[cfg(purehdf_doc_audit)]
mod npy;
// Internal: for the crate's own tools and tests; may change.
#[cfg(not(purehdf_doc_audit))]
#[doc(hidden)]
pub mod threads;
#[cfg(purehdf_doc_audit)]
mod threads;
// Internal: for the crate's own tools and tests; may change.
#[cfg(not(purehdf_doc_audit))]
#[doc(hidden)]
pub mod tools;
#[cfg(purehdf_doc_audit)]
mod tools;

#[cfg(test)]
mod test_support;

mod alloc;
pub use alloc::LargeAligned;
pub use error::{Error, Result};
pub use hdf5fmt::attribute::Attribute;
pub use hdf5fmt::convert::{self, H5Read, Numeric};
pub use hdf5fmt::dataset::Dataset;
pub use hdf5fmt::datatype::{ByteOrder, CharSet, Datatype, StringPad};
pub use hdf5fmt::file::{File, NamedDatatype, Object};
pub use hdf5fmt::group::Group;
pub use hdf5fmt::link::Link;
pub use hdf5fmt::raw_chunks::{ChunkInfo, ChunkReader, RawChunk};
pub use hdf5fmt::selection::Selection;
pub use hdf5fmt::slice::{Hyperslab, Slice, SliceArg};
pub use hdf5fmt::source::{MemSource, Source};
pub use hdf5fmt::write::{
    AttrValue, Blosc2Codec, Blosc2Shuffle, DatasetId, DatasetSpec, FileWriter, Filter, GroupId,
};
pub use threads::set_threads;
