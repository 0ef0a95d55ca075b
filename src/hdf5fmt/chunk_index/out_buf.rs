//! The caller's output buffer of a chunked read ([`OutBuf`]), written by
//! several chunk jobs at once, and the run writers (copy, zero, fill) the
//! read path and the strided and b2nd-window readers share.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};
use crate::selection::{box_runs, Placement};

/// The caller's output buffer, written by several chunk jobs at once: each job
/// writes only the box where its chunk meets the selection, and chunk boxes
/// (placed by grid position) are disjoint, so no byte is written twice.
/// The buffer may start uninitialised: it is only ever written, never read,
/// and it counts the bytes written so the caller can tell whether every byte
/// of it was (see `read::read_chunked_uninit`).
pub(super) struct OutBuf {
    pub(super) ptr: *mut MaybeUninit<u8>,
    pub(super) len: usize,
    /// Bytes handed out in completed runs (runs are disjoint, see above).
    pub(super) written: AtomicUsize,
    /// The buffer is known to hold zeros only (and is not counted): zero
    /// fills are skipped.
    pub(super) zeroed: bool,
}

// SAFETY: `OutBuf` is built from a `&mut` slice that outlives every job (the
// jobs run inside `read_into`, whose callers hold that borrow and do not
// touch the buffer meanwhile); jobs write disjoint byte ranges only.
unsafe impl Sync for OutBuf {}

/// Write `src` into `dst` (equal lengths; `MaybeUninit::write_copy_of_slice`
/// is newer than the crate's minimum Rust version).
/// Copies `min(dst.len(), src.len())` bytes.
#[inline(always)]
pub(super) fn write_slice(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    let n = dst.len().min(src.len());
    // SAFETY: both ranges hold `n` bytes; `dst` is an exclusive borrow, so the
    // two cannot overlap; `u8` and `MaybeUninit<u8>` share their layout.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast::<u8>(), n) };
}

pub(super) fn bad_box() -> Error {
    Error::malformed("chunked read", 0, "chunk box outside its buffers")
}

impl OutBuf {
    pub(super) fn new(out: &mut [u8]) -> Self {
        OutBuf {
            ptr: out.as_mut_ptr().cast(),
            len: out.len(),
            written: AtomicUsize::new(0),
            zeroed: false,
        }
    }

    pub(super) fn new_uninit(out: &mut [MaybeUninit<u8>]) -> Self {
        OutBuf {
            ptr: out.as_mut_ptr(),
            len: out.len(),
            written: AtomicUsize::new(0),
            zeroed: false,
        }
    }

    /// Bytes written so far by completed runs.
    pub(super) fn written(&self) -> usize {
        self.written.load(Ordering::Acquire)
    }

    /// Count `n` bytes written outside [`OutBuf::for_runs`].
    pub(super) fn add_written(&self, n: usize) {
        self.written.fetch_add(n, Ordering::AcqRel);
    }

    /// Call `f(source byte offset, destination run)` for every contiguous run
    /// of the box `lo .. hi` copied from an array placed at `sp` (`src_len`
    /// bytes) into this buffer placed at `dp`. `f` must write the whole run.
    /// Generic (not `dyn`) so the per-run writer inlines into the run loop:
    /// chunk and block rows are often only 32–64 bytes.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn for_runs<F>(
        &self,
        sp: Placement<'_>,
        dp: Placement<'_>,
        lo: &[u64],
        hi: &[u64],
        elem: usize,
        src_len: usize,
        f: &mut F,
    ) -> Result<()>
    where
        F: FnMut(usize, &mut [MaybeUninit<u8>]) -> Option<()>,
    {
        let mut total = 0usize;
        let done = box_runs(sp, dp, lo, hi, elem, src_len, self.len, &mut |s, d, n| {
            if d.checked_add(n)? > self.len {
                return None;
            }
            // SAFETY: `d + n <= len` was just checked, so the range lies inside
            // the buffer; it belongs to this job's box only (see the type's
            // comment), so no other reference to these bytes exists while `f`
            // runs. `MaybeUninit<u8>` has no validity requirement.
            let run = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(d), n) };
            f(s, run)?;
            total += n;
            Some(())
        });
        self.written.fetch_add(total, Ordering::AcqRel);
        done.ok_or_else(bad_box)
    }

    /// [`crate::selection::copy_box`] into the shared buffer.
    pub(super) fn copy_box(
        &self,
        src: &[u8],
        sp: Placement<'_>,
        dp: Placement<'_>,
        lo: &[u64],
        hi: &[u64],
        elem: usize,
    ) -> Result<()> {
        self.for_runs(sp, dp, lo, hi, elem, src.len(), &mut |s, run| {
            copy_run(run, src.get(s..s.checked_add(run.len())?)?).then_some(())
        })
    }

    /// Fill the box `lo .. hi` of the buffer placed at `dp` with the element
    /// `value` (`elem` bytes; all zero when `value` is `None`).
    pub(super) fn fill_box(
        &self,
        dp: Placement<'_>,
        lo: &[u64],
        hi: &[u64],
        elem: usize,
        value: Option<&[u8]>,
    ) -> Result<()> {
        let n = dp
            .shape
            .iter()
            .try_fold(elem, |a, &s| a.checked_mul(usize::try_from(s).ok()?))
            .ok_or_else(bad_box)?;
        let value = value.filter(|v| <[u8]>::len(v) == elem && v.iter().any(|&b| b != 0));
        if value.is_none() && self.zeroed {
            return Ok(());
        }
        let Some(value) = value else {
            return self.for_runs(dp, dp, lo, hi, elem, n, &mut |_, run| {
                zero_run(run);
                Some(())
            });
        };
        self.for_runs(dp, dp, lo, hi, elem, n, &mut |_, run| {
            fill_run(run, Some(value));
            Some(())
        })
    }

    /// Zero the box `lo .. hi` of the buffer placed at `dp`.
    pub(super) fn fill_zero(
        &self,
        dp: Placement<'_>,
        lo: &[u64],
        hi: &[u64],
        elem: usize,
    ) -> Result<()> {
        self.fill_box(dp, lo, hi, elem, None)
    }
}

/// Zero `run`; the short rows of chunk and block boxes (16–256 bytes) with
/// inline stores, where a `memset` call costs more than the stores.
#[inline(always)]
pub(super) fn zero_run(run: &mut [MaybeUninit<u8>]) {
    byte_run(run, 0);
}

/// Set every byte of `run` to `v`, as [`zero_run`].
#[inline(always)]
pub(super) fn byte_run(run: &mut [MaybeUninit<u8>], v: u8) {
    fn fixed<const N: usize>(run: &mut [MaybeUninit<u8>], v: u8) -> bool {
        match <&mut [MaybeUninit<u8>; N]>::try_from(run) {
            Ok(r) => {
                *r = [MaybeUninit::new(v); N];
                true
            }
            Err(_) => false,
        }
    }
    let done = match run.len() {
        16 => fixed::<16>(run, v),
        32 => fixed::<32>(run, v),
        64 => fixed::<64>(run, v),
        128 => fixed::<128>(run, v),
        256 => fixed::<256>(run, v),
        _ => false,
    };
    if !done {
        // SAFETY: `run` is an exclusive borrow of `run.len()` bytes.
        unsafe { std::ptr::write_bytes(run.as_mut_ptr(), v, run.len()) };
    }
}

/// Write every byte of `run`: zeros, or `value` repeated (a trailing partial
/// element, which whole-element runs never have, gets a prefix of `value`).
pub(super) fn fill_run(run: &mut [MaybeUninit<u8>], value: Option<&[u8]>) {
    match value {
        Some(v) if !v.is_empty() => {
            if let Some(&b) = v.first().filter(|&&b| v.iter().all(|&x| x == b)) {
                // One repeated byte (every 1-byte fill value): a plain memset.
                // SAFETY: `run` is an exclusive borrow of `run.len()` bytes.
                unsafe { std::ptr::write_bytes(run.as_mut_ptr(), b, run.len()) };
                return;
            }
            // Long runs: copy a stack pattern of whole elements (about 4 KiB)
            // instead of one element at a time. Each copy starts on an element
            // boundary, so the last, shorter copy (a prefix of the pattern)
            // keeps the phase, partial trailing element included.
            const PATTERN: usize = 4096;
            let whole = PATTERN / v.len() * v.len();
            if whole > 0 && run.len() >= 2 * whole {
                let mut pat = [0u8; PATTERN];
                for c in pat[..whole].chunks_exact_mut(v.len()) {
                    c.copy_from_slice(v);
                }
                let mut parts = run.chunks_exact_mut(whole);
                for p in &mut parts {
                    write_slice(p, &pat[..whole]);
                }
                let rest = parts.into_remainder();
                let k = rest.len();
                write_slice(rest, &pat[..k]);
                return;
            }
            let mut parts = run.chunks_exact_mut(v.len());
            for p in &mut parts {
                write_slice(p, v);
            }
            let rest = parts.into_remainder();
            let k = rest.len();
            write_slice(rest, v.get(..k).unwrap_or_default());
        }
        _ => {
            // SAFETY: `run` is an exclusive borrow of `run.len()` bytes.
            unsafe { std::ptr::write_bytes(run.as_mut_ptr(), 0, run.len()) };
        }
    }
}

/// Copy one run; short rows (the usual 64–256 bytes of a chunk row) inline,
/// where a `memcpy` call costs more than the copy. `src` must be as long as
/// `dst` (callers slice it so); a shorter `src` leaves `dst` unwritten.
#[inline(always)]
pub(super) fn copy_run(dst: &mut [MaybeUninit<u8>], src: &[u8]) -> bool {
    fn fixed<const N: usize>(dst: &mut [MaybeUninit<u8>], src: &[u8]) -> bool {
        match (
            <&mut [MaybeUninit<u8>; N]>::try_from(dst),
            <&[u8; N]>::try_from(src),
        ) {
            (Ok(d), Ok(s)) => {
                write_slice(d, s);
                true
            }
            _ => false,
        }
    }
    let done = match dst.len() {
        16 => fixed::<16>(dst, src),
        32 => fixed::<32>(dst, src),
        64 => fixed::<64>(dst, src),
        128 => fixed::<128>(dst, src),
        256 => fixed::<256>(dst, src),
        _ => false,
    };
    if done {
        return true;
    }
    if dst.len() != src.len() {
        return false;
    }
    write_slice(dst, src);
    true
}

#[cfg(test)]
mod fill_tests {
    use super::*;

    /// Every fill path (memset, 4 KiB pattern, per element) writes `value`
    /// repeated from the run's start, a partial trailing element included.
    #[test]
    fn fill_run_repeats_the_value() {
        let values: [&[u8]; 6] = [
            &[7],
            &[3, 3, 3, 3],
            &[1, 2],
            &[1, 2, 3],
            &[9; 5],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17],
        ];
        for v in values {
            for len in [0usize, 1, 5, 100, 4095, 8190, 8192, 8193, 12_289, 40_000] {
                let mut run = vec![MaybeUninit::new(0xEEu8); len];
                fill_run(&mut run, Some(v));
                // SAFETY: every element was initialised by `MaybeUninit::new`.
                let got: Vec<u8> = run.iter().map(|b| unsafe { b.assume_init() }).collect();
                let want: Vec<u8> = (0..len).map(|i| v[i % v.len()]).collect();
                assert_eq!(got, want, "value {v:?}, len {len}");
            }
        }
        let mut run = vec![MaybeUninit::new(0xEEu8); 300];
        fill_run(&mut run, None);
        // SAFETY: every element was initialised by `MaybeUninit::new`.
        assert!(run.iter().all(|b| unsafe { b.assume_init() } == 0));
    }
}
