//! Request planning: the byte ranges a read needs, coalesced into few
//! requests (a gap rule and a size cap), and split into windows.

use super::ByteRange;

/// Merge `ranges` into requests: sorted by offset, overlapping ranges
/// joined, and touching ranges or two less than `gap` bytes apart fetched as
/// one (the gap bytes are fetched and dropped) as long as the joined request
/// stays within `max_request` bytes. An input range longer than `max_request`
/// is never split: it becomes a request of its own. Empty ranges are dropped;
/// a range whose end overflows `u64` is clamped to end at `u64::MAX`.
///
/// The result is sorted, its requests do not overlap, and every input byte
/// lies in exactly one request.
pub fn coalesce(ranges: &[ByteRange], gap: u64, max_request: u64) -> Vec<ByteRange> {
    let mut sorted: Vec<(u64, u64)> = ranges
        .iter()
        .filter(|r| r.len > 0)
        .map(|r| (r.offset, r.end().unwrap_or(u64::MAX)))
        .collect();
    sorted.sort_unstable();
    // First the overlapping ranges are joined whatever their size (requests
    // may not overlap), then the pieces are joined across small gaps (or
    // touching) while the request stays within the cap.
    let mut atoms: Vec<(u64, u64)> = Vec::with_capacity(sorted.len());
    for (s, e) in sorted {
        match atoms.last_mut() {
            Some((_, ce)) if s < *ce => *ce = (*ce).max(e),
            _ => atoms.push((s, e)),
        }
    }
    let mut out: Vec<ByteRange> = Vec::with_capacity(atoms.len());
    let mut cur: Option<(u64, u64)> = None;
    for (s, e) in atoms {
        cur = match cur {
            Some((cs, ce)) if s - ce < gap.max(1) && e - cs <= max_request => Some((cs, e)),
            Some((cs, ce)) => {
                out.push(ByteRange::new(cs, ce - cs));
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((cs, ce)) = cur {
        out.push(ByteRange::new(cs, ce - cs));
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
        // The cap keeps near ranges apart.
        assert_eq!(
            coalesce(&[r(0, 60), r(61, 60)], 10, 100),
            vec![r(0, 60), r(61, 60)]
        );
        // Overlapping ranges join even past the cap; empty ones vanish.
        assert_eq!(
            coalesce(&[r(0, 80), r(50, 80), r(500, 0)], 0, 100),
            vec![r(0, 130)]
        );
        // Touching ranges join with gap 0.
        assert_eq!(coalesce(&[r(0, 4), r(4, 4)], 0, 8), vec![r(0, 8)]);
        assert_eq!(
            coalesce(&[r(0, 4), r(5, 4)], 0, 100),
            vec![r(0, 4), r(5, 4)]
        );
        assert_eq!(
            coalesce(&[r(u64::MAX - 2, 10)], 0, 100),
            vec![r(u64::MAX - 2, 2)]
        );
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
            // Sorted, non-empty, no overlap, gaps between requests.
            for w in out.windows(2) {
                let (a, b) = (w[0], w[1]);
                prop_assert!(a.len > 0 && b.len > 0);
                prop_assert!(a.end().unwrap() < b.offset || (a.end().unwrap() == b.offset && a.len + b.len > max));
                // Gap rule: requests closer than `gap` were kept apart only by the cap.
                let apart = b.offset - a.end().unwrap();
                if apart < gap {
                    prop_assert!(b.end().unwrap() - a.offset > max);
                }
            }
            // Every input byte covered by one request.
            for x in &ranges {
                if x.len == 0 { continue; }
                prop_assert!(out.iter().any(|o| contains(o, x)), "{x:?} not in {out:?}");
            }
            // No request over the cap unless an input range (or a run of
            // overlapping ones) forces it; every request starts and ends on
            // input bytes.
            for o in &out {
                prop_assert!(ranges.iter().any(|x| x.len > 0 && x.offset == o.offset));
                prop_assert!(ranges.iter().any(|x| x.len > 0 && x.end() == o.end()));
                if o.len > max {
                    // Then its inputs overlap all the way through (no gap was bridged).
                    let mut inside: Vec<_> = ranges.iter().filter(|x| x.len > 0 && contains(o, x)).collect();
                    inside.sort();
                    let mut reach = o.offset;
                    for x in inside {
                        prop_assert!(x.offset <= reach, "bridged a gap past the cap: {o:?}");
                        reach = reach.max(x.end().unwrap());
                    }
                }
            }
            // Nothing outside the inputs' hull and the gaps the rule allows.
            let total: u64 = out.iter().map(|o| o.len).sum();
            let hull = ranges.iter().filter(|x| x.len > 0).map(|x| x.end().unwrap()).max().unwrap_or(0);
            prop_assert!(total <= hull);
        }
    }
}
