//! Unit tests of `h5 copy`.
use super::options::spec;
use super::*;
use crate::chunk_index;
use crate::datatype::Datatype;
use crate::file::Object;
use crate::write::{to_bytes, AttrValue, DatasetData, DatasetSpec};
use purehdf_filters::ids;

#[test]
fn guess_chunk_matches_h5py() {
    // values from h5py._hl.filters.guess_chunk
    assert_eq!(guess_chunk(&[100, 100], 8), vec![25, 50]);
    assert_eq!(guess_chunk(&[1000], 4), vec![1000]);
    assert_eq!(guess_chunk(&[10, 50, 100], 2), vec![3, 25, 50]);
    assert_eq!(guess_chunk(&[0, 7], 4), vec![512, 4]);
    assert_eq!(guess_chunk(&[1024, 1024], 4), vec![64, 128]);
    assert_eq!(guess_chunk(&[7], 1), vec![7]);
}

#[test]
fn filters_parse_to_plugin_cd_values() {
    assert_eq!(parse_filter("keep").unwrap(), FilterChoice::Keep);
    assert_eq!(parse_filter("none").unwrap(), FilterChoice::None);
    let FilterChoice::Pipeline(p) = parse_filter("blosc2:zstd:3:shuffle").unwrap() else {
        panic!("not a pipeline")
    };
    assert_eq!(
        (p[0].id, p[0].cd_values.clone()),
        (ids::BLOSC2, vec![0, 0, 0, 0, 3, 1, 5])
    );
    let FilterChoice::Pipeline(p) = parse_filter("blosc2:lz4:1:bitshuffle").unwrap() else {
        panic!("not a pipeline")
    };
    assert_eq!(p[0].cd_values, vec![0, 0, 0, 0, 1, 2, 1]);
    let FilterChoice::Pipeline(p) = parse_filter("shuffle+deflate:4").unwrap() else {
        panic!("not a pipeline")
    };
    assert_eq!(
        p.iter().map(|f| f.id).collect::<Vec<_>>(),
        vec![ids::SHUFFLE, ids::DEFLATE]
    );
    assert_eq!(p[1].cd_values, vec![4]);
    let FilterChoice::Pipeline(p) = parse_filter("zstd:-5").unwrap() else {
        panic!("not a pipeline")
    };
    assert_eq!(p[0].cd_values, vec![4294967291]);
    assert!(parse_filter("deflate:12").is_err());
    assert!(parse_filter("blosc2:snappy:1").is_err());
    assert!(parse_filter("bogus").is_err());
}

fn source_file(dir: &Path) -> PathBuf {
    let p = dir.join("src.h5");
    let mut w = FileWriter::create(&p).unwrap();
    let r = w.root();
    let g = w.create_group(r, "g").unwrap();
    let vals: Vec<i32> = (0..1000).collect();
    let spec = DatasetSpec::new(Datatype::int(4, true), &[10, 100])
        .chunked_stored(&[4, 30], vec![spec(ids::DEFLATE, vec![6])])
        .with_maxshape(&[None, Some(100)]);
    let d = w.create_dataset(g, "x", spec, to_bytes(&vals)).unwrap();
    w.set_attr(d, "units", AttrValue::string("mm")).unwrap();
    w.set_attr(g, "n", AttrValue::array(&[1.5f64, 2.5]))
        .unwrap();
    let strs: Vec<String> = vec!["a".into(), "bcd".into()];
    let vs = DatasetSpec::new(
        crate::write::vlen_string_type(crate::datatype::CharSet::Utf8),
        &[2],
    );
    w.create_dataset(r, "s", vs, strs).unwrap();
    w.soft_link(r, "alias", "/g/x").unwrap();
    w.commit().unwrap();
    p
}

use std::path::PathBuf;

#[test]
fn copies_read_back_equal() {
    let dir = std::env::temp_dir().join(format!("purehdf-copy-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = source_file(&dir);
    let want = File::open(&src).unwrap();
    let Object::Dataset(wx) = want.object("/g/x").unwrap() else {
        panic!()
    };
    let wdata = wx.read_all_raw().unwrap();
    for (i, f) in [
        "keep",
        "none",
        "blosc2:lz4:1:bitshuffle",
        "shuffle+deflate:4",
        "zstd:3",
        "lz4",
    ]
    .iter()
    .enumerate()
    {
        let dst = dir.join(format!("dst{i}.h5"));
        let opts = CopyOptions {
            filter: parse_filter(f).unwrap(),
            threads: 0,
            ..Default::default()
        };
        let rep = copy_file(&src, &dst, &opts).unwrap();
        assert!(rep.skipped.is_empty(), "{f}: {:?}", rep.skipped);
        assert_eq!(
            (rep.groups, rep.datasets, rep.soft_links, rep.attributes),
            (1, 2, 1, 2),
            "{f}"
        );
        let got = File::open(&dst).unwrap();
        let Object::Dataset(x) = got.object("/g/x").unwrap() else {
            panic!()
        };
        assert_eq!(x.read_all_raw().unwrap(), wdata, "{f}");
        assert_eq!(x.maxshape(), &[None, Some(100)], "{f}");
        assert_eq!(
            x.chunk_dims().map(|c| c[..2].to_vec()),
            Some(vec![4, 30]),
            "{f}"
        );
        let first = x.filters().first().map(|s| s.id);
        match *f {
            "keep" => assert_eq!(first, Some(ids::DEFLATE)),
            "none" => assert_eq!(first, None),
            "blosc2:lz4:1:bitshuffle" => {
                assert_eq!(first, Some(ids::BLOSC2));
                assert_eq!(
                    x.filters()[0].cd_values,
                    vec![1, 0, 4, 480, 1, 2, 1, 2, 4, 30]
                );
            }
            _ => assert!(first.is_some()),
        }
        let Object::Dataset(s) = got.object("/s").unwrap() else {
            panic!()
        };
        let raw = s.read_all_raw().unwrap();
        let texts: Vec<Vec<u8>> = raw.chunks(16).map(|e| got.vlen_bytes(e).unwrap()).collect();
        assert_eq!(texts, vec![b"a".to_vec(), b"bcd".to_vec()]);
        let Object::Dataset(a) = got.object("/alias").unwrap() else {
            panic!()
        };
        assert_eq!(a.read_all_raw().unwrap(), wdata);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sparse chunked dataset (2 of 1e6 chunks stored, a fill value) and a
/// contiguous one with partial edge chunks once chunked.
fn sparse_and_contiguous(dir: &Path) -> PathBuf {
    let p = dir.join("sparse.h5");
    let mut w = FileWriter::create(&p).unwrap();
    let r = w.root();
    let deflate = spec(ids::DEFLATE, vec![1]);
    let sparse = DatasetSpec::new(Datatype::int(2, true), &[1_000_000 * 4])
        .chunked_stored(&[4], vec![deflate.clone()])
        .with_fill(to_bytes(&[-7i16]));
    let d = w
        .create_dataset(r, "sparse", sparse, DatasetData::None)
        .unwrap();
    let ctx = purehdf_filters::ChunkContext::new(2, 8);
    let enc = |v: &[i16]| purehdf_filters::encode(&deflate, &ctx, &to_bytes(v)).unwrap();
    w.write_raw_chunk(d, &[3], enc(&[1, 2, 3, 4]), 0).unwrap();
    // the last chunk stored with the filter skipped (mask bit 0)
    w.write_raw_chunk(d, &[999_999], to_bytes(&[5i16, 6, 7, 8]), 1)
        .unwrap();
    let vals: Vec<f32> = (0..(301 * 71)).map(|i| i as f32 * 0.5).collect();
    w.create_dataset(
        r,
        "contig",
        DatasetSpec::new(Datatype::float(4), &[301, 71]),
        to_bytes(&vals),
    )
    .unwrap();
    w.commit().unwrap();
    p
}

#[test]
fn reencoding_goes_chunk_by_chunk() {
    let dir = std::env::temp_dir().join(format!("purehdf-copy-sparse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = sparse_and_contiguous(&dir);
    let want = File::open(&src).unwrap();
    let Object::Dataset(wc) = want.object("/contig").unwrap() else {
        panic!()
    };
    let wcontig = wc.read_all_raw().unwrap();
    for (i, f) in ["blosc2:zstd:3:shuffle", "none", "keep"].iter().enumerate() {
        let dst = dir.join(format!("sparse{i}.h5"));
        let opts = CopyOptions {
            filter: parse_filter(f).unwrap(),
            threads: 0,
            ..Default::default()
        };
        let rep = copy_file(&src, &dst, &opts).unwrap();
        assert!(rep.skipped.is_empty(), "{f}: {:?}", rep.skipped);
        let got = File::open(&dst).unwrap();
        let Object::Dataset(s) = got.object("/sparse").unwrap() else {
            panic!()
        };
        // unstored chunks stay unstored
        let params = s.chunk_params().unwrap();
        let recs = chunk_index::chunks(got.source(), got.sizes(), &params).unwrap();
        assert_eq!(recs.len(), 2, "{f}");
        let mut head = vec![0u8; 32];
        let sel = crate::selection::Selection::Hyperslab {
            start: vec![8],
            count: vec![16],
        };
        s.read_raw(&sel, &mut head).unwrap();
        let mut want_head = to_bytes(&[-7i16; 4]);
        want_head.extend(to_bytes(&[1i16, 2, 3, 4, -7, -7, -7, -7, -7, -7, -7, -7]));
        assert_eq!(head, want_head, "{f}");
        let mut tail = vec![0u8; 8];
        let sel = crate::selection::Selection::Hyperslab {
            start: vec![3_999_996],
            count: vec![4],
        };
        s.read_raw(&sel, &mut tail).unwrap();
        assert_eq!(tail, to_bytes(&[5i16, 6, 7, 8]), "{f}");
        let Object::Dataset(c) = got.object("/contig").unwrap() else {
            panic!()
        };
        assert_eq!(c.read_all_raw().unwrap(), wcontig, "{f}");
        match *f {
            "keep" => assert_eq!((rep.raw_chunks, rep.encoded_chunks), (2, 0)),
            "none" => assert_eq!((rep.raw_chunks, rep.encoded_chunks), (0, 2)),
            _ => {
                // contiguous 301x71 f32 -> guess_chunk (76, 36): 4 rows of
                // 2 chunks, the last row and column partial
                assert_eq!(guess_chunk(&[301, 71], 4), vec![76, 36]);
                assert_eq!(c.chunk_dims().map(|d| d[..2].to_vec()), Some(vec![76, 36]));
                assert_eq!((rep.raw_chunks, rep.encoded_chunks), (0, 2 + 8));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
