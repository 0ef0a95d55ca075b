//! A version 1 B-tree chunk index (node type 1, HDF5 File Format
//! Specification III.A.1) written whole for a layout version 3 dataset:
//! leaves of up to 2K chunks in C order of their grid positions, internal
//! nodes of up to 2K children above them, every node allocated at the full
//! size libhdf5 reads (K from a version 1 superblock, 32 otherwise); each
//! key holds a chunk's stored size, filter mask and element offsets, the
//! last key of a node the grid position one past its last chunk in every
//! dimension (as libhdf5 writes it).

use super::commit::Txn;
use super::Editor;
use crate::encode::UNDEF;
use crate::error::{Error, Result};
use crate::signature;
use crate::write::chunks::RawChunks;

/// One key: stored size, filter mask, scaled position (element offsets are
/// the position times the chunk dimensions).
#[derive(Clone)]
struct Key {
    size: u32,
    mask: u32,
    scaled: Vec<u64>,
}

impl Editor {
    /// The chunk B-tree K of this file.
    fn istore_k(&self) -> Result<u16> {
        if self.reader.superblock().version != 1 {
            return Ok(32);
        }
        let mut b = [0u8; 2];
        std::os::unix::fs::FileExt::read_exact_at(&self.fd, &mut b, self.sb.at + 24)
            .map_err(|e| Error::io("edit", e))?;
        match u16::from_le_bytes(b) {
            0 => Err(Error::malformed(
                "superblock",
                self.sb.at,
                "chunk B-tree K of 0",
            )),
            k => Ok(k),
        }
    }

    /// Write a v1 B-tree indexing `stored` (new blocks into `txn`, their
    /// places into `blocks`); returns the root node's address.
    pub(super) fn write_btree_v1(
        &mut self,
        info_chunk: &super::chunked::ChunkGeometry,
        stored: &RawChunks,
        txn: &mut Txn,
        blocks: &mut Vec<(u64, u64)>,
    ) -> Result<u64> {
        let k = usize::from(self.istore_k()?);
        let rank = info_chunk.chunk.len();
        let key_size = 8 + 8 * (rank + 1);
        let node_size = 24 + (2 * k + 1) * key_size + 2 * k * 8;
        let fanout = 2 * k;
        let chunk = info_chunk.chunk.clone();
        // level 0: (first key, children, last key) per node
        let mut level: Vec<(Vec<Key>, Vec<u64>, Key)> = Vec::new();
        let entries: Vec<(Key, u64)> = stored
            .iter()
            .map(|(s, c)| {
                let size = u32::try_from(c.size)
                    .map_err(|_| Error::InvalidArgument("chunk of 4 GiB or more".into()))?;
                Ok((
                    Key {
                        size,
                        mask: c.mask,
                        scaled: s.clone(),
                    },
                    c.addr,
                ))
            })
            .collect::<Result<_>>()?;
        for group in entries.chunks(fanout) {
            let keys: Vec<Key> = group.iter().map(|(k, _)| k.clone()).collect();
            let kids: Vec<u64> = group.iter().map(|(_, a)| *a).collect();
            let last = group.last().map(|(k, _)| Key {
                size: 0,
                mask: 0,
                scaled: k.scaled.iter().map(|x| x + 1).collect(),
            });
            level.push((
                keys,
                kids,
                last.unwrap_or(Key {
                    size: 0,
                    mask: 0,
                    scaled: vec![0; rank],
                }),
            ));
        }
        if level.is_empty() {
            // an empty root leaf, as libhdf5 creates with the dataset
            level.push((
                Vec::new(),
                Vec::new(),
                Key {
                    size: 0,
                    mask: 0,
                    scaled: vec![0; rank],
                },
            ));
        }
        let mut depth = 0u8;
        loop {
            // place this level's nodes
            let addrs: Vec<u64> = level
                .iter()
                .map(|_| self.alloc(node_size as u64))
                .collect::<Result<_>>()?;
            for (i, (keys, kids, last)) in level.iter().enumerate() {
                let mut n = Vec::with_capacity(node_size);
                n.extend_from_slice(signature::TREE);
                n.push(1);
                n.push(depth);
                n.extend_from_slice(&(kids.len() as u16).to_le_bytes());
                let left = if i == 0 { UNDEF } else { addrs[i - 1] };
                let right = addrs.get(i + 1).copied().unwrap_or(UNDEF);
                n.extend_from_slice(&left.to_le_bytes());
                n.extend_from_slice(&right.to_le_bytes());
                let put_key = |n: &mut Vec<u8>, key: &Key| {
                    n.extend_from_slice(&key.size.to_le_bytes());
                    n.extend_from_slice(&key.mask.to_le_bytes());
                    for (s, c) in key.scaled.iter().zip(&chunk) {
                        n.extend_from_slice(&(s * c).to_le_bytes());
                    }
                    n.extend_from_slice(&0u64.to_le_bytes());
                };
                for (key, kid) in keys.iter().zip(kids) {
                    put_key(&mut n, key);
                    n.extend_from_slice(&kid.to_le_bytes());
                }
                put_key(&mut n, last);
                n.resize(node_size, 0);
                blocks.push((addrs[i], node_size as u64));
                txn.writes.push((addrs[i], n));
            }
            if level.len() == 1 {
                return Ok(addrs[0]);
            }
            depth = depth
                .checked_add(1)
                .ok_or_else(|| Error::InvalidArgument("B-tree too deep".into()))?;
            let nodes: Vec<(Key, Key, u64)> = level
                .iter()
                .zip(&addrs)
                .map(|((keys, _, last), a)| (keys[0].clone(), last.clone(), *a))
                .collect();
            level = nodes
                .chunks(fanout)
                .map(|g| {
                    let keys = g.iter().map(|(f, _, _)| f.clone()).collect();
                    let kids = g.iter().map(|(_, _, a)| *a).collect();
                    let last = g.last().map(|(_, l, _)| l.clone()).unwrap_or(Key {
                        size: 0,
                        mask: 0,
                        scaled: vec![0; rank],
                    });
                    (keys, kids, last)
                })
                .collect();
        }
    }
}
