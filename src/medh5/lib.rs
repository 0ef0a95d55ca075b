//! purehdf-medh5: the medh5 medical-imaging container on purehdf
//! (`docs/medh5-format.md` of the project's specification material).
//!
//! # Quick start
//!
//! ```
//! use purehdf_medh5::{create, open_bytes, writer, Profile};
//!
//! // Write the demo sample (a CT phantom with an organ labelmap) in memory.
//! let plan = create::plan_at(create::demo_sample()?, Profile::Balanced, None, "2026-01-01T00:00:00Z")?;
//! let sample = open_bytes(writer::write_plan_bytes(&plan)?)?;
//!
//! assert_eq!(sample.content_id()?.as_deref(), Some(plan.content_id.as_str()));
//! let patch = sample.image_patch::<f32>("CT", &[12, 20, 20], &[8, 16, 16])?;
//! assert_eq!(patch.shape, vec![8, 16, 16]);
//! let report = sample.verify()?;
//! assert!(report.ok && report.content_id_ok == Some(true));
//! # Ok::<(), purehdf_medh5::Error>(())
//! ```
//!
//! The front door is [`open`] / [`open_bytes`] → [`Sample`]; writing goes
//! through [`create`] (a plan from arrays and a [`Profile`]) and
//! [`writer`], editing through [`amend`], checking through [`verify`],
//! [`fix`] and [`validate`].
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
pub mod helpers;
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
pub mod stage;
pub mod typed;
pub mod validate;
pub mod values;
pub mod verify;
pub mod version_gate;
pub mod writer;

pub use error::{Error, Result};
pub use profiles::Profile;
pub use sample::SampleFile;
/// An open medh5 sample: [`open`], [`open_bytes`], then `image`, `labelmap`,
/// `image_patch`, `content_id`, `verify`.
pub use sample::SampleFile as Sample;
pub use verify::VerifyReport;

/// Open the medh5 sample at `path` (refused unless self-contained: no
/// external links, external storage or virtual datasets).
pub fn open(path: impl AsRef<std::path::Path>) -> Result<Sample> {
    Sample::open(path)
}

/// Open the medh5 sample at `url` (`s3://`, `gs://`, `az://`,
/// `http(s)://`; see `purehdf::low_level::remote`), refused like [`open`]
/// unless it is self-contained.
#[cfg(feature = "remote")]
pub fn open_url(url: &str) -> Result<Sample> {
    let file = purehdf::File::open_url(url)?;
    self_contained::check(&file, url)?;
    Ok(Sample::from_file(file))
}

/// Open a medh5 sample held in memory.
pub fn open_bytes(bytes: Vec<u8>) -> Result<Sample> {
    Sample::from_bytes(bytes)
}

#[cfg(test)]
mod test_support;
