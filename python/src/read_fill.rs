//! Whole contiguous datasets into a fresh output: copies from the file's
//! mapping in pieces over the pool's threads, so that the output's
//! first-touch page faults and the copies run on every core.

use purehdf::Dataset;
use purehdf_filters::threads;
use std::sync::Mutex;

/// Pieces at least this large are worth a thread of their own.
const PIECE: usize = 4 << 20;

/// Fill `out` with the stored bytes of the whole contiguous dataset `ds`;
/// `false` (nothing written) when `ds` is not contiguous in this file or
/// its storage is not exactly `out.len()` bytes.
pub(crate) fn whole_contiguous(ds: &Dataset, out: &mut [u8]) -> purehdf::Result<bool> {
    let Some(bytes) = ds.contiguous_bytes()? else {
        return Ok(false);
    };
    if bytes.len() != out.len() {
        return Ok(false);
    }
    copy_spread(&bytes, out);
    Ok(true)
}

/// `dst` ← `src` (same lengths), in pieces on the pool when it is large.
fn copy_spread(src: &[u8], dst: &mut [u8]) {
    let k = (dst.len() / PIECE).min(4 * threads::threads());
    if k <= 1 || !threads::parallel() {
        dst.copy_from_slice(src);
        return;
    }
    let step = dst.len().div_ceil(k);
    let pieces: Vec<Mutex<(&[u8], &mut [u8])>> = src
        .chunks(step)
        .zip(dst.chunks_mut(step))
        .map(Mutex::new)
        .collect();
    threads::map(&pieces, |p| {
        let mut g = p.lock().unwrap_or_else(|e| e.into_inner());
        let (s, d) = &mut *g;
        d.copy_from_slice(s);
    });
}
