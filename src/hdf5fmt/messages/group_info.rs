//! Group info message (HDF5 File Format Specification IV.A.2.k), version 0,
//! decoded and encoded: link storage thresholds and size estimates of a
//! new-style group.

use crate::cursor::Cursor;
use crate::encode::put_u16;
use crate::error::Result;

/// A decoded group info message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct GroupInfo {
    /// Maximum number of links kept in compact storage (link messages) before switching to dense
    /// storage; present when flags bit 0 is set.
    pub max_compact: Option<u16>,
    /// Minimum number of links in dense storage before switching back to compact; present when
    /// flags bit 0 is set.
    pub min_dense: Option<u16>,
    /// Estimated number of entries in the group; present when flags bit 1 is set.
    pub est_entries: Option<u16>,
    /// Estimated length of an entry's name in bytes; present when flags bit 1 is set.
    pub est_name_len: Option<u16>,
}

impl GroupInfo {
    /// Decode a group info message body (version 0): each pair of values read only when its flag
    /// bit is set.
    pub fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        let version = c.u8()?;
        if version != 0 {
            return Err(c.unsupported(format!("group info version {version}")));
        }
        let flags = c.u8()?;
        let mut g = GroupInfo::default();
        if flags & 1 != 0 {
            g.max_compact = Some(c.u16()?);
            g.min_dense = Some(c.u16()?);
        }
        if flags & 2 != 0 {
            g.est_entries = Some(c.u16()?);
            g.est_name_len = Some(c.u16()?);
        }
        Ok(g)
    }

    /// Encode as a version 0 message: the phase-change values when both are
    /// given, the estimates when both are given (the default writes neither).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0, 0];
        if let (Some(a), Some(b)) = (self.max_compact, self.min_dense) {
            out[1] |= 1;
            put_u16(&mut out, a);
            put_u16(&mut out, b);
        }
        if let (Some(a), Some(b)) = (self.est_entries, self.est_name_len) {
            out[1] |= 2;
            put_u16(&mut out, a);
            put_u16(&mut out, b);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_round_trip() {
        assert_eq!(GroupInfo::default().encode(), vec![0, 0]);
        for g in [
            GroupInfo::default(),
            GroupInfo {
                max_compact: Some(8),
                min_dense: Some(6),
                est_entries: None,
                est_name_len: None,
            },
            GroupInfo {
                max_compact: Some(16),
                min_dense: Some(12),
                est_entries: Some(4),
                est_name_len: Some(20),
            },
        ] {
            let b = g.encode();
            assert_eq!(GroupInfo::decode(&mut Cursor::new(&b, 0, "gi")).unwrap(), g);
        }
    }

    #[test]
    fn decode() {
        let g = GroupInfo::decode(&mut Cursor::new(&[0, 1, 8, 0, 6, 0], 0, "gi")).unwrap();
        assert_eq!(g.max_compact, Some(8));
        assert_eq!(g.min_dense, Some(6));
        assert_eq!(g.est_entries, None);
        assert!(GroupInfo::decode(&mut Cursor::new(&[0, 3, 8, 0, 6, 0], 0, "gi")).is_err());
    }
}
