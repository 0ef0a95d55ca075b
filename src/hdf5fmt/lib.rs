//! purehdf: HDF5 in pure Rust — no
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
//! let spec = DatasetSpec::of::<i16>(&[4, 6]).chunked(&[2, 3], vec![Filter::shuffle(), Filter::deflate(6)?]);
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
//! assert_eq!(ct.attribute("spacing")?.read::<f64>()?, vec![0.75, 0.75]);
//! # Ok::<(), purehdf::Error>(())
//! ```
//!
//! # The facade
//!
//! The items re-exported here are the supported API:
//!
//! - opening and walking: [`File`] (path, bytes, or any [`Source`]),
//!   [`Group`] with [`Group::members`], [`Group::groups`],
//!   [`Group::datasets`] and [`Group::visit`] (h5py's `visititems`),
//!   [`Dataset`], [`Attribute`], [`Datatype`], [`Object`], [`Link`];
//! - typed reads: [`Dataset::read`], [`Dataset::read_into`],
//!   [`Dataset::read_slice`] with [`s!`] / [`Slice`], [`Dataset::read_field`]
//!   for compound fields, [`Attribute::read`] and [`Attribute::read_scalar`]
//!   (numbers, and `String` from any string kind), [`Attribute::value`]
//!   (the writer's [`AttrValue`]); conversions and errors in [`convert`];
//!   with the `ndarray` feature, `Dataset::read_array` into the re-exported
//!   `purehdf::ndarray`;
//! - printing as h5py shows things: [`Datatype`] in numpy notation (`<f4`,
//!   `|S10`, `[('id', '<i4'), ('x', '<f8')]`), an [`Attribute`]'s value as
//!   Python prints `attrs[name]` (`array([0.75, 0.75])`, `'mm'`), each stage
//!   of [`Dataset::filter_pipeline`] as its [`Filter`] constructor reads
//!   (`deflate(4)`, `blosc2(zstd, 5, bitshuffle)`);
//! - raw chunks: [`Dataset::chunks`], [`Dataset::chunk_reader`] and
//!   [`ChunkReader`] (borrowed bytes, batches, Fletcher-32 verification);
//! - writing: [`FileWriter`], [`DatasetSpec`], [`Filter`] constructors
//!   (levels checked as h5py checks them), [`FileWriter::write_dataset`],
//!   [`FileWriter::write_slab`], [`AttrValue`].
//!
//! [`low_level`] holds the format itself, one module per structure, for
//! tools that need it as stored. The codecs are the `purehdf-filters` crate
//! and the medh5 container the `purehdf-medh5` crate.

// The format, one module per structure (see `low_level`); inside the crate
// they are reached as `crate::superblock`, `crate::chunk_index`, ...
pub mod low_level;
#[allow(unused_imports)]
pub(crate) use low_level::*;

mod alloc;
mod error;
mod header_gate;
mod header_normalise;
mod header_reason;
pub mod scalar_seq;
pub use purehdf_filters::{threads, FilterSpec};

pub use alloc::LargeAligned;
pub use attribute::Attribute;
pub use dataset::Dataset;
pub use datatype::{
    ByteOrder, CharSet, CompoundMember, Datatype, EnumMember, FloatLayout, ReferenceKind, StringPad,
};
#[cfg(unix)]
pub use edit::{Durability, Editor};
pub use error::{Error, Result};
pub use fetch::{ByteRange, Fetch, RangeOptions, RangeSource};
pub use file::{File, NamedDatatype, Object};
pub use group::Group;
pub use header_gate::{HeaderGate, HeaderOutcome, HeaderReason, VersionForm};
pub use header_normalise::{NormaliseHook, Normalisers};
pub use link::Link;
pub use low_level::convert::{self, H5Read, Numeric};
#[cfg(feature = "remote")]
pub use low_level::remote::{RemoteOptions, StoreFetch};
pub use manifest::{ChunkEntry, ChunkLocation, ChunkManifest, Codec, ElementKind, ZarrDtype};
/// The `ndarray` crate this one is built with (feature `ndarray`), for the
/// arrays [`Dataset::read_array`] returns: use `purehdf::ndarray` to name
/// the same version's types.
#[cfg(feature = "ndarray")]
pub use ndarray;
pub use raw_chunks::{ChunkInfo, ChunkReader, RawChunk};
pub use selection::Selection;
pub use slice::{Hyperslab, Slice, SliceArg};
pub use source::{MemSource, Source};
pub use views::{ByteView, ChunkView};
pub use write::chunk_policy::ChunkPolicy;
pub use write::{
    AttrValue, Blosc2Codec, Blosc2Shuffle, DatasetId, DatasetSpec, FileWriter, Filter, GroupId,
};

/// Use `n` threads for purehdf's own work (0 = back to the default: the
/// `MEDH5_THREADS` environment variable, then `RAYON_NUM_THREADS`, then every
/// core). One thread runs everything inline and starts no pool. Fails for a
/// count over 1,024, or for a second count above one once the pool has started
/// with another size: set it before the first read or write.
pub fn set_threads(n: usize) -> Result<()> {
    purehdf_filters::threads::set_threads(n).map_err(Error::from)
}
