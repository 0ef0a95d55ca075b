//! Structure signatures (HDF5 File Format Specification, sections II–IV): the
//! magic bytes that open the superblock and each on-disk structure, defined once
//! and used by the reader (to check) and the writer (to emit).

/// Format signature opening the superblock (II.A).
pub const SUPERBLOCK: [u8; 8] = [0x89, b'H', b'D', b'F', b'\r', b'\n', 0x1a, b'\n'];

/// Version 2 object header prefix (IV.A.1.b).
pub const OHDR: &[u8; 4] = b"OHDR";
/// Version 2 object header continuation block (IV.A.1.b).
pub const OCHK: &[u8; 4] = b"OCHK";
/// Version 1 B-tree node (III.A.1).
pub const TREE: &[u8; 4] = b"TREE";
/// Symbol table node (III.B).
pub const SNOD: &[u8; 4] = b"SNOD";
/// Local heap (III.D).
pub const HEAP: &[u8; 4] = b"HEAP";
/// Global heap collection (III.E).
pub const GCOL: &[u8; 4] = b"GCOL";
/// Fractal heap header (III.G).
pub const FRHP: &[u8; 4] = b"FRHP";
/// Fractal heap direct block (III.G).
pub const FHDB: &[u8; 4] = b"FHDB";
/// Fractal heap indirect block (III.G).
pub const FHIB: &[u8; 4] = b"FHIB";
/// Version 2 B-tree header (III.A.2).
pub const BTHD: &[u8; 4] = b"BTHD";
/// Version 2 B-tree internal node (III.A.2).
pub const BTIN: &[u8; 4] = b"BTIN";
/// Version 2 B-tree leaf node (III.A.2).
pub const BTLF: &[u8; 4] = b"BTLF";
/// Shared object header message table (III.H).
pub const SMTB: &[u8; 4] = b"SMTB";
/// Fixed array header (VII.A).
pub const FAHD: &[u8; 4] = b"FAHD";
/// Fixed array data block (VII.B).
pub const FADB: &[u8; 4] = b"FADB";
/// Extensible array header (VIII.A).
pub const EAHD: &[u8; 4] = b"EAHD";
/// Extensible array index block (VIII.B).
pub const EAIB: &[u8; 4] = b"EAIB";
/// Extensible array secondary block (VIII.C).
pub const EASB: &[u8; 4] = b"EASB";
/// Extensible array data block (VIII.D).
pub const EADB: &[u8; 4] = b"EADB";
/// Metadata cache image block (superblock extension message 0x18).
pub const MDCI: &[u8; 4] = b"MDCI";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_ascii_and_distinct() {
        let all = [
            OHDR, OCHK, TREE, SNOD, HEAP, GCOL, FRHP, FHDB, FHIB, BTHD, BTIN, BTLF, SMTB, FAHD,
            FADB, EAHD, EAIB, EASB, EADB, MDCI,
        ];
        for (i, a) in all.iter().enumerate() {
            assert!(a.iter().all(u8::is_ascii_uppercase), "{a:?}");
            assert!(all[i + 1..].iter().all(|b| b != a), "{a:?} twice");
        }
        assert_eq!(&SUPERBLOCK, b"\x89HDF\r\n\x1a\n");
    }
}
