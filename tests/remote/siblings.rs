//! Remote objects that name other objects beside them (virtual dataset
//! sources, external raw storage), and pre-signed URLs: part of
//! `remote_store` (its servers and helpers).

use std::path::Path;
use std::process::Command;

use purehdf::low_level::file::Object;
use purehdf::low_level::remote::RemoteOptions;
use purehdf::low_level::selection::Selection;
use purehdf::{Error, File};

use super::{env, s3_opts, s3_url, stats, upload_file, Env, BUCKET};

/// The files of `tests/remote/make_siblings.py`, written by h5py into a
/// fresh folder under the scratch directory.
fn make_siblings(env: &Env, name: &str) -> std::path::PathBuf {
    let out = env.scratch.join(name);
    let ok = Command::new(&env.python)
        .arg(super::here().join("tests/remote/make_siblings.py"))
        .arg(&out)
        .status()
        .unwrap()
        .success();
    assert!(ok, "make_siblings.py");
    out
}

fn upload(env: &Env, local: &Path, key: &str) {
    upload_file(local, &s3_url(key), &s3_opts(&env.s3_endpoint())).unwrap();
}

/// The little-endian int32 bytes of `v`.
fn i32s(v: impl IntoIterator<Item = i32>) -> Vec<u8> {
    v.into_iter().flat_map(i32::to_le_bytes).collect()
}

fn read(f: &File, path: &str) -> Result<Vec<u8>, Error> {
    match f.object(path)? {
        Object::Dataset(d) => d.read_raw_vec(&Selection::All),
        o => panic!("{path} is a {}", o.kind_name()),
    }
}

#[test]
fn virtual_and_external_sources_resolve_beside_the_url() {
    let env = env_or_skip!();
    let dir = make_siblings(env, "siblings");
    for rel in ["src/a.h5", "vds/b.h5", "vds/v.h5", "vds/raw.bin"] {
        upload(env, &dir.join(rel), &format!("sib/{rel}"));
    }
    // The values h5py wrote (its reads, from the folder of v.h5, agree).
    let want_v = i32s(0..20);
    let want_e = i32s(100..110);
    let local = File::open(dir.join("vds/v.h5")).unwrap();
    assert_eq!(read(&local, "/v").unwrap(), want_v);
    assert_eq!(read(&local, "/e").unwrap(), want_e);

    let before = stats(&env.s3);
    let remote = File::open_url(&s3_url("sib/vds/v.h5")).unwrap();
    // "../src/a.h5" and "/nowhere/at/all/b.h5" (found as vds/b.h5).
    assert_eq!(read(&remote, "/v").unwrap(), want_v);
    // "raw.bin" beside the object.
    assert_eq!(read(&remote, "/e").unwrap(), want_e);
    let first = stats(&env.s3)["requests"].as_u64().unwrap() - before["requests"].as_u64().unwrap();
    // Sources stay open (pinned) for the file's later reads: no new opens.
    let before = stats(&env.s3);
    assert_eq!(read(&remote, "/v").unwrap(), want_v);
    assert_eq!(read(&remote, "/e").unwrap(), want_e);
    let after = stats(&env.s3);
    let again = after["requests"].as_u64().unwrap() - before["requests"].as_u64().unwrap();
    let lines: Vec<&str> = after["lines"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .take(again as usize)
        .map(|l| l.as_str().unwrap())
        .collect();
    println!("virtual and external sources over S3: {first} requests, then {again}: {lines:?}");
    // A reopen would ask for a source's tail again (a suffix range, only
    // asked at an open), and missing candidates are not asked again.
    assert!(
        lines.iter().all(|l| l.starts_with("GET /data/sib/")
            && !l.contains("nowhere")
            && !l.contains("=-")),
        "{lines:?}"
    );

    // Without its sources: the same typed error as the local file alone.
    let lone = env.scratch.join("siblings-lone");
    std::fs::create_dir_all(&lone).unwrap();
    std::fs::copy(dir.join("vds/v.h5"), lone.join("v.h5")).unwrap();
    upload(env, &lone.join("v.h5"), "lone/vds/v.h5");
    let local = File::open(lone.join("v.h5")).unwrap();
    let remote = File::open_url(&s3_url("lone/vds/v.h5")).unwrap();
    for path in ["/v", "/e"] {
        let l = read(&local, path).unwrap_err();
        let r = read(&remote, path).unwrap_err();
        assert_eq!(
            std::mem::discriminant(&l),
            std::mem::discriminant(&r),
            "{path}: local {l} / remote {r}"
        );
        assert!(
            matches!(r, Error::MissingVdsSource { .. } | Error::NotFound(_)),
            "{path}: {r}"
        );
    }
}

/// A pre-signed GET URL of `key` (signature version 4), from boto3.
fn presign(env: &Env, key: &str) -> String {
    let script = format!(
        "import boto3\nfrom botocore.config import Config\n\
         s3 = boto3.client('s3', endpoint_url='{}', region_name='us-east-1', \
         aws_access_key_id='testing', aws_secret_access_key='testing', \
         config=Config(signature_version='s3v4'))\n\
         print(s3.generate_presigned_url('get_object', \
         Params={{'Bucket': '{BUCKET}', 'Key': '{key}'}}, ExpiresIn=600))",
        env.s3_endpoint()
    );
    let out = Command::new(&env.python)
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_presigned_url_is_read_with_its_query_on_every_request() {
    let env = env_or_skip!();
    let golden = super::here().join("tests/golden/sb2_v108.h5");
    upload(env, &golden, "signed/sb2_v108.h5");
    let url = presign(env, "signed/sb2_v108.h5");
    assert!(url.contains("X-Amz-Signature="), "{url}");
    // Read in small pieces so that several requests are made.
    let opts = super::piecewise(RemoteOptions::default());
    let before = stats(&env.s3);
    let remote = File::open_url_with(&url, &opts).unwrap();
    let local = File::open(&golden).unwrap();
    assert_eq!(
        super::read_all(&remote).unwrap(),
        super::read_all(&local).unwrap()
    );
    let after = stats(&env.s3);
    let n = (after["requests"].as_u64().unwrap() - before["requests"].as_u64().unwrap()) as usize;
    let lines: Vec<&str> = after["lines"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .take(n)
        .map(|l| l.as_str().unwrap())
        .collect();
    let query = url.split_once('?').unwrap().1;
    assert!(n >= 3, "{n} requests");
    for l in &lines {
        assert!(
            l.starts_with(&format!("GET /data/signed/sb2_v108.h5?{query} ")),
            "a request without the signed query: {l}"
        );
    }
}
