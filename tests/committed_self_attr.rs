//! Issue 47: an attribute on a committed datatype whose type is that same
//! committed datatype (or one committed after it). The writer used to encode
//! such an attribute's type inline — the committed type had no address yet
//! while its own header was written — yet still counted the attribute as a
//! reference to the type, so a copy lost the sharing and over-counted. The
//! attributes now wait for a continuation chunk written once every committed
//! type has its address. Checked on the writer directly, and (with the
//! oracle) on `h5 copy`'s library against h5py's reading of an h5py file.

mod common;
use common::oracle_python;

use std::path::Path;
use std::process::Command;

use purehdf::low_level::attribute::read_entries;
use purehdf::low_level::copy::{copy_file, parse_filter, CopyOptions};
use purehdf::low_level::datatype::{CompoundMember, Datatype};
use purehdf::low_level::file::{File, Object};
use purehdf::low_level::write::{to_bytes, AttrValue, Dataspace, FileWriter};

/// Committed-type header address of each attribute of `path`, by name.
fn attr_types(f: &File, path: &str) -> Vec<(String, Option<u64>)> {
    let o = f.object(path).unwrap();
    read_entries(f, o.header())
        .unwrap()
        .into_iter()
        .map(|e| (e.attribute.name, e.committed_type))
        .collect()
}

fn compound() -> Datatype {
    Datatype::Compound {
        size: 8,
        members: vec![
            CompoundMember {
                name: "a".into(),
                offset: 0,
                dtype: Datatype::int(4, true),
            },
            CompoundMember {
                name: "b".into(),
                offset: 4,
                dtype: Datatype::float(4),
            },
        ],
    }
}

#[test]
fn writer_shares_a_self_typed_attribute() {
    let mut w = FileWriter::in_memory();
    let r = w.root();
    let t = w.commit_datatype(r, "t", compound()).unwrap();
    let u = w.commit_datatype(r, "u", Datatype::int(2, false)).unwrap();
    let mut v = to_bytes(&[7i32]);
    v.extend(to_bytes(&[2.5f32]));
    w.set_attr(
        t,
        "self",
        AttrValue::raw(compound(), Dataspace::scalar(), v.clone()),
    )
    .unwrap();
    w.share_attr_datatype(t, "self", t).unwrap();
    // a committed type written after `t`
    w.set_attr(t, "later", AttrValue::scalar(9u16)).unwrap();
    w.share_attr_datatype(t, "later", u).unwrap();
    let f = File::from_bytes(w.finish().unwrap()).unwrap();
    let at = f.object("/t").unwrap().address();
    let au = f.object("/u").unwrap().address();
    let mut got = attr_types(&f, "/t");
    got.sort();
    assert_eq!(
        got,
        [
            ("later".to_string(), Some(au)),
            ("self".to_string(), Some(at))
        ]
    );
    let Object::NamedDatatype(nt) = f.object("/t").unwrap() else {
        panic!("/t is not a committed datatype")
    };
    let a = purehdf::low_level::attribute::read_all(&f, &nt.header)
        .unwrap()
        .into_iter()
        .find(|a| a.name == "self")
        .unwrap();
    assert_eq!(a.data, v);
}

#[test]
fn copy_keeps_a_self_typed_attribute_as_h5py_reads_it() {
    let Some(py) = oracle_python() else {
        println!("skipped: committed self attribute (no oracle python)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-self-type-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = r#"
import sys, json, h5py, numpy as np
def make(p, lv):
    with h5py.File(p, "w", libver=lv) as f:
        f["t"] = np.dtype([("a", "<i4"), ("b", ">f4")])
        t = f["t"]
        t.attrs.create("self", np.array((1, 2.5), dtype=t.dtype), dtype=t)
        t.attrs.create("arr", np.array([(3, 4.5), (5, 6.5)], dtype=t.dtype), dtype=t)
        f.create_dataset("d", data=np.array([(7, 8.5)], dtype=t.dtype), dtype=t)
        f["e"] = np.dtype("<u2")
        f["e"].attrs.create("me", 9, dtype=f["e"])
        f["t"].attrs.create("other", 11, dtype=f["e"])
def desc(p):
    out = {}
    with h5py.File(p, "r") as f:
        addr = {h5py.h5o.get_info(f[n].id).addr: n for n in ("t", "e")}
        for n in ("t", "e"):
            o = f[n]
            at = {}
            for k in sorted(o.attrs):
                tid = o.attrs.get_id(k).get_type()
                at[k] = [addr.get(h5py.h5o.get_info(tid).addr) if tid.committed() else None,
                         repr(o.attrs[k].tolist())]
            out[n] = {"rc": h5py.h5o.get_info(o.id).rc, "attrs": at}
    return out
if sys.argv[1] == "make":
    make(sys.argv[2], sys.argv[3])
else:
    print(json.dumps([desc(sys.argv[2]), desc(sys.argv[3])]))
"#;
    let sp = dir.join("self_type.py");
    std::fs::write(&sp, script).unwrap();
    let run = |args: &[&str]| -> String {
        let o = Command::new(&py).arg(&sp).args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let s = |p: &Path| p.to_str().unwrap().to_string();
    for lv in ["earliest", "latest"] {
        let src = dir.join(format!("{lv}.h5"));
        let dst = dir.join(format!("{lv}.copy.h5"));
        run(&["make", &s(&src), lv]);
        for filter in ["keep", "deflate:1"] {
            #[allow(clippy::needless_update)]
            let opts = CopyOptions {
                filter: parse_filter(filter).unwrap(),
                threads: 1,
                ..CopyOptions::default()
            };
            let r = copy_file(&src, &dst, &opts).unwrap();
            assert!(r.skipped.is_empty(), "{:?}", r.skipped);
            let v: serde_json::Value =
                serde_json::from_str(&run(&["desc", &s(&src), &s(&dst)])).unwrap();
            assert_eq!(v[0], v[1], "{lv} {filter}: h5py reads the copy differently");
            // the sharing itself, not just equal descriptions: `t` is
            // referenced by its link, the dataset and its two own attributes
            assert_eq!(v[1]["t"]["attrs"]["self"][0], "t", "{lv}: {}", v[1]);
            assert_eq!(v[1]["t"]["attrs"]["other"][0], "e", "{lv}: {}", v[1]);
            assert_eq!(v[1]["t"]["rc"], 4, "{lv}: {}", v[1]);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
