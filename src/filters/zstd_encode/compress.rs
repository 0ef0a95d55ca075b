//! One Zstandard frame (RFC 8878 §3.1.1) from our own encoder: frame header
//! with the content size, blocks of at most 128 KiB parsed by [`super::opt`]
//! and written by [`super::entropy`], no checksum. Level 22 only.

use super::entropy::{write_frame_header, BlockEncoder, BlockKind};
use super::opt::{params_level22, MatchFinder, Params, Parser, INITIAL_REPS};
use std::cell::RefCell;

use crate::zstd_decode::BLOCK_MAX;
/// Largest source encoded here: the tables grow with the window (at 8 MiB,
/// 2 × 32 MiB of tree and hash); larger inputs go to the general encoder.
const MAX_SRC: usize = 8 << 20;

/// Match-finder tables kept per thread between inputs (at most this many,
/// the most recently used last): a 1 MiB input needs 16.5 MiB of them.
const CACHED_FINDERS: usize = 2;
/// Tables for windows above this are not kept (they are larger than the
/// 1 MiB blocks' 16.5 MiB).
const CACHED_WINDOW_LOG_MAX: u32 = 20;

thread_local! {
    static FINDERS: RefCell<Vec<MatchFinder>> = const { RefCell::new(Vec::new()) };
}

/// Tables for `p`: this thread's cached ones if it has some, else new.
fn take_finder(p: Params) -> MatchFinder {
    FINDERS
        .try_with(|c| {
            let mut v = c.try_borrow_mut().ok()?;
            let i = v.iter().position(|f| f.params() == p)?;
            Some(v.remove(i))
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| MatchFinder::new(p))
}

/// Keep `mf` for this thread's next input with the same parameters.
fn give_back(mf: MatchFinder) {
    if mf.params().window_log > CACHED_WINDOW_LOG_MAX {
        return;
    }
    let _ = FINDERS.try_with(|c| {
        if let Ok(mut v) = c.try_borrow_mut() {
            if v.len() >= CACHED_FINDERS {
                v.remove(0);
            }
            v.push(mf);
        }
    });
}

/// `src` as one frame at `level`, or `None` for the levels (and sizes) this
/// encoder does not implement.
pub(crate) fn compress(src: &[u8], level: i32) -> Option<Vec<u8>> {
    compress_with(src, level, true)
}

/// [`compress`], with this thread's cached tables (`reuse`) or fresh ones.
fn compress_with(src: &[u8], level: i32, reuse: bool) -> Option<Vec<u8>> {
    if level != 22 || src.len() > MAX_SRC {
        return None;
    }
    #[allow(unused_mut)]
    let mut p = params_level22(src.len());
    #[cfg(test)]
    if let Some(h) = std::env::var("ZENC_HLOG").ok().and_then(|v| v.parse().ok()) {
        p.hash_log = h;
    }
    let mut out = Vec::with_capacity(src.len() / 2 + 64);
    write_frame_header(src.len() as u64, p.window_log, &mut out);
    if src.is_empty() {
        // One empty Raw block, Last_Block set.
        out.extend_from_slice(&[1, 0, 0]);
        return Some(out);
    }
    let mut mf = if reuse {
        take_finder(p)
    } else {
        MatchFinder::new(p)
    };
    mf.start_input(src.len());
    let mut parser = Parser::with_finder(mf);
    let mut enc = BlockEncoder::new();
    let mut rep = INITIAL_REPS;
    let (mut lits, mut seqs) = (Vec::new(), Vec::new());
    let mut start = 0;
    while start < src.len() {
        let end = src.len().min(start + BLOCK_MAX);
        lits.clear();
        seqs.clear();
        let before = rep;
        parser.parse_block(src, start, end, &mut rep, &mut lits, &mut seqs);
        let kind = enc.encode_block(&src[start..end], &lits, &seqs, end == src.len(), &mut out);
        if kind != BlockKind::Compressed {
            // The decoder never saw these sequences.
            rep = before;
        }
        start = end;
    }
    if reuse {
        give_back(parser.into_finder());
    }
    Some(out)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::zstd_codec::decode_bounded;
    use proptest::prelude::*;

    fn check(src: &[u8]) -> Vec<u8> {
        let z = compress(src, 22).expect("level 22");
        let back = decode_bounded(&z, src.len(), "zstd").expect("our decoder");
        assert_eq!(back, src);
        z
    }

    /// Round trip through `zstd -d` when the CLI exists (shared with the
    /// other encoders' tests).
    pub(in crate::zstd_encode) fn check_cli(z: &[u8], src: &[u8]) {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let Ok(mut child) = Command::new("zstd")
            .args(["-d", "-c", "-q"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
        else {
            println!("skipped: zstd CLI absent");
            return;
        };
        let mut stdin = child.stdin.take().expect("stdin");
        let data = z.to_vec();
        let w = std::thread::spawn(move || stdin.write_all(&data));
        let o = child.wait_with_output().expect("zstd ran");
        w.join().expect("writer").expect("write");
        assert!(o.status.success());
        assert_eq!(o.stdout, src);
    }

    fn lcg_data(n: usize, seed: u32) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                match (i / 4096) % 4 {
                    0 => (x >> 29) as u8,
                    1 => (i % 13) as u8,
                    2 => 0,
                    _ => (x >> 24) as u8,
                }
            })
            .collect()
    }

    #[test]
    fn only_level_22() {
        assert!(compress(b"abc", 19).is_none());
        assert!(compress(b"abc", 22).is_some());
    }

    #[test]
    fn frames_round_trip() {
        for src in [
            Vec::new(),
            b"a".to_vec(),
            b"abcabcabcabcabc".to_vec(),
            vec![9u8; 300_000],
            lcg_data(1000, 1),
            lcg_data(400_000, 2),
        ] {
            let z = check(&src);
            check_cli(&z, &src);
        }
    }

    /// Tables reused across inputs of different sizes and contents (and
    /// through the zeroing path) give the frames fresh tables give.
    #[test]
    fn reused_tables_give_fresh_tables_output() {
        let text: Vec<u8> = b"reuse the tables, not the output; "
            .iter()
            .cycle()
            .take(70_000)
            .copied()
            .collect();
        let inputs = [
            lcg_data(1 << 20, 3),
            lcg_data(1 << 20, 4),
            lcg_data(300_000, 5),
            lcg_data(1 << 20, 3),
            vec![0u8; 1 << 20],
            text.clone(),
            lcg_data(1000, 6),
            lcg_data((1 << 20) - 4096, 7),
            lcg_data(1 << 20, 8),
        ];
        for (i, src) in inputs.iter().enumerate() {
            let fresh = compress_with(src, 22, false).expect("22");
            let reused = compress(src, 22).expect("22");
            assert!(
                fresh == reused,
                "input {i}: reused tables changed the frame"
            );
            let back = decode_bounded(&reused, src.len(), "zstd").expect("decode");
            assert_eq!(&back, src);
        }
        // Indices near the limit: the next input must zero the tables.
        let p = params_level22(1 << 20);
        let mut mf = take_finder(p);
        mf.push_base_near_limit(1 << 20);
        give_back(mf);
        for src in [lcg_data(1 << 20, 9), lcg_data(1 << 20, 10)] {
            let fresh = compress_with(&src, 22, false).expect("22");
            assert!(fresh == compress(&src, 22).expect("22"));
        }
        let fresh = compress_with(&text, 22, false).expect("22");
        check_cli(&fresh, &text);
    }

    #[test]
    fn compresses_repetitive_data() {
        let src: Vec<u8> = (0..1u32 << 20).map(|i| ((i * 7) % 251) as u8).collect();
        let z = check(&src);
        assert!(z.len() < 2000, "{}", z.len());
        check_cli(&z, &src);
    }

    /// A/B per block, interleaved: `ZENC_DIR=/tmp/zblk cargo test --release
    /// --lib bench_frames -- --ignored --nocapture` (C-Blosc2's frame beside
    /// each `X.bin` as `X.bin.ref`, the CLI's as `X.bin.cli`).
    #[test]
    #[ignore]
    fn bench_frames() {
        let Ok(dir) = std::env::var("ZENC_DIR") else {
            println!("skipped: ZENC_DIR unset");
            return;
        };
        let filt = std::env::var("ZENC_FILTER").unwrap_or_default();
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .expect("dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "bin"))
            .filter(|p| p.to_string_lossy().contains(&filt))
            .collect();
        names.sort();
        let cpu = crate::zstd_encode::opt::thread_cpu_ns;
        let size_of = |p: &std::path::Path, ext: &str| {
            std::fs::metadata(p.with_extension(ext)).map_or(0, |m| m.len() as usize)
        };
        let mut tot = [0usize; 4];
        let (mut t_ours, mut t_rusty) = (0u64, 0u64);
        for (i, p) in names.iter().enumerate() {
            let mut src = std::fs::read(p).expect("read");
            // ZENC_SLICE=N: only the first N bytes (the stored sizes no longer apply).
            if let Some(n) = std::env::var("ZENC_SLICE")
                .ok()
                .and_then(|v| v.parse().ok())
            {
                src.truncate(n);
            }
            let run_ours = || {
                let t = cpu();
                let z = compress(&src, 22).expect("22");
                (z, cpu() - t)
            };
            let run_rusty = || {
                let t = cpu();
                let z = rusty_zstd::compress_with(
                    &src,
                    rusty_zstd::CompressOptions {
                        level: 22,
                        checksum: false,
                    },
                )
                .expect("rusty");
                (z, cpu() - t)
            };
            let ((z, to), (r, tr)) = if i % 2 == 0 {
                let a = run_ours();
                (a, run_rusty())
            } else {
                let b = run_rusty();
                (run_ours(), b)
            };
            let back = decode_bounded(&z, src.len(), "zstd").expect("decode");
            assert_eq!(back, src);
            let (rf, cli) = (size_of(p, "bin.ref"), size_of(p, "bin.cli"));
            println!(
                "{} ours {} rusty {} ref {} cli {} | ours/cli {:.4} | cpu ours {:.3} rusty {:.3}",
                p.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default(),
                z.len(),
                r.len(),
                rf,
                cli,
                z.len() as f64 / cli.max(1) as f64,
                to as f64 * 1e-9,
                tr as f64 * 1e-9
            );
            tot[0] += z.len();
            tot[1] += r.len();
            tot[2] += rf;
            tot[3] += cli;
            t_ours += to;
            t_rusty += tr;
        }
        println!(
            "TOTAL ours {} rusty {} ref {} cli {} | ours/ref {:.4} ours/cli {:.4} rusty/cli {:.4} | cpu ours {:.2}s rusty {:.2}s",
            tot[0],
            tot[1],
            tot[2],
            tot[3],
            tot[0] as f64 / tot[2].max(1) as f64,
            tot[0] as f64 / tot[3].max(1) as f64,
            tot[1] as f64 / tot[3].max(1) as f64,
            t_ours as f64 * 1e-9,
            t_rusty as f64 * 1e-9
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn random_inputs_round_trip(v in proptest::collection::vec(any::<u8>(), 0..3000)) {
            check(&v);
        }

        #[test]
        fn repetitive_inputs_round_trip(
            unit in proptest::collection::vec(0u8..4, 1..40),
            reps in 1usize..3000,
            noise in proptest::collection::vec((0usize..100_000, any::<u8>()), 0..50),
        ) {
            let mut v: Vec<u8> = unit.iter().cycle().take(unit.len() * reps).copied().collect();
            for (i, b) in noise {
                if let Some(x) = v.get_mut(i) {
                    *x = b;
                }
            }
            check(&v);
        }
    }
}
