//! Amend (`docs/medh5-format.md` §8) judged by the reference: a sample the
//! reference writes, given unknown objects by h5py (int32, compound, committed
//! type, big-endian datasets, attributes on each, a nested group, extension
//! attributes on the root and on an image), is amended to add an image; h5py
//! compares every unknown object byte for byte (raw stored chunks, types,
//! attributes) and the reference's `verify` and `validate --level integrity`
//! pass on the result. Each §8 refusal is a typed error code, the file left
//! untouched. Skipped (with a printed reason) without the oracle venv.

mod common;
use common::oracle_bin;

use std::path::{Path, PathBuf};
use std::process::Command;

use purehdf_medh5::amend::Amend;
use purehdf_medh5::model::{ArrayData, Image, NumDtype};
use purehdf_medh5::profiles::Profile;
use serde_json::Value;

fn py(venv: &Path, script: &str, args: &[&str]) -> Value {
    let s = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(script);
    let out = Command::new(venv.join("python"))
        .arg(s)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn reference(venv: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(venv.join("medh5"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn setup(tag: &str) -> Option<(PathBuf, PathBuf)> {
    let Some(venv) = oracle_bin() else {
        println!("skipped: medh5 amend {tag} (oracle venv with the reference medh5 not found)");
        return None;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-amend-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    py(
        &venv,
        "medh5_storage_samples.py",
        &[dir.to_str().unwrap(), "balanced", "5"],
    );
    Some((venv, dir))
}

fn image_like(file: &Path) -> Image {
    let f = purehdf::low_level::file::File::open(file).unwrap();
    let purehdf::low_level::file::Object::Dataset(ct) = f.object("images/CT").unwrap() else {
        panic!("images/CT")
    };
    let raw = ct.read_all_raw().unwrap();
    let mut bytes = raw.clone();
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = b.wrapping_add((i % 7) as u8);
    }
    let data = ArrayData::from_bytes(NumDtype::I16, ct.shape().to_vec(), bytes).unwrap();
    Image::new("MR", "g", "MR", data)
}

#[test]
fn amend_keeps_unknown_objects_byte_for_byte() {
    let Some((venv, dir)) = setup("keep") else {
        return;
    };
    let src = dir.join("s0_balanced.medh5");
    assert_eq!(
        py(
            &venv,
            "medh5_storage_check.py",
            &["extras", src.to_str().unwrap()]
        )["ok"],
        true
    );
    let before = dir.join("before.medh5");
    std::fs::copy(&src, &before).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let mut a = Amend::open(&src).unwrap();
    a.add_image(&image_like(&src), Profile::Balanced).unwrap();
    let cid = a.commit().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&src).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640, "mode bits kept");
    }
    let kept = py(
        &venv,
        "medh5_storage_check.py",
        &["keep", before.to_str().unwrap(), src.to_str().unwrap()],
    );
    assert_eq!(kept["diffs"], Value::Array(vec![]), "{kept}");
    // a dataset of a committed type keeps the link to the (copied) named type
    assert_eq!(kept["named_committed"], true, "{kept}");
    let objects = kept["objects"].as_u64().unwrap();
    assert!(objects >= 7, "{kept}");
    // everything the reference wrote moves chunk for chunk too
    let same = py(
        &venv,
        "medh5_storage_check.py",
        &[
            "chunks",
            &format!("{}:/annotations", before.display()),
            &format!("{}:/annotations", src.display()),
        ],
    );
    assert_eq!(same["diffs"], Value::Array(vec![]), "{same}");
    let s = src.to_str().unwrap();
    let (ok, text) = reference(&venv, &["verify", s]);
    assert!(ok, "reference verify: {text}");
    let (ok, text) = reference(&venv, &["validate", "--level", "integrity", s]);
    assert!(ok, "reference validate: {text}");
    let (_, info) = reference(&venv, &["info", s, "--json"]);
    let info: Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["content_id"], Value::from(cid.clone()));
    let ids: Vec<&str> = info["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["CT", "MR", "PT"]);
    println!("medh5 amend: {objects} unknown objects kept byte for byte, image added, reference verify + validate ok ({cid})");
    let _ = std::fs::remove_dir_all(&dir);
}

fn code_of(e: &purehdf_medh5::error::Error) -> String {
    match e {
        purehdf_medh5::error::Error::Code { code, .. } => code.clone(),
        other => format!("not a medh5 error: {other}"),
    }
}

#[test]
fn amend_refusals_are_typed() {
    let Some((venv, dir)) = setup("refuse") else {
        return;
    };
    let src = dir.join("s0_balanced.medh5");
    let mutate = |name: &str, code: &str| -> PathBuf {
        let out = dir.join(name);
        std::fs::copy(&src, &out).unwrap();
        let script = format!(
            "import h5py, hdf5plugin, numpy as np, sys\nf = h5py.File(sys.argv[1], 'a')\n{code}\nf.close()\nprint('{{}}')"
        );
        common::run_ok(
            Command::new(venv.join("python"))
                .arg("-c")
                .arg(script)
                .arg(&out),
        );
        out
    };
    let cases: Vec<(PathBuf, &str, bool)> = vec![
        (
            mutate("minor.medh5", "f.attrs['medh5_version'] = '1.9'"),
            "E002",
            false,
        ),
        (
            mutate("algo.medh5", "f.attrs['digest_algo'] = 'md5'"),
            "E703",
            false,
        ),
        (
            mutate(
                "canon.medh5",
                "d = f['images/CT'].attrs['digest']; f['images/CT'].attrs['digest'] = d.upper()",
            ),
            "E703",
            false,
        ),
        (
            mutate("cid.medh5", "f.attrs['content_id'] = 'sha256:' + '0' * 64"),
            "E702",
            false,
        ),
        (
            mutate(
                "bytes.medh5",
                "d = f['annotations/body/data']; a = d[()]; a.flat[0] = not a.flat[0]; d[...] = a",
            ),
            "E701",
            true,
        ),
    ];
    let shard = dir.join("shard.medh5c");
    purehdf_medh5::collection::pack(std::slice::from_ref(&src), &shard, &[]).unwrap();
    let mut n = 0;
    for (file, want, at_commit) in cases
        .iter()
        .map(|(f, c, a)| (f.clone(), *c, *a))
        .chain([(shard, "E002", false)])
    {
        let bytes = std::fs::read(&file).unwrap();
        let got = match Amend::open(&file) {
            Err(e) => {
                assert!(!at_commit, "{}: refused at open: {e}", file.display());
                code_of(&e)
            }
            Ok(mut a) => {
                assert!(at_commit, "{}: opened", file.display());
                a.add_image(&image_like(&src), Profile::Balanced).unwrap();
                code_of(&a.commit().unwrap_err())
            }
        };
        assert_eq!(got, want, "{}", file.display());
        assert_eq!(
            std::fs::read(&file).unwrap(),
            bytes,
            "{} untouched",
            file.display()
        );
        n += 1;
    }
    println!("medh5 amend: {n}/6 refusals typed (E002 x2, E703 x2, E702, E701), files untouched");
    let _ = std::fs::remove_dir_all(&dir);
}
