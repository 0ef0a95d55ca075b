//! Version 1 B-trees (HDF5 File Format Specification III.A.1): group nodes
//! (type 0, keys are local-heap name offsets) and raw-data chunk nodes (type 1).

use crate::error::{Error, Result};
use crate::hdf5fmt::source::Source;
use crate::hdf5fmt::Sizes;

/// Visit the address of every symbol-table node (`SNOD`) under the group B-tree
/// rooted at `address`, left to right.
pub fn group_nodes(
    src: &dyn Source,
    sizes: Sizes,
    address: u64,
    f: &mut dyn FnMut(u64) -> Result<()>,
) -> Result<()> {
    let _ = (src, sizes, f);
    Err(Error::unsupported("v1 B-tree", address, "v1 B-trees"))
}
