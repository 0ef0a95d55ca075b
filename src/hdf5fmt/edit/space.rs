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

    /// Take `len` bytes (aligned) from a free block, first fit.
    pub(super) fn take(&mut self, len: u64) -> Option<u64> {
        let len = len.div_ceil(ALIGN).checked_mul(ALIGN)?;
        let (&addr, &size) = self
            .blocks
            .iter()
            .find(|(&a, &s)| a % ALIGN == 0 && s >= len)?;
        self.blocks.remove(&addr);
        if size > len {
            self.blocks.insert(addr + len, size - len);
        }
        Some(addr)
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
    fn first_fit_split_and_merge() {
        let mut f = FreeSpace::default();
        assert_eq!(f.take(8), None);
        f.give(100 * 8, 64);
        f.give(200 * 8, 32);
        assert_eq!(f.take(20), Some(800));
        assert_eq!(f.total(), 40 + 32);
        f.give(800, 24);
        assert_eq!(f.total(), 96);
        assert_eq!(f.take(64), Some(800));
        f.give(800, 64);
        f.give(864, 8 * 200 - 864);
        assert_eq!(f.blocks.len(), 1);
        assert_eq!(f.take(200 * 8 + 32 - 800), Some(800));
        assert_eq!(f.total(), 0);
    }
}
