//! Handles of the objects a [`FileWriter`](super::FileWriter) builds: groups,
//! datasets, committed datatypes, and any of them as an attribute carrier.

/// Handle of a group in a [`FileWriter`](super::FileWriter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GroupId(pub(super) usize);

/// Handle of a dataset in a [`FileWriter`](super::FileWriter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DatasetId(pub(super) usize);

/// Handle of a committed (named) datatype in a [`FileWriter`](super::FileWriter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DatatypeId(pub(super) usize);

impl From<DatatypeId> for ObjectId {
    fn from(t: DatatypeId) -> Self {
        ObjectId(t.0)
    }
}

/// Any object that can carry attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjectId(pub(super) usize);

impl From<GroupId> for ObjectId {
    fn from(g: GroupId) -> Self {
        ObjectId(g.0)
    }
}

impl From<DatasetId> for ObjectId {
    fn from(d: DatasetId) -> Self {
        ObjectId(d.0)
    }
}
