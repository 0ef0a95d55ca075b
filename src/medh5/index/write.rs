//! Writing one sampling-index entry (`docs/medh5-format.md` §6.8)
//! into an open [`FileWriter`]: the `/index/<ann_id>` group with its
//! `source_digest`, `max_coords` and `seed` attributes and its datasets, laid
//! out as the reference lays out label-role data (contiguous below 64 KiB,
//! else chunked — `occupancy` by `(1, *coarse)` — with the label codec of the
//! file's codec family). No index dataset carries a `digest`.

use super::{IndexEntry, IndexOptions};
use crate::amend::cow::utf8;
use crate::chunking::guess_chunk;
use crate::error::Result;
use crate::model::ArrayData;
use crate::profiles::{is_contiguous, Profile, Role};
use purehdf::low_level::write::{AttrValue, DatasetData, DatasetSpec, FileWriter, GroupId};

fn dataset(
    w: &mut FileWriter,
    parent: GroupId,
    name: &str,
    a: &ArrayData,
    chunk: Option<Vec<u64>>,
    profile: Profile,
) -> Result<()> {
    let es = a.dtype.size();
    let mut spec = DatasetSpec::new(a.dtype.datatype(), &a.shape);
    if a.shape.contains(&0) {
        // as the reference: an empty dataset is chunked by ones, unfiltered
        spec = spec.chunked(&vec![1; a.shape.len()], Vec::new());
    } else if !is_contiguous(&a.shape, u64::from(es)) {
        let dims = chunk.unwrap_or_else(|| guess_chunk(&a.shape, u64::from(es)));
        let filters = profile.codec(Role::Label).pipeline(es, &dims)?;
        spec = spec.chunked_stored(&dims, filters);
    }
    w.create_dataset(parent, name, spec, DatasetData::Raw(a.bytes.clone()))?;
    Ok(())
}

/// Write `entry` as `index_group/<ann_id>`; `source_digest` is the
/// annotation's group digest (§6.8), `profile` the file's codec family.
/// This is the whole of an index write: a caller owning any writer over the
/// amended file (the copy-on-write of `index build` and `fix`, or an amend)
/// calls it once per entry.
pub fn write_entry(
    w: &mut FileWriter,
    index_group: GroupId,
    ann_id: &str,
    entry: &IndexEntry,
    source_digest: &str,
    opts: &IndexOptions,
    profile: Profile,
) -> Result<()> {
    let g = w.create_group(index_group, ann_id)?;
    w.set_attr(g, "source_digest", utf8(source_digest))?;
    w.set_attr(g, "max_coords", AttrValue::scalar(opts.max_coords as i64))?;
    w.set_attr(g, "seed", AttrValue::scalar(opts.seed as i64))?;
    dataset(w, g, "class_ids", &entry.class_ids, None, profile)?;
    dataset(w, g, "voxel_counts", &entry.voxel_counts, None, profile)?;
    dataset(w, g, "class_bboxes", &entry.class_bboxes, None, profile)?;
    let fg = w.create_group(g, "fg_coords")?;
    for (class, coords) in &entry.fg_coords {
        dataset(w, fg, &class.to_string(), coords, None, profile)?;
    }
    if let Some(occ) = &entry.occupancy {
        let mut chunk = vec![1u64];
        chunk.extend(occ.shape.iter().skip(1));
        dataset(w, g, "occupancy", occ, Some(chunk), profile)?;
    }
    Ok(())
}
