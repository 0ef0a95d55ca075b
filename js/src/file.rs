//! `WasmFile`: an open HDF5 file as the JavaScript layer (`index.js`) sees
//! it: objects named by path, their links, attributes, dataset metadata and
//! hyperslab reads, each call one attempt (see [`crate::host`]).

use crate::errors::{invalid, js_error, to_js};
use crate::host::{options, Host};
use crate::values::{dtype_str, metadata, to_values};
use purehdf::convert::Elements;
use purehdf::low_level::messages::dataspace::SpaceKind;
use purehdf::{Attribute, Dataset, File, Hyperslab, Link, Object, RangeSource, Selection};
use std::sync::Arc;
use wasm_bindgen::prelude::*;

type JsResult<T> = Result<T, JsValue>;

fn set(o: &js_sys::Object, k: &str, v: impl Into<JsValue>) {
    let _ = js_sys::Reflect::set(o, &k.into(), &v.into());
}

fn nums(v: &[u64]) -> js_sys::Array {
    v.iter().map(|&x| JsValue::from(x as f64)).collect()
}

/// The stored bytes of the elements `h` selects (`bytes` of them): a box
/// (every step 1, or a scalar's whole) is read by `Dataset::read_raw_vec`,
/// which decodes chunked data into memory that is never zeroed first (the
/// chunk reader reports every byte written); a stepped selection into a
/// zeroed buffer.
fn read_selection(ds: &Dataset, h: Hyperslab, bytes: usize) -> JsResult<Vec<u8>> {
    let raw = if h.start.is_empty() || h.is_unit_stride() {
        let sel = if h.start.is_empty() {
            Selection::All
        } else {
            Selection::Hyperslab {
                start: h.start,
                count: h.count,
            }
        };
        ds.read_raw_vec(&sel).map_err(to_js)?
    } else {
        let mut raw = vec![0u8; bytes];
        ds.read_hyperslab_raw(&h, &mut raw).map_err(to_js)?;
        raw
    };
    if raw.len() != bytes {
        return Err(js_error("Corrupt", "the read returned a different size"));
    }
    Ok(raw)
}

/// An open HDF5 file (read-only).
#[wasm_bindgen]
pub struct WasmFile {
    pub(crate) host: Host,
    pub(crate) file: Option<File>,
    name: String,
}

impl WasmFile {
    pub(crate) fn file(&self) -> JsResult<&File> {
        self.file
            .as_ref()
            .ok_or_else(|| js_error("InvalidArgument", "the file is not open yet"))
    }

    /// `op` on the open file, as one attempt.
    pub(crate) fn run<T>(&self, op: impl FnOnce(&File) -> JsResult<T>) -> JsResult<T> {
        let f = self.file()?;
        self.host.run(|| op(f))
    }

    fn dataset(f: &File, path: &str) -> JsResult<Dataset> {
        match f.object(path).map_err(to_js)? {
            Object::Dataset(d) => Ok(*d),
            _ => Err(js_error(
                "InvalidArgument",
                &format!("{path} is not a dataset"),
            )),
        }
    }
}

/// The attribute `a` as `{name, shape, dtype, metadata, value}`; a scalar's
/// value is its one element, a null dataspace's `null`.
fn attr_object(f: &File, a: &Attribute) -> JsResult<JsValue> {
    let o = js_sys::Object::new();
    set(&o, "name", a.name.as_str());
    set(&o, "dtype", dtype_str(&a.dtype));
    set(&o, "metadata", metadata(&a.dtype));
    let null = matches!(a.space_kind(), SpaceKind::Null);
    if null {
        set(&o, "shape", JsValue::NULL);
        set(&o, "value", JsValue::NULL);
        return Ok(o.into());
    }
    set(&o, "shape", nums(a.shape()));
    let n = a.shape().iter().try_fold(1u64, |x, &d| x.checked_mul(d));
    let size = a.dtype.size() as usize;
    let n = n
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| n.checked_mul(size).is_some_and(|b| b <= a.data.len()))
        .ok_or_else(|| {
            js_error(
                "Corrupt",
                &format!("attribute {}: data shorter than its shape", a.name),
            )
        })?;
    let v = to_values(
        f,
        &a.name,
        &a.dtype,
        Elements::packed(&a.data, size.max(1)),
        n,
    )?;
    let v = if a.shape().is_empty() {
        js_sys::Reflect::get_u32(&v, 0)?
    } else {
        v
    };
    set(&o, "value", v);
    Ok(o.into())
}

fn filter_name(id: u32) -> &'static str {
    match id {
        1 => "deflate",
        2 => "shuffle",
        3 => "fletcher32",
        4 => "szip",
        5 => "nbit",
        6 => "scaleoffset",
        307 => "bzip2",
        32000 => "lzf",
        32001 => "blosc",
        32004 => "lz4",
        32008 => "bitshuffle",
        32015 => "zstd",
        32026 => "blosc2",
        _ => "unknown",
    }
}

#[wasm_bindgen]
impl WasmFile {
    /// Open the file held in `bytes`.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: Vec<u8>) -> JsResult<WasmFile> {
        let file = File::from_bytes(bytes).map_err(to_js)?;
        Ok(WasmFile {
            host: Host { lazy: None },
            file: Some(file),
            name: "memory".into(),
        })
    }

    /// A file of `len` bytes read lazily from `name` (a URL, a blob): call
    /// `open` until it stops failing with `NeedBytes`, supplying the ranges
    /// each failure names.
    pub fn lazy(len: f64, name: String) -> JsResult<WasmFile> {
        if !(0.0..=9.007_199_254_740_991e15).contains(&len) {
            return Err(invalid("bad length"));
        }
        let src =
            RangeSource::without_fetcher(len as u64, name.clone(), options()).map_err(to_js)?;
        Ok(WasmFile {
            host: Host {
                lazy: Some(Arc::new(src)),
            },
            file: None,
            name,
        })
    }

    /// One attempt at opening a lazy file (nothing to do for bytes).
    pub fn open(&mut self) -> JsResult<()> {
        if self.file.is_some() {
            return Ok(());
        }
        let Some(src) = self.host.lazy.clone() else {
            return Err(invalid("no source"));
        };
        let f = self
            .host
            .run(|| File::from_source(src, None).map_err(to_js))?;
        self.file = Some(f);
        Ok(())
    }

    /// Hand `bytes` (the bytes at `offset`) to a lazy source.
    pub fn supply(&self, offset: f64, bytes: Vec<u8>) -> JsResult<()> {
        self.host.supply(offset, bytes)
    }

    /// What names the file in errors.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// The kind of the object at `path`: `group`, `dataset` or `datatype`.
    pub fn kind(&self, path: &str) -> JsResult<String> {
        self.run(|f| {
            Ok(match f.object(path).map_err(to_js)? {
                Object::Group(_) => "group",
                Object::Dataset(_) => "dataset",
                Object::NamedDatatype(_) => "datatype",
            }
            .into())
        })
    }

    /// The links of the group at `path`: `{name, type, target, file}` with
    /// `type` `hard` (target: the header address), `soft` (the path),
    /// `external` (file and path) or `user`.
    pub fn links(&self, path: &str) -> JsResult<js_sys::Array> {
        self.run(|f| {
            let Object::Group(g) = f.object(path).map_err(to_js)? else {
                return Err(invalid(&format!("{path} is not a group")));
            };
            let links = g
                .links_by_creation_order()
                .or_else(|_| g.links())
                .map_err(to_js)?;
            let out = js_sys::Array::new();
            for (name, link) in &links {
                let o = js_sys::Object::new();
                set(&o, "name", name.as_str());
                match link {
                    Link::Hard(a) => {
                        set(&o, "type", "hard");
                        set(&o, "target", *a as f64);
                    }
                    Link::Soft(p) => {
                        set(&o, "type", "soft");
                        set(&o, "target", p.as_str());
                    }
                    Link::External { file, path } => {
                        set(&o, "type", "external");
                        set(&o, "file", file.as_str());
                        set(&o, "target", path.as_str());
                    }
                    Link::UserDefined { kind, .. } => {
                        set(&o, "type", "user");
                        set(&o, "target", *kind as f64);
                    }
                }
                out.push(&o);
            }
            Ok(out)
        })
    }

    /// The attributes of the object at `path`, as an array of
    /// `{name, shape, dtype, metadata, value}`.
    pub fn attrs(&self, path: &str) -> JsResult<js_sys::Array> {
        self.run(|f| {
            let o = f.object(path).map_err(to_js)?;
            let out = js_sys::Array::new();
            for a in o.attributes().map_err(to_js)? {
                out.push(&attr_object(f, &a)?);
            }
            Ok(out)
        })
    }

    /// A dataset's `{shape, maxshape, dtype, metadata, chunks, filters,
    /// layout}` (`shape` null for a null dataspace).
    pub fn info(&self, path: &str) -> JsResult<JsValue> {
        self.run(|f| {
            let ds = Self::dataset(f, path)?;
            let o = js_sys::Object::new();
            let null = matches!(ds.space_kind(), SpaceKind::Null);
            set(
                &o,
                "shape",
                if null {
                    JsValue::NULL
                } else {
                    nums(ds.shape()).into()
                },
            );
            let max: js_sys::Array = ds
                .maxshape()
                .iter()
                .map(|m| m.map_or(JsValue::NULL, |v| JsValue::from(v as f64)))
                .collect();
            set(&o, "maxshape", max);
            set(&o, "dtype", dtype_str(ds.dtype()));
            set(&o, "metadata", metadata(ds.dtype()));
            set(
                &o,
                "chunks",
                ds.chunk_dims().map_or(JsValue::NULL, |c| nums(c).into()),
            );
            set(&o, "layout", ds.layout_kind());
            let filters = js_sys::Array::new();
            for fl in ds.filters() {
                let fo = js_sys::Object::new();
                set(&fo, "id", fl.id);
                set(&fo, "name", filter_name(fl.id));
                let cd: js_sys::Array = fl.cd_values.iter().map(|&v| JsValue::from(v)).collect();
                set(&fo, "cd_values", cd);
                filters.push(&fo);
            }
            set(&o, "filters", filters);
            Ok(o.into())
        })
    }

    /// Read the hyperslab `start + k*step, k < count` of the dataset at
    /// `path` (empty arrays for a scalar): a typed array or an array.
    pub fn read(
        &self,
        path: &str,
        start: Vec<f64>,
        count: Vec<f64>,
        step: Vec<f64>,
    ) -> JsResult<JsValue> {
        self.run(|f| {
            let ds = Self::dataset(f, path)?;
            let rank = ds.shape().len();
            if start.len() != rank || count.len() != rank || step.len() != rank {
                return Err(invalid("selection rank differs from the dataset's"));
            }
            let u = |v: &[f64]| -> JsResult<Vec<u64>> {
                v.iter()
                    .map(|&x| {
                        if x >= 0.0 && x.fract() == 0.0 && x <= 9.007_199_254_740_991e15 {
                            Ok(x as u64)
                        } else {
                            Err(invalid("selection bounds must be whole numbers >= 0"))
                        }
                    })
                    .collect()
            };
            let (start, count, step) = (u(&start)?, u(&count)?, u(&step)?);
            if step.contains(&0) {
                return Err(invalid("step must be at least 1"));
            }
            for d in 0..rank {
                let last = if count[d] == 0 {
                    Some(start[d])
                } else {
                    (count[d] - 1)
                        .checked_mul(step[d])
                        .and_then(|x| x.checked_add(start[d]))
                        .and_then(|x| x.checked_add(1))
                };
                if last.is_none_or(|l| l > ds.shape()[d]) {
                    return Err(invalid(&format!("selection out of range along axis {d}")));
                }
            }
            let h = Hyperslab {
                indexed: vec![false; rank],
                start,
                count,
                step,
            };
            let dt = ds.dtype();
            let n = h
                .num_elements()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| invalid("selection too large"))?;
            let bytes = n
                .checked_mul(dt.size() as usize)
                .ok_or_else(|| invalid("selection too large"))?;
            purehdf::low_level::limits::check_budget(
                ds.path(),
                "selection",
                bytes as u64,
                f.source().len(),
            )
            .map_err(to_js)?;
            let raw = read_selection(&ds, h, bytes)?;
            to_values(
                f,
                ds.path(),
                dt,
                Elements::packed(&raw, (dt.size() as usize).max(1)),
                n,
            )
        })
    }

    /// The file's length in bytes.
    #[wasm_bindgen(js_name = byteLength)]
    pub fn byte_length(&self) -> JsResult<f64> {
        Ok(self.file()?.source().len() as f64)
    }
}
