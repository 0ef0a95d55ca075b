//! Request planning: the byte ranges a read needs, coalesced into few
//! requests (a gap rule and a size cap), and split into windows.

use super::ByteRange;

/// Merge `ranges` into requests: sorted by offset, overlapping and touching
/// ranges joined, and two ranges less than `gap` bytes apart joined too (the
/// gap bytes are fetched and dropped); each joined run is then cut into
/// requests of at most `max_request` bytes (the last one shorter). Empty
/// ranges are dropped; a range whose end overflows `u64` is clamped to end at
/// `u64::MAX`.
///
/// The result is sorted, its requests do not overlap and none is longer than
/// `max_request`, every input byte lies in one of them, and a run of `n`
/// bytes takes `ceil(n / max_request)` requests, so a read of `b` stored bytes
/// lying close together takes about `b / max_request + 1` requests. Readers
/// stitch an input range back together when it spans two requests.
pub fn coalesce(ranges: &[ByteRange], gap: u64, max_request: u64) -> Vec<ByteRange> {
    let max_request = max_request.max(1);
    let mut sorted: Vec<(u64, u64)> = ranges
        .iter()
        .filter(|r| r.len > 0)
        .map(|r| (r.offset, r.end().unwrap_or(u64::MAX)))
        .collect();
    sorted.sort_unstable();
    let mut runs: Vec<(u64, u64)> = Vec::with_capacity(sorted.len());
    for (s, e) in sorted {
        match runs.last_mut() {
            Some((_, ce)) if s <= *ce || s - *ce < gap => *ce = (*ce).max(e),
            _ => runs.push((s, e)),
        }
    }
    let mut out: Vec<ByteRange> = Vec::with_capacity(runs.len());
    for (s, e) in runs {
        let mut at = s;
        while at < e {
            let n = (e - at).min(max_request);
            out.push(ByteRange::new(at, n));
            at += n;
        }
    }
    out
}

/// True when `inner` lies inside `outer`.
pub fn contains(outer: &ByteRange, inner: &ByteRange) -> bool {
    match (outer.end(), inner.end()) {
        (Some(oe), Some(ie)) => inner.offset >= outer.offset && ie <= oe,
        _ => false,
    }
}

/// Split `items` (each with its stored byte range) into consecutive windows
/// whose ranges add up to at most `window_bytes` (a single item larger than
/// that is a window of its own) and hold at most `max_items` items.
/// Returns the index ranges of the windows.
pub fn windows<T>(
    items: &[T],
    range: impl Fn(&T) -> Option<ByteRange>,
    window_bytes: u64,
    max_items: usize,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0usize, 0u64);
    for (i, it) in items.iter().enumerate() {
        let n = range(it).map_or(0, |r| r.len);
        let full = i > start && (bytes.saturating_add(n) > window_bytes || i - start >= max_items);
        if full {
            out.push(start..i);
            start = i;
            bytes = 0;
        }
        bytes = bytes.saturating_add(n);
    }
    if start < items.len() {
        out.push(start..items.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn r(o: u64, l: u64) -> ByteRange {
        ByteRange::new(o, l)
    }

    #[test]
    fn coalesce_examples() {
        // Gap 10: 0..5 and 12..20 are 7 apart → joined; 40..50 is 20 away.
        assert_eq!(
            coalesce(&[r(40, 10), r(12, 8), r(0, 5)], 10, 100),
            vec![r(0, 20), r(40, 10)]
        );
        // A joined run longer than the cap is cut at the cap.
        assert_eq!(
            coalesce(&[r(0, 60), r(61, 60)], 10, 100),
            vec![r(0, 100), r(100, 21)]
        );
        // Overlapping ranges join; empty ones vanish.
        assert_eq!(
            coalesce(&[r(0, 80), r(50, 80), r(500, 0)], 0, 1000),
            vec![r(0, 130)]
        );
        // Touching ranges join with gap 0; apart ones do not.
        assert_eq!(coalesce(&[r(0, 4), r(4, 4)], 0, 8), vec![r(0, 8)]);
        assert_eq!(
            coalesce(&[r(0, 4), r(5, 4)], 0, 100),
            vec![r(0, 4), r(5, 4)]
        );
        assert_eq!(
            coalesce(&[r(u64::MAX - 2, 10)], 0, 100),
            vec![r(u64::MAX - 2, 2)]
        );
        // A range longer than the cap alone.
        assert_eq!(coalesce(&[r(0, 250)], 0, 100).len(), 3);
    }

    #[test]
    fn windows_respect_bytes_and_items() {
        let sizes = [4u64, 4, 4, 20, 1, 1, 1];
        let w = windows(&sizes, |&n| Some(r(0, n)), 8, 100);
        assert_eq!(w, vec![0..2, 2..3, 3..4, 4..7]);
        let w = windows(&sizes, |&n| Some(r(0, n)), 100, 3);
        assert_eq!(w, vec![0..3, 3..6, 6..7]);
        assert!(windows(&[] as &[u64], |&n| Some(r(0, n)), 8, 3).is_empty());
    }

    proptest! {
        #[test]
        fn coalesce_properties(
            input in proptest::collection::vec((0u64..10_000, 0u64..500), 0..60),
            gap in 0u64..300,
            max in 1u64..2_000,
        ) {
            let ranges: Vec<ByteRange> = input.iter().map(|&(o, l)| r(o, l)).collect();
            let out = coalesce(&ranges, gap, max);
            let held = |x: u64| ranges.iter().any(|i| i.offset <= x && x < i.end().unwrap());
            for o in &out {
                // Never over the cap, never empty.
                prop_assert!(o.len > 0 && o.len <= max, "{o:?}");
            }
            for w in out.windows(2) {
                let (a, b) = (w[0], w[1]);
                let ae = a.end().unwrap();
                // Sorted, no overlap.
                prop_assert!(ae <= b.offset);
                // Gap rule: requests closer than `gap` (or touching) belong to
                // one run, cut at the cap.
                if b.offset - ae < gap.max(1) {
                    prop_assert_eq!(a.len, max, "{:?} {:?}", a, b);
                } else {
                    // Apart: both ends lie on input bytes.
                    prop_assert!(held(ae - 1) && held(b.offset));
                }
            }
            if let (Some(f), Some(l)) = (out.first(), out.last()) {
                prop_assert!(held(f.offset) && held(l.end().unwrap() - 1));
            }
            // Every input byte covered.
            for x in &ranges {
                for b in [x.offset, x.end().unwrap().saturating_sub(1)] {
                    if x.len > 0 {
                        prop_assert!(out.iter().any(|o| o.offset <= b && b < o.end().unwrap()), "{b} of {x:?}");
                    }
                }
            }
            // Fetched bytes: the inputs plus bridged gaps only.
            let covered: u64 = (0..10_600u64).filter(|&x| held(x)).count() as u64;
            let total: u64 = out.iter().map(|o| o.len).sum();
            prop_assert!(total >= covered);
            let runs = out.windows(2).filter(|w| w[0].end().unwrap() < w[1].offset).count() as u64 + u64::from(!out.is_empty());
            // Each bridged gap is shorter than `gap`, and there are fewer
            // gaps than inputs.
            prop_assert!(total <= covered + gap * (ranges.len() as u64));
            // Request count: ceil(run / max) per run.
            prop_assert!(out.len() as u64 <= total / max + runs);
        }
    }
}
