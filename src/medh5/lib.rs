//! purehdf-medh5: the medh5 medical-imaging container on purehdf
//! (`shared/spec/medh5.md` of the project's specification material).
//!
//! Modules:
//! - [`pyfloat`], [`canonical_json`]: Python float repr, canonical and `/meta` JSON (§0, §3.3, §5.5, §5.6);
//! - [`document`]: the `/meta` sample document (§3);
//! - [`attribute`]: typed attribute values, their HDF5 types and canonical JSON (§2.3, §5.5);
//! - [`integrity`]: digest strings, per-dataset digests, `content_id` (§5);
//! - [`profiles`], [`chunking`]: codec pipelines, contiguous threshold, chunk optimiser (§6.1–§6.5);
//! - [`model`]: grids, images, annotations and their encodings, with validation (§2);
//! - [`index`]: the sampling index (§6.8);
//! - [`amend`], [`recompress`], [`collection`]: copy-on-write amend, re-encoding, `.medh5c` (§6.6, §7, §8);
//! - [`plan`]: the ordered write plan an HDF5 writer executes (§2, §5.3, §8);
//! - [`validate`]: the validator, every level and code family (§9, §12).

pub mod amend;
pub mod attribute;
pub mod bench;
pub mod canonical_json;
pub mod check;
pub mod chunking;
pub mod collection;
pub mod collection_cli;
pub mod create;
pub mod document;
pub mod error;
pub mod fix;
pub mod index;
pub mod info;
pub mod integrity;
pub mod labelmap;
pub mod model;
pub mod npy;
pub mod plan;
pub mod profiles;
pub mod pyfloat;
pub mod recompress;
pub mod sample;
pub mod self_contained;
pub mod typed;
pub mod validate;
pub mod verify;
pub mod writer;

#[cfg(test)]
mod test_support;
