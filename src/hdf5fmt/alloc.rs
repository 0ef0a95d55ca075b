//! [`LargeAligned`], the global allocator that puts large blocks on cache
//! line boundaries (why, and how to install it: see the type).

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of at least this many bytes get [`LARGE_ALIGN`].
pub(crate) const LARGE: usize = 4 << 20;
/// The alignment of large blocks: one cache line.
pub(crate) const LARGE_ALIGN: usize = 64;

/// The system allocator, with blocks of 4 MiB or more aligned to 64 bytes
/// (one cache line); smaller blocks are the system's, as they are.
///
/// Why: the C allocator returns large blocks 16 bytes past a page boundary
/// (glibc's `mmap` chunk header), so every 64-byte row that a Blosc2 B2ND
/// block of int16 writes into a decoded image straddles two cache lines, half
/// written by one block and half by its neighbour. At 64-byte alignment each
/// such row is exactly one line, which the reader then writes whole with
/// streaming stores (no read of the line from memory first). Reads are
/// correct at any alignment; this only makes large ones faster. On Unix the
/// large blocks still come from `malloc`/`calloc`/`realloc` (fresh zero pages
/// and `mremap` kept); elsewhere every block is the system allocator's.
///
/// The `medh5` and `h5` binaries install it. An embedder opts in with
///
/// ```
/// #[global_allocator]
/// static ALLOC: purehdf::LargeAligned = purehdf::LargeAligned;
/// # fn main() {}
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct LargeAligned;

/// Whether a block of this layout takes the large path: a pure function of
/// the caller's layout, so `dealloc` and `realloc` take the path `alloc` took.
/// Only on Unix (the C allocator below); elsewhere every block is the
/// system's.
fn is_large(layout: Layout) -> bool {
    cfg!(unix) && layout.size() >= LARGE && layout.align() <= LARGE_ALIGN
}

#[cfg(unix)]
mod large {
    //! Large blocks from the C allocator, moved up to the next line boundary.
    //! `malloc`, `calloc` and `realloc` keep what makes them fast for large
    //! blocks (fresh zero pages for `calloc`, `mremap` for `realloc`); the
    //! block starts at the first 64-byte boundary at least 8 bytes into the
    //! C block, and those 8 bytes hold the C block's address for `free`.
    use super::LARGE_ALIGN;

    /// Extra bytes asked of the C allocator: the header and the largest shift.
    const EXTRA: usize = 8 + LARGE_ALIGN;

    /// How far into the C block at `raw` its aligned block starts: the
    /// first line boundary at least 8 bytes in (8 ..= 71 bytes).
    fn shift_of(raw: *mut u8) -> usize {
        (raw as usize + 8).next_multiple_of(LARGE_ALIGN) - raw as usize
    }

    /// The aligned block inside the C block `raw`, its header written.
    ///
    /// # Safety
    /// `raw` is a live C block of at least `size + EXTRA` bytes.
    unsafe fn place(raw: *mut u8) -> *mut u8 {
        // SAFETY: 8 <= shift < 8 + 64 = EXTRA, so the block and its header
        // lie inside the C block; the header is 8-byte aligned because the
        // block is 64-byte aligned.
        unsafe {
            let p = raw.add(shift_of(raw));
            p.cast::<*mut u8>().sub(1).write(raw);
            p
        }
    }

    /// The C block behind the aligned block `p`.
    ///
    /// # Safety
    /// `p` came from [`alloc`] or [`realloc`] and is live.
    unsafe fn raw_of(p: *mut u8) -> *mut u8 {
        // SAFETY: `place` wrote the header just before `p`.
        unsafe { p.cast::<*mut u8>().sub(1).read() }
    }

    /// A block of `size` bytes, zeroed when `zeroed`; null on failure.
    pub(super) fn alloc(size: usize, zeroed: bool) -> *mut u8 {
        let Some(n) = size.checked_add(EXTRA) else {
            return std::ptr::null_mut();
        };
        // SAFETY: plain C allocations; a null result is passed on.
        let raw = unsafe {
            if zeroed {
                libc::calloc(1, n)
            } else {
                libc::malloc(n)
            }
        }
        .cast::<u8>();
        if raw.is_null() {
            return raw;
        }
        // SAFETY: `raw` is a live block of `size + EXTRA` bytes.
        unsafe { place(raw) }
    }

    /// Free a block of [`alloc`] or [`realloc`].
    ///
    /// # Safety
    /// `p` came from them and is live.
    pub(super) unsafe fn dealloc(p: *mut u8) {
        // SAFETY: the C block behind a live block is live.
        unsafe { libc::free(raw_of(p).cast()) }
    }

    /// Resize the block `p` of `old` bytes to `new` bytes (both large);
    /// null, the old block untouched, on failure.
    ///
    /// # Safety
    /// `p` came from [`alloc`] or [`realloc`], is live and holds `old` bytes.
    pub(super) unsafe fn realloc(p: *mut u8, old: usize, new: usize) -> *mut u8 {
        let Some(n) = new.checked_add(EXTRA) else {
            return std::ptr::null_mut();
        };
        // SAFETY: `p` is live, so is its C block.
        let raw = unsafe { raw_of(p) };
        let shift = p as usize - raw as usize;
        // SAFETY: `raw` is a live C block; on failure it stays as it was.
        let moved = unsafe { libc::realloc(raw.cast(), n) }.cast::<u8>();
        if moved.is_null() {
            return moved;
        }
        // SAFETY: `moved` holds `new + EXTRA` bytes, of which the first
        // `shift + min(old, new)` are the old C block's. When the line offset
        // changed, the bytes move from the old shift to the new one (both
        // below EXTRA, so both ranges lie inside the block) before the header
        // goes below the new start, where it overwrites no byte kept.
        unsafe {
            if shift_of(moved) != shift {
                std::ptr::copy(moved.add(shift), moved.add(shift_of(moved)), old.min(new));
            }
            place(moved)
        }
    }
}

// SAFETY: a block takes the large path exactly when `is_large` of its layout
// holds, which `dealloc` and `realloc` see as `alloc` did; large blocks are
// aligned to 64 >= the layout's alignment and hold its size; every other
// block is `System`'s with the caller's layout, unchanged.
unsafe impl GlobalAlloc for LargeAligned {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        #[cfg(unix)]
        if is_large(layout) {
            return large::alloc(layout.size(), false);
        }
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        #[cfg(unix)]
        if is_large(layout) {
            return large::alloc(layout.size(), true);
        }
        // SAFETY: as `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        #[cfg(unix)]
        if is_large(layout) {
            // SAFETY: a large layout: `ptr` came from `large::alloc`/`realloc`.
            return unsafe { large::dealloc(ptr) };
        }
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        match (is_large(layout), is_large(new_layout)) {
            #[cfg(unix)]
            // SAFETY: `ptr` is a live large block of `layout.size()` bytes.
            (true, true) => unsafe { large::realloc(ptr, layout.size(), new_size) },
            // SAFETY: `ptr` came from `System` with `layout`.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            _ => {
                // The block changes path: a new block, the common prefix
                // copied, the old one freed.
                // SAFETY: `new_layout` has a non-zero size (the caller's
                // contract); both blocks are live and distinct and hold at
                // least the bytes copied; the old one is freed by its path.
                unsafe {
                    let fresh = self.alloc(new_layout);
                    if !fresh.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, fresh, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    fresh
                }
            }
        }
    }
}

/// Outputs at least this large ask for transparent huge pages (see
/// [`advise_huge_pages`]).
#[cfg(target_os = "linux")]
const HUGE_OUTPUT_BYTES: usize = 8 << 20;

/// Ask Linux to back the whole 2 MiB pages inside `v`'s allocation with
/// transparent huge pages (it honours this in THP's usual `madvise` mode): a
/// fresh output of tens of MB then takes a few dozen page faults instead of
/// thousands (a 32 MB int16 volume: ≈ 8,200 faults per read, most of the
/// read's system time). A hint only: the contents, the mapping and every
/// Rust reference stay as they were, and a refusal is ignored.
pub(crate) fn advise_huge_pages<T>(v: &mut Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
        if bytes < HUGE_OUTPUT_BYTES {
            return;
        }
        let start = v.as_mut_ptr() as usize;
        let (Some(end), Some(lo)) = (
            start.checked_add(bytes),
            start.checked_next_multiple_of(HUGE),
        ) else {
            return;
        };
        let hi = end / HUGE * HUGE;
        if hi > lo {
            // SAFETY: `lo .. hi` lies inside the allocation `v` owns (we hold
            // it exclusively); MADV_HUGEPAGE only changes how the kernel backs
            // those pages, never their contents or addresses, so no memory
            // safety property of `v` or any other object changes.
            unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fill `n` bytes at `p` with a pattern of `seed`.
    unsafe fn fill(p: *mut u8, n: usize, seed: u8) {
        for i in (0..n).step_by(997).chain(n.saturating_sub(3)..n) {
            // SAFETY: `i < n`, inside the block (caller).
            unsafe { p.add(i).write((i as u8).wrapping_mul(31) ^ seed) };
        }
    }

    /// Whether the pattern of `fill` is there over the first `n` bytes.
    unsafe fn holds(p: *mut u8, n: usize, upto: usize, seed: u8) -> bool {
        (0..upto.min(n))
            .step_by(997)
            // SAFETY: `i < upto <= n`, inside the block (caller).
            .all(|i| unsafe { p.add(i).read() } == (i as u8).wrapping_mul(31) ^ seed)
    }

    #[test]
    fn blocks_are_aligned_zeroed_and_keep_their_bytes_through_resizes() {
        let a = LargeAligned;
        // Sizes around the threshold, growing and shrinking across it.
        let sizes = [
            16,
            LARGE - 1,
            LARGE,
            LARGE + 4093,
            3 * LARGE + 7,
            LARGE + 1,
            100,
            2 * LARGE,
            9 * LARGE + 5,
            LARGE,
        ];
        let l0 = Layout::from_size_align(sizes[0], 1).unwrap();
        // SAFETY: non-zero sizes; each block is resized and freed with the
        // layout it has.
        unsafe {
            let mut p = a.alloc(l0);
            let mut size = sizes[0];
            fill(p, size, 7);
            for &next in &sizes[1..] {
                let q = a.realloc(p, Layout::from_size_align(size, 1).unwrap(), next);
                assert!(!q.is_null());
                if next >= LARGE && cfg!(unix) {
                    assert_eq!(q as usize % LARGE_ALIGN, 0, "{next} bytes");
                }
                assert!(holds(q, size, next, 7), "{size} -> {next}");
                p = q;
                size = next;
                fill(p, size, 7);
            }
            a.dealloc(p, Layout::from_size_align(size, 1).unwrap());
            let z = Layout::from_size_align(3 * LARGE, 8).unwrap();
            let p = a.alloc_zeroed(z);
            assert!(!p.is_null() && (!cfg!(unix) || (p as usize).is_multiple_of(LARGE_ALIGN)));
            assert!((0..3 * LARGE).step_by(4099).all(|i| p.add(i).read() == 0));
            a.dealloc(p, z);
        }
    }
}
