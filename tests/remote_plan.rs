//! Remote reads planned and cached: every read through a fetcher (and through
//! the no-fetcher drive loop) equals the local read, and opening, listing and
//! reading a medh5 sample takes the few requests issue 41 promises, counted
//! by an in-memory fetcher.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use purehdf::low_level::fetch::{drive, ByteRange, Fetch, RangeOptions, RangeSource};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::source::Source;
use purehdf::Error;

/// How a [`Counting`] fetcher misbehaves.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// Every response one byte short, from the given call on.
    ShortFrom(usize),
    /// `StaleSnapshot` from the given call on.
    StaleFrom(usize),
}

/// An object in memory, counting calls, ranges (requests) and bytes.
struct Counting {
    bytes: Arc<[u8]>,
    len: u64,
    calls: AtomicUsize,
    requests: AtomicUsize,
    fetched: AtomicU64,
    log: Mutex<Vec<Vec<ByteRange>>>,
    fault: Fault,
}

impl Counting {
    fn new(bytes: impl Into<Arc<[u8]>>) -> Self {
        let bytes = bytes.into();
        Counting {
            len: bytes.len() as u64,
            bytes,
            calls: AtomicUsize::new(0),
            requests: AtomicUsize::new(0),
            fetched: AtomicU64::new(0),
            log: Mutex::new(Vec::new()),
            fault: Fault::None,
        }
    }

    fn counts(&self) -> (usize, usize, u64) {
        (
            self.calls.load(Ordering::SeqCst),
            self.requests.load(Ordering::SeqCst),
            self.fetched.load(Ordering::SeqCst),
        )
    }

    fn serve(&self, ranges: &[ByteRange]) -> purehdf::Result<Vec<Vec<u8>>> {
        ranges
            .iter()
            .map(|r| {
                let s = usize::try_from(r.offset).ok();
                let e = r.end().and_then(|e| usize::try_from(e).ok());
                match (s, e) {
                    (Some(s), Some(e)) if e <= self.bytes.len() => Ok(self.bytes[s..e].to_vec()),
                    _ => Err(Error::Remote {
                        url: self.describe(),
                        range: format!("{}+{}", r.offset, r.len),
                        reason: "416 range not satisfiable".into(),
                    }),
                }
            })
            .collect()
    }
}

impl Fetch for Counting {
    fn len(&self) -> u64 {
        self.len
    }
    fn describe(&self) -> String {
        "mem://sample.h5".into()
    }
    fn fetch(&self, ranges: &[ByteRange]) -> purehdf::Result<Vec<Vec<u8>>> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        self.requests.fetch_add(ranges.len(), Ordering::SeqCst);
        let total: u64 = ranges.iter().map(|r| r.len).sum();
        self.fetched.fetch_add(total, Ordering::SeqCst);
        self.log.lock().unwrap().push(ranges.to_vec());
        match self.fault {
            Fault::StaleFrom(n) if call >= n => {
                return Err(Error::StaleSnapshot("mem://sample.h5 was replaced".into()))
            }
            _ => {}
        }
        let mut got = self.serve(ranges)?;
        if matches!(self.fault, Fault::ShortFrom(n) if call >= n) {
            for b in &mut got {
                b.pop();
            }
        }
        Ok(got)
    }
}

/// An object's path and kind, and its raw bytes (datasets) or a failed read.
type Entry = (String, Result<Vec<u8>, ()>);

/// What a file holds, read every way the tests compare: every object's path
/// and kind, and every dataset's raw bytes (or that reading it failed).
fn digest(file: &File) -> purehdf::Result<Vec<Entry>> {
    let mut out = Vec::new();
    file.root()?.visit(|path, obj| {
        let data = match obj {
            Object::Dataset(d) => d.read_all_raw().map_err(|_| ()),
            _ => Ok(Vec::new()),
        };
        out.push((format!("{path} {}", obj.kind_name()), data));
        Ok(())
    })?;
    Ok(out)
}

/// The digest of `bytes` read through a fetcher and through the no-fetcher
/// drive loop, both compared with the local read.
fn check_same(bytes: Vec<u8>, what: &str, opts: &RangeOptions) -> usize {
    let Ok(local) = File::from_bytes(bytes.clone()).and_then(|f| digest(&f)) else {
        return 0;
    };
    let counting = Arc::new(Counting::new(bytes));
    let remote = File::open_fetch(counting.clone(), opts.clone())
        .and_then(|f| digest(&f))
        .unwrap_or_else(|e| panic!("{what}: remote open: {e}"));
    if std::env::var_os("REMOTE_PLAN_DEBUG").is_some() {
        let (calls, requests, bytes) = counting.counts();
        eprintln!(
            "counts {calls} calls {requests} requests {bytes} of {} bytes: {what}",
            counting.len()
        );
    }
    assert_eq!(remote.len(), local.len(), "{what}: objects");
    for (l, r) in local.iter().zip(&remote) {
        assert_eq!(l.0, r.0, "{what}");
        assert_eq!(l.1, r.1, "{what}: {}", l.0);
    }
    // Without a fetcher an operation restarts until all it reads is held: the
    // whole-file digest needs room for all of its metadata and data, and
    // every metadata miss that depends on the one before is a round of its
    // own (1000 object headers in 512-byte blocks would pass DRIVE_ROUNDS).
    let hosted_opts = RangeOptions {
        block_size: opts.block_size.max(16 << 10),
        cache_bytes: opts.cache_bytes.max(4 << 20),
        window_bytes: opts.window_bytes.max(16 << 20),
        ..opts.clone()
    };
    let src = Arc::new(
        RangeSource::without_fetcher(counting.len(), "host://sample", hosted_opts).unwrap(),
    );
    let dyn_src: Arc<dyn Source> = src.clone();
    let hosted = drive(
        &src,
        |r| {
            if std::env::var_os("REMOTE_PLAN_DEBUG").is_some() {
                eprintln!("{what}: asks {r:?}");
            }
            counting.serve(r)
        },
        || File::from_source(dyn_src.clone(), None).and_then(|f| digest(&f)),
    )
    .unwrap_or_else(|e| panic!("{what}: no-fetcher open: {e}"));
    assert_eq!(hosted, local, "{what}: no-fetcher reads");
    local.len()
}

/// Small blocks, caps and windows, so that files of a few KiB already take
/// several blocks, requests and windows.
fn tight() -> RangeOptions {
    RangeOptions {
        block_size: 512,
        cache_bytes: 8 << 10,
        first_read: 1024,
        tail_read: 0,
        coalesce_gap: 256,
        max_request: 4 << 10,
        in_flight: 4,
        window_bytes: 16 << 10,
        // steps of half a window: the next fetched while the last decodes
        pipeline_step: 8 << 10,
    }
}

#[test]
fn golden_files_read_remotely_as_locally() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "h5") {
            let bytes = std::fs::read(&p).unwrap();
            for opts in [RangeOptions::default(), tight()] {
                n += check_same(bytes.clone(), &p.display().to_string(), &opts);
            }
        }
    }
    assert!(n > 10, "only {n} objects compared");
}

#[test]
fn corpus_files_read_remotely_as_locally() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let Ok(manifest) = std::fs::read_to_string(root.join("MANIFEST.tsv")) else {
        println!("skipped: ../shared/corpus absent");
        return;
    };
    let files: Vec<PathBuf> = manifest
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .map(|rel| root.join(rel))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() <= 4 << 20))
        .collect();
    let (mut files_n, mut objects) = (0, 0);
    // A deterministic spread of the corpus (every file under 4 MiB would
    // take minutes in a debug build); REMOTE_PLAN_ALL=1 reads them all.
    let step = if std::env::var_os("REMOTE_PLAN_ALL").is_some() {
        1
    } else {
        7
    };
    for (i, p) in files.iter().enumerate() {
        if i % step != 0 {
            continue;
        }
        let bytes = std::fs::read(p).unwrap();
        let opts = if i % 2 == 0 {
            RangeOptions::default()
        } else {
            tight()
        };
        objects += check_same(bytes, &p.display().to_string(), &opts);
        files_n += 1;
    }
    println!("corpus: {files_n} files, {objects} objects compared");
    assert!(
        files_n > 20 && objects > 100,
        "{files_n} files, {objects} objects"
    );
}

/// The 128³ sample with a labelmap: its bytes and the CT's raw bytes.
fn sample_bytes() -> (Vec<u8>, Vec<u8>) {
    common::samples::textured_ct([128, 128, 128], true)
}

/// Open a sample and list it the way `medh5 ls`/`info` need: the
/// self-containment check (every object header), root attributes, the
/// `/meta` document and the members of the sample's groups.
fn list(file: &File) -> purehdf_medh5::Result<usize> {
    purehdf_medh5::self_contained::check(file, "remote")?;
    let s = purehdf_medh5::Sample::from_file(file.clone());
    let mut n = s.root_attrs()?.len();
    s.document()?;
    for g in ["/grids", "/images", "/annotations"] {
        n += s.members(g)?.len();
    }
    Ok(n)
}

#[test]
fn medh5_sample_open_list_patch_and_full_read_take_few_requests() {
    let (bytes, raw) = sample_bytes();
    let local = File::from_bytes(bytes.clone()).unwrap();
    let listed = list(&local).unwrap();
    let ct = local.object("/images/CT").unwrap();
    let Object::Dataset(ct) = ct else {
        panic!("CT is not a dataset")
    };
    let stored = ct.storage_size().unwrap();
    println!(
        "sample: {} bytes, CT stored {stored} bytes in chunks {:?}",
        bytes.len(),
        ct.chunk_dims()
    );

    let fetch = Arc::new(Counting::new(bytes.clone()));
    let file = File::open_fetch(fetch.clone(), RangeOptions::default()).unwrap();
    assert_eq!(list(&file).unwrap(), listed);
    let (calls, requests, fetched) = fetch.counts();
    println!("open+list: {calls} calls, {requests} requests, {fetched} bytes");
    assert!(requests <= 3, "open+list: {requests} requests");
    assert!(fetched < 2 << 20, "open+list fetched {fetched} bytes");

    let Object::Dataset(ct) = file.object("/images/CT").unwrap() else {
        panic!()
    };
    let sel = purehdf::low_level::selection::Selection::Hyperslab {
        start: vec![32, 40, 48],
        count: vec![64, 64, 64],
    };
    let patch = ct.read_raw_vec(&sel).unwrap();
    let (c2, r2, f2) = fetch.counts();
    println!(
        "64³ patch: {} calls, {} requests, {} bytes",
        c2 - calls,
        r2 - requests,
        f2 - fetched
    );
    assert!(r2 - requests <= 2, "patch: {} requests", r2 - requests);
    let want: Vec<u8> = local_patch(&raw, [128, 128, 128], [32, 40, 48], [64, 64, 64]);
    assert_eq!(patch, want);

    // The full read on a handle whose requests are capped small enough
    // for the cap to matter.
    let max_request = 256u64 << 10;
    let opts = RangeOptions {
        max_request,
        ..RangeOptions::default()
    };
    let fetch = Arc::new(Counting::new(bytes.clone()));
    let file = File::open_fetch(fetch.clone(), opts).unwrap();
    let Object::Dataset(ct) = file.object("/images/CT").unwrap() else {
        panic!()
    };
    let (_, r2, f2) = fetch.counts();
    let all = ct.read_all_raw().unwrap();
    assert_eq!(all, raw);
    let (_, r3, f3) = fetch.counts();
    let full = (r3 - r2) as u64;
    println!("full CT: {full} requests, {} bytes", f3 - f2);
    assert!(
        full <= stored / max_request + 2,
        "full read: {full} requests for {stored} stored bytes"
    );
    assert!(
        f3 - f2 <= stored + max_request,
        "full read fetched {}",
        f3 - f2
    );
    for call in &fetch.log.lock().unwrap()[1..] {
        assert!(call.iter().all(|r| r.len <= max_request), "{call:?}");
    }
}

#[test]
fn windows_bound_what_one_batch_fetches() {
    let (bytes, raw) = sample_bytes();
    let window = 1200u64 << 10;
    let opts = RangeOptions {
        window_bytes: window,
        max_request: 128 << 10,
        ..RangeOptions::default()
    };
    let fetch = Arc::new(Counting::new(bytes));
    let file = File::open_fetch(fetch.clone(), opts).unwrap();
    let Object::Dataset(ct) = file.object("/images/CT").unwrap() else {
        panic!()
    };
    let largest_chunk = 600u64 << 10; // the sample's chunks compress to ~560 KB
    let (c0, _, _) = fetch.counts();
    assert_eq!(ct.read_all_raw().unwrap(), raw);
    let batches: Vec<u64> = fetch.log.lock().unwrap()[c0..]
        .iter()
        .map(|c| c.iter().map(|r| r.len).sum())
        .collect();
    println!("window batches: {batches:?}");
    assert!(batches.len() >= 2, "{batches:?}");
    assert!(
        batches.iter().all(|&b| b <= window.max(largest_chunk)),
        "{batches:?}"
    );
    // Contiguous data too: every contiguous dataset equals the local read.
    let local = File::from_bytes(fetch.bytes.to_vec()).unwrap();
    let mut n = 0;
    local
        .root()
        .unwrap()
        .visit(|path, obj| {
            if let Object::Dataset(d) = obj {
                if d.chunk_dims().is_none() {
                    let Object::Dataset(r) = file.object(&format!("/{path}")).unwrap() else {
                        panic!()
                    };
                    assert_eq!(
                        r.read_all_raw().unwrap(),
                        d.read_all_raw().unwrap(),
                        "{path}"
                    );
                    n += 1;
                }
            }
            Ok(())
        })
        .unwrap();
    assert!(n > 0, "no contiguous dataset compared");
}

fn local_patch(raw: &[u8], dims: [usize; 3], start: [usize; 3], count: [usize; 3]) -> Vec<u8> {
    let mut out = Vec::new();
    for z in start[0]..start[0] + count[0] {
        for y in start[1]..start[1] + count[1] {
            let at = ((z * dims[1] + y) * dims[2] + start[2]) * 2;
            out.extend_from_slice(&raw[at..at + count[2] * 2]);
        }
    }
    out
}

#[test]
fn medh5_sample_through_the_no_fetcher_loop() {
    let (bytes, raw) = sample_bytes();
    let counting = Counting::new(bytes);
    let src = Arc::new(
        RangeSource::without_fetcher(counting.len(), "host://s", RangeOptions::default()).unwrap(),
    );
    let dyn_src: Arc<dyn Source> = src.clone();
    let mut rounds = 0;
    let file = drive(
        &src,
        |r| {
            rounds += 1;
            counting.serve(r)
        },
        || File::from_source(dyn_src.clone(), None),
    )
    .unwrap();
    let listed = drive(
        &src,
        |r| {
            rounds += 1;
            counting.serve(r)
        },
        || list(&file).map_err(|e| Error::InvalidArgument(e.to_string())),
    );
    // `list` maps its errors; the drive loop still sees the missed ranges.
    assert!(listed.unwrap() > 3);
    println!("open+list: {rounds} rounds");
    assert!(rounds <= 3, "{rounds} rounds to open and list");
    let Object::Dataset(ct) = file.object("/images/CT").unwrap() else {
        panic!()
    };
    let before = rounds;
    let all = drive(
        &src,
        |r| {
            rounds += 1;
            counting.serve(r)
        },
        || ct.read_all_raw(),
    )
    .unwrap();
    assert_eq!(all, raw);
    assert_eq!(
        rounds - before,
        1,
        "a full read asks for all its data at once"
    );
    // Released after the read: only the metadata blocks stay.
    assert!(src.held_bytes() <= RangeOptions::default().cache_bytes);
}

#[test]
fn needed_ranges_are_found_through_chunk_errors() {
    let (bytes, _) = sample_bytes();
    let counting = Counting::new(bytes);
    let src = Arc::new(
        RangeSource::without_fetcher(counting.len(), "host://s", RangeOptions::default()).unwrap(),
    );
    let dyn_src: Arc<dyn Source> = src.clone();
    let e = File::from_source(dyn_src, None).unwrap_err();
    let r = e.needed_ranges().expect("open needs bytes").to_vec();
    // The first request asks for the head and the tail together.
    assert_eq!(r.len(), 2, "{r:?}");
    assert_eq!(r[0].offset, 0);
    assert_eq!(r[1].end(), Some(counting.len()));
    let wrapped = Error::Chunk {
        dataset: "/x".into(),
        coords: vec![0],
        source: Box::new(Error::NeedBytes(r.clone())),
    };
    assert_eq!(wrapped.needed_ranges(), Some(&r[..]));
    assert_eq!(Error::NotFound("x".into()).needed_ranges(), None);
    // Supplying the wrong length is a typed error naming the object.
    let e = src.supply(r[0], vec![0u8; 3]).unwrap_err();
    assert!(
        matches!(&e, Error::Remote { url, .. } if url == "host://s"),
        "{e}"
    );
}

#[test]
fn short_responses_are_typed_errors_naming_url_and_range() {
    let (bytes, _) = sample_bytes();
    let mut c = Counting::new(bytes.clone());
    c.fault = Fault::ShortFrom(0);
    let e = File::open_fetch(Arc::new(c), RangeOptions::default()).unwrap_err();
    match &e {
        Error::Remote { url, range, reason } => {
            assert_eq!(url, "mem://sample.h5");
            assert!(range.starts_with("0-"), "{range}");
            assert!(reason.contains("bytes for a range of"), "{reason}");
        }
        other => panic!("not a remote error: {other}"),
    }
    // Short responses to a later data read fail that read the same way.
    let mut c = Counting::new(bytes);
    c.fault = Fault::ShortFrom(1);
    let file = File::open_fetch(Arc::new(c), RangeOptions::default()).unwrap();
    let Object::Dataset(ct) = file.object("/images/CT").unwrap() else {
        panic!()
    };
    let e = ct.read_all_raw().unwrap_err();
    assert!(matches!(e, Error::Remote { .. }), "{e}");
}

#[test]
fn stale_snapshot_passes_through_unchanged() {
    let (bytes, _) = sample_bytes();
    let mut c = Counting::new(bytes);
    c.fault = Fault::StaleFrom(1);
    let file = File::open_fetch(Arc::new(c), RangeOptions::default()).unwrap();
    let Object::Dataset(ct) = file.object("/images/CT").unwrap() else {
        panic!()
    };
    let e = ct.read_all_raw().unwrap_err();
    assert!(
        matches!(&e, Error::StaleSnapshot(m) if m.contains("replaced")),
        "{e}"
    );
}

#[test]
fn hostile_length_never_fetches_or_allocates_beyond_its_budget() {
    let (bytes, _) = sample_bytes();
    let mut c = Counting::new(bytes);
    c.len = u64::MAX;
    let c = Arc::new(c);
    let r = File::open_fetch(c.clone(), RangeOptions::default());
    // The tail of a 16 EiB object is not there: a typed error, not a panic.
    assert!(matches!(r, Err(Error::Remote { .. })), "{r:?}");
    let (calls, _, fetched) = c.counts();
    assert_eq!(calls, 1);
    assert!(fetched <= 1 << 20, "fetched {fetched} bytes");
    // Without a tail read the head opens the file; reads past the real
    // bytes fail typed, and nothing sized by the length is allocated.
    let opts = RangeOptions {
        tail_read: 0,
        ..RangeOptions::default()
    };
    let src = Arc::new(RangeSource::new(c.clone(), opts).unwrap());
    assert!(src.read("probe", u64::MAX - 10, 4).is_err());
    assert!(src.read("probe", 1 << 60, 2 << 30).is_err());
    assert!(src.held_bytes() <= RangeOptions::default().cache_bytes);
}
