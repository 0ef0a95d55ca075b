//! Time strided reads against a full read of one dataset, in process (so the
//! times are the read's, not process start's). Used by
//! `scripts/bench_strided.py`; by hand:
//!
//! ```text
//! cargo run --release --example strided_read -- FILE DSET ROUNDS SPEC...
//! ```
//!
//! Each SPEC is `all` or one `start:stop:step` (parts may be empty, as in
//! numpy) per dimension, comma-separated, e.g. `::4,::4,::4` or `,,::2`.
//! Without arguments it checks itself instead: strided reads of a small
//! deflated dataset against the same elements gathered from a full read.
//! Set the thread count with `MEDH5_THREADS`. The file is opened anew for
//! each read (not timed), so no decoded chunk is kept from one read to the
//! next. Every round reads every spec
//! once (so the specs share the machine's load alike); prints one line per
//! spec: `SPEC min_ms median_ms elements checksum`, the checksum a sum of
//! the bytes read (the same for every thread count).
use std::time::Instant;

use purehdf::{DatasetSpec, File, FileWriter, Filter, Slice, SliceArg};

fn parse(spec: &str) -> Result<Slice, String> {
    if spec == "all" {
        return Ok(Slice::all());
    }
    let num = |t: &str| -> Result<Option<i64>, String> {
        let t = t.trim();
        if t.is_empty() {
            return Ok(None);
        }
        t.parse().map(Some).map_err(|_| format!("bad number {t:?}"))
    };
    let mut args = Vec::new();
    for part in spec.split(',') {
        let p: Vec<&str> = part.split(':').collect();
        let arg = match p.as_slice() {
            [a] if a.trim().is_empty() => SliceArg::from(..),
            [a, b] | [a, b, ""] => range(num(a)?, num(b)?, 1),
            [a, b, c] => range(num(a)?, num(b)?, num(c)?.unwrap_or(1)),
            _ => return Err(format!("bad slice part {part:?}")),
        };
        args.push(arg);
    }
    Ok(Slice::new(args))
}

fn range(start: Option<i64>, end: Option<i64>, step: i64) -> SliceArg {
    SliceArg::Range {
        start: start.unwrap_or(0),
        end,
        step,
    }
}

/// One axis of a selection: start, stop, step.
type Axis = (usize, usize, usize);

/// Strided reads of a 40 x 48 x 56 f32 dataset in 16³ deflated chunks equal
/// the same elements picked from a full read.
fn self_check() -> Result<(), Box<dyn std::error::Error>> {
    let dims = [40usize, 48, 56];
    let data: Vec<f32> = (0..dims.iter().product::<usize>())
        .map(|i| (i % 1013) as f32 * 0.5)
        .collect();
    let mut w = FileWriter::in_memory();
    let spec =
        DatasetSpec::of::<f32>(&[40, 48, 56]).chunked(&[16, 16, 16], vec![Filter::deflate(4)?]);
    w.write_dataset(w.root(), "x", spec, &data)?;
    let f = File::from_bytes(w.finish()?)?;
    let ds = f.root()?.dataset("x")?;
    // (spec, per axis (start, stop, step))
    let cases: [(&str, [Axis; 3]); 4] = [
        ("::4,::4,::4", [(0, 40, 4), (0, 48, 4), (0, 56, 4)]),
        (",,::2", [(0, 40, 1), (0, 48, 1), (0, 56, 2)]),
        ("1:39:3,::5,7::2", [(1, 39, 3), (0, 48, 5), (7, 56, 2)]),
        ("5:6,17:40:20,::55", [(5, 6, 1), (17, 40, 20), (0, 56, 55)]),
    ];
    for (spec, axes) in cases {
        let h = ds.hyperslab(&parse(spec)?)?;
        let n = h.num_elements().ok_or("selection overflows")? as usize;
        let mut out = vec![0u8; n * 4];
        ds.read_hyperslab_raw(&h, &mut out)?;
        let mut want = Vec::with_capacity(n * 4);
        for i in (axes[0].0..axes[0].1).step_by(axes[0].2) {
            for j in (axes[1].0..axes[1].1).step_by(axes[1].2) {
                for k in (axes[2].0..axes[2].1).step_by(axes[2].2) {
                    want.extend_from_slice(&data[(i * dims[1] + j) * dims[2] + k].to_le_bytes());
                }
            }
        }
        assert_eq!(out, want, "{spec}");
        println!("{spec}: {n} elements equal to the full read's");
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        return self_check();
    }
    let [file, dset, rounds, specs @ ..] = args.as_slice() else {
        return Err("usage: strided_read [FILE DSET ROUNDS SPEC...]".into());
    };
    let rounds: usize = rounds.parse()?;
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); specs.len()];
    let mut sums = vec![(0u64, 0u64); specs.len()];
    for _ in 0..rounds.max(1) {
        for (i, spec) in specs.iter().enumerate() {
            // A fresh open per read: no decoded chunk is kept from the last.
            let f = File::open(file)?;
            let ds = f.root()?.dataset(dset)?;
            let esize = ds.dtype().size() as usize;
            let h = ds.hyperslab(&parse(spec)?)?;
            let n = h.num_elements().ok_or("selection overflows")? as usize;
            let t = Instant::now();
            let mut out = vec![0u8; n * esize];
            ds.read_hyperslab_raw(&h, &mut out)?;
            times[i].push(t.elapsed().as_secs_f64() * 1e3);
            sums[i] = (n as u64, out.iter().map(|&b| u64::from(b)).sum());
        }
    }
    for ((spec, mut t), (n, sum)) in specs.iter().zip(times).zip(sums) {
        t.sort_by(f64::total_cmp);
        println!("{spec} {:.2} {:.2} {n} {sum}", t[0], t[t.len() / 2]);
    }
    Ok(())
}
