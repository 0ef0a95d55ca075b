//! The byte source of an open file and the attempt-and-retry protocol of
//! lazy sources: bytes in memory need nothing; a lazy source (an HTTP URL,
//! a `Blob`) is a [`RangeSource`] without a fetcher, and every operation on
//! it runs through [`Host::run`], which turns the ranges the attempt missed
//! into a `NeedBytes` error the JavaScript side answers with
//! [`Host::supply`] calls before it runs the operation again.

use crate::errors::{need_bytes, to_js};
use purehdf::{ByteRange, RangeOptions, RangeSource};
use std::sync::Arc;
use wasm_bindgen::JsValue;

/// Where a file's bytes come from.
pub(crate) struct Host {
    /// The lazy source, `None` for bytes in memory.
    pub(crate) lazy: Option<Arc<RangeSource>>,
}

/// Range options for a host on the other side of `fetch`: the library's
/// defaults, with a smaller window (one round's data stays in memory until
/// the operation settles), a smaller head and tail on the first request and
/// a smaller coalescing gap: a viewer shows one slice of a large file, so
/// bytes fetched count more than the extra round or two.
pub(crate) fn options() -> RangeOptions {
    RangeOptions {
        window_bytes: 128 << 20,
        cache_bytes: 32 << 20,
        first_read: 64 << 10,
        tail_read: 64 << 10,
        coalesce_gap: 16 << 10,
        ..RangeOptions::default()
    }
}

impl Host {
    /// Run one attempt of `op`. For a lazy source: when the attempt missed
    /// bytes (whether it failed with them or swallowed the miss), a
    /// `NeedBytes` error listing them; otherwise the result, the source
    /// settled (data kept for retries released).
    pub(crate) fn run<T>(&self, op: impl FnOnce() -> Result<T, JsValue>) -> Result<T, JsValue> {
        let Some(src) = &self.lazy else {
            return op();
        };
        let r = op();
        let missed = src.take_missed();
        if !missed.is_empty() {
            return Err(need_bytes(&missed));
        }
        if let Err(e) = &r {
            if is_need_bytes(e) {
                return r;
            }
        }
        src.settle();
        r
    }

    /// Hand the bytes of `len` bytes at `offset` to the lazy source.
    pub(crate) fn supply(&self, offset: f64, bytes: Vec<u8>) -> Result<(), JsValue> {
        let Some(src) = &self.lazy else {
            return Ok(());
        };
        let range = ByteRange::new(offset as u64, bytes.len() as u64);
        src.supply(range, bytes).map_err(to_js)
    }
}

/// Whether a JavaScript error is a `NeedBytes` one.
pub(crate) fn is_need_bytes(e: &JsValue) -> bool {
    js_sys::Reflect::get(e, &"kind".into())
        .ok()
        .and_then(|k| k.as_string())
        .is_some_and(|k| k == "NeedBytes")
}
