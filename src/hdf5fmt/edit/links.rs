//! Links of groups whose links are link messages in their header (the
//! "compact" storage of libhdf5's latest format and of our writer): create
//! groups and datasets (encoded by the writer), hard and soft links, delete,
//! rename and move, with object reference counts kept. Groups in symbol-table
//! storage go to `stab`, the others (link messages or dense storage, and the
//! transitions between them) to `dense_links`.

use super::commit::Txn;
use super::dense_links::Step;
use super::header::{chunk0, messages_of};
use super::Editor;
use crate::error::{Error, Result};
use crate::messages::link::{Link, LinkMessage};
use crate::messages::{refcount, types};
use crate::object_header::ObjectHeader;
use crate::write::object_header::Message;
use crate::write::{fragment, DatasetData, DatasetSpec, FileWriter};
use crate::Object;

/// `("/a/b", "c")` for `"/a/b/c"`.
fn split(path: &str) -> Result<(String, String)> {
    let p = path.trim_end_matches('/');
    let (parent, name) = match p.rfind('/') {
        Some(i) => (&p[..i], &p[i + 1..]),
        None => ("", p),
    };
    if name.is_empty() || name == "." || name == ".." {
        return Err(Error::InvalidArgument(format!("bad link path {path:?}")));
    }
    let parent = if parent.is_empty() { "/" } else { parent };
    Ok((parent.to_string(), name.to_string()))
}

impl Editor {
    /// Header address and header of the group at `path`.
    fn compact_group(&self, path: &str) -> Result<(u64, ObjectHeader)> {
        let Object::Group(g) = self.reader.object(path)? else {
            return Err(Error::InvalidArgument(format!("{path} is not a group")));
        };
        Ok((g.address(), g.header().clone()))
    }

    /// The group's messages, each link message with its decoded link.
    pub(super) fn link_messages(
        &self,
        h: &ObjectHeader,
    ) -> Result<Vec<(Message, Option<LinkMessage>)>> {
        let sizes = self.reader.sizes();
        messages_of(h)
            .into_iter()
            .map(|m| {
                let l = if m.kind == types::LINK {
                    let c = crate::cursor::Cursor::new(&m.body, 0, "link message");
                    let mut c = c;
                    Some(LinkMessage::decode(&mut c, sizes)?)
                } else {
                    None
                };
                Ok((m, l))
            })
            .collect()
    }

    /// Add link `name` → `link` to the group at `parent` (one commit).
    fn add_link(&mut self, parent: &str, name: &str, link: Link, txn: Txn) -> Result<()> {
        if let Some(g) = self.stab_group(parent)? {
            return self.stab_add(parent, &g, name, link, txn);
        }
        self.edit_links(parent, vec![Step::Insert(name.to_string(), link)], txn)?;
        Ok(())
    }

    /// Remove link `name` of the group at `parent` (one commit); the link.
    fn remove_link(&mut self, parent: &str, name: &str) -> Result<Link> {
        if let Some(g) = self.stab_group(parent)? {
            return self.stab_remove(parent, &g, name);
        }
        let mut gone =
            self.edit_links(parent, vec![Step::Remove(name.to_string())], Txn::default())?;
        gone.pop()
            .ok_or_else(|| Error::NotFound(format!("{parent}: no link {name:?}")))
    }

    /// Hard link count of the object at `addr`.
    fn refcount(&self, addr: u64) -> Result<u32> {
        let c = chunk0(self, addr)?;
        if c.version == 1 {
            return Ok(c.refcount_v1());
        }
        let h = self.reader.header(addr)?;
        match h.first(types::REFCOUNT) {
            Some(m) => refcount::decode(&mut m.cursor("reference count")),
            None => Ok(1),
        }
    }

    /// Set the hard link count of the object at `addr` (one commit).
    fn set_refcount(&mut self, addr: u64, n: u32) -> Result<()> {
        let h = self.reader.header(addr)?;
        let c = chunk0(self, addr)?;
        let mut msgs = messages_of(&h);
        let mut txn = Txn::default();
        if c.version == 1 {
            self.rewrite_header(addr, &h, msgs, Some(n), &mut txn)?;
        } else {
            msgs.retain(|m| m.kind != types::REFCOUNT);
            if n > 1 {
                msgs.push(Message::new(types::REFCOUNT, refcount::encode(n)));
            }
            self.rewrite_header(addr, &h, msgs, None, &mut txn)?;
        }
        self.commit(txn)
    }

    /// Put a new object built by `build` (one object named `"new"` in the
    /// root group of the writer it is given) at `path`.
    fn create_object(&mut self, path: &str, writer: FileWriter) -> Result<()> {
        self.check_usable()?;
        let (parent, name) = split(path)?;
        self.compact_group(&parent)?;
        let probe = fragment::object(&writer, "new", self.eoa)?;
        let at = self.alloc(probe.bytes.len() as u64)?;
        let f = if at == probe.base {
            probe
        } else {
            fragment::object(&writer, "new", at)?
        };
        let mut txn = Txn::default();
        txn.writes.push((f.base, f.bytes));
        self.add_link(&parent, &name, Link::Hard(f.value), txn)
    }

    /// Create an empty group at `path` (its parent must exist).
    pub fn create_group(&mut self, path: &str) -> Result<()> {
        let mut w = FileWriter::in_memory();
        w.create_group(w.root(), "new")?;
        self.create_object(path, w)
    }

    /// Create a dataset at `path` holding `data`, encoded as the writer
    /// encodes it (any layout, chunk index and filter pipeline it writes).
    pub fn create_dataset(
        &mut self,
        path: &str,
        spec: DatasetSpec,
        data: impl Into<DatasetData>,
    ) -> Result<()> {
        let mut w = FileWriter::in_memory();
        w.create_dataset(w.root(), "new", spec, data)?;
        self.create_object(path, w)
    }

    /// A hard link at `path` to the object at `target`.
    pub fn hard_link(&mut self, target: &str, path: &str) -> Result<()> {
        self.check_usable()?;
        let (parent, name) = split(path)?;
        self.compact_group(&parent)?;
        let addr = self.reader.object(target)?.address();
        // count first: a crash in between over-counts (a leak), never frees
        let n = self.refcount(addr)?;
        self.set_refcount(addr, n.saturating_add(1))?;
        self.add_link(&parent, &name, Link::Hard(addr), Txn::default())
    }

    /// A soft link at `path` holding `target`.
    pub fn soft_link(&mut self, target: &str, path: &str) -> Result<()> {
        self.check_usable()?;
        let (parent, name) = split(path)?;
        self.add_link(
            &parent,
            &name,
            Link::Soft(target.to_string()),
            Txn::default(),
        )
    }

    /// Delete the link at `path`. An object losing its last hard link is
    /// left unreachable (its space is not reclaimed).
    pub fn delete(&mut self, path: &str) -> Result<()> {
        self.check_usable()?;
        let (parent, name) = split(path)?;
        if let Link::Hard(addr) = self.remove_link(&parent, &name)? {
            let n = self.refcount(addr)?;
            if n > 1 {
                self.set_refcount(addr, n - 1)?;
            }
        }
        Ok(())
    }

    /// Rename or move the link at `from` to `to`: one commit within a group;
    /// across groups the new link is added (and counted) before the old one
    /// goes.
    pub fn rename(&mut self, from: &str, to: &str) -> Result<()> {
        self.check_usable()?;
        let (pa, na) = split(from)?;
        let (pb, nb) = split(to)?;
        let (ga, _) = self.compact_group(&pa)?;
        let (gb, _) = self.compact_group(&pb)?;
        if ga == gb {
            if let Some(g) = self.stab_group(&pa)? {
                return self.stab_rename(&pa, &g, &na, &nb);
            }
            // libhdf5 moves a link by inserting it under its new name, then
            // removing the old one
            let Object::Group(g) = self.reader.object(&pa)? else {
                return Err(Error::InvalidArgument(format!("{pa} is not a group")));
            };
            let link = g.link(&na)?;
            self.edit_links(
                &pa,
                vec![Step::Insert(nb, link), Step::Remove(na)],
                Txn::default(),
            )?;
            return Ok(());
        }
        let group = self.reader.object(&pa)?;
        let Object::Group(g) = group else {
            return Err(Error::InvalidArgument(format!("{pa} is not a group")));
        };
        match g.link(&na)? {
            Link::Hard(_) => self.hard_link(from, to)?,
            Link::Soft(t) => self.soft_link(&t, to)?,
            _ => {
                return Err(Error::Unsupported {
                    structure: "link",
                    offset: ga,
                    what: "moving external or user-defined links".into(),
                })
            }
        }
        self.delete(from)
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_paths() {
        assert_eq!(split("/a/b").unwrap(), ("/a".into(), "b".into()));
        assert_eq!(split("/a").unwrap(), ("/".into(), "a".into()));
        assert_eq!(split("a/").unwrap(), ("/".into(), "a".into()));
        assert!(split("/").is_err());
    }
}
