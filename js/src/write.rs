//! `WasmWriter`: an HDF5 file written into memory (`FileWriter` in the
//! JavaScript layer): groups, datasets from typed-array bytes or strings,
//! attributes, then the file's bytes.

use crate::errors::{invalid, to_js};
use purehdf::low_level::messages::dataspace::Dataspace;
use purehdf::low_level::write::{AttrData, DatasetData};
use purehdf::{
    AttrValue, Blosc2Codec, Blosc2Shuffle, CharSet, DatasetId, DatasetSpec, Datatype, FileWriter,
    Filter, GroupId, StringPad,
};
use wasm_bindgen::prelude::*;

type JsResult<T> = Result<T, JsValue>;

#[derive(Clone, Copy)]
enum Made {
    Group(GroupId),
    Dataset(DatasetId),
}

/// A file being written in memory; object 0 is the root group.
#[wasm_bindgen]
pub struct WasmWriter {
    w: Option<FileWriter>,
    made: Vec<Made>,
}

/// The datatype named by `dtype`: numpy's `<f4`, `>i2`, `|u1` (sizes 1, 2,
/// 4, 8; floats 2, 4, 8) or `str` (variable-length UTF-8 strings).
fn parse_dtype(dtype: &str) -> JsResult<Datatype> {
    if dtype == "str" {
        return Ok(Datatype::VarString {
            size: 16,
            pad: StringPad::NullTerm,
            cset: CharSet::Utf8,
        });
    }
    let bad = || invalid(&format!("unknown dtype {dtype:?}"));
    let mut ch = dtype.chars();
    let (o, k) = (ch.next().ok_or_else(bad)?, ch.next().ok_or_else(bad)?);
    let n: u32 = ch.as_str().parse().map_err(|_| bad())?;
    let order = if o == '>' {
        purehdf::ByteOrder::Big
    } else {
        purehdf::ByteOrder::Little
    };
    Ok(match k {
        'i' | 'u' if matches!(n, 1 | 2 | 4 | 8) => Datatype::int(n, k == 'i').with_order(order),
        'f' if matches!(n, 2 | 4 | 8) => Datatype::float(n).with_order(order),
        _ => return Err(bad()),
    })
}

fn dims(v: &[f64]) -> JsResult<Vec<u64>> {
    v.iter()
        .map(|&x| {
            if x >= 0.0 && x.fract() == 0.0 && x <= 9.007_199_254_740_991e15 {
                Ok(x as u64)
            } else {
                Err(invalid("dimensions must be whole numbers >= 0"))
            }
        })
        .collect()
}

/// The filter named `name` with options `o` (as h5py's `compression`
/// names them, plus `shuffle`, `fletcher32`, `bitshuffle`, `blosc2`).
fn filter(name: &str, o: &[f64]) -> JsResult<Filter> {
    let opt = |i: usize, d: f64| o.get(i).copied().unwrap_or(d);
    let level = |i: usize, d: f64| -> JsResult<u32> {
        let v = opt(i, d);
        if (0.0..=22.0).contains(&v) {
            Ok(v as u32)
        } else {
            Err(invalid(&format!("{name}: bad level")))
        }
    };
    Ok(match name {
        "gzip" | "deflate" => Filter::deflate(level(0, 4.0)?).map_err(to_js)?,
        "shuffle" => Filter::shuffle(),
        "fletcher32" => Filter::fletcher32(),
        "lzf" => Filter::lzf(),
        "lz4" => Filter::lz4(),
        "zstd" => Filter::zstd(level(0, 3.0)? as i32).map_err(to_js)?,
        "bzip2" => Filter::bzip2(level(0, 9.0)?).map_err(to_js)?,
        "bitshuffle" => Filter::bitshuffle(opt(0, 0.0) != 0.0),
        "blosc2" => {
            let codec = match opt(0, 1.0) as u32 {
                0 => Blosc2Codec::BloscLz,
                1 => Blosc2Codec::Lz4,
                2 => Blosc2Codec::Lz4Hc,
                4 => Blosc2Codec::Zlib,
                5 => Blosc2Codec::Zstd,
                _ => return Err(invalid("blosc2: unknown codec")),
            };
            let shuffle = match opt(2, 1.0) as u32 {
                0 => Blosc2Shuffle::None,
                2 => Blosc2Shuffle::Bit,
                _ => Blosc2Shuffle::Byte,
            };
            Filter::blosc2(codec, level(1, 5.0)?, shuffle).map_err(to_js)?
        }
        other => return Err(invalid(&format!("unknown filter {other:?}"))),
    })
}

impl WasmWriter {
    fn writer(&mut self) -> JsResult<(&mut FileWriter, &mut Vec<Made>)> {
        match &mut self.w {
            Some(w) => Ok((w, &mut self.made)),
            None => Err(invalid("the writer is finished")),
        }
    }

    fn group(made: &[Made], id: usize) -> JsResult<GroupId> {
        match made.get(id) {
            Some(Made::Group(g)) => Ok(*g),
            _ => Err(invalid("not a group")),
        }
    }
}

#[wasm_bindgen]
impl WasmWriter {
    /// An empty file.
    #[wasm_bindgen(constructor)]
    pub fn new() -> WasmWriter {
        let w = FileWriter::in_memory();
        let root = w.root();
        WasmWriter {
            w: Some(w),
            made: vec![Made::Group(root)],
        }
    }

    /// Create group `name` in group `parent`; its object number.
    #[wasm_bindgen(js_name = createGroup)]
    pub fn create_group(&mut self, parent: usize, name: &str) -> JsResult<usize> {
        let (w, made) = self.writer()?;
        let g = w
            .create_group(Self::group(made, parent)?, name)
            .map_err(to_js)?;
        made.push(Made::Group(g));
        Ok(made.len() - 1)
    }

    /// Create dataset `name` in `parent` of `dtype` and `shape` (empty: a
    /// scalar), chunked as `chunks` (empty: contiguous) through `filters`
    /// (`[name, options...]` arrays), holding `bytes` (C order, the type's
    /// byte order) or, for `str`, `strings`; its object number.
    #[wasm_bindgen(js_name = createDataset)]
    #[allow(clippy::too_many_arguments)]
    pub fn create_dataset(
        &mut self,
        parent: usize,
        name: &str,
        dtype: &str,
        shape: Vec<f64>,
        chunks: Vec<f64>,
        filters: js_sys::Array,
        bytes: Option<Vec<u8>>,
        strings: Option<Vec<String>>,
    ) -> JsResult<usize> {
        let dt = parse_dtype(dtype)?;
        let shape = dims(&shape)?;
        let mut spec = if shape.is_empty() {
            DatasetSpec::scalar(dt)
        } else {
            DatasetSpec::new(dt, &shape)
        };
        let mut pipeline = Vec::new();
        for f in filters.iter() {
            let a: js_sys::Array = f
                .dyn_into()
                .map_err(|_| invalid("a filter is [name, ...options]"))?;
            let name = a
                .get(0)
                .as_string()
                .ok_or_else(|| invalid("a filter's name is a string"))?;
            let opts: Vec<f64> = a
                .iter()
                .skip(1)
                .map(|v| v.as_f64().unwrap_or(0.0))
                .collect();
            pipeline.push(filter(&name, &opts)?);
        }
        if !chunks.is_empty() {
            spec = spec.chunked(&dims(&chunks)?, pipeline);
        } else if !pipeline.is_empty() {
            return Err(invalid("filters need chunks"));
        }
        let data = match (bytes, strings) {
            (_, Some(s)) => DatasetData::VarStrings(s),
            (Some(b), None) => DatasetData::Raw(b),
            (None, None) => DatasetData::None,
        };
        let (w, made) = self.writer()?;
        let d = w
            .create_dataset(Self::group(made, parent)?, name, spec, data)
            .map_err(to_js)?;
        made.push(Made::Dataset(d));
        Ok(made.len() - 1)
    }

    /// Set attribute `name` of object `obj` of `dtype` and `shape` (empty:
    /// a scalar) to `bytes` or, for `str`, `strings`.
    #[wasm_bindgen(js_name = setAttr)]
    pub fn set_attr(
        &mut self,
        obj: usize,
        name: &str,
        dtype: &str,
        shape: Vec<f64>,
        bytes: Option<Vec<u8>>,
        strings: Option<Vec<String>>,
    ) -> JsResult<()> {
        let dt = parse_dtype(dtype)?;
        let shape = dims(&shape)?;
        let space = if shape.is_empty() {
            Dataspace::scalar()
        } else {
            Dataspace::simple(&shape)
        };
        let data = match (bytes, strings) {
            (_, Some(s)) => AttrData::VarStrings(s),
            (Some(b), None) => AttrData::Raw(b),
            (None, None) => return Err(invalid("attribute values missing")),
        };
        let value = AttrValue {
            dtype: dt,
            shape: space,
            data,
        };
        let (w, made) = self.writer()?;
        match made.get(obj).copied() {
            Some(Made::Group(g)) => w.set_attr(g, name, value).map_err(to_js),
            Some(Made::Dataset(d)) => w.set_attr(d, name, value).map_err(to_js),
            None => Err(invalid("no such object")),
        }
    }

    /// The file's bytes; the writer is finished.
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&mut self) -> JsResult<Vec<u8>> {
        let w = self
            .w
            .take()
            .ok_or_else(|| invalid("the writer is finished"))?;
        w.finish().map_err(to_js)
    }
}

impl Default for WasmWriter {
    fn default() -> Self {
        Self::new()
    }
}
