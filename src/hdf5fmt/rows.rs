//! Fixed-width row gather for feature matrices (`docs/neighbours.md` row
//! I5): rows of a dataset picked by index, in order with duplicates, copied
//! into one caller buffer in the storage type (no cast). A contiguous dataset
//! in a mapped or in-memory file is copied row by row straight from the
//! mapping; other layouts read one row selection at a time through the
//! dataset's decoded-chunk cache.

use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::messages::layout::Layout;
use crate::selection::Selection;

impl Dataset {
    /// Bytes of one row: the product of every dimension but the first, times
    /// the element size (a 1-D dataset has one element per row).
    pub fn row_bytes(&self) -> Result<usize> {
        let dims = self.shape();
        if dims.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{}: a scalar dataset has no rows",
                self.path()
            )));
        }
        dims[1..]
            .iter()
            .try_fold(self.dtype().size(), |a, &d| a.checked_mul(d))
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| Error::InvalidArgument(format!("{}: row size overflows", self.path())))
    }

    /// Copy rows `rows` (indices along the first dimension, in order,
    /// duplicates kept) into `out`, row `k` at `k × row_bytes()`, in the
    /// stored element type and byte order. `out.len()` must be exactly
    /// `rows.len() × row_bytes()`. An index past the end is a typed error
    /// (negative indices do not exist: the type is unsigned).
    pub fn read_rows(&self, rows: &[u64], out: &mut [u8]) -> Result<()> {
        let row = self.row_bytes()?;
        let n = self.shape()[0];
        let need = row.checked_mul(rows.len());
        if need != Some(out.len()) {
            return Err(Error::InvalidArgument(format!(
                "{}: output holds {} bytes, {} rows need {need:?}",
                self.path(),
                out.len(),
                rows.len()
            )));
        }
        if let Some(&bad) = rows.iter().find(|&&r| r >= n) {
            return Err(Error::InvalidArgument(format!(
                "{}: row {bad} outside 0..{n}",
                self.path()
            )));
        }
        if row == 0 {
            return Ok(());
        }
        let src = self.file().source();
        match self.layout() {
            Layout::Contiguous {
                address: Some(addr),
                ..
            } if self.external_files().is_none() && !src.wants_prefetch() => {
                let stored = self.storage_size()?;
                let need_stored = (row as u64).checked_mul(n);
                if need_stored.is_none_or(|s| s > stored) {
                    return Err(Error::malformed(
                        "contiguous data",
                        *addr,
                        format!("{stored} bytes stored, {n} rows of {row} bytes need more"),
                    ));
                }
                let end = crate::source::in_bounds("contiguous data", *addr, stored, src.len())?;
                if let Some(all) = src.as_slice() {
                    let base = usize::try_from(*addr).map_err(|_| overflow(*addr))?;
                    let end = usize::try_from(end).map_err(|_| overflow(*addr))?;
                    let data = all.get(base..end).ok_or_else(|| overflow(*addr))?;
                    for (dst, &r) in out.chunks_exact_mut(row).zip(rows) {
                        let at = r as usize * row;
                        dst.copy_from_slice(&data[at..at + row]);
                    }
                    return src.check();
                }
                for (dst, &r) in out.chunks_exact_mut(row).zip(rows) {
                    src.read_into("contiguous data", *addr + r * row as u64, dst)?;
                }
                Ok(())
            }
            _ => {
                let mut count = self.shape().to_vec();
                count[0] = 1;
                for (dst, &r) in out.chunks_exact_mut(row).zip(rows) {
                    let mut start = vec![0u64; count.len()];
                    start[0] = r;
                    let sel = Selection::Hyperslab {
                        start,
                        count: count.clone(),
                    };
                    self.read_raw(&sel, dst)?;
                }
                Ok(())
            }
        }
    }

    /// [`Dataset::read_rows`] into a new buffer.
    pub fn read_rows_vec(&self, rows: &[u64]) -> Result<Vec<u8>> {
        let row = self.row_bytes()?;
        let total = row
            .checked_mul(rows.len())
            .filter(|&t| t as u64 <= crate::limits::MAX_DECODED)
            .ok_or_else(|| Error::InvalidArgument(format!("{}: too many rows", self.path())))?;
        let mut out = vec![0u8; total];
        self.read_rows(rows, &mut out)?;
        Ok(out)
    }
}

fn overflow(offset: u64) -> Error {
    Error::Overflow {
        structure: "contiguous data",
        offset,
        what: "row range",
    }
}

#[cfg(test)]
mod tests {
    use crate::file::File;
    use crate::write::{DatasetSpec, FileWriter};
    use crate::Filter;

    #[test]
    fn rows_equal_fancy_indexing_for_both_layouts() {
        let mut w = FileWriter::in_memory();
        let data: Vec<f32> = (0..50 * 6).map(|i| i as f32 * 0.5).collect();
        w.write_dataset(w.root(), "c", DatasetSpec::of::<f32>(&[50, 6]), &data)
            .unwrap();
        let spec =
            DatasetSpec::of::<f32>(&[50, 6]).chunked(&[7, 4], vec![Filter::deflate(1).unwrap()]);
        w.write_dataset(w.root(), "k", spec, &data).unwrap();
        let file = File::from_bytes(w.finish().unwrap()).unwrap();
        let idx = [5u64, 1, 5, 0, 49];
        let mut want = Vec::new();
        for &r in &idx {
            for v in &data[r as usize * 6..r as usize * 6 + 6] {
                want.extend(v.to_le_bytes());
            }
        }
        for name in ["c", "k"] {
            let ds = file.root().unwrap().dataset(name).unwrap();
            assert_eq!(ds.row_bytes().unwrap(), 24);
            assert_eq!(ds.read_rows_vec(&idx).unwrap(), want, "{name}");
            assert!(ds.read_rows_vec(&[50]).is_err());
            assert!(ds.read_rows(&[1], &mut [0u8; 23]).is_err());
        }
    }
}
