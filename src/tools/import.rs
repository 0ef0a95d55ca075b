//! `h5 import NPY DST DSET`: write one `.npy` array into a new HDF5 file as a
//! chunked dataset with a chosen filter pipeline (HDF5 File Format Specification
//! IV.A.2.i layout v4, IV.A.2.l filter pipeline), through the writer. Small on
//! purpose: it exists to time the write path against h5py + hdf5plugin.

use std::time::Instant;

use purehdf::low_level::copy::{guess_chunk, parse_filter, FilterChoice};
use purehdf::low_level::datatype::Datatype;
use purehdf::low_level::write::{DatasetSpec, FileWriter};
use purehdf::{Error, Result};

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}

/// The HDF5 datatype of a little-endian numeric numpy `descr`.
pub fn dtype_of(descr: &str) -> Result<Datatype> {
    let (kind, size) = match descr.as_bytes() {
        [b'<' | b'|' | b'=', k, rest @ ..] => (
            *k,
            std::str::from_utf8(rest)
                .ok()
                .and_then(|s| s.parse::<u32>().ok())
                .ok_or_else(|| bad(format!("unsupported dtype {descr}")))?,
        ),
        _ => {
            return Err(bad(format!(
                "unsupported dtype {descr} (not little-endian)"
            )))
        }
    };
    match (kind, size) {
        (b'i', 1 | 2 | 4 | 8) => Ok(Datatype::int(size, true)),
        (b'u', 1 | 2 | 4 | 8) => Ok(Datatype::int(size, false)),
        (b'f', 2 | 4 | 8) => Ok(Datatype::float(size)),
        _ => Err(bad(format!("unsupported dtype {descr}"))),
    }
}

/// Parse `a,b,c` chunk dimensions.
fn parse_chunks(text: &str) -> Result<Vec<u64>> {
    text.split(',')
        .map(|t| match t.trim().parse::<u64>() {
            Ok(v) if v > 0 => Ok(v),
            _ => Err(bad(format!("bad chunk dimension {t:?}"))),
        })
        .collect()
}

/// Write `data` (C order, `descr`, `shape`) as dataset `dset` of a new file `dst`.
pub fn import(
    descr: &str,
    shape: &[u64],
    data: Vec<u8>,
    dst: &str,
    dset: &str,
    chunks: Option<Vec<u64>>,
    filter: &FilterChoice,
) -> Result<()> {
    let dtype = dtype_of(descr)?;
    let chunks = chunks.unwrap_or_else(|| guess_chunk(shape, dtype.size()));
    if chunks.len() != shape.len() {
        return Err(bad("chunk rank differs from the array's"));
    }
    let pipeline = match filter {
        FilterChoice::Pipeline(p) => p.clone(),
        _ => Vec::new(),
    };
    let mut w = FileWriter::create(dst)?;
    let mut parent = w.root();
    let parts: Vec<&str> = dset.split('/').filter(|p| !p.is_empty()).collect();
    let (name, groups) = parts
        .split_last()
        .ok_or_else(|| bad("empty dataset name"))?;
    for g in groups {
        parent = w.create_group(parent, g)?;
    }
    let spec = DatasetSpec::new(dtype, shape).chunked_stored(&chunks, pipeline);
    w.create_dataset(parent, name, spec, data)?;
    w.commit()
}

/// `h5 import NPY DST DSET [--chunks a,b,c] [--filter F] [--threads N]`.
/// Prints the write time (file creation to commit, without reading the `.npy`).
pub fn run(args: &[String]) -> u8 {
    const USAGE: &str = "usage: h5 import NPY DST DSET [--chunks a,b,c] \
[--filter none|blosc2:lz4:1:shuffle|zstd:3|...] [--threads N]";
    let mut pos = Vec::new();
    let mut chunks = None;
    let mut filter = FilterChoice::None;
    let mut threads = 0usize;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let res = match a.as_str() {
            "--chunks" => it.next().map(|t| parse_chunks(t).map(|c| chunks = Some(c))),
            "--filter" => it.next().map(|t| parse_filter(t).map(|f| filter = f)),
            "--threads" => it.next().map(|t| match t.parse::<usize>() {
                Ok(n) if n >= 1 => {
                    threads = n;
                    Ok(())
                }
                _ => Err(bad("bad thread count")),
            }),
            _ => {
                pos.push(a.clone());
                Some(Ok(()))
            }
        };
        match res {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                eprintln!("h5 import: {e}");
                return 2;
            }
            None => {
                eprintln!("{USAGE}");
                return 2;
            }
        }
    }
    let [npy, dst, dset] = pos.as_slice() else {
        eprintln!("{USAGE}");
        return 2;
    };
    let (h, data) = match purehdf_medh5::npy::read_file(std::path::Path::new(npy)) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("h5 import: {npy}: {e}");
            return 2;
        }
    };
    let start = Instant::now();
    let job = || import(&h.descr, &h.shape, data, dst, dset, chunks, &filter);
    let res = if threads > 0 {
        purehdf::set_threads(threads).and_then(|()| job())
    } else {
        job()
    };
    match res {
        Ok(()) => {
            println!("write_seconds {:.6}", start.elapsed().as_secs_f64());
            0
        }
        Err(e) => {
            eprintln!("h5 import: {e}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use purehdf::low_level::file::{File, Object};

    #[test]
    fn dtypes_and_chunks_parse() {
        assert_eq!(dtype_of("<i2").unwrap(), Datatype::int(2, true));
        assert_eq!(dtype_of("|u1").unwrap(), Datatype::int(1, false));
        assert_eq!(dtype_of("<f8").unwrap(), Datatype::float(8));
        assert!(dtype_of(">i2").is_err());
        assert!(dtype_of("<c16").is_err());
        assert_eq!(parse_chunks("4, 8,16").unwrap(), vec![4, 8, 16]);
        assert!(parse_chunks("4,0").is_err());
    }

    #[test]
    fn imported_dataset_reads_back() {
        let dir = std::env::temp_dir().join(format!("purehdf-import-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dst = dir.join("x.h5");
        let vals: Vec<u8> = (0..6 * 10i16).flat_map(|v| (v * 7).to_le_bytes()).collect();
        let f = parse_filter("blosc2:zstd:3:shuffle").unwrap();
        import(
            "<i2",
            &[6, 10],
            vals.clone(),
            dst.to_str().unwrap(),
            "/g/img",
            Some(vec![4, 5]),
            &f,
        )
        .unwrap();
        let file = File::open(&dst).unwrap();
        let Object::Dataset(d) = file.object("/g/img").unwrap() else {
            panic!("not a dataset")
        };
        assert_eq!(d.chunk_dims().map(|c| c[..2].to_vec()), Some(vec![4, 5]));
        assert_eq!(d.filters()[0].id, purehdf_filters::ids::BLOSC2);
        assert_eq!(d.read_all_raw().unwrap(), vals);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
