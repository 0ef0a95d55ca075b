//! Planned reads in steps: up to `depth` steps are fetched at once on helper
//! threads, and each step is decoded as soon as its bytes have arrived
//! (in the order they arrive), so fetching and decoding overlap.

use std::sync::{Condvar, Mutex};

use super::ByteRange;
use crate::error::Result;
use crate::source::Source;

/// Where the steps of one read stand, shared by the decoder and the helpers.
struct Board {
    /// Next step a helper takes.
    next: usize,
    /// Steps decoded and released so far.
    finished: usize,
    /// Fetch outcome of each step, `None` while unfetched; taken by the decoder.
    done: Vec<Option<Result<()>>>,
    /// The read ended (an error): helpers stop taking steps.
    stop: bool,
}

/// Run `decode(i)` for every step `i` of `steps` (the stored ranges step `i`
/// reads), each after [`Source::prefetch`] of its ranges, releasing them
/// after it. With `depth` of 2 or more, helper threads fetch ahead of the
/// decoder so that up to `depth` steps are being fetched, fetched or being
/// decoded at once (at most `depth` steps' bytes held), and steps are decoded in the order their
/// bytes arrive: `decode` must not depend on the order (each step writes its
/// own part of the output). With `depth` below 2 (or when no thread can be
/// started) each step is fetched, then decoded, in order. A step whose
/// decode reports missing bytes (a host that supplies bytes itself, then
/// retries) keeps its ranges for the retry.
pub(crate) fn run_steps(
    src: &dyn Source,
    steps: &[Vec<ByteRange>],
    depth: usize,
    mut decode: impl FnMut(usize) -> Result<()>,
) -> Result<()> {
    if depth < 2 || steps.len() < 2 {
        return steps.iter().enumerate().try_for_each(|(i, want)| {
            src.prefetch(want)?;
            finish(src, want, decode(i))
        });
    }
    let helpers = depth.min(steps.len());
    let board = Mutex::new(Board {
        next: 0,
        finished: 0,
        done: (0..steps.len()).map(|_| None).collect(),
        stop: false,
    });
    let changed = Condvar::new();
    let lock = || board.lock().unwrap_or_else(|p| p.into_inner());
    let outcome = std::thread::scope(|s| {
        let mut started = 0usize;
        for _ in 0..helpers {
            let spawned = std::thread::Builder::new()
                .name("purehdf-fetch".into())
                .spawn_scoped(s, || helper(src, steps, depth, &board, &changed));
            if spawned.is_ok() {
                started += 1;
            }
        }
        if started == 0 {
            return None;
        }
        let r = decode_arrivals(src, steps, &board, &changed, &mut decode);
        if r.is_err() {
            lock().stop = true;
            changed.notify_all();
        }
        Some(r)
    });
    // Every helper has ended: let go of steps fetched but never decoded.
    let mut b = lock();
    for (i, d) in b.done.iter_mut().enumerate() {
        if let (Some(Ok(())), Some(want)) = (d.take(), steps.get(i)) {
            src.release(want);
        }
    }
    drop(b);
    match outcome {
        Some(r) => r,
        // No helper thread: fetch and decode here, in order.
        None => run_steps(src, steps, 1, decode),
    }
}

/// A helper: take the next step while fewer than `depth` steps are ahead of
/// the decoder, fetch it, post the outcome.
fn helper(
    src: &dyn Source,
    steps: &[Vec<ByteRange>],
    depth: usize,
    board: &Mutex<Board>,
    changed: &Condvar,
) {
    let lock = || board.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let i = {
            let mut b = lock();
            while !b.stop && b.next < steps.len() && b.next >= b.finished.saturating_add(depth) {
                b = changed.wait(b).unwrap_or_else(|p| p.into_inner());
            }
            if b.stop || b.next >= steps.len() {
                return;
            }
            b.next += 1;
            b.next - 1
        };
        let r = steps.get(i).map_or(Ok(()), |want| src.prefetch(want));
        let failed = r.is_err();
        let mut b = lock();
        if let Some(slot) = b.done.get_mut(i) {
            *slot = Some(r);
        }
        if failed {
            // The decoder ends the read when it meets this; fetch no more.
            b.stop = true;
        }
        drop(b);
        changed.notify_all();
        if failed {
            return;
        }
    }
}

/// The decoder: take fetched steps as they arrive and decode each.
fn decode_arrivals(
    src: &dyn Source,
    steps: &[Vec<ByteRange>],
    board: &Mutex<Board>,
    changed: &Condvar,
    decode: &mut impl FnMut(usize) -> Result<()>,
) -> Result<()> {
    let lock = || board.lock().unwrap_or_else(|p| p.into_inner());
    for _ in 0..steps.len() {
        let (i, fetched) = {
            let mut b = lock();
            loop {
                let ready = b.done.iter().position(|d| d.is_some());
                if let Some(i) = ready {
                    let got = b.done.get_mut(i).and_then(Option::take);
                    // A taken step leaves a hole (`None`) that no helper fills
                    // again: `next` only grows.
                    break (i, got.unwrap_or(Ok(())));
                }
                b = changed.wait(b).unwrap_or_else(|p| p.into_inner());
            }
        };
        fetched?;
        let want = steps.get(i).map_or(&[][..], |w| &w[..]);
        finish(src, want, decode(i))?;
        lock().finished += 1;
        changed.notify_all();
    }
    Ok(())
}

/// Smallest step a read is cut into to keep more requests in flight. Below
/// this a request's fixed cost outweighs the overlap it buys: measured on a
/// loopback S3 server (moto), a 20 MiB image read in 1 MiB steps 16 at a time
/// took twice as long as in 8 MiB steps, so reads are not cut finer than the
/// default request cap (a large read still keeps `depth` requests in flight).
pub(crate) const MIN_STEP: u64 = 8 << 20;

/// Stored bytes per step for a read of `total` bytes: `step` at most, less
/// when that keeps `depth` steps in flight (never below [`MIN_STEP`]), and
/// `depth` steps together within `window` (the memory bound).
pub(crate) fn step_bytes(total: u64, step: u64, depth: usize, window: u64) -> u64 {
    let depth = depth.max(1) as u64;
    let spread = total.div_ceil(depth).max(MIN_STEP);
    step.min(spread).min(window / depth).max(1)
}

/// Release a decoded step's ranges, unless its decode asked for more bytes.
fn finish(src: &dyn Source, want: &[ByteRange], r: Result<()>) -> Result<()> {
    if !r.as_ref().is_err_and(|e| e.needed_ranges().is_some()) {
        src.release(want);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::sync::Mutex;

    /// A source that records prefetches and releases, and how many steps
    /// it held at once; `fail_at` makes that prefetch fail.
    #[derive(Default)]
    struct Recorder {
        held: Mutex<(Vec<u64>, usize)>,
        fail_at: Option<u64>,
    }

    impl Source for Recorder {
        fn len(&self) -> u64 {
            1 << 20
        }
        fn read_exact_at(&self, _: u64, _: &mut [u8]) -> std::io::Result<()> {
            Ok(())
        }
        fn prefetch(&self, ranges: &[ByteRange]) -> Result<()> {
            let at = ranges[0].offset;
            if self.fail_at == Some(at) {
                return Err(Error::malformed("test", at, "refused"));
            }
            let mut h = self.held.lock().unwrap();
            h.0.push(at);
            h.1 = h.1.max(h.0.len());
            Ok(())
        }
        fn release(&self, ranges: &[ByteRange]) {
            let mut h = self.held.lock().unwrap();
            h.0.retain(|&o| o != ranges[0].offset);
        }
    }

    fn steps(n: u64) -> Vec<Vec<ByteRange>> {
        (0..n).map(|i| vec![ByteRange::new(i * 100, 10)]).collect()
    }

    #[test]
    fn every_step_decodes_once_with_at_most_depth_held() {
        for depth in [1, 2, 4] {
            let src = Recorder::default();
            let mut seen = Vec::new();
            run_steps(&src, &steps(9), depth, |i| {
                // the step being decoded is fetched
                assert!(src.held.lock().unwrap().0.contains(&(i as u64 * 100)));
                seen.push(i);
                // time for the helper to fetch the next step meanwhile
                std::thread::sleep(std::time::Duration::from_millis(5));
                Ok(())
            })
            .unwrap();
            if depth == 1 {
                assert_eq!(seen, (0..9).collect::<Vec<_>>());
            }
            seen.sort_unstable();
            assert_eq!(seen, (0..9).collect::<Vec<_>>(), "each step once");
            let h = src.held.lock().unwrap();
            assert!(h.0.is_empty(), "all released");
            assert!(h.1 <= depth, "{} steps held at once, depth {depth}", h.1);
            if depth > 1 {
                // helpers fetched ahead while a step decoded
                assert!(h.1 >= 2, "{} steps held at once, depth {depth}", h.1);
            }
        }
    }

    #[test]
    fn steps_spread_a_read_over_the_depth() {
        let mib = 1u64 << 20;
        // 320 MiB over 16 in flight with 64 MiB steps: 20 MiB steps
        assert_eq!(step_bytes(320 * mib, 64 * mib, 16, 1 << 40), 20 * mib);
        // small reads: no step below the floor
        assert_eq!(step_bytes(20 * mib, 64 * mib, 16, 1 << 40), MIN_STEP);
        assert_eq!(step_bytes(3 * mib, 2 * mib, 16, 256 * mib), 2 * mib);
        // large reads: the configured step
        assert_eq!(step_bytes(1 << 40, 8 * mib, 16, 256 * mib), 8 * mib);
        // depth steps fit the window
        assert_eq!(step_bytes(1 << 40, 8 * mib, 16, 64 * mib), 4 * mib);
        assert_eq!(step_bytes(0, 0, 0, 0), 1);
    }

    #[test]
    fn a_failed_fetch_or_decode_ends_the_read_and_releases() {
        let src = Recorder {
            fail_at: Some(500),
            ..Recorder::default()
        };
        let mut seen = Vec::new();
        let e = run_steps(&src, &steps(9), 3, |i| {
            seen.push(i);
            Ok(())
        })
        .unwrap_err();
        assert!(e.to_string().contains("refused"), "{e}");
        // step 5 never decodes, nor any step the helpers had not taken
        assert!(!seen.contains(&5) && seen.len() <= 7, "{seen:?}");
        assert!(src.held.lock().unwrap().0.is_empty());

        let src = Recorder::default();
        let e = run_steps(&src, &steps(9), 4, |i| {
            if i == 3 {
                return Err(Error::malformed("decode", 3, "bad chunk"));
            }
            Ok(())
        })
        .unwrap_err();
        assert!(e.to_string().contains("bad chunk"), "{e}");
        // the step fetched ahead of the failure is let go too
        assert!(src.held.lock().unwrap().0.is_empty());
    }
}
