//! The staging area of a remote source: data fetched ahead of decoding (one
//! window of a planned read), serving reads of any sub-range until released.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::ByteRange;

#[derive(Debug)]
struct Entry {
    len: u64,
    data: Arc<Vec<u8>>,
    /// Dropped once a read has been served from it (a single large read).
    once: bool,
    /// Released but kept for a retried operation (no-fetcher mode): dropped
    /// first when room is needed, oldest release first.
    released: Option<u64>,
}

/// Fetched ranges by offset; entries may touch but a new entry that another
/// covers whole is not kept.
#[derive(Debug, Default)]
pub(super) struct Staging {
    map: BTreeMap<u64, Entry>,
    bytes: u64,
    /// Release counter (orders released entries).
    releases: u64,
}

impl Staging {
    /// Bytes held.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The entry holding byte `pos`: (offset, entry).
    fn at(&self, pos: u64) -> Option<(u64, &Entry)> {
        self.map
            .range(..=pos)
            .rev()
            .find(|(&o, e)| o.checked_add(e.len).is_some_and(|end| end > pos))
            .map(|(&o, e)| (o, e))
    }

    /// The held pieces of `r` in order: (entry offset, entry); `None` when
    /// some byte is missing.
    fn walk(&self, r: &ByteRange) -> Option<Vec<(u64, &Entry)>> {
        let end = r.end()?;
        let mut pos = r.offset;
        let mut used = Vec::new();
        while pos < end {
            let (o, e) = self.at(pos)?;
            pos = o.checked_add(e.len)?.min(end);
            used.push((o, e));
        }
        Some(used)
    }

    /// True when every byte of `r` is held.
    pub(super) fn covers(&self, r: &ByteRange) -> bool {
        self.walk(r).is_some()
    }

    /// The entries holding every byte of `r` (offset and bytes, in order,
    /// shared so the caller copies outside any lock), or `None` when some
    /// byte is missing; entries served only once are then dropped.
    pub(super) fn take(&mut self, r: &ByteRange) -> Option<Vec<(u64, Arc<Vec<u8>>)>> {
        let got: Vec<(u64, Arc<Vec<u8>>, bool)> = self
            .walk(r)?
            .into_iter()
            .map(|(o, e)| (o, e.data.clone(), e.once))
            .collect();
        for (o, _, once) in &got {
            if *once {
                self.drop_at(*o);
            }
        }
        Some(got.into_iter().map(|(o, d, _)| (o, d)).collect())
    }

    /// Copy `out.len()` bytes at `offset` into `out` when all are held
    /// (entries served only once are then dropped); false otherwise.
    #[cfg(test)]
    fn read(&mut self, offset: u64, out: &mut [u8]) -> bool {
        let r = ByteRange::new(offset, out.len() as u64);
        self.take(&r).is_some_and(|p| copy_pieces(&p, offset, out))
    }

    /// Keep `data` (exactly `r.len` bytes) for range `r`.
    pub(super) fn insert(&mut self, r: ByteRange, data: Arc<Vec<u8>>, once: bool) {
        if data.len() as u64 != r.len || r.len == 0 || self.covers(&r) {
            return;
        }
        // Entries the new one covers whole go.
        let inside: Vec<u64> = self
            .map
            .range(r.offset..)
            .take_while(|(&o, _)| r.end().is_some_and(|end| o < end))
            .filter(|(&o, e)| {
                o.checked_add(e.len)
                    .zip(r.end())
                    .is_some_and(|(a, b)| a <= b)
            })
            .map(|(&o, _)| o)
            .collect();
        for o in inside {
            self.drop_at(o);
        }
        self.bytes = self.bytes.saturating_add(r.len);
        self.map.insert(
            r.offset,
            Entry {
                len: r.len,
                data,
                once,
                released: None,
            },
        );
    }

    fn drop_at(&mut self, o: u64) {
        if let Some(e) = self.map.remove(&o) {
            self.bytes = self.bytes.saturating_sub(e.len);
        }
    }

    /// Let go of every entry that overlaps one of `ranges`: dropped, or with
    /// `keep` marked released (kept for a retry until [`Staging::trim`]).
    pub(super) fn release(&mut self, ranges: &[ByteRange], keep: bool) {
        if self.map.is_empty() {
            return;
        }
        let gone: Vec<u64> = self
            .map
            .iter()
            .filter(|(&o, e)| {
                let end = o.saturating_add(e.len);
                ranges
                    .iter()
                    .any(|r| r.offset < end && r.end().unwrap_or(u64::MAX) > o)
            })
            .map(|(&o, _)| o)
            .collect();
        for o in gone {
            if !keep {
                self.drop_at(o);
                continue;
            }
            self.releases += 1;
            let n = self.releases;
            if let Some(e) = self.map.get_mut(&o) {
                e.released.get_or_insert(n);
            }
        }
    }

    /// Mark the entries covering `r` as in use again.
    pub(super) fn reuse(&mut self, r: &ByteRange) {
        let Some(end) = r.end() else { return };
        // Entries barely overlap (none covers another), so walking back from
        // the end until one ends before `r` finds every entry inside it.
        for (&o, e) in self.map.range_mut(..end).rev() {
            if o.saturating_add(e.len) <= r.offset {
                break;
            }
            e.released = None;
        }
    }

    /// Drop released entries, oldest first, until at most `cap` bytes are held
    /// (entries in use are never dropped here).
    pub(super) fn trim(&mut self, cap: u64) {
        while self.bytes > cap {
            let oldest = self
                .map
                .iter()
                .filter_map(|(&o, e)| e.released.map(|n| (n, o)))
                .min();
            match oldest {
                Some((_, o)) => self.drop_at(o),
                None => return,
            }
        }
    }

    /// Drop every released entry.
    pub(super) fn drop_released(&mut self) {
        let gone: Vec<u64> = self
            .map
            .iter()
            .filter(|(_, e)| e.released.is_some())
            .map(|(&o, _)| o)
            .collect();
        for o in gone {
            self.drop_at(o);
        }
    }

    /// Drop everything.
    pub(super) fn clear(&mut self) {
        self.map.clear();
        self.bytes = 0;
    }
}

/// Copy the bytes at `offset` of `pieces` (entries as [`Staging::take`]
/// returns them, covering the range) into `out`; false when they do not.
pub(super) fn copy_pieces(pieces: &[(u64, Arc<Vec<u8>>)], offset: u64, out: &mut [u8]) -> bool {
    let Some(end) = offset.checked_add(out.len() as u64) else {
        return false;
    };
    let mut pos = offset;
    for (o, d) in pieces {
        let e_end = o.saturating_add(d.len() as u64).min(end);
        if pos < *o || e_end <= pos {
            return false;
        }
        let src = d.get((pos - o) as usize..(e_end - o) as usize);
        let dst = out.get_mut((pos - offset) as usize..(e_end - offset) as usize);
        match (src, dst) {
            (Some(s), Some(t)) => t.copy_from_slice(s),
            _ => return false,
        }
        pos = e_end;
    }
    pos == end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(from: u8, n: u8) -> Arc<Vec<u8>> {
        Arc::new((from..from + n).collect::<Vec<u8>>())
    }

    #[test]
    fn reads_span_touching_entries_until_released() {
        let mut s = Staging::default();
        s.insert(ByteRange::new(10, 10), bytes(10, 10), false);
        s.insert(ByteRange::new(20, 5), bytes(20, 5), false);
        s.insert(ByteRange::new(12, 3), bytes(12, 3), false); // covered: not kept
        assert_eq!(s.bytes(), 15);
        let mut out = [0u8; 8];
        assert!(s.read(16, &mut out));
        assert_eq!(out, [16, 17, 18, 19, 20, 21, 22, 23]);
        assert!(!s.read(22, &mut out)); // runs past 25
        assert!(!s.covers(&ByteRange::new(5, 6)));
        s.release(&[ByteRange::new(24, 1)], false);
        assert!(!s.covers(&ByteRange::new(20, 1)));
        assert!(s.covers(&ByteRange::new(10, 10)));
        assert_eq!(s.bytes(), 10);
    }

    #[test]
    fn released_entries_stay_until_trimmed_oldest_first() {
        let mut s = Staging::default();
        s.insert(ByteRange::new(0, 10), bytes(0, 10), false);
        s.insert(ByteRange::new(20, 10), bytes(20, 10), false);
        s.insert(ByteRange::new(40, 10), bytes(40, 10), false);
        s.release(&[ByteRange::new(25, 1)], true);
        s.release(&[ByteRange::new(5, 1)], true);
        assert!(s.covers(&ByteRange::new(20, 10)));
        s.trim(25); // drops the 20.. entry, released first
        assert!(!s.covers(&ByteRange::new(20, 1)) && s.covers(&ByteRange::new(0, 10)));
        s.reuse(&ByteRange::new(0, 10));
        s.trim(0); // the rest is in use
        assert_eq!(s.bytes(), 20);
    }

    #[test]
    fn once_entries_go_after_one_read() {
        let mut s = Staging::default();
        s.insert(ByteRange::new(0, 4), bytes(0, 4), true);
        let mut out = [0u8; 2];
        assert!(s.read(1, &mut out));
        assert_eq!(out, [1, 2]);
        assert!(!s.read(1, &mut out));
        assert_eq!(s.bytes(), 0);
    }
}
