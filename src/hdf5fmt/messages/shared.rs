//! Shared message encoding (HDF5 File Format Specification IV.A.2, "Shared
//! Messages", versions 1–3) and the shared object header message table
//! (`SMTB`, III.E/IV.A.2.p) that locates messages kept in the shared-message heap.

use crate::cursor::Cursor;
use crate::encode::put_var;
use crate::error::Result;
use crate::signature;
use crate::Sizes;

/// Where a shared message's real body lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SharedRef {
    /// In the object header at this address (a committed datatype, for example).
    ObjectHeader(u64),
    /// In the shared-message fractal heap, under this heap ID.
    Heap([u8; 8]),
}

impl SharedRef {
    /// Decode a shared message body (versions 1–3): an object header address, or from version 3 a
    /// shared-message heap ID (type 1); an undefined address is an error.
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let version = c.u8()?;
        match version {
            1 => {
                // flags, 6 reserved bytes, then a symbol-table-entry-like record
                // whose first field (a name offset) is unused.
                c.skip(1 + 6 + usize::from(sizes.offset))?;
                Ok(SharedRef::ObjectHeader(addr(c, sizes)?))
            }
            2 => {
                c.skip(1)?;
                Ok(SharedRef::ObjectHeader(addr(c, sizes)?))
            }
            3 => match c.u8()? {
                1 => Ok(SharedRef::Heap(c.array()?)),
                2 | 3 => Ok(SharedRef::ObjectHeader(addr(c, sizes)?)),
                t => Err(c.malformed(format!("shared message type {t}"))),
            },
            v => Err(c.unsupported(format!("shared message version {v}"))),
        }
    }
}

impl SharedRef {
    /// Encode as a version 3 shared message: type 2 (in an object header, e.g.
    /// a committed datatype) or type 1 (a shared-message heap ID).
    pub fn encode(&self, sizes: Sizes) -> Vec<u8> {
        match self {
            SharedRef::ObjectHeader(a) => {
                let mut out = vec![3, 2];
                put_var(&mut out, *a, usize::from(sizes.offset));
                out
            }
            SharedRef::Heap(id) => {
                let mut out = vec![3, 1];
                out.extend_from_slice(id);
                out
            }
        }
    }
}

fn addr(c: &mut Cursor<'_>, sizes: Sizes) -> Result<u64> {
    c.addr(sizes.offset)?
        .ok_or_else(|| c.malformed("shared message at undefined address"))
}

/// One index of the shared object header message table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SohmIndex {
    /// Bit `t` set: messages of type `t` are shared through this index.
    pub type_flags: u16,
    /// Fractal heap holding the shared messages of this index.
    pub heap_address: Option<u64>,
}

/// The shared object header message table.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SohmTable {
    /// The table's indexes, in file order (as many as the superblock extension's message says).
    pub indexes: Vec<SohmIndex>,
}

impl SohmTable {
    /// The heap that holds shared messages of type `mtype`.
    pub fn heap_for(&self, mtype: u16) -> Option<u64> {
        self.indexes
            .iter()
            .find(|i| mtype < 16 && i.type_flags & (1 << mtype) != 0)
            .and_then(|i| i.heap_address)
    }

    /// Decode the `SMTB` block (`nindexes` from the superblock-extension message).
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes, nindexes: usize) -> Result<Self> {
        let start = c.pos();
        c.signature(signature::SMTB)?;
        let mut indexes = Vec::with_capacity(nindexes.min(8));
        for _ in 0..nindexes {
            let _version = c.u8()?;
            let _index_type = c.u8()?;
            let type_flags = c.u16()?;
            let _min_size = c.u32()?;
            let _list_max = c.u16()?;
            let _btree_min = c.u16()?;
            let _count = c.u16()?;
            let _index_addr = c.addr(sizes.offset)?;
            let heap_address = c.addr(sizes.offset)?;
            indexes.push(SohmIndex {
                type_flags,
                heap_address,
            });
        }
        let end = c.pos();
        let stored = c.u32()?;
        let covered = c.data().get(start..end).unwrap_or(&[]);
        let computed = crate::checksum::metadata_checksum(covered);
        if stored != computed {
            return Err(crate::Error::Checksum {
                structure: "shared message table",
                offset: c.base(),
                stored,
                computed,
            });
        }
        Ok(SohmTable { indexes })
    }
}

/// The shared message table message in the superblock extension: (address, number of indexes).
pub fn decode_table_message(c: &mut Cursor<'_>, sizes: Sizes) -> Result<(u64, u8)> {
    let _version = c.u8()?;
    let a = c
        .addr(sizes.offset)?
        .ok_or_else(|| c.malformed("undefined shared message table address"))?;
    Ok((a, c.u8()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_v3_round_trip() {
        let s = Sizes::default();
        for r in [
            SharedRef::ObjectHeader(0x1234),
            SharedRef::Heap([1, 2, 3, 4, 5, 6, 7, 8]),
        ] {
            let b = r.encode(s);
            assert_eq!(
                SharedRef::decode(&mut Cursor::new(&b, 0, "sh"), s).unwrap(),
                r
            );
        }
        assert_eq!(SharedRef::ObjectHeader(0x30).encode(s)[..3], [3, 2, 0x30]);
    }

    fn dec(b: &[u8]) -> Result<SharedRef> {
        SharedRef::decode(&mut Cursor::new(b, 0, "shared"), Sizes::default())
    }

    #[test]
    fn versions() {
        let mut b = vec![1u8, 0, 0, 0, 0, 0, 0, 0];
        b.extend_from_slice(&8u64.to_le_bytes());
        b.extend_from_slice(&0x40u64.to_le_bytes());
        assert_eq!(dec(&b).unwrap(), SharedRef::ObjectHeader(0x40));
        let mut b = vec![2u8, 0];
        b.extend_from_slice(&0x50u64.to_le_bytes());
        assert_eq!(dec(&b).unwrap(), SharedRef::ObjectHeader(0x50));
        let b = [3u8, 1, 1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(dec(&b).unwrap(), SharedRef::Heap([1, 2, 3, 4, 5, 6, 7, 8]));
        assert!(dec(&[3, 9]).is_err());
        assert!(dec(&[4]).is_err());
        assert!(dec(&[3, 1, 0]).is_err());
    }

    #[test]
    fn table() {
        let mut b = b"SMTB".to_vec();
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&(1u16 << 3).to_le_bytes());
        b.extend_from_slice(&[0; 4 + 2 + 2 + 2]);
        b.extend_from_slice(&0x10u64.to_le_bytes());
        b.extend_from_slice(&0x20u64.to_le_bytes());
        let ck = crate::checksum::metadata_checksum(&b);
        b.extend_from_slice(&ck.to_le_bytes());
        let t = SohmTable::decode(&mut Cursor::new(&b, 0, "t"), Sizes::default(), 1).unwrap();
        assert_eq!(t.heap_for(3), Some(0x20));
        assert_eq!(t.heap_for(1), None);
        let n = b.len();
        b[n - 1] ^= 1;
        assert!(SohmTable::decode(&mut Cursor::new(&b, 0, "t"), Sizes::default(), 1).is_err());
    }
}
