//! `noise`: pseudo-random bytes for the tests and benches that need
//! incompressible input. The one definition: the integration tests and
//! benches include this file, and the library's own tests reach it as
//! `test_support::noise` (a `#[path]` module of `src/filters/test_support.rs`).

/// `n` pseudo-random bytes (xorshift64 from `seed`; the same bytes for the
/// same seed).
pub(crate) fn noise(n: usize, seed: u64) -> Vec<u8> {
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
