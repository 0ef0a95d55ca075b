//! Links of symbol-table groups (a version 1 B-tree of symbol table nodes
//! and a local heap of names: libhdf5's `libver="earliest"` groups, h5py's
//! default): every change writes the group's complete new table (local heap,
//! symbol table nodes filled to the file's leaf K, B-tree levels split at its
//! internal K) past the end of allocation, then repoints the group's symbol
//! table message (one patch of its header) and, for the root group, the
//! superblock's cached copy; the old table becomes free space of the
//! session. A killed process leaves the old table or the new one.

use std::os::unix::fs::FileExt;

use super::commit::Txn;
use super::header::messages_of;
use super::Editor;
use crate::btree_v1::read_node as read_tree_node;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::messages::link::Link;
use crate::messages::symbol_table::{read_node as read_snod, SymbolTable};
use crate::messages::types;
use crate::object_header::ObjectHeader;
use crate::signature;
use crate::Object;

/// Undefined address.
const UNDEF: u64 = u64::MAX;
/// End of a local heap's free list as libhdf5 stores it (`H5HL_FREE_NULL`).
const FREE_NULL: u64 = 1;
/// Local heap header size (8-byte offsets and lengths).
const HEAP_HEADER: u64 = 32;
/// Symbol table entry size (8-byte offsets).
const ENTRY: usize = 40;
/// Deepest old B-tree walked when freeing it.
const MAX_DEPTH: u8 = 32;

/// A symbol-table group: header address, header, table.
pub(super) struct StabGroup {
    pub(super) addr: u64,
    pub(super) header: ObjectHeader,
    pub(super) stab: SymbolTable,
}

/// One link of the table being built.
struct Entry {
    name: String,
    link: Link,
}

/// The local heap's data segment being built.
#[derive(Default)]
struct Names {
    data: Vec<u8>,
}

impl Names {
    /// Store `s` NUL-terminated and 8-byte aligned; its offset.
    fn push(&mut self, s: &str) -> Result<u64> {
        if s.as_bytes().contains(&0) {
            return Err(Error::InvalidArgument(format!("name {s:?} holds a NUL")));
        }
        let at = self.data.len() as u64;
        self.data.extend_from_slice(s.as_bytes());
        self.data.push(0);
        self.data.resize(self.data.len().div_ceil(8) * 8, 0);
        Ok(at)
    }
}

/// Split `n` items into the fewest runs of at most `cap`, sizes as even as
/// possible: the run lengths.
fn runs(n: usize, cap: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let k = n.div_ceil(cap);
    (0..k).map(|i| n / k + usize::from(i < n % k)).collect()
}

/// A group B-tree node of `2 * ik` children at most, padded to its full
/// size: `keys` has one more element than `children`.
fn tree_node(
    level: u8,
    left: u64,
    right: u64,
    keys: &[u64],
    children: &[u64],
    ik: usize,
) -> Vec<u8> {
    let full = 24 + (2 * ik + 1) * 8 + 2 * ik * 8;
    let mut b = Vec::with_capacity(full);
    b.extend_from_slice(signature::TREE);
    b.push(0);
    b.push(level);
    b.extend_from_slice(&(children.len() as u16).to_le_bytes());
    b.extend_from_slice(&left.to_le_bytes());
    b.extend_from_slice(&right.to_le_bytes());
    b.extend_from_slice(&keys[0].to_le_bytes());
    for (c, k) in children.iter().zip(&keys[1..]) {
        b.extend_from_slice(&c.to_le_bytes());
        b.extend_from_slice(&k.to_le_bytes());
    }
    b.resize(full, 0);
    b
}

/// The complete table of `links` for a file with group K `(lk, ik)`, laid
/// out from `base`: the bytes, the local heap's address, the B-tree's.
fn build(links: &[Entry], lk: usize, ik: usize, base: u64) -> Result<(Vec<u8>, u64, u64)> {
    let mut names = Names::default();
    names.push("")?;
    // (name offset, header address, cache type, scratch)
    let mut rows = Vec::with_capacity(links.len());
    for e in links {
        let off = names.push(&e.name)?;
        match &e.link {
            Link::Hard(a) => rows.push((off, *a, 0u32, 0u64)),
            Link::Soft(t) => {
                let v = names.push(t)?;
                let v32 = u32::try_from(v)
                    .map_err(|_| Error::InvalidArgument("local heap over 4 GiB".into()))?;
                rows.push((off, UNDEF, 2, u64::from(v32)));
            }
            _ => {
                return Err(Error::Unsupported {
                    structure: "group",
                    offset: base,
                    what: "external or user-defined links in a symbol-table group".into(),
                })
            }
        }
    }
    let heap_at = base;
    let data_len = names.data.len() as u64;
    let mut out = Vec::new();
    out.extend_from_slice(signature::HEAP);
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&data_len.to_le_bytes());
    out.extend_from_slice(&FREE_NULL.to_le_bytes());
    out.extend_from_slice(&(heap_at + HEAP_HEADER).to_le_bytes());
    out.extend_from_slice(&names.data);
    // symbol table nodes
    let snod_size = 8 + 2 * lk * ENTRY;
    let mut level: Vec<(u64, u64)> = Vec::new(); // (address, max name offset)
    let mut i = 0usize;
    for n in runs(rows.len(), 2 * lk) {
        let at = base + out.len() as u64;
        let start = out.len();
        out.extend_from_slice(signature::SNOD);
        out.push(1);
        out.push(0);
        out.extend_from_slice(&(n as u16).to_le_bytes());
        for &(off, addr, cache, scratch) in &rows[i..i + n] {
            out.extend_from_slice(&off.to_le_bytes());
            out.extend_from_slice(&addr.to_le_bytes());
            out.extend_from_slice(&cache.to_le_bytes());
            out.extend_from_slice(&[0; 4]);
            out.extend_from_slice(&scratch.to_le_bytes());
            out.extend_from_slice(&[0; 8]);
        }
        out.resize(start + snod_size, 0);
        level.push((at, rows[i + n - 1].0));
        i += n;
    }
    // B-tree levels, bottom up, until one root
    let node_size = (24 + (4 * ik + 1) * 8) as u64;
    let mut depth = 0u8;
    loop {
        let groups = if level.is_empty() {
            vec![0]
        } else {
            runs(level.len(), 2 * ik)
        };
        let first = base + out.len() as u64;
        let count = groups.len() as u64;
        let mut next = Vec::with_capacity(groups.len());
        let mut j = 0usize;
        let mut left_key = 0u64;
        for (g, &n) in groups.iter().enumerate() {
            let at = first + g as u64 * node_size;
            let left = if g == 0 { UNDEF } else { at - node_size };
            let right = if g as u64 + 1 == count {
                UNDEF
            } else {
                at + node_size
            };
            let slice = &level[j..j + n];
            let mut keys = vec![left_key];
            keys.extend(slice.iter().map(|&(_, k)| k));
            let children: Vec<u64> = slice.iter().map(|&(a, _)| a).collect();
            out.extend(tree_node(depth, left, right, &keys, &children, ik));
            let max = *keys.last().unwrap_or(&0);
            next.push((at, max));
            left_key = max;
            j += n;
        }
        if next.len() == 1 {
            return Ok((out, heap_at, next[0].0));
        }
        level = next;
        depth = depth
            .checked_add(1)
            .ok_or_else(|| Error::InvalidArgument("group B-tree too deep".into()))?;
    }
}

impl Editor {
    /// The group at `path` when its links are in a symbol table.
    pub(super) fn stab_group(&self, path: &str) -> Result<Option<StabGroup>> {
        let Object::Group(g) = self.reader.object(path)? else {
            return Err(Error::InvalidArgument(format!("{path} is not a group")));
        };
        let h = g.header();
        let Some(m) = h.first(types::SYMBOL_TABLE) else {
            return Ok(None);
        };
        let stab = SymbolTable::decode(&mut m.cursor("symbol table"), self.reader.sizes())?;
        Ok(Some(StabGroup {
            addr: g.address(),
            header: h.clone(),
            stab,
        }))
    }

    /// The links of a symbol-table group, in name order.
    fn stab_links(&self, path: &str) -> Result<Vec<Entry>> {
        let Object::Group(g) = self.reader.object(path)? else {
            return Err(Error::InvalidArgument(format!("{path} is not a group")));
        };
        Ok(g.links()?
            .into_iter()
            .map(|(name, link)| Entry { name, link })
            .collect())
    }

    /// Blocks of the table `stab` (heap header and data, B-tree nodes,
    /// symbol table nodes), to free once it is replaced.
    fn stab_blocks(&self, stab: &SymbolTable) -> Result<Vec<(u64, u64)>> {
        let src = self.reader.source();
        let sizes = self.reader.sizes();
        let (lk, ik) = self.group_k();
        let mut out = Vec::new();
        let head = src.read("local heap", stab.heap_address, HEAP_HEADER)?;
        let mut c = Cursor::new(&head, stab.heap_address, "local heap");
        c.signature(signature::HEAP)?;
        c.skip(4)?;
        let size = c.length(8)?;
        c.skip(8)?;
        let data = c
            .addr(8)?
            .ok_or_else(|| c.malformed("undefined data segment address"))?;
        out.push((stab.heap_address, HEAP_HEADER));
        out.push((data, size));
        let node_size = (24 + (4 * ik + 1) * 8) as u64;
        let snod_size = (8 + 2 * lk * ENTRY) as u64;
        let mut stack = vec![(stab.btree_address, MAX_DEPTH)];
        let mut seen = 0usize;
        while let Some((a, budget)) = stack.pop() {
            seen += 1;
            if seen > crate::limits::MAX_TREE_NODES || budget == 0 {
                return Err(Error::malformed("group B-tree", a, "too many nodes"));
            }
            let n = read_tree_node(src, sizes, a, 0, 8)?;
            out.push((a, node_size));
            for (_, child) in n.entries {
                if n.level == 0 {
                    read_snod(src, sizes, child)?;
                    out.push((child, snod_size));
                } else {
                    stack.push((child, budget - 1));
                }
            }
        }
        Ok(out)
    }

    /// Group leaf and internal K of the file.
    fn group_k(&self) -> (usize, usize) {
        let (l, i) = self.reader.superblock().group_k;
        (usize::from(l.max(1)), usize::from(i.max(1)))
    }

    /// Replace the table of group `g` by one holding `links` (one commit).
    fn write_stab(&mut self, g: &StabGroup, mut links: Vec<Entry>, mut txn: Txn) -> Result<()> {
        links.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        let (lk, ik) = self.group_k();
        let old = self.stab_blocks(&g.stab)?;
        let (probe, _, _) = build(&links, lk, ik, self.eoa)?;
        let at = self.alloc(probe.len() as u64)?;
        let (bytes, heap, btree) = build(&links, lk, ik, at)?;
        txn.writes.push((at, bytes));
        let mut msgs = messages_of(&g.header);
        for m in msgs.iter_mut() {
            if m.kind == types::SYMBOL_TABLE {
                let mut b = btree.to_le_bytes().to_vec();
                b.extend_from_slice(&heap.to_le_bytes());
                m.body = b;
            }
        }
        self.rewrite_header(g.addr, &g.header, msgs, None, &mut txn)?;
        self.root_cache_patch(g.addr, btree, heap, &mut txn)?;
        txn.frees.extend(old);
        self.commit(txn)
    }

    /// A version 0/1 superblock caches the root group's table in its root
    /// entry: repointed after the header (libhdf5 checks the header's table
    /// first and falls back on the cache only when it is invalid).
    fn root_cache_patch(&self, addr: u64, btree: u64, heap: u64, txn: &mut Txn) -> Result<()> {
        let sb = self.reader.superblock();
        if sb.version > 1 || sb.root_address != addr {
            return Ok(());
        }
        // root entry: after the end-of-file and driver addresses
        let entry = self.sb.at + self.sb.eoa_field + 16;
        let mut raw = [0u8; 24];
        self.fd
            .read_exact_at(&mut raw, entry)
            .map_err(|e| Error::io("edit", e))?;
        let cache = u32::from_le_bytes([raw[16], raw[17], raw[18], raw[19]]);
        if cache != 1 {
            return Ok(());
        }
        let mut b = btree.to_le_bytes().to_vec();
        b.extend_from_slice(&heap.to_le_bytes());
        // patches are relative to the base address
        let rel = (entry + 24)
            .checked_sub(self.sb.base)
            .ok_or_else(|| Error::malformed("superblock", entry, "before the base address"))?;
        txn.patches.push((rel, b));
        Ok(())
    }

    /// Add link `name` → `link` to symbol-table group `g` (one commit).
    pub(super) fn stab_add(
        &mut self,
        parent: &str,
        g: &StabGroup,
        name: &str,
        link: Link,
        txn: Txn,
    ) -> Result<()> {
        let mut links = self.stab_links(parent)?;
        if links.iter().any(|e| e.name == name) {
            return Err(Error::InvalidArgument(format!(
                "{parent}: link {name:?} already exists"
            )));
        }
        links.push(Entry {
            name: name.to_string(),
            link,
        });
        self.write_stab(g, links, txn)
    }

    /// Remove link `name` of symbol-table group `g` (one commit); the link.
    pub(super) fn stab_remove(&mut self, parent: &str, g: &StabGroup, name: &str) -> Result<Link> {
        let mut links = self.stab_links(parent)?;
        let i = links
            .iter()
            .position(|e| e.name == name)
            .ok_or_else(|| Error::NotFound(format!("{parent}: no link {name:?}")))?;
        let gone = links.remove(i).link;
        self.write_stab(g, links, Txn::default())?;
        Ok(gone)
    }

    /// Rename link `from` of symbol-table group `g` to `to` (one commit).
    pub(super) fn stab_rename(
        &mut self,
        parent: &str,
        g: &StabGroup,
        from: &str,
        to: &str,
    ) -> Result<()> {
        let mut links = self.stab_links(parent)?;
        if links.iter().any(|e| e.name == to) {
            return Err(Error::InvalidArgument(format!(
                "{parent}/{to} already exists"
            )));
        }
        let e = links
            .iter_mut()
            .find(|e| e.name == from)
            .ok_or_else(|| Error::NotFound(format!("{parent}: no link {from:?}")))?;
        e.name = to.to_string();
        self.write_stab(g, links, Txn::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::symbol_table::{EntryCache, SymbolTableEntry};
    use crate::source::MemSource;
    use crate::Sizes;

    #[test]
    fn runs_are_even() {
        assert_eq!(runs(0, 8), Vec::<usize>::new());
        assert_eq!(runs(8, 8), vec![8]);
        assert_eq!(runs(9, 8), vec![5, 4]);
        assert_eq!(runs(17, 8), vec![6, 6, 5]);
    }

    #[test]
    fn built_table_reads_back_through_two_levels() {
        let links: Vec<Entry> = (0..300)
            .map(|i| Entry {
                name: format!("n{i:04}"),
                link: if i % 3 == 0 {
                    Link::Soft(format!("/t{i}"))
                } else {
                    Link::Hard(0x1000 + i)
                },
            })
            .collect();
        // K = (4, 16): 300 entries in 38 nodes of 8 at most, two levels
        let base = 64u64;
        let (bytes, heap, btree) = build(&links, 4, 16, base).unwrap();
        let mut file = vec![0u8; base as usize];
        file.extend(bytes);
        let src = MemSource::new(file);
        let sizes = Sizes::default();
        let h = crate::local_heap::LocalHeap::read(&src, sizes, heap).unwrap();
        let root = read_tree_node(&src, sizes, btree, 0, 8).unwrap();
        assert_eq!(root.level, 1);
        let mut names = Vec::new();
        crate::btree_v1::group_nodes(&src, sizes, btree, &mut |snod| {
            for e in read_snod(&src, sizes, snod)? {
                let n = h.string(e.name_offset)?;
                match e.cache {
                    EntryCache::SoftLink(o) => {
                        assert_eq!(
                            h.string(u64::from(o))?,
                            format!("/t{}", &n[1..].parse::<u32>().unwrap())
                        )
                    }
                    _ => assert_eq!(
                        e.header_address,
                        Some(0x1000 + n[1..].parse::<u64>().unwrap())
                    ),
                }
                names.push(n);
            }
            Ok(())
        })
        .unwrap();
        let want: Vec<String> = links.iter().map(|e| e.name.clone()).collect();
        assert_eq!(names, want);
        assert_eq!(SymbolTableEntry::encoded_size(sizes), ENTRY);
    }

    #[test]
    fn empty_table_is_one_empty_leaf() {
        let (bytes, heap, btree) = build(&[], 4, 16, 0).unwrap();
        let src = MemSource::new(bytes);
        let n = read_tree_node(&src, Sizes::default(), btree, 0, 8).unwrap();
        assert!(n.entries.is_empty());
        assert_eq!(heap, 0);
    }
}
