//! JPEG 2000 streams inside Blosc2 chunks (user codecs 36 OpenHTJ2K, 37 Grok,
//! 39 J2K, 40 HTJ2K): each block is a JP2 file or a raw codestream, decoded to
//! native 8- or 16-bit little-endian samples by `openjp2`, the pure-Rust port
//! of OpenJPEG (cargo feature `jpeg2000`), whose output equals Grok's.
//!
//! Without the feature these codec ids stay an [`Error::UnsupportedCodec`].
//! The JP2 header is checked against the block size before any sample is
//! decoded, so a hostile header cannot make the decoder allocate more than the
//! chunk's own (already bounded) size.

use crate::error::{Error, Result};

/// Blosc2 user-codec ids whose streams are JPEG 2000 images.
pub const CODECS: [u8; 4] = [36, 37, 39, 40];

/// Is `codec` one of the JPEG 2000 user codecs ([`CODECS`])?
pub fn is_jpeg2000(codec: u8) -> bool {
    CODECS.contains(&codec)
}

/// Can this build decode `codec` (feature `jpeg2000` and a JPEG 2000 id)?
pub fn decodable(codec: u8) -> bool {
    cfg!(feature = "jpeg2000") && is_jpeg2000(codec)
}

#[cfg(feature = "jpeg2000")]
fn fail(filter: &str, what: impl std::fmt::Display) -> Error {
    Error::filter(0, filter, format!("jpeg2000: {what}"))
}

#[cfg(feature = "jpeg2000")]
/// Find the codestream: a raw one (`FF 4F FF 51`) or the `jp2c` box of a JP2
/// file. `None` when neither is there.
fn codestream(data: &[u8]) -> Option<&[u8]> {
    if data.starts_with(&[0xFF, 0x4F, 0xFF, 0x51]) {
        return Some(data);
    }
    let mut pos = 0usize;
    while pos.checked_add(8)? <= data.len() {
        let len = u32::from_be_bytes(data[pos..pos + 4].try_into().ok()?) as u64;
        let kind = &data[pos + 4..pos + 8];
        let (head, len) = match len {
            0 => (8, (data.len() - pos) as u64),
            1 => {
                let x = data.get(pos + 8..pos + 16)?;
                (16, u64::from_be_bytes(x.try_into().ok()?))
            }
            n => (8, n),
        };
        let len = usize::try_from(len).ok()?;
        if len < head {
            return None;
        }
        let end = pos.checked_add(len)?;
        if kind == b"jp2c" {
            return data.get(pos + head..end.min(data.len()));
        }
        pos = end;
    }
    None
}

#[cfg(feature = "jpeg2000")]
/// The `Ssiz` bytes (sign bit 0x80, precision − 1 below it) of every
/// component in the codestream's SIZ segment.
fn component_sizes(cs: &[u8]) -> Option<&[u8]> {
    // SOC, SIZ marker, Lsiz, Rsiz (8 bytes), 8 × 4 bytes of sizes and
    // offsets, then Csiz and (Ssiz, XRsiz, YRsiz) per component.
    let n = usize::from(u16::from_be_bytes(cs.get(40..42)?.try_into().ok()?));
    cs.get(42..42 + 3 * n)
}

#[cfg(feature = "jpeg2000")]
/// Image width and height from the SIZ segment (`Xsiz − XOsiz`, `Ysiz − YOsiz`).
fn image_size(cs: &[u8]) -> Option<(u64, u64)> {
    let be = |at: usize| -> Option<u64> {
        Some(u64::from(u32::from_be_bytes(
            cs.get(at..at + 4)?.try_into().ok()?,
        )))
    };
    Some((be(8)?.checked_sub(be(16)?)?, be(12)?.checked_sub(be(20)?)?))
}

/// Decode one JPEG 2000 block of user codec `codec` into exactly `out.len()`
/// bytes of `typesize`-byte little-endian unsigned samples (components
/// interleaved). The decoder is `openjp2`, the pure-Rust port of OpenJPEG,
/// whose output equals Grok's (the reconstruction rules are the same).
#[cfg(feature = "jpeg2000")]
pub fn decode_into(
    codec: u8,
    src: &[u8],
    typesize: usize,
    out: &mut [u8],
    filter: &str,
) -> Result<()> {
    if !is_jpeg2000(codec) {
        return Err(unsupported(codec, filter));
    }
    let cs = codestream(src).ok_or_else(|| fail(filter, "no JPEG 2000 codestream"))?;
    let sizes = component_sizes(cs).ok_or_else(|| fail(filter, "truncated SIZ segment"))?;
    let (w, h) = image_size(cs).ok_or_else(|| fail(filter, "bad SIZ image size"))?;
    let comps = sizes.len() / 3;
    if comps == 0 {
        return Err(fail(filter, "no components"));
    }
    for ssiz in sizes.iter().step_by(3) {
        if ssiz & 0x80 != 0 {
            return Err(Error::unsupported(
                "JPEG 2000 codestream",
                0,
                "signed components",
            ));
        }
        let precision = (ssiz & 0x7F) + 1;
        let want = if precision <= 8 { 1 } else { 2 };
        if precision > 16 || want != typesize {
            return Err(Error::unsupported(
                "JPEG 2000 codestream",
                0,
                format!("{precision}-bit components in a chunk of {typesize}-byte elements"),
            ));
        }
    }
    // Checked before decoding: the image must fill the block exactly, so a
    // hostile header cannot make the decoder allocate beyond the chunk size.
    let samples = w.checked_mul(h).and_then(|n| n.checked_mul(comps as u64));
    if samples.and_then(|n| n.checked_mul(typesize as u64)) != Some(out.len() as u64) {
        return Err(fail(
            filter,
            format!(
                "{w}x{h}x{comps} image of {typesize}-byte samples does not fill a {}-byte block",
                out.len()
            ),
        ));
    }
    let n = (w * h) as usize;
    // A panic inside the decoder on a hostile stream becomes a typed error.
    let planes = std::panic::catch_unwind(|| -> Result<Vec<Vec<i32>>> {
        let img = jpeg2k::Image::from_bytes(src).map_err(|e| fail(filter, e))?;
        let cs = img.components();
        if cs.len() != comps || cs.iter().any(|c| c.data().len() != n) {
            return Err(fail(filter, "decoded components do not match the header"));
        }
        Ok(cs.iter().map(|c| c.data().to_vec()).collect())
    })
    .map_err(|_| fail(filter, "decoder panicked on this stream"))??;
    let max = if typesize == 1 { 255 } else { 65535 };
    for (i, px) in out.chunks_exact_mut(typesize * comps).enumerate() {
        for (c, plane) in planes.iter().enumerate() {
            let v = plane[i].clamp(0, max) as u16;
            let at = c * typesize;
            if typesize == 1 {
                px[at] = v as u8;
            } else {
                px[at..at + 2].copy_from_slice(&v.to_le_bytes());
            }
        }
    }
    Ok(())
}

/// Without the `jpeg2000` feature: the typed "unsupported codec" error.
#[cfg(not(feature = "jpeg2000"))]
pub fn decode_into(
    codec: u8,
    _src: &[u8],
    _typesize: usize,
    _out: &mut [u8],
    filter: &str,
) -> Result<()> {
    Err(unsupported(codec, filter))
}

/// The "unsupported codec" error for a user codec this build cannot decode.
pub fn unsupported(codec: u8, filter: &str) -> Error {
    Error::UnsupportedCodec {
        filter: if filter == "blosc" { "blosc" } else { "blosc2" },
        codec: u32::from(codec),
        name: super::codec::name_of(u32::from(codec)).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JP2 file header around a codestream whose SIZ says `ssiz`.
    fn jp2(ssiz: u8) -> Vec<u8> {
        let mut cs = vec![0xFF, 0x4F, 0xFF, 0x51, 0, 41, 0, 0];
        // a 2 x 2 image, one 2 x 2 tile, no offsets
        for v in [2u32, 2, 0, 0, 2, 2, 0, 0] {
            cs.extend_from_slice(&v.to_be_bytes());
        }
        cs.extend_from_slice(&[0, 1, ssiz, 1, 1]);
        let mut f = b"\x00\x00\x00\x0CjP  \r\n\x87\n".to_vec();
        f.extend_from_slice(&20u32.to_be_bytes());
        f.extend_from_slice(b"ftypjp2 \0\0\0\0jp2 ");
        f.extend_from_slice(&((cs.len() + 8) as u32).to_be_bytes());
        f.extend_from_slice(b"jp2c");
        f.extend_from_slice(&cs);
        f
    }

    #[cfg(feature = "jpeg2000")]
    #[test]
    fn finds_the_codestream_and_its_component_sizes() {
        let f = jp2(15);
        let cs = codestream(&f).unwrap();
        assert_eq!(&cs[..4], &[0xFF, 0x4F, 0xFF, 0x51]);
        assert_eq!(component_sizes(cs).unwrap(), &[15, 1, 1]);
        assert_eq!(image_size(cs), Some((2, 2)));
        assert!(codestream(b"not a jpeg 2000 file").is_none());
        assert!(codestream(&f[..f.len() - 10]).is_some_and(|c| component_sizes(c).is_none()));
    }

    #[test]
    fn ids_are_the_jpeg2000_user_codecs() {
        assert!(CODECS.iter().all(|&c| is_jpeg2000(c)));
        assert!(!is_jpeg2000(5) && !is_jpeg2000(38));
        assert_eq!(decodable(37), cfg!(feature = "jpeg2000"));
    }

    #[cfg(feature = "jpeg2000")]
    #[test]
    fn hostile_headers_are_typed_errors() {
        let mut out = [0u8; 8];
        for (ssiz, ts) in [(0x8F, 2), (15, 1), (7, 2), (31, 2)] {
            let e = decode_into(37, &jp2(ssiz), ts, &mut out, "blosc2").unwrap_err();
            assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        }
        // Right component size but no valid image behind the header.
        let e = decode_into(37, &jp2(15), 2, &mut out, "blosc2").unwrap_err();
        assert!(matches!(e, Error::Filter { .. }), "{e}");
        // An image that does not fill the block is refused before decoding.
        let e = decode_into(37, &jp2(15), 2, &mut [0u8; 10], "blosc2").unwrap_err();
        assert!(e.to_string().contains("does not fill"), "{e}");
        let e = decode_into(37, b"garbage", 2, &mut out, "blosc2").unwrap_err();
        assert!(e.to_string().contains("jpeg2000"), "{e}");
    }

    #[cfg(not(feature = "jpeg2000"))]
    #[test]
    fn without_the_feature_codec_37_is_unsupported() {
        let e = decode_into(37, &jp2(15), 2, &mut [0u8; 8], "blosc2").unwrap_err();
        assert!(
            matches!(e, Error::UnsupportedCodec { codec: 37, .. }),
            "{e}"
        );
    }
}
