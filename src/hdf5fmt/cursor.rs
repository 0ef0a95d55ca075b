//! Bounded, overflow-checked little-endian reads over a borrowed byte slice.
//!
//! Every HDF5 structure is parsed through a [`Cursor`]: it knows the file offset of
//! its first byte and the name of the structure it reads, so each failure becomes an
//! [`Error`] that names both. Nothing here can panic on any input.

use crate::error::{Error, Result};

/// A read position inside `data`, which starts at file offset `base`.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    structure: &'static str,
}

impl<'a> Cursor<'a> {
    /// A cursor over `data`, whose first byte sits at file offset `base`.
    pub fn new(data: &'a [u8], base: u64, structure: &'static str) -> Self {
        Cursor {
            data,
            pos: 0,
            base,
            structure,
        }
    }

    /// The same bytes and position, reported under another structure name.
    pub fn named(mut self, structure: &'static str) -> Self {
        self.structure = structure;
        self
    }

    /// Name of the structure being parsed.
    pub fn structure(&self) -> &'static str {
        self.structure
    }

    /// File offset of the next byte to be read.
    pub fn offset(&self) -> u64 {
        self.base.saturating_add(self.pos as u64)
    }

    /// File offset of the first byte of the underlying slice.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Position relative to the start of the slice.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// True when nothing is left.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The whole underlying slice.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// An error of kind [`Error::Malformed`] at the current offset.
    pub fn malformed(&self, reason: impl std::fmt::Display) -> Error {
        Error::malformed(self.structure, self.offset(), reason)
    }

    /// An error of kind [`Error::Unsupported`] at the current offset.
    pub fn unsupported(&self, what: impl std::fmt::Display) -> Error {
        Error::unsupported(self.structure, self.offset(), what)
    }

    fn truncated(&self, needed: usize) -> Error {
        Error::Truncated {
            structure: self.structure,
            offset: self.offset(),
            needed: needed as u64,
            available: self.remaining() as u64,
        }
    }

    /// Move to `pos` (relative to the start of the slice); `pos == len` is allowed.
    pub fn seek(&mut self, pos: usize) -> Result<()> {
        if pos > self.data.len() {
            return Err(Error::Truncated {
                structure: self.structure,
                offset: self.base.saturating_add(pos as u64),
                needed: 0,
                available: 0,
            });
        }
        self.pos = pos;
        Ok(())
    }

    /// Skip `n` bytes.
    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.bytes(n).map(|_| ())
    }

    /// Borrow the next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or_else(|| self.truncated(n))?;
        match self.data.get(self.pos..end) {
            Some(s) => {
                self.pos = end;
                Ok(s)
            }
            None => Err(self.truncated(n)),
        }
    }

    /// Borrow the next `n` bytes where `n` came from the file as a `u64`.
    pub fn bytes_u64(&mut self, n: u64) -> Result<&'a [u8]> {
        let n = usize::try_from(n).map_err(|_| self.truncated(usize::MAX))?;
        self.bytes(n)
    }

    /// Borrow everything that is left.
    pub fn rest(&mut self) -> &'a [u8] {
        let s = self.data.get(self.pos..).unwrap_or(&[]);
        self.pos = self.data.len();
        s
    }

    /// A cursor over the next `n` bytes (same structure name), advancing past them.
    pub fn sub(&mut self, n: usize) -> Result<Cursor<'a>> {
        let base = self.offset();
        let data = self.bytes(n)?;
        Ok(Cursor::new(data, base, self.structure))
    }

    /// Read a fixed-size array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.bytes(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Ok(out)
    }

    /// Read one byte and advance; a truncation error when none is left.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    /// Read a 2-byte little-endian unsigned integer and advance.
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// Read a 4-byte little-endian unsigned integer and advance.
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// Read an 8-byte little-endian unsigned integer and advance.
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// Unsigned little-endian integer of `n` bytes, `n` in 0..=8.
    pub fn uint(&mut self, n: usize) -> Result<u64> {
        if n > 8 {
            return Err(self.malformed(format!("integer field of {n} bytes")));
        }
        let s = self.bytes(n)?;
        Ok(le_uint(s))
    }

    /// An address of `size` bytes; the all-ones "undefined address" becomes `None`.
    pub fn addr(&mut self, size: u8) -> Result<Option<u64>> {
        let n = usize::from(size);
        let v = self.uint(n)?;
        Ok(if is_undefined(v, n) { None } else { Some(v) })
    }

    /// A length of `size` bytes.
    pub fn length(&mut self, size: u8) -> Result<u64> {
        self.uint(usize::from(size))
    }

    /// Expect a 4-byte signature such as `b"OHDR"`.
    pub fn signature(&mut self, sig: &[u8; 4]) -> Result<()> {
        let at = self.offset();
        let got = self.array::<4>()?;
        if &got != sig {
            return Err(Error::malformed(
                self.structure,
                at,
                format!(
                    "bad signature {:?}, expected {:?}",
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(sig)
                ),
            ));
        }
        Ok(())
    }

    /// A NUL-terminated string (the NUL is consumed, not returned).
    pub fn cstr(&mut self) -> Result<&'a [u8]> {
        let rest = self.data.get(self.pos..).unwrap_or(&[]);
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                let s = self.bytes(n)?;
                self.pos += 1;
                Ok(s)
            }
            None => Err(self.malformed("string without NUL terminator")),
        }
    }

    /// Skip forward to the next multiple of `align` relative to the slice start.
    pub fn align(&mut self, align: usize) -> Result<()> {
        if align <= 1 {
            return Ok(());
        }
        let pad = (align - self.pos % align) % align;
        self.skip(pad)
    }
}

/// Little-endian unsigned value of up to 8 bytes (extra bytes are ignored).
pub fn le_uint(s: &[u8]) -> u64 {
    let mut v = 0u64;
    for (i, &b) in s.iter().take(8).enumerate() {
        v |= u64::from(b) << (8 * i);
    }
    v
}

/// True when `v` is the all-ones value of an `n`-byte field (HDF5's undefined address).
pub fn is_undefined(v: u64, n: usize) -> bool {
    if n == 0 {
        return false;
    }
    if n >= 8 {
        v == u64::MAX
    } else {
        v == (1u64 << (8 * n)) - 1
    }
}

/// `a + b`, or an [`Error::Overflow`] naming what was being computed.
pub fn add(
    a: u64,
    b: u64,
    structure: &'static str,
    offset: u64,
    what: &'static str,
) -> Result<u64> {
    a.checked_add(b).ok_or(Error::Overflow {
        structure,
        offset,
        what,
    })
}

/// `a * b`, or an [`Error::Overflow`] naming what was being computed.
pub fn mul(
    a: u64,
    b: u64,
    structure: &'static str,
    offset: u64,
    what: &'static str,
) -> Result<u64> {
    a.checked_mul(b).ok_or(Error::Overflow {
        structure,
        offset,
        what,
    })
}

/// Convert a file-supplied size to `usize`, refusing anything above `limit`.
pub fn bounded(
    value: u64,
    limit: u64,
    structure: &'static str,
    offset: u64,
    what: &'static str,
) -> Result<usize> {
    if value > limit {
        return Err(Error::Limit {
            structure,
            offset,
            what,
            value,
            limit,
        });
    }
    usize::try_from(value).map_err(|_| Error::Overflow {
        structure,
        offset,
        what,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_bounds() {
        let data = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 0xff, 0xff];
        let mut c = Cursor::new(&data, 100, "test");
        assert_eq!(c.u8().unwrap(), 1);
        assert_eq!(c.u16().unwrap(), 0x0302);
        assert_eq!(c.offset(), 103);
        assert_eq!(c.uint(3).unwrap(), 0x060504);
        let e = c.u64().unwrap_err();
        match e {
            Error::Truncated {
                offset,
                needed,
                available,
                ..
            } => {
                assert_eq!((offset, needed, available), (106, 8, 5));
            }
            other => panic!("unexpected {other:?}"),
        }
        c.seek(9).unwrap();
        assert_eq!(c.addr(2).unwrap(), None);
        assert!(c.seek(12).is_err());
        assert!(c.bytes(usize::MAX).is_err());
    }

    #[test]
    fn cstr_and_signature() {
        let data = b"OHDRab\0c";
        let mut c = Cursor::new(data, 0, "t");
        c.signature(b"OHDR").unwrap();
        assert_eq!(c.cstr().unwrap(), b"ab");
        assert!(c.cstr().is_err());
        let mut c = Cursor::new(data, 0, "t");
        assert!(c.signature(b"TREE").is_err());
    }

    #[test]
    fn undefined_address() {
        assert!(is_undefined(0xffff_ffff, 4));
        assert!(!is_undefined(0xffff_fffe, 4));
        assert!(is_undefined(u64::MAX, 8));
    }
}
