//! Length-limited canonical Huffman codes for deflate blocks (RFC 1951 §3.2.2
//! canonical codes, §3.2.7 the 15-bit and 7-bit limits).

/// Most symbols of any deflate alphabet (literal/length: 286 used of 288).
pub(super) const MAX_SYMS: usize = 288;

/// Code lengths for `freqs` into `lens` (0 = unused), none above `limit`.
///
/// The result is always a complete prefix code (Kraft sum exactly 1): when
/// fewer than two symbols are used, the lowest unused symbols are added with
/// weight 1 so that two symbols get length 1. Limiting works by halving the
/// weights (keeping them at least 1, and their order) and rebuilding until the
/// longest code fits; the weights stay sorted, so one sort serves every round.
/// `freqs.len()` must be at most [`MAX_SYMS`] and `2^limit >= freqs.len()`.
pub(super) fn build_lengths(freqs: &[u32], limit: u32, lens: &mut [u8]) {
    let n_all = freqs.len().min(MAX_SYMS).min(lens.len());
    lens[..n_all].fill(0);
    // (weight << 16 | symbol), ascending.
    let mut keys = [0u64; MAX_SYMS];
    let mut n = 0usize;
    for (s, &f) in freqs[..n_all].iter().enumerate() {
        if f > 0 {
            keys[n] = (u64::from(f) << 16) | s as u64;
            n += 1;
        }
    }
    let mut s = 0usize;
    while n < 2 && s < n_all {
        if freqs[s] == 0 {
            keys[n] = (1u64 << 16) | s as u64;
            n += 1;
        }
        s += 1;
    }
    if n < 2 {
        // An alphabet of one symbol: the single-code case.
        if n == 1 {
            lens[(keys[0] & 0xFFFF) as usize] = 1;
        }
        return;
    }
    let keys = &mut keys[..n];
    keys.sort_unstable();
    let mut weights = [0u64; MAX_SYMS];
    for (w, k) in weights.iter_mut().zip(keys.iter()) {
        *w = *k >> 16;
    }
    let mut depth = [0u8; MAX_SYMS];
    loop {
        let max = tree_depths(&weights[..n], &mut depth[..n]);
        if max <= limit {
            break;
        }
        for w in &mut weights[..n] {
            *w = (*w >> 1).max(1);
        }
    }
    for (k, &d) in keys.iter().zip(depth.iter()) {
        lens[(k & 0xFFFF) as usize] = d;
    }
}

/// Huffman depths of leaves with ascending `weights` (n >= 2) into `depth`;
/// returns the largest. Two queues: the sorted leaves and the internal nodes,
/// which are made in ascending order.
fn tree_depths(weights: &[u64], depth: &mut [u8]) -> u32 {
    let n = weights.len();
    let mut node_w = [0u64; MAX_SYMS];
    let mut node_parent = [0u16; MAX_SYMS];
    let mut leaf_parent = [0u16; MAX_SYMS];
    let (mut leaf, mut inner) = (0usize, 0usize);
    for k in 0..n - 1 {
        let mut sum = 0u64;
        for _ in 0..2 {
            let take_leaf = leaf < n && (inner >= k || weights[leaf] <= node_w[inner]);
            if take_leaf {
                sum += weights[leaf];
                leaf_parent[leaf] = k as u16;
                leaf += 1;
            } else {
                sum += node_w[inner];
                node_parent[inner] = k as u16;
                inner += 1;
            }
        }
        node_w[k] = sum;
    }
    // Root is node n-2 at depth 0; parents come after their children.
    let mut node_depth = [0u8; MAX_SYMS];
    for k in (0..n.saturating_sub(2)).rev() {
        node_depth[k] = node_depth[node_parent[k] as usize] + 1;
    }
    let mut max = 0u32;
    for i in 0..n {
        let d = node_depth[leaf_parent[i] as usize] + 1;
        depth[i] = d;
        max = max.max(u32::from(d));
    }
    max
}

/// Canonical codes for `lens` (RFC 1951 §3.2.2), bit-reversed so that they can
/// be written least significant bit first.
pub(super) fn codes_from_lengths(lens: &[u8], codes: &mut [u16]) {
    let mut count = [0u16; 16];
    for &l in lens {
        count[l as usize] += 1;
    }
    count[0] = 0;
    let mut next = [0u16; 16];
    let mut code = 0u16;
    for bits in 1..16 {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    for (c, &l) in codes.iter_mut().zip(lens) {
        if l > 0 {
            let v = next[l as usize];
            next[l as usize] = v.wrapping_add(1);
            *c = v.reverse_bits() >> (16 - u32::from(l));
        } else {
            *c = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Kraft sum in units of 2^-15.
    fn kraft(lens: &[u8]) -> u64 {
        lens.iter()
            .filter(|&&l| l > 0)
            .map(|&l| 1u64 << (15 - l))
            .sum()
    }

    #[test]
    fn small_cases() {
        let mut lens = [9u8; 4];
        build_lengths(&[0, 0, 0, 0], 15, &mut lens);
        assert_eq!(lens, [1, 1, 0, 0]);
        build_lengths(&[0, 0, 5, 0], 15, &mut lens);
        assert_eq!(lens, [1, 0, 1, 0]);
        build_lengths(&[1, 1, 2, 4], 15, &mut lens);
        assert_eq!(lens, [3, 3, 2, 1]);
        let mut one = [0u8; 1];
        build_lengths(&[3], 15, &mut one);
        assert_eq!(one, [1]);
    }

    #[test]
    fn fibonacci_weights_are_limited() {
        let mut f = vec![1u32, 1];
        while f.len() < 30 {
            let k = f.len();
            f.push(f[k - 1] + f[k - 2]);
        }
        let mut lens = [0u8; 30];
        build_lengths(&f, 15, &mut lens);
        assert!(lens.iter().all(|&l| (1..=15).contains(&l)));
        assert_eq!(kraft(&lens), 1 << 15);
        let mut lens7 = [0u8; 19];
        build_lengths(&f[..19], 7, &mut lens7);
        assert!(lens7.iter().all(|&l| (1..=7).contains(&l)));
        assert_eq!(kraft(&lens7), 1 << 15);
    }

    #[test]
    fn canonical_codes() {
        // RFC 1951 §3.2.2 example: lengths (3,3,3,3,3,2,4,4) give
        // 010,011,100,101,110,00,1110,1111.
        let lens = [3u8, 3, 3, 3, 3, 2, 4, 4];
        let mut codes = [0u16; 8];
        codes_from_lengths(&lens, &mut codes);
        let want = [0b010u16, 0b011, 0b100, 0b101, 0b110, 0b00, 0b1110, 0b1111];
        for i in 0..8 {
            let rev = want[i].reverse_bits() >> (16 - lens[i]);
            assert_eq!(codes[i], rev, "symbol {i}");
        }
    }

    proptest! {
        #[test]
        fn prop_complete_and_limited(
            freqs in proptest::collection::vec(prop_oneof![Just(0u32), 1u32..10, 1u32..100_000], 1..=288),
            limit in prop_oneof![Just(7u32), Just(9u32), Just(15u32)],
        ) {
            prop_assume!((1usize << limit) >= freqs.len());
            let mut lens = vec![0u8; freqs.len()];
            build_lengths(&freqs, limit, &mut lens);
            prop_assert!(lens.iter().all(|&l| u32::from(l) <= limit));
            for (f, l) in freqs.iter().zip(&lens) {
                if *f > 0 {
                    prop_assert!(*l > 0);
                }
            }
            let used = lens.iter().filter(|&&l| l > 0).count();
            if freqs.len() == 1 {
                prop_assert_eq!(used, 1);
                prop_assert_eq!(lens[0], 1);
            } else {
                prop_assert!(used >= 2);
                prop_assert_eq!(kraft(&lens), 1 << 15);
            }
            // Canonical codes are prefix-free: distinct (code, length) and no
            // code is a prefix of another (checked pairwise on the reversed codes).
            let mut codes = vec![0u16; lens.len()];
            codes_from_lengths(&lens, &mut codes);
            let live: Vec<(u16, u8)> = codes.iter().zip(&lens).filter(|(_, l)| **l > 0).map(|(&c, &l)| (c, l)).collect();
            if live.len() <= 40 {
                for (i, &(a, la)) in live.iter().enumerate() {
                    for &(b, lb) in &live[i + 1..] {
                        let m = la.min(lb);
                        let mask = (1u16 << m) - 1;
                        prop_assert!(a & mask != b & mask, "prefix clash");
                    }
                }
            }
        }
    }
}
