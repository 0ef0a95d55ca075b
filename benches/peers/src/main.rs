//! Side-by-side timings of purehdf against the pure-Rust HDF5 peers
//! (hdf5-pure, rust-hdf5, hdf5-reader) on the files `scripts/bench_peers.py`
//! writes with h5py (issue 19). Usage:
//!
//! ```text
//! purehdf-peers-bench <dir with manifest.json> <threads> [reps] [libs,comma-separated] [cells,...]
//! ```
//!
//! One JSON line per (library, cell): best and median wall and process-CPU
//! seconds over `reps` runs, the checksum of the values read and the value
//! h5py computed for the same selection. A library that cannot do a cell
//! prints a line with `"error"` (or `"na"` when it has no API for it) instead
//! of being left out. Our side uses only purehdf's public facade.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};

/// Weighted checksum of values in C order: `sum v[i] * (i % 1021 + 1)`
/// (the bench script computes the same with numpy).
fn checksum(v: &[i16]) -> i64 {
    let mut s = 0i64;
    let mut w = 1i64;
    for &x in v {
        s = s.wrapping_add(i64::from(x) * w);
        w += 1;
        if w == 1022 {
            w = 1;
        }
    }
    s
}

fn checksum_le(bytes: &[u8]) -> i64 {
    let v: Vec<i16> = bytes
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect();
    checksum(&v)
}

fn cpu_now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

type Outcome = Result<i64, String>;

struct Cell<'a> {
    name: &'a str,
    expect: i64,
}

struct Ctx {
    dir: PathBuf,
    shape: Vec<u64>,
    chunk: Vec<u64>,
    patch: u64,
    patches: Vec<Vec<u64>>,
    level: u32,
    threads: usize,
    volume: Vec<i16>,
}

impl Ctx {
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    fn ushape(&self) -> Vec<usize> {
        self.shape.iter().map(|&d| d as usize).collect()
    }
    fn uchunk(&self) -> Vec<usize> {
        self.chunk.iter().map(|&d| d as usize).collect()
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

fn run(lib: &str, cell: &Cell, ctx: &Ctx, reps: usize, note: &str, f: impl FnMut() -> Outcome) {
    run_post(lib, cell, ctx, reps, note, f, None)
}

/// [`run`], with `post` (untimed, after the runs) giving the checksum.
fn run_post(
    lib: &str,
    cell: &Cell,
    ctx: &Ctx,
    reps: usize,
    note: &str,
    mut f: impl FnMut() -> Outcome,
    post: Option<&dyn Fn() -> Outcome>,
) {
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    let mut last: Outcome = Err("not run".into());
    for _ in 0..reps.max(1) {
        let (w0, c0) = (Instant::now(), cpu_now());
        let r = f();
        let (w, c) = (w0.elapsed().as_secs_f64(), cpu_now() - c0);
        match r {
            Ok(v) => {
                walls.push(w);
                cpus.push(c);
                last = Ok(v);
            }
            Err(e) => {
                last = Err(e);
                break;
            }
        }
    }
    if let (Ok(_), Some(post)) = (&last, post) {
        last = post();
    }
    let mut line = json!({"lib": lib, "cell": cell.name, "threads": ctx.threads});
    match last {
        Ok(v) => {
            line["best_wall"] = json!(walls.iter().cloned().fold(f64::INFINITY, f64::min));
            line["median_wall"] = json!(median(&mut walls));
            line["best_cpu"] = json!(cpus.iter().cloned().fold(f64::INFINITY, f64::min));
            line["median_cpu"] = json!(median(&mut cpus));
            line["reps"] = json!(walls.len());
            line["checksum"] = json!(v);
            line["expected"] = json!(cell.expect);
            line["ok"] = json!(v == cell.expect);
        }
        Err(e) => {
            line["error"] = json!(e);
        }
    }
    if !note.is_empty() {
        line["note"] = json!(note);
    }
    println!("{line}");
}

fn na(lib: &str, cell: &str, ctx: &Ctx, why: &str) {
    println!(
        "{}",
        json!({"lib": lib, "cell": cell, "threads": ctx.threads, "na": why})
    );
}

fn e<E: std::fmt::Display>(x: E) -> String {
    x.to_string()
}

// ---------------------------------------------------------------- purehdf

mod ours {
    use super::*;
    use purehdf::{DatasetSpec, File, FileWriter, Filter, Object, Selection, Slice, SliceArg};

    pub fn full(p: &Path) -> Outcome {
        let f = File::open(p).map_err(e)?;
        let v: Vec<i16> = f
            .root()
            .map_err(e)?
            .dataset("data")
            .map_err(e)?
            .read()
            .map_err(e)?;
        Ok(checksum(&v))
    }

    pub fn patches(ctx: &Ctx, p: &Path, cache: bool) -> Outcome {
        let f = File::open(p).map_err(e)?;
        let ds = f.root().map_err(e)?.dataset("data").map_err(e)?;
        let n = ctx.patch;
        let mut s = 0i64;
        let mut buf = vec![0u8; (n * n * n * 2) as usize];
        for o in &ctx.patches {
            if cache {
                let sl = Slice::new(
                    o.iter()
                        .map(|&a| SliceArg::Range {
                            start: a as i64,
                            end: Some((a + n) as i64),
                            step: 1,
                        })
                        .collect(),
                );
                let v: Vec<i16> = ds.read_slice(&sl).map_err(e)?;
                s = s.wrapping_add(checksum(&v));
            } else {
                let sel = Selection::Hyperslab {
                    start: o.clone(),
                    count: vec![n; o.len()],
                };
                ds.read_raw_uncached(&sel, &mut buf).map_err(e)?;
                s = s.wrapping_add(checksum_le(&buf));
            }
        }
        Ok(s)
    }

    fn walk_group(g: &purehdf::Group, count: &mut i64, elems: &mut i64) -> Result<(), String> {
        for (name, _) in g.links().map_err(e)? {
            match g.open(&name).map_err(e)? {
                Object::Group(sub) => walk_group(&sub, count, elems)?,
                Object::Dataset(d) => {
                    *count += 1;
                    *elems += d.shape().iter().product::<u64>() as i64;
                }
                Object::NamedDatatype(_) => {}
            }
        }
        Ok(())
    }

    pub fn walk(p: &Path) -> Outcome {
        let f = File::open(p).map_err(e)?;
        let (mut c, mut n) = (0, 0);
        walk_group(&f.root().map_err(e)?, &mut c, &mut n)?;
        Ok(c * 1_000_000 + n)
    }

    pub fn write(ctx: &Ctx, out: &Path, shuffle: bool) -> Outcome {
        let mut w = FileWriter::create(out).map_err(e)?;
        let mut filters = Vec::new();
        if shuffle {
            filters.push(Filter::shuffle());
        }
        filters.push(Filter::deflate(ctx.level).map_err(e)?);
        let spec = DatasetSpec::of::<i16>(&ctx.shape).chunked(&ctx.chunk, filters);
        w.write_dataset(w.root(), "data", spec, &ctx.volume)
            .map_err(e)?;
        w.commit().map_err(e)?;
        Ok(0)
    }
}

// ---------------------------------------------------------------- rust-hdf5

mod rusthdf5 {
    use super::*;
    use rust_hdf5::{H5File, H5Group};

    pub fn full(p: &Path) -> Outcome {
        let f = H5File::open(p).map_err(e)?;
        let v = f.dataset("data").map_err(e)?.read_raw::<i16>().map_err(e)?;
        Ok(checksum(&v))
    }

    pub fn patches(ctx: &Ctx, p: &Path) -> Outcome {
        let f = H5File::open(p).map_err(e)?;
        let ds = f.dataset("data").map_err(e)?;
        let n = ctx.patch as usize;
        let mut s = 0i64;
        for o in &ctx.patches {
            let st: Vec<usize> = o.iter().map(|&a| a as usize).collect();
            let v = ds.read_slice::<i16>(&st, &vec![n; st.len()]).map_err(e)?;
            s = s.wrapping_add(checksum(&v));
        }
        Ok(s)
    }

    fn walk_group(
        f: &H5File,
        g: &H5Group,
        prefix: &str,
        count: &mut i64,
        elems: &mut i64,
    ) -> Result<(), String> {
        for d in g.dataset_names().map_err(e)? {
            let ds = f.dataset(&format!("{prefix}{d}")).map_err(e)?;
            *count += 1;
            *elems += ds.shape().iter().product::<usize>() as i64;
        }
        for name in g.group_names().map_err(e)? {
            let sub = g.group(&name).map_err(e)?;
            walk_group(f, &sub, &format!("{prefix}{name}/"), count, elems)?;
        }
        Ok(())
    }

    pub fn walk(p: &Path) -> Outcome {
        let f = H5File::open(p).map_err(e)?;
        let (mut c, mut n) = (0, 0);
        walk_group(&f, &f.root_group(), "", &mut c, &mut n)?;
        Ok(c * 1_000_000 + n)
    }

    pub fn write(ctx: &Ctx, out: &Path, shuffle: bool) -> Outcome {
        let f = H5File::create(out).map_err(e)?;
        let b = f
            .new_dataset::<i16>()
            .shape(ctx.ushape())
            .chunk(&ctx.uchunk());
        let b = if shuffle {
            b.shuffle_deflate(ctx.level)
        } else {
            b.deflate(ctx.level)
        };
        let ds = b.create("data").map_err(e)?;
        ds.write_raw(&ctx.volume).map_err(e)?;
        f.close().map_err(e)?;
        Ok(0)
    }
}

// ---------------------------------------------------------------- hdf5-reader

mod reader {
    use super::*;
    use hdf5_reader::{Hdf5File, OpenOptions, SliceInfo, SliceInfoElem};

    pub fn full(ctx: &Ctx, p: &Path) -> Outcome {
        let f = Hdf5File::open(p).map_err(e)?;
        let ds = f.dataset("/data").map_err(e)?;
        let a = if ctx.threads > 1 {
            ds.read_array_parallel::<i16>().map_err(e)?
        } else {
            ds.read_array::<i16>().map_err(e)?
        };
        Ok(checksum(
            a.as_slice().ok_or("array not in standard layout")?,
        ))
    }

    pub fn patches(ctx: &Ctx, p: &Path, cache: bool) -> Outcome {
        let opts = OpenOptions::default()
            .with_chunk_cache_bytes(if cache { 64 << 20 } else { 0 })
            .with_chunk_cache_slots(if cache { 521 } else { 0 });
        let f = Hdf5File::open_with_options(p, opts).map_err(e)?;
        let ds = f.dataset("/data").map_err(e)?;
        let n = ctx.patch;
        let mut s = 0i64;
        for o in &ctx.patches {
            let sel = SliceInfo {
                selections: o
                    .iter()
                    .map(|&a| SliceInfoElem::Slice {
                        start: a,
                        end: a + n,
                        step: 1,
                    })
                    .collect(),
            };
            let a = if ctx.threads > 1 {
                ds.read_slice_parallel::<i16>(&sel).map_err(e)?
            } else {
                ds.read_slice::<i16>(&sel).map_err(e)?
            };
            let v: Vec<i16> = a.iter().copied().collect();
            s = s.wrapping_add(checksum(&v));
        }
        Ok(s)
    }

    fn walk_group(
        g: &hdf5_reader::group::Group,
        count: &mut i64,
        elems: &mut i64,
    ) -> Result<(), String> {
        let (groups, datasets) = g.members().map_err(e)?;
        for d in &datasets {
            *count += 1;
            *elems += d.shape().iter().product::<u64>() as i64;
        }
        for sub in &groups {
            walk_group(sub, count, elems)?;
        }
        Ok(())
    }

    pub fn walk(p: &Path) -> Outcome {
        let f = Hdf5File::open(p).map_err(e)?;
        let (mut c, mut n) = (0, 0);
        walk_group(&f.root_group().map_err(e)?, &mut c, &mut n)?;
        Ok(c * 1_000_000 + n)
    }
}

// ---------------------------------------------------------------- hdf5-pure

mod pure {
    use super::*;
    use hdf5_pure::{ChunkCacheConfig, File, FileAccessProperties, FileBuilder};

    pub fn full(p: &Path) -> Outcome {
        let f = File::open(p).map_err(e)?;
        let v = f.dataset("data").map_err(e)?.read_i16().map_err(e)?;
        Ok(checksum(&v))
    }

    /// No N-d selection in the API: the rows `z..z+n` are read and cropped.
    pub fn patches(ctx: &Ctx, p: &Path, cache: bool) -> Outcome {
        let cfg = if cache {
            ChunkCacheConfig::new()
                .with_max_bytes(64 << 20)
                .with_max_slots(521)
        } else {
            ChunkCacheConfig::disabled()
        };
        let f = File::open_with_options(p, FileAccessProperties::new().with_chunk_cache(cfg))
            .map_err(e)?;
        let ds = f.dataset("data").map_err(e)?;
        let n = ctx.patch as usize;
        let (ny, nx) = (ctx.shape[1] as usize, ctx.shape[2] as usize);
        let mut s = 0i64;
        let mut v = Vec::with_capacity(n * n * n);
        for o in &ctx.patches {
            let rows = ds.read_i16_rows(o[0], n as u64).map_err(e)?;
            v.clear();
            let (y0, x0) = (o[1] as usize, o[2] as usize);
            for z in 0..n {
                for y in y0..y0 + n {
                    let base = (z * ny + y) * nx;
                    v.extend_from_slice(&rows[base + x0..base + x0 + n]);
                }
            }
            s = s.wrapping_add(checksum(&v));
        }
        Ok(s)
    }

    fn walk_group(g: &hdf5_pure::Group, count: &mut i64, elems: &mut i64) -> Result<(), String> {
        for d in g.datasets().map_err(e)? {
            let ds = g.dataset(&d).map_err(e)?;
            *count += 1;
            *elems += ds.shape().map_err(e)?.iter().product::<u64>() as i64;
        }
        for name in g.groups().map_err(e)? {
            walk_group(&g.group(&name).map_err(e)?, count, elems)?;
        }
        Ok(())
    }

    pub fn walk(p: &Path) -> Outcome {
        let f = File::open(p).map_err(e)?;
        let (mut c, mut n) = (0, 0);
        walk_group(&f.root(), &mut c, &mut n)?;
        Ok(c * 1_000_000 + n)
    }

    pub fn write(ctx: &Ctx, out: &Path, shuffle: bool) -> Outcome {
        let mut b = FileBuilder::new();
        let d = b.create_dataset("data");
        d.with_i16_data(&ctx.volume)
            .with_shape(&ctx.shape)
            .with_chunks(&ctx.chunk);
        if shuffle {
            d.with_shuffle();
        }
        d.with_deflate(ctx.level);
        b.write(out).map_err(e)?;
        Ok(0)
    }
}

// ---------------------------------------------------------------- driver

fn get_u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: {} <dir> <threads> [reps] [libs] [cells]", args[0]);
        std::process::exit(2);
    }
    let dir = PathBuf::from(&args[1]);
    let threads: usize = args[2].parse().expect("threads");
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let libs: Vec<String> = args
        .get(4)
        .map(|s| s.split(',').map(String::from).collect())
        .unwrap_or_else(|| {
            ["purehdf", "rust-hdf5", "hdf5-reader", "hdf5-pure"]
                .map(String::from)
                .to_vec()
        });
    let cells: Option<Vec<String>> = args
        .get(5)
        .map(|s| s.split(',').map(String::from).collect());
    let want = |c: &str| cells.as_ref().is_none_or(|v| v.iter().any(|x| x == c));

    let m: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("manifest.json")).expect("manifest.json"),
    )
    .expect("manifest");
    let mut ctx = Ctx {
        dir: dir.clone(),
        shape: get_u64s(&m["shape"]),
        chunk: get_u64s(&m["chunk"]),
        patch: m["patch"].as_u64().unwrap_or(64),
        patches: m["patches"]
            .as_array()
            .map(|a| a.iter().map(get_u64s).collect())
            .unwrap_or_default(),
        level: m["level"].as_u64().unwrap_or(4) as u32,
        threads,
        volume: Vec::new(),
    };
    purehdf::set_threads(threads).expect("threads");
    // The write cells' input, read once (untimed) from the contiguous file.
    ctx.volume = purehdf::File::open(ctx.file("contiguous.h5"))
        .and_then(|f| f.root()?.dataset("data")?.read())
        .expect("volume");
    let expect = |k: &str| m["expect"][k].as_i64().unwrap_or(i64::MIN);

    let reads = [
        ("contiguous", "contiguous.h5"),
        ("shuffle_deflate", "shuffle_deflate.h5"),
        ("gzip", "gzip.h5"),
        ("lz4", "lz4.h5"),
        ("zstd", "zstd.h5"),
    ];
    let full_expect = expect("full");
    let patch_file = ctx.file("shuffle_deflate.h5");
    let walk_file = ctx.file("walk.h5");
    let pr = reps.div_ceil(2).max(2);
    for lib in &libs {
        let lib = lib.as_str();
        for (cell, file) in reads {
            let name = format!("read_{cell}");
            if !want(&name) {
                continue;
            }
            let c = Cell {
                name: &name,
                expect: full_expect,
            };
            let p = ctx.file(file);
            match lib {
                "purehdf" => run(lib, &c, &ctx, reps, "", || ours::full(&p)),
                "rust-hdf5" => run(lib, &c, &ctx, reps, "", || rusthdf5::full(&p)),
                "hdf5-reader" => run(lib, &c, &ctx, reps, "", || reader::full(&ctx, &p)),
                "hdf5-pure" => run(lib, &c, &ctx, reps, "", || pure::full(&p)),
                _ => {}
            }
        }
        for cache in [true, false] {
            let name = if cache {
                "patches_cache_on"
            } else {
                "patches_cache_off"
            };
            if !want(name) {
                continue;
            }
            let c = Cell {
                name,
                expect: expect("patches"),
            };
            match lib {
                "purehdf" => {
                    let note = if cache {
                        "Dataset::read_slice"
                    } else {
                        "Dataset::read_raw_uncached"
                    };
                    run(lib, &c, &ctx, pr, note, || {
                        ours::patches(&ctx, &patch_file, cache)
                    })
                }
                "rust-hdf5" => run(
                    lib,
                    &c,
                    &ctx,
                    pr,
                    "read_slice; no chunk-cache setting in the API (same call both rows)",
                    || rusthdf5::patches(&ctx, &patch_file),
                ),
                "hdf5-reader" => run(lib, &c, &ctx, pr, "", || {
                    reader::patches(&ctx, &patch_file, cache)
                }),
                "hdf5-pure" => run(
                    lib,
                    &c,
                    &ctx,
                    pr,
                    "no N-d selection API: read_i16_rows + crop",
                    || pure::patches(&ctx, &patch_file, cache),
                ),
                _ => {}
            }
        }
        if want("walk") {
            let c = Cell {
                name: "walk",
                expect: expect("walk"),
            };
            match lib {
                "purehdf" => run(lib, &c, &ctx, reps, "", || ours::walk(&walk_file)),
                "rust-hdf5" => run(lib, &c, &ctx, reps, "", || rusthdf5::walk(&walk_file)),
                "hdf5-reader" => run(lib, &c, &ctx, reps, "", || reader::walk(&walk_file)),
                "hdf5-pure" => run(lib, &c, &ctx, reps, "", || pure::walk(&walk_file)),
                _ => {}
            }
        }
        for shuffle in [true, false] {
            let name = if shuffle {
                "write_shuffle_deflate"
            } else {
                "write_gzip"
            };
            if !want(name) {
                continue;
            }
            let out = ctx.file(&format!("out_{lib}_{name}.h5"));
            let _ = std::fs::remove_file(&out);
            let c = Cell {
                name,
                expect: full_expect,
            };
            // Timed: the write; then (untimed) read back, checked against h5py's checksum.
            let check = || -> Outcome {
                let v: Vec<i16> = purehdf::File::open(&out)
                    .and_then(|f| f.root()?.dataset("data")?.read())
                    .map_err(e)?;
                if let Ok(md) = std::fs::metadata(&out) {
                    eprintln!("{lib} {name}: {} bytes", md.len());
                }
                Ok(checksum(&v))
            };
            let post: Option<&dyn Fn() -> Outcome> = Some(&check);
            let rm = || {
                let _ = std::fs::remove_file(&out);
            };
            match lib {
                "purehdf" => run_post(
                    lib,
                    &c,
                    &ctx,
                    pr,
                    "",
                    || {
                        rm();
                        ours::write(&ctx, &out, shuffle)
                    },
                    post,
                ),
                "rust-hdf5" => run_post(
                    lib,
                    &c,
                    &ctx,
                    pr,
                    "",
                    || {
                        rm();
                        rusthdf5::write(&ctx, &out, shuffle)
                    },
                    post,
                ),
                "hdf5-pure" => run_post(
                    lib,
                    &c,
                    &ctx,
                    pr,
                    "",
                    || {
                        rm();
                        pure::write(&ctx, &out, shuffle)
                    },
                    post,
                ),
                "hdf5-reader" => na(lib, name, &ctx, "read-only crate"),
                _ => {}
            }
        }
    }
}
