//! `h5 recompress`'s verification of a digested copy (`verify_copy`,
//! `docs/neighbours.md` row E7): a re-encoded dataset is checked by reading
//! back every stored output chunk against the digest the copier took of the
//! chunks it encoded (each decoded and compared with the source bytes as it
//! was encoded), a kept dataset by its byte-identical stored chunks.
//! A wrong digest and a corrupted output chunk are both refused, and a clean
//! copy passes, with the full two-dump `verify` agreeing in every case.

mod common;

use std::process::Command;

use purehdf::low_level::chunk_index;
use purehdf::low_level::copy::{copy_file_digested, CopyOptions, FilterChoice};
use purehdf::low_level::file::{File, Object};
use purehdf_cli::tools::recompress::parse_spec;
use purehdf_cli::tools::recompress::plan::{plan_path, Rules};
use purehdf_cli::tools::recompress::verify::{output_digest, verify, verify_copy};

const GEN: &str = r#"
import sys, numpy as np, h5py
rng = np.random.default_rng(11)
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('stack', data=rng.poisson(1600, size=(6, 256, 256)).astype('u2'))
    f.create_dataset('kept', data=rng.integers(0, 99, size=(8, 300)).astype('i4'),
                     chunks=(3, 100), shuffle=True, compression='gzip', compression_opts=4)
    f['alias'] = f['stack']
"#;

#[test]
fn a_digested_copy_verifies_and_corruption_is_refused() {
    let Some(py) = common::oracle_python() else {
        println!("skipped: h5 recompress verify_copy (no oracle python)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-h5rc-verify-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (src, out) = (dir.join("src.h5"), dir.join("out.h5"));
    let gen = Command::new(&py)
        .args(["-c", GEN])
        .arg(&src)
        .output()
        .unwrap();
    if !gen.status.success() {
        println!("skipped: h5 recompress verify_copy (oracle python lacks h5py)");
        return;
    }
    let FilterChoice::Pipeline(pipeline) = parse_spec("shuffle+deflate:4").unwrap() else {
        panic!("pipeline")
    };
    let rules = Rules {
        pipeline,
        select: Vec::new(),
        ndim: Vec::new(),
        dtype: Vec::new(),
        min_size: 1024,
        rechunk: None,
    };
    let plan = plan_path(&src, &rules).unwrap();
    let opts = CopyOptions {
        datasets: plan.choices(&rules),
        ..CopyOptions::default()
    };
    let rep = copy_file_digested(&src, &out, &opts).unwrap();
    // only the contiguous stack is re-encoded (one 256×256 frame per chunk)
    assert_eq!(rep.digests.len(), 1, "{:?}", rep.digests);
    let (name, want) = rep.digests.iter().next().unwrap();
    assert!(name == "/stack" || name == "/alias", "{name}");
    assert_eq!(rep.encoded_chunks, 6);
    assert_eq!(rep.raw_chunks, 3 * 3);
    let f = File::open(&out).unwrap();
    let Ok(Object::Dataset(ds)) = f.object("/stack") else {
        panic!("/stack")
    };
    assert_eq!(output_digest(&ds).unwrap(), *want);
    let v = verify_copy(&src, &out, &rep.digests).unwrap();
    assert_eq!((v.decoded, v.stored), (1, 1), "{v:?}");
    verify(&src, &out).unwrap();

    // a digest that is not the source's: refused
    let mut wrong = rep.digests.clone();
    wrong.insert(name.clone(), "0".repeat(64));
    assert!(verify_copy(&src, &out, &wrong).is_err());

    // one byte of one stored chunk of the re-encoded dataset flipped: refused
    let params = ds.chunk_params().unwrap();
    let recs = chunk_index::chunks(f.source(), f.sizes(), &params).unwrap();
    let r = &recs[recs.len() / 2];
    let at = usize::try_from(r.address + r.size / 2).unwrap();
    drop(ds);
    drop(f);
    let mut bytes = std::fs::read(&out).unwrap();
    bytes[at] ^= 0x40;
    let bad = dir.join("bad.h5");
    std::fs::write(&bad, &bytes).unwrap();
    assert!(verify_copy(&src, &bad, &rep.digests).is_err());
    assert!(verify(&src, &bad).is_err());

    // one byte of a raw-copied chunk flipped: refused too
    let f = File::open(&out).unwrap();
    let Ok(Object::Dataset(k)) = f.object("/kept") else {
        panic!("/kept")
    };
    let recs = chunk_index::chunks(f.source(), f.sizes(), &k.chunk_params().unwrap()).unwrap();
    let at = usize::try_from(recs[0].address + recs[0].size / 2).unwrap();
    let mut bytes = std::fs::read(&out).unwrap();
    bytes[at] ^= 0x40;
    std::fs::write(&bad, &bytes).unwrap();
    assert!(verify_copy(&src, &bad, &rep.digests).is_err());
    println!("h5 recompress verify_copy: clean copy verified (1 decoded, 1 stored); wrong digest, corrupted re-encoded chunk and corrupted raw chunk refused");
    let _ = std::fs::remove_dir_all(&dir);
}
