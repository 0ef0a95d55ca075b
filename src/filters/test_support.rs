//! Test-only helpers.

/// Pseudo-random bytes for tests that need incompressible input: the one
/// definition, shared with the integration tests and benches.
#[path = "../../tests/common/noise.rs"]
mod noise_bytes;
pub(crate) use noise_bytes::noise;
