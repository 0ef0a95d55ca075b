//! References, variable-length data inside compounds, hard and external links:
//! written by our writer directly and by `h5 copy` of an h5py-made file; libhdf5
//! (h5py) must resolve every reference to the right object and region, and
//! `h5dump` must read the files (exit 0).

mod common;
use common::oracle_python;

use purehdf::low_level::copy::{copy_file, parse_filter, CopyOptions};
use purehdf::low_level::datatype::{CharSet, CompoundMember, Datatype, ReferenceKind};
use purehdf::low_level::write::{
    to_bytes, AttrData, AttrValue, DatasetSpec, Dataspace, Elements, FileWriter, Fixup, ObjectId,
};
use std::path::{Path, PathBuf};
use std::process::Command;

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-refs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn python(py: &Path, script: &str, args: &[&Path]) -> String {
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "python failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `h5dump FILE` must exit 0; returns its output (empty when not installed).
fn h5dump_ok(path: &Path) -> String {
    if !Path::new("/usr/bin/h5dump").exists() {
        println!("skipped h5dump: not installed");
        return String::new();
    }
    let out = Command::new("/usr/bin/h5dump").arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "h5dump {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn obj_ref_type() -> Datatype {
    Datatype::Reference {
        size: 8,
        kind: ReferenceKind::Object,
    }
}

/// Our writer: object references in a dataset (forward and backward), in a
/// chunked+deflate dataset, in attributes (one of ten, so attributes that would
/// go dense stay compact), vlen-of-references (as DIMENSION_LIST), a compound
/// with a vlen string and a reference, revised references, hard and external links.
fn write_direct(path: &Path) {
    let mut w = FileWriter::create(path).unwrap();
    let r = w.root();
    // refs dataset created before its targets exist
    let refs = w
        .create_dataset(
            r,
            "refs",
            DatasetSpec::new(obj_ref_type(), &[3]),
            purehdf::low_level::write::DatasetData::None,
        )
        .unwrap();
    let g = w.create_group(r, "g").unwrap();
    let a = w
        .create_dataset(
            g,
            "a",
            DatasetSpec::new(Datatype::int(4, true), &[4]),
            to_bytes(&[1i32, 2, 3, 4]),
        )
        .unwrap();
    let b = w
        .create_dataset(
            r,
            "b",
            DatasetSpec::new(Datatype::float(8), &[2]),
            to_bytes(&[0.5f64, 1.5]),
        )
        .unwrap();
    let fix = |targets: &[ObjectId]| Elements {
        bytes: vec![0; 8 * targets.len()],
        fixups: targets
            .iter()
            .enumerate()
            .map(|(i, t)| (8 * i, Fixup::Object(*t)))
            .collect(),
    };
    w.set_data(refs, fix(&[a.into(), g.into(), b.into()]))
        .unwrap();
    w.create_dataset(
        g,
        "chunked_refs",
        DatasetSpec::new(obj_ref_type(), &[4]).chunked_stored(
            &[2],
            vec![purehdf_filters::FilterSpec {
                id: 1,
                flags: 1,
                cd_values: vec![4],
                name: None,
            }],
        ),
        fix(&[b.into(), b.into(), a.into(), r.into()]),
    )
    .unwrap();
    // ten attributes on b, one of them a reference back to /refs (a cycle)
    for i in 0..9i32 {
        w.set_attr(b, &format!("n{i}"), AttrValue::scalar(i))
            .unwrap();
    }
    w.set_attr(
        b,
        "back",
        AttrValue {
            dtype: obj_ref_type(),
            shape: Dataspace::scalar(),
            data: AttrData::Elements(fix(&[refs.into()])),
        },
    )
    .unwrap();
    // DIMENSION_LIST-like: vlen sequence of object references
    let vl = Datatype::VarSequence {
        size: 16,
        base: Box::new(obj_ref_type()),
    };
    w.set_attr(
        a,
        "dimlist",
        AttrValue {
            dtype: vl,
            shape: Dataspace::simple(&[1]),
            data: AttrData::Elements(Elements {
                bytes: vec![0; 16],
                fixups: vec![(
                    0,
                    Fixup::Vlen {
                        count: 2,
                        value: Box::new(fix(&[b.into(), g.into()])),
                    },
                )],
            }),
        },
    )
    .unwrap();
    // compound {name: vlen str, target: ref}
    let comp = Datatype::Compound {
        size: 24,
        members: vec![
            CompoundMember {
                name: "name".into(),
                offset: 0,
                dtype: purehdf::low_level::write::vlen_string_type(CharSet::Utf8),
            },
            CompoundMember {
                name: "target".into(),
                offset: 16,
                dtype: obj_ref_type(),
            },
        ],
    };
    let mut fixups = Vec::new();
    for (i, (s, t)) in [("alpha", ObjectId::from(a)), ("beta-é", b.into())]
        .iter()
        .enumerate()
    {
        fixups.push((
            24 * i,
            Fixup::Vlen {
                count: s.len() as u32,
                value: Box::new(Elements::raw(s.as_bytes().to_vec())),
            },
        ));
        fixups.push((24 * i + 16, Fixup::Object(*t)));
    }
    w.create_dataset(
        r,
        "table",
        DatasetSpec::new(comp, &[2]),
        Elements {
            bytes: vec![0; 48],
            fixups,
        },
    )
    .unwrap();
    w.hard_link(r, "a_again", a).unwrap();
    w.external_link(r, "ext", "other.h5", "/x").unwrap();
    w.commit().unwrap();
}

/// Revised (HDF5 1.12+) object references, in a file of their own: the
/// installed h5dump may predate them, and h5py cannot read them.
fn write_revised(path: &Path) {
    let mut w = FileWriter::create(path).unwrap();
    let r = w.root();
    let g = w.create_group(r, "g").unwrap();
    let a = w
        .create_dataset(
            g,
            "a",
            DatasetSpec::new(Datatype::int(4, true), &[1]),
            to_bytes(&[7i32]),
        )
        .unwrap();
    let rev = Datatype::Reference {
        size: 18,
        kind: ReferenceKind::ObjectV2,
    };
    w.create_dataset(
        r,
        "revised",
        DatasetSpec::new(rev, &[2]),
        Elements {
            bytes: vec![0; 36],
            fixups: vec![
                (
                    0,
                    Fixup::Revised {
                        kind: 2,
                        target: a.into(),
                        tail: Vec::new(),
                    },
                ),
                (
                    18,
                    Fixup::Revised {
                        kind: 2,
                        target: g.into(),
                        tail: Vec::new(),
                    },
                ),
            ],
        },
    )
    .unwrap();
    w.commit().unwrap();
}

const CHECK_DIRECT: &str = r#"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
names = [f[r].name for r in f['refs'][()]]
assert names == ['/g/a', '/g', '/b'], names
assert [f[r].name for r in f['g/chunked_refs'][()]] == ['/b', '/b', '/g/a', '/'], 'chunked'
assert f[f['b'].attrs['back']].name == '/refs'
assert len(f['b'].attrs) == 10 and f['b'].attrs['n8'] == 8
dl = f['g/a'].attrs['dimlist'][0]
assert [f[r].name for r in dl] == ['/b', '/g'], dl
t = f['table'][()]
assert [x.decode() for x in t['name']] == ['alpha', 'beta-é']
assert [f[r].name for r in t['target']] == ['/g/a', '/b']
assert f['a_again'].id == f['g/a'].id, 'hard link is one object'
assert list(f['a_again'][()]) == [1, 2, 3, 4]
l = f.get('ext', getlink=True)
assert isinstance(l, h5py.ExternalLink) and l.filename == 'other.h5' and l.path == '/x'
print('ok')
"#;

#[test]
fn writer_references_resolve_in_h5py() {
    let dir = out_dir("direct");
    let p = dir.join("refs.h5");
    write_direct(&p);
    // our reader sees the same references
    let f = purehdf::low_level::file::File::open(&p).unwrap();
    let purehdf::low_level::file::Object::Dataset(d) = f.object("/refs").unwrap() else {
        panic!("not a dataset")
    };
    let raw = d.read_all_raw().unwrap();
    let a_addr = f.object("/g/a").unwrap().address();
    assert_eq!(f.object_reference(&raw[..8]).unwrap(), Some(a_addr));
    assert_eq!(
        f.object("/a_again").unwrap().address(),
        a_addr,
        "hard link shares the header"
    );
    match oracle_python() {
        Some(py) => {
            let out = python(&py, CHECK_DIRECT, &[&p]);
            assert!(out.starts_with("ok"), "{out}");
        }
        None => println!("skipped h5py check: no oracle python"),
    }
    let dump = h5dump_ok(&p);
    if !dump.is_empty() {
        // the references name their targets
        let refs = dump
            .split("DATASET \"refs\"")
            .nth(1)
            .expect("refs dataset in h5dump output");
        let refs: String = refs.chars().take(400).collect();
        // /g/a is also /a_again: h5dump may name it either way
        assert!(
            (refs.contains("\"/g/a\"") || refs.contains("\"/a_again\""))
                && refs.contains("\"/g\"")
                && refs.contains("\"/b\""),
            "{refs}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn revised_references_point_at_their_objects() {
    let dir = out_dir("revised");
    let p = dir.join("rev.h5");
    write_revised(&p);
    let f = purehdf::low_level::file::File::open(&p).unwrap();
    let purehdf::low_level::file::Object::Dataset(d) = f.object("/revised").unwrap() else {
        panic!("not a dataset")
    };
    assert_eq!(d.dtype().size(), 18);
    let raw = d.read_all_raw().unwrap();
    let got: Vec<Option<u64>> = raw
        .chunks(18)
        .map(|e| f.revised_reference(e).unwrap().address)
        .collect();
    let want = vec![
        Some(f.object("/g/a").unwrap().address()),
        Some(f.object("/g").unwrap().address()),
    ];
    assert_eq!(got, want);
    if let Some(py) = oracle_python() {
        // libhdf5 opens the file and the dataset's type (reading needs h5py support)
        let out = python(
            &py,
            "import sys, h5py\nf = h5py.File(sys.argv[1], 'r')\nprint(sorted(f.keys()), f['revised'].id.get_type().get_class())",
            &[&p],
        );
        assert!(out.starts_with("['g', 'revised'] 7"), "{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An h5py file with every reference flavour h5py writes, dimension scales,
/// a MATLAB-like `#refs#` cell array, vlen inside compounds, vlen of vlen,
/// hard and external links.
const MAKE_SOURCE: &str = r#"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'w') as f:
    d = f.create_dataset('data', data=np.arange(100, dtype='f4').reshape(10, 10))
    x = f.create_dataset('x', data=np.arange(10.0)); x.make_scale('x')
    y = f.create_dataset('y', data=np.arange(10.0) * 2); y.make_scale('y')
    d.dims[0].attach_scale(y); d.dims[1].attach_scale(x)
    g = f.create_group('grp')
    g['hard'] = d
    f['ext'] = h5py.ExternalLink('elsewhere.h5', '/thing')
    rt = h5py.ref_dtype
    r = f.create_dataset('objrefs', (4,), dtype=rt)
    r[0] = d.ref; r[1] = g.ref; r[2] = x.ref
    rr = f.create_dataset('regrefs', (2,), dtype=h5py.regionref_dtype)
    rr[0] = d.regionref[2:5, 3:7]; rr[1] = d.regionref[0, :]
    refs = f.create_group('#refs#')
    cells = []
    for i in range(3):
        c = refs.create_dataset(chr(ord('a') + i), data=np.full((2, i + 1), i, 'f8'))
        cells.append(c.ref)
    f.create_dataset('cell', data=np.array(cells, dtype=rt).reshape(3, 1), chunks=(1, 1), compression='gzip')
    f.attrs['root_ref'] = d.ref
    ct = np.dtype([('name', h5py.string_dtype()), ('vals', h5py.vlen_dtype('i4')), ('ref', rt)])
    t = np.empty(2, dtype=ct)
    t[0] = ('one', np.array([1, 2, 3], 'i4'), d.ref)
    t[1] = ('two', np.array([], 'i4'), g.ref)
    f.create_dataset('table', data=t)
    vv = h5py.vlen_dtype(h5py.vlen_dtype('i2'))
    f.attrs.create('strs_in_cmp', np.array([('a', 1), ('bcd', 2)], dtype=[('s', h5py.string_dtype()), ('n', 'i4')]))
    vs = f.create_dataset('vlen_strs', (3,), dtype=h5py.vlen_dtype(h5py.string_dtype()))
"#;

const CHECK_COPY: &str = r#"
import sys, h5py, hdf5plugin, numpy as np
f = h5py.File(sys.argv[1], 'r')
d = f['data']
def nm(r):
    # /data is also /grp/hard: name it by identity
    o = f[r]
    return '/data' if o == d else o.name
assert [nm(r) for r in f['objrefs'][:3]] == ['/data', '/grp', '/x']
assert not f['objrefs'][3], 'null reference stays null'
rr = f['regrefs'][()]
assert nm(rr[0]) == '/data'
assert np.array_equal(d[rr[0]], d[2:5, 3:7])
assert np.array_equal(d[rr[1]].ravel(), d[0, :])
assert d.dims[0][0].name == '/y' and d.dims[1][0].name == '/x'
assert h5py.h5ds.is_attached(d.id, f['x'].id, 1)
assert f['grp/hard'].id == d.id, 'hard link copied as a link'
l = f.get('ext', getlink=True)
assert isinstance(l, h5py.ExternalLink) and l.filename == 'elsewhere.h5' and l.path == '/thing'
cells = f['cell'][()]
assert [f[c].name for c in cells.ravel()] == ['/#refs#/a', '/#refs#/b', '/#refs#/c']
assert f[cells[2, 0]].shape == (2, 3)
assert nm(f.attrs['root_ref']) == '/data'
t = f['table'][()]
assert [s.decode() for s in t['name']] == ['one', 'two']
assert list(t['vals'][0]) == [1, 2, 3] and len(t['vals'][1]) == 0
assert [nm(r) for r in t['ref']] == ['/data', '/grp']
a = f.attrs['strs_in_cmp']
assert [s.decode() if isinstance(s, bytes) else s for s in a['s']] == ['a', 'bcd'] and list(a['n']) == [1, 2]
print('ok')
"#;

#[test]
fn copy_rewrites_references() {
    let Some(py) = oracle_python() else {
        println!("skipped: no oracle python");
        return;
    };
    let dir = out_dir("copy");
    let src = dir.join("src.h5");
    python(&py, MAKE_SOURCE, &[&src]);
    for (i, filter) in ["keep", "blosc2:zstd:3:shuffle"].iter().enumerate() {
        let dst = dir.join(format!("dst{i}.h5"));
        let opts = CopyOptions {
            filter: parse_filter(filter).unwrap(),
            threads: 0,
            ..Default::default()
        };
        let rep = copy_file(&src, &dst, &opts).unwrap();
        assert!(rep.skipped.is_empty(), "{filter}: {:?}", rep.skipped);
        assert_eq!(rep.hard_links, 1, "{filter}");
        assert_eq!(rep.external_links, 1, "{filter}");
        let out = python(&py, CHECK_COPY, &[&dst]);
        assert!(out.starts_with("ok"), "{filter}: {out}");
        if *filter == "keep" {
            // (the installed h5dump may have no Blosc2 plugin)
            h5dump_ok(&dst);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
