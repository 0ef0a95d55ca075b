//! The sampling index (`docs/medh5-format.md` §6.8): per voxel
//! annotation and class, exact voxel counts, tight boxes, a bounded
//! reproducible sample of foreground coordinates (PCG-64 seeded through
//! SplitMix64) and a coarse occupancy map; `source_digest` ties an entry to
//! the annotation it was derived from.
//!
//! Submodules: [`scan`] (the streaming builder of the dense encodings),
//! [`load`] (the voxel annotations of a file), [`write`](mod@write) (one entry into a
//! writer), [`build`] (`index build` and the rebuild of `fix`: a
//! copy-on-write amend through [`crate::amend::cow`]), [`draw`]
//! (patch draws), [`classes`] (class selection of draws), [`cli`] (the command line).

pub mod build;
pub mod classes;
pub mod cli;
pub mod draw;
pub mod load;
pub mod scan;
pub mod write;

use std::collections::BTreeSet;

use super::model::annotation::Encoding;
use super::model::array::element_count;
use super::model::half::f16_to_f64;
use super::model::{ArrayData, NumDtype};
use crate::error::{Error, Result};

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
const PCG_MULT: u128 = (2_549_297_995_355_413_924u128 << 64) | 4_865_540_595_714_422_341;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The reference's generator: PCG-64 XSL-RR 128/64 seeded through SplitMix64.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u128,
    inc: u128,
}

impl Rng {
    /// A generator from a list of seeds.
    pub fn from_seeds(seeds: &[u64]) -> Self {
        let mut h = seeds.len() as u64;
        for &s in seeds {
            let mut x = h ^ s;
            h = splitmix64(&mut x);
        }
        let mut st = h;
        let w: [u64; 4] = [
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
        ];
        let init = (u128::from(w[0]) << 64) | u128::from(w[1]);
        let inc = ((u128::from(w[2]) << 64) | u128::from(w[3])) | 1;
        let mut r = Rng { state: 0, inc };
        r.step();
        r.state = r.state.wrapping_add(init);
        r.step();
        r
    }

    /// `Rng(seed)`.
    pub fn new(seed: u64) -> Self {
        Rng::from_seeds(&[seed])
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULT).wrapping_add(self.inc);
    }

    /// The next 64 uniformly distributed bits (one PCG step, XSL-RR output).
    pub fn next_u64(&mut self) -> u64 {
        self.step();
        let x = ((self.state >> 64) as u64) ^ (self.state as u64);
        x.rotate_right((self.state >> 122) as u32)
    }

    /// Uniform in `0..n` (Lemire's multiply-and-reject); `n` must be > 0.
    pub fn below(&mut self, n: u64) -> u64 {
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            let t = n.wrapping_neg() % n.max(1);
            while (m as u64) < t {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }

    /// Fisher–Yates from the end.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }

    /// `k` distinct values of `0..total` (partial shuffle when `4k ≥ total`,
    /// else Floyd's algorithm then a shuffle). `k` is capped at `total`.
    pub fn sample_without_replacement(&mut self, total: u64, k: u64) -> Vec<u64> {
        let k = k.min(total);
        if k.saturating_mul(4) >= total {
            let mut a: Vec<u64> = (0..total).collect();
            for i in 0..k {
                let j = i + self.below(total - i);
                a.swap(i as usize, j as usize);
            }
            a.truncate(k as usize);
            a
        } else {
            let mut seen = BTreeSet::new();
            let mut out = Vec::with_capacity(k as usize);
            for j in total - k..total {
                let t = self.below(j + 1);
                let pick = if seen.contains(&t) { j } else { t };
                seen.insert(t);
                seen.insert(pick);
                out.push(pick);
            }
            self.shuffle(&mut out);
            out
        }
    }
}

/// Index settings (`index build` defaults: 4096, seed 0, occupancy 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexOptions {
    /// Most foreground coordinates kept per class (`--max-coords`, ≥ 1); a
    /// class with more voxels keeps a reproducible sample of this many.
    pub max_coords: u64,
    /// Seed of the entry's coordinate sample (`--seed`); stored as the
    /// entry's `seed` attribute.
    pub seed: u64,
    /// Block edge of the occupancy map; 0 = no map.
    pub occupancy: u64,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            max_coords: 4096,
            seed: 0,
            occupancy: 8,
        }
    }
}

/// One built entry: the datasets of `/index/<ann_id>/`.
///
/// `C` is the number of classes, `S` the number of spatial axes.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexEntry {
    /// uint16 `(C,)`: the indexed classes, ascending.
    pub class_ids: ArrayData,
    /// int64 `(C,)`: the exact number of foreground voxels of each class.
    pub voxel_counts: ArrayData,
    /// float32 `(C, S, 2)`: per class and axis `[min − 0.5, max + 0.5]` of
    /// the voxel indices (voxel-centre convention); all NaN for an empty
    /// class.
    pub class_bboxes: ArrayData,
    /// `(class id, int32 (n, S) coordinates)`.
    pub fg_coords: Vec<(u16, ArrayData)>,
    /// bool `(C, *coarse)`: whether any voxel of the class lies in each
    /// `f`-voxel block (coarse extent `max(1, ceil(n / f))`); `None` when built
    /// with occupancy 0.
    pub occupancy: Option<ArrayData>,
}

fn f16_or_f32(data: &ArrayData, i: usize) -> f64 {
    match data.dtype {
        NumDtype::F16 => data
            .bytes
            .get(i * 2..i * 2 + 2)
            .map_or(0.0, |b| f16_to_f64(u16::from_le_bytes([b[0], b[1]]))),
        _ => data.bytes.get(i * 4..i * 4 + 4).map_or(0.0, |b| {
            f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }),
    }
}

/// The foreground of `class` (C-order voxels of `spatial`) in an encoding.
pub fn foreground(
    enc: &Encoding,
    class_ids: &[u16],
    class: u16,
    spatial: &[u64],
) -> Result<Vec<bool>> {
    let n = element_count(spatial)
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| Error::invalid(format!("spatial shape {spatial:?} overflows")))?;
    let mut fg = vec![false; n];
    match enc {
        Encoding::Labelmap { data } => {
            for (v, f) in fg.iter_mut().enumerate() {
                *f = data.get_u64(v) == Some(u64::from(class));
            }
        }
        Encoding::Layers {
            data,
            layer_class_ids,
        } => {
            // a layer counts only the classes its row of layer_class_ids lists
            let planes = data.len() / n.max(1);
            let width = layer_class_ids.shape.get(1).copied().unwrap_or(0) as usize;
            for p in 0..planes {
                let member = (0..width)
                    .any(|j| layer_class_ids.get_u64(p * width + j) == Some(u64::from(class)));
                if !member {
                    continue;
                }
                for (v, f) in fg.iter_mut().enumerate() {
                    if data.get_u64(p * n + v) == Some(u64::from(class)) {
                        *f = true;
                    }
                }
            }
        }
        Encoding::Bitmask {
            bit_class_ids,
            data,
        } => {
            let pos = (0..bit_class_ids.len())
                .find(|&k| bit_class_ids.get_u64(k) == Some(u64::from(class)));
            if let Some(k) = pos {
                let (plane, bit) = (k / 64, 1u64 << (k % 64));
                for (v, f) in fg.iter_mut().enumerate() {
                    *f = data.get_u64(plane * n + v).is_some_and(|w| w & bit != 0);
                }
            }
        }
        Encoding::Probmap {
            data, threshold, ..
        } => {
            if let Some(p) = class_ids.iter().position(|&c| c == class) {
                let t = threshold.unwrap_or(0.5);
                let t = if data.dtype == NumDtype::F16 {
                    f16_to_f64(super::model::half::f32_to_f16(t as f32))
                } else {
                    f64::from(t as f32)
                };
                for (v, f) in fg.iter_mut().enumerate() {
                    *f = f16_or_f32(data, p * n + v) >= t;
                }
            }
        }
        Encoding::Mask { data } => {
            for (v, f) in fg.iter_mut().enumerate() {
                *f = data.get_u64(v).is_some_and(|x| x != 0);
            }
        }
        Encoding::Instances {
            boxes,
            object_class_ids,
            masks,
            ..
        } => {
            let s = spatial.len();
            for o in 0..object_class_ids.len() {
                if object_class_ids.get_u64(o) != Some(u64::from(class)) {
                    continue;
                }
                let lo: Vec<u64> = (0..s)
                    .map(|ax| {
                        let i = (o * s + ax) * 2;
                        boxes
                            .bytes
                            .get(i * 4..i * 4 + 4)
                            .map_or(0.0, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) + 0.5)
                            .max(0.0) as u64
                    })
                    .collect();
                let Some(m) = masks else { continue };
                let (offsets, shapes, bits) = &**m;
                let start = offsets.get_u64(o).unwrap_or(0) as usize;
                let ext: Vec<u64> = (0..s)
                    .map(|ax| shapes.get_u64(o * s + ax).unwrap_or(0) & 0xffff_ffff)
                    .collect();
                let count: u64 = ext.iter().product();
                for k in 0..count {
                    let byte = bits
                        .bytes
                        .get(start + (k / 8) as usize)
                        .copied()
                        .unwrap_or(0);
                    if byte & (0x80 >> (k % 8)) == 0 {
                        continue;
                    }
                    let mut rem = k;
                    let mut coords = vec![0u64; s];
                    for ax in (0..s).rev() {
                        coords[ax] = rem % ext[ax].max(1) + lo[ax];
                        rem /= ext[ax].max(1);
                    }
                    let flat = coords
                        .iter()
                        .zip(spatial)
                        .fold(0u64, |acc, (&c, &d)| acc * d + c);
                    if let Some(f) = fg.get_mut(flat as usize) {
                        *f = true;
                    }
                }
            }
        }
    }
    Ok(fg)
}

/// Build the index entry of one annotation over `class_ids` (ascending).
pub fn build_entry(
    enc: &Encoding,
    class_ids: &[u16],
    spatial: &[u64],
    opts: &IndexOptions,
) -> Result<IndexEntry> {
    let s = spatial.len();
    let mut rng = Rng::new(opts.seed);
    let mut counts: Vec<u64> = Vec::new();
    let mut all_lo: Vec<u64> = Vec::new();
    let mut all_hi: Vec<u64> = Vec::new();
    let mut fg_coords = Vec::new();
    let f = opts.occupancy;
    let coarse: Vec<u64> = spatial
        .iter()
        .map(|&n| if f == 0 { 1 } else { n.div_ceil(f).max(1) })
        .collect();
    let coarse_n: u64 = coarse.iter().product();
    let mut occ: Vec<bool> = Vec::new();
    for &class in class_ids {
        let fg = foreground(enc, class_ids, class, spatial)?;
        let total = fg.iter().filter(|&&v| v).count() as u64;
        counts.push(total);
        let mut lo = vec![u64::MAX; s];
        let mut hi = vec![0u64; s];
        let mut plane = vec![false; coarse_n as usize];
        let picks: Option<BTreeSet<u64>> = (total > opts.max_coords).then(|| {
            rng.sample_without_replacement(total, opts.max_coords)
                .into_iter()
                .collect()
        });
        let mut coords: Vec<i32> = Vec::new();
        let mut c = vec![0u64; s];
        for (ordinal, (flat, _)) in fg.iter().enumerate().filter(|(_, on)| **on).enumerate() {
            let ordinal = ordinal as u64;
            let mut rem = flat as u64;
            for ax in (0..s).rev() {
                c[ax] = rem % spatial[ax];
                rem /= spatial[ax];
            }
            for ax in 0..s {
                lo[ax] = lo[ax].min(c[ax]);
                hi[ax] = hi[ax].max(c[ax] + 1);
            }
            if f > 0 {
                let cf = c
                    .iter()
                    .zip(&coarse)
                    .fold(0u64, |acc, (&v, &d)| acc * d + v / f);
                if let Some(p) = plane.get_mut(cf as usize) {
                    *p = true;
                }
            }
            if picks.as_ref().is_none_or(|p| p.contains(&ordinal)) {
                coords.extend(c.iter().map(|&v| v as i32));
            }
        }
        all_lo.extend(lo);
        all_hi.extend(hi);
        fg_coords.push((class, coords));
        occ.extend(plane);
    }
    let occupancy = (f > 0).then_some((coarse, occ));
    assemble(
        class_ids, s, &counts, &all_lo, &all_hi, fg_coords, occupancy,
    )
}

/// An entry from per-class results: `counts`, boxes `lo`/`hi` (flat `C × S`,
/// half-open voxel ranges; NaN boxes for empty classes), coordinates (flat
/// `(n, S)` each) and the occupancy `(coarse shape, C × coarse bits)`.
pub(crate) fn assemble(
    class_ids: &[u16],
    s: usize,
    counts: &[u64],
    lo: &[u64],
    hi: &[u64],
    coords: Vec<(u16, Vec<i32>)>,
    occupancy: Option<(Vec<u64>, Vec<bool>)>,
) -> Result<IndexEntry> {
    let c = class_ids.len() as u64;
    let mut bboxes: Vec<f32> = Vec::with_capacity(class_ids.len() * s * 2);
    for (k, &n) in counts.iter().enumerate() {
        for ax in 0..s {
            let i = k * s + ax;
            match (lo.get(i), hi.get(i)) {
                (Some(&a), Some(&b)) if n > 0 => bboxes.extend([a as f32 - 0.5, b as f32 - 0.5]),
                _ => bboxes.extend([f32::NAN, f32::NAN]),
            }
        }
    }
    let mut fg_coords = Vec::with_capacity(coords.len());
    for (class, v) in coords {
        let rows = (v.len() / s.max(1)) as u64;
        fg_coords.push((class, ArrayData::from_slice(&[rows, s as u64], &v)?));
    }
    let counts: Vec<i64> = counts.iter().map(|&n| n as i64).collect();
    let occupancy = match occupancy {
        None => None,
        Some((coarse, bits)) => {
            let mut shape = vec![c];
            shape.extend(&coarse);
            Some(ArrayData::from_slice(&shape, &bits)?)
        }
    };
    Ok(IndexEntry {
        class_ids: ArrayData::from_slice(&[c], class_ids)?,
        voxel_counts: ArrayData::from_slice(&[c], &counts)?,
        class_bboxes: ArrayData::from_slice(&[c, s as u64, 2], &bboxes)?,
        fg_coords,
        occupancy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_vectors() {
        let mut r = Rng::new(0);
        let got: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
        assert_eq!(
            got,
            [
                0xbf0743827b8bef9f,
                0x522569d5ed083045,
                0xeec111197f0119a1,
                0xed12717d3aa9375e
            ]
        );
        let mut r = Rng::new(42);
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(
            got,
            [
                2669433204434398804,
                2178379879838197481,
                3937749844943667545
            ]
        );
        assert_eq!(
            Rng::new(0).sample_without_replacement(100, 5),
            [98, 91, 31, 34, 71]
        );
        assert_eq!(
            Rng::new(0).sample_without_replacement(10, 8),
            [7, 3, 9, 2, 6, 5, 4, 8]
        );
        let mut s = Rng::new(0).sample_without_replacement(16384, 16);
        s.sort_unstable();
        assert_eq!(
            s,
            [
                324, 1442, 3767, 5252, 5572, 6528, 7995, 8575, 9389, 9811, 10013, 10658, 12214,
                14883, 15161, 15268
            ]
        );
    }

    #[test]
    fn small_entry() {
        let data = ArrayData::from_slice(&[2, 4], &[0u8, 1, 1, 0, 0, 0, 2, 0]).unwrap();
        let e = build_entry(
            &Encoding::Labelmap { data },
            &[1, 2, 3],
            &[2, 4],
            &IndexOptions {
                max_coords: 1,
                seed: 0,
                occupancy: 2,
            },
        )
        .unwrap();
        assert_eq!(
            e.voxel_counts
                .bytes
                .chunks(8)
                .map(|b| b[0])
                .collect::<Vec<_>>(),
            [2, 1, 0]
        );
        assert_eq!(e.fg_coords[0].1.shape, [1, 2]);
        assert_eq!(e.fg_coords[2].1.shape, [0, 2]);
        assert_eq!(e.occupancy.as_ref().unwrap().shape, [3, 1, 2]);
        assert_eq!(e.occupancy.unwrap().bytes, [1, 1, 0, 1, 0, 0]);
        let bb: Vec<f32> = e
            .class_bboxes
            .bytes
            .chunks(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(&bb[..4], [-0.5, 0.5, 0.5, 2.5]);
        assert!(bb[8].is_nan());
    }
}
