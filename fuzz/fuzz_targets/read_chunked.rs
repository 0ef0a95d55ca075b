//! Chunked reads from arbitrary bytes: the first 8 bytes seed the choice of
//! hyperslabs, the rest is opened as an HDF5 file; every dataset reachable
//! within a few levels (each address once) gets up to 8 random boxes read,
//! each of at most 4 MiB, plus the whole dataset when it is that small. Any
//! outcome but a panic, hang or runaway allocation is fine; a box that reads
//! must agree with the same box cut out of a whole read that succeeded.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::selection::Selection;

const CAP: u64 = 4 << 20;

/// xorshift64*: enough to spread hyperslab choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

fn read_boxes(d: &Dataset, rng: &mut Rng) {
    let size = d.dtype().size();
    let shape = d.shape().to_vec();
    let total = d.num_elements().saturating_mul(size);
    let whole = (total <= CAP).then(|| {
        let mut buf = vec![0u8; total as usize];
        d.read_raw(&Selection::All, &mut buf).ok().map(|_| buf)
    });
    for _ in 0..8 {
        let start: Vec<u64> = shape.iter().map(|&n| rng.below(n)).collect();
        let count: Vec<u64> = shape
            .iter()
            .zip(&start)
            .map(|(&n, &s)| 1 + rng.below(n - s))
            .collect();
        let n = count.iter().fold(size, |a, &c| a.saturating_mul(c));
        if n > CAP || shape.is_empty() {
            continue;
        }
        let mut buf = vec![0u8; n as usize];
        let sel = Selection::Hyperslab {
            start: start.clone(),
            count: count.clone(),
        };
        if d.read_raw(&sel, &mut buf).is_ok() {
            if let Some(Some(all)) = &whole {
                check_box(all, &shape, size as usize, &start, &count, &buf);
            }
        }
    }
}

/// The box `start/count` of the C-order array `all` must equal `got`.
fn check_box(all: &[u8], shape: &[u64], size: usize, start: &[u64], count: &[u64], got: &[u8]) {
    let rank = shape.len();
    let mut idx = vec![0u64; rank];
    let mut pos = 0;
    loop {
        let mut off = 0u64;
        for i in 0..rank {
            off = off * shape[i] + start[i] + idx[i];
        }
        let off = off as usize * size;
        assert_eq!(all[off..off + size], got[pos..pos + size], "box differs at {idx:?}");
        pos += size;
        let mut i = rank;
        loop {
            if i == 0 {
                return;
            }
            i -= 1;
            idx[i] += 1;
            if idx[i] < count[i] {
                break;
            }
            idx[i] = 0;
        }
    }
}

fn walk(obj: Object, seen: &mut HashSet<u64>, depth: usize, rng: &mut Rng) {
    if depth > 4 || !seen.insert(obj.address()) || seen.len() > 256 {
        return;
    }
    match obj {
        Object::Group(g) => {
            if let Ok(links) = g.links() {
                for (name, _) in links.into_iter().take(256) {
                    if let Ok(child) = g.open(&name) {
                        walk(child, seen, depth + 1, rng);
                    }
                }
            }
        }
        Object::Dataset(d) => read_boxes(&d, rng),
        Object::NamedDatatype(_) => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((seed, file)) = data.split_first_chunk::<8>() else {
        return;
    };
    let mut rng = Rng(u64::from_le_bytes(*seed) | 1);
    if let Ok(file) = File::from_bytes(file.to_vec()) {
        if let Ok(root) = file.root() {
            walk(Object::Group(root), &mut HashSet::new(), 0, &mut rng);
        }
    }
});
