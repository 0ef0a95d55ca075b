//! Stored elements to JavaScript values: numbers as typed arrays
//! (`BigInt64Array`/`BigUint64Array` for 64-bit integers, `Float32Array`
//! for half floats), strings as arrays of strings, compounds as arrays of
//! objects, variable-length sequences as arrays of typed arrays, object
//! references as header addresses; and datatypes as h5wasm-like
//! descriptions (`dtype` string, `metadata` object).

use crate::errors::to_js;
use purehdf::convert::{strip_padding, Context, Elements, H5Read};
use purehdf::{ByteOrder, CharSet, Datatype, File, ReferenceKind};
use wasm_bindgen::{JsCast, JsValue};

type JsResult<T> = Result<T, JsValue>;

fn set(o: &js_sys::Object, k: &str, v: impl Into<JsValue>) {
    let _ = js_sys::Reflect::set(o, &k.into(), &v.into());
}

/// The numeric class a typed array of `dt` uses, `None` for other types.
fn numeric(dt: &Datatype) -> Option<(char, u32)> {
    match dt {
        Datatype::Integer { size, signed, .. } => {
            let s = match size {
                1 => 1,
                2 => 2,
                3 | 4 => 4,
                5..=8 => 8,
                _ => return None,
            };
            Some((if *signed { 'i' } else { 'u' }, s))
        }
        Datatype::Bitfield { size, .. } if *size <= 8 => Some(('u', size.next_power_of_two())),
        Datatype::Float { size, .. } => match size {
            2 | 4 => Some(('f', 4)),
            8 => Some(('f', 8)),
            _ => None,
        },
        Datatype::Enum { base, .. } => numeric(base),
        _ => None,
    }
}

fn conv<T: H5Read>(
    ctx: &Context<'_>,
    dt: &Datatype,
    src: Elements<'_>,
    n: usize,
) -> JsResult<Vec<T>> {
    let mut out = vec![T::default(); n];
    T::convert(ctx, dt, src, &mut out).map_err(to_js)?;
    Ok(out)
}

/// The bytes of `n` elements of `dt` at `src` when reading them as `T` is
/// a plain copy (packed, stored in `T`'s little-endian layout): the typed
/// array is then made from them in one copy, with no conversion pass.
fn plain<'a, T: H5Read>(dt: &Datatype, src: &Elements<'a>, n: usize) -> Option<&'a [u8]> {
    let size = std::mem::size_of::<T>();
    let mut one = [T::default()];
    T::as_stored_bytes(dt, &mut one)?;
    if src.offset != 0 || src.stride != size || u32::try_from(n).is_err() {
        return None;
    }
    src.bytes.get(..n.checked_mul(size)?)
}

/// `n` elements of numeric `dt` at `src` as a typed array.
fn typed(
    ctx: &Context<'_>,
    dt: &Datatype,
    src: Elements<'_>,
    n: usize,
) -> JsResult<Option<JsValue>> {
    let Some((k, s)) = numeric(dt) else {
        return Ok(None);
    };
    macro_rules! plain {
        ($t:ty, $arr:ty) => {
            if let Some(b) = plain::<$t>(dt, &src, n) {
                let u = js_sys::Uint8Array::from(b);
                return Ok(Some(
                    <$arr>::new_with_byte_offset_and_length(&u.buffer(), 0, n as u32).into(),
                ));
            }
        };
    }
    match (k, s) {
        ('i', 1) => plain!(i8, js_sys::Int8Array),
        ('u', 1) => plain!(u8, js_sys::Uint8Array),
        ('i', 2) => plain!(i16, js_sys::Int16Array),
        ('u', 2) => plain!(u16, js_sys::Uint16Array),
        ('i', 4) => plain!(i32, js_sys::Int32Array),
        ('u', 4) => plain!(u32, js_sys::Uint32Array),
        ('f', 4) => plain!(f32, js_sys::Float32Array),
        ('f', 8) => plain!(f64, js_sys::Float64Array),
        _ => {}
    }
    Ok(Some(match (k, s) {
        ('i', 1) => js_sys::Int8Array::from(&conv::<i8>(ctx, dt, src, n)?[..]).into(),
        ('u', 1) => js_sys::Uint8Array::from(&conv::<u8>(ctx, dt, src, n)?[..]).into(),
        ('i', 2) => js_sys::Int16Array::from(&conv::<i16>(ctx, dt, src, n)?[..]).into(),
        ('u', 2) => js_sys::Uint16Array::from(&conv::<u16>(ctx, dt, src, n)?[..]).into(),
        ('i', 4) => js_sys::Int32Array::from(&conv::<i32>(ctx, dt, src, n)?[..]).into(),
        ('u', 4) => js_sys::Uint32Array::from(&conv::<u32>(ctx, dt, src, n)?[..]).into(),
        ('i', 8) => js_sys::BigInt64Array::from(&conv::<i64>(ctx, dt, src, n)?[..]).into(),
        ('u', 8) => js_sys::BigUint64Array::from(&conv::<u64>(ctx, dt, src, n)?[..]).into(),
        ('f', 4) => js_sys::Float32Array::from(&conv::<f32>(ctx, dt, src, n)?[..]).into(),
        _ => js_sys::Float64Array::from(&conv::<f64>(ctx, dt, src, n)?[..]).into(),
    }))
}

/// Element `i` of `src` (`size` bytes), or a corrupt-data error.
fn elem<'a>(src: &Elements<'a>, i: usize, size: usize) -> JsResult<&'a [u8]> {
    i.checked_mul(src.stride)
        .and_then(|s| s.checked_add(src.offset))
        .and_then(|s| Some(s..s.checked_add(size)?))
        .and_then(|r| src.bytes.get(r))
        .ok_or_else(|| crate::errors::js_error("Corrupt", "element outside the data read"))
}

/// `n` elements of `dt` laid out as `src`, as one JavaScript value (a typed
/// array or an array).
pub(crate) fn to_values(
    file: &File,
    object: &str,
    dt: &Datatype,
    src: Elements<'_>,
    n: usize,
) -> JsResult<JsValue> {
    let ctx = Context {
        file: Some(file),
        object,
    };
    if let Some(v) = typed(&ctx, dt, src, n)? {
        return Ok(v);
    }
    let size = dt.size() as usize;
    let out = js_sys::Array::new();
    match dt {
        Datatype::String { pad, .. } | Datatype::VarString { pad, .. } => {
            for i in 0..n {
                let el = elem(&src, i, size)?;
                let owned;
                let b = if matches!(dt, Datatype::VarString { .. }) {
                    owned = file.vlen_bytes(el).map_err(to_js)?;
                    &owned[..]
                } else {
                    el
                };
                out.push(
                    &String::from_utf8_lossy(strip_padding(b, *pad))
                        .as_ref()
                        .into(),
                );
            }
        }
        Datatype::Compound { members, .. } => {
            let cols: Vec<(String, JsValue, usize)> = members
                .iter()
                .map(|m| {
                    let per = per_elem(&m.dtype);
                    let sub = Elements {
                        bytes: src.bytes,
                        stride: src.stride,
                        offset: src.offset + m.offset as usize,
                    };
                    let v = match &m.dtype {
                        Datatype::Array { base, .. } => {
                            // the members' elements, element after element
                            let inner = base.size() as usize;
                            let mut raw = Vec::with_capacity(n * per * inner);
                            for i in 0..n {
                                raw.extend_from_slice(elem(&sub, i, m.dtype.size() as usize)?);
                            }
                            to_values(file, object, base, Elements::packed(&raw, inner), n * per)?
                        }
                        other => to_values(file, object, other, sub, n)?,
                    };
                    Ok((m.name.clone(), v, per))
                })
                .collect::<JsResult<_>>()?;
            for i in 0..n {
                let o = js_sys::Object::new();
                for (name, col, per) in &cols {
                    let v = pick(col, i, *per);
                    set(&o, name, v);
                }
                out.push(&o);
            }
        }
        Datatype::Array { base, .. } => {
            let per = per_elem(dt);
            let inner = base.size() as usize;
            let mut raw = Vec::with_capacity(n * size);
            for i in 0..n {
                raw.extend_from_slice(elem(&src, i, size)?);
            }
            let all = to_values(file, object, base, Elements::packed(&raw, inner), n * per)?;
            for i in 0..n {
                out.push(&pick(&all, i, per));
            }
        }
        Datatype::VarSequence { base, .. } => {
            for i in 0..n {
                let b = file.vlen_bytes(elem(&src, i, size)?).map_err(to_js)?;
                let bs = base.size().max(1) as usize;
                out.push(&to_values(
                    file,
                    object,
                    base,
                    Elements::packed(&b, bs),
                    b.len() / bs,
                )?);
            }
        }
        Datatype::Reference {
            kind: ReferenceKind::Object,
            ..
        } => {
            for i in 0..n {
                let a = file.object_reference(elem(&src, i, size)?).map_err(to_js)?;
                out.push(&a.map_or(JsValue::NULL, |a| (a as f64).into()));
            }
        }
        Datatype::Complex { base, .. } => {
            let bs = base.size() as usize;
            let mut raw = Vec::with_capacity(n * size);
            for i in 0..n {
                raw.extend_from_slice(elem(&src, i, size)?);
            }
            return to_values(file, object, base, Elements::packed(&raw, bs), n * 2);
        }
        _ => {
            // opaque, time, other references: the stored bytes of each element
            for i in 0..n {
                out.push(&js_sys::Uint8Array::from(elem(&src, i, size)?).into());
            }
        }
    }
    Ok(out.into())
}

/// Values per element of `dt` (the product of an array type's dimensions).
fn per_elem(dt: &Datatype) -> usize {
    match dt {
        Datatype::Array { dims, .. } => dims.iter().map(|&d| d as usize).product(),
        _ => 1,
    }
}

/// Element `i` of a column: one value, or `per` values as a sub-array.
fn pick(col: &JsValue, i: usize, per: usize) -> JsValue {
    if per == 1 {
        return js_sys::Reflect::get_u32(col, i as u32).unwrap_or(JsValue::UNDEFINED);
    }
    let (a, b) = ((i * per) as u32, ((i + 1) * per) as u32);
    js_sys::Reflect::get(col, &"slice".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .and_then(|f| f.call2(col, &a.into(), &b.into()).ok())
        .unwrap_or(JsValue::UNDEFINED)
}

/// The h5wasm-like `dtype` string of `dt`: numpy's (`<f4`, `>i2`, `|S10`)
/// where there is one, else `str` (variable-length strings), `compound`,
/// `array`, `vlen`, `reference`, `opaque`, `complex`.
pub(crate) fn dtype_str(dt: &Datatype) -> String {
    match dt {
        Datatype::VarString { .. } => "str".into(),
        Datatype::Compound { .. } => "compound".into(),
        Datatype::Array { .. } => "array".into(),
        Datatype::VarSequence { .. } => "vlen".into(),
        Datatype::Reference { .. } => "reference".into(),
        Datatype::Complex { .. } => "complex".into(),
        _ => dt.numpy_str().unwrap_or_else(|| "opaque".into()),
    }
}

/// The `metadata` object of `dt`: `class`, `size`, and `signed`,
/// `littleEndian`, `cset`, `members`, `base`, `dims`, `enumMembers` where
/// they apply.
pub(crate) fn metadata(dt: &Datatype) -> JsValue {
    let o = js_sys::Object::new();
    set(&o, "size", dt.size() as f64);
    set(&o, "dtype", dtype_str(dt));
    let order =
        |o2: &js_sys::Object, b: &ByteOrder| set(o2, "littleEndian", *b == ByteOrder::Little);
    let class = match dt {
        Datatype::Integer {
            signed, order: b, ..
        } => {
            set(&o, "signed", *signed);
            order(&o, b);
            "integer"
        }
        Datatype::Float { order: b, .. } => {
            order(&o, b);
            "float"
        }
        Datatype::Time { .. } => "time",
        Datatype::String { cset, .. } => {
            set(
                &o,
                "cset",
                if *cset == CharSet::Utf8 {
                    "utf-8"
                } else {
                    "ascii"
                },
            );
            set(&o, "vlen", false);
            "string"
        }
        Datatype::VarString { cset, .. } => {
            set(
                &o,
                "cset",
                if *cset == CharSet::Utf8 {
                    "utf-8"
                } else {
                    "ascii"
                },
            );
            set(&o, "vlen", true);
            "string"
        }
        Datatype::Bitfield { .. } => "bitfield",
        Datatype::Opaque { tag, .. } => {
            set(&o, "tag", tag.as_str());
            "opaque"
        }
        Datatype::Compound { members, .. } => {
            let list = js_sys::Array::new();
            for m in members {
                let mo = js_sys::Object::new();
                set(&mo, "name", m.name.as_str());
                set(&mo, "offset", m.offset as f64);
                set(&mo, "type", metadata(&m.dtype));
                list.push(&mo);
            }
            set(&o, "members", list);
            "compound"
        }
        Datatype::Reference { kind, .. } => {
            set(
                &o,
                "refKind",
                if *kind == ReferenceKind::Object {
                    "object"
                } else {
                    "region"
                },
            );
            "reference"
        }
        Datatype::Enum { base, members } => {
            let m = js_sys::Object::new();
            for e in members {
                let v = purehdf::low_level::datatype::enum_value(base, &e.value).unwrap_or(0);
                set(&m, &e.name, v as f64);
            }
            set(&o, "enumMembers", m);
            set(&o, "base", metadata(base));
            "enum"
        }
        Datatype::VarSequence { base, .. } => {
            set(&o, "base", metadata(base));
            "vlen"
        }
        Datatype::Array { base, dims } => {
            set(&o, "base", metadata(base));
            let d = js_sys::Array::new();
            for x in dims {
                d.push(&(*x as f64).into());
            }
            set(&o, "dims", d);
            "array"
        }
        Datatype::Complex { base, .. } => {
            set(&o, "base", metadata(base));
            "complex"
        }
    };
    set(&o, "class", class);
    o.into()
}
