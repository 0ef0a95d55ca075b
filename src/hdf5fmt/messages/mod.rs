//! Object header messages (HDF5 File Format Specification IV.A.2): one file per
//! message type, each decoding the message body into a plain value and, for
//! the messages the writer emits, encoding it beside the decoder; one table of
//! message type numbers ([`types`]) for the reader and the writer.

pub mod attribute;
pub mod attribute_info;
pub mod continuation;
pub mod dataspace;
pub mod datatype;
pub mod external_files;
pub mod fill_value;
pub mod filter_pipeline;
pub mod group_info;
pub mod index_info;
pub mod layout;
pub mod link;
pub mod link_info;
pub mod refcount;
pub mod shared;
pub mod symbol_table;

/// Message type numbers (IV.A.2.a–y): the one table the reader's dispatch and
/// the writer's encoders both use. Version 1 headers store them in 16 bits,
/// version 2 headers in 8 (every defined type fits).
pub mod types {
    /// NIL message: an unused span of the header whose bytes are ignored (free space in the
    /// header).
    pub const NIL: u16 = 0x00;
    /// Dataspace message: the rank and the current and maximum dimension sizes of a dataset or
    /// attribute.
    pub const DATASPACE: u16 = 0x01;
    /// Link Info message: the indexes (fractal heap, name and creation-order B-trees) of a
    /// new-style group's links.
    pub const LINK_INFO: u16 = 0x02;
    /// Datatype message: the element type of a dataset or attribute.
    pub const DATATYPE: u16 = 0x03;
    /// Fill Value (Old) message: the fill value alone, from HDF5 versions before 1.6.
    pub const FILL_VALUE_OLD: u16 = 0x04;
    /// Fill Value message: allocation and fill times and the optional fill value of a dataset.
    pub const FILL_VALUE: u16 = 0x05;
    /// Link message: one link (hard, soft or external) of a compact new-style group.
    pub const LINK: u16 = 0x06;
    /// External Data Files message: the files, offsets and sizes holding a dataset's raw data
    /// outside this file.
    pub const EXTERNAL_FILES: u16 = 0x07;
    /// Data Layout message: how and where a dataset's raw data is stored (compact, contiguous,
    /// chunked or virtual).
    pub const LAYOUT: u16 = 0x08;
    /// Bogus message: a type used only by libhdf5's tests; readers treat it as unknown.
    pub const BOGUS: u16 = 0x09;
    /// Group Info message: link-count and name-length tuning for a new-style group (compact/dense
    /// thresholds, estimates).
    pub const GROUP_INFO: u16 = 0x0A;
    /// Data Storage - Filter Pipeline message: the filters applied to each chunk of a dataset.
    pub const FILTER_PIPELINE: u16 = 0x0B;
    /// Attribute message: one attribute stored in the object header (name, datatype, dataspace and
    /// value).
    pub const ATTRIBUTE: u16 = 0x0C;
    /// Object Comment message: a null-terminated ASCII comment on the object.
    pub const COMMENT: u16 = 0x0D;
    /// Object Modification Time (Old) message: the modification time as ASCII digits, from before
    /// 1.6.
    pub const MTIME_OLD: u16 = 0x0E;
    /// Shared Message Table message (superblock extension only): the address and index count of the
    /// shared object header message table.
    pub const SHARED_MSG_TABLE: u16 = 0x0F;
    /// Object Header Continuation message: the address and length of the next block of header
    /// messages.
    pub const CONTINUATION: u16 = 0x10;
    /// Symbol Table message: the v1 B-tree and local heap addresses of an old-style group.
    pub const SYMBOL_TABLE: u16 = 0x11;
    /// Object Modification Time message: seconds since the UNIX epoch, 32 bits.
    pub const MTIME: u16 = 0x12;
    /// B-tree 'K' Values message (superblock extension only): the file's v1 B-tree node sizes when
    /// not the defaults.
    pub const BTREE_K: u16 = 0x13;
    /// Driver Info message (superblock extension only): information for the file driver that wrote
    /// the file.
    pub const DRIVER_INFO: u16 = 0x14;
    /// Attribute Info message: the indexes (fractal heap, name and creation-order B-trees) of dense
    /// attribute storage.
    pub const ATTRIBUTE_INFO: u16 = 0x15;
    /// Object Reference Count message: the object's hard link count when it is more than one (v2
    /// headers).
    pub const REFCOUNT: u16 = 0x16;
    /// File Space Info message (superblock extension only): the file space management strategy and
    /// its settings.
    pub const FSINFO: u16 = 0x17;
    /// Metadata cache image message (superblock extension only, libhdf5 1.10 and later): the
    /// address and length of the cache image block.
    pub const MDC_IMAGE: u16 = 0x18;
}

/// Every defined message type with its short name, as `make_expected.py`
/// spells it.
const NAMES: [(u16, &str); 25] = [
    (types::NIL, "nil"),
    (types::DATASPACE, "dataspace"),
    (types::LINK_INFO, "link_info"),
    (types::DATATYPE, "datatype"),
    (types::FILL_VALUE_OLD, "fill_value_old"),
    (types::FILL_VALUE, "fill_value"),
    (types::LINK, "link"),
    (types::EXTERNAL_FILES, "external_files"),
    (types::LAYOUT, "layout"),
    (types::BOGUS, "bogus"),
    (types::GROUP_INFO, "group_info"),
    (types::FILTER_PIPELINE, "filter_pipeline"),
    (types::ATTRIBUTE, "attribute"),
    (types::COMMENT, "comment"),
    (types::MTIME_OLD, "mtime_old"),
    (types::SHARED_MSG_TABLE, "shared_msg_table"),
    (types::CONTINUATION, "continuation"),
    (types::SYMBOL_TABLE, "symbol_table"),
    (types::MTIME, "mtime"),
    (types::BTREE_K, "btree_k"),
    (types::DRIVER_INFO, "driver_info"),
    (types::ATTRIBUTE_INFO, "attribute_info"),
    (types::REFCOUNT, "refcount"),
    (types::FSINFO, "fsinfo"),
    (types::MDC_IMAGE, "mdc_image"),
];

/// The short name of a message type, as `make_expected.py` spells it
/// (`"msgN"` for numbers the specification does not name).
pub fn message_name(mtype: u16) -> String {
    NAMES
        .iter()
        .find(|(t, _)| *t == mtype)
        .map(|(_, n)| (*n).to_string())
        .unwrap_or_else(|| format!("msg{mtype}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(message_name(types::SYMBOL_TABLE), "symbol_table");
        assert_eq!(message_name(types::FILL_VALUE_OLD), "fill_value_old");
        assert_eq!(message_name(40), "msg40");
    }
}

#[cfg(test)]
mod fuzz {
    use crate::cursor::Cursor;
    use crate::Sizes;
    use proptest::prelude::*;

    proptest! {
        /// Every message decoder returns a value or an error on any bytes.
        #[test]
        fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let s = Sizes::default();
            let c = || Cursor::new(&bytes, 0, "fuzz");
            let _ = super::dataspace::Dataspace::decode(&mut c(), s);
            let _ = super::datatype::decode(&mut c());
            let _ = super::fill_value::decode(&mut c());
            let _ = super::fill_value::decode_old(&mut c());
            let _ = super::layout::Layout::decode(&mut c(), s);
            let _ = super::filter_pipeline::decode(&mut c());
            let _ = super::link::LinkMessage::decode(&mut c(), s);
            let _ = super::link_info::LinkInfo::decode(&mut c(), s);
            let _ = super::attribute_info::AttributeInfo::decode(&mut c(), s);
            let _ = super::group_info::GroupInfo::decode(&mut c());
            let _ = super::external_files::ExternalFiles::decode(&mut c(), s);
            let _ = super::shared::SharedRef::decode(&mut c(), s);
            let _ = super::symbol_table::SymbolTableEntry::decode(&mut c(), s);
            let _ = super::refcount::decode(&mut c());
            let none = |_: u16, _: &super::shared::SharedRef| -> crate::Result<Vec<u8>> {
                Err(crate::Error::NotFound("x".into()))
            };
            let _ = super::attribute::AttributeMessage::decode(&mut c(), s, &none);
        }

        /// Datatype messages with a valid header but random properties.
        #[test]
        fn datatype_random_properties(class in 0u8..12, version in 1u8..5, bits in any::<[u8; 3]>(),
                                      size in 0u32..64, rest in proptest::collection::vec(any::<u8>(), 0..128)) {
            let mut b = vec![class | (version << 4)];
            b.extend_from_slice(&bits);
            b.extend_from_slice(&size.to_le_bytes());
            b.extend_from_slice(&rest);
            let _ = super::datatype::decode(&mut Cursor::new(&b, 0, "fuzz"));
        }
    }
}
