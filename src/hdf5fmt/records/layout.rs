//! The record store layout's fixed values: the group's `format` and
//! `format_version` attributes and the alignment of `data`.

/// Value of the `format` attribute of a record store's group.
pub const FORMAT: &str = "purehdf.records";
/// Value of the `format_version` attribute this crate writes and reads.
pub const FORMAT_VERSION: i64 = 1;
/// Alignment of the `data` dataset's address.
pub const DATA_ALIGN: u64 = 64;
