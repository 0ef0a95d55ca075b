//! Dense storage written by the editor (a fractal heap with a v2 B-tree name
//! index and, when creation order is indexed, a creation-order index), for
//! the links of a group (`dense_links`) and the attributes of an object
//! (`dense_attrs`): the whole storage is encoded anew by the writer's
//! builder (`crate::write::fragment::dense`) as one block past the end of
//! allocation, and the link or attribute info message is then repointed at
//! it. The block replaced is freed when this session wrote it; storage
//! libhdf5 wrote is left in place (unreachable, once per object).

use super::commit::Txn;
use super::Editor;
use crate::error::Result;
use crate::write::fragment;

/// Key in `Editor::owned` of the dense link storage block this session
/// wrote for a group (names never hold a NUL, so no attribute collides).
pub(super) const LINKS_KEY: &str = "\0dense links";
/// Key in `Editor::owned` of the dense attribute storage block.
pub(super) const ATTRS_KEY: &str = "\0dense attributes";

/// Where dense storage was written: fractal heap, name index, creation-order
/// index.
#[derive(Clone, Copy, Debug)]
pub(super) struct Placed {
    pub(super) heap: u64,
    pub(super) name_index: u64,
    pub(super) order_index: Option<u64>,
    /// The block holding all three (address, length).
    pub(super) block: (u64, u64),
}

/// One link or attribute of dense storage: name, creation order, message
/// body.
#[derive(Clone, Debug)]
pub(super) struct Item {
    pub(super) name: String,
    pub(super) order: u64,
    pub(super) body: Vec<u8>,
}

impl Editor {
    /// Encode dense storage of `items` where the allocator puts it; the
    /// bytes go to `txn`.
    pub(super) fn place_dense(
        &mut self,
        items: &[Item],
        attrs: bool,
        indexed: bool,
        txn: &mut Txn,
    ) -> Result<Placed> {
        let list = || -> Vec<(&str, u64, Vec<u8>)> {
            items
                .iter()
                .map(|i| (i.name.as_str(), i.order, i.body.clone()))
                .collect()
        };
        let probe = fragment::dense(list(), attrs, indexed, self.eoa)?;
        let at = self.alloc(probe.bytes.len() as u64)?;
        let f = if at == probe.base {
            probe
        } else {
            fragment::dense(list(), attrs, indexed, at)?
        };
        let (heap, name_index, order) = f.value;
        let block = (f.base, f.bytes.len() as u64);
        txn.writes.push((f.base, f.bytes));
        Ok(Placed {
            heap,
            name_index,
            order_index: (order != crate::encode::UNDEF).then_some(order),
            block,
        })
    }

    /// Queue the dense block this session wrote under `(addr, key)` for
    /// freeing once `txn` commits; call [`Editor::own_dense`] after.
    pub(super) fn free_dense(&self, addr: u64, key: &str, txn: &mut Txn) {
        if let Some(b) = self.owned.get(&(addr, key.to_string())) {
            txn.frees.push(*b);
        }
    }

    /// Record the dense block now current under `(addr, key)` (none: the
    /// storage went compact).
    pub(super) fn own_dense(&mut self, addr: u64, key: &str, placed: Option<Placed>) {
        let k = (addr, key.to_string());
        match placed {
            Some(p) => self.owned.insert(k, p.block),
            None => self.owned.remove(&k),
        };
    }
}
