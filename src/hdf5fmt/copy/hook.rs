//! The copier as a library for other tools (medh5 recompress, amend, pack and
//! unpack): copy the tree under any group of a source file into any group of a
//! [`FileWriter`] the caller keeps, with per-object decisions ([`CopyPolicy`]):
//! objects to leave out, attributes to leave out, soft-link targets to rebase,
//! per dataset the filter choice and chunk shape, attributes to add or
//! replace on an object (medh5 fix and index: fresh digests), and the copy of
//! each group as it is made. What the policy does not decide follows
//! [`CopyOptions`], exactly as `h5 copy` does.

use super::copier::Copier;
use super::options::{CopyOptions, CopyReport};
use super::policy::CopyPolicy;
use crate::error::Result;
use crate::file::File;
use crate::group::Group;
use crate::write::{FileWriter, GroupId};

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
    let mut c = Copier::with_policy(src, w, opts, policy);
    c.copy_tree(from, dst)?;
    c.finish();
    Ok(std::mem::take(&mut c.report))
}
