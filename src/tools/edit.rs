//! `h5 attr set|del`, `h5 rm`, `h5 mv`: edit a file in place through
//! [`purehdf::Editor`] (append, sync, then repoint: a killed command leaves
//! the file as it was or as edited).
//!
//! ```text
//! h5 attr set FILE PATH NAME VALUE [--dtype i8|i16|i32|i64|u8|u16|u32|u64|f32|f64|str]
//! h5 attr del FILE PATH NAME
//! h5 rm FILE PATH
//! h5 mv FILE FROM TO
//! h5 write FILE DSET [--slice S] --from X.npy   (compact, contiguous or chunked datasets)
//! h5 resize FILE DSET SHAPE                      (chunked datasets; SHAPE like 10,20)
//! ```
//! A VALUE with commas is a 1-D array. Without `--dtype` it is an `i64` if
//! every item parses as an integer, an `f64` if every item parses as a
//! number, else a UTF-8 variable-length string (what h5py writes for `str`).

use purehdf::{AttrValue, Error, File, Result};

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}

fn nums<T: std::str::FromStr>(items: &[&str]) -> Result<Vec<T>> {
    items
        .iter()
        .map(|s| {
            s.trim()
                .parse::<T>()
                .map_err(|_| bad(format!("bad number {s:?}")))
        })
        .collect()
}

fn value_of<T: purehdf::low_level::write::Element + std::str::FromStr>(
    items: &[&str],
    array: bool,
) -> Result<AttrValue> {
    let v = nums::<T>(items)?;
    match (array, v.first()) {
        (false, Some(x)) if v.len() == 1 => Ok(AttrValue::scalar(*x)),
        _ => Ok(AttrValue::array(&v)),
    }
}

/// The attribute value `text` as `dtype` (or guessed; see the module docs).
pub fn parse_value(text: &str, dtype: Option<&str>) -> Result<AttrValue> {
    let array = text.contains(',');
    let items: Vec<&str> = if array {
        text.split(',').collect()
    } else {
        vec![text]
    };
    let dtype = match dtype {
        Some(d) => d.to_string(),
        None if nums::<i64>(&items).is_ok() => "i64".into(),
        None if nums::<f64>(&items).is_ok() => "f64".into(),
        None => "str".into(),
    };
    match dtype.as_str() {
        "i8" => value_of::<i8>(&items, array),
        "i16" => value_of::<i16>(&items, array),
        "i32" => value_of::<i32>(&items, array),
        "i64" => value_of::<i64>(&items, array),
        "u8" => value_of::<u8>(&items, array),
        "u16" => value_of::<u16>(&items, array),
        "u32" => value_of::<u32>(&items, array),
        "u64" => value_of::<u64>(&items, array),
        "f32" => value_of::<f32>(&items, array),
        "f64" => value_of::<f64>(&items, array),
        "str" => Ok(AttrValue::string(text)),
        d => Err(bad(format!("unknown --dtype {d:?}"))),
    }
}

fn edit(file: &str, f: impl FnOnce(&mut purehdf::Editor) -> Result<()>) -> u8 {
    let mut ed = match File::open_rw(file) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("h5: cannot open {file} for writing: {e}");
            return 2;
        }
    };
    match f(&mut ed) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("h5: {file}: {e}");
            1
        }
    }
}

/// `h5 attr set|del ...` with `argv` after `attr`; the exit code.
pub fn attr(argv: &[String]) -> u8 {
    let mut pos = Vec::new();
    let mut dtype = None;
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dtype" => dtype = it.next().cloned(),
            _ => pos.push(a.as_str()),
        }
    }
    match pos.as_slice() {
        ["set", file, path, name, value] => {
            let v = match parse_value(value, dtype.as_deref()) {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("h5 attr set: {e}");
                    return 2;
                }
            };
            edit(file, |ed| ed.set_attr(path, name, &v))
        }
        ["del", file, path, name] => edit(file, |ed| ed.delete_attr(path, name)),
        _ => {
            eprintln!(
                "usage: h5 attr set FILE PATH NAME VALUE [--dtype T] | h5 attr del FILE PATH NAME"
            );
            2
        }
    }
}

/// `h5 rm FILE PATH`; the exit code.
pub fn rm(argv: &[String]) -> u8 {
    match argv {
        [file, path] => edit(file, |ed| ed.delete(path)),
        _ => {
            eprintln!("usage: h5 rm FILE PATH");
            2
        }
    }
}

/// `h5 mv FILE FROM TO`; the exit code.
pub fn mv(argv: &[String]) -> u8 {
    match argv {
        [file, from, to] => edit(file, |ed| ed.rename(from, to)),
        _ => {
            eprintln!("usage: h5 mv FILE FROM TO");
            2
        }
    }
}

/// Write the `.npy` array `from` into the `slice` (the syntax of `h5 cat`)
/// of dataset `dset` of `file`: same element type, as many elements as the
/// slice selects.
pub fn write_npy(file: &str, dset: &str, slice: Option<&str>, from: &str) -> Result<()> {
    let (hdr, mut data) = purehdf_medh5::npy::read_file(std::path::Path::new(from))
        .map_err(|e| bad(format!("{from}: {e}")))?;
    let mut ed = File::open_rw(file)?;
    let purehdf::Object::Dataset(ds) = ed.file().object(dset)? else {
        return Err(bad(format!("{dset} is not a dataset")));
    };
    let sl = super::cat::parse_slice(slice, ds.shape())?;
    let (descr, swap) = super::cat::npy_target(ds.dtype())?;
    if hdr.descr != descr || hdr.fortran_order {
        return Err(bad(format!(
            "{from} holds {} (fortran order: {}); {dset} needs C-order {descr}",
            hdr.descr, hdr.fortran_order
        )));
    }
    let want: u64 = sl.count.iter().product();
    if hdr.shape.iter().product::<u64>() != want {
        return Err(bad(format!(
            "{from} has shape {:?}; the slice selects {want} elements",
            hdr.shape
        )));
    }
    super::cat::swap_bytes(&mut data, swap);
    ed.write_slab(dset, &sl.start, &sl.count, &data)
}

/// `h5 write FILE DSET [--slice S] --from X.npy`; the exit code.
pub fn write(argv: &[String]) -> u8 {
    let (mut pos, mut slice, mut from) = (Vec::new(), None, None);
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--slice" => slice = it.next().cloned(),
            "--from" => from = it.next().cloned(),
            _ => pos.push(a.as_str()),
        }
    }
    let (Some(from), [file, dset]) = (from, pos.as_slice()) else {
        eprintln!("usage: h5 write FILE DSET [--slice S] --from X.npy");
        return 2;
    };
    match write_npy(file, dset, slice.as_deref(), &from) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("h5 write: {file}: {e}");
            1
        }
    }
}

/// The shape `text` (`10,20`, or `10x20`).
pub fn parse_shape(text: &str) -> Result<Vec<u64>> {
    let items: Vec<&str> = text
        .split([',', 'x'])
        .filter(|s| !s.trim().is_empty())
        .collect();
    if items.is_empty() {
        return Err(bad(format!("bad shape {text:?}")));
    }
    nums::<u64>(&items)
}

/// `h5 resize FILE DSET SHAPE`; the exit code.
pub fn resize(argv: &[String]) -> u8 {
    let [file, dset, shape] = argv else {
        eprintln!("usage: h5 resize FILE DSET SHAPE (SHAPE like 10,20)");
        return 2;
    };
    let shape = match parse_shape(shape) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("h5 resize: {e}");
            return 2;
        }
    };
    edit(file, |ed| ed.resize(dset, &shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parsed() {
        assert_eq!(parse_shape("10,20").unwrap(), vec![10, 20]);
        assert_eq!(parse_shape("0x3").unwrap(), vec![0, 3]);
        assert_eq!(parse_shape("7").unwrap(), vec![7]);
        assert!(parse_shape("").is_err());
        assert!(parse_shape("a,1").is_err());
    }

    #[test]
    fn values_guessed_and_typed() {
        let v = parse_value("3", None).unwrap();
        assert_eq!(v.dtype.size(), 8);
        let v = parse_value("1.5,2", None).unwrap();
        assert_eq!(v.shape.dims, vec![2]);
        let v = parse_value("7", Some("u8")).unwrap();
        assert_eq!(v.dtype.size(), 1);
        assert!(parse_value("x", Some("i32")).is_err());
        assert!(parse_value("x", Some("q")).is_err());
    }
}
