//! Thread CPU time for the benches (included with `#[path]`, not a bench of
//! its own).

/// CPU time of this thread in seconds (`CLOCK_THREAD_CPUTIME_ID`), where there
/// is one. Not `/proc/thread-self/schedstat`: a running thread's entry there
/// is only brought up to date at scheduler ticks (1–4 ms), which made short
/// passes read too little and biased the minimum of many passes low.
pub(crate) fn thread_cpu() -> Option<f64> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec, and the clock id is a constant.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return Some(ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9);
        }
    }
    None
}

/// [`thread_cpu`], or wall time since the first call where there is none.
#[allow(dead_code)]
pub(crate) fn cpu_or_wall() -> f64 {
    static T0: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    thread_cpu().unwrap_or_else(|| {
        T0.get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs_f64()
    })
}
