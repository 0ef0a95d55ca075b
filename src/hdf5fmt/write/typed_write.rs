//! Typed writing (HDF5 File Format Specification IV.A.2.i layout message v4,
//! IV.A.2.l filter pipeline): datasets created from a slice of Rust numbers
//! with their size checked when they are created (not when the file is
//! serialised), and chunked datasets filled slab by slab, each slab split
//! into chunks, encoded and written at once, so memory holds one slab.

#![deny(missing_docs)]

use super::chunks::{encode_chunks, ChunkedInput, RawChunks};
use super::set_local::set_local;
use super::{to_bytes, DatasetData, DatasetId, DatasetSpec, Element, FileWriter, Layout, NodeKind};
use crate::error::{Error, Result};

/// Largest stored chunk (HDF5 keeps chunk sizes in 32 bits).
const MAX_CHUNK_BYTES: u64 = u32::MAX as u64;
/// Largest compact dataset (it lives in a 64 KiB object header message).
const MAX_COMPACT_BYTES: u64 = 64 * 1024 - 64;

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}

impl DatasetSpec {
    /// A contiguous dataset of `shape` holding `T` values (little-endian).
    pub fn of<T: Element>(shape: &[u64]) -> DatasetSpec {
        DatasetSpec::new(T::dtype(), shape)
    }

    /// Check the spec on its own and, when `elements` is given, that a data
    /// set of that many elements fills it: chunk rank and sizes, fill value
    /// size, compact size. A typed error names what does not fit.
    pub fn check(&self, elements: Option<u64>) -> Result<()> {
        let esize = self.dtype.size();
        if esize == 0 || esize > u64::from(u32::MAX) {
            return Err(bad(format!("element size {esize}")));
        }
        let n = self
            .shape
            .num_elements()
            .ok_or_else(|| bad("dataset size overflows"))?;
        let total = n
            .checked_mul(esize)
            .ok_or_else(|| bad("dataset size overflows"))?;
        if let Some(e) = elements {
            if e != n {
                return Err(bad(format!(
                    "data holds {e} elements, the shape {:?} needs {n}",
                    self.shape.dims
                )));
            }
        }
        if let Some(f) = &self.fill_value {
            if f.len() as u64 != esize {
                return Err(bad(format!(
                    "fill value of {} bytes for {esize}-byte elements",
                    f.len()
                )));
            }
        }
        match &self.layout {
            Layout::Compact if total > MAX_COMPACT_BYTES => Err(bad(format!(
                "{total} bytes do not fit a compact dataset (at most {MAX_COMPACT_BYTES})"
            ))),
            Layout::Chunked { chunk_dims, .. } => {
                let dims = &self.shape.dims;
                if chunk_dims.len() != dims.len() || dims.is_empty() {
                    return Err(bad(format!(
                        "chunk shape {chunk_dims:?} for dataset shape {dims:?}"
                    )));
                }
                if chunk_dims.contains(&0) {
                    return Err(bad("chunk dimensions must be at least 1"));
                }
                chunk_dims
                    .iter()
                    .try_fold(esize, |a, &c| a.checked_mul(c))
                    .filter(|&b| b <= MAX_CHUNK_BYTES)
                    .map(|_| ())
                    .ok_or_else(|| bad(format!("chunk {chunk_dims:?} exceeds 4 GiB")))
            }
            _ => Ok(()),
        }
    }
}

impl FileWriter {
    /// Create dataset `name` in `parent` holding `data` (C order), checked
    /// against `spec` now: the datatype must be `T`'s and the length must
    /// fill the shape.
    ///
    /// ```
    /// use purehdf::{DatasetSpec, File, FileWriter, Filter};
    /// let mut w = FileWriter::in_memory();
    /// let spec = DatasetSpec::of::<f32>(&[2, 3]).chunked(&[1, 3], vec![Filter::shuffle(), Filter::deflate(6)?]);
    /// w.write_dataset(w.root(), "x", spec.clone(), &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// assert!(w.write_dataset(w.root(), "y", spec, &[1.0f32]).is_err()); // 1 element for 6
    /// let file = File::from_bytes(w.finish()?)?;
    /// assert_eq!(file.root()?.dataset("x")?.read::<f64>()?[5], 6.0);
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn write_dataset<T: Element>(
        &mut self,
        parent: super::GroupId,
        name: &str,
        spec: DatasetSpec,
        data: &[T],
    ) -> Result<DatasetId> {
        if spec.dtype != T::dtype() {
            return Err(bad(format!(
                "dataset {name:?}: spec datatype {:?} differs from the data's {:?}",
                spec.dtype,
                T::dtype()
            )));
        }
        spec.check(Some(data.len() as u64))?;
        if !matches!(spec.layout, Layout::Chunked { .. }) {
            return self.create_dataset(parent, name, spec, to_bytes(data));
        }
        // Chunked: encode every chunk now, straight from the caller's slice
        // (no copy of the dataset), and stream the chunks to the output.
        let rows = spec.shape.dims.first().copied().unwrap_or(0);
        let id = self.create_dataset(parent, name, spec.clone(), DatasetData::None)?;
        if let Err(e) = self.encode_rows(id, &spec, 0, rows, &T::bytes_of(data)) {
            // The dataset is linked with only some of its chunks: the file
            // must not be committed as if it were whole.
            self.broken = Some(format!("dataset {name:?}: {e}"));
            return Err(e);
        }
        Ok(id)
    }

    /// Encode rows `row_start .. row_start + rows` (whole chunk rows, C-order
    /// `bytes`) of the chunked dataset `dataset` (whose spec is `spec`) in
    /// parallel and append each chunk to the output with its scaled
    /// coordinates.
    fn encode_rows(
        &mut self,
        dataset: DatasetId,
        spec: &DatasetSpec,
        row_start: u64,
        rows: u64,
        bytes: &[u8],
    ) -> Result<()> {
        let Layout::Chunked {
            chunk_dims,
            filters,
        } = &spec.layout
        else {
            return Err(bad("chunks need a chunked dataset"));
        };
        let c0 = match chunk_dims.first() {
            Some(&c) if c > 0 => c,
            _ => return Err(bad("chunks need a dataset of rank 1 or more")),
        };
        let pipeline: Vec<_> = filters
            .iter()
            .map(|f| set_local(f, &spec.dtype, chunk_dims))
            .collect();
        let mut slab_dims = spec.shape.dims.clone();
        if let Some(d0) = slab_dims.first_mut() {
            *d0 = rows;
        }
        let max: Vec<Option<u64>> = slab_dims.iter().map(|&d| Some(d)).collect();
        let none = RawChunks::new();
        let elem = usize::try_from(spec.dtype.size()).map_err(|_| bad("element too large"))?;
        let input = ChunkedInput {
            dims: &slab_dims,
            max: &max,
            chunk: chunk_dims,
            element_size: elem,
            filters: &pipeline,
            fill: spec.fill_value.as_deref(),
            data: Some(bytes),
            raw_chunks: &none,
        };
        let base = row_start / c0;
        let mut global = Vec::with_capacity(slab_dims.len());
        encode_chunks(&input, bytes, |local, stored, mask| {
            global.clear();
            global.extend_from_slice(local);
            if let Some(g0) = global.first_mut() {
                *g0 += base;
            }
            self.append_chunk(dataset, &global, stored, mask)
        })
    }

    /// Create an empty chunked dataset `name` in `parent`, to be filled with
    /// [`FileWriter::write_slab`] (chunks never written read as the fill value).
    pub fn create_chunked(
        &mut self,
        parent: super::GroupId,
        name: &str,
        spec: DatasetSpec,
    ) -> Result<DatasetId> {
        if !matches!(spec.layout, Layout::Chunked { .. }) {
            return Err(bad(format!(
                "dataset {name:?}: slabs need a chunked layout"
            )));
        }
        spec.check(None)?;
        self.create_dataset(parent, name, spec, DatasetData::None)
    }

    /// Write rows `row_start .. row_start + rows` of a dataset made by
    /// [`FileWriter::create_chunked`]: `data` holds whole rows along the first
    /// dimension (C order), `row_start` is a multiple of the first chunk
    /// dimension, and the slab covers whole chunk rows unless it ends the
    /// dataset. The chunks are encoded now (in parallel, straight from
    /// `data`) and written; memory holds one batch of encoded chunks.
    ///
    /// ```
    /// use purehdf::{DatasetSpec, File, FileWriter, Filter};
    /// let mut w = FileWriter::in_memory();
    /// let spec = DatasetSpec::of::<u16>(&[5, 4]).chunked(&[2, 4], vec![Filter::lz4()]);
    /// let d = w.create_chunked(w.root(), "x", spec)?;
    /// w.write_slab(d, 0, &[1u16; 16])?; // rows 0..4
    /// w.write_slab(d, 4, &[2u16; 4])?;  // row 4, the last
    /// let file = File::from_bytes(w.finish()?)?;
    /// assert_eq!(file.root()?.dataset("x")?.read::<u16>()?[16..], [2, 2, 2, 2]);
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn write_slab<T: Element>(
        &mut self,
        dataset: DatasetId,
        row_start: u64,
        data: &[T],
    ) -> Result<()> {
        let spec = match self.nodes.get(dataset.0).map(|n| &n.kind) {
            Some(NodeKind::Dataset(ds)) => ds.spec.clone(),
            _ => return Err(bad(format!("{dataset:?} is not a dataset"))),
        };
        if spec.dtype != T::dtype() {
            return Err(bad("slab datatype differs from the dataset's"));
        }
        spec.check(None)?;
        let Layout::Chunked { chunk_dims, .. } = &spec.layout else {
            return Err(bad("slabs need a chunked dataset"));
        };
        let dims = spec.shape.dims.clone();
        let (Some(&d0), Some(&c0)) = (dims.first(), chunk_dims.first()) else {
            return Err(bad("slabs need a dataset of rank 1 or more"));
        };
        let row_elems = dims[1..]
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .ok_or_else(|| bad("row size overflows"))?;
        let n = data.len() as u64;
        if row_elems == 0 || !n.is_multiple_of(row_elems) {
            return Err(bad(format!(
                "slab of {n} elements is not whole rows of {row_elems}"
            )));
        }
        let rows = n / row_elems;
        let end = row_start
            .checked_add(rows)
            .filter(|&e| e <= d0)
            .ok_or_else(|| bad(format!("rows {row_start}+{rows} past the extent {d0}")))?;
        if !row_start.is_multiple_of(c0) || (!rows.is_multiple_of(c0) && end != d0) {
            return Err(bad(format!(
                "slab rows {row_start}..{end} do not cover whole chunk rows of {c0}"
            )));
        }
        self.encode_rows(dataset, &spec, row_start, rows, &T::bytes_of(data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::File;
    use crate::write::Filter;

    #[test]
    fn sizes_are_checked_at_creation() {
        let mut w = FileWriter::in_memory();
        let r = w.root();
        assert!(w
            .write_dataset(r, "a", DatasetSpec::of::<u8>(&[3]), &[1u8, 2])
            .is_err());
        assert!(w
            .write_dataset(r, "b", DatasetSpec::of::<u16>(&[2]), &[1u8, 2])
            .is_err());
        let bad_chunk = DatasetSpec::of::<u8>(&[4, 4]).chunked(&[4], vec![]);
        assert!(w.write_dataset(r, "c", bad_chunk, &[0u8; 16]).is_err());
        let zero = DatasetSpec::of::<u8>(&[4]).chunked(&[0], vec![]);
        assert!(w.write_dataset(r, "d", zero, &[0u8; 4]).is_err());
        let big = DatasetSpec::of::<f64>(&[1 << 20, 1 << 20]).chunked(&[1 << 20, 1 << 20], vec![]);
        assert!(w.create_chunked(r, "e", big).is_err());
        let compact = DatasetSpec::of::<u8>(&[70_000]).compact();
        assert!(w
            .write_dataset(r, "f", compact, &vec![0u8; 70_000])
            .is_err());
        assert!(w
            .write_dataset(r, "ok", DatasetSpec::of::<i8>(&[2]), &[-1i8, 1])
            .is_ok());
    }

    #[test]
    fn slabs_fill_a_filtered_dataset() {
        let mut w = FileWriter::in_memory();
        let spec = DatasetSpec::of::<i32>(&[7, 5, 3])
            .chunked(
                &[2, 2, 3],
                vec![Filter::shuffle(), Filter::zstd(3).unwrap()],
            )
            .with_fill((-1i32).to_le_bytes().to_vec());
        let d = w.create_chunked(w.root(), "x", spec).unwrap();
        let all: Vec<i32> = (0..105).collect();
        w.write_slab(d, 0, &all[..60]).unwrap(); // rows 0..4
        assert!(w.write_slab(d, 1, &all[15..30]).is_err()); // not chunk aligned
        assert!(w.write_slab(d, 4, &all[60..75]).is_err()); // one row of a 2-row chunk
        w.write_slab(d, 6, &all[90..]).unwrap(); // the last row; rows 4, 5 left unwritten
        let f = File::from_bytes(w.finish().unwrap()).unwrap();
        let got = f
            .root()
            .unwrap()
            .dataset("x")
            .unwrap()
            .read::<i32>()
            .unwrap();
        let mut want = all.clone();
        want[60..90].fill(-1);
        assert_eq!(got, want);
    }
}
