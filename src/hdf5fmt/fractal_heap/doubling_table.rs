//! The doubling table of a fractal heap (HDF5 File Format Specification III.G,
//! "Fractal Heap Header", table width / starting block size / maximum direct
//! block size / maximum heap size): row sizes, block offsets, and the mapping of
//! a heap offset to a (row, column) of an indirect block.

/// Geometry of a heap's doubling table. All sizes are powers of two.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DoublingTable {
    /// Table width: number of blocks in each row of the doubling table (a power of two).
    pub width: u64,
    /// Starting block size in bytes: the size of each block in the first two rows.
    pub start_block_size: u64,
    /// Maximum direct block size in bytes: rows of larger blocks hold indirect blocks instead.
    pub max_direct_size: u64,
    /// log2 of the heap's address space ("maximum heap size").
    pub max_heap_bits: u16,
    start_bits: u32,
    width_bits: u32,
    max_direct_bits: u32,
}

fn log2_exact(v: u64) -> Option<u32> {
    if v != 0 && v.is_power_of_two() {
        Some(v.trailing_zeros())
    } else {
        None
    }
}

impl DoublingTable {
    /// Validate and build the table; the error is a reason for `Malformed`.
    pub fn new(
        width: u16,
        start_block_size: u64,
        max_direct_size: u64,
        max_heap_bits: u16,
    ) -> Result<Self, String> {
        let width_bits = log2_exact(u64::from(width))
            .ok_or(format!("table width {width} not a power of two"))?;
        let start_bits = log2_exact(start_block_size).ok_or(format!(
            "starting block size {start_block_size} not a power of two"
        ))?;
        let max_direct_bits = log2_exact(max_direct_size).ok_or(format!(
            "maximum direct block size {max_direct_size} not a power of two"
        ))?;
        if max_direct_bits < start_bits {
            return Err("maximum direct block smaller than the starting block".into());
        }
        if max_direct_bits > 32 {
            return Err(format!("maximum direct block size 2^{max_direct_bits}"));
        }
        if max_heap_bits == 0 || max_heap_bits > 64 {
            return Err(format!("maximum heap size 2^{max_heap_bits}"));
        }
        if u32::from(max_heap_bits) < start_bits + width_bits {
            return Err("heap smaller than its first row".into());
        }
        Ok(DoublingTable {
            width: u64::from(width),
            start_block_size,
            max_direct_size,
            max_heap_bits,
            start_bits,
            width_bits,
            max_direct_bits,
        })
    }

    /// Bytes of a block offset field (and of a managed ID's offset field).
    pub fn offset_size(&self) -> usize {
        usize::from(self.max_heap_bits).div_ceil(8)
    }

    /// log2 of the heap space covered by row 0.
    pub fn first_row_bits(&self) -> u32 {
        self.start_bits + self.width_bits
    }

    /// Rows of direct blocks an indirect block can hold.
    pub fn max_direct_rows(&self) -> usize {
        (self.max_direct_bits - self.start_bits + 2) as usize
    }

    /// Most rows a root indirect block can have.
    pub fn max_root_rows(&self) -> usize {
        (u32::from(self.max_heap_bits) - self.first_row_bits() + 1) as usize
    }

    /// Size of one block in `row` (for indirect rows: the heap space one child covers).
    pub fn row_block_size(&self, row: usize) -> Option<u64> {
        if row == 0 {
            return Some(self.start_block_size);
        }
        let shift = u32::try_from(row - 1).ok()?;
        self.start_block_size.checked_shl(shift).filter(|v| {
            // checked_shl only guards the shift amount; make sure no bit fell off.
            v.checked_shr(shift) == Some(self.start_block_size)
        })
    }

    /// Heap offset of the first block of `row`, relative to its indirect block.
    pub fn row_offset(&self, row: usize) -> Option<u64> {
        if row == 0 {
            return Some(0);
        }
        let bits = self.first_row_bits() + u32::try_from(row - 1).ok()?;
        if bits >= 64 {
            return None;
        }
        Some(1u64 << bits)
    }

    /// Row and column of the block holding heap offset `rel` (relative to the
    /// start of an indirect block).
    pub fn lookup(&self, rel: u64) -> Option<(usize, u64)> {
        let first = self.start_block_size.checked_mul(self.width)?;
        if rel < first {
            return Some((0, rel / self.start_block_size));
        }
        let high = 63 - rel.leading_zeros();
        let row = (high - self.first_row_bits() + 1) as usize;
        let col = (rel - (1u64 << high)) / self.row_block_size(row)?;
        Some((row, col))
    }

    /// Rows of a child indirect block that covers `size` bytes of heap space.
    pub fn rows_for_size(&self, size: u64) -> Option<usize> {
        let bits = log2_exact(size)?;
        bits.checked_sub(self.first_row_bits())
            .map(|r| (r + 1) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libhdf5_default_geometry() {
        // h5py's defaults for dense groups: width 4, start 512, max direct 64 KiB, 40 bits.
        let t = DoublingTable::new(4, 512, 65536, 40).unwrap();
        assert_eq!(t.max_direct_rows(), 9);
        assert_eq!(t.offset_size(), 5);
        assert_eq!(t.row_block_size(0), Some(512));
        assert_eq!(t.row_block_size(1), Some(512));
        assert_eq!(t.row_block_size(2), Some(1024));
        assert_eq!(t.row_offset(1), Some(2048));
        assert_eq!(t.row_offset(2), Some(4096));
        assert_eq!(t.lookup(0), Some((0, 0)));
        assert_eq!(t.lookup(1600), Some((0, 3)));
        assert_eq!(t.lookup(2048), Some((1, 0)));
        assert_eq!(t.lookup(4095), Some((1, 3)));
        assert_eq!(t.lookup(4096 + 1024 * 3 + 5), Some((2, 3)));
        assert_eq!(t.rows_for_size(65536 * 2), Some(7));
        assert_eq!(t.max_root_rows(), 30);
    }

    #[test]
    fn rejects_bad_geometry() {
        assert!(DoublingTable::new(3, 512, 65536, 40).is_err());
        assert!(DoublingTable::new(4, 500, 65536, 40).is_err());
        assert!(DoublingTable::new(4, 512, 256, 40).is_err());
        assert!(DoublingTable::new(4, 512, 65536, 0).is_err());
        assert!(DoublingTable::new(4, 512, 65536, 65).is_err());
        let t = DoublingTable::new(1, 1, 1 << 32, 64).unwrap();
        assert_eq!(t.row_block_size(64), Some(1 << 63));
        assert_eq!(t.row_block_size(65), None);
        assert_eq!(t.row_offset(65), None);
        assert!(t.lookup(u64::MAX).is_some());
    }
}
