//! Tests of the whole decoder: frames from `rusty_zstd` at several levels,
//! compared with the input and with the `ruzstd`-based product decoder.

use super::*;
use crate::ChunkContext;
use proptest::prelude::*;

/// Reference: the current product decoder (`ruzstd`), capped like ours.
pub(super) fn ruzstd_decode(src: &[u8], cap: usize) -> Result<Vec<u8>> {
    let ctx = ChunkContext {
        element_size: 1,
        chunk_bytes: cap,
        max_output: cap,
    };
    crate::zstd::decode(src, &[], &ctx)
}

fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        s >> 33
    }
}

pub(super) fn random(n: usize, seed: u64) -> Vec<u8> {
    let mut r = lcg(seed);
    (0..n).map(|_| r() as u8).collect()
}

pub(super) fn repetitive(n: usize, seed: u64) -> Vec<u8> {
    let mut r = lcg(seed);
    let words: Vec<&[u8]> = vec![b"alpha ", b"beta ", b"gamma-ray ", b"\0\0\0\0", b"xyzzy\n"];
    let mut v = Vec::with_capacity(n + 16);
    while v.len() < n {
        let w = words[(r() % words.len() as u64) as usize];
        v.extend_from_slice(w);
        if r().is_multiple_of(7) {
            v.push(r() as u8);
        }
    }
    v.truncate(n);
    v
}

/// int16 CT-like values (smooth body, air at -1000, noise), byte-shuffled as Blosc does.
pub(super) fn ct_like(n: usize, seed: u64) -> Vec<u8> {
    let mut r = lcg(seed);
    let count = n / 2;
    let mut vals = Vec::with_capacity(count);
    for i in 0..count {
        let x = (i % 256) as i32 - 128;
        let y = ((i / 256) % 256) as i32 - 128;
        let v: i16 = if x * x + y * y > 100 * 100 {
            -1000
        } else {
            (40 + (x + y) / 8 + (r() % 16) as i32 - 8) as i16
        };
        vals.push(v);
    }
    let mut out = Vec::with_capacity(n);
    out.extend(vals.iter().map(|v| v.to_le_bytes()[0]));
    out.extend(vals.iter().map(|v| v.to_le_bytes()[1]));
    if n % 2 == 1 {
        out.push(0x5A);
    }
    out
}

fn check(data: &[u8], level: i32) {
    let frame = rusty_zstd::compress(data, level).unwrap();
    let mut out = Vec::new();
    decompress_append(&frame, &mut out, data.len()).unwrap();
    assert!(out == data, "level {level} len {}", data.len());
    let reference = ruzstd_decode(&frame, data.len().max(1)).unwrap();
    assert!(reference == out);
    let mut dst = vec![0xEEu8; data.len()];
    decompress_exact(&frame, &mut dst).unwrap();
    assert!(dst == data);
}

#[test]
fn rusty_zstd_frames_decode_at_all_levels() {
    let sizes = [
        0usize, 1, 7, 100, 1000, 4096, 65_536, 131_072, 131_073, 300_000,
    ];
    for (k, &n) in sizes.iter().enumerate() {
        for level in [-5, 1, 3, 9, 19] {
            let seed = (k as u64 * 31).wrapping_add(level as u64);
            check(&random(n, seed), level);
            check(&repetitive(n, seed), level);
            check(&ct_like(n, seed), level);
        }
    }
}

#[test]
fn cap_and_exact_size_are_enforced() {
    let data = repetitive(50_000, 3);
    let frame = rusty_zstd::compress(&data, 3).unwrap();
    let mut out = vec![1, 2, 3];
    assert!(decompress_append(&frame, &mut out, data.len() - 1).is_err());
    assert_eq!(out, [1, 2, 3]);
    decompress_append(&frame, &mut out, data.len()).unwrap();
    assert_eq!(&out[3..], &data[..]);
    let mut short = vec![0u8; data.len() - 1];
    assert!(decompress_exact(&frame, &mut short).is_err());
    let mut long = vec![0u8; data.len() + 1];
    assert!(decompress_exact(&frame, &mut long).is_err());
}

#[test]
fn concatenated_and_skippable_frames() {
    let a = repetitive(10_000, 1);
    let b = ct_like(20_000, 2);
    let mut src = rusty_zstd::compress(&a, 3).unwrap();
    src.extend_from_slice(&[0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    src.extend_from_slice(&rusty_zstd::compress(&b, 1).unwrap());
    let mut out = Vec::new();
    decompress_append(&src, &mut out, 30_000).unwrap();
    assert_eq!(&out[..10_000], &a[..]);
    assert_eq!(&out[10_000..], &b[..]);
}

#[test]
fn checksum_mismatch_is_detected() {
    let data = repetitive(5_000, 9);
    let mut frame = rusty_zstd::compress(&data, 3).unwrap();
    let h = frame::header(&frame, 0).unwrap();
    if h.checksum {
        let n = frame.len();
        frame[n - 1] ^= 1;
        let mut out = Vec::new();
        assert!(decompress_append(&frame, &mut out, 10_000).is_err());
    }
    // A hand-made frame: one raw block "abc" and a checksum.
    let sum = (xxhash::xxh64(b"abc") as u32).to_le_bytes();
    let mut f = vec![
        0x28, 0xB5, 0x2F, 0xFD, 0x24, 3, 0x19, 0, 0, b'a', b'b', b'c',
    ];
    f.extend_from_slice(&sum);
    let mut out = Vec::new();
    decompress_append(&f, &mut out, 3).unwrap();
    assert_eq!(out, b"abc");
    let n = f.len();
    f[n - 2] ^= 0x40;
    assert!(decompress_append(&f, &mut Vec::new(), 3).is_err());
}

#[test]
fn block_over_maximum_is_refused() {
    // rusty_zstd's reproducer shape: a raw block of 8 bytes, then one compressed block
    // of raw literals (0) and 400 RLE sequences copying 65,539 bytes at offset 1.
    let mut f = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x58];
    f.extend_from_slice(&[8 << 3, 0, 0]);
    f.extend_from_slice(b"01234567");
    // Sequences: count 400 = 0x8000 | 400 -> bytes 0x81, 0x90; modes all RLE (0x54).
    let mut body = vec![0x00, 0x81, 0x90, 0x54, 0, 2, 52];
    // Bitstream: all-zero extra bits; 400 sequences x (2 + 16) bits = 7200 bits = 900 bytes,
    // then the marker byte (one sequence: 18 bits = 2 bytes and 2 bits under the marker).
    body.extend(std::iter::repeat_n(0, 900));
    body.push(1);
    let hdr = ((body.len() as u32) << 3) | (2 << 1) | 1;
    f.extend_from_slice(&hdr.to_le_bytes()[..3]);
    f.extend_from_slice(&body);
    let mut out = Vec::new();
    let err = decompress_append(&f, &mut out, 1 << 30).unwrap_err();
    assert!(err.to_string().contains("block maximum"), "{err}");
    assert!(out.is_empty());
    // The same sequences within the cap but one of them only: 8 + 65,539 bytes are fine.
    let mut g = f[..17].to_vec();
    let body1 = vec![0x00, 0x01, 0x54, 0, 2, 52, 0, 0, 0x04];
    let hdr = ((body1.len() as u32) << 3) | (2 << 1) | 1;
    g.extend_from_slice(&hdr.to_le_bytes()[..3]);
    g.extend_from_slice(&body1);
    let mut out = Vec::new();
    decompress_append(&g, &mut out, 1 << 20).unwrap();
    assert_eq!(out.len(), 8 + 65_539);
    assert!(out[8..].iter().all(|&b| b == b'7'));
}

#[test]
fn dictionary_frames_are_refused() {
    let f = [0x28, 0xB5, 0x2F, 0xFD, 0x21, 0x07, 0x00, 0x01, 0x00, 0x00];
    let err = decompress_append(&f, &mut Vec::new(), 100).unwrap_err();
    assert!(err.to_string().contains("dictionar"), "{err}");
}

#[test]
fn every_single_byte_corruption_is_safe() {
    for (n, level) in [(3000usize, 3), (20_000, 19), (2000, -5)] {
        let data = ct_like(n, n as u64);
        let frame = rusty_zstd::compress(&data, level).unwrap();
        for i in 0..frame.len() {
            for x in [0x01u8, 0x80, 0xFF] {
                let mut f = frame.clone();
                f[i] ^= x;
                let mut out = Vec::new();
                if decompress_append(&f, &mut out, n).is_ok() {
                    assert!(out.len() <= n);
                }
                let mut dst = vec![0u8; n];
                let _ = decompress_exact(&f, &mut dst);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn round_trip(data in proptest::collection::vec(any::<u8>(), 0..5000),
                  rep in 0usize..4, level in prop::sample::select(vec![-5, 1, 3, 9, 19])) {
        let mut input = data.clone();
        for _ in 0..rep {
            input.extend_from_slice(&data);
        }
        let frame = rusty_zstd::compress(&input, level).unwrap();
        let mut out = Vec::new();
        decompress_append(&frame, &mut out, input.len()).unwrap();
        prop_assert_eq!(&out, &input);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut src = vec![0x28, 0xB5, 0x2F, 0xFD];
        src.extend_from_slice(&data);
        let mut out = Vec::new();
        let _ = decompress_append(&src, &mut out, 1 << 20);
        prop_assert!(out.len() <= 1 << 20);
    }
}

/// One frame decoded by `ruzstd`: (bytes of input used, output).
pub(super) fn ruzstd_one_frame(src: &[u8], cap: usize) -> Option<(usize, Vec<u8>)> {
    use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
    let mut fd = FrameDecoder::new();
    fd.set_max_window_size(1 << 31);
    let mut s = src;
    fd.reset(&mut s).ok()?;
    if fd.content_size() > cap as u64 {
        return None;
    }
    let mut out = Vec::new();
    loop {
        let done = fd
            .decode_blocks(&mut s, BlockDecodingStrategy::UptoBlocks(1))
            .ok()?;
        if let Some(b) = fd.collect() {
            out.extend_from_slice(&b);
        }
        if out.len() > cap {
            return None;
        }
        if done {
            break;
        }
    }
    Some((src.len() - s.len(), out))
}

/// Every Zstandard frame inside the files of `shared/vectors` (bare `zstd` filter
/// chunks and the streams of Blosc/Blosc2 chunks written by C libzstd), found by
/// its magic number and measured by `ruzstd`, decodes to the same bytes here.
#[test]
fn shared_vector_frames_decode_equal() {
    let here = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let root =
        Some(here.join("../shared/vectors")).filter(|p| p.join("filters/manifest.json").is_file());
    let Some(root) = root else {
        eprintln!("shared/vectors not found: skipped");
        return;
    };
    let mut stack = vec![root];
    let (mut frames, mut files) = (0usize, 0usize);
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let bytes = std::fs::read(&p).unwrap();
            let mut found = false;
            for i in 0..bytes.len().saturating_sub(4) {
                if bytes[i..i + 4] != [0x28, 0xB5, 0x2F, 0xFD] {
                    continue;
                }
                let Some((used, want)) = ruzstd_one_frame(&bytes[i..], 1 << 26) else {
                    continue;
                };
                let frame = &bytes[i..i + used];
                let mut out = Vec::new();
                decompress_append(frame, &mut out, want.len())
                    .unwrap_or_else(|e| panic!("{} at {i}: {e}", p.display()));
                assert!(out == want, "{} at {i}", p.display());
                let mut dst = vec![0u8; want.len()];
                decompress_exact(frame, &mut dst).unwrap();
                frames += 1;
                found = true;
            }
            files += usize::from(found);
        }
    }
    eprintln!("zstd frames in shared/vectors: {frames} in {files} files");
    assert!(frames >= 10, "only {frames} frames found");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Mutated frames (1-4 byte flips of multi-block, 4-stream Huffman frames):
    /// whenever ours accepts, ruzstd accepts the same single frame with the same bytes.
    #[test]
    fn mutated_frames_agree_with_ruzstd(
        seed in 0u64..1000,
        level in prop::sample::select(vec![-5, 1, 3, 9, 19]),
        flips in proptest::collection::vec((any::<u16>(), 1u8..=255), 1..5),
    ) {
        let data = if seed % 2 == 0 { ct_like(150_000, seed) } else { repetitive(150_000, seed) };
        let mut frame = rusty_zstd::compress(&data, level).unwrap();
        let n = frame.len();
        for (pos, x) in flips {
            frame[pos as usize * n / 65_536] ^= x;
        }
        let mut ours = Vec::new();
        if decompress_append(&frame, &mut ours, 1 << 20).is_ok() {
            let theirs = ruzstd_one_frame(&frame, 1 << 20);
            prop_assert!(theirs.is_some(), "ours accepted, ruzstd refused");
            let (used, theirs) = theirs.unwrap();
            prop_assert_eq!(used, frame.len());
            prop_assert!(theirs == ours, "outputs differ");
        }
    }
}

/// The frames that showed the other decoders' defects (`notes/zstd-rusty.md`):
/// libzstd refuses every one of them, and so must we.
#[test]
fn reproducers_from_the_rusty_zstd_evaluation_are_refused() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("notes/zstd-repro");
    let mut seen = 0;
    for name in [
        "block-over-max-400seq.zst",
        "block-over-max-400seq-fcs.zst",
        "block-over-max-4000seq.zst",
        "huffman-literal-count-mismatch-97.zst",
        "huffman-literal-count-mismatch-153.zst",
        "both-accept-corrupt-outputs-differ.zst",
    ] {
        let frame = std::fs::read(dir.join(name)).unwrap();
        let mut out = Vec::new();
        let r = super::decompress_append(&frame, &mut out, 1 << 30);
        assert!(r.is_err(), "{name}: decoded {} bytes", out.len());
        assert!(out.is_empty(), "{name}: output left behind");
        seen += 1;
    }
    assert_eq!(seen, 6);
}

/// Found by `f_zstd_own`: ruzstd ignores the reserved bit (bit 3) of the frame
/// header descriptor; RFC 8878 §3.1.1.1.1.4 says a decoder must check it is zero,
/// and libzstd refuses such frames. Ours refuses them too.
#[test]
fn reserved_descriptor_bit_is_refused() {
    let payload = [0u8, 0, 1, 0, 0xff, 0, 0, 0xff, 0xff, 0x6b, 0, 0, 0x6b];
    let frame = rusty_zstd::compress(&payload, 5).unwrap();
    let mut out = Vec::new();
    decompress_append(&frame, &mut out, 100).unwrap();
    assert_eq!(out, payload);
    let mut bad = frame.clone();
    bad[4] ^= 0x08;
    let err = decompress_append(&bad, &mut Vec::new(), 100).unwrap_err();
    assert!(err.to_string().contains("reserved bit"), "{err}");
}

/// Found by `f_zstd_own` (a flipped single-segment bit makes the next byte a
/// window descriptor of log 31 + mantissa 7, about 3.75 GiB): libzstd's CLI
/// and ruzstd refuse windows over 2 GiB, and so do we.
#[test]
fn window_over_two_gib_is_refused() {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("notes/zstd-repro/f_zstd_own-window-over-2gib.zst");
    let frame = std::fs::read(path).unwrap();
    let err = decompress_append(&frame, &mut Vec::new(), 1 << 20).unwrap_err();
    assert!(err.to_string().contains("window size"), "{err}");
}

/// The block state kept per thread between calls must not leak: a frame
/// whose first block uses treeless literals is refused even right after a
/// call that left a valid Huffman table, and results do not depend on what
/// was decoded (or failed) before.
#[test]
fn state_kept_between_calls_does_not_leak() {
    let a = ct_like(200_000, 7);
    let b = repetitive(70_000, 8);
    let fa = rusty_zstd::compress(&a, 5).unwrap();
    let fb = rusty_zstd::compress(&b, 3).unwrap();
    // Single-segment frame of 4 bytes: one compressed block holding
    // treeless literals (type 3, 4 literals, 1 stream byte) and no sequences.
    let treeless = [
        0x28, 0xB5, 0x2F, 0xFD, 0x20, 4, 45, 0, 0, 0x43, 0x40, 0x00, 0x80, 0x00,
    ];
    for _ in 0..3 {
        let mut dst = vec![0u8; a.len()];
        decompress_exact(&fa, &mut dst).unwrap();
        assert!(dst == a);
        let mut small = [0u8; 4];
        assert!(decompress_exact(&treeless, &mut small).is_err());
        // A truncated frame fails part way, leaving tables half set up.
        let mut dst = vec![0u8; a.len()];
        assert!(decompress_exact(&fa[..fa.len() / 2], &mut dst).is_err());
        let mut out = Vec::new();
        decompress_append(&fb, &mut out, b.len()).unwrap();
        assert!(out == b);
    }
}

/// Frame of `data` made by the reference `zstd` CLI (libzstd) at `level`.
/// `checksum: false` leaves the content checksum out, so corrupted frames
/// more often decode to wrong bytes instead of failing the checksum.
fn zstd_cli(data: &[u8], level: i32, checksum: bool) -> Vec<u8> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new("zstd");
    cmd.args(["-q", "-c", &format!("-{level}")]);
    if !checksum {
        cmd.arg("--no-check");
    }
    if level > 19 {
        cmd.arg("--ultra");
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the zstd CLI is needed (scripts/oracle-venv.sh installs it)");
    let mut stdin = child.stdin.take().unwrap();
    let input = data.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "zstd -{level} failed");
    out.stdout
}

/// Bytes with a tunable skew (`skew` = 0: uniform; larger: fewer, more
/// frequent symbols, so longer and shorter Huffman codes) and copies of
/// earlier runs at short and long distances (matches of every copy path).
fn skewed(n: usize, skew: u32, seed: u64) -> Vec<u8> {
    let mut r = lcg(seed);
    let mut v: Vec<u8> = Vec::with_capacity(n + 300);
    while v.len() < n {
        if v.len() > 16 && r().is_multiple_of(4) {
            let len = 3 + (r() % 200) as usize;
            let dist = match r() % 3 {
                0 => 1 + (r() % 16) as usize,
                1 => 16 + (r() % 48) as usize,
                _ => 1 + (r() as usize % v.len()),
            }
            .min(v.len());
            let from = v.len() - dist;
            for i in 0..len {
                let b = v[from + i];
                v.push(b);
            }
        } else {
            let mut b = r() as u32 & 0xFF;
            for _ in 0..skew {
                b = b.min(r() as u32 & 0xFF);
            }
            v.push(b as u8);
        }
    }
    v.truncate(n);
    v
}

/// Decode `frame` both ways (into an exact slice without slack, and into a
/// growable vector with slack) on the current thread's path; errors map to None.
fn decode_both(frame: &[u8], n: usize) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    let mut dst = vec![0xEEu8; n];
    let exact = decompress_exact(frame, &mut dst).ok().map(|_| dst);
    let mut out = Vec::new();
    let app = decompress_append(frame, &mut out, n).ok().map(|_| out);
    (exact, app)
}

/// Decode with the portable loops forced, then with the dispatched ones
/// (BMI2 where the CPU has it), then without the Huffman fast loop; all
/// must give the same result.
fn portable_vs_dispatched(frame: &[u8], n: usize) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    crate::zstd_decode::force_portable(true);
    let p = decode_both(frame, n);
    crate::zstd_decode::force_portable(false);
    let d = decode_both(frame, n);
    assert!(p == d, "portable and dispatched decoders disagree");
    // The Huffman 4-stream fast loop left out: same results.
    super::huffman::NO_FAST_LOOP.with(|f| f.set(true));
    let plain = decode_both(frame, n);
    super::huffman::NO_FAST_LOOP.with(|f| f.set(false));
    assert!(plain == d, "Huffman fast and plain loops disagree");
    sequence_loops_agree(frame, n);
    d
}

/// Decode into an exact slice and a growable vector; errors as messages.
fn decode_msgs(frame: &[u8], n: usize) -> [std::result::Result<Vec<u8>, String>; 2] {
    let mut dst = vec![0xEEu8; n];
    let exact = decompress_exact(frame, &mut dst)
        .map(|_| dst)
        .map_err(|e| e.to_string());
    let mut out = Vec::new();
    let app = decompress_append(frame, &mut out, n)
        .map(|_| out)
        .map_err(|e| e.to_string());
    [exact, app]
}

/// The batched sequence loop (with and without its fast decode, portable
/// and dispatched) gives the same bytes and the same error, message and
/// input offset included, as the interleaved reference loop.
fn sequence_loops_agree(frame: &[u8], n: usize) {
    use super::sequences::{NO_FAST_DECODE, REFERENCE_LOOP};
    REFERENCE_LOOP.with(|f| f.set(true));
    let want = decode_msgs(frame, n);
    REFERENCE_LOOP.with(|f| f.set(false));
    for portable in [false, true] {
        for plain in [false, true] {
            crate::zstd_decode::force_portable(portable);
            NO_FAST_DECODE.with(|f| f.set(plain));
            let got = decode_msgs(frame, n);
            NO_FAST_DECODE.with(|f| f.set(false));
            crate::zstd_decode::force_portable(false);
            assert!(
                got == want,
                "batched (portable {portable}, plain decode {plain}) and reference sequence loops disagree: {:?} vs {:?}",
                got.iter().map(|r| r.as_ref().map(|v| v.len())).collect::<Vec<_>>(),
                want.iter().map(|r| r.as_ref().map(|v| v.len())).collect::<Vec<_>>(),
            );
        }
    }
}

/// libzstd frames at levels 1..22 of flat, skewed, CT-like and repetitive
/// data (1- and 4-stream literals, RLE and FSE tables, long and short
/// matches) decode to the input on both code paths.
#[test]
fn zstd_cli_frames_decode_on_both_paths() {
    let mut cases: Vec<Vec<u8>> = vec![
        skewed(100, 0, 1),
        skewed(1000, 3, 2),
        skewed(40_000, 0, 3),
        skewed(40_000, 2, 4),
        skewed(40_000, 12, 5),
        skewed(300_000, 5, 6),
        ct_like(65_536, 7),
        repetitive(131_072, 8),
        random(20_000, 9),
    ];
    cases.push(vec![0u8; 50_000]);
    for (k, data) in cases.iter().enumerate() {
        for level in [1, 3, 5, 9, 19, 22] {
            let frame = zstd_cli(data, level, true);
            let (exact, app) = portable_vs_dispatched(&frame, data.len());
            assert!(
                exact.as_deref() == Some(&data[..]),
                "case {k} level {level}"
            );
            assert!(app.as_deref() == Some(&data[..]), "case {k} level {level}");
            // A frame cut short fails on both paths (typed error, no panic).
            let cut = &frame[..frame.len() - 1 - frame.len() / 3];
            let (e, a) = portable_vs_dispatched(cut, data.len());
            assert!(e.is_none() && a.is_none(), "case {k} level {level} cut");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random skewed data through the zstd CLI at several levels decodes
    /// exactly, and single-byte corruptions give equal results (usually
    /// errors) on the portable and the dispatched paths.
    #[test]
    fn zstd_cli_random_frames(n in 1usize..70_000, skew in 0u32..10, seed in any::<u64>(),
                              li in 0usize..5, flips in proptest::collection::vec((any::<u32>(), 1u8..=255), 1..4)) {
        let level = [1, 3, 5, 9, 19][li];
        let data = skewed(n, skew, seed);
        let frame = zstd_cli(&data, level, false);
        let (exact, app) = portable_vs_dispatched(&frame, n);
        prop_assert!(exact.as_deref() == Some(&data[..]));
        prop_assert!(app.as_deref() == Some(&data[..]));
        let mut bad = frame.clone();
        for (at, x) in flips {
            let i = at as usize % bad.len();
            bad[i] ^= x;
        }
        portable_vs_dispatched(&bad, n);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Frames with many sequences (long runs of short matches, from the
    /// zstd CLI and from our encoder) decode the same on the batched and
    /// the reference sequence loops, intact, cut short anywhere, and with
    /// bytes flipped in the second half (mostly the sequences sections):
    /// same bytes or the same error, never a panic.
    #[test]
    fn sequence_loops_agree_on_damaged_frames(n in 1usize..200_000, skew in 0u32..12,
                                              seed in any::<u64>(), li in 0usize..4, ours in any::<bool>(),
                                              cut in any::<u32>(),
                                              flips in proptest::collection::vec((any::<u32>(), 1u8..=255), 1..4)) {
        let level = [1, 3, 5, 19][li];
        let data = skewed(n, skew, seed);
        let frame = if ours {
            crate::zstd_encode::compress::compress(&data, level)
                .unwrap_or_else(|| zstd_cli(&data, level, false))
        } else {
            zstd_cli(&data, level, false)
        };
        let [exact, app] = decode_msgs(&frame, n);
        prop_assert!(exact.as_deref() == Ok(&data[..]));
        prop_assert!(app.as_deref() == Ok(&data[..]));
        sequence_loops_agree(&frame, n);
        let c = cut as usize % frame.len();
        sequence_loops_agree(&frame[..c], n);
        let mut bad = frame.clone();
        for (at, x) in flips {
            let i = bad.len() / 2 + at as usize % (bad.len() - bad.len() / 2);
            bad[i] ^= x;
        }
        sequence_loops_agree(&bad, n);
    }
}

/// Offset of the sequences section's mode byte in a one-block frame (RFC 8878
/// §3.1.1, §3.1.1.3.1, §3.1.1.3.2.1), or None if the block has no sequences.
fn seq_mode_offset(f: &[u8]) -> Option<usize> {
    let fhd = f[4];
    let fcs = [usize::from(fhd & 0x20 != 0), 2, 4, 8][usize::from(fhd >> 6)];
    let mut o = 5 + usize::from(fhd & 0x20 == 0) + [0, 1, 2, 4][usize::from(fhd & 3)] + fcs;
    let bh = u32::from_le_bytes([f[o], f[o + 1], f[o + 2], 0]);
    assert_eq!((bh >> 1) & 3, 2, "a compressed block");
    o += 3;
    let (lt, sf) = (f[o] & 3, (f[o] >> 2) & 3);
    let v = u64::from_le_bytes(f[o..o + 8].try_into().ok()?);
    o += match (lt, sf) {
        (0 | 1, 0 | 2) => 1 + if lt == 0 { (v >> 3) as usize & 31 } else { 1 },
        (0 | 1, 1) => {
            2 + if lt == 0 {
                (v >> 4) as usize & 0xFFF
            } else {
                1
            }
        }
        (0 | 1, _) => {
            3 + if lt == 0 {
                (v >> 4) as usize & 0xFFFFF
            } else {
                1
            }
        }
        (_, 0 | 1) => 3 + ((v >> 14) as usize & 0x3FF),
        (_, 2) => 4 + ((v >> 18) as usize & 0x3FFF),
        _ => 5 + ((v >> 22) as usize & 0x3FFFF),
    };
    match f[o] {
        0 => None,
        n if n < 128 => Some(o + 1),
        n if n < 255 => Some(o + 2),
        _ => Some(o + 3),
    }
}

/// Repeat mode names the table of an earlier block of the same frame; a
/// table the previous frame set up is not one (RFC 8878 §3.1.1.3.2.1: the
/// tables are reset at each frame). The decoder keeps a predefined table's
/// cells across frames, not its standing for repeat mode.
#[test]
fn repeat_mode_does_not_reach_into_the_previous_frame() {
    let data = repetitive(3000, 7);
    let a = crate::zstd_codec::compress(&data, 3);
    let at = seq_mode_offset(&a).expect("the frame has sequences");
    let mut b = a.clone();
    b[at] = 0xFC; // every table in repeat mode
    let mut out = vec![0u8; 2 * data.len()];
    assert!(decompress_exact(&a, &mut out[..data.len()]).is_ok());
    for modes in [0x00u8, a[at]] {
        let mut first = a.clone();
        if modes == 0 {
            // A first frame in predefined mode, when its stream still decodes
            // to its length (else only the frame as compressed is used).
            first[at] = 0;
            if decompress_exact(&first, &mut out[..data.len()]).is_err() {
                continue;
            }
        }
        let two = [first.as_slice(), b.as_slice()].concat();
        let e = decompress_exact(&two, &mut out).expect_err("repeat mode in a new frame");
        assert!(e.to_string().contains("repeat"), "{e}");
    }
}
