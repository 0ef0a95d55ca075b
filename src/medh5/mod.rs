//! The medh5 medical-imaging container (`shared/spec/medh5.md`).
//!
//! Pure logic only (no HDF5 I/O): float text and canonical JSON, the `/meta`
//! document, digests and `content_id`, codec profiles, the chunk optimiser and
//! the sample model with its write plan.

pub mod attribute;
pub mod canonical_json;
pub mod chunking;
pub mod document;
pub mod index;
pub mod integrity;
pub mod model;
pub mod plan;
pub mod profiles;
pub mod pyfloat;
