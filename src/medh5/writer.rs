//! Executes a medh5 [`WritePlan`] through the HDF5 writer (`hdf5fmt::write`):
//! groups, datasets and attributes in plan order, committed atomically
//! (`docs/medh5-format.md` §8: temp file beside the target, fsync, rename).

use std::collections::HashMap;
use std::path::Path;

use super::attribute::{bool_enum, AttrValue};
use super::plan::{Layout, PlanData, PlanStep, WritePlan};
use crate::error::{Error, Result};
use purehdf::low_level::datatype::{CharSet, Datatype};
use purehdf::low_level::write::{self, DatasetData, Dataspace, FileWriter, GroupId, ObjectId};

/// Write `plan` to `path` atomically; the previous file (if any) survives any failure.
pub fn write_plan(plan: &WritePlan, path: &Path) -> Result<()> {
    let mut w = FileWriter::create(path)?;
    emit(plan, &mut w)?;
    Ok(w.commit()?)
}

/// [`write_plan`] that consumes the plan: each dataset's bytes move into the
/// writer instead of being copied (the one copy left is the encoder's).
pub fn write_plan_owned(plan: WritePlan, path: &Path) -> Result<()> {
    let mut w = FileWriter::create(path)?;
    let mut groups = root_groups(&w);
    for mut step in plan.steps {
        let data = match &mut step {
            PlanStep::Dataset(d) => Some(match &mut d.data {
                PlanData::Bytes(b) => DatasetData::Raw(std::mem::take(b)),
                PlanData::Strings(s) => DatasetData::VarStrings(std::mem::take(s)),
            }),
            _ => None,
        };
        emit_step(&mut w, &mut groups, &step, data)?;
    }
    Ok(w.commit()?)
}

/// Write `plan` into an in-memory HDF5 image (tests, WASM).
pub fn write_plan_bytes(plan: &WritePlan) -> Result<Vec<u8>> {
    let mut w = FileWriter::in_memory();
    emit(plan, &mut w)?;
    Ok(w.finish()?)
}

fn root_groups(w: &FileWriter) -> HashMap<String, GroupId> {
    let mut groups = HashMap::new();
    groups.insert("/".to_string(), w.root());
    groups
}

/// Emit every step of `plan` into `w`, in order.
pub fn emit(plan: &WritePlan, w: &mut FileWriter) -> Result<()> {
    let mut groups = root_groups(w);
    for step in &plan.steps {
        let data = match step {
            PlanStep::Dataset(d) => Some(match &d.data {
                PlanData::Bytes(b) => DatasetData::Raw(b.clone()),
                PlanData::Strings(s) => DatasetData::VarStrings(s.clone()),
            }),
            _ => None,
        };
        emit_step(w, &mut groups, step, data)?;
    }
    Ok(())
}

/// One step; `data` is the dataset's data for a dataset step.
fn emit_step(
    w: &mut FileWriter,
    groups: &mut HashMap<String, GroupId>,
    step: &PlanStep,
    data: Option<DatasetData>,
) -> Result<()> {
    match step {
        PlanStep::Group { path, attrs } => {
            let g = ensure_group(w, groups, path)?;
            set_attrs(w, g.into(), attrs)?;
        }
        PlanStep::Dataset(d) => {
            let (parent, name) = split(&d.path)?;
            let g = ensure_group(w, groups, parent)?;
            let mut spec = if d.shape.is_empty() {
                write::DatasetSpec::scalar(d.datatype.clone())
            } else {
                write::DatasetSpec::new(d.datatype.clone(), &d.shape)
            };
            if let Layout::Chunked { dims, filters } = &d.layout {
                spec = spec.chunked_stored(dims, filters.clone());
            }
            let id = w.create_dataset(g, name, spec, data.unwrap_or(DatasetData::None))?;
            set_attrs(w, id.into(), &d.attrs)?;
        }
        PlanStep::RootAttrs(attrs) => {
            let root = w.root();
            set_attrs(w, root.into(), attrs)?;
        }
    }
    Ok(())
}

fn split(path: &str) -> Result<(&str, &str)> {
    let trimmed = path.trim_end_matches('/');
    match trimmed.rfind('/') {
        Some(0) => Ok(("/", &trimmed[1..])),
        Some(i) => Ok((&trimmed[..i], &trimmed[i + 1..])),
        None => Err(Error::invalid(format!(
            "plan path {path:?} is not absolute"
        ))),
    }
}

fn ensure_group(
    w: &mut FileWriter,
    groups: &mut HashMap<String, GroupId>,
    path: &str,
) -> Result<GroupId> {
    let path = if path.is_empty() {
        "/"
    } else {
        path.trim_end_matches('/')
    };
    let path = if path.is_empty() { "/" } else { path };
    if let Some(&g) = groups.get(path) {
        return Ok(g);
    }
    let (parent, name) = split(path)?;
    let pg = ensure_group(w, groups, parent)?;
    let g = w.create_group(pg, name)?;
    groups.insert(path.to_string(), g);
    Ok(g)
}

fn set_attrs(w: &mut FileWriter, obj: ObjectId, attrs: &[(String, AttrValue)]) -> Result<()> {
    for (name, value) in attrs {
        w.set_attr(obj, name, to_hdf5(value))?;
    }
    Ok(())
}

fn space(shape: &[u64]) -> Dataspace {
    if shape.is_empty() {
        Dataspace::scalar()
    } else {
        Dataspace::simple(shape)
    }
}

/// The HDF5 form of a medh5 attribute value (the types h5py gives these values).
pub fn to_hdf5(v: &AttrValue) -> write::AttrValue {
    match v {
        AttrValue::Str(s) => write::AttrValue::string(s),
        AttrValue::StrList(list) => write::AttrValue::strings(list, CharSet::Utf8),
        AttrValue::I64 { shape, values } => write::AttrValue::raw(
            Datatype::int(8, true),
            space(shape),
            values.iter().flat_map(|x| x.to_le_bytes()).collect(),
        ),
        AttrValue::U16 { shape, values } => write::AttrValue::raw(
            Datatype::int(2, false),
            space(shape),
            values.iter().flat_map(|x| x.to_le_bytes()).collect(),
        ),
        AttrValue::F64 { shape, values } => write::AttrValue::raw(
            Datatype::float(8),
            space(shape),
            values.iter().flat_map(|x| x.to_le_bytes()).collect(),
        ),
        AttrValue::Bool { shape, values } => write::AttrValue::raw(
            bool_enum(),
            space(shape),
            values.iter().map(|&b| u8::from(b)).collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_paths() {
        assert_eq!(split("/images/CT").unwrap(), ("/images", "CT"));
        assert_eq!(split("/meta").unwrap(), ("/", "meta"));
        assert!(split("meta").is_err());
    }
}
