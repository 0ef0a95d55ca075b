//! A format-header gate: decides from a group's attributes (usually the
//! root's) whether an application can interpret a file, before it reads
//! anything else (`docs/neighbours.md`, V2).
//!
//! The gate is data, not code: which attribute carries the magic and with
//! what value, which carries the version and in which form, the versions
//! accepted, the attributes that become mandatory from a version on, and the
//! legacy rule for a file with no header at all. [`HeaderGate::check`]
//! answers [`HeaderOutcome::Legacy`] or [`HeaderOutcome::Supported`], or an
//! [`Error::Header`] naming the attribute and a [`HeaderReason`]:
//!
//! - no magic and no version → the legacy version (or, without a legacy
//!   rule, the version is [`HeaderReason::Missing`]);
//! - only one of the two → the other is missing: half a header is corrupt,
//!   not legacy;
//! - a magic that is not a scalar string → [`HeaderReason::WrongType`]; one
//!   of another value → [`HeaderReason::WrongValue`] (a fixed-length string
//!   counts like a variable-length one, padding removed);
//! - an integer version must be a scalar integer of any width and byte
//!   order: an h5py bool (an enum over int8), a float, a string or an array
//!   (even of one element) is [`HeaderReason::WrongType`]; a value outside
//!   the range is [`HeaderReason::OutOfRange`];
//! - a `major.minor` text version (medh5's `medh5_version`) must be scalar
//!   text; text that does not parse is [`HeaderReason::WrongValue`];
//! - an attribute required from version `v` on, absent in a file of version
//!   `v` or later → [`HeaderReason::Missing`].
//!
//! ```
//! use purehdf::{AttrValue, File, FileWriter, HeaderGate, HeaderOutcome};
//! let gate = HeaderGate::new("vneurotk_schema_version", 0..=1)
//!     .magic("vneurotk_format", "recording")
//!     .legacy(0)
//!     .required_from(1, "writer_version");
//! let mut w = FileWriter::in_memory();
//! let root = w.root();
//! w.set_attr(root, "vneurotk_format", AttrValue::string("recording"))?;
//! w.set_attr(root, "vneurotk_schema_version", AttrValue::scalar(1i64))?;
//! w.set_attr(root, "writer_version", AttrValue::string("0.1.0"))?;
//! let file = File::from_bytes(w.finish()?)?;
//! assert_eq!(gate.check(&file.root()?)?, HeaderOutcome::Supported(1));
//! # Ok::<(), purehdf::Error>(())
//! ```

use crate::attribute::Attribute;
use crate::datatype::{ByteOrder, Datatype};
use crate::error::{Error, Result};
use crate::group::Group;
pub use crate::header_reason::HeaderReason;
use crate::messages::dataspace::SpaceKind;
use std::ops::RangeInclusive;

/// How the version attribute is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionForm {
    /// A scalar integer of any width, signed or not, either byte order.
    Integer,
    /// Scalar text `major.minor` (or `major`), as medh5's `medh5_version`:
    /// the range applies to the major number.
    MajorMinorText,
}

/// What the gate decided about a file it can interpret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderOutcome {
    /// No header at all: the legacy rule's version.
    Legacy(u64),
    /// A complete header whose version is in the supported range (the
    /// major number for [`VersionForm::MajorMinorText`]).
    Supported(u64),
}

impl HeaderOutcome {
    /// The version either way.
    pub fn version(self) -> u64 {
        match self {
            HeaderOutcome::Legacy(v) | HeaderOutcome::Supported(v) => v,
        }
    }
}

/// A declarative header gate. See the module documentation.
#[derive(Debug, Clone)]
pub struct HeaderGate {
    magic: Option<(String, String)>,
    version: String,
    form: VersionForm,
    supported: RangeInclusive<u64>,
    max_minor: Option<u64>,
    legacy: Option<u64>,
    required: Vec<(u64, String)>,
}

impl HeaderGate {
    /// A gate on the integer attribute `version` accepting `supported`, with
    /// no magic, no legacy rule (a file without the version is refused) and
    /// no required fields.
    pub fn new(version: &str, supported: RangeInclusive<u64>) -> HeaderGate {
        HeaderGate {
            magic: None,
            version: version.to_string(),
            form: VersionForm::Integer,
            supported,
            max_minor: None,
            legacy: None,
            required: Vec::new(),
        }
    }

    /// The attribute `name` must hold the text `value`.
    pub fn magic(mut self, name: &str, value: &str) -> HeaderGate {
        self.magic = Some((name.to_string(), value.to_string()));
        self
    }

    /// Store the version as `form`.
    pub fn form(mut self, form: VersionForm) -> HeaderGate {
        self.form = form;
        self
    }

    /// For [`VersionForm::MajorMinorText`]: refuse a minor number above
    /// `max` in the highest supported major version (a newer revision).
    pub fn max_minor(mut self, max: u64) -> HeaderGate {
        self.max_minor = Some(max);
        self
    }

    /// A file with neither magic nor version is version `v` (legacy).
    pub fn legacy(mut self, v: u64) -> HeaderGate {
        self.legacy = Some(v);
        self
    }

    /// From version `v` on, the attribute `name` must be present.
    pub fn required_from(mut self, v: u64, name: &str) -> HeaderGate {
        self.required.push((v, name.to_string()));
        self
    }

    /// The version attribute's name.
    pub fn version_attribute(&self) -> &str {
        &self.version
    }

    /// Decide about the header stored on `group`'s attributes.
    pub fn check(&self, group: &Group) -> Result<HeaderOutcome> {
        let attrs = group.attributes()?;
        self.check_attributes(&attrs)
    }

    /// Decide about a header given as attributes (read from any object).
    pub fn check_attributes(&self, attrs: &[Attribute]) -> Result<HeaderOutcome> {
        let find = |n: &str| attrs.iter().find(|a| a.name == n);
        let version = find(&self.version);
        let magic = self.magic.as_ref().map(|(n, v)| (n, v, find(n)));
        let outcome = match (magic, version) {
            (None, None) | (Some((_, _, None)), None) => match self.legacy {
                Some(v) => HeaderOutcome::Legacy(v),
                None => return Err(refuse(&self.version, HeaderReason::Missing)),
            },
            (Some((name, _, None)), Some(_)) => {
                return Err(refuse(name, HeaderReason::Missing));
            }
            (Some((_, _, Some(_))), None) => {
                return Err(refuse(&self.version, HeaderReason::Missing));
            }
            (magic, Some(version)) => {
                if let Some((name, want, Some(found))) = magic {
                    check_magic(name, want, found)?;
                }
                HeaderOutcome::Supported(self.check_version(version)?)
            }
        };
        for (from, name) in &self.required {
            if outcome.version() >= *from && find(name).is_none() {
                return Err(refuse(name, HeaderReason::Missing));
            }
        }
        Ok(outcome)
    }

    fn check_version(&self, a: &Attribute) -> Result<u64> {
        match self.form {
            VersionForm::Integer => {
                let v = scalar_integer(a)?;
                let in_range = u64::try_from(v).ok().filter(|v| self.supported.contains(v));
                in_range.ok_or_else(|| {
                    refuse(
                        &a.name,
                        HeaderReason::OutOfRange {
                            found: v.to_string(),
                            supported: self.range_text(),
                        },
                    )
                })
            }
            VersionForm::MajorMinorText => {
                let text = scalar_text(a, "scalar text major.minor")?;
                let parsed = parse_major_minor(&text).ok_or_else(|| {
                    refuse(
                        &a.name,
                        HeaderReason::WrongValue {
                            found: text.clone(),
                            expected: "major.minor".into(),
                        },
                    )
                })?;
                let (major, minor) = parsed;
                let newer = self
                    .max_minor
                    .is_some_and(|m| major == *self.supported.end() && minor > m);
                if !self.supported.contains(&major) || newer {
                    return Err(refuse(
                        &a.name,
                        HeaderReason::OutOfRange {
                            found: text,
                            supported: self.range_text(),
                        },
                    ));
                }
                Ok(major)
            }
        }
    }

    fn range_text(&self) -> String {
        let (lo, hi) = (self.supported.start(), self.supported.end());
        match (self.form, self.max_minor) {
            (VersionForm::MajorMinorText, Some(m)) => format!("{lo}.0..={hi}.{m}"),
            (VersionForm::MajorMinorText, None) => format!("{lo}.x..={hi}.x"),
            (VersionForm::Integer, _) => format!("{lo}..={hi}"),
        }
    }
}

fn refuse(attribute: &str, reason: HeaderReason) -> Error {
    Error::Header {
        attribute: attribute.to_string(),
        reason,
    }
}

/// `major.minor` or `major` (digits only).
fn parse_major_minor(text: &str) -> Option<(u64, u64)> {
    let digits = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u64>().ok())
            .flatten()
    };
    match text.split_once('.') {
        Some((a, b)) => Some((digits(a)?, digits(b)?)),
        None => Some((digits(text)?, 0)),
    }
}

/// What a value's type and shape look like, for refusals.
fn describe(a: &Attribute) -> String {
    let base = match &a.dtype {
        Datatype::Enum { .. } if is_bool(&a.dtype) => "bool".to_string(),
        d if d.is_string() => "string".to_string(),
        d => d.to_string(),
    };
    match a.space_kind() {
        SpaceKind::Scalar => base,
        SpaceKind::Null => format!("empty {base}"),
        SpaceKind::Simple => format!(
            "{base} array of shape {}",
            crate::datatype::shape_tuple(a.shape())
        ),
    }
}

fn is_bool(d: &Datatype) -> bool {
    matches!(d, Datatype::Enum { members, .. }
        if members.len() == 2 && members.iter().any(|m| m.name == "TRUE"))
}

fn check_magic(name: &str, want: &str, a: &Attribute) -> Result<()> {
    let text = scalar_text(a, "scalar string")?;
    if text != want {
        return Err(refuse(
            name,
            HeaderReason::WrongValue {
                found: text,
                expected: want.to_string(),
            },
        ));
    }
    Ok(())
}

/// A scalar string attribute's text (fixed or variable length, any character set).
fn scalar_text(a: &Attribute, expected: &'static str) -> Result<String> {
    if !a.dtype.is_string() || a.space_kind() != SpaceKind::Scalar {
        return Err(refuse(
            &a.name,
            HeaderReason::WrongType {
                found: describe(a),
                expected,
            },
        ));
    }
    a.read_scalar::<String>()
}

/// A scalar integer attribute's value, any width up to 16 bytes.
fn scalar_integer(a: &Attribute) -> Result<i128> {
    let wrong = || {
        refuse(
            &a.name,
            HeaderReason::WrongType {
                found: describe(a),
                expected: "scalar integer",
            },
        )
    };
    let (size, order, signed) = match &a.dtype {
        Datatype::Integer {
            size,
            order,
            signed,
            ..
        } => (*size as usize, *order, *signed),
        _ => return Err(wrong()),
    };
    if a.space_kind() != SpaceKind::Scalar || size == 0 || size > 16 {
        return Err(wrong());
    }
    let bytes = a.data.get(..size).ok_or_else(|| {
        Error::malformed("attribute value", 0, format!("{}: short value", a.name))
    })?;
    let mut le: Vec<u8> = bytes.to_vec();
    if order == ByteOrder::Big {
        le.reverse();
    }
    let negative = signed && le.last().is_some_and(|b| b & 0x80 != 0);
    let mut buf = [if negative { 0xFF } else { 0 }; 16];
    buf[..size].copy_from_slice(&le);
    let v = i128::from_le_bytes(buf);
    if !signed && size == 16 && v < 0 {
        // a u128 above i128::MAX: out of every range
        return Ok(i128::MAX);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::{AttrValue, FileWriter};
    use crate::{CharSet, File, StringPad};

    fn root_with(attrs: Vec<(&str, AttrValue)>) -> Group {
        let mut w = FileWriter::in_memory();
        let root = w.root();
        for (n, v) in attrs {
            w.set_attr(root, n, v).unwrap();
        }
        File::from_bytes(w.finish().unwrap())
            .unwrap()
            .root()
            .unwrap()
    }

    fn gate() -> HeaderGate {
        HeaderGate::new("v", 0..=1)
            .magic("fmt", "rec")
            .legacy(0)
            .required_from(1, "writer")
    }

    fn reason(r: Result<HeaderOutcome>) -> (String, HeaderReason) {
        match r {
            Err(Error::Header { attribute, reason }) => (attribute, reason),
            other => panic!("expected a header error, got {other:?}"),
        }
    }

    #[test]
    fn integer_widths_and_orders() {
        for v in [
            AttrValue::scalar(1u8),
            AttrValue::scalar(1i16),
            AttrValue::scalar(1u32),
            AttrValue::scalar(1i64),
        ] {
            let g = root_with(vec![
                ("fmt", AttrValue::string("rec")),
                ("v", v),
                ("writer", AttrValue::string("x")),
            ]);
            assert_eq!(gate().check(&g).unwrap(), HeaderOutcome::Supported(1));
        }
        let big = AttrValue::raw(
            Datatype::Integer {
                size: 16,
                order: ByteOrder::Big,
                signed: true,
                bit_offset: 0,
                precision: 128,
            },
            crate::messages::dataspace::Dataspace::scalar(),
            {
                let mut b = vec![0u8; 16];
                b[15] = 1;
                b
            },
        );
        let g = root_with(vec![
            ("fmt", AttrValue::string("rec")),
            ("v", big),
            ("writer", AttrValue::string("x")),
        ]);
        assert_eq!(gate().check(&g).unwrap(), HeaderOutcome::Supported(1));
        let g = root_with(vec![
            ("fmt", AttrValue::string("rec")),
            ("v", AttrValue::scalar(-1i8)),
        ]);
        let (a, r) = reason(gate().check(&g));
        assert_eq!(a, "v");
        assert_eq!(
            r,
            HeaderReason::OutOfRange {
                found: "-1".into(),
                supported: "0..=1".into()
            }
        );
    }

    #[test]
    fn fixed_length_magic_and_text_versions() {
        let g = root_with(vec![
            (
                "fmt",
                AttrValue::fixed_string("rec", 8, StringPad::NullPad, CharSet::Ascii),
            ),
            ("v", AttrValue::scalar(0i64)),
        ]);
        assert_eq!(gate().check(&g).unwrap(), HeaderOutcome::Supported(0));
        let text = HeaderGate::new("medh5_version", 1..=1)
            .form(VersionForm::MajorMinorText)
            .max_minor(2);
        for (v, ok) in [
            ("1.0", true),
            ("1.2", true),
            ("1.3", false),
            ("2.0", false),
            ("0.9", false),
        ] {
            let g = root_with(vec![("medh5_version", AttrValue::string(v))]);
            assert_eq!(text.check(&g).is_ok(), ok, "{v}");
        }
        let g = root_with(vec![("medh5_version", AttrValue::string("one"))]);
        let (_, r) = reason(text.check(&g));
        assert!(matches!(r, HeaderReason::WrongValue { .. }), "{r:?}");
        let g = root_with(vec![]);
        assert_eq!(reason(text.check(&g)).1, HeaderReason::Missing);
    }
}
