//! medh5's own version check on the facade's header gate
//! ([`purehdf::HeaderGate`]): `medh5_version` is `major.minor` text, major 1
//! is read, and a minor above [`MAX_MINOR`] is a newer revision. Each command
//! then answers a [`Verdict`] with the reference's words for it.

use crate::error::Result;
use purehdf::{File, HeaderGate, HeaderReason, VersionForm};

/// The highest minor version of format 1 this engine implements (reads,
/// validates and amends).
pub const MAX_MINOR: u64 = 2;

/// What the gate found in a sample's root attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Version 1.0 to 1.[`MAX_MINOR`].
    Supported,
    /// No `medh5_version` (a 0.x file, to be migrated).
    Missing,
    /// A version of another major number, or text that does not parse.
    OtherMajor(String),
    /// Major 1 with a minor above [`MAX_MINOR`].
    NewerMinor(String),
    /// Not scalar text (left to `validate`, which reports E001).
    NotText,
}

/// The gate medh5 applies to `medh5_version`.
pub fn gate() -> HeaderGate {
    HeaderGate::new("medh5_version", 1..=1)
        .form(VersionForm::MajorMinorText)
        .max_minor(MAX_MINOR)
}

/// The verdict on `file`'s root.
pub fn check(file: &File) -> Result<Verdict> {
    Ok(match gate().check(&file.root()?) {
        Ok(_) => Verdict::Supported,
        Err(purehdf::Error::Header { reason, .. }) => match reason {
            HeaderReason::Missing => Verdict::Missing,
            HeaderReason::WrongType { .. } => Verdict::NotText,
            HeaderReason::WrongValue { found, .. } => Verdict::OtherMajor(found),
            HeaderReason::OutOfRange { found, .. } if found.starts_with("1.") => {
                Verdict::NewerMinor(found)
            }
            HeaderReason::OutOfRange { found, .. } => Verdict::OtherMajor(found),
            _ => Verdict::OtherMajor(String::new()),
        },
        Err(e) => return Err(e.into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use purehdf::{AttrValue, FileWriter};

    fn with(v: Option<AttrValue>) -> Verdict {
        let mut w = FileWriter::in_memory();
        let root = w.root();
        if let Some(v) = v {
            w.set_attr(root, "medh5_version", v).unwrap();
        }
        check(&File::from_bytes(w.finish().unwrap()).unwrap()).unwrap()
    }

    #[test]
    fn verdicts() {
        assert_eq!(with(Some(AttrValue::string("1.0"))), Verdict::Supported);
        assert_eq!(with(Some(AttrValue::string("1.2"))), Verdict::Supported);
        assert_eq!(
            with(Some(AttrValue::string("1.9"))),
            Verdict::NewerMinor("1.9".into())
        );
        assert_eq!(
            with(Some(AttrValue::string("2.0"))),
            Verdict::OtherMajor("2.0".into())
        );
        assert_eq!(
            with(Some(AttrValue::string("0.9"))),
            Verdict::OtherMajor("0.9".into())
        );
        assert_eq!(with(None), Verdict::Missing);
        assert_eq!(with(Some(AttrValue::scalar(1i64))), Verdict::NotText);
    }
}
