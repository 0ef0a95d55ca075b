//! `h5 cat`: read one hyperslab of a dataset (HDF5 File Format Specification
//! IV.A.2.a dataspaces; selections as in `H5Sselect_hyperslab` with unit stride)
//! and write it as a little-endian `.npy` array.
//!
//! The slice syntax follows numpy: per dimension `a:b`, `a:`, `:b`, `:` or a single
//! index `i` (which drops that dimension from the output shape); omitted trailing
//! dimensions are taken whole. Negative indices count from the end.

use purehdf::low_level::dataset::Dataset;
use purehdf::low_level::datatype::{ByteOrder, Datatype};
use purehdf::low_level::file::Object;
use purehdf::low_level::limits;
use purehdf::low_level::selection::Selection;
use purehdf::{Error, Result};

/// A resolved slice: what to read and the shape of the result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    /// First element along each dimension.
    pub start: Vec<u64>,
    /// Elements along each dimension.
    pub count: Vec<u64>,
    /// Output shape (dimensions addressed by a single index are dropped).
    pub out_shape: Vec<u64>,
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}

/// One bound of `a:b`: empty = `default`, negative counts from `dim`, clamped to `0..=dim`.
fn bound(text: &str, dim: u64, default: u64) -> Result<u64> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(default);
    }
    let v: i64 = t
        .parse()
        .map_err(|_| bad(format!("bad slice bound {t:?}")))?;
    let d = i64::try_from(dim).map_err(|_| bad("dimension too large"))?;
    let v = if v < 0 { v.saturating_add(d) } else { v };
    Ok(v.clamp(0, d) as u64)
}

/// Parse `spec` (`None` = everything) against a dataset of `shape`.
pub fn parse_slice(spec: Option<&str>, shape: &[u64]) -> Result<Slice> {
    let parts: Vec<&str> = match spec.map(str::trim) {
        None | Some("") => Vec::new(),
        Some(s) => s.split(',').collect(),
    };
    if parts.len() > shape.len() {
        return Err(bad(format!(
            "slice has {} dimensions, dataset has {}",
            parts.len(),
            shape.len()
        )));
    }
    let mut out = Slice {
        start: Vec::with_capacity(shape.len()),
        count: Vec::with_capacity(shape.len()),
        out_shape: Vec::with_capacity(shape.len()),
    };
    for (i, &dim) in shape.iter().enumerate() {
        match parts.get(i) {
            None => {
                out.start.push(0);
                out.count.push(dim);
                out.out_shape.push(dim);
            }
            Some(p) => match p.split_once(':') {
                Some((a, b)) => {
                    if b.contains(':') {
                        return Err(bad(format!("steps are not supported: {p:?}")));
                    }
                    let a = bound(a, dim, 0)?;
                    let b = bound(b, dim, dim)?;
                    let n = b.saturating_sub(a);
                    out.start.push(a.min(dim));
                    out.count.push(n);
                    out.out_shape.push(n);
                }
                None => {
                    let t = p.trim();
                    let v: i64 = t
                        .parse()
                        .map_err(|_| bad(format!("bad slice index {t:?}")))?;
                    let d = i64::try_from(dim).map_err(|_| bad("dimension too large"))?;
                    let idx = if v < 0 { v.saturating_add(d) } else { v };
                    if idx < 0 || idx >= d {
                        return Err(bad(format!(
                            "index {v} out of range for dimension {i} of size {dim}"
                        )));
                    }
                    out.start.push(idx as u64);
                    out.count.push(1);
                }
            },
        }
    }
    Ok(out)
}

/// How to turn stored elements of `dt` into a little-endian numpy array:
/// the `.npy` descr and the byte-swap unit (0 = no swap).
pub fn npy_target(dt: &Datatype) -> Result<(String, usize)> {
    let unsupported = || {
        Error::InvalidArgument(format!(
            "h5 cat: datatype {dt:?} has no plain numpy equivalent"
        ))
    };
    let order_swap = |order: &ByteOrder, unit: u64| -> Result<usize> {
        match order {
            ByteOrder::Little => Ok(0),
            ByteOrder::Big => Ok(unit as usize),
            _ => Err(unsupported()),
        }
    };
    let descr = dt.numpy_str().ok_or_else(unsupported)?;
    let le = |d: String| d.replacen('>', "<", 1);
    match dt {
        Datatype::Integer { size, order, .. } | Datatype::Bitfield { size, order, .. } => {
            Ok((le(descr), order_swap(order, u64::from(*size))?))
        }
        Datatype::Float { size, order, .. } => {
            if purehdf_medh5::npy::simple_item_size(&le(descr.clone())) != Some(u64::from(*size)) {
                return Err(unsupported());
            }
            Ok((le(descr), order_swap(order, u64::from(*size))?))
        }
        Datatype::Complex { base, .. } => {
            let (_, swap) = npy_target(base)?;
            Ok((le(descr), swap))
        }
        Datatype::Enum { base, .. } => {
            let (_, swap) = npy_target(base)?;
            Ok((le(descr), swap))
        }
        Datatype::String { .. } => Ok((descr, 0)),
        _ => Err(unsupported()),
    }
}

/// Reverse each `unit`-byte group of `data` in place (no-op for units below 2).
pub fn swap_bytes(data: &mut [u8], unit: usize) {
    if unit < 2 {
        return;
    }
    for c in data.chunks_exact_mut(unit) {
        c.reverse();
    }
}

/// Read `spec` of `ds` as a little-endian array: (descr, output shape, bytes).
pub fn read_slice(ds: &Dataset, spec: Option<&str>) -> Result<(String, Vec<u64>, Vec<u8>)> {
    let (descr, swap) = npy_target(ds.dtype())?;
    let sl = parse_slice(spec, ds.shape())?;
    let esize = ds.dtype().size();
    let n = sl
        .count
        .iter()
        .try_fold(esize, |a, &c| a.checked_mul(c))
        .ok_or_else(|| bad("slice size overflows"))?;
    let n = purehdf::low_level::cursor::bounded(
        n,
        limits::MAX_DECODED,
        "dataset",
        ds.address(),
        "slice size",
    )?;
    let mut out = vec![0u8; n];
    let sel = if ds.shape().is_empty() {
        Selection::All
    } else {
        Selection::Hyperslab {
            start: sl.start,
            count: sl.count,
        }
    };
    ds.read_raw(&sel, &mut out)?;
    swap_bytes(&mut out, swap);
    Ok((descr, sl.out_shape, out))
}

/// `h5 cat FILE DSET [--slice S] --out FILE.npy`. Returns the exit code.
pub fn run(args: &[String]) -> u8 {
    const USAGE: &str = "usage: h5 cat FILE DSET [--slice z0:z1,y0:y1,...] --out FILE.npy";
    let mut pos = Vec::new();
    let mut slice = None;
    let mut out = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--slice" => slice = it.next().cloned(),
            "--out" | "-o" => out = it.next().cloned(),
            _ => pos.push(a.clone()),
        }
    }
    let (Some(out), [file, dset]) = (out, pos.as_slice()) else {
        eprintln!("{USAGE}");
        return 2;
    };
    match cat(file, dset, slice.as_deref(), &out) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("h5 cat: {e}");
            1
        }
    }
}

/// Read the slice of `dset` in `file` and write it to the `.npy` file `out`.
pub fn cat(file: &str, dset: &str, slice: Option<&str>, out: &str) -> Result<()> {
    let f = crate::open::open(file)?;
    let ds = match f.object(dset)? {
        Object::Dataset(d) => d,
        o => return Err(bad(format!("{dset} is a {}, not a dataset", o.kind_name()))),
    };
    let (descr, shape, data) = read_slice(&ds, slice)?;
    let mut buf = Vec::with_capacity(data.len() + 128);
    purehdf_medh5::npy::write(&mut buf, &descr, &shape, &data).map_err(|e| Error::io(out, e))?;
    crate::tools::atomic_out::write_atomic(std::path::Path::new(out), &buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_follow_numpy() {
        let s = parse_slice(Some("1:3, :, 2"), &[5, 4, 6, 7]).unwrap();
        assert_eq!(s.start, vec![1, 0, 2, 0]);
        assert_eq!(s.count, vec![2, 4, 1, 7]);
        assert_eq!(s.out_shape, vec![2, 4, 7]);
        let s = parse_slice(Some("-2:,:10"), &[5, 4]).unwrap();
        assert_eq!((s.start, s.count), (vec![3, 0], vec![2, 4]));
        let s = parse_slice(None, &[3]).unwrap();
        assert_eq!((s.start, s.count, s.out_shape), (vec![0], vec![3], vec![3]));
        let s = parse_slice(Some("4:2"), &[5]).unwrap();
        assert_eq!(s.count, vec![0]);
    }

    #[test]
    fn bad_slices_are_errors() {
        assert!(parse_slice(Some("5"), &[5]).is_err());
        assert!(parse_slice(Some("0,0"), &[5]).is_err());
        assert!(parse_slice(Some("x:"), &[5]).is_err());
        assert!(parse_slice(Some("::2"), &[5]).is_err());
        assert_eq!(parse_slice(Some("-1"), &[5]).unwrap().start, vec![4]);
    }

    #[test]
    fn big_endian_is_swapped() {
        let dt = Datatype::Integer {
            size: 4,
            order: ByteOrder::Big,
            signed: true,
            bit_offset: 0,
            precision: 32,
        };
        assert_eq!(npy_target(&dt).unwrap(), ("<i4".to_string(), 4));
        let mut b = vec![0, 0, 0, 1, 0, 0, 1, 0];
        swap_bytes(&mut b, 4);
        assert_eq!(b, vec![1, 0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(npy_target(&Datatype::float(8)).unwrap(), ("<f8".into(), 0));
        let vs = purehdf::low_level::write::vlen_string_type(
            purehdf::low_level::datatype::CharSet::Utf8,
        );
        assert!(npy_target(&vs).is_err());
    }
}
