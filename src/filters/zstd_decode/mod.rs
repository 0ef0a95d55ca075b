//! Zstandard decoder, RFC 8878 (Zstandard Compression and the
//! 'application/zstd' Media Type), §3 (frames, blocks, literals, sequences)
//! and §4 (FSE and Huffman entropy coding); no dictionaries.
//!
//! Safe Rust, bounded: every block is held to Block_Maximum_Size
//! (min(window, 128 KiB)), the whole output to the caller's cap (or to the
//! destination slice), and back-references to the current frame's output.
//! Output is decoded straight into the destination (no ring buffer).

mod bits;
mod block;
mod execute;
mod frame;
mod fse;
mod huffman;
mod huffman_table;
mod huffman_x2;
mod literals;
#[cfg(test)]
mod seq_reference;
mod sequences;
mod xxhash;

#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use frame::{Output, SliceOut, VecOut};
/// The predefined FSE distributions (RFC 8878 §3.1.1.3.2.2), shared with the encoder.
pub(crate) use sequences::{LL_DEFAULT, ML_DEFAULT, OF_DEFAULT};

/// RFC 8878 §3.1.1.2.3: a block never holds more than 128 KiB.
pub(crate) const BLOCK_MAX: usize = 128 << 10;
/// Writable bytes kept past the end of growable output, for wide copies.
pub(crate) const SLACK: usize = 64;

/// True when the hot loops (Huffman 4-stream, sequence execution) may run
/// their copies compiled with BMI1/BMI2/LZCNT (variable shifts without the
/// `cl` register, `tzcnt`): checked at run time, cached by std. (Only the
/// x86-64 dispatch asks; elsewhere nothing calls it.)
#[inline(always)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn use_bmi2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::cpu::bmi2()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// True when sequences may execute with AVX2 (32-byte copies, short-offset
/// pattern stores, the fused decode-and-execute loop); like [`use_bmi2`],
/// off under the test override (`cpu::force`) so tests run the portable path too.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn use_avx2() -> bool {
    crate::cpu::avx2()
}

/// Tests: run the portable copies of the hot loops on this thread (`true`),
/// or the CPU's best again (`false`); the crate's one CPU override.
#[cfg(test)]
pub(crate) fn force_portable(on: bool) {
    crate::cpu::force(if on {
        crate::cpu::Force::Portable
    } else {
        crate::cpu::Force::Nothing
    });
}

/// True when `e` (at any depth of wrapping) is the decoder's refusal of a
/// corruption that libzstd decodes without an error into other bytes: a
/// 4-stream Huffman literal section whose streams (each at least 8 bytes)
/// do not end exactly where their segments do. RFC 8878 calls it corrupt;
/// libzstd's fast decoder checks only that every segment is filled, so for
/// tools built on libzstd such a stream simply reads as different data.
pub fn libzstd_decodes(e: &impl std::fmt::Display) -> bool {
    e.to_string().contains(huffman::LIBZSTD_DECODES)
}

/// A corrupt-input error naming what was wrong and where (input byte offset).
pub(crate) fn corrupt(offset: usize, what: impl std::fmt::Display) -> Error {
    Error::filter(0, "zstd", format!("{what} (input byte {offset})"))
}

thread_local! {
    /// Entropy tables and literal scratch kept between calls on a thread:
    /// Blosc decodes one small frame per block, and setting these up afresh
    /// (allocating and zeroing some 80 KiB) cost several percent of a frame.
    /// Every frame resets the state it reads (`BlockState::reset`).
    static STATE: std::cell::Cell<Option<Box<block::BlockState>>> =
        const { std::cell::Cell::new(None) };
}

/// Decode every frame of `src` into `out` from `pos`; returns the end position.
fn decode_all<O: Output>(src: &[u8], out: &mut O, pos: usize) -> Result<usize> {
    let mut st = STATE
        .with(|c| c.take())
        .unwrap_or_else(|| Box::new(block::BlockState::new()));
    let res = decode_frames(src, out, pos, &mut st);
    STATE.with(|c| c.set(Some(st)));
    res
}

fn decode_frames<O: Output>(
    src: &[u8],
    out: &mut O,
    mut pos: usize,
    st: &mut block::BlockState,
) -> Result<usize> {
    let mut at = 0usize;
    while at < src.len() {
        let rest = &src[at..];
        if let Some(n) = frame::skippable_len(rest, at)? {
            at += n;
            continue;
        }
        at += frame::decode(rest, at, st, out, &mut pos)?;
    }
    Ok(pos)
}

/// Decode every Zstandard frame in `src` (concatenated frames; skippable frames skipped),
/// appending the output to `out`; fail with a typed Error if the total output would exceed `cap` bytes.
///
/// On error `out` is left as it was.
pub fn decompress_append(src: &[u8], out: &mut Vec<u8>, cap: usize) -> Result<()> {
    let base = out.len();
    let mut sink = VecOut {
        vec: out,
        end_cap: base.saturating_add(cap),
    };
    match decode_all(src, &mut sink, base) {
        Ok(end) => {
            out.truncate(end);
            Ok(())
        }
        Err(e) => {
            out.truncate(base);
            Err(e)
        }
    }
}

/// Decode exactly one frame's content into `dst` (a Blosc block or an HDF5 chunk of known size); error unless it fills dst exactly.
///
/// As libzstd's one-shot decoder does, further concatenated frames and
/// skippable frames are accepted; their output counts toward filling `dst`.
pub fn decompress_exact(src: &[u8], dst: &mut [u8]) -> Result<()> {
    let len = dst.len();
    let end = decode_all(src, &mut SliceOut(dst), 0)?;
    if end != len {
        return Err(corrupt(
            src.len(),
            format!("frames decode to {end} bytes, the destination holds {len}"),
        ));
    }
    Ok(())
}
