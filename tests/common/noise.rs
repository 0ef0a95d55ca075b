//! `noise`: pseudo-random bytes for the integration tests and benches that
//! need incompressible input (the library's own tests use
//! `test_support::noise`, which these binaries cannot reach).

/// `n` pseudo-random bytes (xorshift64 from `seed`; the same bytes for the
/// same seed).
pub fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}
