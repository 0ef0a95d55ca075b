//! The kill -9 harnesses' one primitive: run a writer and kill it at a moment.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Spawn, kill -9 after `delay` (or let it finish first); true when killed.
pub(crate) fn kill_after(exe: &str, args: &[String], delay: Duration) -> bool {
    let mut c = Command::new(exe)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while t0.elapsed() < delay {
        if c.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    let killed = c.try_wait().unwrap().is_none();
    let _ = c.kill(); // SIGKILL on unix
    let _ = c.wait();
    killed
}

/// Run a writer to the end; it must succeed.
pub(crate) fn run(exe: &str, args: &[String]) {
    let o = Command::new(exe).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
