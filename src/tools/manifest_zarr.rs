//! Zarr metadata of a [`ChunkManifest`] for `h5 manifest`: the `.zarray` of
//! Zarr format 2 and the `zarr.json` of format 3 (dtype, fill value, codec
//! configurations naming numcodecs' standard ids where numcodecs has the
//! HDF5 filter's format, `purehdf_<name>` ids otherwise), and base64.

use serde_json::{json, Map, Value};

use purehdf::{ChunkManifest, Codec, ElementKind, ZarrDtype};

/// Which codec ids to name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodecIds {
    /// numcodecs' own ids where numcodecs has the filter's format (zlib,
    /// shuffle, fletcher32, zstd, bz2, blosc), `purehdf_*` otherwise.
    Standard,
    /// `purehdf_*` for every filter (decoded by our codecs).
    Purehdf,
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        s.push(A[(n >> 18) as usize & 63] as char);
        s.push(A[(n >> 12) as usize & 63] as char);
        s.push(if c.len() > 1 {
            A[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        s.push(if c.len() > 2 {
            A[n as usize & 63] as char
        } else {
            '='
        });
    }
    s
}

/// The numcodecs configuration of one codec; `first` when it is the first
/// filter of the pipeline (its input the chunk's own bytes).
pub fn codec_config(c: &Codec, ids: CodecIds, first: bool) -> Value {
    let cd = |i: usize| c.cd_values.get(i).copied();
    if ids == CodecIds::Standard {
        match c.filter_id {
            1 => return json!({"id": "zlib", "level": cd(0).unwrap_or(4).min(9)}),
            // numcodecs' shuffle refuses a buffer that is not a whole number
            // of elements, which HDF5's passes on with the tail unshuffled: a
            // shuffle after another filter (a file that shuffles deflated
            // bytes) takes our codec
            2 if first => {
                return json!({"id": "shuffle", "elementsize": cd(0).unwrap_or(c.element_size)})
            }
            3 => return json!({"id": "fletcher32"}),
            307 => return json!({"id": "bz2", "level": cd(0).unwrap_or(9).clamp(1, 9)}),
            32015 => return json!({"id": "zstd", "level": cd(0).unwrap_or(0)}),
            32001 => {
                return json!({"id": "blosc", "cname": "lz4", "clevel": cd(4).unwrap_or(5),
                              "shuffle": cd(5).unwrap_or(1), "blocksize": 0})
            }
            _ => {}
        }
    }
    let mut v = json!({
        "id": format!("purehdf_{}", c.name),
        "filter_id": c.filter_id,
        "cd_values": c.cd_values,
        "element_size": c.element_size,
        "chunk_bytes": c.chunk_bytes,
    });
    if let (Some(p), Value::Object(m)) = (c.sign_extend, &mut v) {
        m.insert("sign_extend".into(), json!(p));
        m.insert("big_endian".into(), json!(c.big_endian));
    }
    v
}

/// The Zarr format 2 `dtype` value.
pub fn dtype_v2(z: &ZarrDtype) -> Value {
    match z {
        ZarrDtype::Scalar(s) => Value::String(s.clone()),
        ZarrDtype::Structured(fields) => Value::Array(
            fields
                .iter()
                .map(|f| {
                    let mut v = vec![Value::String(f.name.clone()), dtype_v2(&f.dtype)];
                    if !f.shape.is_empty() {
                        v.push(json!(f.shape));
                    }
                    Value::Array(v)
                })
                .collect(),
        ),
    }
}

fn float_value(x: f64) -> Value {
    if x.is_nan() {
        json!("NaN")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(x)
    }
}

fn half(b: u16) -> f64 {
    let sign = if b >> 15 == 1 { -1.0 } else { 1.0 };
    let exp = i32::from((b >> 10) & 0x1f);
    let man = f64::from(b & 0x3ff);
    sign * match exp {
        0 => man * 2f64.powi(-24),
        31 if man == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + man / 1024.0) * 2f64.powi(e - 15),
    }
}

/// One scalar's JSON value from its bytes as `typestr` lays them out.
fn scalar_value(typestr: &str, bytes: &[u8]) -> Value {
    let big = typestr.starts_with('>');
    let kind = typestr.as_bytes().get(1).copied().unwrap_or(b'V');
    let mut b = bytes.to_vec();
    if big && matches!(kind, b'i' | b'u' | b'f') {
        b.reverse();
    }
    let le = |b: &[u8]| {
        let mut a = [0u8; 16];
        a[..b.len().min(16)].copy_from_slice(&b[..b.len().min(16)]);
        u128::from_le_bytes(a)
    };
    match (kind, b.len()) {
        (b'b', _) => json!(b.first().is_some_and(|&x| x != 0)),
        (b'u', 1..=8) => json!(le(&b) as u64),
        (b'i', n @ 1..=8) => {
            let shift = 128 - 8 * n as u32;
            json!(((le(&b) << shift) as i128 >> shift) as i64)
        }
        (b'f', 2) => float_value(half(le(&b) as u16)),
        (b'f', 4) => float_value(f64::from(f32::from_bits(le(&b) as u32))),
        (b'f', 8) => float_value(f64::from_bits(le(&b) as u64)),
        (b'c', n @ (8 | 16)) => {
            let p = format!("{}f{}", &typestr[..1], n / 2);
            json!([
                scalar_value(&p, &bytes[..n / 2]),
                scalar_value(&p, &bytes[n / 2..])
            ])
        }
        _ => Value::String(base64(bytes)),
    }
}

/// The Zarr format 2 `fill_value`.
pub fn fill_v2(m: &ChunkManifest) -> Value {
    match &m.element {
        ElementKind::Fixed(ZarrDtype::Scalar(s)) => scalar_value(s, &m.fill),
        ElementKind::Fixed(ZarrDtype::Structured(_)) => Value::String(base64(&m.fill)),
        ElementKind::VlenUtf8 | ElementKind::VlenBytes => Value::Null,
    }
}

/// The `.zarray` of the manifest.
pub fn zarray(m: &ChunkManifest, ids: CodecIds) -> Value {
    let (dtype, mut filters): (Value, Vec<Value>) = match &m.element {
        ElementKind::Fixed(z) => (dtype_v2(z), Vec::new()),
        ElementKind::VlenUtf8 => (json!("|O"), vec![json!({"id": "vlen-utf8"})]),
        ElementKind::VlenBytes => (json!("|O"), vec![json!({"id": "vlen-bytes"})]),
    };
    filters.extend(
        m.codecs
            .iter()
            .enumerate()
            .map(|(i, c)| codec_config(c, ids, i == 0)),
    );
    json!({
        "chunks": m.chunk_shape,
        "compressor": null,
        "dimension_separator": ".",
        "dtype": dtype,
        "fill_value": fill_v2(m),
        "filters": if filters.is_empty() { Value::Null } else { Value::Array(filters) },
        "order": "C",
        "shape": m.shape,
        "zarr_format": 2,
    })
}

/// The Zarr format 3 `data_type` and byte order of a numeric dtype, or why not.
fn dtype_v3(m: &ChunkManifest) -> Result<(&'static str, &'static str), String> {
    let ElementKind::Fixed(ZarrDtype::Scalar(s)) = &m.element else {
        return Err("zarr-v3: only numeric dtypes are exported".into());
    };
    let name = match &s[1..] {
        "b1" => "bool",
        "i1" => "int8",
        "i2" => "int16",
        "i4" => "int32",
        "i8" => "int64",
        "u1" => "uint8",
        "u2" => "uint16",
        "u4" => "uint32",
        "u8" => "uint64",
        "f2" => "float16",
        "f4" => "float32",
        "f8" => "float64",
        "c8" => "complex64",
        "c16" => "complex128",
        _ => return Err(format!("zarr-v3: dtype {s} is not exported")),
    };
    Ok((name, if s.starts_with('>') { "big" } else { "little" }))
}

/// The `zarr.json` of the manifest (format 3), codecs as numcodecs' zarr 3
/// wrappers (`numcodecs.<id>`); the attributes come with the dimension names.
pub fn zarr_json(
    m: &ChunkManifest,
    ids: CodecIds,
    (mut attributes, dims): (Value, Vec<String>),
) -> Result<Value, String> {
    if let Value::Object(a) = &mut attributes {
        a.remove("_ARRAY_DIMENSIONS");
    }
    let (data_type, endian) = dtype_v3(m)?;
    let mut codecs = vec![json!({"name": "bytes", "configuration": {"endian": endian}})];
    for (i, c) in m.codecs.iter().enumerate() {
        let Value::Object(mut cfg) = codec_config(c, ids, i == 0) else {
            continue;
        };
        let id = cfg
            .remove("id")
            .and_then(|v| v.as_str().map(str::to_string));
        codecs.push(json!({
            "name": format!("numcodecs.{}", id.unwrap_or_default()),
            "configuration": Value::Object(cfg),
        }));
    }
    let mut fill = fill_v2(m);
    if data_type == "bool" {
        fill = json!(fill.as_bool().unwrap_or(false));
    }
    let mut out = Map::new();
    out.insert("zarr_format".into(), json!(3));
    out.insert("node_type".into(), json!("array"));
    out.insert("shape".into(), json!(m.shape));
    out.insert("data_type".into(), json!(data_type));
    out.insert(
        "chunk_grid".into(),
        json!({"name": "regular", "configuration": {"chunk_shape": m.chunk_shape}}),
    );
    out.insert(
        "chunk_key_encoding".into(),
        json!({"name": "default", "configuration": {"separator": "/"}}),
    );
    out.insert("fill_value".into(), fill);
    out.insert("codecs".into(), Value::Array(codecs));
    out.insert("attributes".into(), attributes);
    out.insert("dimension_names".into(), json!(dims));
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_python() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn scalars_decode_in_their_order() {
        assert_eq!(scalar_value(">i2", &[0xff, 0xfe]), json!(-2));
        assert_eq!(scalar_value("<u4", &[1, 0, 0, 0]), json!(1));
        assert_eq!(scalar_value("<f4", &f32::NAN.to_le_bytes()), json!("NaN"));
        assert_eq!(scalar_value(">f8", &1.5f64.to_be_bytes()), json!(1.5));
        assert_eq!(scalar_value("<f2", &[0x00, 0x3c]), json!(1.0));
        assert_eq!(scalar_value("|S2", b"ab"), json!("YWI="));
    }
}
