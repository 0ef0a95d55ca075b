//! The virtual dataset mapping list (HDF5 File Format Specification IV.A.2.i,
//! data layout message class 3: the global heap object it points at). Encoding
//! versions 0 and 1: a version byte, the number of mappings (a length-sized
//! field), then per mapping — version 1 starts with a flags byte — the source
//! file name, the source dataset name, the source selection and the virtual
//! selection, and finally a Jenkins lookup3 checksum of everything before it.
//!
//! Version 1 flags: 0x01 the file name is the index of an earlier mapping whose
//! name it shares, 0x02 the same for the dataset name, 0x04 the source is the
//! virtual dataset's own file (name `.`).

use crate::checksum::metadata_checksum;
use crate::cursor::Cursor;
use crate::dataspace_selection::{self, DataspaceSelection};
use crate::error::{Error, Result};
use crate::Sizes;

const FILE_SHARED: u8 = 0x01;
const DSET_SHARED: u8 = 0x02;
const SAME_FILE: u8 = 0x04;

/// One mapping: which source elements appear where in the virtual dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// Source file name as stored (`.` = the virtual dataset's own file); may
    /// hold printf-style `%b` / `%%`.
    pub source_file: String,
    /// Source dataset path as stored; may hold `%b` / `%%`.
    pub source_dataset: String,
    /// Source selection: the elements taken from the source dataset, in source coordinates.
    pub source_select: DataspaceSelection,
    /// Virtual selection: where those elements appear, in virtual dataset coordinates.
    pub virtual_select: DataspaceSelection,
}

/// Decode the mapping list held in a global heap object; `at` is the heap
/// collection's address, for error messages.
pub fn decode_mappings(block: &[u8], at: u64, sizes: Sizes) -> Result<Vec<Mapping>> {
    const S: &str = "virtual dataset mapping list";
    let body_len = block.len().checked_sub(4).ok_or(Error::Truncated {
        structure: S,
        offset: at,
        needed: 4,
        available: block.len() as u64,
    })?;
    let (body, sum) = block.split_at(body_len);
    let stored = u32::from_le_bytes(sum.try_into().unwrap_or([0; 4]));
    let computed = metadata_checksum(body);
    if stored != computed {
        return Err(Error::Checksum {
            structure: S,
            offset: at,
            stored,
            computed,
        });
    }
    let mut c = Cursor::new(body, at, S);
    let version = c.u8()?;
    if version > 1 {
        return Err(c.unsupported(format!("mapping list encoding version {version}")));
    }
    let n = c.length(sizes.length)?;
    let mut out: Vec<Mapping> = Vec::new();
    for i in 0..n {
        // Every mapping takes bytes, so a corrupt count ends in a truncation.
        let flags = if version >= 1 { c.u8()? } else { 0 };
        if flags & !(FILE_SHARED | DSET_SHARED | SAME_FILE) != 0 {
            return Err(c.malformed(format!("mapping flags {flags:#x}")));
        }
        let source_file = if flags & SAME_FILE != 0 {
            ".".to_string()
        } else if flags & FILE_SHARED != 0 {
            earlier(&mut c, &out, i, sizes, |m| &m.source_file)?
        } else {
            String::from_utf8_lossy(c.cstr()?).into_owned()
        };
        let source_dataset = if flags & DSET_SHARED != 0 {
            earlier(&mut c, &out, i, sizes, |m| &m.source_dataset)?
        } else {
            String::from_utf8_lossy(c.cstr()?).into_owned()
        };
        let source_select = dataspace_selection::decode(&mut c)?;
        let virtual_select = dataspace_selection::decode(&mut c)?;
        out.push(Mapping {
            source_file,
            source_dataset,
            source_select,
            virtual_select,
        });
    }
    if c.remaining() != 0 {
        return Err(c.malformed(format!("{} bytes after the last mapping", c.remaining())));
    }
    Ok(out)
}

/// A name shared with mapping number `index` (which must come before `i`).
fn earlier(
    c: &mut Cursor<'_>,
    out: &[Mapping],
    i: u64,
    sizes: Sizes,
    name: impl Fn(&Mapping) -> &String,
) -> Result<String> {
    let index = c.length(sizes.length)?;
    if index >= i {
        return Err(c.malformed(format!("mapping {i} shares a name with mapping {index}")));
    }
    usize::try_from(index)
        .ok()
        .and_then(|k| out.get(k))
        .map(|m| name(m).clone())
        .ok_or_else(|| c.malformed(format!("no mapping {index}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataspace_selection::HyperDim;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// tests/golden/vds/vds_same_file.h5 "irregular": encoding version 1, same file.
    const SAME_FILE_V1: &str = "010100000000000000042f737263000200000003000000000202000000020000000200010002000300010003000300020000000300000000020200000002000000000000000200020003000200040096106005";
    /// tests/golden/vds/vds_printf.h5: version 0, printf source name.
    const PRINTF_V0: &str = "000100000000000000705f25622e683500640003000000010000000000000000000000020000000300000001020200000000000200ffff02000000010001000300f26e7d48";

    #[test]
    fn real_lists() {
        let m = decode_mappings(&hex(SAME_FILE_V1), 0, Sizes::default()).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].source_file, ".");
        assert_eq!(m[0].source_dataset, "/src");
        assert_eq!(
            m[0].virtual_select,
            DataspaceSelection::Irregular {
                rank: 2,
                blocks: vec![0, 0, 0, 2, 2, 3, 2, 4]
            }
        );
        let m = decode_mappings(&hex(PRINTF_V0), 0, Sizes::default()).unwrap();
        assert_eq!(m[0].source_file, "p_%b.h5");
        assert_eq!(m[0].source_dataset, "d");
        assert_eq!(m[0].source_select, DataspaceSelection::All);
        assert_eq!(
            m[0].virtual_select.regular().unwrap()[0],
            HyperDim {
                start: 0,
                stride: 2,
                count: None,
                block: Some(2)
            }
        );
    }

    fn with_checksum(mut body: Vec<u8>) -> Vec<u8> {
        let s = metadata_checksum(&body);
        body.extend(s.to_le_bytes());
        body
    }

    #[test]
    fn shared_names_and_errors() {
        let all = hex("030000000100000000000000000000000000");
        let all = &all[..16];
        // version 1, two mappings, the second shares both names with the first.
        let mut b = vec![1u8];
        b.extend(2u64.to_le_bytes());
        b.push(0);
        b.extend(b"f.h5\0d\0");
        b.extend(all);
        b.extend(all);
        b.push(FILE_SHARED | DSET_SHARED);
        b.extend(0u64.to_le_bytes());
        b.extend(0u64.to_le_bytes());
        b.extend(all);
        b.extend(all);
        let m = decode_mappings(&with_checksum(b.clone()), 0, Sizes::default()).unwrap();
        assert_eq!(
            (m[1].source_file.as_str(), m[1].source_dataset.as_str()),
            ("f.h5", "d")
        );
        // A forward reference is malformed.
        let mut fwd = b.clone();
        let p = 1 + 8 + 1 + 7 + 32 + 1;
        fwd[p] = 1;
        assert!(matches!(
            decode_mappings(&with_checksum(fwd), 0, Sizes::default()),
            Err(Error::Malformed { .. })
        ));
        // A bad checksum, a truncation, an unknown version.
        let mut bad = with_checksum(b.clone());
        bad[3] ^= 1;
        assert!(matches!(
            decode_mappings(&bad, 0, Sizes::default()),
            Err(Error::Checksum { .. })
        ));
        let short = with_checksum(b[..b.len() - 3].to_vec());
        assert!(matches!(
            decode_mappings(&short, 0, Sizes::default()),
            Err(Error::Truncated { .. })
        ));
        let mut v2 = b.clone();
        v2[0] = 2;
        assert!(decode_mappings(&with_checksum(v2), 0, Sizes::default()).is_err());
        assert!(decode_mappings(&[1, 2], 0, Sizes::default()).is_err());
        // A huge mapping count cannot allocate.
        let mut huge = vec![0u8];
        huge.extend(u64::MAX.to_le_bytes());
        assert!(decode_mappings(&with_checksum(huge), 0, Sizes::default()).is_err());
    }
}
