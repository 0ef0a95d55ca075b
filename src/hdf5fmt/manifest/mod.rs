//! Chunk manifests (virtual Zarr): where every stored chunk of a dataset lies
//! in the file, with the codecs that decode it and the dtype that reads it, so
//! kerchunk- and VirtualiZarr-style readers can serve the dataset as a Zarr
//! array without copying it.
//!
//! [`Dataset::chunk_manifest`] covers every layout: chunked datasets (every
//! chunk index, filtered or not, partial edge chunks padded as stored;
//! unwritten chunks are absent and read as [`ChunkManifest::fill`]),
//! contiguous data as one or several pseudo-chunks along the first axis,
//! compact data, variable-length strings and fixed-length strings not
//! NUL-padded inlined (the last converted as libhdf5 converts them for h5py).
//! Offsets are in the file as stored (a user block included). What has no Zarr
//! equivalent is refused by name with [`Error::Unsupported`] (structure
//! `"chunk manifest"`): virtual datasets, external raw data, references,
//! variable-length sequences, nested or array compound members, filters
//! without a codec. Chunks that skipped an optional filter, and unfiltered
//! partial edge chunks, are re-encoded through the whole pipeline and inlined.

mod chunked;
mod codecs;
mod dtype;
mod storage;
mod virtual_map;
mod vlen;

pub use codecs::Codec;
pub use dtype::{ZarrDtype, ZarrField};

use crate::dataset::Dataset;
use crate::datatype::{Datatype, StringPad};
use crate::error::{Error, Result};
use crate::messages::dataspace::SpaceKind;
use crate::messages::layout::Layout;

/// Where one chunk's stored bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChunkLocation {
    /// `length` bytes at `offset` of the dataset's file.
    Range {
        /// File offset of the stored bytes.
        offset: u64,
        /// Stored size in bytes.
        length: u64,
    },
    /// The stored bytes themselves (compact data, encoded vlen strings).
    Inline(Vec<u8>),
    /// `length` bytes at `offset` of another file: a virtual dataset's
    /// source file, as libhdf5 resolves it (an absolute path).
    File {
        /// The source file.
        file: String,
        /// File offset of the stored bytes.
        offset: u64,
        /// Stored size in bytes.
        length: u64,
    },
}

/// One chunk of the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkEntry {
    /// Position in the chunk grid (chunk units; empty for a scalar).
    pub coords: Vec<u64>,
    /// Where its stored bytes are.
    pub location: ChunkLocation,
}

/// How elements are stored in the chunks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ElementKind {
    /// Fixed-size elements in the file's layout, read as `ZarrDtype`.
    Fixed(ZarrDtype),
    /// Variable-length UTF-8 strings, inlined in numcodecs' `vlen-utf8` encoding.
    VlenUtf8,
    /// Variable-length ASCII strings (bytes), inlined in numcodecs' `vlen-bytes` encoding.
    VlenBytes,
}

/// A dataset as a Zarr array: shape, chunk grid, element type, fill value,
/// codecs (the HDF5 pipeline in encode order) and the stored chunks.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkManifest {
    /// Array shape (empty for a scalar).
    pub shape: Vec<u64>,
    /// Chunk shape (the HDF5 chunk, or the pseudo-chunk of other layouts).
    pub chunk_shape: Vec<u64>,
    /// Element type.
    pub element: ElementKind,
    /// One element's bytes in file order, read for unwritten chunks (zeros
    /// when the file defines no fill value). Empty for vlen strings.
    pub fill: Vec<u8>,
    /// The filter pipeline in encode order (decode runs it backwards).
    pub codecs: Vec<Codec>,
    /// Stored chunks, in grid order.
    pub chunks: Vec<ChunkEntry>,
    /// `"chunked"`, `"contiguous"`, `"compact"`, `"virtual"` (the chunks of
    /// its sources) or `"inline"` (vlen strings, fixed-length strings
    /// converted to NUL padding).
    pub layout: &'static str,
}

pub(crate) fn refuse(ds: &Dataset, what: impl Into<String>) -> Error {
    Error::Unsupported {
        structure: "chunk manifest",
        offset: ds.address(),
        what: format!("{}: {}", ds.path(), what.into()),
    }
}

impl Dataset {
    /// The dataset as a virtual Zarr array: byte ranges of every stored chunk,
    /// codecs and dtype ([`ChunkManifest`]). Refuses by name (an
    /// [`Error::Unsupported`]) what a Zarr reader could not decode from the
    /// file's bytes.
    ///
    /// ```
    /// # use purehdf::{File, FileWriter, DatasetSpec, Filter};
    /// # let mut w = FileWriter::in_memory();
    /// # let spec = DatasetSpec::of::<u16>(&[4, 5]).chunked(&[2, 4], vec![Filter::deflate(4)?]);
    /// # w.write_dataset(w.root(), "x", spec, &[7u16; 20]).unwrap();
    /// # let file = File::from_bytes(w.finish().unwrap()).unwrap();
    /// let m = file.root()?.dataset("x")?.chunk_manifest()?;
    /// assert_eq!((m.shape.as_slice(), m.chunk_shape.as_slice()), (&[4u64, 5][..], &[2u64, 4][..]));
    /// assert_eq!(m.chunks.len(), 4);
    /// assert_eq!(m.codecs[0].name, "deflate");
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn chunk_manifest(&self) -> Result<ChunkManifest> {
        if self.space_kind() == SpaceKind::Null {
            return Err(refuse(self, "null dataspace (no array)"));
        }
        if let Some(kind) = vlen::kind(self)? {
            return vlen::inline(self, kind);
        }
        let zdt = dtype::map(self.dtype()).map_err(|what| refuse(self, what))?;
        let fill = storage::fill_bytes(self)?;
        let odd_pad = match self.dtype() {
            Datatype::String { pad, .. } if *pad != StringPad::NullPad => Some(*pad),
            _ => None,
        };
        let mut shape = self.shape().to_vec();
        let (chunk_shape, chunks, codecs, layout) = match self.layout() {
            Layout::Virtual { .. } => {
                let v = virtual_map::entries(self, &fill)?;
                let codecs = match v.source {
                    Some(m) if m.element != ElementKind::Fixed(zdt.clone()) => {
                        return Err(refuse(
                            self,
                            "virtual dataset sources have another element type",
                        ))
                    }
                    Some(m) => m.codecs,
                    None => Vec::new(),
                };
                shape = v.dims;
                (v.chunk_shape, v.chunks, codecs, "virtual")
            }
            _ if odd_pad.is_some() => {
                let pad = odd_pad.unwrap_or(StringPad::NullPad);
                let (shape, chunks) = storage::converted_strings(self, pad)?;
                (shape, chunks, Vec::new(), "inline")
            }
            Layout::Chunked { .. } => {
                let (shape, chunks, codecs) = chunked::entries(self)?;
                (shape, chunks, codecs, "chunked")
            }
            Layout::Contiguous { .. } => {
                let (shape, chunks) = storage::contiguous(self)?;
                (shape, chunks, Vec::new(), "contiguous")
            }
            Layout::Compact { data } => {
                let (shape, chunks) = storage::compact(self, data)?;
                (shape, chunks, Vec::new(), "compact")
            }
        };
        Ok(ChunkManifest {
            shape,
            chunk_shape,
            element: ElementKind::Fixed(zdt),
            fill,
            codecs,
            chunks,
            layout,
        })
    }
}

#[cfg(test)]
mod tests;
