//! Placeholder: see `mod.rs`; written by the issue-19 encoder work.
