//! Fractal heap (HDF5 File Format Specification III.G): header, direct and
//! indirect blocks, managed / tiny / huge objects, filtered blocks.

use crate::error::{Error, Result};
use crate::hdf5fmt::source::Source;
use crate::hdf5fmt::Sizes;

/// An opened fractal heap (its header parsed).
#[derive(Clone, Debug)]
pub struct FractalHeap {
    /// Address of the heap header.
    pub address: u64,
    /// Length in bytes of heap IDs.
    pub id_len: u16,
}

impl FractalHeap {
    /// Parse the heap header at `address`.
    pub fn open(src: &dyn Source, sizes: Sizes, address: u64) -> Result<Self> {
        let _ = (src, sizes);
        Err(Error::unsupported("fractal heap", address, "fractal heaps"))
    }

    /// The bytes of the object named by `heap_id`.
    pub fn object(&self, src: &dyn Source, sizes: Sizes, heap_id: &[u8]) -> Result<Vec<u8>> {
        let _ = (src, sizes, heap_id);
        Err(Error::unsupported(
            "fractal heap",
            self.address,
            "fractal heaps",
        ))
    }
}
