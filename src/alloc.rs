//! [`LargeAligned`]: a global allocator that gives every large block (a
//! decoded dataset, a chunk buffer) a 64-byte aligned address — one cache
//! line — and leaves small blocks to the system allocator as they are.
//!
//! Why: the system allocator returns large blocks 16 bytes past a page
//! boundary (glibc's `mmap` chunk header), so every 64-byte row that a
//! Blosc2/B2ND block writes into the output straddles two cache lines, half
//! written by one block and half by its neighbour. At 64-byte alignment each
//! block row is exactly one line, which the chunk decoders then write whole
//! with streaming stores (no read of the line from memory first). Reads are
//! correct at any alignment; this only makes the large ones faster.
//!
//! The `medh5` and `h5` binaries install it. An embedder opts in with
//!
//! ```
//! #[global_allocator]
//! static ALLOC: purehdf::LargeAligned = purehdf::LargeAligned;
//! # fn main() {}
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of at least this many bytes get [`LARGE_ALIGN`].
pub const LARGE: usize = 4 << 20;
/// The alignment of large blocks: one cache line.
pub const LARGE_ALIGN: usize = 64;

/// The system allocator, with blocks of [`LARGE`] bytes or more aligned to
/// [`LARGE_ALIGN`] (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct LargeAligned;

/// The layout the system allocator is asked for: the same size, and for a
/// large block at least a cache line of alignment. A pure function of the
/// caller's layout, so `dealloc` hands the system the layout `alloc` used.
fn system_layout(layout: Layout) -> Layout {
    if layout.size() >= LARGE && layout.align() < LARGE_ALIGN {
        // A valid layout stays valid with a larger power-of-two alignment as
        // long as the size rounded up to it does not overflow `isize`, which
        // a size of at least LARGE below `isize::MAX - 63` never does; on the
        // error (impossible here) the caller's layout is kept.
        Layout::from_size_align(layout.size(), LARGE_ALIGN).unwrap_or(layout)
    } else {
        layout
    }
}

// SAFETY: every method forwards to `System` with `system_layout(layout)`,
// which is deterministic in the caller's layout, so each block is freed or
// resized with the layout it was allocated with; alignment only grows, so
// every block meets the caller's layout.
unsafe impl GlobalAlloc for LargeAligned {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: `system_layout` keeps the size (non-zero, as the caller's).
        unsafe { System.alloc(system_layout(layout)) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe { System.alloc_zeroed(system_layout(layout)) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with this caller layout, so from
        // `System` with `system_layout(layout)`.
        unsafe { System.dealloc(ptr, system_layout(layout)) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = system_layout(layout);
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        let new = system_layout(new_layout);
        if new.align() == old.align() {
            // SAFETY: the block was allocated by `System` with `old`; the new
            // size is non-zero and valid for this alignment (checked above).
            return unsafe { System.realloc(ptr, old, new_size) };
        }
        // The block changes size class: a new block, the common prefix
        // copied, the old one freed.
        // SAFETY: `new` has a non-zero size.
        let fresh = unsafe { System.alloc(new) };
        if !fresh.is_null() {
            // SAFETY: both blocks are valid for `min(old, new)` bytes and
            // distinct; the old one was allocated by `System` with `old`.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, fresh, layout.size().min(new_size));
                System.dealloc(ptr, old);
            }
        }
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blocks_are_line_aligned_and_keep_their_bytes_when_resized() {
        let a = LargeAligned;
        for &(size, grow) in &[(16usize, LARGE * 2), (LARGE, LARGE + 3), (LARGE * 3, 100)] {
            let l = Layout::from_size_align(size, 1).unwrap();
            // SAFETY: non-zero sizes; every block is freed with its layout.
            unsafe {
                let p = a.alloc(l);
                assert!(!p.is_null());
                if size >= LARGE {
                    assert_eq!(p as usize % LARGE_ALIGN, 0);
                }
                for i in 0..size.min(4096) {
                    p.add(i).write(i as u8);
                }
                let q = a.realloc(p, l, grow);
                assert!(!q.is_null());
                if grow >= LARGE {
                    assert_eq!(q as usize % LARGE_ALIGN, 0);
                }
                for i in 0..size.min(grow).min(4096) {
                    assert_eq!(q.add(i).read(), i as u8);
                }
                a.dealloc(q, Layout::from_size_align(grow, 1).unwrap());
            }
        }
    }
}
