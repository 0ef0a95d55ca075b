//! A byte range of a remote object: the unit every fetch, plan and
//! [`Error::NeedBytes`](crate::Error::NeedBytes) speaks in.

/// `len` bytes at `offset` of a remote object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteRange {
    /// First byte.
    pub offset: u64,
    /// Number of bytes.
    pub len: u64,
}

impl ByteRange {
    /// `len` bytes at `offset`.
    pub fn new(offset: u64, len: u64) -> Self {
        ByteRange { offset, len }
    }

    /// One past the last byte, `None` on overflow.
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.len)
    }
}
