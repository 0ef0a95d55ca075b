//! `h5 compare A B`: is B a good copy of A (`docs/neighbours.md` row E8).
//!
//! - `exact`: every object of A exists in B with the same shape, dtype,
//!   attributes and SHA-256 of the decoded data (the `h5 dump --json` view).
//! - `ssim`, `psnr`, `maxabs`: per numeric dataset of rank ≥ 2, on slices
//!   along the first axis (a 2-D dataset is one slice; the last two axes of
//!   higher ranks are the image, middle axes folded into its rows). SSIM is
//!   the esrf checker's: a uniform window of min(H, W, 7) made odd (and at
//!   least 3), data range = the original slice's max − min, K1 = 0.01,
//!   K2 = 0.03, sample covariance (N / (N − 1)), float64, the mean over the
//!   window positions that fit inside the slice — scikit-image's
//!   `structural_similarity` with those parameters. PSNR uses the same data
//!   range. A constant original slice is reported as `constant`, never as a
//!   silent 1.0.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::dump::walk::dump_file;
use crate::tools::recompress::plan::datasets_of;
use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::{ByteOrder, Datatype};
use purehdf::low_level::file::Object;
use purehdf::low_level::selection::Selection;
use purehdf::{Error, Result};

const USAGE: &str = "usage: h5 compare A B [--metric exact|ssim|psnr|maxabs] \
[--slices first,last|all|N|i,j,...] [--dataset PATH]... [--json]";

/// Largest slice compared, in elements.
const MAX_SLICE: u64 = 1 << 28;

/// What to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Every object of A present in B with the same shape, dtype, attributes and data SHA-256 (the
    /// `h5 dump --json` view).
    Exact,
    /// Structural similarity (SSIM) per slice, with the esrf checker's parameters.
    Ssim,
    /// Peak signal-to-noise ratio (PSNR) per slice, in dB over the original slice's data range.
    Psnr,
    /// Largest absolute difference between corresponding elements per slice.
    MaxAbs,
}

/// Which slices along the first axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slices {
    /// Every slice along the first axis.
    All,
    /// `N` evenly spaced slices, first and last included.
    Count(u64),
    /// Indices (negative: from the end).
    List(Vec<i64>),
}

impl Slices {
    /// Parse a `--slices` value: `all`, a count `N`, or a comma-separated list of indices where
    /// `first` is 0 and `last` is -1.
    pub fn parse(text: &str) -> Result<Slices> {
        let t = text.trim();
        if t == "all" {
            return Ok(Slices::All);
        }
        if !t.contains(',') {
            if let Ok(n) = t.parse::<u64>() {
                return Ok(Slices::Count(n.max(1)));
            }
        }
        t.split(',')
            .map(|p| match p.trim() {
                "first" => Ok(0),
                "last" => Ok(-1),
                n => n
                    .parse::<i64>()
                    .map_err(|_| Error::InvalidArgument(format!("bad slice {n:?}"))),
            })
            .collect::<Result<Vec<_>>>()
            .map(Slices::List)
    }

    /// The slice indices of an axis of length `n`, sorted, without repeats.
    pub fn indices(&self, n: u64) -> Vec<u64> {
        if n == 0 {
            return Vec::new();
        }
        let mut v: Vec<u64> = match self {
            Slices::All => (0..n).collect(),
            Slices::Count(k) if *k <= 1 => vec![0],
            Slices::Count(k) => (0..*k)
                .map(|i| ((i as f64) * ((n - 1) as f64) / ((k - 1) as f64)).round() as u64)
                .collect(),
            Slices::List(l) => l
                .iter()
                .filter_map(|&i| {
                    let j = if i < 0 { n as i64 + i } else { i };
                    (0..n as i64).contains(&j).then_some(j as u64)
                })
                .collect(),
        };
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// One slice's value.
#[derive(Clone, Debug, PartialEq)]
pub struct SliceValue {
    /// Index of the slice along the first axis.
    pub index: u64,
    /// `None` when constant (SSIM/PSNR undefined) or identical (PSNR).
    pub value: Option<f64>,
    /// True when the original slice is constant (max = min), so SSIM and PSNR are undefined.
    pub constant: bool,
}

/// Values read as float64.
pub fn to_f64(dt: &Datatype, bytes: &[u8]) -> Result<Vec<f64>> {
    let not_numeric = || Error::InvalidArgument("not an integer or float dataset".into());
    let (size, order) = match dt {
        Datatype::Integer { size, order, .. } | Datatype::Float { size, order, .. } => {
            (*size as usize, *order)
        }
        _ => return Err(not_numeric()),
    };
    if !matches!(order, ByteOrder::Little | ByteOrder::Big) || ![1, 2, 4, 8].contains(&size) {
        return Err(not_numeric());
    }
    let big = order == ByteOrder::Big;
    let mut out = Vec::with_capacity(bytes.len() / size);
    for el in bytes.chunks_exact(size) {
        let mut b = [0u8; 8];
        if let Some(dst) = b.get_mut(..size) {
            dst.copy_from_slice(el);
        }
        if big {
            if let Some(dst) = b.get_mut(..size) {
                dst.reverse();
            }
        }
        let raw = u64::from_le_bytes(b);
        let v = match dt {
            Datatype::Float { .. } if size == 4 => f64::from(f32::from_bits(raw as u32)),
            Datatype::Float { .. } if size == 8 => f64::from_bits(raw),
            Datatype::Integer { signed: true, .. } => {
                let shift = 64 - 8 * size as u32;
                (((raw << shift) as i64) >> shift) as f64
            }
            Datatype::Integer { .. } => raw as f64,
            _ => return Err(not_numeric()),
        };
        out.push(v);
    }
    Ok(out)
}

/// Sums over every `win` x `win` window that fits in the `h` x `w` image, row-major.
fn box_sums(a: &[f64], h: usize, w: usize, win: usize) -> Vec<f64> {
    let (oh, ow) = (h + 1 - win, w + 1 - win);
    let mut rows = vec![0.0f64; h * ow];
    for i in 0..h {
        let line = &a[i * w..(i + 1) * w];
        for j in 0..ow {
            rows[i * ow + j] = line[j..j + win].iter().sum();
        }
    }
    let mut out = vec![0.0f64; oh * ow];
    for i in 0..oh {
        for j in 0..ow {
            out[i * ow + j] = (0..win).map(|k| rows[(i + k) * ow + j]).sum();
        }
    }
    out
}

/// The esrf checker's window for an `h` x `w` slice (`None`: too small).
pub fn window(h: usize, w: usize) -> Option<usize> {
    let mut win = h.min(w).min(7);
    if win.is_multiple_of(2) {
        win = win.saturating_sub(1);
    }
    (win >= 3).then_some(win)
}

/// SSIM of `y` against the original `x` (both `h` x `w`); `None` when `x` is
/// constant or the slice is smaller than 3 x 3.
pub fn ssim(x: &[f64], y: &[f64], h: usize, w: usize) -> Option<f64> {
    let win = window(h, w)?;
    if x.len() != h * w || y.len() != h * w {
        return None;
    }
    let (lo, hi) = x
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, u), &v| {
            (l.min(v), u.max(v))
        });
    let range = hi - lo;
    if range.is_nan() || range == 0.0 {
        return None;
    }
    let np = (win * win) as f64;
    let cov = np / (np - 1.0);
    let prod = |p: &[f64], q: &[f64]| p.iter().zip(q).map(|(a, b)| a * b).collect::<Vec<_>>();
    let sx = box_sums(x, h, w, win);
    let sy = box_sums(y, h, w, win);
    let sxx = box_sums(&prod(x, x), h, w, win);
    let syy = box_sums(&prod(y, y), h, w, win);
    let sxy = box_sums(&prod(x, y), h, w, win);
    let (c1, c2) = ((0.01 * range).powi(2), (0.03 * range).powi(2));
    let mut total = 0.0f64;
    for k in 0..sx.len() {
        let (ux, uy) = (sx[k] / np, sy[k] / np);
        let vx = cov * (sxx[k] / np - ux * ux);
        let vy = cov * (syy[k] / np - uy * uy);
        let vxy = cov * (sxy[k] / np - ux * uy);
        let num = (2.0 * ux * uy + c1) * (2.0 * vxy + c2);
        let den = (ux * ux + uy * uy + c1) * (vx + vy + c2);
        total += num / den;
    }
    Some(total / sx.len() as f64)
}

/// PSNR against the original's range; `None` when constant or identical.
pub fn psnr(x: &[f64], y: &[f64]) -> Option<f64> {
    let (lo, hi) = x
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, u), &v| {
            (l.min(v), u.max(v))
        });
    let range = hi - lo;
    let mse = x.iter().zip(y).map(|(a, b)| (a - b).powi(2)).sum::<f64>() / x.len().max(1) as f64;
    if range == 0.0 || mse == 0.0 || range.is_nan() {
        return None;
    }
    Some(10.0 * (range * range / mse).log10())
}

fn is_constant(x: &[f64]) -> bool {
    x.first().is_none_or(|f| x.iter().all(|v| v == f))
}

/// Slice `i` (along the first axis) of `ds` as an `h` x `w` float64 image.
fn slice_of(ds: &Dataset, i: u64) -> Result<(Vec<f64>, usize, usize)> {
    let shape = ds.shape();
    let (start, count, h, w) = match shape {
        [a, b] => (vec![0, 0], vec![*a, *b], *a, *b),
        [_, rest @ ..] => {
            let mut start = vec![0u64; shape.len()];
            start[0] = i;
            let mut count = shape.to_vec();
            count[0] = 1;
            let w = *rest.last().unwrap_or(&1);
            let h = rest.iter().rev().skip(1).product::<u64>();
            (start, count, h, w)
        }
        [] => return Err(Error::InvalidArgument("scalar dataset".into())),
    };
    if h.saturating_mul(w) > MAX_SLICE {
        return Err(Error::InvalidArgument(format!(
            "slice of {h} x {w} too large"
        )));
    }
    let bytes = ds.read_raw_vec(&Selection::Hyperslab { start, count })?;
    Ok((to_f64(ds.dtype(), &bytes)?, h as usize, w as usize))
}

/// The metric on the chosen slices of `a` vs `b` (same shape required).
pub fn compare_dataset(a: &Dataset, b: &Dataset, m: Metric, s: &Slices) -> Result<Vec<SliceValue>> {
    if a.shape() != b.shape() {
        return Err(Error::InvalidArgument(format!(
            "shapes differ: {:?} vs {:?}",
            a.shape(),
            b.shape()
        )));
    }
    let n = match a.shape() {
        [_, _] => 1,
        [z, _, _, ..] => *z,
        _ => return Err(Error::InvalidArgument("rank below 2".into())),
    };
    let mut out = Vec::new();
    for i in s.indices(n) {
        let (x, h, w) = slice_of(a, i)?;
        let (y, _, _) = slice_of(b, i)?;
        let constant = is_constant(&x);
        let value = match m {
            Metric::Ssim => ssim(&x, &y, h, w),
            Metric::Psnr => psnr(&x, &y),
            Metric::MaxAbs => Some(
                x.iter()
                    .zip(&y)
                    .map(|(p, q)| (p - q).abs())
                    .fold(0.0, f64::max),
            ),
            Metric::Exact => None,
        };
        out.push(SliceValue {
            index: i,
            value,
            constant,
        });
    }
    Ok(out)
}

fn exact(a: &str, b: &str, json: bool) -> Result<u8> {
    let (da, db) = (dump_file(a)?, dump_file(b)?);
    let objs = |d: &Value| -> HashMap<String, Value> {
        d.get("objects")
            .and_then(Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(|o| Some((o.get("path")?.as_str()?.to_string(), o.clone())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (oa, ob) = (objs(&da.doc), objs(&db.doc));
    let mut paths: Vec<&String> = oa
        .keys()
        .chain(ob.keys().filter(|k| !oa.contains_key(*k)))
        .collect();
    paths.sort();
    let key = |o: &Value, k: &str| o.get(k).cloned().unwrap_or(Value::Null);
    let mut differ = 0;
    for p in paths {
        let status = match (oa.get(p), ob.get(p)) {
            (Some(x), Some(y)) => {
                let same = [
                    "kind", "shape", "dtype", "sha256", "attrs", "target", "same_as",
                ]
                .iter()
                .all(|k| key(x, k) == key(y, k))
                    && x.get("error").is_none()
                    && y.get("error").is_none();
                if same {
                    "equal"
                } else {
                    "differs"
                }
            }
            (Some(_), None) => "missing in B",
            _ => "missing in A",
        };
        if status != "equal" {
            differ += 1;
        }
        if json {
            println!(
                "{}",
                json!({"path": p, "metric": "exact", "status": status})
            );
        } else if status != "equal" {
            println!("{p}\t{status}");
        }
    }
    if json {
        println!(
            "{}",
            json!({"summary": true, "metric": "exact", "objects": oa.len(), "differ": differ})
        );
    } else {
        println!("exact: {} object(s), {differ} differ", oa.len());
    }
    Ok(u8::from(differ > 0))
}

/// A chunk error named by the dataset's path (E3: "unsupported codec 37"
/// with dataset and chunk coordinates).
fn name_dataset(e: Error, path: &str) -> Error {
    match e {
        Error::Chunk { coords, source, .. } => Error::Chunk {
            dataset: path.to_string(),
            coords,
            source,
        },
        e => e,
    }
}

fn fmt_value(m: Metric, v: &SliceValue) -> String {
    match (v.value, v.constant) {
        (_, true) if m != Metric::MaxAbs => "constant".into(),
        (None, _) if m == Metric::Psnr => "identical".into(),
        (None, _) => "n/a".into(),
        (Some(x), _) => format!("{x:.6}"),
    }
}

fn metrics(a: &str, b: &str, m: Metric, s: &Slices, only: &[String], json: bool) -> Result<u8> {
    let (fa, fb) = (crate::open::open(a)?, crate::open::open(b)?);
    let name = format!("{m:?}").to_lowercase();
    let mut problems = 0;
    let mut done = 0;
    for (ds, paths) in datasets_of(&fa)? {
        let path = paths.first().cloned().unwrap_or_default();
        if !only.is_empty() && !only.iter().any(|o| paths.contains(o)) {
            continue;
        }
        let numeric = matches!(
            ds.dtype(),
            Datatype::Integer { .. } | Datatype::Float { .. }
        );
        if !numeric || ds.shape().len() < 2 {
            continue;
        }
        let res = match fb.object(&path) {
            Ok(Object::Dataset(db)) => compare_dataset(&ds, &db, m, s),
            Ok(_) => Err(Error::InvalidArgument("not a dataset in B".into())),
            Err(e) => Err(e),
        }
        .map_err(|e| name_dataset(e, &path));
        done += 1;
        match res {
            Err(e) => {
                problems += 1;
                if json {
                    println!(
                        "{}",
                        json!({"path": path, "metric": name, "error": e.to_string()})
                    );
                } else {
                    println!("{path}\terror: {e}");
                }
            }
            Ok(vals) if json => {
                let sl: Vec<Value> = vals
                    .iter()
                    .map(|v| json!({"index": v.index, "value": v.value, "constant": v.constant}))
                    .collect();
                println!("{}", json!({"path": path, "metric": name, "slices": sl}));
            }
            Ok(vals) => {
                let parts: Vec<String> = vals
                    .iter()
                    .map(|v| format!("[{}]={}", v.index, fmt_value(m, v)))
                    .collect();
                println!("{path}\t{name} {}", parts.join(" "));
            }
        }
    }
    if !json {
        println!("{name}: {done} dataset(s), {problems} could not be compared");
    }
    Ok(u8::from(problems > 0))
}

/// `h5 compare A B ...`. Exit code: 0 equal (exact) or computed, 1 differences
/// or datasets that could not be compared, 2 usage or unopenable files.
pub fn run(args: &[String]) -> u8 {
    let mut pos = Vec::new();
    let (mut metric, mut slices, mut json) = (Metric::Exact, Slices::List(vec![0, -1]), false);
    let mut only = Vec::new();
    let mut it = args.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--metric" => {
                metric = match it.next().map(String::as_str) {
                    Some("exact") => Metric::Exact,
                    Some("ssim") => Metric::Ssim,
                    Some("psnr") => Metric::Psnr,
                    Some("maxabs") => Metric::MaxAbs,
                    _ => {
                        eprintln!("{USAGE}");
                        return 2;
                    }
                }
            }
            "--slices" => match it.next().map(|t| Slices::parse(t)) {
                Some(Ok(s)) => slices = s,
                _ => {
                    eprintln!("{USAGE}");
                    return 2;
                }
            },
            "--dataset" => match it.next() {
                Some(d) => only.push(d.clone()),
                None => {
                    eprintln!("{USAGE}");
                    return 2;
                }
            },
            "--json" => json = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return 0;
            }
            _ => pos.push(x.clone()),
        }
    }
    let [a, b] = pos.as_slice() else {
        eprintln!("{USAGE}");
        return 2;
    };
    let r = match metric {
        Metric::Exact => exact(a, b, json),
        m => metrics(a, b, m, &slices, &only, json),
    };
    r.unwrap_or_else(|e| {
        eprintln!("h5 compare: {e}");
        2
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_the_esrf_rule() {
        assert_eq!(window(100, 100), Some(7));
        assert_eq!(window(6, 100), Some(5));
        assert_eq!(window(3, 3), Some(3));
        assert_eq!(window(2, 10), None);
    }

    #[test]
    fn ssim_of_an_image_with_itself_is_one_and_constant_is_none() {
        let x: Vec<f64> = (0..64).map(|i| (i * 7 % 13) as f64).collect();
        assert!((ssim(&x, &x, 8, 8).unwrap() - 1.0).abs() < 1e-12);
        let c = vec![5.0; 64];
        assert_eq!(ssim(&c, &x, 8, 8), None);
        let y: Vec<f64> = x.iter().map(|v| v + 1.0).collect();
        assert!(ssim(&x, &y, 8, 8).unwrap() < 1.0);
    }

    #[test]
    fn slices_parse_and_pick() {
        assert_eq!(Slices::parse("first,last").unwrap().indices(10), vec![0, 9]);
        assert_eq!(Slices::parse("3").unwrap().indices(11), vec![0, 5, 10]);
        assert_eq!(Slices::parse("all").unwrap().indices(3), vec![0, 1, 2]);
        assert_eq!(Slices::parse("1,-2,40").unwrap().indices(5), vec![1, 3]);
        assert!(Slices::parse("x").is_err());
    }

    #[test]
    fn values_convert() {
        let dt = Datatype::Integer {
            size: 2,
            order: ByteOrder::Big,
            signed: true,
            bit_offset: 0,
            precision: 16,
        };
        assert_eq!(
            to_f64(&dt, &[0xff, 0xfe, 0x01, 0x00]).unwrap(),
            vec![-2.0, 256.0]
        );
    }
}
