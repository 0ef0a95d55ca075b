//! Per-object decisions of a copy ([`CopyPolicy`]), the default that
//! decides nothing ([`KeepAll`]).

use super::options::DatasetChoice;
use crate::dataset::Dataset;
use crate::error::Result;
use crate::file::Object;
use crate::write::{AttrValue, GroupId};

/// Per-object decisions of a copy; every default copies as `h5 copy` does.
/// Paths are the source's absolute paths (`/images/CT`).
pub trait CopyPolicy {
    /// Leave the object (or link) at `path` out.
    fn skip(&self, _path: &str) -> bool {
        false
    }
    /// Copy attribute `name` of the object at `path`.
    fn keep_attr(&self, _path: &str, _name: &str) -> bool {
        true
    }
    /// The target written for a soft link whose stored target is `target`.
    fn soft_target(&self, target: &str) -> String {
        target.to_string()
    }
    /// How to copy `ds` (`None`: as the options say).
    fn dataset(&self, _ds: &Dataset) -> Option<DatasetChoice> {
        None
    }
    /// Attributes written on the copy of `obj` after its own (kept) ones; a
    /// source attribute of the same name is left out. Asked once per object,
    /// when first reached; an error ends the copy.
    fn extra_attrs(&self, _obj: &Object) -> Result<Vec<(String, AttrValue)>> {
        Ok(Vec::new())
    }
    /// The source file name written in a mapping of the virtual dataset at
    /// `dataset` whose stored name is `source_file` (default: unchanged).
    fn virtual_source(&self, _dataset: &str, source_file: &str) -> String {
        source_file.to_string()
    }
    /// The group first reached at source path `path` was copied as `id`.
    fn copied_group(&self, _path: &str, _id: GroupId) {}
}

/// The default policy: everything, as the options say.
pub struct KeepAll;

impl CopyPolicy for KeepAll {}
