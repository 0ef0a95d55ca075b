//! Settings a writer node keeps besides its value: link and attribute
//! creation order ([`CreationOrder`]) and the committed datatypes of its
//! attributes.

/// Creation-order flags of a group's links or of an object's attributes
/// (libhdf5's `H5P_CRT_ORDER_TRACKED` / `H5P_CRT_ORDER_INDEXED`). Indexed
/// implies tracked. Tracked links and attributes are numbered in the order
/// they were added to the writer, so libhdf5 (and h5py) list them in that order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreationOrder {
    /// Creation order is tracked: each link or attribute records its creation order.
    pub tracked: bool,
    /// Creation order is indexed: a v2 B-tree orders the links or attributes by creation order
    /// (implies `tracked`).
    pub indexed: bool,
}

impl CreationOrder {
    /// Both tracked and indexed (what h5py's `track_order=True` asks for).
    pub const TRACKED_INDEXED: CreationOrder = CreationOrder {
        tracked: true,
        indexed: true,
    };

    /// From libhdf5's flag bits (1 tracked, 2 indexed).
    pub fn from_bits(bits: u8) -> Self {
        CreationOrder {
            tracked: bits & 3 != 0,
            indexed: bits & 2 != 0,
        }
    }

    /// libhdf5's flag bits (1 tracked, 2 indexed).
    pub fn bits(self) -> u8 {
        match (self.tracked || self.indexed, self.indexed) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => 3,
        }
    }
}

/// Per-object settings kept beside a writer node.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeExtra {
    /// Creation-order flag bits of the group's links.
    pub link_order: u8,
    /// Creation-order flag bits of the object's attributes.
    pub attr_order: u8,
    /// Attributes whose datatype is a committed datatype: (name, its node).
    pub attr_types: Vec<(String, usize)>,
}
