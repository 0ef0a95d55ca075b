//! How many threads purehdf's own work may use (issue 19 item 6): the one
//! policy behind `--threads N` on every `medh5` and `h5` command, the
//! `MEDH5_THREADS` environment variable (as the reference's CLI,
//! `docs/medh5-format.md` tool notes) and [`set_threads`] for library users.
//!
//! Order: [`set_threads`] (the CLIs call it for `--threads`), else
//! `MEDH5_THREADS`, else `RAYON_NUM_THREADS`, else every core the process may
//! use. Unlike the reference (default 1) the default is every core: reads and
//! writes scale with cores and the bench's "two threads" column is the
//! default. One thread means no pool at all: every parallel site asks
//! [`parallel`] first and runs inline, so no rayon worker is ever started.
//! With more than one, the global rayon pool is built with exactly that many
//! workers the first time work runs in parallel; its size is fixed from then on.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The environment variable the reference reads for its thread count.
pub const ENV: &str = "MEDH5_THREADS";

/// Largest thread count accepted (a typo such as `--threads 20000` is refused).
pub const MAX_THREADS: usize = 1024;

/// Set by [`set_threads`]; 0 = not set (environment / core count decides).
static REQUESTED: AtomicUsize = AtomicUsize::new(0);

/// Size of the global pool once parallel work has started.
#[cfg(feature = "parallel")]
static POOL: OnceLock<usize> = OnceLock::new();

fn parse_count(s: &str) -> Option<usize> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Some(n),
        _ => None,
    }
}

/// The count when nothing was set: `MEDH5_THREADS`, `RAYON_NUM_THREADS`, cores.
fn default_threads() -> usize {
    static D: OnceLock<usize> = OnceLock::new();
    *D.get_or_init(|| {
        [ENV, "RAYON_NUM_THREADS"]
            .iter()
            .find_map(|k| std::env::var(k).ok().as_deref().and_then(parse_count))
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(usize::from)
                    .unwrap_or(1)
            })
    })
}

/// Threads purehdf's work uses (≥ 1). Without the `parallel` feature always 1.
pub fn threads() -> usize {
    if !cfg!(feature = "parallel") {
        return 1;
    }
    match REQUESTED.load(Ordering::Relaxed) {
        0 => default_threads(),
        n => n,
    }
}

/// Use `n` threads (0 = back to the default). Fails for a count over
/// `MAX_THREADS`, or for a second count above one once the pool has
/// started with another size (one thread is always possible: it uses no pool).
pub fn set_threads(n: usize) -> Result<()> {
    if n > MAX_THREADS {
        return Err(Error::InvalidArgument(format!(
            "{n} threads: at most {MAX_THREADS}"
        )));
    }
    #[cfg(feature = "parallel")]
    if let Some(&size) = POOL.get() {
        let want = if n == 0 { default_threads() } else { n };
        if want > 1 && want != size {
            return Err(Error::InvalidArgument(format!(
                "the thread pool already runs {size} threads; set the count before the first parallel work"
            )));
        }
    }
    REQUESTED.store(n, Ordering::Relaxed);
    Ok(())
}

/// True when work should be spread over the pool (more than one thread);
/// builds the global pool with [`threads`] workers on the first call that says so.
pub fn parallel() -> bool {
    #[cfg(feature = "parallel")]
    {
        let n = threads();
        if n <= 1 {
            return false;
        }
        POOL.get_or_init(|| {
            // Fails only when the embedding program already built the global
            // pool; its size then stands.
            let _ = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build_global();
            rayon::current_num_threads()
        });
        true
    }
    #[cfg(not(feature = "parallel"))]
    {
        false
    }
}

/// Run two closures, on two pool threads when [`parallel`].
pub fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    #[cfg(feature = "parallel")]
    if parallel() {
        return rayon::join(a, b);
    }
    (a(), b())
}

/// `job` over every item, results in order, on the pool when [`parallel`].
pub fn map<T: Sync, R: Send>(items: &[T], job: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "parallel")]
    if parallel() {
        use rayon::prelude::*;
        return items.par_iter().map(job).collect();
    }
    items.iter().map(job).collect()
}

/// `job` over every item, in order, on the pool when [`parallel`]; the first
/// error (in item order when sequential) ends the run.
pub fn try_map<T: Sync, R: Send, E: Send>(
    items: &[T],
    job: impl Fn(&T) -> std::result::Result<R, E> + Sync + Send,
) -> std::result::Result<Vec<R>, E> {
    #[cfg(feature = "parallel")]
    if parallel() {
        use rayon::prelude::*;
        return items.par_iter().map(job).collect();
    }
    items.iter().map(job).collect()
}

/// The first `Some` that `f` gives for the pieces of `data` (`piece` items each,
/// in order), with the pieces scanned on the pool when [`parallel`].
pub fn find_first<T: Sync, R: Send>(
    data: &[T],
    piece: usize,
    f: impl Fn(&[T]) -> Option<R> + Sync + Send,
) -> Option<R> {
    let piece = piece.max(1);
    #[cfg(feature = "parallel")]
    if data.len() > piece && parallel() {
        use rayon::prelude::*;
        return data.par_chunks(piece).find_map_first(f);
    }
    data.chunks(piece).find_map(f)
}

/// Take the global `--threads N` / `--threads=N` out of a command line (any
/// position) and apply it; `MEDH5_THREADS` is read when none is given.
/// Returns the remaining arguments, or a usage message.
pub fn take_flag(args: Vec<String>) -> std::result::Result<Vec<String>, String> {
    let mut rest = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    let mut count = None;
    while let Some(a) = it.next() {
        let value = if a == "--threads" {
            Some(it.next().unwrap_or_default())
        } else {
            a.strip_prefix("--threads=").map(str::to_string)
        };
        match value {
            Some(v) => match parse_count(&v) {
                Some(n) => count = Some(n),
                None => {
                    return Err(format!(
                        "--threads takes a count from 1 to {MAX_THREADS}, not {v:?}"
                    ))
                }
            },
            None => rest.push(a),
        }
    }
    if let Some(n) = count {
        set_threads(n).map_err(|e| e.to_string())?;
    } else if let Ok(v) = std::env::var(ENV) {
        if parse_count(&v).is_none() {
            return Err(format!(
                "{ENV} takes a count from 1 to {MAX_THREADS}, not {v:?}"
            ));
        }
    }
    Ok(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn flag_is_taken_anywhere_and_checked() {
        assert_eq!(parse_count("3"), Some(3));
        assert_eq!(parse_count("0"), None);
        assert_eq!(parse_count("x"), None);
        assert_eq!(parse_count("1025"), None);
        assert!(take_flag(args("verify --threads 0 f")).is_err());
        assert!(take_flag(args("verify f --threads")).is_err());
        assert!(take_flag(args("--threads=abc verify f")).is_err());
        assert!(set_threads(MAX_THREADS + 1).is_err());
        // Without a flag nothing changes and the words pass through.
        assert_eq!(
            take_flag(args("verify a.medh5 --json")).unwrap(),
            args("verify a.medh5 --json")
        );
    }

    #[test]
    fn one_thread_runs_inline() {
        // One thread is always allowed, whatever ran before.
        let rest = take_flag(args("--threads 1 verify f")).unwrap();
        assert_eq!(rest, args("verify f"));
        assert_eq!(threads(), 1);
        assert!(!parallel());
        let main = std::thread::current().id();
        let (a, b) = join(|| std::thread::current().id(), || 7);
        assert_eq!((a, b), (main, 7));
        set_threads(0).unwrap();
        assert!(threads() >= 1);
    }
}
