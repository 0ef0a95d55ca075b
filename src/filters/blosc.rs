//! Filter `blosc`: encode/decode pair (see `shared/spec/filters.md`).

use crate::error::{Error, Result};
use crate::filters::ChunkContext;

/// Undo the filter.
pub fn decode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let _ = (input, cd_values, ctx);
    Err(Error::UnsupportedFilter {
        id: 0,
        name: "blosc".into(),
    })
}

/// Apply the filter.
pub fn encode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let _ = (input, cd_values, ctx);
    Err(Error::UnsupportedFilter {
        id: 0,
        name: "blosc".into(),
    })
}
