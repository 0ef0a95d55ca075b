//! The loop a host without blocking I/O runs: attempt an operation, fetch
//! and supply the ranges it asked for, attempt it again.

use super::{ByteRange, RangeSource};
use crate::error::{Error, Result};

/// Rounds of fetching and supplying [`drive`] makes before it gives up.
pub const DRIVE_ROUNDS: usize = 256;

/// Run `op` against a source without a fetcher until it needs no more bytes:
/// after each attempt the ranges it asked for ([`RangeSource::take_missed`],
/// or those of its [`Error::NeedBytes`]) are fetched with `fetch` (one call
/// per round, all ranges at once) and supplied, and `op` runs again. Reads
/// are idempotent, so a retried operation sees the same bytes and returns
/// what one uninterrupted run would. Gives up after [`DRIVE_ROUNDS`] rounds.
pub fn drive<T>(
    src: &RangeSource,
    mut fetch: impl FnMut(&[ByteRange]) -> Result<Vec<Vec<u8>>>,
    mut op: impl FnMut() -> Result<T>,
) -> Result<T> {
    let _ = src.take_missed();
    let r = drive_rounds(src, &mut fetch, &mut op);
    src.settle();
    r
}

fn drive_rounds<T>(
    src: &RangeSource,
    fetch: &mut impl FnMut(&[ByteRange]) -> Result<Vec<Vec<u8>>>,
    op: &mut impl FnMut() -> Result<T>,
) -> Result<T> {
    for _ in 0..DRIVE_ROUNDS {
        let r = op();
        let mut missed = src.take_missed();
        if missed.is_empty() {
            match r.as_ref().err().and_then(Error::needed_ranges) {
                Some(n) => missed = n.to_vec(),
                None => return r,
            }
        }
        let got = fetch(&missed)?;
        if got.len() != missed.len() {
            return Err(src.remote_error(
                &missed[0],
                format!("{} responses for {} ranges", got.len(), missed.len()),
            ));
        }
        for (range, bytes) in missed.iter().zip(got) {
            src.supply(*range, bytes)?;
        }
    }
    Err(Error::Limit {
        structure: "remote read without a fetcher",
        offset: 0,
        what: "rounds of supplying byte ranges",
        value: DRIVE_ROUNDS as u64,
        limit: DRIVE_ROUNDS as u64,
    })
}
