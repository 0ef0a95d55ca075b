//! The remote byte source: metadata reads through an aligned block cache,
//! planned data reads through a staging area, and the mode without a fetcher
//! where a miss asks the host for the ranges (see the module docs of `fetch`).

use std::borrow::Cow;
use std::sync::{Arc, Mutex, MutexGuard};

use super::block_cache::BlockCache;
use super::plan::{coalesce, contains};
use super::staging::{copy_pieces, Staging};
use super::{ByteRange, Fetch, RangeOptions};
use crate::error::{Error, Result};
use crate::source::{in_bounds, Source};

/// Most ranges remembered as asked of the host (and as missed) at once.
const MAX_ASKED: usize = 1 << 14;

/// A [`Source`] over a remote object: metadata reads are rounded to aligned
/// blocks kept in a bounded cache, data reads planned by the reader are
/// fetched a window at a time ([`Source::prefetch`]) and served from a
/// staging area until released. With a [`Fetch`] the source fetches what it
/// misses; without one ([`RangeSource::without_fetcher`]) a miss is
/// [`Error::NeedBytes`] and the host [`RangeSource::supply`]s the bytes
/// (see [`drive`](super::drive)).
pub struct RangeSource {
    fetch: Option<Arc<dyn Fetch>>,
    len: u64,
    describe: String,
    options: RangeOptions,
    state: Mutex<State>,
}

struct State {
    blocks: BlockCache,
    staging: Staging,
    /// The first request (head and tail of the object) was made.
    primed: bool,
    /// Ranges of planned data asked of the host: supplied into staging.
    asked_data: Vec<ByteRange>,
    /// Bytes of planned data asked of the host since [`RangeSource::take_missed`].
    asked_bytes: u64,
    /// Ranges of single large reads asked of the host: staged for one read.
    asked_once: Vec<ByteRange>,
    /// Every range a read asked of the host since [`RangeSource::take_missed`].
    missed: Vec<ByteRange>,
}

fn push_capped(v: &mut Vec<ByteRange>, new: &[ByteRange]) {
    for r in new {
        if !v.contains(r) {
            v.push(*r);
        }
    }
    if v.len() > MAX_ASKED {
        let extra = v.len() - MAX_ASKED;
        v.drain(..extra);
    }
}

impl RangeSource {
    /// A source reading through `fetch`, grouped as `options` say. The first
    /// request (the object's head and, when `options.tail_read` is set, its
    /// tail, as one batch) is made here, so an unreachable or replaced object
    /// fails the open.
    pub fn new(fetch: Arc<dyn Fetch>, options: RangeOptions) -> Result<Self> {
        let (len, describe) = (fetch.len(), fetch.describe());
        let s = Self::build(Some(fetch), len, describe, options)?;
        s.prime()?;
        Ok(s)
    }

    /// A source of `len` bytes with no fetcher, for hosts without blocking
    /// I/O: a read that misses fails with [`Error::NeedBytes`] naming every
    /// range it needs; the host fetches them, hands them to
    /// [`RangeSource::supply`] and retries the operation (see [`drive`](super::drive)).
    /// `describe` names the object in errors.
    pub fn without_fetcher(
        len: u64,
        describe: impl Into<String>,
        options: RangeOptions,
    ) -> Result<Self> {
        Self::build(None, len, describe.into(), options)
    }

    fn build(
        fetch: Option<Arc<dyn Fetch>>,
        len: u64,
        describe: String,
        options: RangeOptions,
    ) -> Result<Self> {
        let max = crate::limits::MAX_READ;
        let bad = |what: &str| {
            Err(Error::InvalidArgument(format!(
                "range options: {what} ({options:?})"
            )))
        };
        if options.block_size == 0 || options.block_size > max {
            return bad("block_size must be 1 byte to 1 GiB");
        }
        if options.max_request == 0 {
            return bad("max_request must be at least 1 byte");
        }
        if options.first_read > max || options.tail_read > max {
            return bad("first_read and tail_read must be at most 1 GiB");
        }
        Ok(RangeSource {
            fetch,
            len,
            describe,
            state: Mutex::new(State {
                blocks: BlockCache::new(options.cache_bytes),
                staging: Staging::default(),
                primed: false,
                asked_data: Vec::new(),
                asked_bytes: 0,
                asked_once: Vec::new(),
                missed: Vec::new(),
            }),
            options,
        })
    }

    /// The options this source was made with.
    pub fn options(&self) -> &RangeOptions {
        &self.options
    }

    /// The object's name in errors.
    pub fn describe(&self) -> String {
        self.describe.clone()
    }

    /// True when the source fetches for itself (false: the host supplies).
    pub fn has_fetcher(&self) -> bool {
        self.fetch.is_some()
    }

    /// Bytes held now: metadata blocks and staged data.
    pub fn held_bytes(&self) -> u64 {
        let st = self.lock();
        st.blocks.bytes().saturating_add(st.staging.bytes())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held leaves caches that are still
        // consistent (every update is a whole insert or removal).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn remote_error(&self, r: &ByteRange, reason: String) -> Error {
        Error::Remote {
            url: self.describe.clone(),
            range: format!("{}-{}", r.offset, r.offset.saturating_add(r.len)),
            reason,
        }
    }

    /// The object's head and tail, block-aligned, as the first request asks.
    fn first_ranges(&self) -> Vec<ByteRange> {
        let (b, len) = (self.options.block_size, self.len);
        let up = |n: u64| n.div_ceil(b).saturating_mul(b);
        let mut v = Vec::new();
        let head_end = up(self.options.first_read).min(len);
        if head_end > 0 {
            v.push(ByteRange::new(0, head_end));
        }
        if self.options.tail_read > 0 && len > 0 {
            let from = len.saturating_sub(self.options.tail_read) / b * b;
            v.push(ByteRange::new(from, len - from));
        }
        coalesce(&v, 0, u64::MAX)
    }

    fn prime(&self) -> Result<()> {
        let Some(f) = &self.fetch else {
            return Ok(());
        };
        let mut st = self.lock();
        for (r, d) in f.take_opened() {
            let inside = r.end().is_some_and(|e| e <= self.len);
            if inside && d.len() as u64 == r.len {
                self.keep_blocks(&mut st, &r, &d, &mut |_, _| {});
            }
        }
        let need = self.missing_blocks(&st, &self.first_ranges());
        drop(st);
        if !need.is_empty() {
            let got = self.fetch_checked(&need)?;
            st = self.lock();
            for (r, d) in need.iter().zip(got) {
                self.keep_blocks(&mut st, r, &d, &mut |_, _| {});
            }
        } else {
            st = self.lock();
        }
        st.primed = true;
        Ok(())
    }

    /// The blocks of `ranges` the cache lacks, contiguous ones joined.
    fn missing_blocks(&self, st: &State, ranges: &[ByteRange]) -> Vec<ByteRange> {
        let b = self.options.block_size;
        let mut need: Vec<ByteRange> = Vec::new();
        for r in ranges {
            let Some(end) = r.end().filter(|_| r.len > 0) else {
                continue;
            };
            for i in r.offset / b..=(end - 1) / b {
                if st.blocks.contains(i) {
                    continue;
                }
                let br = self.block_range(i);
                if br.len == 0 {
                    continue;
                }
                match need.last_mut() {
                    Some(n) if n.end() == Some(br.offset) => n.len += br.len,
                    _ => need.push(br),
                }
            }
        }
        need
    }

    /// Fetch `ranges` as one batch; every buffer must be exactly its range.
    fn fetch_checked(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>> {
        let Some(f) = &self.fetch else {
            return Err(Error::NeedBytes(ranges.to_vec()));
        };
        let got = f.fetch(ranges)?;
        if got.len() != ranges.len() {
            let r = ranges.first().copied().unwrap_or(ByteRange::new(0, 0));
            return Err(self.remote_error(
                &r,
                format!("{} responses for {} ranges", got.len(), ranges.len()),
            ));
        }
        for (r, b) in ranges.iter().zip(&got) {
            if b.len() as u64 != r.len {
                return Err(self.remote_error(
                    r,
                    format!("response of {} bytes for a range of {}", b.len(), r.len),
                ));
            }
        }
        Ok(got)
    }

    /// Record `ranges` as asked of the host and make the error that asks.
    fn need(&self, st: &mut State, ranges: Vec<ByteRange>) -> Error {
        push_capped(&mut st.missed, &ranges);
        Error::NeedBytes(ranges)
    }

    /// The bytes of block `idx`: its range in the object.
    fn block_range(&self, idx: u64) -> ByteRange {
        let b = self.options.block_size;
        let start = idx.saturating_mul(b).min(self.len);
        ByteRange::new(start, start.saturating_add(b).min(self.len) - start)
    }

    /// Keep the whole blocks inside `r` (fetched as `data`) in the cache,
    /// handing each to `seen(index, bytes)`.
    fn keep_blocks(
        &self,
        st: &mut State,
        r: &ByteRange,
        data: &[u8],
        seen: &mut dyn FnMut(u64, &Arc<[u8]>),
    ) {
        let b = self.options.block_size;
        let mut idx = r.offset.div_ceil(b);
        loop {
            let br = self.block_range(idx);
            if br.len == 0 || !contains(r, &br) {
                return;
            }
            let from = (br.offset - r.offset) as usize;
            let Some(piece) = data.get(from..from + br.len as usize) else {
                return;
            };
            let piece: Arc<[u8]> = piece.into();
            seen(idx, &piece);
            st.blocks.insert(idx, piece);
            idx += 1;
        }
    }

    /// Reads longer than this bypass the block cache (one request each).
    fn direct_threshold(&self) -> u64 {
        (self.options.cache_bytes / 4).max(self.options.block_size)
    }

    /// Fill `out` with the bytes at `offset` (inside the object, checked by
    /// the caller): from staging, else from cached blocks, fetching the
    /// missing blocks as one batch.
    fn read_range(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        let len = out.len() as u64;
        if len == 0 {
            return Ok(());
        }
        let r = ByteRange::new(offset, len);
        let end = r.end().ok_or(Error::Overflow {
            structure: "remote read",
            offset,
            what: "end of read",
        })?;
        let mut st = self.lock();
        if let Some(pieces) = st.staging.take(&r) {
            drop(st);
            return if copy_pieces(&pieces, offset, out) {
                Ok(())
            } else {
                Err(self.remote_error(&r, "staged bytes do not cover the read".into()))
            };
        }
        if len > self.direct_threshold() {
            return self.read_direct(st, r, out);
        }
        let b = self.options.block_size;
        let (first, last) = (offset / b, (end - 1) / b);
        let mut have: Vec<Option<Arc<[u8]>>> = (first..=last).map(|i| st.blocks.get(i)).collect();
        let mut need: Vec<ByteRange> = Vec::new();
        for (i, h) in (first..).zip(&have) {
            if h.is_some() {
                continue;
            }
            let br = self.block_range(i);
            match need.last_mut() {
                Some(n) if n.end() == Some(br.offset) => n.len += br.len,
                _ => need.push(br),
            }
        }
        if !need.is_empty() {
            if !st.primed {
                need.extend(self.first_ranges());
                need = coalesce(&need, 0, u64::MAX);
                st.primed = true;
            }
            if self.fetch.is_none() {
                return Err(self.need(&mut st, need));
            }
            drop(st);
            let got = self.fetch_checked(&need)?;
            st = self.lock();
            for (nr, d) in need.iter().zip(got) {
                self.keep_blocks(&mut st, nr, &d, &mut |i, piece| {
                    if let Some(slot) = i.checked_sub(first).and_then(|k| have.get_mut(k as usize))
                    {
                        slot.get_or_insert_with(|| piece.clone());
                    }
                });
            }
        }
        drop(st);
        for (i, h) in (first..).zip(&have) {
            let blk = h.as_ref().ok_or_else(|| {
                self.remote_error(&r, format!("block {i} missing after its fetch"))
            })?;
            let bstart = i * b;
            let s = offset.max(bstart);
            let e = end.min(bstart.saturating_add(blk.len() as u64));
            if e <= s {
                return Err(self.remote_error(&r, "read past the fetched blocks".into()));
            }
            let src = blk
                .get((s - bstart) as usize..(e - bstart) as usize)
                .ok_or_else(|| self.remote_error(&r, "short block".into()))?;
            let dst = out
                .get_mut((s - offset) as usize..(e - offset) as usize)
                .ok_or_else(|| self.remote_error(&r, "read outside its buffer".into()))?;
            dst.copy_from_slice(src);
        }
        Ok(())
    }

    /// A large read, fetched as requests of at most `max_request` bytes.
    fn read_direct(
        &self,
        mut st: MutexGuard<'_, State>,
        r: ByteRange,
        out: &mut [u8],
    ) -> Result<()> {
        let step = self.options.max_request;
        let mut pieces = Vec::new();
        let mut at = 0u64;
        while at < r.len {
            let n = step.min(r.len - at);
            pieces.push(ByteRange::new(r.offset + at, n));
            at += n;
        }
        if self.fetch.is_none() {
            push_capped(&mut st.asked_once, &pieces);
            return Err(self.need(&mut st, pieces));
        }
        drop(st);
        let got = self.fetch_checked(&pieces)?;
        let mut at = 0usize;
        for b in got {
            let dst = out
                .get_mut(at..at + b.len())
                .ok_or_else(|| self.remote_error(&r, "response outside the read".into()))?;
            dst.copy_from_slice(&b);
            at += b.len();
        }
        Ok(())
    }

    /// Hand over the bytes of `range` that a read asked for (no-fetcher
    /// mode): data ranges are staged for the retried read, metadata ranges
    /// go to the block cache (their whole blocks). `bytes` must be exactly
    /// the range; a range outside the object is refused.
    pub fn supply(&self, range: ByteRange, bytes: Vec<u8>) -> Result<()> {
        if bytes.len() as u64 != range.len {
            return Err(self.remote_error(
                &range,
                format!(
                    "supplied {} bytes for a range of {}",
                    bytes.len(),
                    range.len
                ),
            ));
        }
        if range.end().is_none_or(|e| e > self.len) {
            return Err(self.remote_error(
                &range,
                format!("range outside the object of {} bytes", self.len),
            ));
        }
        let mut st = self.lock();
        if let Some(i) = st.asked_data.iter().position(|a| *a == range) {
            st.asked_data.swap_remove(i);
            st.staging.insert(range, Arc::new(bytes), false);
            return Ok(());
        }
        if let Some(i) = st.asked_once.iter().position(|a| *a == range) {
            st.asked_once.swap_remove(i);
            st.staging.insert(range, Arc::new(bytes), true);
            return Ok(());
        }
        // Blocks supplied for an operation stay until it completes (a retried
        // operation reads them again from the start): the cache may grow by
        // one window until [`RangeSource::settle`].
        let held = self
            .options
            .cache_bytes
            .saturating_add(self.options.window_bytes);
        st.blocks.set_capacity(held);
        self.keep_blocks(&mut st, &range, &bytes, &mut |_, _| {});
        Ok(())
    }

    /// Shrink the block cache back to `cache_bytes` and drop the released
    /// data kept for retries, once an operation that was supplied bytes has
    /// completed ([`drive`](super::drive) does this).
    pub fn settle(&self) {
        let mut st = self.lock();
        st.blocks.set_capacity(self.options.cache_bytes);
        st.staging.drop_released();
    }

    /// The ranges reads have asked of the host since the last call, and
    /// forget them. An operation during which this is not empty must be
    /// retried once they are supplied, even when it returned `Ok`: a reader
    /// that tolerates a failed read (a damaged link, an optional attribute)
    /// may have swallowed an [`Error::NeedBytes`].
    pub fn take_missed(&self) -> Vec<ByteRange> {
        let mut st = self.lock();
        st.asked_bytes = 0;
        std::mem::take(&mut st.missed)
    }

    /// Drop every cached block and staged byte.
    pub fn clear(&self) {
        let mut st = self.lock();
        st.blocks = BlockCache::new(self.options.cache_bytes);
        st.staging.clear();
    }

    /// True when every byte of `r` is held in cached blocks.
    fn in_blocks(&self, st: &State, r: &ByteRange) -> bool {
        let b = self.options.block_size;
        match r.end() {
            Some(end) if r.len > 0 && r.len <= self.direct_threshold() => {
                (r.offset / b..=(end - 1) / b).all(|i| st.blocks.contains(i))
            }
            _ => false,
        }
    }
}

impl Source for RangeSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        in_bounds("remote read", offset, buf.len() as u64, self.len)
            .and_then(|_| self.read_range(offset, buf))
            .map_err(std::io::Error::other)
    }

    fn read_into(&self, structure: &'static str, offset: u64, out: &mut [u8]) -> Result<()> {
        in_bounds(structure, offset, out.len() as u64, self.len)?;
        self.read_range(offset, out)
    }

    fn read(&self, structure: &'static str, offset: u64, len: u64) -> Result<Cow<'_, [u8]>> {
        in_bounds(structure, offset, len, self.len)?;
        let n = crate::cursor::bounded(
            len,
            crate::limits::MAX_READ,
            structure,
            offset,
            "read length",
        )?;
        let mut buf = vec![0u8; n];
        self.read_range(offset, &mut buf)?;
        Ok(Cow::Owned(buf))
    }

    fn wants_prefetch(&self) -> bool {
        true
    }

    fn pipeline_step(&self) -> Option<u64> {
        let step = self.options.pipeline_step;
        (self.fetch.is_some() && step > 0).then_some(step.min(self.options.window_bytes))
    }

    fn pipeline_depth(&self) -> usize {
        self.options.in_flight.max(1)
    }

    fn prefetch_window(&self) -> u64 {
        if self.fetch.is_some() {
            self.options.window_bytes
        } else {
            // Without a fetcher a read restarts from its beginning after each
            // round: it asks for all its data at once (bounded in `prefetch`).
            u64::MAX
        }
    }

    fn prefetch(&self, ranges: &[ByteRange]) -> Result<()> {
        let mut st = self.lock();
        let want: Vec<ByteRange> = ranges
            .iter()
            .filter(|r| r.len > 0 && r.end().is_some_and(|e| e <= self.len))
            .filter(|r| !st.staging.covers(r) && !self.in_blocks(&st, r))
            .copied()
            .collect();
        for r in ranges {
            st.staging.reuse(r);
        }
        if want.is_empty() {
            return Ok(());
        }
        let plan = coalesce(&want, self.options.coalesce_gap, self.options.max_request);
        let total = plan
            .iter()
            .try_fold(0u64, |a, r| a.checked_add(r.len))
            .ok_or(Error::Overflow {
                structure: "remote read",
                offset: 0,
                what: "bytes of a read window",
            })?;
        if self.fetch.is_none() {
            if total > self.options.window_bytes {
                return Err(Error::Limit {
                    structure: "remote read without a fetcher",
                    offset: plan.first().map_or(0, |r| r.offset),
                    what: "stored bytes of one read (RangeOptions::window_bytes; read smaller selections)",
                    value: total,
                    limit: self.options.window_bytes,
                });
            }
            if st.asked_bytes > 0
                && st.asked_bytes.saturating_add(total) > self.options.window_bytes
            {
                // This round already asks for a window's worth (an operation
                // reading several datasets): these come in a later round, so
                // what the host holds at once stays within one window.
                return Err(Error::NeedBytes(plan));
            }
            st.asked_bytes = st.asked_bytes.saturating_add(total);
            push_capped(&mut st.asked_data, &plan);
            return Err(self.need(&mut st, plan));
        }
        drop(st);
        let got = self.fetch_checked(&plan)?;
        let mut st = self.lock();
        for (r, d) in plan.iter().zip(got) {
            // Kept as fetched: no copy of the window.
            st.staging.insert(*r, Arc::new(d), false);
        }
        Ok(())
    }

    fn release(&self, ranges: &[ByteRange]) {
        let mut st = self.lock();
        // Without a fetcher an operation may be retried from its start: what
        // it read stays (bounded by one window) until it settles.
        let keep = self.fetch.is_none();
        st.staging.release(ranges, keep);
        st.staging.trim(self.options.window_bytes);
        st.asked_data.retain(|a| {
            !ranges.iter().any(|r| {
                r.offset < a.end().unwrap_or(u64::MAX) && r.end().unwrap_or(u64::MAX) > a.offset
            })
        });
    }
}
