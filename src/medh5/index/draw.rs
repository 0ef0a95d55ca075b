//! Patch draws from the sampling index (`docs/medh5-format.md`
//! §6.8, reference `PatchSampler`): a [`Sampler`] opened once per file loads
//! one annotation's class table and counts (and, lazily, each class's stored
//! coordinates); a draw picks a class and one stored coordinate and returns
//! the patch window around it — O(1) in the volume and the class count.
//! Strategies: `foreground` (a class among those with voxels, uniformly by default, then
//! a stored coordinate), `balanced` (foreground with probability
//! `foreground_prob`, else uniform), `uniform` (a window uniform over the
//! volume). Draw `i` of seed `s` uses `Rng::from_seeds(&[s, i])`, so a draw
//! is reproducible from `(seed, i)`. Without a usable index (none, stale, or
//! not listing the classes) the sampler scans the labels once, keeping every
//! foreground voxel as the reference's scan does, and says so:
//! `used_index = Some(false)`; a uniform draw, and a foreground draw that
//! finds no class with voxels to target, report `None` (as the reference).
//! [`Sampler::draw_with`] draws from a caller's generator (the reference's
//! `rng=` integer, `(seed, epoch, index)` sequence, or one generator advanced
//! over several draws). [`Sampler::set_classes`] and
//! [`Sampler::set_class_weights`] restrict and weigh the classes a foreground
//! draw targets ([`super::classes`]).

use super::build::source_digest;
use super::classes::ClassWeights;
use super::load::{build_annotation, read_array, voxel_annotations};
use super::{IndexOptions, Rng};
use crate::canonical_json::Json;
use crate::error::{Error, Result};
use crate::sample::attr_json;
use purehdf::low_level::file::{File, Object};

/// How a draw chooses its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Centre the window on a stored foreground coordinate of a class
    /// picked among the classes that have voxels (uniformly unless weighted;
    /// a uniform window when none has).
    Foreground,
    /// Foreground with probability `foreground_prob` (default 0.5, see
    /// [`Sampler::set_foreground_prob`]), uniform otherwise.
    Balanced,
    /// A window placed uniformly over the volume; nothing is consulted.
    Uniform,
}

impl Strategy {
    /// The strategy named `s` (`foreground`, `balanced`, `uniform`; exact
    /// match), `None` otherwise.
    pub fn from_name(s: &str) -> Option<Strategy> {
        match s {
            "foreground" => Some(Strategy::Foreground),
            "balanced" => Some(Strategy::Balanced),
            "uniform" => Some(Strategy::Uniform),
            _ => None,
        }
    }

    /// The strategy's name as [`Strategy::from_name`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Foreground => "foreground",
            Strategy::Balanced => "balanced",
            Strategy::Uniform => "uniform",
        }
    }
}

/// One draw: the window `start..stop` per spatial axis, the padding where
/// the volume is shorter than the patch, and how it was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    /// First voxel of the window on each spatial axis, inside the volume.
    pub start: Vec<u64>,
    /// One past the last voxel on each spatial axis (`stop - start` is the
    /// patch size, or the whole axis where the axis is shorter).
    pub stop: Vec<u64>,
    /// `(before, after)` voxels of padding per spatial axis needed to reach
    /// the patch size; `(0, 0)` wherever the axis is at least the patch size.
    pub pad: Vec<(u64, u64)>,
    /// The voxel the window was placed around: the drawn foreground
    /// coordinate, or for a uniform draw the middle of the drawn window
    /// (clamped into the volume).
    pub center: Vec<u64>,
    /// The strategy actually applied (`balanced` resolves to one of the others).
    pub strategy: Strategy,
    /// The class whose foreground the window was centred on; `None` for a
    /// uniform window.
    pub class_id: Option<u16>,
    /// `Some(true)`: the index answered; `Some(false)`: the labels were
    /// scanned; `None`: no foreground question arose.
    pub used_index: Option<bool>,
}

/// The window of `patch` voxels around `center` in `shape`, shifted inwards
/// at the border; padding (split before/after) only where the axis is shorter
/// than the patch. Returns `(start, stop, pad)`.
pub fn window_around(
    center: &[u64],
    patch: &[u64],
    shape: &[u64],
) -> (Vec<u64>, Vec<u64>, Vec<(u64, u64)>) {
    let mut start = Vec::with_capacity(shape.len());
    let mut stop = Vec::with_capacity(shape.len());
    let mut pad = Vec::with_capacity(shape.len());
    for ((&c, &p), &n) in center.iter().zip(patch).zip(shape) {
        if p >= n {
            start.push(0);
            stop.push(n);
            let extra = p - n;
            pad.push((extra / 2, extra - extra / 2));
        } else {
            let s = c.saturating_sub(p / 2).min(n - p);
            start.push(s);
            stop.push(s + p);
            pad.push((0, 0));
        }
    }
    (start, stop, pad)
}

/// Draws from one annotation of an open file.
pub struct Sampler<'f> {
    file: &'f File,
    ann: String,
    spatial: Vec<u64>,
    patch: Vec<u64>,
    strategy: Strategy,
    foreground_prob: f64,
    class_ids: Vec<u16>,
    /// Voxel count per class of `class_ids` (index counts, or the scan's).
    counts: Vec<u64>,
    /// The classes a foreground draw may target (`None`: every class).
    selected: Option<Vec<u16>>,
    weights: ClassWeights,
    /// Stored coordinates per class (flat `(n, S)` int32), loaded on demand.
    coords: Vec<Option<Vec<i32>>>,
    /// The index is fresh and lists the classes.
    indexed: bool,
}

fn bad(msg: String) -> Error {
    Error::invalid(msg)
}

impl<'f> Sampler<'f> {
    /// A sampler over annotation `ann` of `file`, for windows of `patch`
    /// voxels per spatial axis (one value broadcasts).
    pub fn open(
        file: &'f File,
        ann: &str,
        patch: &[u64],
        strategy: Strategy,
    ) -> Result<Sampler<'f>> {
        let a = voxel_annotations(file)?
            .into_iter()
            .find(|a| a.id == ann)
            .ok_or_else(|| {
                bad(format!(
                    "annotations/{ann} is not a voxel annotation with classes"
                ))
            })?;
        let s = a.spatial.len();
        let patch: Vec<u64> = match patch {
            [p] => vec![*p; s],
            p if p.len() == s => p.to_vec(),
            p => return Err(bad(format!("patch size {p:?} for {s} spatial axes"))),
        };
        if patch.contains(&0) {
            return Err(bad("patch size must be at least 1".into()));
        }
        let mut sm = Sampler {
            file,
            ann: ann.to_string(),
            spatial: a.spatial.clone(),
            patch,
            strategy,
            foreground_prob: 0.5,
            class_ids: a.class_ids.clone(),
            counts: Vec::new(),
            selected: None,
            weights: ClassWeights::Uniform,
            coords: vec![None; a.class_ids.len()],
            indexed: false,
        };
        let counts = match sm.fresh_table()? {
            Some(counts) => {
                sm.indexed = true;
                counts
            }
            None => Vec::new(),
        };
        if sm.indexed {
            sm.counts = counts;
        }
        Ok(sm)
    }

    /// Restrict foreground draws to `classes` (`None`: every class of the
    /// annotation). A class the annotation does not have counts zero.
    pub fn set_classes(&mut self, classes: Option<Vec<u16>>) {
        self.selected = classes;
    }

    /// How a foreground draw weighs the classes with voxels (default uniform).
    pub fn set_class_weights(&mut self, weights: ClassWeights) {
        self.weights = weights;
    }

    /// Probability that a `balanced` draw targets foreground (default 0.5).
    pub fn set_foreground_prob(&mut self, p: f64) {
        self.foreground_prob = p.clamp(0.0, 1.0);
    }

    /// Whether a fresh index answers foreground draws.
    pub fn uses_index(&self) -> bool {
        self.indexed
    }

    /// The class table and counts of a fresh entry listing every class of
    /// the annotation, or `None` (absent, stale, or incomplete).
    fn fresh_table(&self) -> Result<Option<Vec<u64>>> {
        let base = format!("index/{}", self.ann);
        let Ok(Object::Group(g)) = self.file.object(&base) else {
            return Ok(None);
        };
        let declared = match g.attribute("source_digest") {
            Ok(a) => match attr_json(self.file, &a)? {
                Json::Str(s) => s,
                _ => return Ok(None),
            },
            Err(_) => return Ok(None),
        };
        if !declared.starts_with("sha256:")
            || source_digest(self.file, &self.ann)?.as_deref() != Some(declared.as_str())
        {
            return Ok(None);
        }
        let ds = |n: &str| match self.file.object(&format!("{base}/{n}")) {
            Ok(Object::Dataset(d)) => read_array(&d).map(Some),
            _ => Ok(None),
        };
        let (Some(ids), Some(counts)) = (ds("class_ids")?, ds("voxel_counts")?) else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(self.class_ids.len());
        for &c in &self.class_ids {
            let Some(k) = (0..ids.len()).find(|&k| ids.get_u64(k) == Some(u64::from(c))) else {
                return Ok(None);
            };
            out.push(counts.get_u64(k).unwrap_or(0));
        }
        Ok(Some(out))
    }

    /// Scan the labels once (no usable index): every class's foreground
    /// sample, built in memory as an index entry would be.
    fn scan(&mut self) -> Result<()> {
        let a = voxel_annotations(self.file)?
            .into_iter()
            .find(|a| a.id == self.ann)
            .ok_or_else(|| bad(format!("annotations/{} disappeared", self.ann)))?;
        let e = build_annotation(
            self.file,
            &a,
            // every foreground voxel, as the reference's scan keeps them
            &IndexOptions {
                occupancy: 0,
                max_coords: u64::MAX,
                ..IndexOptions::default()
            },
        )?;
        let s = self.spatial.len().max(1);
        let mut counts = vec![0u64; self.class_ids.len()];
        for (k, (_, arr)) in e.fg_coords.into_iter().enumerate() {
            let v: Vec<i32> = arr
                .bytes
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            if let Some(n) = counts.get_mut(k) {
                *n = (v.len() / s) as u64;
            }
            if let Some(slot) = self.coords.get_mut(k) {
                *slot = Some(v);
            }
        }
        self.counts = counts;
        Ok(())
    }

    /// Load the stored coordinates of every class now (a draw then reads
    /// nothing from the file).
    pub fn preload(&mut self) -> Result<()> {
        for k in 0..self.class_ids.len() {
            self.class_coords(k)?;
        }
        Ok(())
    }

    fn class_coords(&mut self, k: usize) -> Result<&[i32]> {
        if self.coords.get(k).is_some_and(Option::is_none) {
            if !self.indexed {
                self.scan()?;
            } else {
                let class = self.class_ids.get(k).copied().unwrap_or(0);
                let path = format!("index/{}/fg_coords/{class}", self.ann);
                let v: Vec<i32> = match self.file.object(&path) {
                    Ok(Object::Dataset(d)) => {
                        let arr = read_array(&d)?;
                        if arr.dtype != crate::model::NumDtype::I32
                            || arr.shape.get(1).copied() != Some(self.spatial.len() as u64)
                        {
                            return Err(bad(format!(
                                "{path}: not int32 (n, {})",
                                self.spatial.len()
                            )));
                        }
                        arr.bytes
                            .chunks_exact(4)
                            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                            .collect()
                    }
                    _ => Vec::new(),
                };
                if let Some(slot) = self.coords.get_mut(k) {
                    *slot = Some(v);
                }
            }
        }
        Ok(self.coords.get(k).and_then(|c| c.as_deref()).unwrap_or(&[]))
    }

    /// Draw `i` of `seed`.
    pub fn draw(&mut self, seed: u64, i: u64) -> Result<Patch> {
        self.draw_with(&mut Rng::from_seeds(&[seed, i]))
    }

    /// The next draw from the generator `r` (the reference's `rng=` forms:
    /// `Rng::from_seeds` of an integer or a sequence of them, or one
    /// generator advanced over several draws).
    pub fn draw_with(&mut self, r: &mut Rng) -> Result<Patch> {
        let foreground = match self.strategy {
            Strategy::Foreground => true,
            Strategy::Uniform => false,
            Strategy::Balanced => {
                ((r.next_u64() >> 11) as f64) / ((1u64 << 53) as f64) < self.foreground_prob
            }
        };
        // a class was picked: the index (or the scan) was asked for a centre
        let mut asked = false;
        if foreground {
            if !self.indexed && self.coords.iter().all(Option::is_none) {
                self.scan()?;
            }
            let table: Vec<(u16, u64)> = self
                .class_ids
                .iter()
                .zip(&self.counts)
                .filter(|(c, _)| self.selected.as_ref().is_none_or(|sel| sel.contains(c)))
                .map(|(&c, &n)| (c, n))
                .collect();
            let pick = self.weights.pick(&table, r);
            if let Some(k) = pick.and_then(|c| self.class_ids.iter().position(|&x| x == c)) {
                asked = true;
                let s = self.spatial.len();
                let coords = self.class_coords(k)?;
                let rows = (coords.len() / s.max(1)) as u64;
                if rows > 0 {
                    let row = r.below(rows) as usize;
                    let center: Vec<u64> = coords
                        .get(row * s..row * s + s)
                        .unwrap_or(&[])
                        .iter()
                        .map(|&v| u64::try_from(v).unwrap_or(0))
                        .collect();
                    let center: Vec<u64> = center
                        .iter()
                        .zip(&self.spatial)
                        .map(|(&c, &n)| c.min(n.saturating_sub(1)))
                        .collect();
                    let (start, stop, pad) = window_around(&center, &self.patch, &self.spatial);
                    return Ok(Patch {
                        start,
                        stop,
                        pad,
                        center,
                        strategy: Strategy::Foreground,
                        class_id: self.class_ids.get(k).copied(),
                        used_index: Some(self.indexed),
                    });
                }
            }
        }
        // uniform in the window, not the centre
        let mut start = Vec::with_capacity(self.spatial.len());
        for (&n, &p) in self.spatial.iter().zip(&self.patch) {
            start.push(if p >= n { 0 } else { r.below(n - p + 1) });
        }
        let center: Vec<u64> = start
            .iter()
            .zip(&self.patch)
            .zip(&self.spatial)
            .map(|((&s, &p), &n)| (s + p / 2).min(n.saturating_sub(1)))
            .collect();
        let (start, stop, pad) = window_around(&center, &self.patch, &self.spatial);
        Ok(Patch {
            start,
            stop,
            pad,
            center,
            strategy: Strategy::Uniform,
            class_id: None,
            used_index: if asked { Some(self.indexed) } else { None },
        })
    }
}

/// `bench-op draw FILE --strategy S --size N --n N --warmup W [--seed S]
/// [--read]` (shared/bench/README.md): draws on annotation `seg` seeded
/// `(seed, i)`, with `--read` also reading the image `CT` and label patch;
/// `used_index` = fraction of draws the index answered.
pub fn bench_draw(args: &[String]) -> Result<serde_json::Value> {
    let mut file: Option<String> = None;
    let (mut strategy, mut size, mut n, mut warmup, mut seed, mut read) =
        (Strategy::Foreground, 96u64, 200u64, 1u64, 7u64, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = |flag: &str| -> Result<u64> {
            it.next().and_then(|v| v.parse().ok()).ok_or_else(|| {
                bad(format!(
                    "bench-op draw: {flag} needs a non-negative integer"
                ))
            })
        };
        match a.as_str() {
            "--size" => size = num("--size")?,
            "--n" => n = num("--n")?,
            "--warmup" => warmup = num("--warmup")?,
            "--seed" => seed = num("--seed")?,
            "--read" => read = true,
            "--strategy" => {
                let v = it.next().map(String::as_str).unwrap_or("");
                strategy = Strategy::from_name(v)
                    .ok_or_else(|| bad(format!("bench-op draw: unknown strategy {v:?}")))?;
            }
            f if f.starts_with("--") => {
                return Err(bad(format!("bench-op draw: unknown option {f}")))
            }
            f => file = Some(f.to_string()),
        }
    }
    let path = file.ok_or_else(|| bad("bench-op draw needs a FILE".into()))?;
    let f = File::open(&path)?;
    let image = match f.object("images/CT")? {
        Object::Dataset(d) => *d,
        _ => return Err(bad("images/CT is not a dataset".into())),
    };
    let label = match f.object("annotations/seg/data") {
        Ok(Object::Dataset(d)) => Some(*d),
        _ => None,
    };
    let mut sm = Sampler::open(&f, "seg", &[size], strategy)?;
    let mut times = Vec::new();
    let mut used = 0u64;
    for i in 0..warmup + n {
        let t = std::time::Instant::now();
        let p = sm.draw(seed, i)?;
        if read {
            let count: Vec<u64> = p.start.iter().zip(&p.stop).map(|(a, b)| b - a).collect();
            let lead = image.shape().len().saturating_sub(count.len());
            let mut start = vec![0u64; lead];
            let mut cnt: Vec<u64> = image.shape().iter().take(lead).copied().collect();
            start.extend(&p.start);
            cnt.extend(&count);
            crate::sample::read_patch_vec(&image, Some(&start), &cnt)?;
            if let Some(l) = &label {
                crate::sample::read_patch_vec(l, Some(&p.start), &count)?;
            }
        }
        let dt = t.elapsed().as_secs_f64() * 1e3;
        if i >= warmup {
            times.push(dt);
            used += u64::from(p.used_index == Some(true));
        }
    }
    Ok(serde_json::json!({
        "op": "draw",
        "strategy": strategy.name(),
        "size": size,
        "read": read,
        "times_ms": times,
        "used_index": used as f64 / (n.max(1) as f64),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_as_the_reference() {
        // reference: window_around([0,5,9],[4,4,4],[10,10,10]) = 0:4, 3:7, 6:10
        let (s, e, p) = window_around(&[0, 5, 9], &[4, 4, 4], &[10, 10, 10]);
        assert_eq!((s, e), (vec![0, 3, 6], vec![4, 7, 10]));
        assert_eq!(p, vec![(0, 0); 3]);
        // patch 12 on 10 voxels: the whole axis, padded (1, 1)
        let (s, e, p) = window_around(&[5, 5, 5], &[4, 5, 12], &[10, 10, 10]);
        assert_eq!((s, e, p[2]), (vec![3, 3, 0], vec![7, 8, 10], (1, 1)));
        assert_eq!(window_around(&[9], &[3], &[10]).0, vec![7]);
        assert_eq!(window_around(&[4], &[5], &[10]).0, vec![2]);
    }
}
