//! The copier as a library for other tools (medh5 recompress, amend, pack and
//! unpack): copy the tree under any group of a source file into any group of a
//! [`FileWriter`] the caller keeps, with per-object decisions ([`CopyPolicy`]):
//! objects to leave out, attributes to leave out, soft-link targets to rebase,
//! per dataset the filter choice and chunk shape, attributes to add or
//! replace on an object (medh5 fix and index: fresh digests), and the copy of
//! each group as it is made. What the policy does not decide follows
//! [`CopyOptions`], exactly as `h5 copy` does.

use super::{CopyOptions, CopyReport, FilterChoice};
use crate::dataset::Dataset;
use crate::error::Result;
use crate::file::{File, Object};
use crate::group::Group;
use crate::write::{AttrValue, FileWriter, GroupId};

/// How one dataset is copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetChoice {
    /// What to do with this dataset's filter pipeline (keep, drop, or a new pipeline).
    pub filter: FilterChoice,
    /// `None`: the stored chunk shape; `Some(None)`: contiguous;
    /// `Some(Some(c))`: chunks of shape `c`.
    pub chunk: Option<Option<Vec<u64>>>,
}

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

/// Copy the attributes, members and their attributes of `from` into `dst` of
/// `w` (references resolved once everything is written); `w` stays the
/// caller's to add to and commit.
pub fn copy_group_into(
    src: &File,
    from: Group,
    w: &mut FileWriter,
    dst: GroupId,
    opts: &CopyOptions,
    policy: &dyn CopyPolicy,
) -> Result<CopyReport> {
    let mut c = super::Copier::with_policy(src, w, opts, policy);
    c.copy_tree(from, dst)?;
    c.finish();
    Ok(std::mem::take(&mut c.report))
}
