//! A bounded process-wide cache of parsed metadata keyed by file identity
//! (`docs/neighbours.md` row I9): an entry is found only while the file has
//! the same device, inode, size, modification and change time as when it was
//! parsed, so a file replaced by rename or rewritten is parsed afresh. The
//! cache is bounded by entries and by bytes (least recently used first out)
//! and is emptied on first use in a forked child (the pid is checked on every
//! access), so a loader process never serves its parent's view.
//!
//! The lock is taken on open only (lookup and insert), never while reading
//! data; values are `Arc`s shared by every handle.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::source::Identity;

/// Entries the process-wide cache holds at most.
pub const GLOBAL_ENTRIES: usize = 1024;
/// Bytes (as the inserters count them) the process-wide cache holds at most.
pub const GLOBAL_BYTES: usize = 64 << 20;

static GLOBAL: MetaCache = MetaCache::new(GLOBAL_ENTRIES, GLOBAL_BYTES);

type Key = (Identity, String);

struct Entry {
    value: Arc<dyn Any + Send + Sync>,
    bytes: usize,
    tick: u64,
}

#[derive(Default)]
struct State {
    pid: u32,
    tick: u64,
    bytes: usize,
    map: HashMap<Key, Entry>,
}

/// Parsed metadata by (file identity, key), bounded by entries and bytes.
pub struct MetaCache {
    max_entries: usize,
    max_bytes: usize,
    state: Mutex<Option<State>>,
}

impl MetaCache {
    /// A cache holding at most `max_entries` values and `max_bytes` bytes.
    pub const fn new(max_entries: usize, max_bytes: usize) -> Self {
        MetaCache {
            max_entries,
            max_bytes,
            state: Mutex::new(None),
        }
    }

    /// The process-wide cache ([`GLOBAL_ENTRIES`], [`GLOBAL_BYTES`]).
    pub fn global() -> &'static MetaCache {
        &GLOBAL
    }

    /// The state for this process: emptied when the pid changed (a fork).
    fn state(&self) -> Option<MutexGuard<'_, Option<State>>> {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let pid = std::process::id();
        if g.as_ref().is_none_or(|s| s.pid != pid) {
            *g = Some(State {
                pid,
                ..State::default()
            });
        }
        Some(g)
    }

    /// The value stored for `key` of the file `id`, when present and of type `T`.
    pub fn get<T: Any + Send + Sync>(&self, id: &Identity, key: &str) -> Option<Arc<T>> {
        let mut g = self.state()?;
        let s = g.as_mut()?;
        s.tick += 1;
        let tick = s.tick;
        let e = s.map.get_mut(&(*id, key.to_string()))?;
        e.tick = tick;
        Arc::clone(&e.value).downcast::<T>().ok()
    }

    /// Store `value` (counted as `bytes`) for `key` of the file `id`,
    /// evicting the least recently used entries to stay within bounds. A
    /// value larger than the byte bound is not stored.
    pub fn insert<T: Any + Send + Sync>(
        &self,
        id: &Identity,
        key: &str,
        value: Arc<T>,
        bytes: usize,
    ) {
        if bytes > self.max_bytes || self.max_entries == 0 {
            return;
        }
        let Some(mut g) = self.state() else { return };
        let Some(s) = g.as_mut() else { return };
        let k = (*id, key.to_string());
        if let Some(old) = s.map.remove(&k) {
            s.bytes -= old.bytes;
        }
        while !s.map.is_empty()
            && (s.map.len() >= self.max_entries || s.bytes + bytes > self.max_bytes)
        {
            let Some(lru) = s
                .map
                .iter()
                .min_by_key(|(_, e)| e.tick)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = s.map.remove(&lru) {
                s.bytes -= e.bytes;
            }
        }
        s.tick += 1;
        let tick = s.tick;
        s.bytes += bytes;
        s.map.insert(k, Entry { value, bytes, tick });
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.state()
            .and_then(|g| g.as_ref().map(|s| s.map.len()))
            .unwrap_or(0)
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held (as counted at insertion).
    pub fn bytes(&self) -> usize {
        self.state()
            .and_then(|g| g.as_ref().map(|s| s.bytes))
            .unwrap_or(0)
    }

    /// Drop every entry.
    pub fn clear(&self) {
        if let Some(mut g) = self.state() {
            *g = None;
        }
    }

    /// Pretend the cache was filled by another process (tests of the fork rule).
    #[cfg(test)]
    fn set_pid(&self, pid: u32) {
        if let Some(mut g) = self.state() {
            if let Some(s) = g.as_mut() {
                s.pid = pid;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> Identity {
        Identity {
            dev: 1,
            ino: n,
            size: 10,
            mtime_ns: 5,
            ctime_ns: 5,
        }
    }

    #[test]
    fn bounded_keyed_by_identity_and_reset_after_fork() {
        let c = MetaCache::new(3, 100);
        c.insert(&id(1), "k", Arc::new(1u32), 10);
        assert_eq!(c.get::<u32>(&id(1), "k").as_deref(), Some(&1));
        assert!(c.get::<u64>(&id(1), "k").is_none());
        let changed = Identity { size: 11, ..id(1) };
        assert!(c.get::<u32>(&changed, "k").is_none());
        for n in 2..10 {
            c.insert(&id(n), "k", Arc::new(n as u32), 30);
            assert!(c.len() <= 3 && c.bytes() <= 100);
        }
        assert!(c.get::<u32>(&id(9), "k").is_some());
        c.insert(&id(50), "big", Arc::new(0u8), 101);
        assert!(c.get::<u8>(&id(50), "big").is_none());
        c.set_pid(std::process::id().wrapping_add(1));
        assert!(c.is_empty(), "a child must not see its parent's entries");
    }
}
