//! Finite State Entropy tables of RFC 8878 §4.1: the table description
//! (§4.1.1, normalized counts) and the decoding table built from it.

use super::bits::ForwardBits;
use super::{corrupt, Result};

/// One decoding-table cell: the symbol, and how to reach the next state
/// (`next = base + read(nb_bits)`).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Cell {
    pub(crate) symbol: u8,
    pub(crate) nb_bits: u8,
    pub(crate) base: u16,
}

/// Normalized counts (-1 = "less than one") of up to 256 symbols.
pub(crate) struct Counts {
    pub(crate) log: u32,
    pub(crate) counts: [i16; 256],
    /// Number of symbols described (highest symbol + 1).
    pub(crate) n: usize,
}

/// Read an FSE table description (§4.1.1) from the start of `src`; returns the
/// counts and the bytes used. `max_log` and `max_symbol` bound what is accepted.
pub(crate) fn read_counts(
    src: &[u8],
    max_log: u32,
    max_symbol: usize,
    offset: usize,
) -> Result<(Counts, usize)> {
    let mut r = ForwardBits::new(src);
    if src.is_empty() {
        return Err(corrupt(offset, "missing FSE table description"));
    }
    let log = r.peek(4) + 5;
    r.skip(4);
    if log > max_log {
        return Err(corrupt(
            offset,
            format!("FSE accuracy log {log} exceeds {max_log}"),
        ));
    }
    let mut counts = [0i16; 256];
    let mut remaining: i32 = (1 << log) + 1;
    let mut threshold: i32 = 1 << log;
    let mut nb_bits = log + 1;
    let mut sym = 0usize;
    while remaining > 1 {
        if sym > max_symbol {
            return Err(corrupt(offset, "FSE table describes too many symbols"));
        }
        let max = (2 * threshold - 1) - remaining;
        let low = r.peek(nb_bits - 1) as i32;
        let value = if low < max {
            r.skip(nb_bits - 1);
            low
        } else {
            let mut v = r.peek(nb_bits) as i32;
            if v >= threshold {
                v -= max;
            }
            r.skip(nb_bits);
            v
        };
        let count = value - 1;
        remaining -= count.abs();
        counts[sym] = count as i16;
        sym += 1;
        if count == 0 {
            // Repeat flags: runs of further zero-probability symbols.
            loop {
                let rep = r.peek(2) as usize;
                r.skip(2);
                sym += rep;
                if sym > max_symbol + 1 {
                    return Err(corrupt(offset, "FSE zero run past the last symbol"));
                }
                if rep != 3 {
                    break;
                }
            }
        }
        while remaining < threshold && nb_bits > 1 {
            nb_bits -= 1;
            threshold >>= 1;
        }
    }
    if remaining != 1 {
        return Err(corrupt(offset, "FSE counts do not sum to the table size"));
    }
    let used = r.bytes_used(offset)?;
    Ok((
        Counts {
            log,
            counts,
            n: sym,
        },
        used,
    ))
}

/// Build the decoding table of `c` into `table` (length >= 1 << c.log).
pub(crate) fn build(c: &Counts, table: &mut [Cell], offset: usize) -> Result<()> {
    let size = 1usize << c.log;
    let Some(table) = table.get_mut(..size) else {
        return Err(corrupt(offset, "FSE table too large"));
    };
    build_with(c, offset, |i, symbol, nb_bits, base| {
        if let Some(cell) = table.get_mut(i) {
            *cell = Cell {
                symbol,
                nb_bits,
                base,
            };
        }
    })
}

/// Build the decoding table of `c` (accuracy log <= 9), handing every cell
/// `i < 1 << c.log` to `emit(i, symbol, nb_bits, base)` in order, so callers
/// can fill their own cell layout in one pass.
#[inline(always)]
pub(crate) fn build_with(
    c: &Counts,
    offset: usize,
    mut emit: impl FnMut(usize, u8, u8, u16),
) -> Result<()> {
    let size = 1usize << c.log;
    let mut syms = [0u8; 512];
    let Some(syms) = syms.get_mut(..size) else {
        return Err(corrupt(offset, "FSE table too large"));
    };
    let mut next = [0u16; 256];
    let mut high = size;
    for (s, &cnt) in c.counts.iter().enumerate().take(c.n) {
        if cnt == -1 {
            high = high
                .checked_sub(1)
                .ok_or_else(|| corrupt(offset, "FSE table overfull"))?;
            syms[high] = s as u8;
            next[s] = 1;
        } else {
            next[s] = cnt.max(0) as u16;
        }
    }
    // As libzstd's ZSTD_buildFSETable: the symbols with positive counts
    // first laid out in order (8-byte stores per symbol), then dealt to
    // the cells below `high` along the spread walk. The counts of a read
    // description fill the table exactly, so `spread` then holds `high`
    // symbols and the walk closes at 0.
    let mask = size - 1;
    let step = (size >> 1) + (size >> 3) + 3;
    let mut spread = [0u8; 512 + 8];
    let mut k = 0usize;
    for (s, &cnt) in c.counts.iter().enumerate().take(c.n) {
        let cnt = cnt.max(0) as usize;
        let Some(end) = k.checked_add(cnt).filter(|&e| e <= high) else {
            return Err(corrupt(offset, "FSE table overfull"));
        };
        // `end <= high <= 512`: every 8-byte store starts below `end`.
        let mut j = k;
        while j < end {
            if let Some(d) = spread.get_mut(j..j + 8) {
                d.copy_from_slice(&[s as u8; 8]);
            }
            j += 8;
        }
        k = end;
    }
    if k != high {
        return Err(corrupt(offset, "FSE symbol spread did not close"));
    }
    let mut pos = 0usize;
    if high == size && size >= 2 {
        // No "less than one" symbols: no cell to skip, two per step.
        for pair in spread[..size].chunks_exact(2) {
            syms[pos] = pair[0];
            syms[(pos + step) & mask] = pair[1];
            pos = (pos + 2 * step) & mask;
        }
    } else {
        for &s in &spread[..high] {
            syms[pos] = s;
            pos = (pos + step) & mask;
            while pos >= high {
                pos = (pos + step) & mask;
            }
        }
    }
    for (i, &sym) in syms.iter().enumerate() {
        let s = usize::from(sym);
        let state = next[s];
        next[s] = state.wrapping_add(1);
        if state == 0 {
            return Err(corrupt(offset, "FSE state of a zero-count symbol"));
        }
        // In 32 bits: a 16-bit bit scan writes part of its register and
        // waits on the register's last value.
        let state = u32::from(state);
        let nb = c.log - (31 - state.leading_zeros());
        emit(i, sym, nb as u8, ((state << nb) - size as u32) as u16);
    }
    Ok(())
}

/// A table holding only `symbol` (RLE mode): accuracy log 0.
pub(crate) fn rle(symbol: u8, table: &mut [Cell]) {
    if let Some(c) = table.first_mut() {
        *c = Cell {
            symbol,
            nb_bits: 0,
            base: 0,
        };
    }
}

/// Counts from a fixed distribution (the predefined tables of §3.1.1.3.2.2).
pub(crate) fn counts_from(log: u32, dist: &[i16]) -> Counts {
    let mut counts = [0i16; 256];
    counts[..dist.len()].copy_from_slice(dist);
    Counts {
        log,
        counts,
        n: dist.len(),
    }
}

#[cfg(test)]
/// The build before zdec7 (spread symbol by symbol): the definition
/// [`build_with`] is checked against. Builds the decoding table of `c`
/// (accuracy log <= 9), handing every cell
/// `i < 1 << c.log` to `emit(i, symbol, nb_bits, base)` in order, so callers
/// can fill their own cell layout in one pass.
pub(crate) fn build_with_reference(
    c: &Counts,
    offset: usize,
    mut emit: impl FnMut(usize, u8, u8, u16),
) -> Result<()> {
    let size = 1usize << c.log;
    let mut syms = [0u8; 512];
    let Some(syms) = syms.get_mut(..size) else {
        return Err(corrupt(offset, "FSE table too large"));
    };
    let mut next = [0u16; 256];
    let mut high = size;
    for (s, &cnt) in c.counts.iter().enumerate().take(c.n) {
        if cnt == -1 {
            high = high
                .checked_sub(1)
                .ok_or_else(|| corrupt(offset, "FSE table overfull"))?;
            syms[high] = s as u8;
            next[s] = 1;
        } else {
            next[s] = cnt.max(0) as u16;
        }
    }
    let mask = size - 1;
    let step = (size >> 1) + (size >> 3) + 3;
    let mut pos = 0usize;
    for (s, &cnt) in c.counts.iter().enumerate().take(c.n) {
        for _ in 0..cnt.max(0) {
            if pos >= high {
                return Err(corrupt(offset, "FSE table overfull"));
            }
            syms[pos] = s as u8;
            pos = (pos + step) & mask;
            while pos >= high {
                pos = (pos + step) & mask;
            }
        }
    }
    if pos != 0 {
        return Err(corrupt(offset, "FSE symbol spread did not close"));
    }
    for (i, &sym) in syms.iter().enumerate() {
        let s = usize::from(sym);
        let state = next[s];
        next[s] = state.wrapping_add(1);
        if state == 0 {
            return Err(corrupt(offset, "FSE state of a zero-count symbol"));
        }
        // In 32 bits: a 16-bit bit scan writes part of its register and
        // waits on the register's last value.
        let state = u32::from(state);
        let nb = c.log - (31 - state.leading_zeros());
        emit(i, sym, nb as u8, ((state << nb) - size as u32) as u16);
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn predefined_literal_lengths_build() {
        let c = counts_from(6, &super::super::sequences::LL_DEFAULT);
        let mut t = [Cell::default(); 64];
        build(&c, &mut t, 0).unwrap();
        // RFC 8878 Appendix A, literal lengths table: state 0 = symbol 0, 4 bits, base 0;
        // state 1 = symbol 0, 4 bits, base 16; the "less than one" symbols 32..=35
        // take the last cells from the top down: state 63 = symbol 32, 6 bits, base 0.
        assert_eq!(
            t[0],
            Cell {
                symbol: 0,
                nb_bits: 4,
                base: 0
            }
        );
        assert_eq!(
            t[1],
            Cell {
                symbol: 0,
                nb_bits: 4,
                base: 16
            }
        );
        assert_eq!(
            t[2],
            Cell {
                symbol: 1,
                nb_bits: 5,
                base: 32
            }
        );
        assert_eq!(
            t[63],
            Cell {
                symbol: 32,
                nb_bits: 6,
                base: 0
            }
        );
        assert_eq!(
            t[60],
            Cell {
                symbol: 35,
                nb_bits: 6,
                base: 0
            }
        );
    }

    /// Every cell `build_with` emits, in order.
    fn cells_of(c: &Counts, reference: bool) -> Result<Vec<(usize, u8, u8, u16)>> {
        let mut v = Vec::new();
        let emit = |i, s, n, b| v.push((i, s, n, b));
        if reference {
            build_with_reference(c, 3, emit)?;
        } else {
            build_with(c, 3, emit)?;
        }
        Ok(v)
    }

    /// Normalized counts as a table description holds them: accuracy log
    /// `log`, `n` symbols, some "less than one" (-1) and zero counts, the
    /// rest positive, |counts| summing to the table size.
    pub(crate) fn random_counts(log: u32, n: usize, seed: u64) -> Counts {
        let mut r = seed | 1;
        let mut next = move || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r
        };
        let size = 1i32 << log;
        let mut counts = [0i16; 256];
        let mut left = size;
        let n = n.clamp(1, 256).min(size as usize);
        for (s, cnt) in counts.iter_mut().enumerate().take(n) {
            let symbols_after = (n - 1 - s) as i32;
            let room = left - symbols_after; // keep >= 1 cell per later symbol
            let v = match next() % 8 {
                0 => 0,
                1 | 2 => -1,
                _ => 1 + (next() % (room.max(1) as u64).min(64)) as i32,
            };
            let v = if s + 1 == n { left } else { v.min(room) };
            let v = if v == 0 && s + 1 == n { 1 } else { v };
            *cnt = v as i16;
            left -= v.abs();
        }
        Counts { log, counts, n }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        /// The table of any valid description (accuracy logs 5-9, with and
        /// without "less than one" symbols) equals the reference build.
        #[test]
        fn build_with_equals_reference(log in 5u32..=9, n in 1usize..80, seed in proptest::num::u64::ANY, flat in proptest::bool::ANY) {
            let mut c = random_counts(log, n, seed);
            if flat {
                // No "less than one" symbols: the two-per-step walk.
                for s in 0..c.n {
                    if c.counts[s] < 0 {
                        c.counts[s] = 1;
                    }
                }
                let sum: i32 = c.counts[..c.n].iter().map(|&x| i32::from(x.max(0))).sum();
                let size = 1i32 << log;
                if sum > size {
                    return Ok(());
                }
                c.counts[c.n - 1] += (size - sum) as i16;
            }
            let sum: i32 = c.counts[..c.n].iter().map(|&x| i32::from(x.abs())).sum();
            proptest::prop_assert_eq!(sum, 1 << log);
            let a = cells_of(&c, false).map_err(|e| e.to_string());
            let b = cells_of(&c, true).map_err(|e| e.to_string());
            proptest::prop_assert!(a.is_ok());
            proptest::prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn predefined_and_read_tables_equal_reference() {
        for (log, dist) in [
            (6, &super::super::sequences::LL_DEFAULT[..]),
            (6, &super::super::sequences::ML_DEFAULT[..]),
            (5, &super::super::sequences::OF_DEFAULT[..]),
        ] {
            let c = counts_from(log, dist);
            assert_eq!(cells_of(&c, false).unwrap(), cells_of(&c, true).unwrap());
        }
        // A single symbol owning the table (no spread steps skipped).
        let (c, _) = read_counts(&[0xF0, 0x03, 0xAA], 9, 35, 0).unwrap();
        assert_eq!(cells_of(&c, false).unwrap(), cells_of(&c, true).unwrap());
    }

    #[test]
    fn reads_a_hand_made_description() {
        // Accuracy log 5 (nibble 0); symbol 0 takes all 32 cells: value 33 is
        // above the small-value range (max = 63 - 33 = 30), so it is stored in
        // 6 bits as 33 + 30 = 63. Bits: 0000 then 111111 -> bytes 0xF0, 0x03.
        let (c, used) = read_counts(&[0xF0, 0x03, 0xAA], 9, 35, 0).unwrap();
        assert_eq!((c.log, c.n, c.counts[0], used), (5, 1, 32, 2));
        // All-zero bits give "less than one" counts forever: too many symbols.
        assert!(read_counts(&[0, 0, 0], 9, 35, 0).is_err());
        // Accuracy log above the cap.
        assert!(read_counts(&[0x05, 0, 0], 9, 35, 0).is_err());
    }
}
