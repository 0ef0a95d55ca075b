//! Version-keyed normalisers (`docs/neighbours.md`, V3): after a
//! [`HeaderGate`](crate::HeaderGate) has said which version a file is, the
//! hooks registered for that version turn what the application read into
//! its current form (or refuse it), so an old file's quirks are fixed in one
//! place and never leak into the rules of a newer schema.
//!
//! Hooks run on the caller's own value (a struct of what it read); they never
//! touch the file, which stays open read-only.
//!
//! ```
//! use purehdf::{HeaderOutcome, Normalisers};
//! // schema 0 wrote a typo and sometimes no mode; schema 1 must be exact
//! let n = Normalisers::<String>::new()
//!     .on(0..=0, |mode| {
//!         if mode.is_empty() || mode == "continues" {
//!             *mode = "continuous".into();
//!         }
//!         Ok(())
//!     })
//!     .on(1..=1, |mode| match mode.as_str() {
//!         "continuous" | "epochs" | "patterns" => Ok(()),
//!         other => Err(format!("invalid data_mode {other:?}")),
//!     });
//! let mut old = "continues".to_string();
//! n.apply(HeaderOutcome::Legacy(0), "data_mode", &mut old)?;
//! assert_eq!(old, "continuous");
//! let mut new = "continues".to_string();
//! assert!(n.apply(HeaderOutcome::Supported(1), "data_mode", &mut new).is_err());
//! # Ok::<(), purehdf::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::header_gate::{HeaderOutcome, HeaderReason};
use std::ops::RangeInclusive;

/// A normalising or validating step on the caller's value `T`: `Ok` after
/// adjusting it, `Err(why)` to refuse it.
pub type NormaliseHook<T> = fn(&mut T) -> std::result::Result<(), String>;

/// Hooks keyed by the versions they apply to, run in registration order.
pub struct Normalisers<T> {
    hooks: Vec<(RangeInclusive<u64>, NormaliseHook<T>)>,
}

impl<T> Default for Normalisers<T> {
    fn default() -> Self {
        Normalisers { hooks: Vec::new() }
    }
}

impl<T> Normalisers<T> {
    /// No hooks.
    pub fn new() -> Normalisers<T> {
        Self::default()
    }

    /// Run `hook` for files whose version lies in `versions`.
    pub fn on(mut self, versions: RangeInclusive<u64>, hook: NormaliseHook<T>) -> Normalisers<T> {
        self.hooks.push((versions, hook));
        self
    }

    /// Run every hook registered for `outcome`'s version on `value`. A
    /// refusal is an [`Error::Header`] naming `attribute` (what the value
    /// was read from) with [`HeaderReason::WrongValue`].
    pub fn apply(&self, outcome: HeaderOutcome, attribute: &str, value: &mut T) -> Result<()> {
        let v = outcome.version();
        for (range, hook) in &self.hooks {
            if range.contains(&v) {
                hook(value).map_err(|why| Error::Header {
                    attribute: attribute.to_string(),
                    reason: HeaderReason::WrongValue {
                        found: why,
                        expected: format!("a valid value for version {v}"),
                    },
                })?;
            }
        }
        Ok(())
    }
}
