//! Record stores: many variable-length blobs (tiles, text, encoded
//! features) in one plain HDF5 file that h5py reads, for training caches
//! (`docs/neighbours.md` rows I2, I3, I4, I7, I9). It lives in the HDF5 crate,
//! not in medh5, because the layout is ordinary HDF5 and needs no medh5
//! document; a medh5 sample can hold one in a group all the same.
//!
//! # Layout (version 1)
//!
//! In one group (the root for files written by [`RecordWriter`]):
//!
//! - `data`: contiguous 1-D `uint8`, every record's stored bytes back to
//!   back; its file address is a multiple of 64 ([`DATA_ALIGN`]), so the
//!   whole segment maps and typed slices need no copy.
//! - `offset` (`uint64`), `length` (`uint64`), `crc32` (`uint32`), one
//!   element per record: record `i` is `data[offset[i] : offset[i] + length[i]]`,
//!   its zlib CRC-32 (of the stored bytes; 0 for an empty record) in `crc32[i]`.
//! - `decoded_length` (`uint64`), only when the codec is not `none`: the size
//!   of each record once decoded, so a batch decodes into one buffer.
//! - `meta/<name>`: per-column metadata, one 1-D numeric dataset per column
//!   with one element per record.
//! - attributes: `format = "purehdf.records"`, `format_version = 1`,
//!   `codec` (`"none"` or `"zstd"`, each record a zstd frame), `payload_type`
//!   (free text), `num_records`, `data_alignment = 64`.
//!
//! Not variable-length datasets: those live in the global heap, cannot be
//! filtered and cannot be mapped.
//!
//! Differences from IatroCache, on purpose: indices are unsigned (no
//! negative indexing), out-of-range indices are typed errors, and the CRC is
//! checked whenever a read asks for it (`verify`); an unverified read returns
//! the stored bytes as they are.

mod crc32;
mod layout;
mod reader;
mod writer;

pub use crc32::crc32;
pub use layout::{DATA_ALIGN, FORMAT, FORMAT_VERSION};
pub use reader::RecordStore;
pub use writer::{RecordCodec, RecordOptions, RecordWriter};
