//! Planned reads in steps: while one step's chunks decode, the next step's
//! stored ranges are fetched on a helper thread.

use std::sync::mpsc::sync_channel;

use super::ByteRange;
use crate::error::Result;
use crate::source::Source;

/// Run `decode(i)` for every step `i` of `steps` (the stored ranges step `i`
/// reads), each after [`Source::prefetch`] of its ranges, releasing them
/// after it. With `ahead`, step `i + 1` is fetched on a helper thread while
/// step `i` decodes, so at most two steps' bytes are held at once; without
/// (or when no thread can be started), each step is fetched, then decoded.
/// A step whose decode reports missing bytes (a host that supplies bytes
/// itself, then retries) keeps its ranges for the retry.
pub(crate) fn run_steps(
    src: &dyn Source,
    steps: &[Vec<ByteRange>],
    ahead: bool,
    mut decode: impl FnMut(usize) -> Result<()>,
) -> Result<()> {
    let Some(first) = steps.first() else {
        return Ok(());
    };
    if !ahead || steps.len() < 2 {
        return steps.iter().enumerate().try_for_each(|(i, want)| {
            src.prefetch(want)?;
            finish(src, want, decode(i))
        });
    }
    src.prefetch(first)?;
    std::thread::scope(|s| {
        // A rendezvous channel: the helper fetches one step, then waits for
        // the decoder to take it before it fetches the next.
        let (tx, rx) = sync_channel::<Result<()>>(0);
        let helper = std::thread::Builder::new()
            .name("purehdf-fetch".into())
            .spawn_scoped(s, move || {
                for want in steps.iter().skip(1) {
                    let r = src.prefetch(want);
                    let fetched = r.is_ok();
                    if tx.send(r).is_err() {
                        // The decoder stopped (an error): nobody reads these.
                        if fetched {
                            src.release(want);
                        }
                        return;
                    }
                    if !fetched {
                        return;
                    }
                }
            });
        let mut rx = helper.is_ok().then_some(rx);
        for (i, want) in steps.iter().enumerate() {
            if i > 0 {
                match rx.as_ref().map(|rx| rx.recv()) {
                    Some(Ok(r)) => r?,
                    // No helper thread (or it ended early): fetch here.
                    Some(Err(_)) | None => {
                        rx = None;
                        src.prefetch(want)?;
                    }
                }
            }
            finish(src, want, decode(i))?;
        }
        Ok(())
    })
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
    fn every_step_decodes_in_order_with_at_most_two_held() {
        for ahead in [false, true] {
            let src = Recorder::default();
            let mut seen = Vec::new();
            run_steps(&src, &steps(9), ahead, |i| {
                // the step being decoded is fetched
                assert!(src.held.lock().unwrap().0.contains(&(i as u64 * 100)));
                seen.push(i);
                // time for the helper to fetch the next step meanwhile
                std::thread::sleep(std::time::Duration::from_millis(5));
                Ok(())
            })
            .unwrap();
            assert_eq!(seen, (0..9).collect::<Vec<_>>());
            let h = src.held.lock().unwrap();
            assert!(h.0.is_empty(), "all released");
            assert_eq!(h.1, if ahead { 2 } else { 1 }, "most steps held at once");
        }
    }

    #[test]
    fn a_failed_fetch_or_decode_ends_the_read_and_releases() {
        let src = Recorder {
            fail_at: Some(500),
            ..Recorder::default()
        };
        let mut seen = Vec::new();
        let e = run_steps(&src, &steps(9), true, |i| {
            seen.push(i);
            Ok(())
        })
        .unwrap_err();
        assert!(e.to_string().contains("refused"), "{e}");
        assert_eq!(seen, (0..5).collect::<Vec<_>>());
        assert!(src.held.lock().unwrap().0.is_empty());

        let src = Recorder::default();
        let e = run_steps(&src, &steps(9), true, |i| {
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
