//! Free-space tracking of an editing session: blocks no longer referenced
//! after a committed operation (replaced header chunks, replaced attribute
//! heaps), reused first-fit by later operations and merged with their
//! neighbours. The session's free space is not persisted: a file's own
//! persistent free-space manager, when it has one, is left as it is (its
//! sections stay valid: the editor only allocates past the end of allocation
//! or from blocks it freed itself).

use std::collections::BTreeMap;

/// Free blocks, by address.
#[derive(Debug, Default)]
pub(super) struct FreeSpace {
    blocks: BTreeMap<u64, u64>,
}

/// Allocation granularity (v1 object header chunks are 8-byte aligned).
pub(super) const ALIGN: u64 = 8;

impl FreeSpace {
    /// Total free bytes.
    pub(super) fn total(&self) -> u64 {
        self.blocks.values().sum()
    }

    /// Take `len` bytes (aligned) from a free block, best fit (the
    /// smallest block that holds them, the lowest address among equals).
    pub(super) fn take(&mut self, len: u64) -> Option<u64> {
        let len = len.div_ceil(ALIGN).checked_mul(ALIGN)?;
        let (&addr, &size) = self
            .blocks
            .iter()
            .filter(|(&a, &s)| a % ALIGN == 0 && s >= len)
            .min_by_key(|(&a, &s)| (s, a))?;
        self.blocks.remove(&addr);
        if size > len {
            self.blocks.insert(addr + len, size - len);
        }
        Some(addr)
    }

    /// Remove and return the free block ending exactly at `end` (the end of
    /// allocation), whose space an allocation past the end can start in.
    pub(super) fn take_tail(&mut self, end: u64) -> Option<u64> {
        let (&a, &s) = self.blocks.range(..end).next_back()?;
        if a.checked_add(s) != Some(end) || a % ALIGN != 0 {
            return None;
        }
        self.blocks.remove(&a);
        Some(a)
    }

    /// Give back the block `addr..addr+len`, merged with its neighbours.
    pub(super) fn give(&mut self, addr: u64, len: u64) {
        if len == 0 {
            return;
        }
        let (mut start, mut end) = (addr, addr.saturating_add(len));
        if let Some((&a, &s)) = self.blocks.range(..=start).next_back() {
            if a.saturating_add(s) >= start {
                start = a;
                end = end.max(a.saturating_add(s));
                self.blocks.remove(&a);
            }
        }
        while let Some((&a, &s)) = self.blocks.range(start..).next() {
            if a > end {
                break;
            }
            end = end.max(a.saturating_add(s));
            self.blocks.remove(&a);
        }
        self.blocks.insert(start, end - start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_fit_split_merge_and_tail() {
        let mut f = FreeSpace::default();
        assert_eq!(f.take(8), None);
        f.give(800, 64);
        f.give(1600, 32);
        // the smallest block that fits, split
        assert_eq!(f.take(20), Some(1600));
        assert_eq!(f.total(), 64 + 8);
        // merged with the 8-byte rest
        f.give(1600, 24);
        assert_eq!(f.total(), 96);
        assert_eq!(f.take(40), Some(800));
        f.give(800, 40);
        assert_eq!(f.blocks.len(), 2);
        // the block ending at the end of allocation
        assert_eq!(f.take_tail(1632), Some(1600));
        assert_eq!(f.take_tail(1632), None);
        assert_eq!(f.take_tail(864), Some(800));
        assert_eq!(f.total(), 0);
        // neighbours on both sides merge into one
        f.give(800, 64);
        f.give(880, 16);
        f.give(864, 16);
        assert_eq!(f.blocks.len(), 1);
        assert_eq!(f.take(96), Some(800));
        assert_eq!(f.total(), 0);
    }
}
