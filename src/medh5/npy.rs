//! NumPy `.npy` files (format versions 1.0–3.0): the exchange format of `h5 cat`
//! and of `medh5 create` manifests. Reading is bounded and never panics.

use std::io::Write;

use purehdf::{Error, Result};

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// A parsed `.npy` header plus where its data starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// numpy dtype string, e.g. `<i2`, `|u1`, `<f4`.
    pub descr: String,
    /// True when the data is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// Array dimensions as the header declares them (empty for a scalar).
    pub shape: Vec<u64>,
    /// Byte offset of the first data byte.
    pub data_offset: usize,
}

impl NpyHeader {
    /// Number of elements.
    pub fn len(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Size of one element from the descr (`<i2` → 2), for simple dtypes.
    pub fn item_size(&self) -> Option<u64> {
        simple_item_size(&self.descr)
    }
}

/// Size of a simple numpy dtype string such as `<f8`, `|b1`, `|S10`.
pub fn simple_item_size(descr: &str) -> Option<u64> {
    let body = descr.trim_start_matches(['<', '>', '|', '=']);
    let digits: String = body
        .chars()
        .skip_while(|c| c.is_ascii_alphabetic())
        .collect();
    digits.parse().ok()
}

fn bad(reason: impl std::fmt::Display) -> Error {
    Error::malformed("npy header", 0, reason)
}

/// Parse the header of a `.npy` file held in `bytes`.
pub fn parse_header(bytes: &[u8]) -> Result<NpyHeader> {
    if bytes.get(..6) != Some(MAGIC.as_slice()) {
        return Err(bad("not a .npy file (bad magic)"));
    }
    let major = *bytes.get(6).ok_or_else(|| bad("truncated"))?;
    let (len, start) = match major {
        1 => {
            let b = bytes.get(8..10).ok_or_else(|| bad("truncated"))?;
            (usize::from(u16::from_le_bytes([b[0], b[1]])), 10usize)
        }
        2 | 3 => {
            let b = bytes.get(8..12).ok_or_else(|| bad("truncated"))?;
            let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            (
                usize::try_from(n).map_err(|_| bad("header length"))?,
                12usize,
            )
        }
        v => return Err(bad(format!("unsupported .npy version {v}"))),
    };
    if len > 1 << 20 {
        return Err(bad("header longer than 1 MiB"));
    }
    let end = start.checked_add(len).ok_or_else(|| bad("header length"))?;
    let text = bytes
        .get(start..end)
        .ok_or_else(|| bad("truncated header"))?;
    let text = std::str::from_utf8(text).map_err(|_| bad("header is not UTF-8"))?;
    let descr = dict_value(text, "descr")
        .and_then(|v| v.strip_prefix('\'').and_then(|v| v.split('\'').next()))
        .ok_or_else(|| bad("no simple 'descr' in header"))?
        .to_string();
    let fortran_order = dict_value(text, "fortran_order")
        .map(|v| v.starts_with("True"))
        .ok_or_else(|| bad("no 'fortran_order' in header"))?;
    let shape_txt = dict_value(text, "shape")
        .and_then(|v| v.strip_prefix('('))
        .and_then(|v| v.split(')').next())
        .ok_or_else(|| bad("no 'shape' in header"))?;
    let mut shape = Vec::new();
    for part in shape_txt
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        shape.push(
            part.trim_end_matches('L')
                .parse::<u64>()
                .map_err(|_| bad("bad shape"))?,
        );
    }
    Ok(NpyHeader {
        descr,
        fortran_order,
        shape,
        data_offset: end,
    })
}

/// The text after `'key':` in a Python dict literal, whitespace trimmed.
fn dict_value<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let pat = format!("'{key}':");
    let at = text.find(&pat)? + pat.len();
    Some(text.get(at..)?.trim_start())
}

/// Read a whole `.npy` file: header and a borrowed slice of its C-order data.
pub fn read(bytes: &[u8]) -> Result<(NpyHeader, &[u8])> {
    let h = parse_header(bytes)?;
    let n = data_len(&h)?;
    let end = h
        .data_offset
        .checked_add(n)
        .ok_or_else(|| bad("data size overflows"))?;
    let data = bytes
        .get(h.data_offset..end)
        .ok_or_else(|| bad("data shorter than the shape says"))?;
    Ok((h, data))
}

/// Bytes of array data a (C-order) header announces.
fn data_len(h: &NpyHeader) -> Result<usize> {
    if h.fortran_order && h.shape.len() > 1 {
        return Err(Error::unsupported("npy header", 0, "Fortran-order arrays"));
    }
    let item = h
        .item_size()
        .ok_or_else(|| bad(format!("unsupported dtype {}", h.descr)))?;
    h.len()
        .and_then(|n| n.checked_mul(item))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| bad("data size overflows"))
}

/// Read a `.npy` file: its header, then the array data straight into a
/// buffer of its size (no copy of the whole file, no zero-filled buffer).
pub fn read_file(path: &std::path::Path) -> Result<(NpyHeader, Vec<u8>)> {
    use std::io::Read;
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => bad("truncated"),
        _ => Error::io("read", e),
    };
    let mut f = std::fs::File::open(path).map_err(io)?;
    let mut head = vec![0u8; 12];
    f.read_exact(&mut head).map_err(io)?;
    let (len, start) = match head[6] {
        1 => (usize::from(u16::from_le_bytes([head[8], head[9]])), 10),
        _ => (
            u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize,
            12,
        ),
    };
    if len > 1 << 20 || start + len < head.len() {
        return Err(bad("header length out of range"));
    }
    head.resize(start + len, 0);
    f.read_exact(&mut head[12..]).map_err(io)?;
    let h = parse_header(&head)?;
    let n = data_len(&h)?;
    let mut data = Vec::new();
    data.try_reserve_exact(n)
        .map_err(|_| bad("data does not fit in memory"))?;
    f.take(n as u64).read_to_end(&mut data).map_err(io)?;
    if data.len() != n {
        return Err(bad("data shorter than the shape says"));
    }
    Ok((h, data))
}

/// Write a C-order array as `.npy` version 1.0 (2.0 when the header needs it).
pub fn write(w: &mut dyn Write, descr: &str, shape: &[u64], data: &[u8]) -> std::io::Result<()> {
    let shape_txt = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_txt}, }}");
    // Total header (magic + version + length + dict + padding + newline) is a multiple of 64.
    let v1 = dict.len() + 1 + 10 < 65_536;
    let prefix = if v1 { 10 } else { 12 };
    let unpadded = prefix + dict.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    let hlen = dict.len() + pad + 1;
    w.write_all(MAGIC)?;
    if v1 {
        w.write_all(&[1, 0])?;
        w.write_all(&(hlen as u16).to_le_bytes())?;
    } else {
        w.write_all(&[2, 0])?;
        w.write_all(&(hlen as u32).to_le_bytes())?;
    }
    w.write_all(dict.as_bytes())?;
    w.write_all(&vec![b' '; pad])?;
    w.write_all(b"\n")?;
    w.write_all(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let data: Vec<u8> = (0u16..24).flat_map(|v| v.to_le_bytes()).collect();
        let mut buf = Vec::new();
        write(&mut buf, "<i2", &[2, 3, 4], &data).unwrap();
        let (h, d) = read(&buf).unwrap();
        assert_eq!(h.descr, "<i2");
        assert_eq!(h.shape, vec![2, 3, 4]);
        assert_eq!(h.data_offset % 64, 0);
        assert_eq!(buf.len(), h.data_offset + 48);
        assert_eq!(d, &data[..]);
    }

    #[test]
    fn numpy_written_header() {
        // Header as numpy 1.26/2.x writes it for np.zeros((5,), '<f4').
        let mut buf = Vec::new();
        buf.extend_from_slice(b"\x93NUMPY\x01\x00v\x00");
        let mut dict = b"{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }".to_vec();
        while !(10 + dict.len() + 1).is_multiple_of(64) {
            dict.push(b' ');
        }
        dict.push(b'\n');
        buf.extend_from_slice(&dict);
        buf.extend_from_slice(&[0u8; 20]);
        let (h, d) = read(&buf).unwrap();
        assert_eq!(
            (h.shape.clone(), h.item_size(), d.len()),
            (vec![5], Some(4), 20)
        );
        let (h, _) = read(&{
            let mut b = Vec::new();
            write(&mut b, "<f8", &[], &[0; 8]).unwrap();
            b
        })
        .unwrap();
        assert!(h.shape.is_empty());
    }

    #[test]
    fn rejects_garbage() {
        assert!(read(b"").is_err());
        assert!(read(b"\x93NUMPY\x09\x00").is_err());
        assert!(read(b"\x93NUMPY\x01\x00\xff\xff{").is_err());
        let mut b = Vec::new();
        write(&mut b, "<i4", &[10], &[0; 40]).unwrap();
        b.truncate(b.len() - 1);
        assert!(read(&b).is_err());
    }
}
