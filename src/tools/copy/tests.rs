//! Unit tests of `h5 copy`.
use super::*;
use crate::hdf5fmt::file::Object;
use crate::hdf5fmt::write::{to_bytes, AttrValue, DatasetSpec};

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
        .chunked(&[4, 30], vec![spec(ids::DEFLATE, vec![6])])
        .with_maxshape(&[None, Some(100)]);
    let d = w.create_dataset(g, "x", spec, to_bytes(&vals)).unwrap();
    w.set_attr(d, "units", AttrValue::string("mm")).unwrap();
    w.set_attr(g, "n", AttrValue::array(&[1.5f64, 2.5]))
        .unwrap();
    let strs: Vec<String> = vec!["a".into(), "bcd".into()];
    let vs = DatasetSpec::new(
        crate::hdf5fmt::write::vlen_string_type(crate::hdf5fmt::datatype::CharSet::Utf8),
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
