//! What a faithful copy keeps besides values (HDF5 File Format Specification
//! IV.A.1.b header flags 2–3, IV.A.2.c link info, IV.A.2.g link creation order,
//! IV.A.2.v attribute info, IV.A.2.m shared datatypes, III.A.2 B-tree record
//! types 6 and 9): link and attribute creation order, tracked and indexed, and
//! datasets and attributes whose datatype is a committed (named) datatype,
//! stored as a shared datatype message pointing at it.

use super::ids::{DatasetId, DatatypeId, GroupId, ObjectId};
use super::node_settings::{CreationOrder, NodeExtra};
use super::{FileWriter, NodeKind};
use crate::error::{Error, Result};

impl FileWriter {
    fn extra_mut(&mut self, obj: ObjectId) -> Result<&mut NodeExtra> {
        self.nodes
            .get_mut(obj.0)
            .map(|n| &mut n.extra)
            .ok_or_else(|| Error::InvalidArgument(format!("{obj:?} does not exist")))
    }

    fn named_type(&self, named: DatatypeId) -> Result<&crate::datatype::Datatype> {
        match self.nodes.get(named.0).map(|n| &n.kind) {
            Some(NodeKind::NamedType(dt)) => Ok(dt),
            _ => Err(Error::InvalidArgument(format!(
                "{named:?} is not a datatype"
            ))),
        }
    }

    /// Track (and index) the creation order of the links of `group`.
    pub fn set_link_creation_order(&mut self, group: GroupId, order: CreationOrder) -> Result<()> {
        match self.nodes.get(group.0).map(|n| &n.kind) {
            Some(NodeKind::Group { .. }) => {}
            _ => return Err(Error::InvalidArgument(format!("{group:?} is not a group"))),
        }
        self.extra_mut(group.into())?.link_order = order.bits();
        Ok(())
    }

    /// Track (and index) the creation order of the attributes of `obj`.
    pub fn set_attr_creation_order(
        &mut self,
        obj: impl Into<ObjectId>,
        order: CreationOrder,
    ) -> Result<()> {
        self.extra_mut(obj.into())?.attr_order = order.bits();
        Ok(())
    }

    /// Make `dataset` use the committed datatype `named` (a shared datatype
    /// message), e.g. once a copy has met the named datatype after the dataset.
    /// The two datatypes must be equal.
    pub fn share_datatype(&mut self, dataset: DatasetId, named: DatatypeId) -> Result<()> {
        let dt = self.named_type(named)?.clone();
        match self.nodes.get_mut(dataset.0).map(|n| &mut n.kind) {
            Some(NodeKind::Dataset(ds)) if ds.spec.dtype == dt => {
                ds.named_type = Some(named.0);
                Ok(())
            }
            Some(NodeKind::Dataset(_)) => Err(Error::InvalidArgument(
                "the dataset's datatype differs from the committed one".into(),
            )),
            _ => Err(Error::InvalidArgument(format!(
                "{dataset:?} is not a dataset"
            ))),
        }
    }

    /// Write the filter pipeline of `dataset` exactly as given: its client data
    /// was completed by the library that wrote the source (stored chunks copied
    /// as they are must be described by the same parameters), so the writer's
    /// set-local step is skipped.
    pub fn keep_pipeline_as_stored(&mut self, dataset: DatasetId) -> Result<()> {
        self.keep_pipeline(dataset, None)
    }

    /// [`FileWriter::keep_pipeline_as_stored`], writing the source's filter
    /// pipeline message `body` byte for byte (its version, names and padding
    /// as well as its client data). Refused unless `body` decodes to the
    /// dataset's pipeline.
    pub fn keep_pipeline_message(&mut self, dataset: DatasetId, body: Vec<u8>) -> Result<()> {
        let mut c = crate::cursor::Cursor::new(&body, 0, "filter pipeline message");
        let decoded = crate::messages::filter_pipeline::decode(&mut c)?;
        let ours = match self.nodes.get(dataset.0).map(|n| &n.kind) {
            Some(NodeKind::Dataset(ds)) => match &ds.spec.layout {
                super::Layout::Chunked { filters, .. } => filters.clone(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        if decoded != ours {
            return Err(Error::InvalidArgument(format!(
                "{dataset:?}: the pipeline message given is not the dataset's pipeline"
            )));
        }
        self.keep_pipeline(dataset, Some(body))
    }

    fn keep_pipeline(&mut self, dataset: DatasetId, body: Option<Vec<u8>>) -> Result<()> {
        match self.nodes.get_mut(dataset.0).map(|n| &mut n.kind) {
            Some(NodeKind::Dataset(ds)) => {
                ds.pipeline_as_stored = true;
                ds.pipeline_message = body;
                Ok(())
            }
            _ => Err(Error::InvalidArgument(format!(
                "{dataset:?} is not a dataset"
            ))),
        }
    }

    /// How many objects the writer holds (groups, datasets, named datatypes).
    pub fn object_count(&self) -> usize {
        self.nodes.len()
    }

    /// Remove link `name` from `parent` (an object left without links is not
    /// written; bytes of raw chunks already streamed stay in the file,
    /// unreferenced). A copier drops a dataset it could not fill this way.
    pub fn remove_link(&mut self, parent: GroupId, name: &str) -> Result<()> {
        let links = match self.nodes.get_mut(parent.0).map(|n| &mut n.kind) {
            Some(NodeKind::Group { links }) => links,
            _ => return Err(Error::InvalidArgument(format!("{parent:?} is not a group"))),
        };
        let before = links.len();
        links.retain(|(n, _)| n != name);
        if links.len() == before {
            return Err(Error::NotFound(format!("link {name}")));
        }
        self.link_names.remove(&(parent.0, name.to_string()));
        Ok(())
    }

    /// Make attribute `name` of `obj` (already set) use the committed datatype
    /// `named`; the two datatypes must be equal.
    pub fn share_attr_datatype(
        &mut self,
        obj: impl Into<ObjectId>,
        name: &str,
        named: DatatypeId,
    ) -> Result<()> {
        let obj = obj.into();
        let dt = self.named_type(named)?.clone();
        let node = self
            .nodes
            .get_mut(obj.0)
            .ok_or_else(|| Error::InvalidArgument(format!("{obj:?} does not exist")))?;
        match node.attrs.iter().find(|(n, _)| n == name) {
            Some((_, v)) if v.dtype == dt => {}
            Some(_) => {
                return Err(Error::InvalidArgument(format!(
                    "attribute {name:?}: its datatype differs from the committed one"
                )))
            }
            None => return Err(Error::NotFound(format!("attribute {name}"))),
        }
        let types = &mut node.extra.attr_types;
        match types.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = named.0,
            None => types.push((name.to_string(), named.0)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_bits() {
        assert_eq!(CreationOrder::default().bits(), 0);
        assert_eq!(CreationOrder::TRACKED_INDEXED.bits(), 3);
        assert_eq!(CreationOrder::from_bits(1).bits(), 1);
        // indexed implies tracked
        assert_eq!(CreationOrder::from_bits(2).bits(), 3);
    }
}
