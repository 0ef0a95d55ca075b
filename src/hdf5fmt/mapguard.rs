//! SIGBUS guard for memory-mapped sources (issue 16 item 1; the IatroCache defect
//! of `docs/neighbours.md` I10 we promised not to have).
//!
//! A file truncated by another process while it is mapped makes every access to a
//! page past the new end raise SIGBUS, which kills the process. Each
//! [`crate::source::MmapSource`] registers its mapping here; a
//! process-wide SIGBUS handler that finds the faulting address inside a registered
//! mapping maps anonymous zero pages over the rest of that mapping (so the
//! faulting load completes and later loads cannot fault), marks the mapping
//! faulted and returns. The source then answers every later
//! [`crate::source::Source::check`] with a typed
//! [`crate::Error::SourceChanged`]; the dataset and attribute readers check at
//! their end, so zeros read from the replaced pages never reach a caller as data.
//! Faults outside registered mappings go to the handler that was installed
//! before (Rust's stack-overflow guard, or the default action).
//!
//! The handler only does async-signal-safe work: atomic loads and stores on a
//! fixed table, `mmap` and `sigaction`.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;

/// Most mappings guarded at once; a source opened beyond this is still mapped
/// but unguarded (it then behaves like a plain map: see the README).
const SLOTS: usize = 4096;

struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
    faulted: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
};

static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static OLD: AtomicPtr<libc::sigaction> = AtomicPtr::new(std::ptr::null_mut());
static INSTALL: Once = Once::new();

/// A registered mapping; unregisters on drop (before the map itself is dropped).
pub struct Guard {
    slot: Option<usize>,
}

impl Guard {
    /// Register `[start, start + len)`. Installs the handler on first use.
    pub fn register(start: *const u8, len: usize) -> Guard {
        if len == 0 {
            return Guard { slot: None };
        }
        INSTALL.call_once(install);
        let start = start as usize;
        for (i, s) in TABLE.iter().enumerate() {
            if s.start
                .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                s.faulted.store(false, Ordering::Release);
                s.len.store(len, Ordering::Release);
                s.start.store(start, Ordering::Release);
                return Guard { slot: Some(i) };
            }
        }
        Guard { slot: None }
    }

    /// True when a page of this mapping faulted (the file shrank under it).
    pub fn faulted(&self) -> bool {
        self.slot
            .and_then(|i| TABLE.get(i))
            .is_some_and(|s| s.faulted.load(Ordering::Acquire))
    }

    /// True when the mapping is guarded (a table slot was free).
    pub fn active(&self) -> bool {
        self.slot.is_some()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(s) = self.slot.and_then(|i| TABLE.get(i)) {
            s.start.store(usize::MAX, Ordering::Release);
            s.len.store(0, Ordering::Release);
            s.faulted.store(false, Ordering::Release);
            s.start.store(0, Ordering::Release);
        }
    }
}

fn install() {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if let Ok(p) = usize::try_from(page) {
        if p.is_power_of_two() {
            PAGE.store(p, Ordering::Relaxed);
        }
    }
    // SAFETY: an all-zero sigaction is a valid value (empty mask, no flags).
    let mut old: Box<libc::sigaction> = Box::new(unsafe { std::mem::zeroed() });
    // SAFETY: as above.
    let mut new: libc::sigaction = unsafe { std::mem::zeroed() };
    new.sa_sigaction = on_sigbus as *const () as usize;
    new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
    // SAFETY: `new` is initialised, `old` points to writable memory that lives
    // for the rest of the process (leaked below), so the handler may read it.
    let rc = unsafe {
        libc::sigemptyset(&mut new.sa_mask);
        libc::sigaction(libc::SIGBUS, &new, &mut *old)
    };
    if rc == 0 {
        OLD.store(Box::into_raw(old), Ordering::Release);
    }
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let addr = if info.is_null() {
        0
    } else {
        // SAFETY: `info` was checked non-null just above, and for a handler installed with
        // SA_SIGINFO the kernel passes a valid siginfo_t that lives for the handler's call.
        unsafe { (*info).si_addr() as usize }
    };
    let page = PAGE.load(Ordering::Relaxed);
    for s in TABLE.iter() {
        let start = s.start.load(Ordering::Acquire);
        if start == 0 || start == usize::MAX {
            continue;
        }
        let len = s.len.load(Ordering::Acquire);
        let end = start.saturating_add(len);
        if addr < start || addr >= end {
            continue;
        }
        let from = addr & !(page - 1);
        let to = end.saturating_add(page - 1) & !(page - 1);
        // SAFETY: [from, to) lies inside a live mapping this process made
        // (registered by an MmapSource that unregisters before unmapping);
        // replacing it with private zero pages keeps it readable and the
        // MmapSource's later munmap of the whole range stays valid. mmap is
        // async-signal-safe on Linux (a plain system call).
        let p = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                to - from,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            s.faulted.store(true, Ordering::Release);
            return;
        }
        break;
    }
    chain(sig, info, ctx);
}

/// Hand a fault that is not ours to the previous handler (or the default action).
fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let old = OLD.load(Ordering::Acquire);
    // SAFETY: OLD is null or points to the leaked, never-freed sigaction saved at install.
    let prev = unsafe { old.as_ref() };
    let handler = prev.map_or(libc::SIG_DFL, |p| p.sa_sigaction);
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // Restore the default action and return: the faulting access repeats and
        // the process ends with SIGBUS as it would have without this guard.
        // SAFETY: an all-zero sigaction with SIG_DFL is valid; sigaction is async-signal-safe.
        unsafe {
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
        }
        return;
    }
    let flags = prev.map_or(0, |p| p.sa_flags);
    if flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler was installed with SA_SIGINFO, so it has this signature.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        f(sig, info, ctx);
    } else {
        // SAFETY: the previous handler was installed without SA_SIGINFO: `fn(c_int)`.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        f(sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused() {
        let buf = [0u8; 16];
        let a = Guard::register(buf.as_ptr(), 16);
        assert!(a.active());
        assert!(!a.faulted());
        let i = a.slot;
        drop(a);
        let b = Guard::register(buf.as_ptr(), 16);
        assert!(b.active());
        // A fresh registration never inherits a fault flag.
        assert!(!b.faulted());
        let _ = i;
    }
}
