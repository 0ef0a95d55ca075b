//! The streaming index builder (`docs/medh5-format.md` §6.8) for
//! the dense voxel encodings — `labelmap`, `layers`, `bitmask`, `probmap`:
//! the label dataset is read in slabs along its first spatial axis, in
//! parallel, twice — once for counts, boxes and occupancy, once for the
//! sampled coordinates — so memory is bounded by the slabs in flight and the
//! output, never by per-class masks. Classes come from a lookup table, so one
//! sweep serves every class (O(voxels × planes), not O(voxels × classes)).

use super::{assemble, IndexEntry, IndexOptions, Rng};
use crate::error::{Error, Result};
use crate::integrity::to_little_endian;
use crate::model::half::f16_to_f64;
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::selection::Selection;

const NONE: u32 = u32::MAX;
/// Bytes of label data per slab (decoded), the default of [`Volume::slab_bytes`].
pub const SLAB_BYTES: u64 = 8 << 20;
/// Most classes one entry indexes.
pub const MAX_CLASSES: usize = 65_536;

/// How the planes of a slab map voxels to class indices.
#[derive(Clone, Debug)]
pub enum Planes {
    /// `labelmap` (one plane) or `layers` (L planes): element value of plane
    /// `p` → class index through `luts[p]` (u8 or u16 elements; a layer
    /// counts only the classes its `layer_class_ids` row lists).
    Values {
        /// One table per plane, indexed by element value; `u32::MAX` (or a
        /// value past the end of the table) means no class.
        luts: Vec<Vec<u32>>,
        /// Elements are little-endian u16 (`true`) or u8 (`false`).
        wide: bool,
    },
    /// `bitmask`: bit `k` (plane `k / 64`) → class index.
    Bits {
        /// Class index of each bit, over all planes (plane `p` holds bits
        /// `64p .. 64p + 63` of little-endian u64 elements); `u32::MAX`: no
        /// class.
        bits: Vec<u32>,
    },
    /// `probmap`: plane `p` is class index `p`; foreground when ≥ `threshold`
    /// (already rounded to the stored precision).
    Probs {
        /// Elements are float16 (`true`) or float32 (`false`), little-endian.
        half: bool,
        /// The foreground threshold, compared as `value >= threshold`.
        threshold: f64,
    },
}

/// One dense label dataset to index.
pub struct Volume<'a> {
    /// The annotation's `data` dataset (planes first, then spatial axes).
    pub ds: &'a Dataset,
    /// Leading plane axis extent (1 for a labelmap: no plane axis).
    pub planes: u64,
    /// Whether the dataset has a leading plane axis.
    pub has_plane_axis: bool,
    /// Extents of the spatial axes (the grid's), slowest first.
    pub spatial: Vec<u64>,
    /// How element values map to classes.
    pub map: Planes,
    /// Number of classes (class index range).
    pub classes: usize,
    /// Target decoded bytes per slab ([`SLAB_BYTES`]).
    pub slab_bytes: u64,
}

fn too_large(what: &str) -> Error {
    Error::invalid(format!("index: {what} too large"))
}

fn usize_of(v: u64, what: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| too_large(what))
}

/// Per-slab statistics of the first sweep.
struct Stats {
    counts: Vec<u64>,
    lo: Vec<u64>,
    hi: Vec<u64>,
    /// Coarse planes `[cz0, cz1)` of every class, `C × (cz1-cz0) × inner`.
    occ: Vec<bool>,
    cz0: u64,
    cz1: u64,
}

impl Volume<'_> {
    fn element_size(&self) -> usize {
        match &self.map {
            Planes::Values { wide, .. } => {
                if *wide {
                    2
                } else {
                    1
                }
            }
            Planes::Bits { .. } => 8,
            Planes::Probs { half, .. } => {
                if *half {
                    2
                } else {
                    4
                }
            }
        }
    }

    /// Rows of the first spatial axis per slab.
    fn slab_rows(&self) -> Result<u64> {
        let inner: u64 = self.spatial.iter().skip(1).product();
        let row = inner
            .checked_mul(self.planes)
            .and_then(|v| v.checked_mul(self.element_size() as u64))
            .ok_or_else(|| too_large("label row"))?;
        if row > purehdf::low_level::limits::MAX_DECODED {
            return Err(Error::Hdf5(purehdf::Error::Limit {
                structure: "medh5 index",
                offset: 0,
                what: "bytes per label row",
                value: row,
                limit: purehdf::low_level::limits::MAX_DECODED,
            }));
        }
        let rows = (self.slab_bytes / row.max(1)).max(1);
        let axis = usize::from(self.has_plane_axis);
        Ok(match self.ds.chunk_dims().and_then(|c| c.get(axis)) {
            Some(&c0) if c0 > 0 => rows.div_ceil(c0) * c0,
            _ => rows,
        })
    }

    /// The decoded little-endian slab of rows `[z0, z1)`.
    fn read_slab(&self, z0: u64, z1: u64) -> Result<Vec<u8>> {
        let mut start = Vec::with_capacity(self.spatial.len() + 1);
        let mut count = Vec::with_capacity(self.spatial.len() + 1);
        if self.has_plane_axis {
            start.push(0);
            count.push(self.planes);
        }
        start.push(z0);
        count.push(z1 - z0);
        for &d in self.spatial.iter().skip(1) {
            start.push(0);
            count.push(d);
        }
        let n = count
            .iter()
            .try_fold(self.element_size() as u64, |a, &d| a.checked_mul(d))
            .ok_or_else(|| too_large("slab"))?;
        let mut buf = vec![0u8; usize_of(n, "slab")?];
        self.ds
            .read_raw_uncached(&Selection::Hyperslab { start, count }, &mut buf)?;
        to_little_endian(self.ds.dtype(), &mut buf);
        Ok(buf)
    }

    /// Call `emit(class index)` for every class at voxel `v` of a slab of
    /// `nv` voxels per plane.
    #[inline]
    fn visit(&self, buf: &[u8], nv: usize, v: usize, emit: &mut impl FnMut(u32)) {
        let planes = self.planes as usize;
        match &self.map {
            Planes::Values { luts, wide } => {
                for (p, lut) in luts.iter().enumerate().take(planes) {
                    let i = p * nv + v;
                    let val = if *wide {
                        buf.get(i * 2..i * 2 + 2)
                            .map_or(0, |b| usize::from(u16::from_le_bytes([b[0], b[1]])))
                    } else {
                        buf.get(i).map_or(0, |&b| usize::from(b))
                    };
                    let c = lut.get(val).copied().unwrap_or(NONE);
                    if c != NONE {
                        emit(c);
                    }
                }
            }
            Planes::Bits { bits } => {
                for p in 0..planes {
                    let i = p * nv + v;
                    let Some(b) = buf.get(i * 8..i * 8 + 8) else {
                        continue;
                    };
                    let mut word =
                        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
                    while word != 0 {
                        let k = p * 64 + word.trailing_zeros() as usize;
                        word &= word - 1;
                        let c = bits.get(k).copied().unwrap_or(NONE);
                        if c != NONE {
                            emit(c);
                        }
                    }
                }
            }
            Planes::Probs { half, threshold } => {
                for p in 0..planes {
                    let i = p * nv + v;
                    let x = if *half {
                        buf.get(i * 2..i * 2 + 2)
                            .map_or(f64::NAN, |b| f16_to_f64(u16::from_le_bytes([b[0], b[1]])))
                    } else {
                        buf.get(i * 4..i * 4 + 4).map_or(f64::NAN, |b| {
                            f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        })
                    };
                    if x >= *threshold {
                        emit(p as u32);
                    }
                }
            }
        }
    }

    /// Walk the voxels of rows `[z0, z1)` in C order, calling `f(coords, v,
    /// class)` once per (voxel, class) pair (a class repeated in two layers
    /// at one voxel counts once).
    fn sweep(&self, buf: &[u8], z0: u64, z1: u64, mut f: impl FnMut(&[u64], u32)) {
        let s = self.spatial.len();
        let inner: u64 = self.spatial.iter().skip(1).product();
        let nv = ((z1 - z0) * inner) as usize;
        let mut c = vec![0u64; s];
        if let Some(c0) = c.first_mut() {
            *c0 = z0;
        }
        let dedupe = self.planes > 1;
        let mut last: Vec<usize> = if dedupe {
            vec![usize::MAX; self.classes]
        } else {
            Vec::new()
        };
        for v in 0..nv {
            self.visit(buf, nv, v, &mut |cls| {
                if dedupe {
                    match last.get_mut(cls as usize) {
                        Some(l) if *l == v => return,
                        Some(l) => *l = v,
                        None => return,
                    }
                }
                f(&c, cls);
            });
            // advance the odometer
            for ax in (0..s).rev() {
                c[ax] += 1;
                if ax == 0 || c[ax] < self.spatial[ax] {
                    break;
                }
                c[ax] = 0;
            }
        }
    }
}

fn slabs(total: u64, rows: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut z = 0;
    while z < total {
        let e = (z + rows).min(total);
        out.push((z, e));
        z = e;
    }
    out
}

fn par_map<T: Send + Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R> + Sync + Send,
) -> Result<Vec<R>> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        items.par_iter().map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.iter().map(f).collect()
    }
}

/// Build the entry of one dense volume over `class_ids` (ascending).
pub fn build_volume(
    vol: &Volume<'_>,
    class_ids: &[u16],
    opts: &IndexOptions,
) -> Result<IndexEntry> {
    let s = vol.spatial.len();
    let nc = class_ids.len();
    if nc > MAX_CLASSES || nc != vol.classes {
        return Err(too_large("class table"));
    }
    let f = opts.occupancy;
    let coarse: Vec<u64> = vol
        .spatial
        .iter()
        .map(|&n| if f == 0 { 1 } else { n.div_ceil(f).max(1) })
        .collect();
    let coarse_inner: u64 = coarse.iter().skip(1).product();
    let coarse_n = coarse
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| too_large("occupancy"))?;
    let occ_total = coarse_n
        .checked_mul(nc as u64)
        .filter(|&v| f == 0 || v <= purehdf::low_level::limits::MAX_DECODED)
        .ok_or_else(|| too_large("occupancy"))?;
    let rows_total = vol.spatial.first().copied().unwrap_or(1);
    let parts = slabs(rows_total, vol.slab_rows()?);

    // Sweep 1: counts, boxes, occupancy.
    let stats = par_map(&parts, |&(z0, z1)| {
        let buf = vol.read_slab(z0, z1)?;
        let (cz0, cz1) = match (z0.checked_div(f), (z1 - 1).checked_div(f)) {
            (Some(a), Some(b)) => (a, b + 1),
            _ => (0, 0),
        };
        let span = ((cz1 - cz0) * coarse_inner) as usize;
        let mut st = Stats {
            counts: vec![0; nc],
            lo: vec![u64::MAX; nc * s],
            hi: vec![0; nc * s],
            occ: vec![false; if f == 0 { 0 } else { nc * span }],
            cz0,
            cz1,
        };
        vol.sweep(&buf, z0, z1, |c, cls| {
            let k = cls as usize;
            if let Some(n) = st.counts.get_mut(k) {
                *n += 1;
            }
            for (ax, &x) in c.iter().enumerate() {
                let i = k * s + ax;
                if let (Some(lo), Some(hi)) = (st.lo.get(i).copied(), st.hi.get(i).copied()) {
                    st.lo[i] = lo.min(x);
                    st.hi[i] = hi.max(x + 1);
                }
            }
            if let Some(z) = c.first().and_then(|&z| z.checked_div(f)) {
                let mut cf = z - cz0;
                for (ax, &x) in c.iter().enumerate().skip(1) {
                    cf = cf * coarse[ax] + x.checked_div(f).unwrap_or(0);
                }
                if let Some(o) = st.occ.get_mut(k * span + cf as usize) {
                    *o = true;
                }
            }
        });
        Ok(st)
    })?;

    let mut counts = vec![0u64; nc];
    let mut lo = vec![u64::MAX; nc * s];
    let mut hi = vec![0u64; nc * s];
    let mut occ = vec![false; if f == 0 { 0 } else { occ_total as usize }];
    for st in &stats {
        for (n, &m) in counts.iter_mut().zip(&st.counts) {
            *n += m;
        }
        for i in 0..nc * s {
            lo[i] = lo[i].min(st.lo[i]);
            hi[i] = hi[i].max(st.hi[i]);
        }
        if f > 0 {
            let span = ((st.cz1 - st.cz0) * coarse_inner) as usize;
            let base = (st.cz0 * coarse_inner) as usize;
            for k in 0..nc {
                let dst = k * coarse_n as usize + base;
                for (j, &b) in st.occ[k * span..(k + 1) * span].iter().enumerate() {
                    if b {
                        occ[dst + j] = true;
                    }
                }
            }
        }
    }

    // The sample: ascending classes, only oversized ones consume the generator.
    let mut rng = Rng::new(opts.seed);
    let picks: Vec<Option<Vec<u64>>> = counts
        .iter()
        .map(|&total| {
            (total > opts.max_coords).then(|| {
                let mut p = rng.sample_without_replacement(total, opts.max_coords);
                p.sort_unstable();
                p
            })
        })
        .collect();

    // Sweep 2: the kept coordinates, slab by slab (C order).
    let mut starts: Vec<Vec<u64>> = Vec::with_capacity(stats.len());
    let mut run = vec![0u64; nc];
    for st in &stats {
        starts.push(run.clone());
        for (n, &m) in run.iter_mut().zip(&st.counts) {
            *n += m;
        }
    }
    let jobs: Vec<usize> = (0..parts.len()).collect();
    let coords = par_map(&jobs, |&j| {
        let (z0, z1) = parts[j];
        let st = &stats[j];
        let start = &starts[j];
        // per class: index range of its picks inside this slab
        let mut ptr = vec![0usize; nc];
        let mut end = vec![0usize; nc];
        let mut needed = false;
        for k in 0..nc {
            if st.counts[k] == 0 {
                continue;
            }
            match &picks[k] {
                None => needed = true,
                Some(p) => {
                    let a = p.partition_point(|&x| x < start[k]);
                    let b = p.partition_point(|&x| x < start[k] + st.counts[k]);
                    ptr[k] = a;
                    end[k] = b;
                    needed |= b > a;
                }
            }
        }
        let mut out: Vec<Vec<i32>> = vec![Vec::new(); nc];
        if !needed {
            return Ok(out);
        }
        let buf = vol.read_slab(z0, z1)?;
        let mut ord = start.clone();
        vol.sweep(&buf, z0, z1, |c, cls| {
            let k = cls as usize;
            let o = ord[k];
            ord[k] += 1;
            let keep = match &picks[k] {
                None => true,
                Some(p) => {
                    if ptr[k] < end[k] && p[ptr[k]] == o {
                        ptr[k] += 1;
                        true
                    } else {
                        false
                    }
                }
            };
            if keep {
                out[k].extend(c.iter().map(|&x| x as i32));
            }
        });
        Ok(out)
    })?;

    let mut fg_coords = Vec::with_capacity(nc);
    for (k, &class) in class_ids.iter().enumerate() {
        let mut all: Vec<i32> = Vec::new();
        for part in &coords {
            all.extend_from_slice(&part[k]);
        }
        fg_coords.push((class, all));
    }
    let occupancy = (f > 0).then_some((coarse, occ));
    assemble(class_ids, s, &counts, &lo, &hi, fg_coords, occupancy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::build_entry;
    use crate::model::annotation::Encoding;
    use crate::model::ArrayData;
    use purehdf::low_level::file::{File, Object};
    use purehdf::low_level::write::{DatasetData, DatasetSpec, FileWriter};

    /// A one-dataset in-memory file holding `data` (chunked by `chunk`).
    fn file_with(data: &ArrayData, chunk: &[u64]) -> File {
        let mut w = FileWriter::in_memory();
        let root = w.root();
        let spec = DatasetSpec::new(data.dtype.datatype(), &data.shape).chunked(chunk, Vec::new());
        w.create_dataset(root, "data", spec, DatasetData::Raw(data.bytes.clone()))
            .unwrap();
        File::from_bytes(w.finish().unwrap()).unwrap()
    }

    #[test]
    fn streaming_equals_the_dense_builder() {
        let mut r = Rng::new(99);
        for case in 0..24u64 {
            let shape = [1 + r.below(9), 1 + r.below(13), 1 + r.below(11)];
            let n = (shape[0] * shape[1] * shape[2]) as usize;
            let classes = 1 + r.below(9) as u16;
            let ids: Vec<u16> = (1..=classes).collect();
            // sparse, dense and empty classes (value classes+1 is unlisted)
            let vals: Vec<u8> = (0..n)
                .map(|_| {
                    let x = r.below(u64::from(classes) * 3 + 2);
                    if x > u64::from(classes) + 1 {
                        0
                    } else {
                        x as u8
                    }
                })
                .collect();
            let data = ArrayData::from_slice(&shape, &vals).unwrap();
            let opts = IndexOptions {
                max_coords: 1 + r.below(40),
                seed: case,
                occupancy: [0, 1, 2, 3, 8][case as usize % 5],
            };
            let want = build_entry(
                &Encoding::Labelmap { data: data.clone() },
                &ids,
                &shape,
                &opts,
            )
            .unwrap();
            let f = file_with(&data, &[1 + r.below(3), shape[1], shape[2]]);
            let Ok(Object::Dataset(ds)) = f.object("data") else {
                panic!()
            };
            let vol = Volume {
                ds: &ds,
                planes: 1,
                has_plane_axis: false,
                spatial: shape.to_vec(),
                map: Planes::Values {
                    luts: vec![(0..256u32)
                        .map(|v| {
                            if v >= 1 && v <= u32::from(classes) {
                                v - 1
                            } else {
                                u32::MAX
                            }
                        })
                        .collect()],
                    wide: false,
                },
                classes: ids.len(),
                slab_bytes: 1 + r.below(200), // many slabs
            };
            let got = build_volume(&vol, &ids, &opts).unwrap();
            assert_eq!(got.voxel_counts, want.voxel_counts, "case {case}");
            assert_eq!(got.fg_coords, want.fg_coords, "case {case}");
            assert_eq!(got.occupancy, want.occupancy, "case {case}");
            assert_eq!(
                got.class_bboxes.bytes, want.class_bboxes.bytes,
                "case {case}"
            );
        }
    }
}
