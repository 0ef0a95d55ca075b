//! Virtual datasets (HDF5 File Format Specification IV.A.2.i, data layout
//! message version 4+, layout class 3): the mapping list kept in the global
//! heap, printf-style source names, the extent of unlimited mappings,
//! resolution of source files and datasets, and reads that gather source
//! elements into the virtual dataset's shape.
//!
//! - [`mapping`]: decode the mapping list (source file, source dataset, source
//!   selection, virtual selection per mapping).
//! - [`encode`]: write the mapping list (and a writer spec over it).
//! - [`source_name`]: `%b` / `%%` in source names.
//! - [`extent`]: unlimited-dimension arithmetic.
//! - [`locate`]: where a source file is searched (libhdf5's order), and the
//!   read options (prefix, filling missing sources).
//! - [`resolve`]: open sources (missing ones recorded), compute
//!   the current extent, detect cycles.
//! - [`mod@read`]: read a box of the virtual dataset.
//! - [`convert`]: source → virtual datatype conversion.

pub mod convert;
pub mod encode;
pub mod extent;
pub mod locate;
pub mod mapping;
pub mod read;
pub mod resolve;
pub mod source_name;

pub use locate::{FilledSource, VirtualOptions};
pub use mapping::Mapping;
pub use read::read;
pub use resolve::{mappings, plan, Missing, Plan};
