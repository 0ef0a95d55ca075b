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
//! Set the thread count with `MEDH5_THREADS`. The file is opened anew for
//! each read (not timed), so no decoded chunk is kept from one read to the
//! next. Every round reads every spec
//! once (so the specs share the machine's load alike); prints one line per
//! spec: `SPEC min_ms median_ms elements checksum`, the checksum a sum of
//! the bytes read (the same for every thread count).
use std::time::Instant;

use purehdf::{File, Slice, SliceArg};

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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, dset, rounds, specs @ ..] = args.as_slice() else {
        return Err("usage: strided_read FILE DSET ROUNDS SPEC...".into());
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
