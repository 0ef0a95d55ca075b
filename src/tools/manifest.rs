//! `h5 manifest FILE|URL --format kerchunk|zarr-v3 [-o OUT]`: the file as a
//! virtual Zarr store. Every dataset's [`ChunkManifest`] becomes Zarr
//! metadata plus references to byte ranges of the source: kerchunk's
//! reference-filesystem JSON (version 1, Zarr format 2 keys, readable through
//! fsspec's `ReferenceFileSystem` and zarr) or a VirtualiZarr-style JSON of
//! Zarr format 3 metadata and chunk manifests (`{"path", "offset",
//! "length"}` per chunk). The source's size (and ETag when remote) is
//! recorded under the top-level key `purehdf` so a changed file is detected;
//! datasets that cannot be served are listed there under `refused`, by name.

use serde_json::{json, Map, Value};

use crate::dump::json::{item_json, ndarray_json};
use crate::tools::manifest_zarr::{base64, zarr_json, zarray, CodecIds};
use purehdf::low_level::file::{File, Object};
use purehdf::{Attribute, ChunkLocation, ChunkManifest, Error, Group, Link, Result};

const USAGE: &str = "usage: h5 manifest FILE|URL [--format kerchunk|zarr-v3] \
[--codecs standard|purehdf] [-o OUT] [--parquet (kerchunk, -o a new directory)]";

/// The output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// kerchunk reference filesystem JSON, version 1 (Zarr format 2).
    Kerchunk,
    /// Zarr format 3 metadata with chunk manifests (VirtualiZarr).
    ZarrV3,
}

/// What the source was when indexed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceInfo {
    /// The URL or absolute path the references point at.
    pub url: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its ETag, for a remote object whose server gave one.
    pub etag: Option<String>,
    /// Its modification time in nanoseconds since the epoch, for a local file.
    pub mtime_ns: Option<i128>,
}

/// Open `arg` (path or URL) and describe it.
pub fn open_source(arg: &str) -> Result<(File, SourceInfo)> {
    #[cfg(feature = "remote")]
    if crate::open::is_url(arg) {
        use purehdf::low_level::remote::{default_options, StoreFetch};
        let opts = default_options();
        let fetch = StoreFetch::open(arg, &opts)?;
        let etag = fetch.e_tag().map(str::to_string);
        let f = File::open_fetch(std::sync::Arc::new(fetch), opts.range.clone())?;
        let size = f.source().len() + f.superblock().base_address;
        let url = arg.to_string();
        return Ok((
            f,
            SourceInfo {
                url,
                size,
                etag,
                mtime_ns: None,
            },
        ));
    }
    let f = crate::open::open(arg)?;
    let url = std::fs::canonicalize(arg)
        .map_err(|e| Error::InvalidArgument(format!("{arg}: {e}")))?
        .to_string_lossy()
        .into_owned();
    let size = f.source().len() + f.superblock().base_address;
    let mtime_ns = f.identity().map(|i| i.mtime_ns);
    let info = SourceInfo {
        url,
        size,
        etag: None,
        mtime_ns,
    };
    Ok((f, info))
}

fn attr_json(a: &Attribute, file: &File) -> Option<Value> {
    let resolve = |el: &[u8]| file.vlen_bytes(el);
    let shape = a.shape();
    let v = if shape.is_empty() {
        item_json(&a.dtype, &a.data, &resolve)
    } else {
        ndarray_json(&a.dtype, shape, &a.data, &resolve)
    };
    v.ok()
}

fn attrs_of(attrs: Result<Vec<Attribute>>, file: &File) -> Value {
    let mut m = Map::new();
    for a in attrs.unwrap_or_default() {
        if let Some(v) = attr_json(&a, file) {
            m.insert(a.name.clone(), v);
        }
    }
    Value::Object(m)
}

/// `attrs` with `_ARRAY_DIMENSIONS` added when absent (xarray needs
/// dimension names): `<leaf>_dim<i>`, unique per array.
fn with_dims(mut attrs: Value, path: &str, rank: usize) -> (Value, Vec<String>) {
    let leaf = path.rsplit('/').next().unwrap_or(path);
    let own: Vec<String> = (0..rank).map(|i| format!("{leaf}_dim{i}")).collect();
    let names = match attrs.get("_ARRAY_DIMENSIONS").and_then(Value::as_array) {
        Some(a) if a.len() == rank && a.iter().all(Value::is_string) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => own,
    };
    if let Value::Object(m) = &mut attrs {
        m.insert("_ARRAY_DIMENSIONS".into(), json!(names));
    }
    (attrs, names)
}

fn chunk_key(coords: &[u64]) -> String {
    if coords.is_empty() {
        return "0".into();
    }
    coords
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

fn prefixed(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}/{key}")
    }
}

/// One object of the file as the walk sees it.
enum Node {
    Group(Value),
    Array(Box<ChunkManifest>, Value),
}

/// Every group's attributes and every dataset's manifest (refusals by path).
/// The walk's objects by path, and the refused datasets' reasons by path.
type Walked = (Vec<(String, Node)>, Map<String, Value>);

fn walk(f: &File) -> Result<Walked> {
    let root = f.root()?;
    let mut nodes = vec![(String::new(), Node::Group(attrs_of(root.attributes(), f)))];
    let mut refused = Map::new();
    // Depth first in name order, hard links only, each object once under the
    // first path met (as `Group::visit`), but an object that cannot be opened
    // (a damaged header, a group whose links cannot be read) is refused by
    // its path and the walk goes on: one broken dataset does not cost the
    // file's other references.
    let mut seen = std::collections::HashSet::from([root.address()]);
    let mut stack: Vec<(String, u64)> = Vec::new();
    push_links(&root, "", &mut stack, &mut refused);
    while let Some((path, addr)) = stack.pop() {
        if !seen.insert(addr) {
            continue;
        }
        if path.contains('\\') {
            // zarr reads a backslash in a key as a path separator
            refused.insert(
                path,
                json!("name contains a backslash (a separator to zarr)"),
            );
            continue;
        }
        match f.object_at(addr, format!("/{path}")) {
            Ok(Object::Group(g)) => {
                nodes.push((path.clone(), Node::Group(attrs_of(g.attributes(), f))));
                push_links(&g, &path, &mut stack, &mut refused);
            }
            Ok(Object::Dataset(d)) => match d.chunk_manifest() {
                Ok(m) => nodes.push((path, Node::Array(Box::new(m), attrs_of(d.attributes(), f)))),
                Err(e) => {
                    refused.insert(path, json!(e.to_string()));
                }
            },
            Ok(_) => {}
            Err(e) => {
                refused.insert(path, json!(e.to_string()));
            }
        }
    }
    Ok((nodes, refused))
}

/// Push a group's hard links (last first, so the stack pops them in name
/// order); a group whose links cannot be read is refused by its path.
fn push_links(
    g: &Group,
    path: &str,
    stack: &mut Vec<(String, u64)>,
    refused: &mut Map<String, Value>,
) {
    match g.links() {
        Ok(links) => {
            for (name, link) in links.into_iter().rev() {
                if let Link::Hard(addr) = link {
                    stack.push((prefixed(path, &name), addr));
                }
            }
        }
        Err(e) => {
            let at = if path.is_empty() { "/" } else { path };
            refused.insert(at.to_string(), json!(e.to_string()));
        }
    }
}

fn source_json(src: &SourceInfo, refused: Map<String, Value>, format: Format) -> Value {
    json!({
        "source": src.url,
        "size": src.size,
        "etag": src.etag,
        "mtime_ns": src.mtime_ns.map(|t| t.to_string()),
        "format": match format { Format::Kerchunk => "kerchunk", Format::ZarrV3 => "zarr-v3" },
        "generator": concat!("purehdf ", env!("CARGO_PKG_VERSION")),
        "refused": refused,
    })
}

/// kerchunk references (version 1) of the whole file.
pub fn kerchunk(f: &File, src: &SourceInfo, ids: CodecIds) -> Result<Value> {
    let (nodes, refused) = walk(f)?;
    let mut refs = Map::new();
    for (path, node) in nodes {
        match node {
            Node::Group(attrs) => {
                refs.insert(prefixed(&path, ".zgroup"), json!(r#"{"zarr_format":2}"#));
                refs.insert(prefixed(&path, ".zattrs"), json!(attrs.to_string()));
            }
            Node::Array(m, attrs) => {
                let (attrs, _) = with_dims(attrs, &path, m.shape.len());
                refs.insert(
                    prefixed(&path, ".zarray"),
                    json!(zarray(&m, ids).to_string()),
                );
                refs.insert(prefixed(&path, ".zattrs"), json!(attrs.to_string()));
                for c in &m.chunks {
                    let v = match &c.location {
                        ChunkLocation::Range { offset, length } => json!(["{{u}}", offset, length]),
                        ChunkLocation::Inline(b) => json!(format!("base64:{}", base64(b))),
                        ChunkLocation::File {
                            file,
                            offset,
                            length,
                        } => json!([file, offset, length]),
                    };
                    refs.insert(prefixed(&path, &chunk_key(&c.coords)), v);
                }
            }
        }
    }
    Ok(json!({
        "version": 1,
        "templates": {"u": src.url},
        "refs": refs,
        "purehdf": source_json(src, refused, Format::Kerchunk),
    }))
}

/// Zarr format 3 metadata and chunk manifests of the whole file.
pub fn zarr_v3(f: &File, src: &SourceInfo, ids: CodecIds) -> Result<Value> {
    let (nodes, mut refused) = walk(f)?;
    let mut groups = Map::new();
    let mut arrays = Map::new();
    for (path, node) in nodes {
        match node {
            Node::Group(attrs) => {
                let meta = json!({"zarr_format": 3, "node_type": "group", "attributes": attrs});
                groups.insert(path, meta);
            }
            Node::Array(m, attrs) => {
                match zarr_json(&m, ids, with_dims(attrs, &path, m.shape.len())) {
                    Err(why) => {
                        refused.insert(path, json!(why));
                    }
                    Ok(meta) => {
                        let mut manifest = Map::new();
                        for c in &m.chunks {
                            let v = match &c.location {
                                ChunkLocation::Range { offset, length } => {
                                    json!({"path": src.url, "offset": offset, "length": length})
                                }
                                ChunkLocation::Inline(b) => json!({"data": base64(b)}),
                                ChunkLocation::File {
                                    file,
                                    offset,
                                    length,
                                } => {
                                    json!({"path": file, "offset": offset, "length": length})
                                }
                            };
                            manifest.insert(chunk_key(&c.coords), v);
                        }
                        arrays.insert(path, json!({"metadata": meta, "manifest": manifest}));
                    }
                }
            }
        }
    }
    Ok(json!({
        "zarr_format": 3,
        "groups": groups,
        "arrays": arrays,
        "purehdf": source_json(src, refused, Format::ZarrV3),
    }))
}

/// Build the manifest of `input` in `format`.
pub fn manifest(input: &str, format: Format, ids: CodecIds) -> Result<Value> {
    let (f, src) = open_source(input)?;
    match format {
        Format::Kerchunk => kerchunk(&f, &src, ids),
        Format::ZarrV3 => zarr_v3(&f, &src, ids),
    }
}

/// `h5 manifest`: exit 0 when every dataset was exported, 1 when some were
/// refused (listed on stderr), 2 on bad usage or an unreadable file.
pub fn run(args: &[String]) -> u8 {
    let mut pos = Vec::new();
    let (mut format, mut ids, mut out) = (Format::Kerchunk, CodecIds::Standard, None);
    let mut parquet = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--format" => match it.next().map(String::as_str) {
                Some("kerchunk") => format = Format::Kerchunk,
                Some("zarr-v3") => format = Format::ZarrV3,
                _ => {
                    eprintln!("{USAGE}");
                    return 2;
                }
            },
            "--codecs" => match it.next().map(String::as_str) {
                Some("standard") => ids = CodecIds::Standard,
                Some("purehdf") => ids = CodecIds::Purehdf,
                _ => {
                    eprintln!("{USAGE}");
                    return 2;
                }
            },
            "-o" | "--out" => out = it.next().cloned(),
            "--parquet" => parquet = true,
            _ => pos.push(a.clone()),
        }
    }
    let [input] = pos.as_slice() else {
        eprintln!("{USAGE}");
        return 2;
    };
    if parquet && (format != Format::Kerchunk || out.is_none()) {
        eprintln!(
            "h5 manifest: --parquet writes kerchunk references into the -o directory\n{USAGE}"
        );
        return 2;
    }
    let v = match manifest(input, format, ids) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("h5 manifest: {e}");
            return 2;
        }
    };
    let refused = v["purehdf"]["refused"].as_object().map_or(0, Map::len);
    for (path, why) in v["purehdf"]["refused"].as_object().into_iter().flatten() {
        eprintln!(
            "h5 manifest: refused {path}: {}",
            why.as_str().unwrap_or_default()
        );
    }
    if parquet {
        let dir = std::path::Path::new(out.as_deref().unwrap_or_default());
        if dir.exists() {
            eprintln!("h5 manifest: {} exists", dir.display());
            return 2;
        }
        if let Err(e) = super::manifest_parquet::write(&v, dir) {
            eprintln!("h5 manifest: {e}");
            return 2;
        }
        return u8::from(refused > 0);
    }
    let text = v.to_string();
    let written = match &out {
        Some(o) => crate::open::write_output(o, |p| {
            crate::tools::atomic_out::write_atomic(p, text.as_bytes())
                .map_err(|e| Error::InvalidArgument(format!("{o}: {e}")))
        }),
        None => {
            println!("{text}");
            Ok(())
        }
    };
    if let Err(e) = written {
        eprintln!("h5 manifest: {e}");
        return 2;
    }
    u8::from(refused > 0)
}
