//! Chunk shapes (`docs/medh5-format.md` §6.3–§6.5): the reference's
//! chunk optimiser for spatial axes (§6.4, exact), L3 cache detection, the full
//! shape rule for grids with stacked leading axes, and h5py's `guess_chunk`
//! fallback (§6.5).

use std::sync::OnceLock;

use crate::canonical_json::Json;
use crate::error::{Error, Result};
use crate::values::attrs_json;
use purehdf::low_level::file::File;

/// Patch edge assumed when a grid has no `patch_hint`.
pub const DEFAULT_PATCH: u64 = 64;
/// L3 bytes per core assumed when detection fails (1.375 MiB).
pub const FALLBACK_L3_BYTES: u64 = 1_441_792;
/// Fraction of L3 a chunk may fill.
pub const CACHE_SAFETY: f64 = 0.8;
/// Smallest chunk budget (512 KiB).
pub const MIN_CHUNK_BYTES: f64 = 524_288.0;
/// Largest chunk (4 MiB).
pub const MAX_CHUNK_BYTES: f64 = 4_194_304.0;
/// Growth stops when the mean chunk/patch ratio would exceed this.
pub const OVERSHOOT_LIMIT: f64 = 1.5;

/// The training patch the optimiser aims at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Patch<'a> {
    /// No hint: a [`DEFAULT_PATCH`] cube.
    Default,
    /// One edge for every axis.
    Uniform(i64),
    /// One edge per spatial axis (negative entries count as 0).
    PerAxis(&'a [i64]),
}

fn pow2ceil(x: u64) -> u64 {
    x.max(1).checked_next_power_of_two().unwrap_or(1 << 63)
}

fn chunk_bytes(c: &[u64], itemsize: u64) -> f64 {
    c.iter().fold(itemsize as f64, |acc, &v| acc * v as f64)
}

/// The spatial chunk for spatial extents `shape` (§6.4, `spatial_chunk_for`).
pub fn spatial_chunk_for(
    shape: &[u64],
    patch: Patch<'_>,
    itemsize: u64,
    l3_bytes: u64,
) -> Result<Vec<u64>> {
    if shape.is_empty() || shape.contains(&0) {
        return Err(Error::invalid(format!(
            "spatial shape {shape:?} must be non-empty with positive extents"
        )));
    }
    let p: Vec<u64> = match patch {
        Patch::Default => vec![DEFAULT_PATCH; shape.len()],
        Patch::Uniform(v) => vec![v.max(0) as u64; shape.len()],
        Patch::PerAxis(v) => {
            if v.len() != shape.len() {
                return Err(Error::invalid(format!(
                    "patch {v:?} has {} entries for {} spatial axes",
                    v.len(),
                    shape.len()
                )));
            }
            v.iter().map(|&x| x.max(0) as u64).collect()
        }
    };
    let p: Vec<u64> = p
        .iter()
        .zip(shape)
        .map(|(&p, &s)| p.min(s).max(1))
        .collect();
    let mut c: Vec<u64> = p
        .iter()
        .zip(shape)
        .map(|(&p, &s)| pow2ceil(p).min(s))
        .collect();
    let budget = (l3_bytes as f64 * CACHE_SAFETY).clamp(MIN_CHUNK_BYTES, MAX_CHUNK_BYTES);
    let ratio = |c: &[u64], i: usize| c[i] as f64 / p[i] as f64;

    if chunk_bytes(&c, itemsize) > MAX_CHUNK_BYTES {
        c = p.clone();
        while chunk_bytes(&c, itemsize) > MAX_CHUNK_BYTES {
            let mut best: Option<usize> = None;
            for i in 0..c.len() {
                if c[i] > 1 && best.is_none_or(|b| ratio(&c, i) > ratio(&c, b)) {
                    best = Some(i);
                }
            }
            match best {
                Some(i) => c[i] = c[i].div_ceil(2),
                None => break,
            }
        }
    }

    while chunk_bytes(&c, itemsize) < budget {
        let mut best: Option<usize> = None;
        for i in 0..c.len() {
            if c[i] < shape[i] && best.is_none_or(|b| ratio(&c, i) < ratio(&c, b)) {
                best = Some(i);
            }
        }
        let Some(i) = best else { break };
        let mut next = c.clone();
        next[i] = (c[i] + pow2ceil(p[i])).min(shape[i]);
        let mean = (0..next.len()).map(|j| ratio(&next, j)).sum::<f64>() / next.len() as f64;
        if mean > OVERSHOOT_LIMIT || chunk_bytes(&next, itemsize) > MAX_CHUNK_BYTES {
            break;
        }
        c = next;
    }
    Ok(c.iter().zip(shape).map(|(&c, &s)| c.min(s)).collect())
}

/// Chunk for a full array (`optimize_chunks`): `leading` stacked axes get 1,
/// then per grid axis: spatial axes from [`spatial_chunk_for`], other axes 1.
/// `shape` includes the leading axes; `axis_kinds` covers the grid axes only.
pub fn optimize_chunks(
    shape: &[u64],
    axis_kinds: &[&str],
    patch: Patch<'_>,
    itemsize: u64,
    l3_bytes: u64,
    leading: usize,
) -> Result<Vec<u64>> {
    if shape.len() != leading + axis_kinds.len() {
        return Err(Error::invalid(format!(
            "shape {shape:?} does not match {leading} leading axes + {} grid axes",
            axis_kinds.len()
        )));
    }
    let grid = &shape[leading..];
    let spatial: Vec<u64> = grid
        .iter()
        .zip(axis_kinds)
        .filter(|(_, k)| **k == "spatial")
        .map(|(&s, _)| s)
        .collect();
    let sc = spatial_chunk_for(&spatial, patch, itemsize, l3_bytes)?;
    let mut it = sc.into_iter();
    let mut out = vec![1u64; leading];
    for k in axis_kinds {
        out.push(if *k == "spatial" {
            it.next().unwrap_or(1)
        } else {
            1
        });
    }
    Ok(out)
}

/// Chunk from a grid `chunk_hint` (§6.3 rule 1): each entry clamped to
/// `[1, extent]`; with `leading > 0`, `leading` ones then the hint for spatial
/// axes and 1 for the others. `shape` includes the leading axes.
pub fn chunk_from_hint(
    shape: &[u64],
    axis_kinds: &[&str],
    hint: &[i64],
    leading: usize,
) -> Result<Vec<u64>> {
    if hint.len() != axis_kinds.len() || shape.len() != leading + axis_kinds.len() {
        return Err(Error::invalid(format!(
            "chunk_hint {hint:?} does not match the grid's {} axes",
            axis_kinds.len()
        )));
    }
    let grid = &shape[leading..];
    let mut out = vec![1u64; leading];
    for ((&h, &s), k) in hint.iter().zip(grid).zip(axis_kinds) {
        let v = (h.max(1) as u64).min(s.max(1));
        out.push(if leading > 0 && *k != "spatial" { 1 } else { v });
    }
    Ok(out)
}

/// h5py's `guess_chunk` (§6.5) for a dataset without a derived chunk.
pub fn guess_chunk(shape: &[u64], itemsize: u64) -> Vec<u64> {
    const BASE: f64 = 16.0 * 1024.0;
    const MIN: f64 = 8.0 * 1024.0;
    const MAX: f64 = 1024.0 * 1024.0;
    if shape.is_empty() {
        return Vec::new();
    }
    let mut c: Vec<f64> = shape
        .iter()
        .map(|&s| if s == 0 { 1024.0 } else { s as f64 })
        .collect();
    let product = |c: &[f64]| c.iter().product::<f64>();
    let dset = product(&c) * itemsize as f64;
    let target = (BASE * 2f64.powf((dset / MAX).log10())).clamp(MIN, MAX);
    let mut k = 0usize;
    loop {
        let bytes = product(&c) * itemsize as f64;
        if (bytes < target || (bytes - target).abs() / target < 0.5) && bytes < MAX {
            break;
        }
        if product(&c) == 1.0 {
            break;
        }
        let i = k % c.len();
        c[i] = (c[i] / 2.0).ceil();
        k += 1;
    }
    c.iter().map(|&v| v as u64).collect()
}

/// Parse a sysfs cache size (`NNNK`, `NNNM`, `NNNG` or bytes).
pub fn parse_cache_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 1u64 << 10),
        'M' | 'm' => (&t[..t.len() - 1], 1 << 20),
        'G' | 'g' => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// Count the CPUs of a `shared_cpu_list` (`0-3,8-11` syntax).
pub fn count_cpu_list(text: &str) -> Option<u64> {
    let mut n = 0u64;
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?);
                n = n.checked_add(b.checked_sub(a)?.checked_add(1)?)?;
            }
            None => {
                part.trim().parse::<u64>().ok()?;
                n += 1;
            }
        }
    }
    (n > 0).then_some(n)
}

/// L3 bytes per core from `/sys/devices/system/cpu/cpu0/cache/index3`, if any.
fn read_sysfs_l3() -> Option<u64> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache/index3");
    let size = parse_cache_size(&std::fs::read_to_string(dir.join("size")).ok()?)?;
    let cpus = std::fs::read_to_string(dir.join("shared_cpu_list"))
        .ok()
        .and_then(|t| count_cpu_list(&t))
        .unwrap_or(1);
    let per_core = size / cpus;
    (per_core > 0).then_some(per_core)
}

/// The L3 bytes per core the optimiser uses on this host, detected once per
/// process (Linux sysfs), else [`FALLBACK_L3_BYTES`].
pub fn detect_l3_bytes() -> u64 {
    static L3: OnceLock<u64> = OnceLock::new();
    *L3.get_or_init(|| read_sysfs_l3().unwrap_or(FALLBACK_L3_BYTES))
}

// The chunk shape a fresh write gives (used by amend and recompress).

/// The chunk a fresh write gives a dataset of `shape` at sample-relative
/// `rel` in `sample` (§6.3 by role, else h5py's `guess_chunk`).
pub fn writer_chunk_shape(sample: &File, rel: &str, shape: &[u64], item: u64) -> Vec<u64> {
    let item = item.max(1);
    derived_chunk(sample, rel, shape, item).unwrap_or_else(|| {
        let mut c = guess_chunk(shape, item);
        c.truncate(shape.len());
        c
    })
}

pub(crate) fn attr_of(file: &File, path: &str, name: &str) -> Option<Json> {
    let obj = file.object(path).ok()?;
    let attrs = attrs_json(file, &obj.attributes().ok()?).ok()?;
    attrs.into_iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

fn ints(j: &Json) -> Option<Vec<i64>> {
    match j {
        Json::Array(items) => items
            .iter()
            .map(|v| match v {
                Json::Int(i) => Some(*i),
                _ => None,
            })
            .collect(),
        Json::Int(i) => Some(vec![*i]),
        _ => None,
    }
}

fn strs(j: &Json) -> Option<Vec<String>> {
    match j {
        Json::Array(items) => items
            .iter()
            .map(|v| match v {
                Json::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// §6.3 by role: images from their grid, annotation data with the stacked
/// axes leading, transform fields and index occupancy one plane per chunk.
fn derived_chunk(sample: &File, rel: &str, shape: &[u64], item: u64) -> Option<Vec<u64>> {
    let parts: Vec<&str> = rel.split('/').collect();
    let (grid_owner, stacked) = match parts.as_slice() {
        ["images", id] => (format!("images/{id}"), false),
        ["annotations", id, "data"] => (format!("annotations/{id}"), true),
        ["transforms", _, "field"] | ["index", _, "occupancy"] => {
            let mut c = vec![1u64];
            c.extend(shape.iter().skip(1));
            return Some(c);
        }
        _ => return None,
    };
    let grid = match attr_of(sample, &grid_owner, "grid")? {
        Json::Str(s) => s,
        _ => return None,
    };
    grid_chunk(sample, &grid, shape, item, stacked)
}

/// The chunk a fresh write gives a new image of `shape` on grid `grid` of
/// `sample` (§6.3: from the grid's `chunk_hint` / `patch_hint`, as `create`
/// chunks it), else h5py's `guess_chunk` when the grid cannot be read.
pub fn image_chunk_shape(sample: &File, grid: &str, shape: &[u64], item: u64) -> Vec<u64> {
    let item = item.max(1);
    grid_chunk(sample, grid, shape, item, false).unwrap_or_else(|| {
        let mut c = guess_chunk(shape, item);
        c.truncate(shape.len());
        c
    })
}

/// §6.3 from grid `grid`'s attributes: an image (`stacked = false`, leading
/// axes before the grid's) or annotation data (stacked axes before the
/// spatial ones).
fn grid_chunk(
    sample: &File,
    grid: &str,
    shape: &[u64],
    item: u64,
    stacked: bool,
) -> Option<Vec<u64>> {
    let gpath = format!("grids/{grid}");
    let gshape: Vec<u64> = ints(&attr_of(sample, &gpath, "shape")?)?
        .into_iter()
        .map(|v| u64::try_from(v).ok())
        .collect::<Option<_>>()?;
    let kinds = attr_of(sample, &gpath, "axis_kinds")
        .and_then(|j| strs(&j))
        .unwrap_or_else(|| vec!["spatial".to_string(); gshape.len()]);
    let kinds_ref: Vec<&str> = kinds.iter().map(String::as_str).collect();
    let l3 = super::chunking::detect_l3_bytes();
    let hint = attr_of(sample, &gpath, "chunk_hint").and_then(|j| ints(&j));
    let patch = attr_of(sample, &gpath, "patch_hint").and_then(|j| ints(&j));
    let n_spatial = kinds_ref.iter().filter(|k| **k == "spatial").count();
    let leading = if stacked {
        shape.len().checked_sub(n_spatial)?
    } else {
        shape.len().checked_sub(gshape.len())?
    };
    let grid_axes: Vec<&str> = if stacked {
        vec!["spatial"; n_spatial]
    } else {
        kinds_ref.clone()
    };
    let spatial_shape: Vec<u64> = gshape
        .iter()
        .zip(&kinds_ref)
        .filter(|(_, k)| **k == "spatial")
        .map(|(&s, _)| s)
        .collect();
    let full: Vec<u64> = if stacked {
        std::iter::repeat_n(1, leading)
            .chain(spatial_shape.iter().copied())
            .collect()
    } else {
        std::iter::repeat_n(1, leading)
            .chain(gshape.iter().copied())
            .collect()
    };
    let chunk = match hint {
        Some(h) if !stacked => super::chunking::chunk_from_hint(&full, &grid_axes, &h, leading),
        Some(h) => {
            let sh: Vec<i64> = h
                .iter()
                .zip(&kinds_ref)
                .filter(|(_, k)| **k == "spatial")
                .map(|(&v, _)| v)
                .collect();
            super::chunking::chunk_from_hint(&full, &grid_axes, &sh, leading)
        }
        None => {
            let p = patch
                .as_deref()
                .map_or(super::chunking::Patch::Default, |p| {
                    super::chunking::Patch::PerAxis(p)
                });
            super::chunking::optimize_chunks(&full, &grid_axes, p, item, l3, leading)
        }
    }
    .ok()?;
    (chunk.len() == shape.len()).then(|| {
        chunk
            .iter()
            .zip(shape)
            .map(|(&c, &d)| c.min(d).max(1))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_full_shape_examples() {
        let sp = ["spatial"; 3];
        assert_eq!(
            optimize_chunks(
                &[3, 512, 512, 512],
                &sp,
                Patch::Default,
                1,
                FALLBACK_L3_BYTES,
                1
            )
            .unwrap(),
            [1, 128, 64, 64]
        );
        assert_eq!(
            optimize_chunks(
                &[4, 200, 256, 256],
                &["channel", "spatial", "spatial", "spatial"],
                Patch::Default,
                4,
                FALLBACK_L3_BYTES,
                0
            )
            .unwrap(),
            [1, 128, 64, 64]
        );
        assert_eq!(
            optimize_chunks(
                &[10, 3, 64, 256, 256],
                &["time", "channel", "spatial", "spatial", "spatial"],
                Patch::Default,
                2,
                FALLBACK_L3_BYTES,
                0
            )
            .unwrap(),
            [1, 1, 64, 128, 64]
        );
    }

    #[test]
    fn guess_chunk_spec_values() {
        assert_eq!(guess_chunk(&[1000], 8), [1000]);
        assert_eq!(guess_chunk(&[100, 100, 100], 4), [13, 25, 25]);
        assert_eq!(guess_chunk(&[5_000_000], 1), [39063]);
        assert_eq!(guess_chunk(&[3, 160, 160, 160], 2), [1, 20, 20, 40]);
        assert_eq!(guess_chunk(&[200, 64, 64], 8), [25, 8, 16]);
    }

    #[test]
    fn hints() {
        let sp = ["spatial"; 3];
        assert_eq!(
            chunk_from_hint(&[32, 64, 64], &sp, &[16, 32, 32], 0).unwrap(),
            [16, 32, 32]
        );
        assert_eq!(
            chunk_from_hint(&[8, 16, 16], &sp, &[16, 0, 32], 0).unwrap(),
            [8, 1, 16]
        );
        assert_eq!(
            chunk_from_hint(&[2, 16, 64, 64], &sp, &[8, 32, 32], 1).unwrap(),
            [1, 8, 32, 32]
        );
        assert_eq!(
            chunk_from_hint(
                &[2, 3, 64, 64],
                &["channel", "spatial", "spatial"],
                &[3, 32, 32],
                1
            )
            .unwrap(),
            [1, 1, 32, 32]
        );
        assert!(chunk_from_hint(&[2, 3], &sp, &[1, 2, 3], 0).is_err());
    }

    #[test]
    fn sysfs_parsing() {
        assert_eq!(parse_cache_size("32768K\n"), Some(32 << 20));
        assert_eq!(parse_cache_size("16M"), Some(16 << 20));
        assert_eq!(parse_cache_size("1441792"), Some(1_441_792));
        assert_eq!(parse_cache_size("x"), None);
        assert_eq!(count_cpu_list("0-3,8-11\n"), Some(8));
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list("3-1"), None);
        assert!(detect_l3_bytes() > 0);
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(spatial_chunk_for(&[], Patch::Default, 2, FALLBACK_L3_BYTES).is_err());
        assert!(spatial_chunk_for(&[0, 4], Patch::Default, 2, FALLBACK_L3_BYTES).is_err());
        assert!(spatial_chunk_for(&[4, 4], Patch::PerAxis(&[1]), 2, FALLBACK_L3_BYTES).is_err());
        // Huge element size: shrinks to single voxels rather than looping.
        assert_eq!(
            spatial_chunk_for(&[4, 4], Patch::Default, 1 << 40, FALLBACK_L3_BYTES).unwrap(),
            [1, 1]
        );
    }
}
