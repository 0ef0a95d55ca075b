//! Dataset writes: a hyperslab of raw stored-order bytes written into a
//! compact or contiguous dataset, copy-on-write (the whole new block
//! appended, then the layout message repointed, the old block freed).
//! Chunked datasets go through `chunked` (chunks re-encoded, index
//! rewritten).

use super::commit::Txn;
use super::header::messages_of;
use super::Editor;
use crate::error::{Error, Result};
use crate::messages::layout::Layout;
use crate::messages::types;
use crate::selection::Selection;
use crate::Object;

/// Copy `slab` (the C-order box `start`/`count` of `esize`-byte elements)
/// into `full` (C order, `dims`).
fn place(full: &mut [u8], dims: &[u64], start: &[u64], count: &[u64], esize: usize, slab: &[u8]) {
    let rank = dims.len();
    if rank == 0 {
        full[..esize].copy_from_slice(&slab[..esize]);
        return;
    }
    let row = count[rank - 1] as usize * esize;
    let rows: u64 = count[..rank - 1].iter().product();
    let mut idx = vec![0u64; rank - 1];
    for r in 0..rows as usize {
        let mut off = 0u64;
        for d in 0..rank {
            let i = if d < rank - 1 {
                start[d] + idx[d]
            } else {
                start[d]
            };
            off = off * dims[d] + i;
        }
        let off = off as usize * esize;
        full[off..off + row].copy_from_slice(&slab[r * row..(r + 1) * row]);
        for d in (0..rank - 1).rev() {
            idx[d] += 1;
            if idx[d] < count[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

impl Editor {
    /// Write `bytes` (stored element bytes, C order) into the box
    /// `start`/`count` of the compact, contiguous or chunked dataset at
    /// `path` (chunked: the touched chunks re-encoded through the dataset's
    /// filter pipeline, its chunk index rewritten; implicit indexes are
    /// refused with [`Error::Unsupported`]).
    pub fn write_slab(
        &mut self,
        path: &str,
        start: &[u64],
        count: &[u64],
        bytes: &[u8],
    ) -> Result<()> {
        self.check_usable()?;
        let Object::Dataset(ds) = self.reader.object(path)? else {
            return Err(Error::InvalidArgument(format!("{path} is not a dataset")));
        };
        let dims = ds.shape().to_vec();
        let esize = usize::try_from(ds.dtype().size())
            .map_err(|_| Error::InvalidArgument("element too large".into()))?;
        let ok = start.len() == dims.len()
            && count.len() == dims.len()
            && start
                .iter()
                .zip(count)
                .zip(&dims)
                .all(|((s, c), d)| s.checked_add(*c).is_some_and(|e| e <= *d));
        let n = count
            .iter()
            .try_fold(1u64, |a, &c| a.checked_mul(c))
            .and_then(|n| n.checked_mul(esize as u64));
        if !ok || n != Some(bytes.len() as u64) {
            return Err(Error::InvalidArgument(format!(
                "{path}: the slab {start:?}+{count:?} ({} bytes) does not fit shape {dims:?}",
                bytes.len()
            )));
        }
        let addr = ds.header().address;
        let old = ds.layout().clone();
        if matches!(old, Layout::Chunked { .. }) {
            return self.write_chunked(&ds, &dims, start, count, bytes);
        }
        if !matches!(old, Layout::Compact { .. } | Layout::Contiguous { .. }) {
            return Err(Error::Unsupported {
                structure: "dataset",
                offset: addr,
                what: format!("writing into a {} dataset", ds.layout_kind()),
            });
        }
        if ds.header().has(types::FILTER_PIPELINE) && matches!(old, Layout::Compact { .. }) {
            return Err(Error::Unsupported {
                structure: "dataset",
                offset: addr,
                what: "writing into a filtered compact dataset".into(),
            });
        }
        let mut full = ds.read_raw_vec(&Selection::All)?;
        place(&mut full, &dims, start, count, esize, bytes);
        let h = ds.header().clone();
        let mut txn = Txn::default();
        let sizes = self.reader.sizes();
        let layout = match old {
            Layout::Contiguous { address, size } => {
                let at = self.alloc(full.len() as u64)?;
                if let Some(a) = address {
                    txn.frees.push((a, size.unwrap_or(full.len() as u64)));
                }
                let l = Layout::Contiguous {
                    address: Some(at),
                    size: Some(full.len() as u64),
                };
                txn.writes.push((at, full));
                l
            }
            _ => Layout::Compact { data: full },
        };
        let body = layout.encode(sizes)?;
        let mut msgs = messages_of(&h);
        for m in msgs.iter_mut().filter(|m| m.kind == types::LAYOUT) {
            m.body = body.clone();
            m.flags = 0;
        }
        self.rewrite_header(addr, &h, msgs, None, &mut txn)?;
        self.commit(txn)
    }
}

#[cfg(test)]
mod tests {
    use super::place;

    #[test]
    fn boxes_land_in_c_order() {
        let mut full = vec![0u8; 12];
        place(&mut full, &[3, 4], &[1, 1], &[2, 2], 1, &[1, 2, 3, 4]);
        assert_eq!(full, vec![0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0]);
        let mut s = vec![0u8; 2];
        place(&mut s, &[], &[], &[], 2, &[7, 8]);
        assert_eq!(s, vec![7, 8]);
    }
}
