//! Version 2 B-trees (HDF5 File Format Specification III.A.2): header (`BTHD`),
//! internal (`BTIN`) and leaf (`BTLF`) nodes, every record type.
//!
//! The width of the "number of records" and "total number of records" fields of
//! an internal node's child pointers is not stored: it follows from the node size,
//! the record size and the depth. [`NodeGeometry`] computes it the way the
//! specification describes (the leaf capacity sets the per-node count width; the
//! cumulative capacity below a depth sets the total-count width).
//! Record parsers live in [`records`].

use std::collections::HashSet;

use crate::checksum::metadata_checksum;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::limits;
use crate::signature;
use crate::source::Source;
use crate::Sizes;

pub mod records;

const HEADER: &str = "v2 B-tree header";
const INTERNAL: &str = "v2 B-tree internal node";
const LEAF: &str = "v2 B-tree leaf node";
/// Signature, version, type and checksum: the bytes every node spends on itself.
const PREFIX: u64 = 4 + 1 + 1 + 4;
/// Largest node size accepted (the format allows any u32; libhdf5 uses KiBs).
const MAX_NODE_SIZE: u64 = 16 << 20;

/// An opened v2 B-tree (its header parsed).
#[derive(Clone, Debug)]
pub struct BTreeV2 {
    /// Address of the B-tree header.
    pub address: u64,
    /// Record type (1..=11).
    pub record_type: u8,
    /// Size in bytes of one record.
    pub record_size: u16,
    /// Size in bytes of every node.
    pub node_size: u32,
    /// Depth of the tree (0: the root is a leaf).
    pub depth: u16,
    /// Split and merge percentages.
    pub split_percent: u8,
    /// Merge percent: how empty (as a percentage of capacity) a node must become before it is
    /// merged with a sibling.
    pub merge_percent: u8,
    /// Root node address (`None` for an empty tree).
    pub root: Option<u64>,
    /// Records in the root node.
    pub root_records: u16,
    /// Records in the whole tree.
    pub total_records: u64,
    geometry: NodeGeometry,
}

/// Per-depth capacities of a v2 B-tree and the field widths derived from them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeGeometry {
    /// Most records a node at depth `d` may hold (index 0 = leaves).
    pub max_records: Vec<u64>,
    /// Most records in a subtree rooted at depth `d`.
    pub cum_max_records: Vec<u64>,
    /// Bytes of the "total number of records" field for a child at depth `d`
    /// (0 for leaves: the field is absent).
    pub cum_size: Vec<u8>,
    /// Bytes of every "number of records" field of a child pointer.
    pub nrec_size: u8,
}

/// Bytes needed to encode every value from 0 to `limit`.
pub fn limit_enc_size(limit: u64) -> u8 {
    let log2 = if limit == 0 {
        0
    } else {
        63 - limit.leading_zeros()
    };
    (log2 / 8 + 1) as u8
}

impl NodeGeometry {
    /// Capacities for a tree of `depth` with the given node and record sizes.
    pub fn new(node_size: u64, record_size: u64, depth: u16, sizeof_addr: u8) -> Result<Self> {
        let bad = |what: &str| Error::malformed(HEADER, 0, what.to_string());
        if record_size == 0 {
            return Err(bad("record size 0"));
        }
        let leaf = node_size
            .checked_sub(PREFIX)
            .ok_or_else(|| bad("node size smaller than a node prefix"))?
            / record_size;
        if leaf == 0 {
            return Err(bad("node size holds no record"));
        }
        let nrec_size = limit_enc_size(leaf);
        let mut max_records = vec![leaf];
        let mut cum_max_records = vec![leaf];
        let mut cum_size = vec![0u8];
        for d in 1..=usize::from(depth) {
            let prev_cum_size = u64::from(cum_size[d - 1]);
            let ptr = u64::from(sizeof_addr) + u64::from(nrec_size) + prev_cum_size;
            let avail = node_size
                .checked_sub(PREFIX + ptr)
                .ok_or_else(|| bad("node size too small for an internal node"))?;
            let max = avail / (record_size + ptr);
            if max == 0 {
                return Err(bad("internal node holds no record"));
            }
            let cum = (max + 1)
                .checked_mul(cum_max_records[d - 1])
                .and_then(|v| v.checked_add(max))
                .unwrap_or(u64::MAX);
            max_records.push(max);
            cum_max_records.push(cum);
            cum_size.push(limit_enc_size(cum));
        }
        Ok(NodeGeometry {
            max_records,
            cum_max_records,
            cum_size,
            nrec_size,
        })
    }

    /// Size of one child pointer in an internal node at `depth` (>= 1).
    pub fn pointer_size(&self, depth: usize, sizeof_addr: u8) -> u64 {
        let below = depth
            .checked_sub(1)
            .and_then(|d| self.cum_size.get(d))
            .copied()
            .unwrap_or(0);
        u64::from(sizeof_addr) + u64::from(self.nrec_size) + u64::from(below)
    }
}

impl BTreeV2 {
    /// Parse the header at `address`.
    pub fn open(src: &dyn Source, sizes: Sizes, address: u64) -> Result<Self> {
        let (o, l) = (u64::from(sizes.offset), u64::from(sizes.length));
        let len = PREFIX + 4 + 2 + 2 + 1 + 1 + o + 2 + l;
        let bytes = src.read(HEADER, address, len)?;
        let mut c = Cursor::new(&bytes, address, HEADER);
        c.signature(signature::BTHD)?;
        let version = c.u8()?;
        if version != 0 {
            return Err(c.unsupported(format!("version {version}")));
        }
        let record_type = c.u8()?;
        let node_size = c.u32()?;
        let record_size = c.u16()?;
        let depth = c.u16()?;
        let split_percent = c.u8()?;
        let merge_percent = c.u8()?;
        let root = c.addr(sizes.offset)?;
        let root_records = c.u16()?;
        let total_records = c.length(sizes.length)?;
        verify_checksum(&bytes, address, HEADER)?;
        if !(1..=11).contains(&record_type) {
            return Err(Error::unsupported(
                HEADER,
                address,
                format!("record type {record_type}"),
            ));
        }
        if usize::from(depth) > limits::MAX_TREE_DEPTH {
            return Err(Error::Limit {
                structure: HEADER,
                offset: address,
                what: "tree depth",
                value: u64::from(depth),
                limit: limits::MAX_TREE_DEPTH as u64,
            });
        }
        if u64::from(node_size) > MAX_NODE_SIZE {
            return Err(Error::Limit {
                structure: HEADER,
                offset: address,
                what: "node size",
                value: u64::from(node_size),
                limit: MAX_NODE_SIZE,
            });
        }
        let geometry = NodeGeometry::new(
            u64::from(node_size),
            u64::from(record_size),
            depth,
            sizes.offset,
        )
        .map_err(|e| relocate(e, address))?;
        Ok(BTreeV2 {
            address,
            record_type,
            record_size,
            node_size,
            depth,
            split_percent,
            merge_percent,
            root,
            root_records,
            total_records,
            geometry,
        })
    }

    /// The per-depth capacities and field widths of this tree.
    pub fn geometry(&self) -> &NodeGeometry {
        &self.geometry
    }

    /// Visit every record's raw bytes (`record_size` bytes each) in key order.
    pub fn for_each_record(
        &self,
        src: &dyn Source,
        sizes: Sizes,
        f: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let Some(root) = self.root else {
            return Ok(());
        };
        if self.root_records == 0 && self.depth == 0 {
            return Ok(());
        }
        let mut walk = Walk {
            tree: self,
            src,
            sizes,
            visited: HashSet::new(),
            nodes: 0,
        };
        walk.node(
            root,
            u64::from(self.root_records),
            usize::from(self.depth),
            f,
        )
    }

    /// Every record, copied (convenience for small trees).
    pub fn records(&self, src: &dyn Source, sizes: Sizes) -> Result<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        self.for_each_record(src, sizes, &mut |r| {
            out.push(r.to_vec());
            Ok(())
        })?;
        Ok(out)
    }
}

struct Walk<'a> {
    tree: &'a BTreeV2,
    src: &'a dyn Source,
    sizes: Sizes,
    visited: HashSet<u64>,
    nodes: usize,
}

impl Walk<'_> {
    fn node(
        &mut self,
        addr: u64,
        nrec: u64,
        depth: usize,
        f: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let structure = if depth == 0 { LEAF } else { INTERNAL };
        if !self.visited.insert(addr) {
            return Err(Error::Cycle {
                structure,
                offset: addr,
            });
        }
        self.nodes += 1;
        if self.nodes > limits::MAX_TREE_NODES {
            return Err(Error::Limit {
                structure,
                offset: addr,
                what: "nodes visited",
                value: self.nodes as u64,
                limit: limits::MAX_TREE_NODES as u64,
            });
        }
        let g = &self.tree.geometry;
        let max = g.max_records.get(depth).copied().unwrap_or(0);
        if nrec > max {
            return Err(Error::malformed(
                structure,
                addr,
                format!("{nrec} records, at most {max} fit a node at depth {depth}"),
            ));
        }
        let rec = u64::from(self.tree.record_size);
        let o = self.sizes.offset;
        let ptr = if depth == 0 {
            0
        } else {
            g.pointer_size(depth, o)
        };
        let ptrs = if depth == 0 { 0 } else { nrec + 1 };
        // nrec <= max records, so these products stay far below u64::MAX.
        let len = PREFIX + nrec * rec + ptrs * ptr;
        if len > u64::from(self.tree.node_size) {
            return Err(Error::malformed(
                structure,
                addr,
                "node overflows node size",
            ));
        }
        let bytes = self.src.read(structure, addr, len)?;
        let mut c = Cursor::new(&bytes, addr, structure);
        c.signature(if depth == 0 {
            signature::BTLF
        } else {
            signature::BTIN
        })?;
        let version = c.u8()?;
        if version != 0 {
            return Err(c.unsupported(format!("version {version}")));
        }
        let rtype = c.u8()?;
        if rtype != self.tree.record_type {
            return Err(c.malformed(format!(
                "record type {rtype}, header says {}",
                self.tree.record_type
            )));
        }
        verify_checksum(&bytes, addr, structure)?;
        let recs = c.bytes_u64(nrec * rec)?;
        if depth == 0 {
            for r in recs.chunks_exact(rec as usize) {
                f(r)?;
            }
            return Ok(());
        }
        let below_cum = g.cum_size.get(depth - 1).copied().unwrap_or(0);
        let mut children = Vec::with_capacity(ptrs as usize);
        for _ in 0..ptrs {
            let child = c
                .addr(o)?
                .ok_or_else(|| c.malformed("undefined child node address"))?;
            let n = c.uint(usize::from(g.nrec_size))?;
            if depth > 1 {
                c.uint(usize::from(below_cum))?;
            }
            children.push((child, n));
        }
        let mut recs = recs.chunks_exact(rec as usize);
        for (i, (child, n)) in children.into_iter().enumerate() {
            self.node(child, n, depth - 1, f)?;
            if i < nrec as usize {
                if let Some(r) = recs.next() {
                    f(r)?;
                }
            }
        }
        Ok(())
    }
}

/// Check the trailing 4-byte lookup3 checksum of `bytes`.
pub(crate) fn verify_checksum(bytes: &[u8], offset: u64, structure: &'static str) -> Result<()> {
    let split = bytes.len().checked_sub(4).ok_or(Error::Truncated {
        structure,
        offset,
        needed: 4,
        available: bytes.len() as u64,
    })?;
    let (body, tail) = bytes.split_at(split);
    let stored = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let computed = metadata_checksum(body);
    if stored != computed {
        return Err(Error::Checksum {
            structure,
            offset,
            stored,
            computed,
        });
    }
    Ok(())
}

fn relocate(e: Error, offset: u64) -> Error {
    match e {
        Error::Malformed {
            structure, reason, ..
        } => Error::Malformed {
            structure,
            offset,
            reason,
        },
        other => other,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::source::MemSource;

    /// Append a lookup3 checksum of everything so far.
    pub(crate) fn seal(mut v: Vec<u8>) -> Vec<u8> {
        let c = metadata_checksum(&v);
        v.extend_from_slice(&c.to_le_bytes());
        v
    }

    fn header(
        rtype: u8,
        node_size: u32,
        rec: u16,
        depth: u16,
        root: u64,
        nroot: u16,
        total: u64,
    ) -> Vec<u8> {
        let mut v = b"BTHD".to_vec();
        v.push(0);
        v.push(rtype);
        v.extend_from_slice(&node_size.to_le_bytes());
        v.extend_from_slice(&rec.to_le_bytes());
        v.extend_from_slice(&depth.to_le_bytes());
        v.push(100);
        v.push(40);
        v.extend_from_slice(&root.to_le_bytes());
        v.extend_from_slice(&nroot.to_le_bytes());
        v.extend_from_slice(&total.to_le_bytes());
        seal(v)
    }

    fn leaf(rtype: u8, recs: &[u64]) -> Vec<u8> {
        let mut v = b"BTLF".to_vec();
        v.push(0);
        v.push(rtype);
        for r in recs {
            v.extend_from_slice(&r.to_le_bytes());
        }
        seal(v)
    }

    fn place(file: &mut Vec<u8>, at: usize, bytes: &[u8]) {
        if file.len() < at + bytes.len() {
            file.resize(at + bytes.len(), 0);
        }
        file[at..at + bytes.len()].copy_from_slice(bytes);
    }

    #[test]
    fn geometry_matches_libhdf5_widths() {
        // Node 512, record 11 (type 5), 8-byte addresses.
        let g = NodeGeometry::new(512, 11, 2, 8).unwrap();
        assert_eq!(g.max_records[0], 45);
        assert_eq!(g.nrec_size, 1);
        // depth 1: ptr = 8 + 1 + 0 = 9; (512 - 19) / 20 = 24
        assert_eq!(g.max_records[1], 24);
        assert_eq!(g.cum_max_records[1], 25 * 45 + 24);
        assert_eq!(g.cum_size[1], 2);
        // depth 2: ptr = 8 + 1 + 2 = 11; (512 - 21) / 22 = 22
        assert_eq!(g.max_records[2], 22);
        assert_eq!(g.pointer_size(2, 8), 11);
        assert_eq!(limit_enc_size(255), 1);
        assert_eq!(limit_enc_size(256), 2);
        assert_eq!(limit_enc_size(0), 1);
    }

    #[test]
    fn two_level_tree_in_key_order() {
        // record type 9-like 8-byte records, node size 64.
        let node = 64u32;
        let g = NodeGeometry::new(64, 8, 1, 8).unwrap();
        assert_eq!(g.max_records[0], 6);
        let mut file = vec![0u8; 0];
        place(&mut file, 0, &header(9, node, 8, 1, 100, 1, 5));
        // internal at 100: one record (key 3), children at 200 (2 recs), 300 (2 recs)
        let mut int = b"BTIN".to_vec();
        int.push(0);
        int.push(9);
        int.extend_from_slice(&3u64.to_le_bytes());
        for (a, n) in [(200u64, 2u8), (300, 2)] {
            int.extend_from_slice(&a.to_le_bytes());
            int.push(n);
        }
        place(&mut file, 100, &seal(int));
        place(&mut file, 200, &leaf(9, &[1, 2]));
        place(&mut file, 300, &leaf(9, &[4, 5]));
        let src = MemSource::new(file.clone());
        let t = BTreeV2::open(&src, Sizes::default(), 0).unwrap();
        assert_eq!((t.record_type, t.depth, t.total_records), (9, 1, 5));
        let got: Vec<u64> = t
            .records(&src, Sizes::default())
            .unwrap()
            .iter()
            .map(|r| u64::from_le_bytes(r[..8].try_into().unwrap()))
            .collect();
        assert_eq!(got, vec![1, 2, 3, 4, 5]);

        // Cycle: second child points back at the internal node's address as a leaf.
        let mut bad = file.clone();
        let mut int = b"BTIN".to_vec();
        int.push(0);
        int.push(9);
        int.extend_from_slice(&3u64.to_le_bytes());
        for (a, n) in [(200u64, 2u8), (200, 2)] {
            int.extend_from_slice(&a.to_le_bytes());
            int.push(n);
        }
        place(&mut bad, 100, &seal(int));
        let src = MemSource::new(bad);
        let e = t.records(&src, Sizes::default()).unwrap_err();
        assert!(matches!(e, Error::Cycle { offset: 200, .. }), "{e:?}");

        // Corrupt a leaf byte: checksum error.
        let mut bad = file.clone();
        bad[206] ^= 1;
        let src = MemSource::new(bad);
        let e = t.records(&src, Sizes::default()).unwrap_err();
        assert!(matches!(e, Error::Checksum { offset: 200, .. }), "{e:?}");

        // Too many records claimed for a leaf.
        let mut bad = file;
        let mut int = b"BTIN".to_vec();
        int.push(0);
        int.push(9);
        int.extend_from_slice(&3u64.to_le_bytes());
        for (a, n) in [(200u64, 7u8), (300, 2)] {
            int.extend_from_slice(&a.to_le_bytes());
            int.push(n);
        }
        place(&mut bad, 100, &seal(int));
        let src = MemSource::new(bad);
        assert!(matches!(
            t.records(&src, Sizes::default()),
            Err(Error::Malformed { .. })
        ));
    }

    #[test]
    fn header_errors() {
        let h = header(5, 512, 11, 0, 100, 0, 0);
        let src = MemSource::new(h.clone());
        let t = BTreeV2::open(&src, Sizes::default(), 0).unwrap();
        assert!(t.records(&src, Sizes::default()).unwrap().is_empty());
        let mut bad = h.clone();
        bad[0] = b'X';
        assert!(matches!(
            BTreeV2::open(&MemSource::new(bad), Sizes::default(), 0),
            Err(Error::Malformed { .. })
        ));
        let mut bad = h.clone();
        bad[8] ^= 0x40;
        assert!(matches!(
            BTreeV2::open(&MemSource::new(bad), Sizes::default(), 0),
            Err(Error::Checksum { .. })
        ));
        assert!(matches!(
            BTreeV2::open(&MemSource::new(h[..20].to_vec()), Sizes::default(), 0),
            Err(Error::Truncated { .. })
        ));
        let deep = header(5, 512, 11, 200, 100, 0, 0);
        assert!(matches!(
            BTreeV2::open(&MemSource::new(deep), Sizes::default(), 0),
            Err(Error::Limit { .. })
        ));
        let zero = header(5, 512, 0, 0, 100, 0, 0);
        assert!(BTreeV2::open(&MemSource::new(zero), Sizes::default(), 0).is_err());
    }
}
