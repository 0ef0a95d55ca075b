//! Version 1 B-trees (HDF5 File Format Specification III.A.1): group nodes
//! (type 0, keys are local-heap name offsets) and raw-data chunk nodes (type 1,
//! keys are chunk size, filter mask and the chunk's element offsets).
//!
//! A node (`TREE`) holds `entries` children between `entries + 1` keys; children
//! of a level-0 node are symbol-table nodes (type 0) or chunk addresses (type 1),
//! children of higher levels are nodes one level down.

use std::collections::HashSet;

use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::limits;
use crate::signature;
use crate::source::Source;
use crate::Sizes;

const NODE: &str = "v1 B-tree node";

/// One parsed node: its level and, per child, the raw left key and the child address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeV1 {
    /// Node type: 0 for group nodes, 1 for raw data chunk nodes (checked against the caller's
    /// expectation).
    pub node_type: u8,
    /// Node level: 0 for leaf nodes (children are symbol table nodes or chunks), higher for
    /// internal nodes.
    pub level: u8,
    /// `(left key bytes, child address)` per entry.
    pub entries: Vec<(Vec<u8>, u64)>,
}

/// Read the node at `address`, expecting `node_type` and keys of `key_size` bytes.
pub fn read_node(
    src: &dyn Source,
    sizes: Sizes,
    address: u64,
    node_type: u8,
    key_size: usize,
) -> Result<NodeV1> {
    let o = usize::from(sizes.offset);
    let head_len = 8 + 2 * o;
    let head = src.read(NODE, address, head_len as u64)?;
    let mut c = Cursor::new(&head, address, NODE);
    c.signature(signature::TREE)?;
    let ty = c.u8()?;
    if ty != node_type {
        return Err(c.malformed(format!("node type {ty}, expected {node_type}")));
    }
    let level = c.u8()?;
    let n = usize::from(c.u16()?);
    // Body: keys and children interleaved, one key more than children.
    let body_len = (n + 1)
        .checked_mul(key_size)
        .and_then(|k| n.checked_mul(o).and_then(|ch| k.checked_add(ch)))
        .ok_or(Error::Overflow {
            structure: NODE,
            offset: address,
            what: "node size",
        })?;
    let body_at = address
        .checked_add(head_len as u64)
        .ok_or(Error::Overflow {
            structure: NODE,
            offset: address,
            what: "node body address",
        })?;
    let body = src.read(NODE, body_at, body_len as u64)?;
    let mut c = Cursor::new(&body, body_at, NODE);
    let mut entries = Vec::with_capacity(n);
    for _ in 0..n {
        let key = c.bytes(key_size)?.to_vec();
        let child = c
            .addr(sizes.offset)?
            .ok_or_else(|| c.malformed("undefined child address"))?;
        entries.push((key, child));
    }
    Ok(NodeV1 {
        node_type,
        level,
        entries,
    })
}

/// Depth-first walk over the level-0 entries of the tree rooted at `address`.
fn walk(
    src: &dyn Source,
    sizes: Sizes,
    address: u64,
    node_type: u8,
    key_size: usize,
    f: &mut dyn FnMut(&[u8], u64) -> Result<()>,
) -> Result<()> {
    let mut visited = HashSet::new();
    let mut nodes = 0usize;
    // Stack of (address, expected level); None = the root, any level.
    let mut stack: Vec<(u64, Option<u8>)> = vec![(address, None)];
    while let Some((addr, expect)) = stack.pop() {
        if !visited.insert(addr) {
            return Err(Error::Cycle {
                structure: NODE,
                offset: addr,
            });
        }
        nodes += 1;
        if nodes > limits::MAX_TREE_NODES {
            return Err(Error::Limit {
                structure: NODE,
                offset: addr,
                what: "nodes visited",
                value: nodes as u64,
                limit: limits::MAX_TREE_NODES as u64,
            });
        }
        let node = read_node(src, sizes, addr, node_type, key_size)?;
        if let Some(l) = expect {
            if node.level != l {
                return Err(Error::malformed(
                    NODE,
                    addr,
                    format!("level {}, expected {l}", node.level),
                ));
            }
        } else if usize::from(node.level) > limits::MAX_TREE_DEPTH {
            return Err(Error::Limit {
                structure: NODE,
                offset: addr,
                what: "tree depth",
                value: u64::from(node.level),
                limit: limits::MAX_TREE_DEPTH as u64,
            });
        }
        if node.level == 0 {
            for (key, child) in &node.entries {
                f(key, *child)?;
            }
        } else {
            // A host-driven source gets every child's missing bytes in one
            // round (not one round per child): read them all once first.
            if src.wants_prefetch() {
                let mut need = None;
                for (_, child) in &node.entries {
                    match read_node(src, sizes, *child, node_type, key_size) {
                        Err(e) if e.needed_ranges().is_some() => {
                            need.get_or_insert(e);
                        }
                        // Other errors are reported when the child is visited.
                        _ => {}
                    }
                }
                if let Some(e) = need {
                    return Err(e);
                }
            }
            // Push right to left so the leftmost child is visited first.
            for (_, child) in node.entries.iter().rev() {
                stack.push((*child, Some(node.level - 1)));
            }
        }
    }
    Ok(())
}

/// Visit the address of every symbol-table node (`SNOD`) under the group B-tree
/// rooted at `address`, left to right.
pub fn group_nodes(
    src: &dyn Source,
    sizes: Sizes,
    address: u64,
    f: &mut dyn FnMut(u64) -> Result<()>,
) -> Result<()> {
    walk(
        src,
        sizes,
        address,
        0,
        usize::from(sizes.length),
        &mut |_, child| f(child),
    )
}

/// The key of one raw-data chunk (node type 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkKeyV1 {
    /// Stored size of the chunk in bytes.
    pub size: u32,
    /// Filter mask of the chunk.
    pub filter_mask: u32,
    /// Element offsets of the chunk, `ndims` of them (the layout message's
    /// dimensionality, i.e. the dataspace rank plus the element-size dimension).
    pub offsets: Vec<u64>,
}

/// Parse a type-1 key of `ndims` offsets.
pub fn parse_chunk_key(key: &[u8], ndims: usize, at: u64) -> Result<ChunkKeyV1> {
    let mut c = Cursor::new(key, at, NODE);
    let size = c.u32()?;
    let filter_mask = c.u32()?;
    let mut offsets = Vec::with_capacity(ndims.min(limits::MAX_RANK + 1));
    for _ in 0..ndims {
        offsets.push(c.u64()?);
    }
    Ok(ChunkKeyV1 {
        size,
        filter_mask,
        offsets,
    })
}

/// Visit every chunk of the raw-data B-tree rooted at `address` as
/// `(key, chunk address)`, in key order. `ndims` counts the element-size dimension.
pub fn chunk_entries(
    src: &dyn Source,
    sizes: Sizes,
    address: u64,
    ndims: usize,
    f: &mut dyn FnMut(ChunkKeyV1, u64) -> Result<()>,
) -> Result<()> {
    if ndims == 0 || ndims > limits::MAX_RANK + 1 {
        return Err(Error::malformed(
            NODE,
            address,
            format!("chunk key of {ndims} dimensions"),
        ));
    }
    let key_size = 8 + 8 * ndims;
    walk(src, sizes, address, 1, key_size, &mut |key, child| {
        f(parse_chunk_key(key, ndims, address)?, child)
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::source::MemSource;

    /// A type-1 node with 8-byte addresses; `entries` are (key, child).
    pub(crate) fn chunk_node(level: u8, entries: &[(ChunkKeyV1, u64)], ndims: usize) -> Vec<u8> {
        let mut v = b"TREE".to_vec();
        v.push(1);
        v.push(level);
        v.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        v.extend_from_slice(&u64::MAX.to_le_bytes());
        v.extend_from_slice(&u64::MAX.to_le_bytes());
        let key = |k: &ChunkKeyV1, v: &mut Vec<u8>| {
            v.extend_from_slice(&k.size.to_le_bytes());
            v.extend_from_slice(&k.filter_mask.to_le_bytes());
            for &o in &k.offsets {
                v.extend_from_slice(&o.to_le_bytes());
            }
        };
        for (k, child) in entries {
            key(k, &mut v);
            v.extend_from_slice(&child.to_le_bytes());
        }
        key(
            &ChunkKeyV1 {
                size: 0,
                filter_mask: 0,
                offsets: vec![0; ndims],
            },
            &mut v,
        );
        v
    }

    fn group_node(level: u8, children: &[u64]) -> Vec<u8> {
        let mut v = b"TREE".to_vec();
        v.push(0);
        v.push(level);
        v.extend_from_slice(&(children.len() as u16).to_le_bytes());
        v.extend_from_slice(&[0xff; 16]);
        for (i, c) in children.iter().enumerate() {
            v.extend_from_slice(&(i as u64).to_le_bytes());
            v.extend_from_slice(&c.to_le_bytes());
        }
        v.extend_from_slice(&99u64.to_le_bytes());
        v
    }

    fn place(file: &mut Vec<u8>, at: usize, bytes: &[u8]) {
        if file.len() < at + bytes.len() {
            file.resize(at + bytes.len(), 0);
        }
        file[at..at + bytes.len()].copy_from_slice(bytes);
    }

    #[test]
    fn group_tree_two_levels() {
        let mut f = Vec::new();
        place(&mut f, 0, &group_node(1, &[200, 400]));
        place(&mut f, 200, &group_node(0, &[0x1000, 0x2000]));
        place(&mut f, 400, &group_node(0, &[0x3000]));
        let src = MemSource::new(f.clone());
        let mut seen = Vec::new();
        group_nodes(&src, Sizes::default(), 0, &mut |a| {
            seen.push(a);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, vec![0x1000, 0x2000, 0x3000]);

        // A child that points back to the root is a cycle.
        let mut bad = f.clone();
        place(&mut bad, 0, &group_node(1, &[200, 0]));
        let e =
            group_nodes(&MemSource::new(bad), Sizes::default(), 0, &mut |_| Ok(())).unwrap_err();
        assert!(
            matches!(e, Error::Cycle { .. } | Error::Malformed { .. }),
            "{e:?}"
        );

        // Wrong level below the root.
        let mut bad = f.clone();
        place(&mut bad, 400, &group_node(1, &[0x3000]));
        assert!(group_nodes(&MemSource::new(bad), Sizes::default(), 0, &mut |_| Ok(())).is_err());

        // Bad signature and truncation.
        let mut bad = f.clone();
        bad[200] = b'X';
        assert!(matches!(
            group_nodes(&MemSource::new(bad), Sizes::default(), 0, &mut |_| Ok(())),
            Err(Error::Malformed { .. })
        ));
        let short = f[..230].to_vec();
        assert!(matches!(
            group_nodes(&MemSource::new(short), Sizes::default(), 0, &mut |_| Ok(())),
            Err(Error::Truncated { .. })
        ));
    }

    /// Without a fetcher, the children of an internal node are asked for in
    /// one round: root, then all three leaves, then done (not one round each).
    #[test]
    fn host_driven_walk_asks_for_siblings_together() {
        use crate::fetch::{RangeOptions, RangeSource};
        let mut f = Vec::new();
        place(&mut f, 0, &group_node(1, &[3000, 6000, 9000]));
        for at in [3000, 6000, 9000] {
            place(&mut f, at, &group_node(0, &[at as u64 + 1]));
        }
        f.resize(12_000, 0);
        let opts = RangeOptions {
            block_size: 100,
            cache_bytes: 100_000,
            first_read: 100,
            tail_read: 0,
            coalesce_gap: 0,
            max_request: 1000,
            in_flight: 4,
            window_bytes: 100_000,
            pipeline_step: 0,
        };
        let src = RangeSource::without_fetcher(f.len() as u64, "host://t", opts).unwrap();
        let mut rounds = Vec::new();
        let seen = loop {
            let mut seen = Vec::new();
            let r = group_nodes(&src, Sizes::default(), 0, &mut |a| {
                seen.push(a);
                Ok(())
            });
            let missed = src.take_missed();
            if missed.is_empty() {
                r.unwrap();
                break seen;
            }
            assert!(rounds.len() < 10, "{rounds:?}");
            for m in &missed {
                let at = m.offset as usize;
                src.supply(*m, f[at..at + m.len as usize].to_vec()).unwrap();
            }
            rounds.push(missed.iter().map(|m| m.offset).collect::<Vec<_>>());
        };
        assert_eq!(seen, vec![3001, 6001, 9001]);
        assert_eq!(rounds, vec![vec![0], vec![3000, 6000, 9000]]);
    }

    #[test]
    fn self_cycle_is_detected() {
        let mut f = Vec::new();
        place(&mut f, 0, &group_node(1, &[0]));
        let e = group_nodes(&MemSource::new(f), Sizes::default(), 0, &mut |_| Ok(())).unwrap_err();
        assert!(matches!(e, Error::Cycle { offset: 0, .. }), "{e:?}");
    }

    #[test]
    fn chunk_keys() {
        let k = |o: u64| ChunkKeyV1 {
            size: 100 + o as u32,
            filter_mask: 0,
            offsets: vec![o, 0],
        };
        let node = chunk_node(0, &[(k(0), 0x500), (k(4), 0x600)], 2);
        let src = MemSource::new(node);
        let mut got = Vec::new();
        chunk_entries(&src, Sizes::default(), 0, 2, &mut |key, a| {
            got.push((key.offsets[0], key.size, a));
            Ok(())
        })
        .unwrap();
        assert_eq!(got, vec![(0, 100, 0x500), (4, 104, 0x600)]);
        assert!(chunk_entries(&src, Sizes::default(), 0, 0, &mut |_, _| Ok(())).is_err());
    }

    #[test]
    fn corpus_group_trees_lead_to_symbol_table_nodes() {
        let Some(dir) = crate::fractal_heap::tests::corpus_dir() else {
            println!("skipping: no corpus");
            return;
        };
        let files = [
            "hdf5/tools/test/h5diff/testfiles/h5diff_grp_recurse1.h5",
            "hdf5/tools/test/h5repack/testfiles/h5repack_objs.h5",
            "pyfive/tests/data/new_style_groups.hdf5",
        ];
        let mut snods = 0;
        for rel in files {
            let Ok(data) = std::fs::read(dir.join(rel)) else {
                continue;
            };
            let src = MemSource::new(data.clone());
            for a in crate::fractal_heap::tests::find_all(&data, b"TREE") {
                if data.get(a as usize + 4) != Some(&0) || data.get(a as usize + 5) != Some(&0) {
                    continue;
                }
                group_nodes(&src, Sizes::default(), a, &mut |child| {
                    let at = child as usize;
                    assert_eq!(
                        data.get(at..at + 4),
                        Some(&b"SNOD"[..]),
                        "{rel}: child {child:#x}"
                    );
                    snods += 1;
                    Ok(())
                })
                .unwrap();
            }
        }
        assert!(snods >= 3, "{snods}");
    }
}
