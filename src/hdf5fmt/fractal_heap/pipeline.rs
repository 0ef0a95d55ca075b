//! The I/O filter information of a filtered fractal heap: an encoded "Filter
//! Pipeline Message" (HDF5 File Format Specification IV.A.2.l, versions 1 and 2)
//! embedded in the heap header. A minimal decoder, private to the heap.

use crate::error::Result;
use crate::filters::FilterSpec;
use crate::hdf5fmt::cursor::Cursor;

/// Most filters in one pipeline (libhdf5's H5Z_MAX_NFILTERS).
const MAX_FILTERS: u8 = 32;

/// Decode an encoded filter pipeline message.
pub fn parse_filter_pipeline(mut c: Cursor<'_>) -> Result<Vec<FilterSpec>> {
    let version = c.u8()?;
    let n = c.u8()?;
    if n > MAX_FILTERS {
        return Err(c.malformed(format!("{n} filters")));
    }
    match version {
        1 => c.skip(6)?,
        2 => {}
        v => return Err(c.unsupported(format!("filter pipeline version {v}"))),
    }
    let mut out = Vec::with_capacity(usize::from(n));
    for _ in 0..n {
        let id = c.u16()?;
        let name_len = if version == 1 || id >= 256 {
            c.u16()?
        } else {
            0
        };
        let flags = c.u16()?;
        let ncd = c.u16()?;
        let name = if name_len > 0 {
            let raw = c.bytes(usize::from(name_len))?;
            if version == 1 {
                let pad = (8 - usize::from(name_len) % 8) % 8;
                c.skip(pad)?;
            }
            let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
            Some(String::from_utf8_lossy(raw.get(..end).unwrap_or(raw)).into_owned())
        } else {
            None
        };
        let mut cd_values = Vec::with_capacity(usize::from(ncd).min(256));
        for _ in 0..ncd {
            cd_values.push(c.u32()?);
        }
        if version == 1 && ncd % 2 == 1 {
            c.skip(4)?;
        }
        out.push(FilterSpec {
            id: u32::from(id),
            flags,
            cd_values,
            name,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_one_and_two() {
        // v2: deflate level 6, no name.
        let v2 = [2u8, 1, 1, 0, 0, 0, 1, 0, 6, 0, 0, 0];
        let p = parse_filter_pipeline(Cursor::new(&v2, 0, "t")).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].id, p[0].cd_values.clone(), p[0].name.clone()),
            (1, vec![6], None)
        );
        // v1: deflate with name "deflate" (8 bytes incl. NUL), one cd value + pad.
        let mut v1 = vec![1u8, 1, 0, 0, 0, 0, 0, 0];
        v1.extend_from_slice(&[1, 0, 8, 0, 0, 0, 1, 0]);
        v1.extend_from_slice(b"deflate\0");
        v1.extend_from_slice(&[4, 0, 0, 0, 0, 0, 0, 0]);
        let p = parse_filter_pipeline(Cursor::new(&v1, 0, "t")).unwrap();
        assert_eq!(p[0].name.as_deref(), Some("deflate"));
        assert_eq!(p[0].cd_values, vec![4]);
        assert!(parse_filter_pipeline(Cursor::new(&v1[..20], 0, "t")).is_err());
        assert!(parse_filter_pipeline(Cursor::new(&[3u8, 0], 0, "t")).is_err());
    }
}
