//! The user's handle on an open HDF5 file, above the handles it returns.
//! [`File`] itself (its bytes, superblock, caches, shared messages and
//! heaps) is the format core below `Group`, `Dataset` and `Attribute`; this
//! module adds the entry points that return handles (the root group, objects
//! by path or address, an object's attribute storage) and names the types
//! users reach through it.

use crate::error::Result;
use crate::group::Group;
use crate::object_header::ObjectHeader;

pub use crate::attribute::AttrStorage;
pub use crate::file_core::{File, RevisedReference};
pub use crate::group::Object;
pub use crate::named_datatype::NamedDatatype;

impl File {
    /// The root group.
    pub fn root(&self) -> Result<Group> {
        crate::group::root_group(self)
    }

    /// The object at an absolute path (`"/"` is the root group).
    pub fn object(&self, path: &str) -> Result<Object> {
        self.root()?.open(path)
    }

    /// The object whose header is at `address`, named `path`.
    pub fn object_at(&self, address: u64, path: String) -> Result<Object> {
        crate::group::object_at(self, address, path)
    }

    /// How the object with header `h` stores its attributes.
    pub fn attr_storage(&self, h: &ObjectHeader) -> AttrStorage {
        crate::attribute::storage(self, h)
    }
}
