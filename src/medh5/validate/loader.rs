//! The reference's sample loader (`docs/medh5-format.md` §15): `info` and
//! `fix` load a sample before they look at it, and the loader stops at some
//! semantic errors. Which ones was found on the reference's conformance
//! suite (`medh5 conformance publish`): of its 102 invalid samples, `info`
//! refuses 39 and `fix` 26 of those (its loader does not look at images,
//! transforms or the clinical tables).

use crate::error::{Error, Result};
use purehdf::low_level::file::{File, Object};

use super::{validate_file, Diagnostic, Options};

/// Which command loads the sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loader {
    /// `info` (and `tree`): the whole sample.
    Info,
    /// `fix`: the document, grids, label set, annotations and provenance.
    Fix,
}

/// Whether the loader stops at `d`: by code, and for some codes only at
/// some of their checks (the text or the location says which).
fn stops_at(file: &File, d: &Diagnostic, loader: Loader) -> bool {
    const BOTH: &[&str] = &[
        "E002", "E004", "E005", "E102", "E103", "E104", "E108", "E110", "E302", "E303", "E304",
        "E305", "E306", "E402", "E403", "E405", "E603", "E604",
    ];
    const INFO_ONLY: &[&str] = &["E101", "E111", "E205", "E805", "E807", "E808"];
    let code = d.code.as_str();
    if BOTH.contains(&code) {
        return true;
    }
    match code {
        "E109" => d.message.contains("missing required attribute"),
        "E404" => d.message.contains("appears in layers"),
        // an unknown or reserved kind (not a kind of a later minor)
        "E401" => !d.message.contains("is defined by MEDH5"),
        // an annotation group without `kind`: the loader cannot tell what
        // it is (a dataset there it passes over)
        "E412" => {
            d.message.contains("attribute `kind`")
                && matches!(file.object(&d.location), Ok(Object::Group(_)))
        }
        // fix refuses a file without a version, and no other E001
        "E001" if loader == Loader::Fix => d.location == "/",
        "E008" => loader == Loader::Fix && d.message.contains("is absent"),
        _ if loader == Loader::Fix => false,
        // info refuses a file without a version, and an image it cannot
        // read (a dangling link, strings), not other E001s
        "E001" => d.location == "/" || d.location.starts_with("/images/"),
        "E408" => d.location.ends_with("/mask_offsets"),
        "E502" => {
            d.message.starts_with("unknown transform kind")
                || (d.message.contains("no `kind`")
                    && matches!(file.object(&d.location), Ok(Object::Group(_))))
        }
        // an unknown event column (not an unknown member of `clinical`)
        "E804" => d.message.contains("is not a column"),
        "E806" => d.message.contains("offsets must start at 0"),
        _ => INFO_ONLY.contains(&code),
    }
}

/// Refuse the sample as the reference's `loader` does: with the first
/// semantic error it stops at (its code, location and message).
pub fn refusal(file: &File, display: &str, loader: Loader) -> Result<()> {
    let report = validate_file(file, display, &Options::default());
    match report
        .diagnostics
        .iter()
        .find(|d| stops_at(file, d, loader))
    {
        Some(d) => Err(Error::code(
            &d.code,
            format!("{}: {}", d.location, d.message),
        )),
        None => Ok(()),
    }
}
