//! The metadata block cache of a remote source: aligned blocks of the object,
//! least recently used evicted first, bounded in bytes.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Blocks by index (offset / block size), at most `capacity` bytes of them.
#[derive(Debug)]
pub(super) struct BlockCache {
    capacity: u64,
    bytes: u64,
    tick: u64,
    map: HashMap<u64, (u64, Arc<[u8]>)>,
    /// Use tick → block index, oldest first.
    order: BTreeMap<u64, u64>,
}

impl BlockCache {
    /// An empty cache keeping at most `capacity` bytes.
    pub(super) fn new(capacity: u64) -> Self {
        BlockCache {
            capacity,
            bytes: 0,
            tick: 0,
            map: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    fn touch(&mut self, idx: u64) -> Option<Arc<[u8]>> {
        self.tick += 1;
        let tick = self.tick;
        let e = self.map.get_mut(&idx)?;
        self.order.remove(&e.0);
        e.0 = tick;
        self.order.insert(tick, idx);
        Some(e.1.clone())
    }

    /// Block `idx`, marked as just used.
    pub(super) fn get(&mut self, idx: u64) -> Option<Arc<[u8]>> {
        self.touch(idx)
    }

    /// True when block `idx` is held (its use is not recorded).
    pub(super) fn contains(&self, idx: u64) -> bool {
        self.map.contains_key(&idx)
    }

    /// Keep block `idx`, evicting the least recently used blocks beyond the
    /// capacity (a block larger than the capacity is not kept at all).
    pub(super) fn insert(&mut self, idx: u64, data: Arc<[u8]>) {
        self.remove(idx);
        let n = data.len() as u64;
        if n > self.capacity {
            return;
        }
        while self.bytes.saturating_add(n) > self.capacity {
            let Some((_, old)) = self.order.pop_first() else {
                break;
            };
            if let Some((_, d)) = self.map.remove(&old) {
                self.bytes = self.bytes.saturating_sub(d.len() as u64);
            }
        }
        self.tick += 1;
        self.order.insert(self.tick, idx);
        self.map.insert(idx, (self.tick, data));
        self.bytes = self.bytes.saturating_add(n);
    }

    fn remove(&mut self, idx: u64) {
        if let Some((t, d)) = self.map.remove(&idx) {
            self.order.remove(&t);
            self.bytes = self.bytes.saturating_sub(d.len() as u64);
        }
    }

    /// Keep at most `capacity` bytes from now on, evicting the least
    /// recently used blocks beyond it.
    pub(super) fn set_capacity(&mut self, capacity: u64) {
        self.capacity = capacity;
        while self.bytes > self.capacity {
            let Some((_, old)) = self.order.pop_first() else {
                break;
            };
            if let Some((_, d)) = self.map.remove(&old) {
                self.bytes = self.bytes.saturating_sub(d.len() as u64);
            }
        }
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(v: u8, n: usize) -> Arc<[u8]> {
        vec![v; n].into()
    }

    #[test]
    fn evicts_least_recently_used_within_capacity() {
        let mut c = BlockCache::new(30);
        c.insert(0, block(0, 10));
        c.insert(1, block(1, 10));
        c.insert(2, block(2, 10));
        assert_eq!(c.bytes(), 30);
        assert_eq!(c.get(0).unwrap()[0], 0); // 0 is now the newest
        c.insert(3, block(3, 10)); // evicts 1
        assert!(c.contains(0) && !c.contains(1) && c.contains(2) && c.contains(3));
        assert_eq!(c.bytes(), 30);
        c.insert(4, block(4, 31)); // larger than the capacity: not kept
        assert!(!c.contains(4));
        c.insert(2, block(9, 5)); // replacing a block frees its bytes
        assert_eq!(c.bytes(), 25);
        assert_eq!(c.get(2).unwrap()[0], 9); // order now 0, 3, 2
        c.set_capacity(16);
        assert!(!c.contains(0) && c.contains(3) && c.contains(2));
        assert_eq!(c.bytes(), 15);
    }
}
