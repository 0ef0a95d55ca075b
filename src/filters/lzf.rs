//! Filter `lzf` (id 32000): LZF (liblzf) as wrapped by h5py's `lzf_filter.c`.
//!
//! `cd_values = [filter version, liblzf version, chunk bytes]` (h5py stores
//! `[4, 261, nbytes]`). The stored chunk is one raw LZF stream, no header.
//! When compression does not shrink the data the C filter *fails*, so libhdf5
//! stores the chunk unfiltered with the filter's mask bit set; [`encode`]
//! reports that case as an error so the pipeline writer can do the same.
//!
//! LZF stream, a sequence of tokens, each starting with a control byte `c`:
//! * `c < 32`: a literal run of `c + 1` bytes follows;
//! * otherwise a back reference: length field `c >> 5` (7 = extended by the next
//!   byte), distance `((c & 31) << 8) + next byte + 1`; it copies `length + 2`
//!   bytes from that distance back (overlap allowed).

use crate::error::{Error, Result};
use crate::ChunkContext;

const NAME: &str = "lzf";
/// h5py's filter version and the liblzf version it stores in `cd_values[0..2]`.
pub const CD_PREFIX: [u32; 2] = [4, 0x0105];
const MAX_LITERAL: usize = 32;
const MAX_OFF: usize = 1 << 13;
const MAX_REF: usize = (1 << 8) + (1 << 3);
const HASH_LOG: u32 = 14;

fn err(reason: impl std::fmt::Display) -> Error {
    Error::filter(0, NAME, reason)
}

/// Undo the filter: decompress an LZF stream into at most `ctx.max_output` bytes.
pub fn decode(input: &[u8], cd_values: &[u32], ctx: &ChunkContext) -> Result<Vec<u8>> {
    let hint = match cd_values.get(2) {
        Some(&n) if n > 0 => n as usize,
        _ => ctx.chunk_bytes,
    };
    // A back reference of 3 bytes yields at most 264 bytes: bound the initial buffer.
    let hint = hint.min(ctx.max_output).min(input.len().saturating_mul(88));
    decompress(input, hint, ctx.max_output)
}

/// Bytes of writable room kept past the decoded data, so that literal runs
/// and matches are copied in fixed 32- and 8-byte pieces (inlined loads and
/// stores, no call per token) and the bytes past the token are overwritten
/// later or cut off at the end.
const SLACK: usize = 40;

/// Most bytes one token writes: a back reference of `7 + 255 + 2` bytes
/// (a literal run writes at most [`MAX_LITERAL`]).
const MAX_TOKEN_OUT: usize = 7 + 255 + 2;

/// Most bytes one token reads after its control byte (the fixed 32-byte
/// piece of a literal run; a back reference reads 2).
const MAX_TOKEN_IN: usize = MAX_LITERAL;

/// Decompress a raw LZF stream; `cap` bounds the output.
pub fn decompress(input: &[u8], hint: usize, cap: usize) -> Result<Vec<u8>> {
    let mut out = vec![0u8; hint.min(cap).saturating_add(SLACK)];
    let (ip, op) = fast_tokens(input, &mut out)?;
    checked_tokens(input, out, ip, op, cap)
}

/// Decode the tokens from `input[ip..]` into `out` at `op` with every check
/// (room grown on demand, `cap` enforced, truncation detected); `out` holds
/// at least `op + SLACK` bytes.
fn checked_tokens(
    input: &[u8],
    mut out: Vec<u8>,
    mut ip: usize,
    mut op: usize,
    cap: usize,
) -> Result<Vec<u8>> {
    while let Some(&ctrl) = input.get(ip) {
        ip += 1;
        if ctrl < 32 {
            let n = usize::from(ctrl) + 1;
            if input.len() - ip < n {
                return Err(err(format!(
                    "literal run at byte {} runs past the end",
                    ip - 1
                )));
            }
            if n > cap - op {
                return Err(err(format!("output exceeds the bound of {cap} bytes")));
            }
            room(&mut out, op, n, cap);
            if input.len() - ip >= MAX_LITERAL {
                out[op..op + MAX_LITERAL].copy_from_slice(&input[ip..ip + MAX_LITERAL]);
            } else {
                out[op..op + n].copy_from_slice(&input[ip..ip + n]);
            }
            op += n;
            ip += n;
        } else {
            let mut len = usize::from(ctrl >> 5);
            if len == 7 {
                let ext = *input
                    .get(ip)
                    .ok_or_else(|| err("back reference truncated"))?;
                len += usize::from(ext);
                ip += 1;
            }
            let low = *input
                .get(ip)
                .ok_or_else(|| err("back reference truncated"))?;
            ip += 1;
            let dist = (usize::from(ctrl & 31) << 8) + usize::from(low) + 1;
            let len = len + 2;
            if dist > op {
                return Err(err(format!(
                    "back reference at byte {ip} reaches before the output start"
                )));
            }
            if len > cap - op {
                return Err(err(format!("output exceeds the bound of {cap} bytes")));
            }
            room(&mut out, op, len, cap);
            copy_match(&mut out, op, dist, len);
            op += len;
        }
    }
    out.truncate(op);
    Ok(out)
}

/// Decode tokens while every one of them has its whole input and output
/// room (the bulk of a stream whose output fits the initial buffer): no
/// per-token room, cap or truncation checks, since `out.len() - SLACK`
/// (the initial `hint.min(cap)`) bounds every write and the input holds
/// [`MAX_TOKEN_IN`] bytes past each control byte. Returns the input and
/// output positions reached; [`decompress`] continues from there with the
/// checked loop.
#[inline]
fn fast_tokens(input: &[u8], out: &mut [u8]) -> Result<(usize, usize)> {
    let (mut ip, mut op) = (0usize, 0usize);
    let out_end = out.len().saturating_sub(SLACK + MAX_TOKEN_OUT);
    let in_end = input.len().saturating_sub(MAX_TOKEN_IN + 1);
    while ip < in_end && op < out_end {
        let ctrl = input[ip];
        ip += 1;
        if ctrl < 32 {
            // ip + 32 <= input.len() and op + 32 <= out.len() (loop bounds).
            let n = usize::from(ctrl) + 1;
            out[op..op + MAX_LITERAL].copy_from_slice(&input[ip..ip + MAX_LITERAL]);
            op += n;
            ip += n;
        } else {
            let mut len = usize::from(ctrl >> 5);
            if len == 7 {
                len += usize::from(input[ip]);
                ip += 1;
            }
            let dist = (usize::from(ctrl & 31) << 8) + usize::from(input[ip]) + 1;
            ip += 1;
            if dist > op {
                return Err(err(format!(
                    "back reference at byte {ip} reaches before the output start"
                )));
            }
            let len = len + 2;
            if dist >= 8 && len <= 8 {
                // The common short match: one 8-byte piece (into the slack).
                let start = op - dist;
                let mut w = [0u8; 8];
                w.copy_from_slice(&out[start..start + 8]);
                out[op..op + 8].copy_from_slice(&w);
            } else {
                copy_match(out, op, dist, len);
            }
            op += len;
        }
    }
    Ok((ip, op))
}

/// Make `out` hold `op + n` bytes plus [`SLACK`] (`op + n <= cap`): grown
/// at least twofold, never past `cap + SLACK`.
#[inline]
fn room(out: &mut Vec<u8>, op: usize, n: usize, cap: usize) {
    let need = op + n + SLACK;
    if need > out.len() {
        let grown = out.len().saturating_mul(2).max(need).min(cap + SLACK);
        out.resize(grown, 0);
    }
}

/// Write the `len` bytes at `dist` bytes before `op` to `op` (byte-wise
/// semantics when they overlap); `out` has [`SLACK`] bytes past `op + len`.
#[inline]
fn copy_match(out: &mut [u8], op: usize, dist: usize, len: usize) {
    let start = op - dist;
    if dist >= 8 {
        // Each 8-byte piece reads bytes written before it (dist >= 8); the
        // last piece may write up to 7 bytes past the match, into the slack.
        let mut k = 0;
        while k < len {
            let mut w = [0u8; 8];
            w.copy_from_slice(&out[start + k..start + k + 8]);
            out[op + k..op + k + 8].copy_from_slice(&w);
            k += 8;
        }
    } else if dist == 1 {
        let b = out[start];
        out[op..op + len].fill(b);
    } else {
        for k in 0..len {
            out[op + k] = out[start + k];
        }
    }
}

/// Apply the filter. Fails (like the C filter) when the stream would not be
/// smaller than or equal to the input, so that the chunk is stored unfiltered.
pub fn encode(input: &[u8], _cd_values: &[u32], _ctx: &ChunkContext) -> Result<Vec<u8>> {
    let out = compress(input);
    if out.len() > input.len() {
        return Err(err("data does not compress; store the chunk unfiltered"));
    }
    Ok(out)
}

fn hash3(b: &[u8], i: usize) -> usize {
    let v = (u32::from(b[i]) << 16) | (u32::from(b[i + 1]) << 8) | u32::from(b[i + 2]);
    (v.wrapping_mul(2_654_435_761) >> (32 - HASH_LOG)) as usize
}

/// Compress into a raw LZF stream (always ending with a literal run or a match
/// that the decoder handles; empty input gives an empty stream).
pub fn compress(input: &[u8]) -> Vec<u8> {
    let n = input.len();
    let mut out = Vec::with_capacity(n + n / 32 + 4);
    let mut table = vec![usize::MAX; 1 << HASH_LOG];
    let mut lit_start = 0usize;
    let mut i = 0usize;
    while i + 2 < n {
        let h = hash3(input, i);
        let cand = table[h];
        table[h] = i;
        if cand != usize::MAX && i - cand <= MAX_OFF && input[cand..cand + 3] == input[i..i + 3] {
            let max_len = (n - i).min(MAX_REF);
            let mut len = 3;
            while len < max_len && input[cand + len] == input[i + len] {
                len += 1;
            }
            flush_literals(&mut out, &input[lit_start..i]);
            let off = i - cand - 1;
            let l = len - 2;
            if l < 7 {
                out.push(((l as u8) << 5) | (off >> 8) as u8);
            } else {
                out.push((7 << 5) | (off >> 8) as u8);
                out.push((l - 7) as u8);
            }
            out.push((off & 0xFF) as u8);
            // Index the positions inside the match so later data can refer to them.
            let end = i + len;
            let mut k = i + 1;
            while k < end && k + 2 < n {
                table[hash3(input, k)] = k;
                k += 1;
            }
            i = end;
            lit_start = i;
        } else {
            i += 1;
        }
    }
    flush_literals(&mut out, &input[lit_start..]);
    out
}

fn flush_literals(out: &mut Vec<u8>, lits: &[u8]) {
    for run in lits.chunks(MAX_LITERAL) {
        out.push((run.len() - 1) as u8);
        out.extend_from_slice(run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(n: usize) -> ChunkContext {
        ChunkContext::new(1, n)
    }

    #[test]
    fn known_stream() {
        // 3 literals "abc", then a match of 6 at distance 3 -> "abcabcabc".
        let stream = [2, b'a', b'b', b'c', (4 << 5), 2];
        assert_eq!(decompress(&stream, 0, 100).unwrap(), b"abcabcabc");
        // Extended length: 7 + 10 + 2 = 19 copies of 'x' after one literal.
        let stream = [0, b'x', (7 << 5), 10, 0];
        assert_eq!(decompress(&stream, 0, 100).unwrap(), vec![b'x'; 20]);
    }

    #[test]
    fn round_trip() {
        let data: Vec<u8> = (0..50_000u32)
            .map(|i| ((i / 3) % 200) as u8 ^ (i % 5) as u8)
            .collect();
        let enc = encode(&data, &[4, 261, 50_000], &ctx(data.len())).unwrap();
        assert!(enc.len() < data.len());
        assert_eq!(
            decode(&enc, &[4, 261, 50_000], &ctx(data.len())).unwrap(),
            data
        );
        let zeros = vec![0u8; 10_000];
        let enc = encode(&zeros, &[], &ctx(10_000)).unwrap();
        assert!(enc.len() < 200, "{}", enc.len());
        assert_eq!(decode(&enc, &[], &ctx(10_000)).unwrap(), zeros);
    }

    /// The token-at-a-time decoder the fast one must equal.
    fn reference(input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut ip = 0;
        while ip < input.len() {
            let c = usize::from(input[ip]);
            ip += 1;
            if c < 32 {
                out.extend_from_slice(&input[ip..ip + c + 1]);
                ip += c + 1;
            } else {
                let mut len = c >> 5;
                if len == 7 {
                    len += usize::from(input[ip]);
                    ip += 1;
                }
                let dist = ((c & 31) << 8) + usize::from(input[ip]) + 1;
                ip += 1;
                for _ in 0..len + 2 {
                    out.push(out[out.len() - dist]);
                }
            }
        }
        out
    }

    #[test]
    fn overlapping_matches_of_every_period() {
        for period in [1usize, 2, 3, 7, 8, 9, 15, 16, 31, 300] {
            let data: Vec<u8> = (0..20_000)
                .map(|i| ((i % period) * 37 + period) as u8)
                .collect();
            let raw = compress(&data);
            assert_eq!(reference(&raw), data, "period {period}");
            for hint in [0, 100, data.len()] {
                assert_eq!(
                    decompress(&raw, hint, data.len()).unwrap(),
                    data,
                    "period {period}, hint {hint}"
                );
            }
        }
        // A stream ending right after a short literal (no slack in the input).
        assert_eq!(decompress(&[1, 9, 8], 2, 2).unwrap(), vec![9, 8]);
    }

    /// The fast token loop against the checked one alone (the decoder
    /// before it), on LZF of noisy 16-bit data (one-byte literals and
    /// 3-byte matches, as h5py writes a noisy int16 volume):
    /// `cargo test --release -p purehdf-filters lzf::tests::time_fast_tokens -- --ignored --nocapture`.
    #[test]
    #[ignore = "timing, run by hand"]
    fn time_fast_tokens() {
        let mut x = 3u32;
        let data: Vec<u8> = (0..262_144u32)
            .flat_map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let v = ((i % 64) * 3 + (i / 4096) * 5) as i32 + (x % 40) as i32 - 20;
                (v as i16).to_le_bytes()
            })
            .collect();
        let raw = compress(&data);
        let cap = data.len();
        let time = |f: &dyn Fn() -> Vec<u8>| {
            let mut best = f64::MAX;
            for _ in 0..20 {
                let t = std::time::Instant::now();
                assert_eq!(f(), data);
                best = best.min(t.elapsed().as_secs_f64());
            }
            best * 1e3
        };
        let checked = time(&|| checked_tokens(&raw, vec![0; cap + SLACK], 0, 0, cap).unwrap());
        let fast = time(&|| decompress(&raw, cap, cap).unwrap());
        println!(
            "lzf decode of {} bytes ({} compressed): checked loop {checked:.3} ms, fast loop {fast:.3} ms ({:.2}×)",
            cap,
            raw.len(),
            checked / fast
        );
    }

    #[test]
    fn incompressible_fails_to_encode() {
        let mut x = 7u32;
        let data: Vec<u8> = (0..1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        assert!(encode(&data, &[], &ctx(1000)).is_err());
        assert_eq!(decompress(&compress(&data), 0, 1000).unwrap(), data);
    }

    #[test]
    fn rejects_bad_streams() {
        assert!(decompress(&[5, 1, 2], 0, 100).is_err(), "short literal");
        assert!(
            decompress(&[0, 1, 0x20, 5], 0, 100).is_err(),
            "distance too far"
        );
        assert!(decompress(&[0, 1, 0xE0], 0, 100).is_err(), "truncated ref");
        assert!(
            decompress(&[0, 1, 0xE0, 200, 0], 0, 100).is_err(),
            "over cap"
        );
    }

    proptest::proptest! {
        #[test]
        fn prop_round_trip(data in proptest::collection::vec(0u8..4, 0..3000)) {
            let c = ctx(data.len());
            let raw = compress(&data);
            proptest::prop_assert_eq!(decompress(&raw, 0, data.len()).unwrap(), data.clone());
            if let Ok(enc) = encode(&data, &[4, 261, data.len() as u32], &c) {
                proptest::prop_assert_eq!(decode(&enc, &[4, 261, data.len() as u32], &c).unwrap(), data);
            }
        }

        #[test]
        fn prop_garbage_is_bounded(data in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            if let Ok(out) = decompress(&data, 0, 500) {
                proptest::prop_assert!(out.len() <= 500);
            }
        }
    }
}
