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

/// Entries assumed per node when the nodes of a level are fetched ahead:
/// libhdf5 allocates every node for `2K` entries (`K` = 32 for chunk trees
/// and 16 for group trees by default), so a guess of 64 entries covers the
/// usual nodes whole; a larger node reads its rest on its own.
const GUESS_ENTRIES: usize = 64;

/// Bytes of nodes fetched ahead in one batch at most.
const BATCH_BYTES: u64 = 16 << 20;

/// Walk over the level-0 entries of the tree rooted at `address`, left to
/// right, a level at a time. On sources that fetch ahead (remote objects),
/// the nodes of each level below the root are fetched as one batch before
/// they are read (one request per run of nodes lying close together, not one
/// per node).
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
    let ahead = src.wants_prefetch() && src.pipeline_step().is_some();
    let o = usize::from(sizes.offset);
    let guess = (8 + 2 * o)
        .saturating_add((GUESS_ENTRIES + 1).saturating_mul(key_size))
        .saturating_add(GUESS_ENTRIES.saturating_mul(o)) as u64;
    // The addresses of one level, left to right, and the level they must
    // have (None: the root, any level).
    let mut level: Vec<u64> = vec![address];
    let mut expect: Option<u8> = None;
    // Nodes fetched in one batch at most (a bound on memory and on what a
    // hostile tree can make us fetch ahead).
    let per_batch = usize::try_from((BATCH_BYTES / guess.max(1)).max(1)).unwrap_or(1);
    while !level.is_empty() {
        // A host-driven source (no fetcher: the host fetches what a read
        // missed, then the read starts again) gets every missing node of a
        // level in one round, not one round per node.
        if src.wants_prefetch() && src.pipeline_step().is_none() && expect.is_some() {
            let mut need = None;
            for &a in &level {
                match read_node(src, sizes, a, node_type, key_size) {
                    Err(e) if e.needed_ranges().is_some() => {
                        need.get_or_insert(e);
                    }
                    // other errors are reported when the node is visited
                    _ => {}
                }
            }
            if let Some(e) = need {
                return Err(e);
            }
        }
        let mut next = Vec::new();
        let mut next_level = None;
        for piece in level.chunks(per_batch) {
            let batch: Vec<crate::fetch::ByteRange> = if ahead && expect.is_some() {
                piece
                    .iter()
                    .map(|&a| {
                        crate::fetch::ByteRange::new(a, guess.min(src.len().saturating_sub(a)))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            if !batch.is_empty() {
                src.prefetch(&batch)?;
            }
            let r = walk_level(
                src,
                sizes,
                piece,
                expect,
                node_type,
                key_size,
                (&mut visited, &mut nodes),
                f,
            );
            if !batch.is_empty() {
                src.release(&batch);
            }
            let (mut below, below_level) = r?;
            if next.len().saturating_add(below.len()) > limits::MAX_TREE_NODES {
                return Err(Error::Limit {
                    structure: NODE,
                    offset: address,
                    what: "nodes of one level",
                    value: next.len().saturating_add(below.len()) as u64,
                    limit: limits::MAX_TREE_NODES as u64,
                });
            }
            next.append(&mut below);
            next_level = next_level.or(below_level);
        }
        level = next;
        expect = next_level;
    }
    Ok(())
}

/// Read the nodes of one level: leaves' entries go to `f`, internal nodes'
/// children make the next level (returned with its expected level).
#[allow(clippy::too_many_arguments)]
fn walk_level(
    src: &dyn Source,
    sizes: Sizes,
    level: &[u64],
    expect: Option<u8>,
    node_type: u8,
    key_size: usize,
    (visited, nodes): (&mut HashSet<u64>, &mut usize),
    f: &mut dyn FnMut(&[u8], u64) -> Result<()>,
) -> Result<(Vec<u64>, Option<u8>)> {
    let mut next = Vec::new();
    let mut next_level = None;
    for &addr in level {
        if !visited.insert(addr) {
            return Err(Error::Cycle {
                structure: NODE,
                offset: addr,
            });
        }
        *nodes += 1;
        if *nodes > limits::MAX_TREE_NODES {
            return Err(Error::Limit {
                structure: NODE,
                offset: addr,
                what: "nodes visited",
                value: *nodes as u64,
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
            if next.len().saturating_add(node.entries.len()) > limits::MAX_TREE_NODES {
                return Err(Error::Limit {
                    structure: NODE,
                    offset: addr,
                    what: "nodes of one level",
                    value: next.len().saturating_add(node.entries.len()) as u64,
                    limit: limits::MAX_TREE_NODES as u64,
                });
            }
            next.extend(node.entries.iter().map(|(_, child)| *child));
            next_level = Some(node.level - 1);
        }
    }
    Ok((next, next_level))
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

    /// An object in memory counting the batches fetched from it.
    struct Batches {
        bytes: Vec<u8>,
        calls: std::sync::Mutex<Vec<Vec<crate::fetch::ByteRange>>>,
    }

    impl crate::fetch::Fetch for Batches {
        fn len(&self) -> u64 {
            self.bytes.len() as u64
        }
        fn describe(&self) -> String {
            "mem://tree".into()
        }
        fn fetch(&self, ranges: &[crate::fetch::ByteRange]) -> Result<Vec<Vec<u8>>> {
            self.calls.lock().unwrap().push(ranges.to_vec());
            Ok(ranges
                .iter()
                .map(|r| self.bytes[r.offset as usize..(r.offset + r.len) as usize].to_vec())
                .collect())
        }
    }

    #[test]
    fn remote_leaves_of_a_level_come_in_one_batch() {
        // A root (level 1) over 40 leaves 100 KiB apart, each of 3 chunks:
        // the leaves lie beyond what opening fetches and too far apart to be
        // joined into one request.
        let k = |o: u64| ChunkKeyV1 {
            size: 10,
            filter_mask: 0,
            offsets: vec![o, 0],
        };
        let at = |i: u64| (i + 1) * 100 * 1024;
        let mut f = Vec::new();
        let leaves: Vec<(ChunkKeyV1, u64)> = (0..40).map(|i| (k(i * 3), at(i))).collect();
        place(&mut f, 0, &chunk_node(1, &leaves, 2));
        for i in 0..40 {
            let chunks: Vec<(ChunkKeyV1, u64)> =
                (0..3).map(|j| (k(i * 3 + j), 0x10_0000 * i + j)).collect();
            place(&mut f, at(i) as usize, &chunk_node(0, &chunks, 2));
        }
        place(&mut f, at(41) as usize, &[0; 8]);
        let collect = |src: &dyn Source| {
            let mut got = Vec::new();
            chunk_entries(src, Sizes::default(), 0, 2, &mut |key, a| {
                got.push((key.offsets[0], a));
                Ok(())
            })
            .map(|()| got)
        };
        let want = collect(&MemSource::new(f.clone())).unwrap();
        assert_eq!(want.len(), 120);
        assert!(want.windows(2).all(|w| w[0].0 < w[1].0), "key order");

        let fetch = std::sync::Arc::new(Batches {
            bytes: f,
            calls: Default::default(),
        });
        let src = crate::fetch::RangeSource::new(fetch.clone(), Default::default()).unwrap();
        let opened = fetch.calls.lock().unwrap().len();
        assert_eq!(collect(&src).unwrap(), want);
        let calls = fetch.calls.lock().unwrap();
        let walk = &calls[opened..];
        // One batch for the whole leaf level (was one request per leaf).
        assert_eq!(walk.len(), 1, "{walk:?}");
        assert!(walk[0].len() >= 37, "{} ranges", walk[0].len());
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
