//! Read-back check of a freshly written sample: every dataset of the plan is read
//! through the HDF5 reader and compared byte for byte with what was planned (so the
//! digests and content_id stamped from those bytes hold for the file). The full
//! `verify` (recomputing digests from any file) is the job of `verify.rs`.

use std::path::Path;

use super::plan::{PlanData, PlanStep, WritePlan};
use crate::error::{Error, Result};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::selection::Selection;

/// Re-open `path` and check every planned dataset reads back identically.
/// Returns the number of datasets checked.
pub fn check_written(path: &Path, plan: &WritePlan) -> Result<usize> {
    let file = File::open(path)?;
    let mut checked = 0;
    for step in &plan.steps {
        let PlanStep::Dataset(d) = step else { continue };
        let ds = match file.object(&d.path)? {
            Object::Dataset(ds) => ds,
            _ => return Err(Error::not_found(format!("{} is not a dataset", d.path))),
        };
        let elem = ds.dtype().size();
        let n = ds
            .num_elements()
            .checked_mul(elem)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| Error::invalid(format!("{}: too large", d.path)))?;
        let n = purehdf::low_level::cursor::bounded(
            n as u64,
            purehdf::low_level::limits::MAX_DECODED,
            "dataset",
            ds.address(),
            "size",
        )?;
        let mut buf = vec![0u8; n];
        ds.read_raw(&Selection::All, &mut buf)?;
        let same = match &d.data {
            PlanData::Bytes(b) => *b == buf,
            PlanData::Strings(strings) => {
                let mut ok = strings.len() as u64 == ds.num_elements().max(1);
                for (s, el) in strings.iter().zip(buf.chunks(elem as usize)) {
                    ok &= file.vlen_bytes(el)? == s.as_bytes();
                }
                ok
            }
        };
        if !same {
            return Err(Error::Code {
                code: "E701".into(),
                message: format!("{}: data read back differs from what was written", d.path),
            });
        }
        checked += 1;
    }
    Ok(checked)
}
