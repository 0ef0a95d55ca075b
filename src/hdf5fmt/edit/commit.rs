//! Committing one operation: new structures written first (past the end of
//! allocation or into freed space), synced; the superblock's end-of-file
//! address moved (with its checksum, versions 2 and 3), synced; then the
//! repointing patches (one changed byte range of a header chunk each),
//! synced; only then are replaced blocks freed for reuse.

use std::os::unix::fs::FileExt;

use super::Editor;
use crate::checksum::metadata_checksum;
use crate::error::{Error, Result};
use crate::file::File;

/// How each committed operation reaches the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `fsync` between the steps: safe against power loss as well as
    /// against a killed process.
    Sync,
    /// No `fsync`: the order of writes is kept, which is what a killed
    /// process needs (the page cache survives it), not a power loss.
    Ordered,
}

/// Where the end-of-file address lives in the superblock.
#[derive(Clone, Debug)]
pub(super) struct SuperblockInfo {
    /// Absolute offset of the superblock.
    pub(super) at: u64,
    pub(super) base: u64,
    pub(super) offset_size: u8,
    /// Offset of the end-of-file address from the superblock start.
    pub(super) eoa_field: u64,
    /// Bytes covered by the checksum (v2/v3), the checksum following.
    pub(super) checked_len: u64,
    pub(super) stored_eoa: u64,
}

impl SuperblockInfo {
    pub(super) fn of(f: &File) -> Result<Self> {
        let sb = f.superblock();
        let o = u64::from(sb.sizes.offset);
        let (eoa_field, checked_len) = match sb.version {
            0 => (24 + 2 * o, 0),
            1 => (28 + 2 * o, 0),
            2 | 3 => (12 + 2 * o, 12 + 4 * o),
            v => {
                return Err(Error::Unsupported {
                    structure: "superblock",
                    offset: sb.offset,
                    what: format!("editing superblock version {v}"),
                })
            }
        };
        if sb.eof_address == u64::MAX {
            return Err(Error::malformed(
                "superblock",
                sb.offset,
                "undefined end-of-file address",
            ));
        }
        if sb.sizes.offset != 8 || sb.sizes.length != 8 {
            return Err(Error::Unsupported {
                structure: "superblock",
                offset: sb.offset,
                what: format!(
                    "editing a file with {}-byte offsets and {}-byte lengths (8 and 8 only)",
                    sb.sizes.offset, sb.sizes.length
                ),
            });
        }
        Ok(SuperblockInfo {
            at: sb.offset,
            base: sb.base_address,
            offset_size: sb.sizes.offset,
            eoa_field,
            checked_len,
            stored_eoa: sb.eof_address,
        })
    }
}

/// The writes of one operation.
#[derive(Debug, Default)]
pub(super) struct Txn {
    /// New structures, in space nothing references yet.
    pub(super) writes: Vec<(u64, Vec<u8>)>,
    /// Repointing writes into referenced structures, done last.
    pub(super) patches: Vec<(u64, Vec<u8>)>,
    /// Blocks unreferenced once the patches are in.
    pub(super) frees: Vec<(u64, u64)>,
}

fn io(e: std::io::Error) -> Error {
    Error::io("edit", e)
}

impl Editor {
    /// Space for `len` bytes: freed space first, else the end of allocation.
    pub(super) fn alloc(&mut self, len: u64) -> Result<u64> {
        if let Some(a) = self.free.take(len) {
            // a freed block of ours may end in its alignment padding, past
            // the end of allocation
            let end = a
                .checked_add(len)
                .ok_or_else(|| Error::InvalidArgument("file too large".into()))?;
            self.eoa = self.eoa.max(end);
            self.mine.insert(a);
            return Ok(a);
        }
        // a free block at the end grows instead of leaving a hole
        let end = self.eoa.div_ceil(super::space::ALIGN) * super::space::ALIGN;
        let at = self.free.take_tail(end).unwrap_or(end);
        self.eoa = at
            .checked_add(len)
            .ok_or_else(|| Error::InvalidArgument("file too large".into()))?;
        self.mine.insert(at);
        Ok(at)
    }

    fn sync(&self) -> Result<()> {
        match self.durability {
            Durability::Sync => self.fd.sync_data().map_err(io),
            Durability::Ordered => Ok(()),
        }
    }

    fn put(&self, rel: u64, bytes: &[u8]) -> Result<()> {
        let abs = self
            .sb
            .base
            .checked_add(rel)
            .ok_or_else(|| Error::InvalidArgument("address overflow".into()))?;
        self.fd.write_all_at(bytes, abs).map_err(io)
    }

    pub(super) fn check_usable(&self) -> Result<()> {
        match &self.broken {
            Some(why) => Err(Error::InvalidArgument(format!(
                "an earlier edit failed ({why}); reopen the file"
            ))),
            None => Ok(()),
        }
    }

    /// Apply `txn` in the crash-safe order and refresh the read view.
    pub(super) fn commit(&mut self, txn: Txn) -> Result<()> {
        self.check_usable()?;
        let r = self.commit_inner(&txn);
        if let Err(e) = &r {
            self.broken = Some(e.to_string());
        }
        r
    }

    fn commit_inner(&mut self, txn: &Txn) -> Result<()> {
        for (a, b) in &txn.writes {
            self.put(*a, b)?;
        }
        self.sync()?;
        if self.eoa != self.sb.stored_eoa {
            self.write_eoa(self.eoa)?;
            self.sync()?;
        }
        for (a, b) in &txn.patches {
            self.put(*a, b)?;
        }
        self.sync()?;
        for &(a, l) in &txn.frees {
            // our blocks own their alignment padding (nothing else starts
            // there); a block some other writer placed is freed exactly
            let l = if self.mine.remove(&a) {
                l.div_ceil(super::space::ALIGN) * super::space::ALIGN
            } else {
                l
            };
            self.free.give(a, l);
        }
        self.reader = File::open_pread(&self.path)?;
        Ok(())
    }

    /// Store `eoa` as the superblock's end-of-file address.
    fn write_eoa(&mut self, eoa: u64) -> Result<()> {
        let sb = self.sb.clone();
        let o = usize::from(sb.offset_size);
        let field = eoa.to_le_bytes();
        let field = field.get(..o).unwrap_or(&field);
        if sb.checked_len == 0 {
            self.fd
                .write_all_at(field, sb.at + sb.eoa_field)
                .map_err(io)?;
        } else {
            let mut b = vec![0u8; sb.checked_len as usize + 4];
            self.fd.read_exact_at(&mut b, sb.at).map_err(io)?;
            let f = sb.eoa_field as usize;
            b[f..f + o].copy_from_slice(field);
            let n = sb.checked_len as usize;
            let sum = metadata_checksum(&b[..n]);
            b[n..].copy_from_slice(&sum.to_le_bytes());
            self.fd.write_all_at(&b, sb.at).map_err(io)?;
        }
        self.sb.stored_eoa = eoa;
        Ok(())
    }
}
