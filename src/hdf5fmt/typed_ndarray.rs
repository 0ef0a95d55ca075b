//! Typed reads into `ndarray` arrays (feature `ndarray`): the values of
//! [`Dataset::read`] / [`Dataset::read_slice`] with the dataset's shape, or
//! the selection's shape without its indexed dimensions (HDF5 File Format
//! Specification IV.A.2.b dataspace dimensions, C order). The crate
//! re-exports the `ndarray` it is built with as `purehdf::ndarray`, so
//! callers name the same version's types.

#![deny(missing_docs)]

use ndarray::{Array, ArrayD, Dimension, IxDyn};

use crate::convert::H5Read;
use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::slice::Slice;

fn shaped<T, D: Dimension>(path: &str, shape: Vec<u64>, v: Vec<T>) -> Result<Array<T, D>> {
    let dims: Vec<usize> = shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::InvalidArgument(format!("{path}: shape {shape:?} too large")))?;
    let a: ArrayD<T> = Array::from_shape_vec(IxDyn(&dims), v)
        .map_err(|e| Error::InvalidArgument(format!("{path}: {e}")))?;
    a.into_dimensionality::<D>().map_err(|e| {
        Error::InvalidArgument(format!(
            "{path}: shape {shape:?} as the requested rank: {e}"
        ))
    })
}

impl Dataset {
    /// The whole dataset as an array of rank `D` (`IxDyn` for any rank).
    ///
    /// ```
    /// # use purehdf::{File, FileWriter, DatasetSpec};
    /// # let mut w = FileWriter::in_memory();
    /// # w.write_dataset(w.root(), "x", DatasetSpec::of::<i16>(&[2, 3]), &[1i16, 2, 3, 4, 5, 6]).unwrap();
    /// # let file = File::from_bytes(w.finish().unwrap()).unwrap();
    /// use purehdf::ndarray::{Array2, Ix2};
    /// let a: Array2<f32> = file.root()?.dataset("x")?.read_array::<f32, Ix2>()?;
    /// assert_eq!(a[[1, 2]], 6.0);
    /// # Ok::<(), purehdf::Error>(())
    /// ```
    pub fn read_array<T: H5Read, D: Dimension>(&self) -> Result<Array<T, D>> {
        shaped(self.path(), self.shape().to_vec(), self.read()?)
    }

    /// The elements `slice` selects as an array of rank `D` (indexed
    /// dimensions dropped, as numpy does).
    pub fn read_slice_array<T: H5Read, D: Dimension>(&self, slice: &Slice) -> Result<Array<T, D>> {
        let h = self.hyperslab(slice)?;
        shaped(self.path(), h.out_shape(), self.read_slice(slice)?)
    }
}

#[cfg(test)]
mod tests {
    use crate::file::File;
    use crate::s;
    use crate::write::{DatasetSpec, FileWriter};

    #[test]
    fn arrays_keep_shape_and_drop_indexed_dims() {
        let mut w = FileWriter::in_memory();
        let v: Vec<u16> = (0..24).collect();
        w.write_dataset(w.root(), "x", DatasetSpec::of::<u16>(&[2, 3, 4]), &v)
            .unwrap();
        let f = File::from_bytes(w.finish().unwrap()).unwrap();
        let ds = f.root().unwrap().dataset("x").unwrap();
        let a = ds.read_array::<u32, ndarray::Ix3>().unwrap();
        assert_eq!(a[[1, 2, 3]], 23);
        let b = ds
            .read_slice_array::<i64, ndarray::Ix2>(&s![1, .., 0..4; 2])
            .unwrap();
        assert_eq!(b.shape(), &[3, 2]);
        assert_eq!(b[[2, 1]], 12 + 8 + 2);
        assert!(ds.read_array::<u8, ndarray::Ix2>().is_err());
        // the re-export is the array type the reads return
        let c: crate::ndarray::ArrayD<u16> = ds.read_array::<u16, crate::ndarray::IxDyn>().unwrap();
        assert_eq!(c.shape(), &[2, 3, 4]);
    }
}
