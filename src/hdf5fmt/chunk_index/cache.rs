//! A small least-recently-used cache of decoded chunks, keyed by dataset (its
//! chunk-index address) and chunk offset, for callers that read many small
//! patches from the same chunks. Use one cache per open file.
//!
//! Caches of 64 chunks or more are split into [`SHARDS`] shards by key, each
//! with its own lock and its share of the capacity, so readers on several
//! threads rarely wait for each other (`docs/neighbours.md` row I6); smaller
//! caches keep one exact LRU.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

type Key = (u64, Vec<u64>);

/// Decoded chunks, at most `capacity` of them.
#[derive(Debug)]
pub struct ChunkCache {
    capacity: usize,
    /// Capacity of each shard.
    per_shard: usize,
    shards: Vec<Mutex<Lru>>,
}

/// Shards of a cache of at least `SHARD_MIN` chunks.
pub const SHARDS: usize = 16;
/// Smallest capacity that is sharded.
const SHARD_MIN: usize = 64;

#[derive(Debug, Default)]
struct Lru {
    tick: u64,
    map: HashMap<Key, (u64, Arc<Vec<u8>>)>,
    /// Chunks partial reads have touched (see [`ChunkCache::seen`]).
    touched: HashSet<Key>,
}

/// Cap on the chunk keys [`ChunkCache::seen`] remembers (cleared when full).
const MAX_TOUCHED: usize = 1 << 16;

impl ChunkCache {
    /// A cache holding up to `capacity` decoded chunks (0 disables it).
    pub fn new(capacity: usize) -> Self {
        let n = if capacity >= SHARD_MIN { SHARDS } else { 1 };
        ChunkCache {
            capacity,
            per_shard: capacity.div_ceil(n),
            shards: (0..n).map(|_| Mutex::default()).collect(),
        }
    }

    /// The shard holding `key`.
    fn shard(&self, dataset: u64, offset: &[u64]) -> &Mutex<Lru> {
        let i = if self.shards.len() == 1 {
            0
        } else {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (dataset, offset).hash(&mut h);
            (h.finish() % self.shards.len() as u64) as usize
        };
        &self.shards[i]
    }

    /// The decoded chunk at `offset` of dataset `dataset`, if cached.
    pub fn get(&self, dataset: u64, offset: &[u64]) -> Option<Arc<Vec<u8>>> {
        let mut g = self.shard(dataset, offset).lock().ok()?;
        g.tick += 1;
        let tick = g.tick;
        let e = g.map.get_mut(&(dataset, offset.to_vec()))?;
        e.0 = tick;
        Some(e.1.clone())
    }

    /// Whether a partial read touched this chunk before; records the touch.
    /// Readers decode a chunk whole (and keep it) only from its second touch
    /// on, so one-off reads decode just the part they need.
    pub fn seen(&self, dataset: u64, offset: &[u64]) -> bool {
        if self.capacity == 0 {
            return false;
        }
        let Ok(mut g) = self.shard(dataset, offset).lock() else {
            return false;
        };
        if g.touched.len() >= MAX_TOUCHED / self.shards.len() {
            g.touched.clear();
        }
        !g.touched.insert((dataset, offset.to_vec()))
    }

    /// Remember a decoded chunk, evicting the least recently used one when full.
    pub fn insert(&self, dataset: u64, offset: &[u64], data: Arc<Vec<u8>>) {
        if self.capacity == 0 {
            return;
        }
        let Ok(mut g) = self.shard(dataset, offset).lock() else {
            return;
        };
        g.tick += 1;
        let tick = g.tick;
        let key = (dataset, offset.to_vec());
        if !g.map.contains_key(&key) && g.map.len() >= self.per_shard {
            if let Some(old) = g
                .map
                .iter()
                .min_by_key(|(_, v)| v.0)
                .map(|(k, _)| k.clone())
            {
                g.map.remove(&old);
            }
        }
        g.map.insert(key, (tick, data));
    }

    /// Number of cached chunks.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().map(|g| g.map.len()).unwrap_or(0))
            .sum()
    }

    /// True when no decoded chunk is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used() {
        let c = ChunkCache::new(2);
        c.insert(1, &[0], Arc::new(vec![0]));
        c.insert(1, &[4], Arc::new(vec![4]));
        assert_eq!(c.get(1, &[0]).as_deref(), Some(&vec![0]));
        c.insert(1, &[8], Arc::new(vec![8]));
        assert_eq!(c.len(), 2);
        assert!(c.get(1, &[4]).is_none());
        assert!(c.get(1, &[0]).is_some());
        assert!(c.get(2, &[0]).is_none());
        let big = ChunkCache::new(100);
        for i in 0..1000u64 {
            big.insert(1, &[i], Arc::new(vec![]));
        }
        assert!(big.len() <= 100 + SHARDS, "{}", big.len());
        assert!(big.get(1, &[999]).is_some());
        let off = ChunkCache::new(0);
        off.insert(1, &[0], Arc::new(vec![]));
        assert!(off.is_empty());
    }
}
