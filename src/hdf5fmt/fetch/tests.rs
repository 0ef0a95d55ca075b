//! Unit tests of the remote source: what each read asks the fetcher for.

use std::sync::{Arc, Mutex};

use super::{ByteRange, Fetch, RangeOptions, RangeSource};
use crate::error::Result;
use crate::source::Source;

/// An object of `n` bytes (byte i = i mod 251), logging every batch.
struct Log {
    n: u64,
    calls: Mutex<Vec<Vec<ByteRange>>>,
}

impl Fetch for Log {
    fn len(&self) -> u64 {
        self.n
    }
    fn describe(&self) -> String {
        "mem://log".into()
    }
    fn fetch(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>> {
        self.calls.lock().unwrap().push(ranges.to_vec());
        Ok(ranges
            .iter()
            .map(|r| {
                (r.offset..r.offset + r.len)
                    .map(|i| (i % 251) as u8)
                    .collect()
            })
            .collect())
    }
}

fn source(n: u64, opts: RangeOptions) -> (Arc<Log>, RangeSource) {
    let log = Arc::new(Log {
        n,
        calls: Mutex::new(Vec::new()),
    });
    let src = RangeSource::new(log.clone(), opts).unwrap();
    (log, src)
}

fn r(o: u64, l: u64) -> ByteRange {
    ByteRange::new(o, l)
}

fn opts() -> RangeOptions {
    RangeOptions {
        block_size: 100,
        cache_bytes: 4000,
        first_read: 150,
        tail_read: 50,
        coalesce_gap: 10,
        max_request: 300,
        in_flight: 4,
        window_bytes: 1000,
        pipeline_step: 0,
    }
}

fn want(o: u64, n: usize) -> Vec<u8> {
    (o..o + n as u64).map(|i| (i % 251) as u8).collect()
}

#[test]
fn first_request_is_head_and_tail_block_aligned() {
    let (log, _src) = source(10_000, opts());
    assert_eq!(
        *log.calls.lock().unwrap(),
        vec![vec![r(0, 200), r(9900, 100)]]
    );
    // A small object: head and tail join.
    let (log, _src) = source(230, opts());
    assert_eq!(*log.calls.lock().unwrap(), vec![vec![r(0, 230)]]);
}

#[test]
fn a_read_fetches_its_missing_blocks_as_one_range() {
    let (log, src) = source(10_000, opts());
    // Blocks 5..=8 missing: one range.
    assert_eq!(&*src.read("t", 520, 350).unwrap(), &want(520, 350)[..]);
    // Block 2 missing, 3..=4 too, 5 held: one range 200..500.
    assert_eq!(&*src.read("t", 190, 320).unwrap(), &want(190, 320)[..]);
    // Everything held now: no call.
    assert_eq!(&*src.read("t", 0, 900).unwrap(), &want(0, 900)[..]);
    let calls = log.calls.lock().unwrap();
    assert_eq!(calls[1..], [vec![r(500, 400)], vec![r(200, 300)]]);
    assert!(src.held_bytes() <= 4000);
}

#[test]
fn large_reads_bypass_the_cache_in_capped_requests() {
    let (log, src) = source(10_000, opts());
    // Longer than a quarter of the cache.
    let mut out = vec![0u8; 1100];
    src.read_into("t", 1000, &mut out).unwrap();
    assert_eq!(out, want(1000, 1100));
    assert_eq!(
        log.calls.lock().unwrap()[1],
        vec![r(1000, 300), r(1300, 300), r(1600, 300), r(1900, 200)]
    );
    assert_eq!(src.held_bytes(), 300, "only the first request's blocks");
}

#[test]
fn prefetched_windows_serve_sub_reads_until_released() {
    let (log, src) = source(10_000, opts());
    // Two chunks 5 bytes apart (joined), one far away; one in the head.
    src.prefetch(&[r(3000, 100), r(3105, 50), r(5000, 20), r(10, 20)])
        .unwrap();
    assert_eq!(
        log.calls.lock().unwrap()[1],
        vec![r(3000, 155), r(5000, 20)]
    );
    // A read across the joined chunks, then one inside the far one: no call.
    assert_eq!(&*src.read("t", 3050, 100).unwrap(), &want(3050, 100)[..]);
    assert_eq!(&*src.read("t", 5005, 10).unwrap(), &want(5005, 10)[..]);
    assert_eq!(log.calls.lock().unwrap().len(), 2);
    src.release(&[r(3000, 100), r(3105, 50), r(5000, 20)]);
    assert!(src.held_bytes() <= 4000);
    // Released: the next read goes back to the fetcher (through blocks).
    src.read("t", 5005, 10).unwrap();
    assert_eq!(log.calls.lock().unwrap().len(), 3);
}

#[test]
fn no_fetcher_reads_ask_then_proceed() {
    let src = RangeSource::without_fetcher(10_000, "host://x", opts()).unwrap();
    let e = src.read("t", 520, 10).unwrap_err();
    // The first miss asks for head and tail too, all block-aligned.
    let need = e.needed_ranges().unwrap().to_vec();
    assert_eq!(need, vec![r(0, 200), r(500, 100), r(9900, 100)]);
    assert_eq!(src.take_missed(), need);
    for n in &need {
        src.supply(*n, want(n.offset, n.len as usize)).unwrap();
    }
    assert_eq!(&*src.read("t", 520, 10).unwrap(), &want(520, 10)[..]);
    // A planned window asks for all its requests at once.
    let e = src.prefetch(&[r(3000, 10), r(4000, 10)]).unwrap_err();
    assert_eq!(e.needed_ranges().unwrap(), &[r(3000, 10), r(4000, 10)]);
    // Too much for one window without a fetcher: a typed limit.
    let e = src.prefetch(&[r(0, 999), r(2000, 999)]).unwrap_err();
    assert!(matches!(e, crate::Error::Limit { .. }), "{e}");
    // Supplies outside the object or of the wrong length are refused.
    assert!(src.supply(r(9990, 20), vec![0; 20]).is_err());
    assert!(src.supply(r(3000, 10), vec![0; 9]).is_err());
}

#[test]
fn no_fetcher_rounds_ask_for_one_window_of_data_at_most() {
    let src = RangeSource::without_fetcher(10_000, "host://x", opts()).unwrap();
    let a = [r(2000, 300), r(2300, 300)];
    let b = [r(6000, 300), r(6300, 300)];
    assert!(src.prefetch(&a).is_err());
    // A second dataset in the same round would pass the window: deferred.
    let e = src.prefetch(&b).unwrap_err();
    assert!(e.needed_ranges().is_some());
    assert_eq!(src.take_missed(), a.to_vec());
    for n in a {
        src.supply(n, want(n.offset, n.len as usize)).unwrap();
    }
    // Next round: the first is held, the second asked for now.
    src.prefetch(&a).unwrap();
    assert!(src.prefetch(&b).is_err());
    assert_eq!(src.take_missed(), b.to_vec());
    src.release(&a);
    src.settle();
    assert_eq!(src.held_bytes(), 0);
}
