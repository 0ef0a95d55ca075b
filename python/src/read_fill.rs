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
    if std::env::var_os("PUREHDF_DEV_PREAD").is_some() {
        return whole_pread(ds, out);
    }
    let Some(bytes) = ds.contiguous_bytes()? else {
        return Ok(false);
    };
    if bytes.len() != out.len() {
        return Ok(false);
    }
    copy_spread(&bytes, out);
    Ok(true)
}

fn whole_pread(ds: &Dataset, out: &mut [u8]) -> purehdf::Result<bool> {
    use purehdf::low_level::messages::layout::Layout;
    use std::os::unix::fs::FileExt;
    let Layout::Contiguous {
        address: Some(a), ..
    } = ds.layout()
    else {
        return Ok(false);
    };
    let Some(path) = ds.file().path() else {
        return Ok(false);
    };
    let at = ds.file().superblock().base_address + a;
    let f = std::fs::File::open(path)?;
    let k = (out.len() / PIECE).clamp(1, 4 * threads::threads());
    let step = out.len().div_ceil(k).max(1);
    let pieces: Vec<Mutex<(u64, &mut [u8])>> = out
        .chunks_mut(step)
        .enumerate()
        .map(|(i, d)| Mutex::new((at + (i * step) as u64, d)))
        .collect();
    let r = threads::map(&pieces, |p| {
        let mut g = p.lock().unwrap_or_else(|e| e.into_inner());
        let (off, d) = &mut *g;
        f.read_exact_at(d, *off)
    });
    for x in r {
        x?;
    }
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
