//! Committed (named) datatypes (HDF5 File Format Specification IV.A.2.d as an
//! object of its own): the handle of one, reached through a hard link.

use std::sync::Arc;

use crate::attribute::{self, Attribute};
use crate::datatype::Datatype;
use crate::error::Result;
use crate::file_core::File;
use crate::object_header::ObjectHeader;

/// A committed (named) datatype.
#[derive(Clone, Debug)]
pub struct NamedDatatype {
    pub(crate) file: File,
    /// Path the datatype was reached by.
    pub path: String,
    /// The object header (internal structure; may change).
    pub header: Arc<ObjectHeader>,
    /// The committed type.
    pub dtype: Datatype,
}

impl NamedDatatype {
    /// The file the datatype lives in.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The datatype's attributes (name order).
    pub fn attributes(&self) -> Result<Vec<Attribute>> {
        attribute::read_all(&self.file, &self.header)
    }
}
