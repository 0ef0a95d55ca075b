//! Why a format-header gate refused an attribute ([`crate::HeaderGate`]):
//! a leaf type, so that [`crate::Error`] can carry it without importing the
//! gate (which reads groups and attributes).

use std::fmt;

/// Why the gate refused an attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderReason {
    /// The attribute is absent.
    Missing,
    /// The attribute holds another value than the one required.
    WrongValue {
        /// The value found, as text.
        found: String,
        /// What was required.
        expected: String,
    },
    /// The attribute is not of the required type or shape.
    WrongType {
        /// What was found (`bool`, `float64`, `string`, `array of shape (1,)`).
        found: String,
        /// What was required.
        expected: &'static str,
    },
    /// The version is outside the supported range.
    OutOfRange {
        /// The version found, as text.
        found: String,
        /// The range supported, as text (`0..=1`, `1.0..=1.2`).
        supported: String,
    },
}

impl fmt::Display for HeaderReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderReason::Missing => f.write_str("missing"),
            HeaderReason::WrongValue { found, expected } => {
                write!(f, "wrong value {found:?} (expected {expected:?})")
            }
            HeaderReason::WrongType { found, expected } => {
                write!(f, "wrong type {found} (expected {expected})")
            }
            HeaderReason::OutOfRange { found, supported } => {
                write!(f, "out of range: {found} (supported {supported})")
            }
        }
    }
}
