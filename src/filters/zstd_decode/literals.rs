//! Literals section of a compressed block, RFC 8878 §3.1.1.3.1: the section
//! header (§3.1.1.3.1.1) and the raw, RLE, Huffman-compressed and treeless
//! (previous Huffman table) literals.

use super::huffman::HufTable;
use super::{corrupt, Result, BLOCK_MAX};

/// Where a block's literals are, once the section is read.
pub(crate) enum Literals {
    /// Raw literals: `src[start..start + len]` of the block.
    Raw { start: usize, len: usize },
    /// Decoded into the scratch buffer (RLE or Huffman), `len` bytes.
    Buffer { len: usize },
}

/// Parse the literals section at the start of `block`; decoded literals go to
/// `buf`. Returns the literals and the section's size in bytes.
pub(crate) fn read(
    block: &[u8],
    huf: &mut HufTable,
    buf: &mut Vec<u8>,
    offset: usize,
) -> Result<(Literals, usize)> {
    let b0 = *block
        .first()
        .ok_or_else(|| corrupt(offset, "empty compressed block"))?;
    let kind = b0 & 3;
    let format = (b0 >> 2) & 3;
    let byte = |i: usize| -> Result<u32> {
        block
            .get(i)
            .map(|&b| u32::from(b))
            .ok_or_else(|| corrupt(offset, "truncated literals section header"))
    };
    if kind < 2 {
        let (hlen, size) = match format {
            0 | 2 => (1usize, (b0 >> 3) as usize),
            1 => (2, ((u32::from(b0) >> 4) | (byte(1)? << 4)) as usize),
            _ => (
                3,
                ((u32::from(b0) >> 4) | (byte(1)? << 4) | (byte(2)? << 12)) as usize,
            ),
        };
        if size > BLOCK_MAX {
            return Err(corrupt(offset, format!("{size} literals exceed 128 KiB")));
        }
        if kind == 0 {
            if block.len() < hlen + size {
                return Err(corrupt(offset, "raw literals run past the block"));
            }
            return Ok((
                Literals::Raw {
                    start: hlen,
                    len: size,
                },
                hlen + size,
            ));
        }
        let &v = block
            .get(hlen)
            .ok_or_else(|| corrupt(offset, "missing RLE literal byte"))?;
        if buf.len() < size + super::SLACK {
            buf.resize(size + super::SLACK, 0);
        }
        buf[..size].fill(v);
        return Ok((Literals::Buffer { len: size }, hlen + 1));
    }
    let (hlen, bits, four) = match format {
        0 => (3usize, 10u32, false),
        1 => (3, 10, true),
        2 => (4, 14, true),
        _ => (5, 18, true),
    };
    let mut h: u64 = 0;
    for i in 0..hlen {
        h |= u64::from(byte(i)?) << (8 * i);
    }
    let mask = (1u64 << bits) - 1;
    let size = ((h >> 4) & mask) as usize;
    let csize = ((h >> (4 + bits)) & mask) as usize;
    if size > BLOCK_MAX {
        return Err(corrupt(offset, format!("{size} literals exceed 128 KiB")));
    }
    let body = block
        .get(hlen..hlen + csize)
        .ok_or_else(|| corrupt(offset, "compressed literals run past the block"))?;
    let mut at = 0usize;
    if kind == 2 {
        at = huf.read(body, offset + hlen)?;
    } else if !huf.valid {
        return Err(corrupt(
            offset,
            "treeless literals without a previous Huffman table",
        ));
    }
    let streams = &body[at..];
    if buf.len() < size + super::SLACK {
        buf.resize(size + super::SLACK, 0);
    }
    let out = &mut buf[..size];
    let o = offset + hlen + at;
    if four {
        huf.decode_4_auto(streams, out, o)?;
    } else {
        huf.decode_stream(streams, out, o)?;
    }
    Ok((Literals::Buffer { len: size }, hlen + csize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_rle_headers() {
        let mut huf = HufTable::new();
        let mut buf = Vec::new();
        // Raw, 1-byte header, 3 literals.
        let blk = [3 << 3, b'a', b'b', b'c', 0xFF];
        match read(&blk, &mut huf, &mut buf, 0).unwrap() {
            (Literals::Raw { start: 1, len: 3 }, 4) => {}
            _ => panic!("wrong raw parse"),
        }
        // RLE, 2-byte header (format 1): size = (b0 >> 4) | b1 << 4 = 5 | 2 << 4 = 37.
        let blk = [0x01 | (1 << 2) | (5 << 4), 2, b'z'];
        let (lit, used) = read(&blk, &mut huf, &mut buf, 0).unwrap();
        assert_eq!(used, 3);
        assert!(matches!(lit, Literals::Buffer { len: 37 }));
        assert!(buf[..37].iter().all(|&b| b == b'z'));
        // Treeless without a table is refused.
        assert!(read(&[0x03, 0, 0, 0], &mut huf, &mut buf, 0).is_err());
    }
}
