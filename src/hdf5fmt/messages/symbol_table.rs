//! Old-style groups: the symbol table message (HDF5 File Format Specification
//! IV.A.2.r), the symbol table entry (III.C) and the symbol table node `SNOD`
//! (III.B) that the group's v1 B-tree points at.

use crate::cursor::Cursor;
use crate::error::Result;
use crate::signature;
use crate::source::Source;
use crate::Sizes;

/// A symbol table message: the group's v1 B-tree and local heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SymbolTable {
    /// Address of the v1 B-tree (type 0, group nodes) holding the group's symbol table nodes.
    pub btree_address: u64,
    /// Address of the local heap holding the group's link names.
    pub heap_address: u64,
}

impl SymbolTable {
    /// Decode a symbol table message body: two addresses, neither of which may be undefined.
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let btree_address = c
            .addr(sizes.offset)?
            .ok_or_else(|| c.malformed("undefined group B-tree address"))?;
        let heap_address = c
            .addr(sizes.offset)?
            .ok_or_else(|| c.malformed("undefined group heap address"))?;
        Ok(SymbolTable {
            btree_address,
            heap_address,
        })
    }
}

/// What a symbol table entry caches in its scratch pad.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryCache {
    /// Cache type 0: nothing cached (or a group cache whose addresses are undefined, or an unknown
    /// cache type).
    None,
    /// The entry is a group: its B-tree and local heap addresses.
    Group(SymbolTable),
    /// The entry is a soft link whose value sits at this local-heap offset.
    SoftLink(u32),
}

/// A symbol table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SymbolTableEntry {
    /// Offset of the link name in the group's local heap.
    pub name_offset: u64,
    /// Object header address (undefined for soft links).
    pub header_address: Option<u64>,
    /// What the scratch-pad space caches for this entry (cache type 1: group, 2: soft link).
    pub cache: EntryCache,
}

impl SymbolTableEntry {
    /// Size in bytes of one encoded entry.
    pub fn encoded_size(sizes: Sizes) -> usize {
        2 * usize::from(sizes.offset) + 24
    }

    /// Decode one symbol table entry ([`Self::encoded_size`] bytes): name offset, object header
    /// address, cache type, 4 reserved bytes and the 16-byte scratch pad.
    pub fn decode(c: &mut Cursor<'_>, sizes: Sizes) -> Result<Self> {
        let name_offset = c.length(sizes.offset)?;
        let header_address = c.addr(sizes.offset)?;
        let cache_type = c.u32()?;
        c.skip(4)?;
        let mut scratch = c.sub(16)?;
        let cache = match cache_type {
            1 => {
                let b = scratch.addr(sizes.offset)?;
                let h = scratch.addr(sizes.offset)?;
                match (b, h) {
                    (Some(btree_address), Some(heap_address)) => EntryCache::Group(SymbolTable {
                        btree_address,
                        heap_address,
                    }),
                    _ => EntryCache::None,
                }
            }
            2 => EntryCache::SoftLink(scratch.u32()?),
            _ => EntryCache::None,
        };
        Ok(SymbolTableEntry {
            name_offset,
            header_address,
            cache,
        })
    }
}

/// Parse the symbol table node (`SNOD`) at `address`: its used entries.
pub fn read_node(src: &dyn Source, sizes: Sizes, address: u64) -> Result<Vec<SymbolTableEntry>> {
    let head = src.read("symbol table node", address, 8)?;
    let mut c = Cursor::new(&head, address, "symbol table node");
    c.signature(signature::SNOD)?;
    let version = c.u8()?;
    if version != 1 {
        return Err(c.unsupported(format!("symbol table node version {version}")));
    }
    c.skip(1)?;
    let n = u64::from(c.u16()?);
    let esize = SymbolTableEntry::encoded_size(sizes) as u64;
    let at = crate::cursor::add(address, 8, "symbol table node", address, "entries")?;
    let body = src.read("symbol table node", at, n * esize)?;
    let mut c = Cursor::new(&body, at, "symbol table node");
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        out.push(SymbolTableEntry::decode(&mut c, sizes)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemSource;

    fn entry(name_off: u64, addr: u64, cache: u32) -> Vec<u8> {
        let mut b = name_off.to_le_bytes().to_vec();
        b.extend_from_slice(&addr.to_le_bytes());
        b.extend_from_slice(&cache.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&0x11u64.to_le_bytes());
        b.extend_from_slice(&0x22u64.to_le_bytes());
        b
    }

    #[test]
    fn node_with_two_entries() {
        let mut b = b"SNOD\x01\x00\x02\x00".to_vec();
        b.extend(entry(8, 0x100, 0));
        b.extend(entry(16, 0x200, 1));
        b.extend(entry(0, 0, 0)); // unused slot
        let src = MemSource::new(b);
        let e = read_node(&src, Sizes::default(), 0).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].name_offset, 8);
        assert_eq!(e[1].header_address, Some(0x200));
        assert_eq!(
            e[1].cache,
            EntryCache::Group(SymbolTable {
                btree_address: 0x11,
                heap_address: 0x22
            })
        );
    }

    #[test]
    fn bad_nodes() {
        let src = MemSource::new(b"SNOX\x01\x00\x01\x00".to_vec());
        assert!(read_node(&src, Sizes::default(), 0).is_err());
        let src = MemSource::new(b"SNOD\x01\x00\xff\xff".to_vec());
        assert!(read_node(&src, Sizes::default(), 0).is_err());
        let src = MemSource::new(b"SNOD".to_vec());
        assert!(read_node(&src, Sizes::default(), 0).is_err());
    }
}
