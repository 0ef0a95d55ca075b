//! Filter `zstd` (id 32015): one Zstandard frame per chunk, `shared/spec/filters.md` §5.3.
//!
//! `cd_values = [level]` (a signed int32 stored as u32). Decoding uses the pure-Rust
//! `ruzstd` decoder with the window and the output capped by `ctx.max_output`;
//! consecutive frames are concatenated as libzstd does. Encoding uses `ruzstd`'s
//! compressor (it implements one level, roughly zstd level 1, whatever the level
//! asked for) and writes the frame content size into the header, because the C
//! plugin sizes its output buffer from it.

use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use ruzstd::encoding::{compress_to_vec, CompressionLevel};

use crate::error::{Error, Result};
use crate::filters::ChunkContext;

const NAME: &str = "zstd";
/// Smallest window accepted whatever the output bound (ruzstd writes 128 KiB windows).
const MIN_WINDOW_CAP: u64 = 256 << 10;
const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

fn err(reason: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, reason)
}

/// Undo the filter: decode every frame of `input`, at most `ctx.max_output` bytes in all.
pub fn decode(input: &[u8], _cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let cap = ctx.max_output;
    if input.is_empty() {
        return Err(err("empty input"));
    }
    // libzstd sizes the window to the content, so a window beyond the output
    // bound (power-of-two rounded) is refused; the floor admits ruzstd's own frames.
    let window_cap = (cap as u64).next_power_of_two().max(MIN_WINDOW_CAP);
    let mut frame = FrameDecoder::new();
    frame.set_max_window_size(window_cap);
    let mut out: Vec<u8> = Vec::new();
    let mut src: &[u8] = input;
    while !src.is_empty() {
        let start = out.len();
        frame
            .reset(&mut src)
            .map_err(|e| err(format!("bad frame header: {e}")))?;
        let room = cap - start;
        let content = frame.content_size();
        if content > room as u64 {
            return Err(err(format!(
                "frame content size {content} exceeds the bound {cap}"
            )));
        }
        // Only a hint: a tiny frame may claim a large size, so bound the reservation.
        let hint = if content > 0 {
            content as usize
        } else {
            ctx.chunk_bytes.min(room)
        };
        out.reserve(hint.min(src.len().saturating_mul(64).max(1 << 16)));
        loop {
            let finished = frame
                .decode_blocks(&mut src, BlockDecodingStrategy::UptoBlocks(1))
                .map_err(|e| err(format!("corrupt frame: {e}")))?;
            if let Some(bytes) = frame.collect() {
                if bytes.len() > cap - out.len() {
                    return Err(err(format!(
                        "decoded data exceeds the bound of {cap} bytes"
                    )));
                }
                out.extend_from_slice(&bytes);
            }
            if finished {
                break;
            }
        }
        let got = (out.len() - start) as u64;
        if content > 0 && got != content {
            return Err(err(format!(
                "frame gives {got} bytes, header says {content}"
            )));
        }
    }
    Ok(out)
}

/// Apply the filter: one frame with the content size in its header.
pub fn encode(input: &[u8], _cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    let frame = compress_to_vec(input, CompressionLevel::Fastest);
    with_content_size(&frame, input.len() as u64)
}

/// Rewrite a frame header that lacks a content size into one that carries it (8 bytes).
fn with_content_size(frame: &[u8], size: u64) -> Result<Vec<u8>> {
    let (magic, rest) = frame
        .split_at_checked(4)
        .ok_or_else(|| err("short frame"))?;
    if magic != MAGIC {
        return Err(err("compressor wrote no zstd magic"));
    }
    let (&desc, rest) = rest.split_first().ok_or_else(|| err("short frame"))?;
    // Expect: no content size (bits 7-6 = 0), not single segment (bit 5), no dict id.
    if desc & 0xE3 != 0 {
        return Err(err(format!("unexpected frame descriptor {desc:#04x}")));
    }
    let (&window, body) = rest.split_first().ok_or_else(|| err("short frame"))?;
    let mut out = Vec::with_capacity(frame.len() + 8);
    out.extend_from_slice(&MAGIC);
    out.push(desc | 0xC0);
    out.push(window);
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(body);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(n: usize) -> ChunkContext {
        ChunkContext::new(1, n)
    }

    #[test]
    fn round_trip_and_content_size() {
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 97) as u8).collect();
        let enc = encode(&data, &[3], &ctx(data.len())).unwrap();
        assert_eq!(&enc[..4], &MAGIC);
        assert_eq!(enc[4] >> 6, 3, "8-byte content size field");
        assert_eq!(&enc[6..14], &20_000u64.to_le_bytes());
        assert!(enc.len() < 2000);
        assert_eq!(decode(&enc, &[3], &ctx(data.len())).unwrap(), data);
    }

    #[test]
    fn empty_and_concatenated_frames() {
        let enc = encode(&[], &[3], &ctx(0)).unwrap();
        assert_eq!(decode(&enc, &[3], &ctx(0)).unwrap(), Vec::<u8>::new());
        let mut two = encode(b"hello ", &[3], &ctx(6)).unwrap();
        two.extend(encode(b"world", &[3], &ctx(5)).unwrap());
        assert_eq!(decode(&two, &[3], &ctx(11)).unwrap(), b"hello world");
    }

    #[test]
    fn rejects_truncated_and_oversized() {
        let data = vec![9u8; 5000];
        let enc = encode(&data, &[3], &ctx(5000)).unwrap();
        for cut in 0..enc.len() {
            assert!(decode(&enc[..cut], &[3], &ctx(5000)).is_err(), "cut {cut}");
        }
        let small = ChunkContext {
            element_size: 1,
            chunk_bytes: 100,
            max_output: 4999,
        };
        assert!(decode(&enc, &[3], &small).is_err());
    }

    proptest::proptest! {
        #[test]
        fn prop_round_trip(data in proptest::collection::vec(0u8..4, 0..3000)) {
            let c = ctx(data.len());
            let enc = encode(&data, &[3], &c).unwrap();
            proptest::prop_assert_eq!(decode(&enc, &[3], &c).unwrap(), data);
        }

        #[test]
        fn prop_garbage_never_panics(data in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            let _ = decode(&data, &[3], &ctx(1000));
        }

        #[test]
        fn prop_truncation_is_an_error(data in proptest::collection::vec(0u8..4, 1..2000), cut in 0.0f64..1.0) {
            let c = ctx(data.len());
            let enc = encode(&data, &[3], &c).unwrap();
            let at = (enc.len() as f64 * cut) as usize;
            proptest::prop_assert!(decode(&enc[..at], &[3], &c).is_err());
        }
    }
}
