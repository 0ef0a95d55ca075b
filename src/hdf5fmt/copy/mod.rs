//! The object-graph copier (`h5 copy`, and medh5 recompress, amend, pack and fix): re-create every group, dataset, attribute and soft link of one HDF5
//! file in a new one through [`FileWriter`] (HDF5 File Format Specification III–IV:
//! objects are rebuilt, not byte-copied), optionally changing the filter pipeline
//! (IV.A.2.l). With [`FilterChoice::Keep`] stored chunks are copied as they are,
//! filter masks included; any other choice decodes and re-encodes, chunk by
//! chunk (only stored chunks when the chunk shape is kept; one row of chunks
//! at a time when a dataset becomes chunked), so memory stays bounded.
//!
//! Every object is created once: a second hard link to it stays a second link
//! to the same object (reference counts follow). Soft and external links are
//! copied as links (never followed), named datatypes are committed again and
//! shared by the datasets and attributes that used them, link and attribute
//! creation order (flags and order) is kept, and object, region and
//! revised references (in datasets and attributes, at any depth inside
//! compounds, arrays and variable-length data) point at the copied objects.
//! Hard links back to an ancestor group (cycles) are kept too. Virtual datasets
//! stay virtual: type, extent, fill value and mappings (source file names as
//! the policy rewrites them, [`CopyPolicy::virtual_source`]); their
//! sources are not read. User-defined links are carried through as stored
//! (class and link information).

use std::path::Path;

use crate::error::Result;
use crate::file::File;
use crate::write::FileWriter;

/// Copy `src` to `dst` (written atomically) and say what was copied and skipped.
pub fn copy_file(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    opts: &CopyOptions,
) -> Result<CopyReport> {
    copy_file_as(src.as_ref(), dst.as_ref(), opts, false)
}

/// [`copy_file`], also taking a digest of every re-encoded dataset's decoded
/// source bytes as it encodes them ([`CopyReport::digests`]): what `h5
/// recompress` checks the output against.
pub fn copy_file_digested(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    opts: &CopyOptions,
) -> Result<CopyReport> {
    copy_file_as(src.as_ref(), dst.as_ref(), opts, true)
}

fn copy_file_as(src: &Path, dst: &Path, opts: &CopyOptions, digests: bool) -> Result<CopyReport> {
    let file = File::open(src)?;
    let root = file.root()?;
    let mut w = FileWriter::create(dst)?;
    let rd = w.root();
    let report = {
        let mut c = Copier::new(&file, &mut w, opts);
        c.digests = digests;
        c.copy_tree(root, rd)?;
        c.finish();
        c.report
    };
    w.commit()?;
    Ok(report)
}

/// The one object-graph copier, for tools that write a file of their own
/// (`h5 copy`, recompress, amend, pack): copy everything reachable from group
/// `from` of `src` into group `into` of `w` — `from`'s attributes onto `into`,
/// every group, dataset, committed datatype and attribute below it created
/// once (later hard links to an object become links to its copy; reference
/// counts follow), soft and external links as links, object/region/revised
/// references rewritten to the copies, link and attribute creation order and
/// committed-datatype sharing kept. `choose` decides for each dataset:
/// [`FilterChoice::Keep`] copies its stored chunks as they are, filter masks
/// included (when [`raw::raw_copyable`]; otherwise the data is re-encoded with
/// the same pipeline), any other choice re-encodes chunk by chunk. A dataset
/// that cannot be copied is left out (no placeholder) and listed in
/// [`CopyReport::skipped`]. Nothing is committed: the caller adds more and
/// commits `w`.
pub fn copy_graph(
    src: &File,
    from: crate::group::Group,
    w: &mut FileWriter,
    into: crate::write::GroupId,
    choose: &dyn Fn(&crate::dataset::Dataset) -> FilterChoice,
) -> Result<CopyReport> {
    let opts = CopyOptions::default();
    let mut c = Copier::new(src, w, &opts);
    c.choose = Some(choose);
    c.copy_tree(from, into)?;
    c.finish();
    Ok(c.report)
}

/// [`copy_file`] with chunk encoding on `opts.threads` threads (the writer encodes
/// chunks in parallel when the `parallel` feature is on).
pub fn copy_with_threads(src: &str, dst: &str, opts: &CopyOptions) -> Result<CopyReport> {
    if opts.threads > 0 {
        purehdf_filters::threads::set_threads(opts.threads)?;
    }
    copy_file(src, dst, opts)
}

#[cfg(test)]
mod bytes_check_tests;
mod choices;
mod chunkwise;
mod copier;
pub mod digest;
mod hook;
mod options;
mod policy;
pub mod raw;
#[cfg(test)]
mod tests;
mod values;

pub use choices::guess_chunk;
use copier::Copier;
pub use hook::copy_group_into;
pub use options::{
    parse_filter, CopyOptions, CopyReport, DatasetChoice, FilterChoice, MAX_OBJECTS,
};
pub use policy::{CopyPolicy, KeepAll};
