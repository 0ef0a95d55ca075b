//! Links of a group in all three storages (HDF5 File Format Specification
//! IV.A.2.g/c/r, III.A.2 record types 5 and 6): symbol-table entries of an
//! old-style group, compact link messages, and dense links in a fractal heap
//! indexed by a v2 B-tree.

use crate::btree_v1;
use crate::btree_v2::BTreeV2;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::file_core::File;
use crate::fractal_heap::FractalHeap;
use crate::local_heap::LocalHeap;
use crate::messages::link_info::LinkInfo;
use crate::messages::symbol_table::{read_node, EntryCache, SymbolTable};
use crate::{limits, Sizes};

pub use crate::messages::link::{Link, LinkMessage};

/// `parent/name`, with a single slash.
pub fn join_path(parent: &str, name: &str) -> String {
    if parent.ends_with('/') {
        format!("{parent}{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// Every link of an old-style group, in B-tree (name) order.
pub fn symbol_table_links(file: &File, stab: &SymbolTable) -> Result<Vec<LinkMessage>> {
    let src = file.source();
    let sizes = file.sizes();
    let heap = LocalHeap::read(src, sizes, stab.heap_address)?;
    let mut out = Vec::new();
    let mut nodes = 0usize;
    btree_v1::group_nodes(src, sizes, stab.btree_address, &mut |snod| {
        nodes += 1;
        if nodes > limits::MAX_TREE_NODES {
            return Err(Error::Limit {
                structure: "group B-tree",
                offset: snod,
                what: "symbol table nodes",
                value: nodes as u64,
                limit: limits::MAX_TREE_NODES as u64,
            });
        }
        for e in read_node(src, sizes, snod)? {
            let name = heap.string(e.name_offset)?;
            let link = match e.cache {
                EntryCache::SoftLink(off) => Link::Soft(heap.string(u64::from(off))?),
                _ => Link::Hard(e.header_address.ok_or_else(|| {
                    Error::malformed("symbol table entry", snod, "undefined object address")
                })?),
            };
            out.push(LinkMessage {
                name,
                link,
                creation_order: None,
            });
        }
        Ok(())
    })?;
    Ok(out)
}

/// Every link of a dense group, in name-hash order (by creation order when
/// `by_order` and the group indexes it).
pub fn dense_links(file: &File, info: &LinkInfo, by_order: bool) -> Result<Vec<LinkMessage>> {
    let (Some(heap_addr), Some(name_index)) = (info.heap_address, info.name_index) else {
        return Ok(Vec::new());
    };
    let src = file.source();
    let sizes = file.sizes();
    let heap = FractalHeap::open(src, sizes, heap_addr)?;
    let (tree_addr, skip) = match (by_order, info.order_index) {
        (true, Some(a)) => (a, 8usize),
        _ => (name_index, 4usize),
    };
    let tree = BTreeV2::open(src, sizes, tree_addr)?;
    let mut out = Vec::new();
    tree.for_each_record(src, sizes, &mut |rec| {
        let id = rec
            .get(skip..)
            .ok_or_else(|| Error::malformed("link name record", tree_addr, "record too short"))?;
        let bytes = heap.object(src, sizes, id)?;
        out.push(decode_link(&bytes, heap_addr, sizes)?);
        Ok(())
    })?;
    Ok(out)
}

fn decode_link(bytes: &[u8], at: u64, sizes: Sizes) -> Result<LinkMessage> {
    LinkMessage::decode(&mut Cursor::new(bytes, at, "dense link message"), sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins() {
        assert_eq!(join_path("/", "a"), "/a");
        assert_eq!(join_path("/a", "b"), "/a/b");
    }
}
