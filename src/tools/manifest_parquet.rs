//! Kerchunk references as Parquet (fsspec's `LazyReferenceMapper` layout):
//! a directory with `.zmetadata` (`{"metadata": {key: zarr JSON},
//! "record_size": N}`) and, per array, `refs.<k>.parq` files of N rows each
//! — row `i` the chunk whose C-order index in the chunk grid is `k·N + i`,
//! with columns `path` (UTF-8, null for inlined or absent chunks), `offset`,
//! `size` and `raw` (the inlined bytes, else null).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::parquet::{table, Column};
use purehdf::{Error, Result};

/// Rows per reference file (fsspec's default).
pub const RECORD_SIZE: usize = 10_000;

/// One chunk reference: a byte range of a file, or inlined bytes.
enum Ref {
    Range(String, i64, i64),
    Raw(Vec<u8>),
}

fn bad(why: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("kerchunk references: {why}"))
}

/// Write the kerchunk JSON `v` (as [`super::manifest::kerchunk`] makes it)
/// into the directory `dir` (created; it must not exist yet).
pub fn write(v: &Value, dir: &Path) -> Result<()> {
    let url = v["templates"]["u"].as_str().unwrap_or_default();
    let refs = v["refs"].as_object().ok_or_else(|| bad("no refs"))?;
    let mut meta = Map::new();
    let mut arrays: BTreeMap<String, BTreeMap<String, Ref>> = BTreeMap::new();
    for (key, val) in refs {
        let (field, leaf) = key.rsplit_once('/').unwrap_or(("", key.as_str()));
        if leaf.starts_with(".z") {
            let text = val
                .as_str()
                .ok_or_else(|| bad(format!("{key} is not text")))?;
            meta.insert(
                key.clone(),
                serde_json::from_str(text).map_err(Error::Json)?,
            );
            continue;
        }
        let r = match val {
            Value::Array(a) => {
                let path = a.first().and_then(Value::as_str).unwrap_or_default();
                let path = path.replace("{{u}}", url);
                let num = |i: usize| a.get(i).and_then(Value::as_i64).unwrap_or(0);
                Ref::Range(path, num(1), num(2))
            }
            Value::String(s) => match s.strip_prefix("base64:") {
                Some(b) => Ref::Raw(base64_decode(b).ok_or_else(|| bad(format!("{key}: base64")))?),
                None => Ref::Raw(s.as_bytes().to_vec()),
            },
            _ => return Err(bad(format!("{key}: unknown reference"))),
        };
        arrays
            .entry(field.to_string())
            .or_default()
            .insert(leaf.to_string(), r);
    }
    let tmp = dir.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let io = |e: std::io::Error| Error::io(tmp.display(), e);
    std::fs::create_dir_all(&tmp).map_err(io)?;
    for (field, chunks) in &arrays {
        let zarray = meta
            .get(&format!("{field}/.zarray"))
            .ok_or_else(|| bad(format!("{field}: chunks without .zarray")))?;
        let grid = grid_of(zarray).ok_or_else(|| bad(format!("{field}: shape/chunks")))?;
        let total: usize = grid.iter().product();
        let mut rows: Vec<Option<&Ref>> = vec![None; total];
        for (leaf, r) in chunks {
            let idx =
                ravel(leaf, &grid).ok_or_else(|| bad(format!("{field}/{leaf}: chunk key")))?;
            rows[idx] = Some(r);
        }
        let sub = tmp.join(field);
        std::fs::create_dir_all(&sub).map_err(io)?;
        for (k, part) in rows.chunks(RECORD_SIZE).enumerate() {
            let mut path = Vec::with_capacity(part.len());
            let (mut off, mut size, mut raw) = (Vec::new(), Vec::new(), Vec::new());
            for r in part {
                let (p, o, s, b) = match r {
                    Some(Ref::Range(p, o, s)) => (Some(p.clone()), *o, *s, None),
                    Some(Ref::Raw(b)) => (None, 0, 0, Some(b.clone())),
                    None => (None, 0, 0, None),
                };
                path.push(p);
                off.push(o);
                size.push(s);
                raw.push(b);
            }
            let bytes = table(&[
                ("path", Column::Utf8(&path)),
                ("offset", Column::I64(&off)),
                ("size", Column::I64(&size)),
                ("raw", Column::Bytes(&raw)),
            ]);
            std::fs::write(sub.join(format!("refs.{k}.parq")), bytes).map_err(io)?;
        }
    }
    let zmeta = serde_json::json!({"metadata": meta, "record_size": RECORD_SIZE});
    std::fs::write(tmp.join(".zmetadata"), zmeta.to_string()).map_err(io)?;
    std::fs::rename(&tmp, dir).map_err(|e| Error::io(dir.display(), e))
}

/// Chunks along each axis (`[1]` for a scalar), as fsspec computes them.
fn grid_of(zarray: &Value) -> Option<Vec<usize>> {
    let shape = zarray["shape"].as_array()?;
    let chunks = zarray["chunks"].as_array()?;
    let g: Option<Vec<usize>> = shape
        .iter()
        .zip(chunks)
        .map(|(s, c)| usize::try_from(s.as_u64()?.div_ceil(c.as_u64()?.max(1))).ok())
        .collect();
    let g = g?;
    g.iter()
        .try_fold(1usize, |a, &n| a.checked_mul(n))
        .filter(|&n| n <= 1 << 32)?;
    Some(if g.is_empty() { vec![1] } else { g })
}

/// C-order index of a chunk key (`"3.0.1"`) in `grid`.
fn ravel(leaf: &str, grid: &[usize]) -> Option<usize> {
    let idx: Vec<usize> = leaf
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    if idx.len() != grid.len() {
        return None;
    }
    idx.iter()
        .zip(grid)
        .try_fold(0usize, |a, (&i, &n)| (i < n).then(|| a * n + i))
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let b = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(b.len() * 3 / 4);
    for q in b.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in q.iter().enumerate() {
            acc |= val(c)? << (18 - 6 * i);
        }
        let n = match q.len() {
            4 => 3,
            3 => 2,
            2 => 1,
            _ => return None,
        };
        out.extend_from_slice(&acc.to_be_bytes()[1..1 + n]);
    }
    Some(out)
}
