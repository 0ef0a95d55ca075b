//! The sample model (`docs/medh5-format.md` §2): grids, images,
//! label sets (in the document) and annotations with their voxel encodings, as
//! Rust types with validation. [`Sample::into_plan`](crate::plan) turns
//! a validated sample into the ordered write plan.

pub mod annotation;
pub mod array;
pub mod encode;
pub mod grid;
pub mod half;
pub mod image;
pub mod sample;

pub use annotation::{Annotation, Encoding};
pub use array::{ArrayData, Element, NumDtype};
pub use grid::{AxisKind, Grid};
pub use image::Image;
pub use sample::Sample;

use crate::error::Error;

/// A medh5 error with its reference code.
pub(crate) fn err(code: &str, message: impl Into<String>) -> Error {
    Error::Code {
        code: code.to_string(),
        message: message.into(),
    }
}
