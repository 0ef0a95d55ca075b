//! Version 2 B-tree writer (HDF5 File Format Specification III.A.2, "Version 2
//! B-trees"): bulk-loads sorted records into leaf and internal nodes of a fixed
//! node size, sized the way libhdf5 derives record counts per node, then writes
//! the header ("BTHD"). Used for the link name index (type 5), the attribute
//! name index (type 8) and chunk indexes (types 10 and 11).

use super::sink::Sink;
use crate::checksum::metadata_checksum;
use crate::encode::{limit_enc_size, put_var, UNDEF};
use crate::error::{Error, Result};
use crate::signature;

/// Creation parameters of a tree.
#[derive(Clone, Copy, Debug)]
pub struct BTreeParams {
    /// Record type stored in the header and every node (5 link name, 8 attribute name, 10/11
    /// chunks).
    pub record_type: u8,
    /// Size in bytes of one record, the same for every record of the tree.
    pub record_size: u16,
    /// Size in bytes of every node, leaf or internal.
    pub node_size: u32,
    /// Split percent written to the header: how full a node may become before libhdf5 splits it.
    pub split: u8,
    /// Merge percent written to the header: how empty a node may become before libhdf5 merges it.
    pub merge: u8,
}

const PREFIX: u64 = 10; // signature, version, type, checksum
const ADDR: u64 = 8;

/// Per-depth capacities, as libhdf5 computes them.
#[derive(Debug)]
struct Geometry {
    /// Max records per node at each depth (0 = leaf).
    max_nrec: Vec<u64>,
    /// Max records in a subtree rooted at each depth.
    cum_max: Vec<u64>,
    /// Bytes of the "total records in child" field for children at each depth.
    cum_size: Vec<usize>,
    /// Bytes of the "records in child" field.
    nrec_size: usize,
}

impl Geometry {
    fn new(p: &BTreeParams, depth: usize) -> Result<Self> {
        let rec = u64::from(p.record_size);
        let node = u64::from(p.node_size);
        let leaf = node.saturating_sub(PREFIX) / rec.max(1);
        if leaf < 2 {
            return Err(Error::InvalidArgument("B-tree node too small".into()));
        }
        let nrec_size = limit_enc_size(leaf);
        let mut g = Geometry {
            max_nrec: vec![leaf],
            cum_max: vec![leaf],
            cum_size: vec![0],
            nrec_size,
        };
        for d in 1..=depth {
            let ptr = ADDR + nrec_size as u64 + g.cum_size[d - 1] as u64;
            let n = node.saturating_sub(PREFIX + ptr) / (rec + ptr);
            if n < 1 {
                return Err(Error::InvalidArgument("B-tree node too small".into()));
            }
            let cum = (n + 1)
                .checked_mul(g.cum_max[d - 1])
                .and_then(|v| v.checked_add(n))
                .unwrap_or(u64::MAX);
            g.max_nrec.push(n);
            g.cum_max.push(cum);
            g.cum_size.push(limit_enc_size(cum));
        }
        Ok(g)
    }
}

/// Write a tree holding `records` (already sorted in the tree's order, each
/// `record_size` bytes); returns the header address.
pub fn write(sink: &mut Sink, p: &BTreeParams, records: &[Vec<u8>]) -> Result<u64> {
    if records
        .iter()
        .any(|r| r.len() != usize::from(p.record_size))
    {
        return Err(Error::InvalidArgument(
            "B-tree record of the wrong size".into(),
        ));
    }
    let n = records.len() as u64;
    let mut depth = 0usize;
    let geo = loop {
        let g = Geometry::new(p, depth)?;
        if g.cum_max[depth] >= n {
            break g;
        }
        depth += 1;
        if depth > 16 {
            return Err(Error::InvalidArgument("too many B-tree records".into()));
        }
    };
    let (root, root_nrec) = if records.is_empty() {
        (UNDEF, 0)
    } else {
        let (addr, nrec) = write_node(sink, p, &geo, depth, records)?;
        (addr, nrec)
    };
    let mut h = Vec::with_capacity(48);
    h.extend_from_slice(signature::BTHD);
    h.push(0);
    h.push(p.record_type);
    h.extend_from_slice(&p.node_size.to_le_bytes());
    h.extend_from_slice(&p.record_size.to_le_bytes());
    h.extend_from_slice(&(depth as u16).to_le_bytes());
    h.push(p.split);
    h.push(p.merge);
    h.extend_from_slice(&root.to_le_bytes());
    h.extend_from_slice(&(root_nrec as u16).to_le_bytes());
    h.extend_from_slice(&n.to_le_bytes());
    let sum = metadata_checksum(&h);
    h.extend_from_slice(&sum.to_le_bytes());
    sink.append(&h)
}

fn finish_node(mut b: Vec<u8>, node_size: u32) -> Vec<u8> {
    let sum = metadata_checksum(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    b.resize((node_size as usize).max(b.len()), 0);
    b
}

/// Write the subtree of `records` rooted at `depth`; returns (address, records in node).
fn write_node(
    sink: &mut Sink,
    p: &BTreeParams,
    geo: &Geometry,
    depth: usize,
    records: &[Vec<u8>],
) -> Result<(u64, u64)> {
    let mut b = Vec::with_capacity(p.node_size as usize);
    if depth == 0 {
        b.extend_from_slice(signature::BTLF);
        b.extend_from_slice(&[0, p.record_type]);
        for r in records {
            b.extend_from_slice(r);
        }
        let addr = sink.append(&finish_node(b, p.node_size))?;
        return Ok((addr, records.len() as u64));
    }
    // Split into k children separated by k-1 records, children as even as possible.
    let n = records.len() as u64;
    let child_cap = geo.cum_max[depth - 1];
    let k = (n + 1).div_ceil(child_cap + 1).max(2);
    if k - 1 > geo.max_nrec[depth] {
        return Err(Error::InvalidArgument("B-tree geometry overflow".into()));
    }
    let in_children = n - (k - 1);
    let base = in_children / k;
    let extra = in_children % k;
    let mut children = Vec::with_capacity(k as usize);
    let mut separators = Vec::with_capacity(k as usize - 1);
    let mut pos = 0usize;
    for i in 0..k {
        let cnt = (base + u64::from(i < extra)) as usize;
        let slice = records
            .get(pos..pos + cnt)
            .ok_or_else(|| Error::InvalidArgument("B-tree split".into()))?;
        let (addr, nrec) = write_node(sink, p, geo, depth - 1, slice)?;
        children.push((addr, nrec, cnt as u64));
        pos += cnt;
        if i + 1 < k {
            let sep = records
                .get(pos)
                .ok_or_else(|| Error::InvalidArgument("B-tree split".into()))?;
            separators.push(sep);
            pos += 1;
        }
    }
    b.extend_from_slice(signature::BTIN);
    b.extend_from_slice(&[0, p.record_type]);
    for r in &separators {
        b.extend_from_slice(r);
    }
    for (addr, nrec, total) in &children {
        b.extend_from_slice(&addr.to_le_bytes());
        put_var(&mut b, *nrec, geo.nrec_size);
        if depth > 1 {
            put_var(&mut b, *total, geo.cum_size[depth - 1]);
        }
    }
    let addr = sink.append(&finish_node(b, p.node_size))?;
    Ok((addr, separators.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> BTreeParams {
        BTreeParams {
            record_type: 5,
            record_size: 11,
            node_size: 512,
            split: 100,
            merge: 40,
        }
    }

    #[test]
    fn geometry_matches_libhdf5_formulas() {
        let g = Geometry::new(&params(), 2).unwrap();
        // (512 - 10) / 11 = 45 leaf records; 1-byte counts.
        assert_eq!(g.max_nrec[0], 45);
        assert_eq!(g.nrec_size, 1);
        // depth 1: pointer = 8 + 1 + 0; (512 - 19) / 20 = 24.
        assert_eq!(g.max_nrec[1], 24);
        assert_eq!(g.cum_max[1], 25 * 45 + 24);
        // depth 2: pointer = 8 + 1 + 2.
        assert_eq!(g.cum_size[1], 2);
        assert_eq!(g.max_nrec[2], (512 - 21) / 22);
    }

    #[test]
    fn small_tree_is_one_leaf() {
        let mut sink = Sink::memory();
        let recs: Vec<Vec<u8>> = (0..3u8).map(|i| vec![i; 11]).collect();
        let h = write(&mut sink, &params(), &recs).unwrap();
        let b = sink.into_bytes().unwrap();
        assert_eq!(h, 512);
        assert_eq!(&b[..6], b"BTLF\0\x05");
        assert_eq!(&b[6..17], &[0u8; 11]);
        let hdr = &b[512..];
        assert_eq!(&hdr[..4], b"BTHD");
        assert_eq!(u16::from_le_bytes([hdr[12], hdr[13]]), 0); // depth
        assert_eq!(u64::from_le_bytes(hdr[16..24].try_into().unwrap()), 0); // root
        assert_eq!(u16::from_le_bytes([hdr[24], hdr[25]]), 3);
    }

    #[test]
    fn big_tree_counts_add_up() {
        let mut sink = Sink::memory();
        let recs: Vec<Vec<u8>> = (0..5000u32)
            .map(|i| {
                let mut r = i.to_be_bytes().to_vec();
                r.resize(11, 0);
                r
            })
            .collect();
        let h = write(&mut sink, &params(), &recs).unwrap();
        let b = sink.into_bytes().unwrap();
        let hdr = &b[h as usize..];
        assert_eq!(u16::from_le_bytes([hdr[12], hdr[13]]), 2);
        assert_eq!(u64::from_le_bytes(hdr[26..34].try_into().unwrap()), 5000);
    }

    /// Test-only walk of a written tree: records in order.
    fn walk(
        b: &[u8],
        p: &BTreeParams,
        geo: &Geometry,
        addr: u64,
        nrec: u64,
        depth: usize,
        out: &mut Vec<Vec<u8>>,
    ) {
        let a = addr as usize;
        let rs = usize::from(p.record_size);
        let node = &b[a..a + p.node_size as usize];
        if depth == 0 {
            assert_eq!(&node[..4], b"BTLF");
            for i in 0..nrec as usize {
                out.push(node[6 + i * rs..6 + (i + 1) * rs].to_vec());
            }
            let end = 6 + nrec as usize * rs;
            assert_eq!(
                u32::from_le_bytes(node[end..end + 4].try_into().unwrap()),
                metadata_checksum(&node[..end])
            );
            return;
        }
        assert_eq!(&node[..4], b"BTIN");
        let mut pos = 6 + nrec as usize * rs;
        let mut children = Vec::new();
        for _ in 0..=nrec {
            let child = u64::from_le_bytes(node[pos..pos + 8].try_into().unwrap());
            pos += 8;
            let mut n = 0u64;
            for k in 0..geo.nrec_size {
                n |= u64::from(node[pos + k]) << (8 * k);
            }
            pos += geo.nrec_size;
            if depth > 1 {
                pos += geo.cum_size[depth - 1];
            }
            children.push((child, n));
        }
        for (i, (child, n)) in children.iter().enumerate() {
            walk(b, p, geo, *child, *n, depth - 1, out);
            if i < nrec as usize {
                out.push(node[6 + i * rs..6 + (i + 1) * rs].to_vec());
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn written_tree_holds_every_record_in_order(n in 0usize..6000, node_size in proptest::sample::select(vec![128u32, 512, 2048])) {
            let p = BTreeParams { record_type: 5, record_size: 11, node_size, split: 100, merge: 40 };
            let recs: Vec<Vec<u8>> = (0..n as u32)
                .map(|i| { let mut r = i.to_be_bytes().to_vec(); r.resize(11, 7); r })
                .collect();
            let mut sink = Sink::memory();
            let h = write(&mut sink, &p, &recs).unwrap() as usize;
            let b = sink.into_bytes().unwrap();
            let hdr = &b[h..];
            let depth = u16::from_le_bytes([hdr[12], hdr[13]]) as usize;
            let root = u64::from_le_bytes(hdr[16..24].try_into().unwrap());
            let root_n = u64::from(u16::from_le_bytes([hdr[24], hdr[25]]));
            proptest::prop_assert_eq!(u64::from_le_bytes(hdr[26..34].try_into().unwrap()), n as u64);
            let mut out = Vec::new();
            if n > 0 {
                let geo = Geometry::new(&p, depth).unwrap();
                walk(&b, &p, &geo, root, root_n, depth, &mut out);
            }
            proptest::prop_assert_eq!(out, recs);
        }
    }
}
