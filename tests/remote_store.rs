//! Remote reads against real servers on loopback, started by the tests:
//! moto's S3 server (`tests/remote/moto_s3.py`), an HTTP range server
//! (`tests/remote/range_server.py`) and fault-injecting proxies in front of
//! them (`tests/remote/fault_proxy.py`), which also count the requests and
//! bytes served. Needs the oracle venv (moto, boto3); prints `skipped:` and
//! passes without it.
//!
//! `PUREHDF_REMOTE_ALL=1` dumps every corpus file over S3 instead of a
//! sample of 40.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use purehdf::low_level::file::Object;
use purehdf::low_level::messages::link::Link;
use purehdf::low_level::remote::{set_default_options, upload_file, RemoteOptions};
use purehdf::{Error, File};
use serde_json::Value;

const BUCKET: &str = "data";

/// A server process started by a test; killed when dropped.
struct Proc {
    child: Child,
    port: u16,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Start `python script args...` and wait for its `PORT n` line.
fn spawn(python: &Path, script: &str, args: &[&str]) -> Proc {
    let mut child = Command::new(python)
        .arg(here().join("tests/remote").join(script))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {script}: {e}"));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{script} did not start: {line:?}"));
    Proc { child, port }
}

/// The shared servers: moto, a counting proxy in front of it (never faulted),
/// and a range server over a folder of test files.
struct Env {
    python: PathBuf,
    moto: Proc,
    s3: Proc,
    http: Proc,
    http_root: PathBuf,
    scratch: PathBuf,
}

impl Env {
    fn s3_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.s3.port)
    }
    fn http_url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.http.port)
    }
    /// A fresh fault proxy in front of moto.
    fn moto_proxy(&self) -> Proc {
        spawn(
            &self.python,
            "fault_proxy.py",
            &[&format!("127.0.0.1:{}", self.moto.port)],
        )
    }
    /// A fresh fault proxy in front of the range server.
    fn http_proxy(&self) -> Proc {
        spawn(
            &self.python,
            "fault_proxy.py",
            &[&format!("127.0.0.1:{}", self.http.port)],
        )
    }
}

fn venv_python() -> Option<PathBuf> {
    let py = common::oracle_python()?;
    let ok = Command::new(&py)
        .args(["-c", "import moto.server, boto3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(py)
}

fn env() -> Option<&'static Env> {
    static ENV: OnceLock<Option<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let python = venv_python()?;
        let scratch = std::env::temp_dir().join(format!("purehdf-remote-{}", std::process::id()));
        let http_root = scratch.join("http");
        std::fs::create_dir_all(&http_root).unwrap();
        let golden = "sb2_v108.h5";
        std::fs::copy(
            here().join("tests/golden").join(golden),
            http_root.join(golden),
        )
        .unwrap();
        if let Some(s) = common::shared_dir() {
            let v = s.join("vectors/medh5");
            for f in common::medh5_files(&v) {
                std::fs::copy(&f, http_root.join(f.file_name().unwrap())).unwrap();
            }
        }
        let moto = spawn(&python, "moto_s3.py", &[BUCKET]);
        let s3 = spawn(
            &python,
            "fault_proxy.py",
            &[&format!("127.0.0.1:{}", moto.port)],
        );
        let http = spawn(&python, "range_server.py", &[http_root.to_str().unwrap()]);
        let e = Env {
            python,
            moto,
            s3,
            http,
            http_root,
            scratch,
        };
        set_default_options(s3_opts(&e.s3_endpoint()));
        Some(e)
    })
    .as_ref()
}

macro_rules! env_or_skip {
    () => {
        match env() {
            Some(e) => e,
            None => {
                println!("skipped: no oracle venv with moto (scripts/oracle-venv.sh)");
                return;
            }
        }
    };
}

/// Library options against a loopback endpoint: unsigned requests (moto
/// does not check signatures), short timeouts so a fault never hangs.
/// `opts` reading in small pieces: the first request and the block cache
/// hold only the superblock's block, so every later read of these small test
/// files goes to the server (where faults and replacements happen).
fn piecewise(mut opts: RemoteOptions) -> RemoteOptions {
    opts.range.block_size = 512;
    opts.range.first_read = 512;
    opts.range.tail_read = 0;
    opts.range.cache_bytes = 1024;
    opts
}

fn s3_opts(endpoint: &str) -> RemoteOptions {
    RemoteOptions {
        endpoint: Some(endpoint.to_string()),
        anonymous: true,
        retries: 3,
        backoff: Duration::from_millis(20),
        timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(2),
        retry_timeout: Duration::from_secs(20),
        ..RemoteOptions::default()
    }
}

/// A tiny GET over a TcpStream (the control URLs of the test servers).
fn http_get(url: &str) -> String {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(
        s,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

fn stats(p: &Proc) -> Value {
    serde_json::from_str(&http_get(&format!("http://127.0.0.1:{}/__stats", p.port))).unwrap()
}

fn fault(p: &Proc, query: &str) {
    assert_eq!(
        http_get(&format!("http://127.0.0.1:{}/__fault?{query}", p.port)),
        "ok"
    );
}

fn bin(name: &str) -> Command {
    let mut c = Command::new(match name {
        "h5" => env!("CARGO_BIN_EXE_h5"),
        _ => env!("CARGO_BIN_EXE_medh5"),
    });
    c.env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_CONFIG_FILE", "/nonexistent")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_ENDPOINT_URL");
    c
}

fn s3_url(key: &str) -> String {
    format!("s3://{BUCKET}/{key}")
}

fn without_file(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("file");
        o.remove("path");
    }
    v
}

/// Each dataset's path and bytes.
type Contents = Vec<(String, Vec<u8>)>;

/// Every dataset of `f` read whole, by path.
fn read_all(f: &File) -> Result<Contents, Error> {
    let mut out = Vec::new();
    let mut stack = vec![f.root()?];
    while let Some(g) = stack.pop() {
        for (name, link) in g.links()? {
            // Hard links only: soft and external ones may dangle.
            let Link::Hard(addr) = link else { continue };
            let path = purehdf::low_level::link::join_path(g.path(), &name);
            match f.object_at(addr, path.clone())? {
                Object::Group(cg) => stack.push(cg),
                // Null and empty dataspaces hold no bytes to compare.
                Object::Dataset(d) if d.num_elements() == 0 => {}
                Object::Dataset(d) => {
                    let sel = purehdf::low_level::selection::Selection::All;
                    out.push((path, d.read_raw_vec(&sel)?));
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

/// The lines of a dump, where a missing external file (named by its local
/// path or its URL, as each reader tried it) reads the same.
fn missing_named(b: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(b)
        .lines()
        .map(
            |l| match l.split_once("\"error\": \"not found: external file") {
                Some((indent, _)) => format!("{indent}\"error\": \"not found: external file ..."),
                None => l.to_string(),
            },
        )
        .collect()
}

#[test]
fn dump_json_over_s3_equals_the_local_dump() {
    let env = env_or_skip!();
    let Some(dir) = common::corpus_dir() else {
        println!("skipped: no shared corpus");
        return;
    };
    let rows: Vec<common::Row> = common::read_manifest(&dir);
    // Virtual datasets and external raw storage name files beside the
    // object: their folder goes to the store with them.
    let mut folders_sent: Vec<PathBuf> = Vec::new();
    let all = std::env::var("PUREHDF_REMOTE_ALL").is_ok_and(|v| v == "1");
    let step = if all { 1 } else { (rows.len() / 40).max(1) };
    let sample: Vec<&common::Row> = rows.iter().step_by(step).collect();
    let before = stats(&env.s3);
    let t = Instant::now();
    let mut failures = Vec::new();
    for (i, row) in sample.iter().enumerate() {
        let rel = &row["path"];
        let local = dir.join(rel);
        let url = s3_url(&format!("corpus/{rel}"));
        upload_file(&local, &url, &s3_opts(&env.s3_endpoint())).unwrap();
        if row["layouts"].contains("virtual") || row["other_features"].contains("external_raw") {
            let folder = local.parent().unwrap().to_path_buf();
            if !folders_sent.contains(&folder) {
                let key = Path::new(rel.as_str()).parent().unwrap();
                for e in std::fs::read_dir(&folder).unwrap() {
                    let p = e.unwrap().path();
                    if p.is_file() {
                        let name = p.file_name().unwrap().to_str().unwrap();
                        let to = s3_url(&format!("corpus/{}/{name}", key.display()));
                        upload_file(&p, &to, &s3_opts(&env.s3_endpoint())).unwrap();
                    }
                }
                folders_sent.push(folder);
            }
        }
        let lines = |d: purehdf_cli::dump::walk::Dump| {
            let text = serde_json::to_string_pretty(&without_file(d.doc)).unwrap();
            missing_named(text.as_bytes())
        };
        let l = purehdf_cli::dump::walk::dump_file(&local).map(lines);
        let r = purehdf_cli::dump::walk::dump_file(&url).map(lines);
        match (l, r) {
            (Ok(l), Ok(r)) if l == r => {}
            (Err(_), Err(_)) => {}
            (l, r) => failures.push(format!(
                "{rel}: local {} / remote {}",
                l.map_or_else(|e| e.to_string(), |_| "dump".into()),
                r.map_or_else(|e| e.to_string(), |_| "a different dump".into())
            )),
        }
        // The command itself, byte for byte but for the file line, on a few.
        if i % 10 == 0 {
            let lo = bin("h5")
                .args(["dump", "--json"])
                .arg(&local)
                .output()
                .unwrap();
            let ro = bin("h5")
                .args(["dump", "--json", &url, "--endpoint", &env.s3_endpoint()])
                .output()
                .unwrap();
            let strip = |b: &[u8]| -> Vec<String> {
                missing_named(b)
                    .into_iter()
                    .filter(|l| !l.starts_with("  \"file\": "))
                    .collect()
            };
            assert_eq!(lo.status.code(), ro.status.code(), "{rel}");
            assert_eq!(strip(&lo.stdout), strip(&ro.stdout), "h5 dump --json {rel}");
            let first = String::from_utf8_lossy(&ro.stdout);
            assert!(
                lo.stdout.is_empty() || first.contains(&format!("\"file\": \"{url}\"")),
                "the remote dump names the URL"
            );
        }
    }
    let after = stats(&env.s3);
    println!(
        "dumped {} corpus files over S3 in {:.1} s; server side: {} requests, {} bytes (uploads included)",
        sample.len(),
        t.elapsed().as_secs_f64(),
        after["requests"].as_u64().unwrap() - before["requests"].as_u64().unwrap(),
        after["bytes"].as_u64().unwrap() - before["bytes"].as_u64().unwrap()
    );
    assert!(sample.len() >= 40 || all, "a sample of 40 files");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn medh5_verify_over_s3_equals_the_local_verdict() {
    let env = env_or_skip!();
    let Some(shared) = common::shared_dir() else {
        println!("skipped: no shared vectors");
        return;
    };
    let files = common::medh5_files(&shared.join("vectors/medh5"));
    assert!(files.len() >= 5, "the medh5 vectors");
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap();
        let url = s3_url(&format!("samples/{name}"));
        upload_file(f, &url, &s3_opts(&env.s3_endpoint())).unwrap();
        let lo = bin("medh5")
            .args(["verify", "--json"])
            .arg(f)
            .output()
            .unwrap();
        let ro = bin("medh5")
            .args(["verify", "--json", &url, "--endpoint", &env.s3_endpoint()])
            .output()
            .unwrap();
        assert_eq!(
            lo.status.code(),
            ro.status.code(),
            "{name}: {}",
            String::from_utf8_lossy(&ro.stderr)
        );
        let parse = |b: &[u8]| -> Value {
            let v: Value = serde_json::from_slice(b).unwrap();
            Value::Array(
                v.as_array()
                    .unwrap()
                    .iter()
                    .cloned()
                    .map(without_file)
                    .collect(),
            )
        };
        let (l, r) = (parse(&lo.stdout), parse(&ro.stdout));
        assert_eq!(l, r, "medh5 verify {name}");
        assert_eq!(
            serde_json::from_slice::<Value>(&ro.stdout).unwrap()[0]["path"],
            Value::String(url.clone())
        );
        // The library's front door as well.
        let s = purehdf_medh5::open_url(&url).unwrap();
        let local = purehdf_medh5::open(f).unwrap();
        assert_eq!(
            s.content_id().unwrap(),
            local.content_id().unwrap(),
            "{name}"
        );
    }
    println!("verified {} medh5 vectors over S3 as locally", files.len());
}

#[test]
fn ls_and_info_over_plain_http() {
    let env = env_or_skip!();
    let local = env.http_root.join("sb2_v108.h5");
    let lo = bin("h5").args(["ls", "-r"]).arg(&local).output().unwrap();
    let ro = bin("h5")
        .args(["ls", "-r", &env.http_url("sb2_v108.h5")])
        .output()
        .unwrap();
    assert!(
        ro.status.success(),
        "{}",
        String::from_utf8_lossy(&ro.stderr)
    );
    assert_eq!(lo.stdout, ro.stdout);
    assert!(!lo.stdout.is_empty());

    // h5 cat and h5 compare read URLs as paths.
    let (lnpy, rnpy) = (env.scratch.join("l.npy"), env.scratch.join("r.npy"));
    let url = env.http_url("sb2_v108.h5");
    let lo = bin("h5")
        .arg("cat")
        .arg(&local)
        .args(["/chunked", "--out"])
        .arg(&lnpy)
        .output()
        .unwrap();
    let ro = bin("h5")
        .args(["cat", &url, "/chunked", "--out"])
        .arg(&rnpy)
        .output()
        .unwrap();
    assert!(
        lo.status.success() && ro.status.success(),
        "{}",
        String::from_utf8_lossy(&ro.stderr)
    );
    assert_eq!(std::fs::read(&lnpy).unwrap(), std::fs::read(&rnpy).unwrap());
    let o = bin("h5")
        .args(["compare"])
        .arg(&local)
        .args([&url, "--metric", "exact"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));

    if env.http_root.join("v2_balanced.medh5").is_file() {
        let url = env.http_url("v2_balanced.medh5");
        let lo = bin("medh5")
            .args(["info", "--json"])
            .arg(env.http_root.join("v2_balanced.medh5"))
            .output()
            .unwrap();
        let ro = bin("medh5")
            .args(["info", "--json", &url])
            .output()
            .unwrap();
        assert!(
            ro.status.success(),
            "{}",
            String::from_utf8_lossy(&ro.stderr)
        );
        let l: Value = serde_json::from_slice(&lo.stdout).unwrap();
        let r: Value = serde_json::from_slice(&ro.stdout).unwrap();
        assert_eq!(without_file(l.clone()), without_file(r));

        // The command looks at the object once (is it a collection?) and
        // then reads the sample through the same open handle: the opening
        // requests are not paid twice.
        let proxy = env.http_proxy();
        let counted = format!("http://127.0.0.1:{}/v2_balanced.medh5", proxy.port);
        let ro = bin("medh5")
            .args(["info", "--json", &counted])
            .output()
            .unwrap();
        assert!(ro.status.success());
        let r: Value = serde_json::from_slice(&ro.stdout).unwrap();
        assert_eq!(without_file(l), without_file(r));
        let n = stats(&proxy)["requests"].as_u64().unwrap();
        println!("medh5 info over HTTP: {n} requests");
        assert!(
            n <= 2,
            "medh5 info over HTTP took {n} requests (HEAD and one GET)"
        );
        for cmd in ["tree", "validate"] {
            let lo = bin("medh5")
                .args([cmd])
                .arg(env.http_root.join("v2_balanced.medh5"))
                .output()
                .unwrap();
            let ro = bin("medh5").args([cmd, &url]).output().unwrap();
            assert_eq!(lo.status.code(), ro.status.code(), "medh5 {cmd}");
            let local_name = env.http_root.join("v2_balanced.medh5");
            let l = String::from_utf8_lossy(&lo.stdout).replace(local_name.to_str().unwrap(), "F");
            let r = String::from_utf8_lossy(&ro.stdout).replace(&url, "F");
            assert_eq!(l, r, "medh5 {cmd}");
        }
    }
    // Plain http is refused for hosts that are not loopback, before any request.
    let e = File::open_url("http://192.0.2.1/x.h5").unwrap_err();
    assert!(e.to_string().contains("loopback"), "{e}");
    let s = stats(&env.http);
    println!("range server: {s}");
}

/// The test file the fault tests read: a chunked dataset of a golden file,
/// each dataset's bytes read locally for comparison.
fn expected(env: &Env) -> Contents {
    read_all(&File::open(env.http_root.join("sb2_v108.h5")).unwrap()).unwrap()
}

/// Open the golden file through `proxy` with the fault `query` set after the
/// open, and read every dataset.
fn read_through(
    env: &Env,
    proxy: &Proc,
    query: &str,
    opts: &RemoteOptions,
) -> (Result<Contents, Error>, Duration) {
    fault(proxy, "kind=clear");
    let url = format!("http://127.0.0.1:{}/sb2_v108.h5", proxy.port);
    let _ = env;
    let f = File::open_url_with(&url, opts).unwrap();
    fault(proxy, query);
    let t = Instant::now();
    let r = read_all(&f);
    (r, t.elapsed())
}

fn assert_names_url_and_range(e: &Error, url_part: &str) {
    match e {
        Error::Remote { url, range, .. } => {
            assert!(url.contains(url_part), "{e}");
            assert!(
                range
                    .split_once('-')
                    .is_some_and(|(a, b)| a.parse::<u64>().is_ok() && b.parse::<u64>().is_ok()),
                "range named: {e}"
            );
        }
        other => panic!("expected Error::Remote naming URL and range, got {other:?}"),
    }
}

/// A typed error may arrive wrapped by the reader; find the remote one.
fn remote_error(e: &Error) -> Error {
    match e {
        Error::Remote { .. } | Error::StaleSnapshot(_) => clone_err(e),
        other => panic!("expected a remote error, got {other:?}"),
    }
}

fn clone_err(e: &Error) -> Error {
    match e {
        Error::Remote { url, range, reason } => Error::Remote {
            url: url.clone(),
            range: range.clone(),
            reason: reason.clone(),
        },
        Error::StaleSnapshot(s) => Error::StaleSnapshot(s.clone()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_injected_fault_ends_in_data_or_a_typed_error() {
    let env = env_or_skip!();
    let want = expected(env);
    let proxy = env.http_proxy();
    let opts = piecewise(RemoteOptions {
        timeout: Duration::from_millis(1500),
        ..s3_opts("https://unused.invalid")
    });
    // Retried faults: the data arrives, identical.
    for q in [
        "kind=drop&count=2",
        "kind=503&count=2",
        "kind=500&count=1",
        "kind=slow&delay=3&count=1",
        "kind=short&count=2",
        "kind=oversized&count=1",
    ] {
        let (r, took) = read_through(env, &proxy, q, &opts);
        let got = r.unwrap_or_else(|e| panic!("{q}: {e}"));
        assert_eq!(got, want, "{q}: the data");
        let s = stats(&proxy);
        assert!(s["faults"].as_u64().unwrap() >= 1, "{q}: the fault fired");
        println!(
            "{q}: data identical after retries in {:.2} s; proxy {s}",
            took.as_secs_f64()
        );
        let _ = http_get(&format!("http://127.0.0.1:{}/__stats?reset=1", proxy.port));
    }
    // Faults that never stop: a typed error naming URL and range, in bounded time.
    for (q, says) in [
        ("kind=503&count=-1", "503"),
        ("kind=drop&count=-1", ""),
        ("kind=short&count=-1", "short"),
        ("kind=oversized&count=-1", "oversized"),
        ("kind=slow&delay=4&count=-1", ""),
        ("kind=403&count=-1", "403"),
        ("kind=404&count=-1", "404"),
    ] {
        let (r, took) = read_through(env, &proxy, q, &opts);
        let e = r.expect_err(q);
        let e = remote_error(&e);
        assert_names_url_and_range(&e, &format!("127.0.0.1:{}", proxy.port));
        assert!(e.to_string().contains(says), "{q}: {e}");
        assert!(
            took < Duration::from_secs(60),
            "{q}: bounded, took {took:?}"
        );
        println!("{q}: {e} (after {:.2} s)", took.as_secs_f64());
    }
    // The object replaced after the open: never mixed bytes.
    for q in ["kind=replace&after=0", "kind=replace_ignoring&after=0"] {
        let (r, _) = read_through(env, &proxy, q, &opts);
        match r {
            Err(Error::StaleSnapshot(s)) => {
                assert!(s.contains(&format!("127.0.0.1:{}", proxy.port)), "{s}");
                println!("{q}: {s}");
            }
            other => panic!("{q}: expected StaleSnapshot, got {other:?}"),
        }
    }
    fault(&proxy, "kind=clear");
}

#[test]
fn an_object_replaced_in_the_store_is_a_stale_snapshot() {
    let env = env_or_skip!();
    let a = env.http_root.join("sb2_v108.h5");
    let url = s3_url("replace/x.h5");
    let opts = piecewise(s3_opts(&env.s3_endpoint()));
    upload_file(&a, &url, &opts).unwrap();
    let f = File::open_url_with(&url, &opts).unwrap();
    // Another writer replaces the object with another file.
    let b = here().join("tests/golden/sb3_latest.h5");
    upload_file(&b, &url, &opts).unwrap();
    match read_all(&f) {
        Err(Error::StaleSnapshot(s)) => assert!(s.contains(&url), "{s}"),
        other => panic!("expected StaleSnapshot, got {other:?}"),
    }
    // Reopened, it reads the new version.
    let now = read_all(&File::open_url_with(&url, &opts).unwrap()).unwrap();
    assert_eq!(now, read_all(&File::open(&b).unwrap()).unwrap());
}

/// The object at `url` whole, or `None` when it does not exist.
fn download(url: &str, opts: &RemoteOptions) -> Option<Vec<u8>> {
    use purehdf::{ByteRange, Fetch};
    match purehdf::StoreFetch::open(url, opts) {
        Ok(f) => Some(f.fetch(&[ByteRange::new(0, f.len())]).unwrap().remove(0)),
        Err(Error::Remote { reason, .. }) if reason.contains("404") => None,
        Err(e) => panic!("{url}: {e}"),
    }
}

#[test]
fn pack_and_copy_to_s3_upload_what_they_write_locally() {
    let env = env_or_skip!();
    let opts = s3_opts(&env.s3_endpoint());
    let ep = env.s3_endpoint();
    let src = env.http_root.join("sb2_v108.h5");
    let local = env.scratch.join("copy.h5");
    let o = bin("h5")
        .args(["copy"])
        .arg(&src)
        .arg(&local)
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = bin("h5")
        .args([
            "copy",
            src.to_str().unwrap(),
            &s3_url("out/copy.h5"),
            "--endpoint",
            &ep,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let up = download(&s3_url("out/copy.h5"), &opts).expect("uploaded");
    // The copier's output is deterministic: the uploaded bytes are the local file's.
    assert_eq!(up, std::fs::read(&local).unwrap());

    let samples: Vec<PathBuf> = ["v2_balanced.medh5", "v1_minimal.medh5"]
        .iter()
        .map(|n| env.http_root.join(n))
        .filter(|p| p.is_file())
        .collect();
    if samples.len() == 2 {
        let local = env.scratch.join("c.medh5c");
        let o = bin("medh5")
            .arg("pack")
            .args(&samples)
            .arg("-o")
            .arg(&local)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let url = s3_url("out/c.medh5c");
        let o = bin("medh5")
            .arg("pack")
            .args(&samples)
            .args(["-o", &url, "--json", "--endpoint", &ep])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["out"], Value::String(url.clone()));
        let up = download(&url, &opts).expect("uploaded");
        let loc = std::fs::read(&local).unwrap();
        if up != loc {
            // Not byte-stable (a timestamp): the same members and content.
            let l = purehdf_cli::dump::walk::dump_file(&local).unwrap().doc;
            let r = purehdf_cli::dump::walk::dump_file(&url).unwrap().doc;
            assert_eq!(without_file(l), without_file(r));
        }
        // Listed and verified from the store, collections and --key members.
        let o = bin("medh5")
            .args(["ls", &url, "--endpoint", &ep])
            .output()
            .unwrap();
        assert!(o.status.success());
        assert!(String::from_utf8_lossy(&o.stdout).contains("v2_balanced"));
        let o = bin("medh5")
            .args(["verify", &url, "--key", "v2_balanced", "--endpoint", &ep])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn a_failed_or_killed_upload_leaves_no_object() {
    let env = env_or_skip!();
    let opts = s3_opts(&env.s3_endpoint());
    let src = env.http_root.join("sb2_v108.h5");
    // Completing the upload fails every time: the copy fails, nothing appears.
    let proxy = env.moto_proxy();
    let pep = format!("http://127.0.0.1:{}", proxy.port);
    fault(
        &proxy,
        "kind=500&count=-1&match=POST%20/data/out/failed.h5?uploadId",
    );
    let url = s3_url("out/failed.h5");
    let o = bin("h5")
        .args(["copy", src.to_str().unwrap(), &url, "--endpoint", &pep])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&url), "{err}");
    assert!(stats(&proxy)["faults"].as_u64().unwrap() >= 1);
    assert_eq!(
        download(&url, &opts),
        None,
        "no object after a failed upload"
    );

    // Killed while its part is being sent: nothing appears.
    fault(&proxy, "kind=slow&delay=30&count=-1&match=partNumber");
    let url = s3_url("out/killed.h5");
    let mut child = bin("h5")
        .args(["copy", src.to_str().unwrap(), &url, "--endpoint", &pep])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while stats(&proxy)["by_method"]["PUT"].as_u64().unwrap_or(0) == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the part upload never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(
        download(&url, &opts),
        None,
        "no object after a killed upload"
    );
    fault(&proxy, "kind=clear");
    println!(
        "failed and killed uploads left no object; proxy {}",
        stats(&proxy)
    );
}

/// The request budget of issue 41 (open + list of a medh5 sample ≤ 3
/// requests, a 64³ patch ≤ 2 more, a full image ≤ bytes / cap + 2), on a
/// sample big enough that its data lies outside the first request's head
/// and tail (160×256×256 int16, about 21 MB before compression).
#[test]
fn request_budget_open_list_patch_full_read() {
    let env = env_or_skip!();
    let proxy = env.moto_proxy();
    let opts = s3_opts(&format!("http://127.0.0.1:{}", proxy.port));
    let src = std::env::temp_dir().join(format!("purehdf-budget-{}.medh5", std::process::id()));
    std::fs::write(&src, big_sample()).unwrap();
    let url = s3_url("budget/big.medh5");
    upload_file(&src, &url, &opts).unwrap();
    let reqs = || stats(&proxy)["requests"].as_u64().unwrap();
    let r0 = reqs();
    let f = File::open_url_with(&url, &opts).unwrap();
    let s = purehdf_medh5::SampleFile::from_file(f);
    let _ = s.file.root().unwrap().links().unwrap();
    let ids: Vec<String> = s
        .file
        .root()
        .unwrap()
        .group("images")
        .unwrap()
        .links()
        .unwrap()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let open_list = reqs() - r0;
    println!("open + list: {open_list} requests");
    // Two ranged GETs (head and tail, together) pin the object and hold
    // the metadata: no HEAD request.
    assert!(open_list <= 2, "open + list took {open_list} requests");
    let ds = s.image(&ids[0]).unwrap();
    let count: Vec<u64> = ds.shape().iter().map(|&n| n.min(64)).collect();
    let r1 = reqs();
    let _patch = s
        .image_patch::<f32>(&ids[0], &vec![0; count.len()], &count)
        .unwrap();
    let patch = reqs() - r1;
    println!("64^3 patch: {patch} requests");
    assert!(patch <= 2, "a patch took {patch} requests");
    let r2 = reqs();
    let all: Vec<f32> = ds.read().unwrap();
    let full = reqs() - r2;
    let bytes = ds.num_elements() * ds.dtype().size();
    let cap = opts.range.max_request;
    println!(
        "full image ({bytes} bytes, {} values): {full} requests",
        all.len()
    );
    assert!(full <= bytes / cap + 2, "a full read took {full} requests");
    assert!(
        patch >= 1 && full >= 2,
        "the sample must be read from the server"
    );
    std::fs::remove_file(&src).ok();
}

/// A 160×256×256 sample without labels.
fn big_sample() -> Vec<u8> {
    common::samples::textured_ct([160, 256, 256], false).0
}

// After the macros and helpers it uses (textual scope).
#[path = "remote/siblings.rs"]
mod siblings;
