//! Bursts of parallel work after a busy single-threaded start, as a medh5
//! command does (open, parse, then parallel chunk decoding): prints each
//! burst's time against the same burst run on one thread, and each thread's
//! run and run-queue wait time (`/proc/thread-self/schedstat`). On a machine
//! that packs threads onto one core, the first bursts take the one-thread
//! time and both pool threads wait about half of it in the run queue; once
//! the load has lasted long enough, bursts take half.

use rayon::prelude::*;
use std::time::Instant;

/// About 0.1 ms of integer work.
fn work(seed: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..40_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x ^= x >> 13;
    }
    x
}

fn schedstat() -> (f64, f64) {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let mut it = s
        .split_whitespace()
        .map(|v| v.parse::<f64>().unwrap_or(0.0) / 1e6);
    (it.next().unwrap_or(0.0), it.next().unwrap_or(0.0))
}

fn main() {
    let arg = |i: usize, d: u64| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(d)
    };
    let (pre_ms, bursts) = (arg(1, 200), arg(2, 40) as usize);
    let items: Vec<u64> = (0..32).collect();
    let t = Instant::now();
    let one: u64 = items.iter().map(|&i| work(i)).sum();
    let serial = t.elapsed().as_secs_f64() * 1e3;
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build_global()
        .expect("pool");
    let t = Instant::now();
    while t.elapsed().as_millis() < u128::from(pre_ms) {
        std::hint::black_box(work(7));
    }
    let mut times = Vec::new();
    for _ in 0..bursts {
        let t = Instant::now();
        let s: u64 = items.par_iter().map(|&i| work(i)).sum();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(s, one);
    }
    let line: Vec<String> = times.iter().map(|t| format!("{t:.1}")).collect();
    println!("one-thread burst {serial:.1} ms; after {pre_ms} ms busy on one thread, bursts on two (ms):");
    println!("{}", line.join(" "));
    let halves = times.iter().filter(|&&t| t < 0.7 * serial).count();
    println!("{halves} of {bursts} bursts ran in under 0.7x the one-thread time");
    let stats: Vec<(f64, f64)> = rayon::broadcast(|_| schedstat());
    for (i, (run, wait)) in stats.iter().enumerate() {
        println!("pool thread {i}: ran {run:.1} ms, waited {wait:.1} ms in the run queue");
    }
}
