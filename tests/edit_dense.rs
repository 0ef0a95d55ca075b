//! Issue 44: in-place edits of dense link and attribute storage and the
//! compact ↔ dense transitions, at libhdf5's thresholds (8 compact, 6
//! dense): a group and an attribute set walked up past 8 and down below 6
//! with our editor, the storage kind, every link and attribute value and
//! the creation order checked after each step with our reader. The same
//! walks are checked against h5py by the random edit programs
//! (`tests/edit_random.rs`).

use purehdf::low_level::attribute::read_entries;
use purehdf::low_level::file::AttrStorage;
use purehdf::low_level::group::GroupStorage;
use purehdf::low_level::write::CreationOrder;
use purehdf::{AttrValue, File, FileWriter};

fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("purehdf-edit-dense-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(format!("{tag}.h5"))
}

/// A file with group `/g` of `n` soft links, tracked and indexed when `order`.
fn base(path: &std::path::Path, n: usize, order: bool) {
    let mut w = FileWriter::create(path).unwrap();
    let g = w.create_group(w.root(), "g").unwrap();
    if order {
        w.set_link_creation_order(g, CreationOrder::TRACKED_INDEXED)
            .unwrap();
        w.set_attr_creation_order(g, CreationOrder::TRACKED_INDEXED)
            .unwrap();
    }
    for i in 0..n {
        w.soft_link(g, &format!("s{i:02}"), &format!("/t{i}"))
            .unwrap();
    }
    w.commit().unwrap();
}

fn group_state(f: &File, order: bool) -> (GroupStorage, Vec<(String, String)>) {
    let g = f.root().unwrap().group("g").unwrap();
    let links = if order {
        g.links_by_creation_order().unwrap()
    } else {
        g.links().unwrap()
    };
    let links = links
        .into_iter()
        .map(|(n, l)| match l {
            purehdf::Link::Soft(t) => (n, t),
            l => (n, format!("{l:?}")),
        })
        .collect();
    (g.storage(), links)
}

#[test]
fn links_cross_both_thresholds() {
    for order in [false, true] {
        let path = scratch(&format!("links-{order}"));
        base(&path, 7, order);
        let mut ed = File::open_rw(&path).unwrap();
        // expected links in listing order (creation order when tracked)
        let mut want: Vec<(String, String)> = (0..7)
            .map(|i| (format!("s{i:02}"), format!("/t{i}")))
            .collect();
        let check = |ed: &purehdf::Editor, want: &[(String, String)], kind: GroupStorage| {
            let mut want = want.to_vec();
            if !order {
                want.sort();
            }
            for f in [ed.file().clone(), File::open(ed.path()).unwrap()] {
                let (k, got) = group_state(&f, order);
                assert_eq!(k, kind, "storage with {} links", want.len());
                assert_eq!(got, want);
            }
        };
        check(&ed, &want, GroupStorage::Compact);
        for (i, kind) in [(7, GroupStorage::Compact), (8, GroupStorage::Dense)] {
            ed.soft_link(&format!("/t{i}"), &format!("/g/s{i:02}"))
                .unwrap();
            want.push((format!("s{i:02}"), format!("/t{i}")));
            check(&ed, &want, kind);
        }
        for i in 9..20 {
            ed.soft_link(&format!("/t{i}"), &format!("/g/s{i:02}"))
                .unwrap();
            want.push((format!("s{i:02}"), format!("/t{i}")));
        }
        check(&ed, &want, GroupStorage::Dense);
        // a rename in dense storage: the link takes the next creation order
        ed.rename("/g/s03", "/g/r03").unwrap();
        want.retain(|(n, _)| n != "s03");
        want.push(("r03".into(), "/t3".into()));
        check(&ed, &want, GroupStorage::Dense);
        // down: dense while 6 or more links remain, compact below
        while want.len() > 6 {
            let (n, _) = want.remove(0);
            ed.delete(&format!("/g/{n}")).unwrap();
            check(&ed, &want, GroupStorage::Dense);
        }
        let (n, _) = want.remove(0);
        ed.delete(&format!("/g/{n}")).unwrap();
        check(&ed, &want, GroupStorage::Compact);
        // a rename at 8 compact links goes dense, as libhdf5's move does
        while want.len() < 8 {
            let i = want.len() + 40;
            ed.soft_link(&format!("/t{i}"), &format!("/g/s{i:02}"))
                .unwrap();
            want.push((format!("s{i:02}"), format!("/t{i}")));
        }
        check(&ed, &want, GroupStorage::Compact);
        let (n, t) = want.remove(0);
        ed.rename(&format!("/g/{n}"), "/g/zz").unwrap();
        want.push(("zz".into(), t));
        check(&ed, &want, GroupStorage::Dense);
        drop(ed);
        let _ = std::fs::remove_file(&path);
    }
}

fn attr_state(f: &File) -> (bool, Vec<(String, String, Option<u64>)>) {
    let g = f.root().unwrap().group("g").unwrap();
    let dense = g.attr_storage() == AttrStorage::Dense;
    let list = read_entries(f, g.header())
        .unwrap()
        .into_iter()
        .map(|e| {
            let v = e.attribute.read_scalar::<i64>().unwrap();
            (e.attribute.name.clone(), v.to_string(), e.creation_order)
        })
        .collect();
    (dense, list)
}

#[test]
fn attributes_cross_both_thresholds() {
    for order in [false, true] {
        let path = scratch(&format!("attrs-{order}"));
        base(&path, 1, order);
        let mut ed = File::open_rw(&path).unwrap();
        // (name, value) in listing order
        let mut want: Vec<(String, i64)> = Vec::new();
        let check = |ed: &purehdf::Editor, want: &[(String, i64)], dense: bool| {
            let mut want = want.to_vec();
            if !order {
                want.sort();
            }
            for f in [ed.file().clone(), File::open(ed.path()).unwrap()] {
                let (d, got) = attr_state(&f);
                assert_eq!(d, dense, "storage with {} attributes", want.len());
                let names: Vec<(String, String)> =
                    got.iter().map(|(n, v, _)| (n.clone(), v.clone())).collect();
                let exp: Vec<(String, String)> = want
                    .iter()
                    .map(|(n, v)| (n.clone(), v.to_string()))
                    .collect();
                assert_eq!(names, exp);
                if order {
                    let orders: Vec<u64> = got.iter().map(|g| g.2.unwrap()).collect();
                    assert!(orders.windows(2).all(|w| w[0] < w[1]), "{orders:?}");
                }
            }
        };
        let set = |ed: &mut purehdf::Editor, want: &mut Vec<(String, i64)>, n: &str, v: i64| {
            ed.set_attr("/g", n, &AttrValue::scalar(v)).unwrap();
            want.retain(|(m, _)| m != n);
            want.push((n.to_string(), v));
        };
        for i in 0..8 {
            set(&mut ed, &mut want, &format!("a{i}"), i);
        }
        check(&ed, &want, false);
        // replacing one of 8 compact attributes stays compact (7, then 8)
        set(&mut ed, &mut want, "a2", 102);
        check(&ed, &want, false);
        set(&mut ed, &mut want, "a8", 8);
        check(&ed, &want, true);
        for i in 9..30 {
            set(&mut ed, &mut want, &format!("a{i}"), i);
        }
        set(&mut ed, &mut want, "a4", 104);
        check(&ed, &want, true);
        while want.len() > 6 {
            let (n, _) = want.remove(0);
            ed.delete_attr("/g", &n).unwrap();
            check(&ed, &want, true);
        }
        // replacing one of 6 dense attributes: 5 (compact), then 6
        let n = want[2].0.clone();
        set(&mut ed, &mut want, &n, -1);
        check(&ed, &want, false);
        // an attribute too large for a header message goes dense at once
        let big: Vec<i64> = (0..10_000).collect();
        ed.set_attr("/g", "big", &AttrValue::array(&big)).unwrap();
        let g = File::open(ed.path())
            .unwrap()
            .root()
            .unwrap()
            .group("g")
            .unwrap();
        assert_eq!(g.attr_storage(), AttrStorage::Dense);
        assert_eq!(g.attribute("big").unwrap().read::<i64>().unwrap(), big);
        // 6 left: not below min_dense, so still dense; one fewer is compact
        ed.delete_attr("/g", "big").unwrap();
        check(&ed, &want, true);
        let (n, _) = want.remove(0);
        ed.delete_attr("/g", &n).unwrap();
        check(&ed, &want, false);
        assert!(matches!(
            ed.delete_attr("/g", "nothing"),
            Err(purehdf::Error::NotFound(_))
        ));
        drop(ed);
        let _ = std::fs::remove_file(&path);
    }
}
