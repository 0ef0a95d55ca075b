//! Printf-style source names of virtual dataset mappings (HDF5 File Format
//! Specification IV.A.2.i; libhdf5 `H5Pset_virtual`): in a source file or
//! dataset name, `%b` stands for the block index of an unlimited virtual
//! selection and `%%` for a literal `%`; any other `%` sequence is invalid.

use crate::error::{Error, Result};

/// A parsed source name: literal pieces around each `%b`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceName {
    pieces: Vec<String>,
}

impl SourceName {
    /// Parse a stored name.
    pub fn parse(name: &str) -> Result<Self> {
        let mut pieces = vec![String::new()];
        let mut chars = name.chars();
        while let Some(ch) = chars.next() {
            if ch != '%' {
                if let Some(p) = pieces.last_mut() {
                    p.push(ch);
                }
                continue;
            }
            match chars.next() {
                Some('b') => pieces.push(String::new()),
                Some('%') => {
                    if let Some(p) = pieces.last_mut() {
                        p.push('%');
                    }
                }
                other => {
                    return Err(Error::malformed(
                        "virtual dataset source name",
                        0,
                        format!(
                            "invalid format specifier %{} in {name:?}",
                            other.map(String::from).unwrap_or_default()
                        ),
                    ))
                }
            }
        }
        Ok(SourceName { pieces })
    }

    /// True when the name holds at least one `%b`.
    pub fn has_substitutions(&self) -> bool {
        self.pieces.len() > 1
    }

    /// The name for block `block` (the literal name when there is no `%b`).
    pub fn build(&self, block: u64) -> String {
        let b = block.to_string();
        self.pieces.join(&b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutions_and_escapes() {
        let n = SourceName::parse("f-%b.h5").unwrap();
        assert!(n.has_substitutions());
        assert_eq!(n.build(0), "f-0.h5");
        assert_eq!(n.build(12), "f-12.h5");
        let n = SourceName::parse("100%%_%b_%b").unwrap();
        assert_eq!(n.build(3), "100%_3_3");
        let n = SourceName::parse("a%%b.h5").unwrap();
        assert!(!n.has_substitutions());
        assert_eq!(n.build(7), "a%b.h5");
        assert_eq!(SourceName::parse("").unwrap().build(1), "");
        assert!(SourceName::parse("bad%d").is_err());
        assert!(SourceName::parse("trailing%").is_err());
    }
}
