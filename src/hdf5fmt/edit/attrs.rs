//! Attributes of groups, datasets and named datatypes: set (create or
//! replace) and delete, in compact storage (attribute messages in the
//! object header; version 1 headers hold any number). Dense storage and the
//! compact/dense transitions of version 2 headers go to `dense_attrs`.

use super::commit::Txn;
use super::dense::ATTRS_KEY;
use super::dense_attrs::AttrStep;
use super::header::{attr_name, chunk0, messages_of};
use super::Editor;
use crate::encode::UNDEF;
use crate::error::{Error, Result};
use crate::messages::attribute_info;
use crate::messages::types;
use crate::object_header::ObjectHeader;
use crate::write::fragment;
use crate::write::object_header::Message;
use crate::write::AttrValue;

impl Editor {
    /// Header address and header of the object at `path`.
    pub(super) fn object(&self, path: &str) -> Result<(u64, ObjectHeader)> {
        let o = self.reader.object(path)?;
        Ok((o.address(), o.header().clone()))
    }

    /// The messages of `h` with each attribute message's name (resolved
    /// through shared messages).
    pub(super) fn named_messages(
        &self,
        h: &ObjectHeader,
    ) -> Result<Vec<(Message, Option<String>)>> {
        let mut out = Vec::new();
        let kept = messages_of(h);
        let raw = h
            .messages
            .iter()
            .filter(|m| m.mtype != types::NIL && m.mtype != types::CONTINUATION);
        for (m, r) in kept.into_iter().zip(raw) {
            let name =
                if m.kind == types::ATTRIBUTE {
                    Some(attr_name(&self.reader.message_body(r)?).ok_or_else(|| {
                        Error::malformed("attribute message", r.offset, "no name")
                    })?)
                } else {
                    None
                };
            out.push((m, name));
        }
        Ok(out)
    }

    /// Set attribute `name` of the object at `path` to `value` (created, or
    /// replaced as h5py replaces it: the old one deleted, the new one
    /// created, with the next creation order and the storage transitions
    /// libhdf5 makes on the way).
    pub fn set_attr(&mut self, path: &str, name: &str, value: &AttrValue) -> Result<()> {
        self.check_usable()?;
        let (addr, h) = self.object(path)?;
        let mut txn = Txn::default();
        // encode once to learn the size, again where it goes
        let probe = fragment::attribute(name, value, self.eoa)?;
        let key = (addr, name.to_string());
        if let Some(old) = self.owned.get(&key) {
            txn.frees.push(*old);
        }
        let mut block = None;
        let body = if probe.bytes.is_empty() {
            probe.value
        } else {
            let at = self.alloc(probe.bytes.len() as u64)?;
            let f = if at == probe.base {
                probe
            } else {
                fragment::attribute(name, value, at)?
            };
            block = Some((f.base, f.bytes.len() as u64));
            txn.writes.push((f.base, f.bytes));
            f.value
        };
        let c = chunk0(self, addr)?;
        if self.attr_needs_dense(&h, &c, name, Some(body.len()))? {
            let step = AttrStep::Put(name.to_string(), body);
            let placed = self.edit_attrs_dense(addr, &h, &c, step, &mut txn)?;
            self.commit(txn)?;
            self.own_dense(addr, ATTRS_KEY, placed);
            match block {
                Some(b) => self.owned.insert(key, b),
                None => self.owned.remove(&key),
            };
            return Ok(());
        }
        let tracked = c.version == 2 && c.flags & 0x04 != 0;
        let mut msgs = self.named_messages(&h)?;
        let next_order = msgs
            .iter()
            .filter(|(m, n)| n.is_some() && m.kind == types::ATTRIBUTE)
            .map(|(m, _)| m.order.saturating_add(1))
            .max()
            .unwrap_or(0);
        // a new attribute, or one replaced (h5py deletes and recreates it),
        // takes the next creation order
        let order = tracked.then(|| {
            let info_max = h
                .first(types::ATTRIBUTE_INFO)
                .and_then(|i| i.data.get(2..4).map(|b| u16::from_le_bytes([b[0], b[1]])));
            next_order.max(info_max.unwrap_or(0))
        });
        if let Some(order) = order {
            for (im, _) in msgs.iter_mut() {
                if im.kind == types::ATTRIBUTE_INFO && im.body.get(1).is_some_and(|f| f & 1 != 0) {
                    if let Some(b) = im.body.get_mut(2..4) {
                        b.copy_from_slice(&order.saturating_add(1).to_le_bytes());
                    }
                }
            }
        }
        // h5py replaces an attribute by creating it under a temporary name,
        // deleting the old one and renaming: the new message never takes the
        // old one's place, it comes after the others (which decides the
        // listing order of an object that does not track creation order)
        let old = msgs.iter().position(|(_, n)| n.as_deref() == Some(name));
        let keep_order = old.map(|i| msgs.remove(i).0.order);
        match keep_order {
            Some(was) => {
                let mut m = Message::new(types::ATTRIBUTE, body);
                m.order = order.unwrap_or(was);
                msgs.push((m, Some(name.to_string())));
            }
            None => {
                let mut m = Message::new(types::ATTRIBUTE, body);
                m.order = order.unwrap_or(0);
                if c.version == 2 && !msgs.iter().any(|(m, _)| m.kind == types::ATTRIBUTE_INFO) {
                    // libhdf5 counts a version 2 header's attributes through it
                    msgs.push((
                        Message::new(
                            types::ATTRIBUTE_INFO,
                            attribute_info::encode(0, None, UNDEF, UNDEF, UNDEF),
                        ),
                        None,
                    ));
                }
                msgs.push((m, Some(name.to_string())));
            }
        }
        let msgs = msgs.into_iter().map(|(m, _)| m).collect();
        self.rewrite_header(addr, &h, msgs, None, &mut txn)?;
        self.commit(txn)?;
        match block {
            Some(b) => self.owned.insert(key, b),
            None => self.owned.remove(&key),
        };
        Ok(())
    }

    /// Delete attribute `name` of the object at `path`.
    pub fn delete_attr(&mut self, path: &str, name: &str) -> Result<()> {
        self.check_usable()?;
        let (addr, h) = self.object(path)?;
        let c = chunk0(self, addr)?;
        if self.attr_needs_dense(&h, &c, name, None)? {
            let mut txn = Txn::default();
            let key = (addr, name.to_string());
            if let Some(old) = self.owned.get(&key) {
                txn.frees.push(*old);
            }
            let step = AttrStep::Remove(name.to_string());
            let placed = self
                .edit_attrs_dense(addr, &h, &c, step, &mut txn)
                .map_err(|e| match e {
                    Error::NotFound(_) => Error::NotFound(format!("attribute {name:?} of {path}")),
                    e => e,
                })?;
            self.commit(txn)?;
            self.own_dense(addr, ATTRS_KEY, placed);
            self.owned.remove(&key);
            return Ok(());
        }
        let msgs = self.named_messages(&h)?;
        let before = msgs.len();
        let msgs: Vec<Message> = msgs
            .into_iter()
            .filter(|(_, n)| n.as_deref() != Some(name))
            .map(|(m, _)| m)
            .collect();
        if msgs.len() == before {
            return Err(Error::NotFound(format!("attribute {name:?} of {path}")));
        }
        let mut txn = Txn::default();
        let key = (addr, name.to_string());
        if let Some(old) = self.owned.get(&key) {
            txn.frees.push(*old);
        }
        self.rewrite_header(addr, &h, msgs, None, &mut txn)?;
        self.commit(txn)?;
        self.owned.remove(&key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::attr_name;

    #[test]
    fn names_of_each_version() {
        let v1 = [1, 0, 3, 0, 0, 0, 0, 0, b'a', b'b', 0, 0];
        assert_eq!(attr_name(&v1).as_deref(), Some("ab"));
        let v3 = [3, 0, 2, 0, 0, 0, 0, 0, 0, b'x', 0];
        assert_eq!(attr_name(&v3).as_deref(), Some("x"));
        assert_eq!(attr_name(&[3, 0, 9, 0]), None);
    }
}
