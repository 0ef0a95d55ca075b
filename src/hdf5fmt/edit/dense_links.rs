//! Links of groups with a link info message (libhdf5's latest-format
//! groups and ours), compact or dense: each edit is a list of steps (insert
//! a link, remove one), applied with libhdf5's storage transitions after
//! each step — an insert into a compact group already holding `max_compact`
//! links (group info message, 8 by default) makes it dense, a removal
//! leaving a dense group under `min_dense` (6) links makes it compact — and
//! the result is written in one commit: compact links as link messages of
//! the header, dense ones as new dense storage (`dense`) the link info
//! message is repointed at. A rename within a group is an insert then a
//! removal, as libhdf5's move (so a group of `max_compact` links goes dense
//! on a rename, and the renamed link takes the next creation order).

use super::commit::Txn;
use super::dense::{Item, Placed, LINKS_KEY};
use super::header::messages_of;
use super::Editor;
use crate::error::{Error, Result};
use crate::messages::group_info::GroupInfo;
use crate::messages::link::{Link, LinkMessage};
use crate::messages::link_info::LinkInfo;
use crate::messages::types;
use crate::write::object_header::{Message, MAX_MESSAGE_BODY};
use crate::Object;

/// libhdf5's default link phase change values (`H5G_CRT_GINFO_MAX_COMPACT`,
/// `H5G_CRT_GINFO_MIN_DENSE`).
const MAX_COMPACT: usize = 8;
const MIN_DENSE: usize = 6;
/// Largest message body the header rewrite places.
const FITS: usize = MAX_MESSAGE_BODY - 8;

/// One step of a link edit.
pub(super) enum Step {
    /// Add a link (refused when the name exists).
    Insert(String, Link),
    /// Remove a link (refused when absent).
    Remove(String),
}

/// A link with its stored message body (kept as stored while compact).
struct Entry {
    msg: LinkMessage,
    body: Vec<u8>,
}

impl Editor {
    /// Apply `steps` to the links of the group at `parent` (links in link
    /// messages or dense storage, not a symbol table) in one commit, `txn`
    /// holding what the steps need written first; the links removed.
    pub(super) fn edit_links(
        &mut self,
        parent: &str,
        steps: Vec<Step>,
        mut txn: Txn,
    ) -> Result<Vec<Link>> {
        let Object::Group(g) = self.reader.object(parent)? else {
            return Err(Error::InvalidArgument(format!("{parent} is not a group")));
        };
        let (addr, h) = (g.address(), g.header().clone());
        let sizes = self.reader.sizes();
        let info = match h.first(types::LINK_INFO) {
            Some(m) => Some(LinkInfo::decode(&mut m.cursor("link info"), sizes)?),
            None => None,
        };
        let (max_compact, min_dense) = match h.first(types::GROUP_INFO) {
            Some(m) => {
                let gi = GroupInfo::decode(&mut m.cursor("group info"))?;
                (
                    gi.max_compact.map_or(MAX_COMPACT, usize::from),
                    gi.min_dense.map_or(MIN_DENSE, usize::from),
                )
            }
            None => (MAX_COMPACT, MIN_DENSE),
        };
        let mut dense = info.as_ref().is_some_and(|i| i.heap_address.is_some());
        let mut links: Vec<Entry> = Vec::new();
        if let (true, Some(i)) = (dense, &info) {
            for msg in crate::link::dense_links(&self.reader, i, false)? {
                let body = msg.encode(sizes)?;
                links.push(Entry { msg, body });
            }
        } else {
            for (m, l) in self.link_messages(&h)? {
                if let Some(msg) = l {
                    links.push(Entry { msg, body: m.body });
                }
            }
        }
        let mut max = info.as_ref().and_then(|i| i.max_creation_order);
        let mut removed = Vec::new();
        for step in steps {
            match step {
                Step::Insert(name, link) => {
                    if links.iter().any(|e| e.msg.name == name) {
                        return Err(Error::InvalidArgument(format!(
                            "{parent}: link {name:?} already exists"
                        )));
                    }
                    let order = max;
                    if let Some(m) = max.as_mut() {
                        *m = m.saturating_add(1);
                    }
                    let msg = LinkMessage {
                        name,
                        link,
                        creation_order: order,
                    };
                    let body = msg.encode(sizes)?;
                    if info.is_some() && !dense && (links.len() >= max_compact || body.len() > FITS)
                    {
                        dense = true;
                    }
                    links.push(Entry { msg, body });
                }
                Step::Remove(name) => {
                    let i = links
                        .iter()
                        .position(|e| e.msg.name == name)
                        .ok_or_else(|| Error::NotFound(format!("{parent}: no link {name:?}")))?;
                    removed.push(links.remove(i).msg.link);
                    if links.is_empty() {
                        if let Some(m) = max.as_mut() {
                            *m = 0;
                        }
                    }
                    if dense
                        && links.len() < min_dense
                        && links.iter().all(|e| e.body.len() <= FITS)
                    {
                        dense = false;
                        links.sort_by(|a, b| a.msg.name.as_bytes().cmp(b.msg.name.as_bytes()));
                    }
                }
            }
        }
        self.free_dense(addr, LINKS_KEY, &mut txn);
        let placed = if dense {
            let items: Vec<Item> = links
                .iter()
                .map(|e| Item {
                    name: e.msg.name.clone(),
                    order: e.msg.creation_order.unwrap_or(0),
                    body: e.body.clone(),
                })
                .collect();
            let indexed = info.as_ref().is_some_and(|i| i.order_indexed);
            Some(self.place_dense(&items, false, indexed, &mut txn)?)
        } else {
            None
        };
        let mut msgs: Vec<Message> = messages_of(&h)
            .into_iter()
            .filter(|m| m.kind != types::LINK)
            .collect();
        if let Some(mut i) = info {
            i.max_creation_order = max;
            i.heap_address = placed.map(|p| p.heap);
            i.name_index = placed.map(|p| p.name_index);
            i.order_index = placed.and_then(|p: Placed| p.order_index);
            let body = i.encode(sizes);
            if let Some(m) = msgs.iter_mut().find(|m| m.kind == types::LINK_INFO) {
                m.body = body;
            }
        }
        if placed.is_none() {
            msgs.extend(links.into_iter().map(|e| Message::new(types::LINK, e.body)));
        }
        self.rewrite_header(addr, &h, msgs, None, &mut txn)?;
        self.commit(txn)?;
        self.own_dense(addr, LINKS_KEY, placed);
        Ok(removed)
    }
}
