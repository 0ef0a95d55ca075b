//! Collections (`shared/spec/medh5.md` §7) judged by the reference: our
//! `pack` of reference-written samples passes its `ls`, `verify --key` and
//! `validate --level integrity`; our `ls`, `verify --key` and `unpack` on the
//! reference's own shard agree with its results field for field in `--json`;
//! and `unpack(pack(files))` equals the sources at the raw chunk level (chunk
//! bytes and filter masks, via h5py's `get_chunk_info`/`read_direct_chunk`),
//! for our shards and the reference's. Skipped without the oracle venv.

mod common;
use common::oracle_bin;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_medh5");

fn run(bin: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(bin).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
    )
}

fn chunks(venv: &Path, a: &str, b: &str) -> Value {
    let s = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/medh5_storage_check.py");
    let out = Command::new(venv.join("python"))
        .arg(s)
        .args(["chunks", a, b])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn setup() -> Option<(PathBuf, PathBuf)> {
    let Some(venv) = oracle_bin() else {
        println!("skipped: medh5 collection (oracle venv with the reference medh5 not found)");
        return None;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-collection-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/medh5_storage_samples.py");
    let st = Command::new(venv.join("python"))
        .arg(script)
        .arg(&dir)
        .arg("balanced,portable,training")
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    Some((venv, dir))
}

#[test]
fn pack_unpack_ls_agree_with_the_reference() {
    let Some((venv, dir)) = setup() else {
        return;
    };
    let reference = venv.join("medh5");
    let ours = Path::new(BIN);
    std::env::set_current_dir(&dir).unwrap();
    let srcs = [
        "s0_balanced.medh5",
        "s1_portable.medh5",
        "s2_training.medh5",
    ];
    let keys = ["s0_balanced", "s1_portable", "s2_training"];
    let mut pack_args = vec!["pack"];
    pack_args.extend(srcs);
    let mut ours_args = pack_args.clone();
    ours_args.extend(["-o", "ours.medh5c", "--json"]);
    pack_args.extend(["-o", "ref.medh5c", "--json"]);
    let (c, p, t) = run(ours, &ours_args);
    assert_eq!(c, 0, "{t}");
    let (_, rp, _) = run(&reference, &pack_args);
    assert_eq!(p["samples"], rp["samples"]);
    assert_eq!(p["source_bytes"], rp["source_bytes"]);
    let mut compared = 0;
    for shard in ["ours.medh5c", "ref.medh5c"] {
        // ls and verify --key: ours and the reference's, field for field
        let (c1, a, _) = run(ours, &["ls", shard, "--json"]);
        let (c2, b, _) = run(&reference, &["ls", shard, "--json"]);
        assert_eq!((c1, &a), (c2, &b), "ls {shard}");
        for k in keys {
            let (c1, a, _) = run(ours, &["verify", shard, "--key", k, "--json"]);
            let (c2, b, _) = run(&reference, &["verify", shard, "--key", k, "--json"]);
            assert_eq!((c1, &a), (c2, &b), "verify {shard} --key {k}");
            assert_eq!(a[0]["ok"], true);
            compared += 2;
        }
        assert_eq!(
            run(ours, &["verify", shard]).0,
            1,
            "a collection without --key fails"
        );
        let (vc, _, vt) = run(&reference, &["validate", "--level", "integrity", shard]);
        assert_eq!(vc, 0, "reference validate {shard}: {vt}");
        // unpack: the same paths, chunk for chunk the sources
        let out = format!("u_{shard}");
        let (c1, a, _) = run(ours, &["unpack", shard, "-o", &out, "--json"]);
        let (_, b, _) = run(
            &reference,
            &["unpack", shard, "-o", &format!("r{out}"), "--json"],
        );
        assert_eq!(c1, 0);
        assert_eq!(a.as_array().unwrap().len(), b.as_array().unwrap().len());
        for (src, k) in srcs.iter().zip(keys) {
            let un = format!("{out}/{k}.medh5");
            let same = chunks(&venv, src, &un);
            assert_eq!(same["diffs"], Value::Array(vec![]), "{src} vs {un}: {same}");
            assert!(same["chunks"].as_u64().unwrap() > 0);
            let member = chunks(&venv, src, &format!("{shard}:/samples/{k}"));
            assert_eq!(
                member["diffs"],
                Value::Array(vec![]),
                "{src} in {shard}: {member}"
            );
            let (vc, _, vt) = run(&reference, &["verify", &un]);
            assert_eq!(vc, 0, "reference verify {un}: {vt}");
            compared += 2;
        }
    }
    // bench-op collection-ids: the reference's bench op, member for member
    if let Some(shared) = common::shared_dir() {
        let ref_ops = shared.join("bench/ref_ops.py");
        for shard in ["ours.medh5c", "ref.medh5c"] {
            let o = Command::new(BIN)
                .args(["bench-op", "collection-ids", shard])
                .output()
                .unwrap();
            let r = Command::new(venv.join("python"))
                .arg(&ref_ops)
                .args(["collection-ids", shard])
                .output()
                .unwrap();
            let last = |b: &[u8]| -> Value {
                let t = String::from_utf8_lossy(b).into_owned();
                serde_json::from_str(t.lines().last().unwrap_or("")).unwrap_or(Value::Null)
            };
            let (a, b) = (last(&o.stdout), last(&r.stdout));
            assert_eq!(a["members"], b["members"], "collection-ids {shard}");
            assert_eq!(a["members"].as_object().map(|m| m.len()), Some(3));
            compared += 1;
        }
    } else {
        println!(
            "skipped: medh5 collection bench-op collection-ids (shared bench harness not found)"
        );
    }
    // refusals: duplicate keys, a collection as a source, ls on a sample
    assert_eq!(
        run(ours, &["pack", srcs[0], srcs[0], "-o", "dup.medh5c"]).0,
        1
    );
    assert_eq!(
        run(ours, &["pack", "ours.medh5c", "-o", "nested.medh5c"]).0,
        1
    );
    assert_eq!(run(ours, &["ls", srcs[0]]).0, 1);
    assert!(!Path::new("dup.medh5c").exists());
    println!("medh5 collection: {compared} ls/verify/unpack results agree with the reference, unpack(pack) chunk for chunk on 2 shards x 3 samples");
    std::env::set_current_dir(std::env::temp_dir()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
