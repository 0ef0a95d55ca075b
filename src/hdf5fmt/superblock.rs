//! Superblock (HDF5 File Format Specification II.A), versions 0–3: found at
//! offset 0, 512, 1024, 2048, ...; gives the sizes of offsets and lengths, the
//! base address and the root group.

use crate::checksum::metadata_checksum;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::messages::symbol_table::{EntryCache, SymbolTable, SymbolTableEntry};
use crate::source::Source;
use crate::Sizes;

/// The format signature that starts every superblock.
pub const SIGNATURE: [u8; 8] = crate::signature::SUPERBLOCK;

/// A decoded superblock. Addresses are relative to `base_address`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Superblock {
    /// Superblock version (0–3).
    pub version: u8,
    /// Absolute file offset where the signature was found (the userblock size).
    pub offset: u64,
    /// Size of offsets (addresses) and of lengths in bytes, each 2, 4 or 8.
    pub sizes: Sizes,
    /// Absolute file offset that all other addresses are relative to.
    pub base_address: u64,
    /// End of file address: the file's end as the writer recorded it (relative to the base
    /// address); `u64::MAX` when stored undefined.
    pub eof_address: u64,
    /// File consistency flags (4 bytes in versions 0 and 1, 1 byte in versions 2 and 3).
    pub flags: u32,
    /// Object header address of the root group.
    pub root_address: u64,
    /// v0/v1: the root entry's cached B-tree and heap addresses.
    pub root_cache: Option<SymbolTable>,
    /// v2/v3: the superblock extension's object header address.
    pub extension: Option<u64>,
    /// v0/v1: group leaf and internal node K.
    pub group_k: (u16, u16),
}

impl Superblock {
    /// Find and decode the superblock of `src`.
    pub fn find(src: &dyn Source) -> Result<Self> {
        let len = src.len();
        let mut at = 0u64;
        while at.saturating_add(8) <= len {
            let sig = src.read("superblock", at, 8)?;
            if *sig == SIGNATURE {
                return Self::decode_at(src, at);
            }
            at = if at == 0 { 512 } else { at.saturating_mul(2) };
        }
        Err(Error::malformed(
            "superblock",
            0,
            "no HDF5 signature found (not an HDF5 file)",
        ))
    }

    /// `Err(Error::TruncatedFile)` when a file of `len` bytes ends before the
    /// end-of-file address stored here. The test is libhdf5's (`H5F__super_read`):
    /// the stored address against the file's whole length.
    pub fn check_length(&self, len: u64) -> Result<()> {
        if self.eof_address != u64::MAX && len < self.eof_address {
            return Err(Error::TruncatedFile {
                eof: len.saturating_sub(self.base_address),
                base: self.base_address,
                stored_eof: self.eof_address,
                len,
            });
        }
        Ok(())
    }

    fn decode_at(src: &dyn Source, at: u64) -> Result<Self> {
        let bytes = src.read_upto("superblock", at, 256)?;
        let mut c = Cursor::new(&bytes, at, "superblock");
        c.skip(8)?;
        let version = c.u8()?;
        match version {
            0 | 1 => decode_v0(c, version, at),
            2 | 3 => decode_v2(c, version, at),
            v => Err(c.unsupported(format!("superblock version {v}"))),
        }
    }
}

fn check_sizes(c: &Cursor<'_>, offset: u8, length: u8) -> Result<Sizes> {
    for s in [offset, length] {
        if ![2u8, 4, 8].contains(&s) {
            return Err(c.malformed(format!("size of offsets/lengths {s}")));
        }
    }
    Ok(Sizes { offset, length })
}

fn decode_v0(mut c: Cursor<'_>, version: u8, at: u64) -> Result<Superblock> {
    c.skip(3)?; // free-space, root symbol table and reserved
    c.skip(1)?; // shared header version
    let so = c.u8()?;
    let sl = c.u8()?;
    c.skip(1)?;
    let sizes = check_sizes(&c, so, sl)?;
    let leaf_k = c.u16()?;
    let internal_k = c.u16()?;
    let flags = c.u32()?;
    if version == 1 {
        c.skip(4)?;
    }
    let _base = c.addr(sizes.offset)?;
    let _free = c.addr(sizes.offset)?;
    let eof = c.addr(sizes.offset)?.unwrap_or(u64::MAX);
    let _driver = c.addr(sizes.offset)?;
    let root = SymbolTableEntry::decode(&mut c, sizes)?;
    let root_address = root
        .header_address
        .ok_or_else(|| c.malformed("undefined root group address"))?;
    let root_cache = match root.cache {
        EntryCache::Group(t) => Some(t),
        _ => None,
    };
    Ok(Superblock {
        version,
        offset: at,
        sizes,
        base_address: at,
        eof_address: eof,
        flags,
        root_address,
        root_cache,
        extension: None,
        group_k: (leaf_k, internal_k),
    })
}

fn decode_v2(mut c: Cursor<'_>, version: u8, at: u64) -> Result<Superblock> {
    let so = c.u8()?;
    let sl = c.u8()?;
    let sizes = check_sizes(&c, so, sl)?;
    let flags = u32::from(c.u8()?);
    let _base = c.addr(sizes.offset)?;
    let extension = c.addr(sizes.offset)?;
    let eof = c.addr(sizes.offset)?.unwrap_or(u64::MAX);
    let root_address = c
        .addr(sizes.offset)?
        .ok_or_else(|| c.malformed("undefined root group address"))?;
    let end = c.pos();
    let stored = c.u32()?;
    let computed = metadata_checksum(c.data().get(..end).unwrap_or(&[]));
    if stored != computed {
        return Err(Error::Checksum {
            structure: "superblock",
            offset: at,
            stored,
            computed,
        });
    }
    Ok(Superblock {
        version,
        offset: at,
        sizes,
        base_address: at,
        eof_address: eof,
        flags,
        root_address,
        root_cache: None,
        extension,
        group_k: (4, 16),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemSource;

    fn v2(root: u64) -> Vec<u8> {
        let mut b = SIGNATURE.to_vec();
        b.extend_from_slice(&[2, 8, 8, 0]);
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        b.extend_from_slice(&1000u64.to_le_bytes());
        b.extend_from_slice(&root.to_le_bytes());
        let ck = metadata_checksum(&b);
        b.extend_from_slice(&ck.to_le_bytes());
        b
    }

    #[test]
    fn v2_at_512() {
        let mut f = vec![0u8; 512];
        f.extend(v2(48));
        let sb = Superblock::find(&MemSource::new(f.clone())).unwrap();
        assert_eq!(sb.version, 2);
        assert_eq!(sb.offset, 512);
        assert_eq!(sb.base_address, 512);
        assert_eq!(sb.root_address, 48);
        assert_eq!(sb.extension, None);
        let n = f.len();
        f[n - 5] ^= 1;
        assert!(matches!(
            Superblock::find(&MemSource::new(f)),
            Err(Error::Checksum { .. })
        ));
    }

    #[test]
    fn v0_root_entry() {
        let mut b = SIGNATURE.to_vec();
        b.extend_from_slice(&[0, 0, 0, 0, 0, 8, 8, 0, 4, 0, 16, 0, 0, 0, 0, 0]);
        for a in [0u64, u64::MAX, 2048, u64::MAX] {
            b.extend_from_slice(&a.to_le_bytes());
        }
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&96u64.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&136u64.to_le_bytes());
        b.extend_from_slice(&680u64.to_le_bytes());
        let sb = Superblock::find(&MemSource::new(b.clone())).unwrap();
        assert_eq!(sb.root_address, 96);
        assert_eq!(sb.group_k, (4, 16));
        assert_eq!(
            sb.root_cache,
            Some(SymbolTable {
                btree_address: 136,
                heap_address: 680
            })
        );
        // truncated
        assert!(Superblock::find(&MemSource::new(b[..60].to_vec())).is_err());
        // bad sizes
        let mut bad = b.clone();
        bad[13] = 3;
        assert!(Superblock::find(&MemSource::new(bad)).is_err());
    }

    #[test]
    fn not_hdf5() {
        assert!(Superblock::find(&MemSource::new(vec![0u8; 5000])).is_err());
        assert!(Superblock::find(&MemSource::new(Vec::new())).is_err());
    }
}
