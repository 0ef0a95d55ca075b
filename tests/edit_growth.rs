//! Issue 44: rewriting the same attributes 1,000 times in one editing
//! session reuses the space each rewrite frees, so the file grows by a
//! bounded amount (not by every rewrite's bytes), and the last values read
//! back (and in h5py, when the oracle is there).

use purehdf::low_level::write::to_bytes;
use purehdf::low_level::write::Element;
use purehdf::{AttrValue, DatasetSpec, File, FileWriter};

mod common;

const REWRITES: usize = 1000;
/// The bound on growth: a few header chunks and heap collections.
const BOUND: u64 = 64 * 1024;

#[test]
fn thousand_rewrites_stay_under_a_bound() {
    let dir = std::env::temp_dir().join(format!("purehdf-edit-growth-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("g.h5");
    let mut w = FileWriter::create(&path).unwrap();
    let g = w.create_group(w.root(), "g").unwrap();
    w.set_attr(g, "keep", AttrValue::string("kept")).unwrap();
    w.create_dataset(
        w.root(),
        "d",
        DatasetSpec::new(f64::dtype(), &[4]),
        to_bytes(&[1.0f64, 2.0, 3.0, 4.0]),
    )
    .unwrap();
    w.commit().unwrap();
    let start = std::fs::metadata(&path).unwrap().len();
    let mut ed = File::open_rw(&path).unwrap();
    ed.set_durability(purehdf::Durability::Ordered);
    let mut written = 0u64;
    for i in 0..REWRITES {
        let s = "x".repeat(i * 53 % 700);
        written += s.len() as u64;
        ed.set_attr("/g", "churn", &AttrValue::string(&s)).unwrap();
        let v: Vec<i64> = (0..(i % 90) as i64).collect();
        written += 8 * v.len() as u64;
        ed.set_attr("/d", "arr", &AttrValue::array(&v)).unwrap();
    }
    drop(ed);
    let end = std::fs::metadata(&path).unwrap().len();
    eprintln!(
        "growth: {start} -> {end} bytes after {} rewrites ({written} value bytes written)",
        2 * REWRITES
    );
    assert!(end - start <= BOUND, "grew by {} bytes", end - start);
    let f = File::open(&path).unwrap();
    let attrs = f.object("/g").unwrap().attributes().unwrap();
    let names: Vec<&str> = attrs.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let last = (REWRITES - 1) * 53 % 700;
    let arr = f.object("/d").unwrap().attributes().unwrap();
    assert_eq!(arr[0].shape(), &[((REWRITES - 1) % 90) as u64]);
    if let Some(py) = common::oracle_python() {
        let out = std::process::Command::new(py)
            .args([
                "-c",
                "import h5py,sys; f=h5py.File(sys.argv[1],'r'); \
                 print(len(f['g'].attrs['churn']), f['g'].attrs['keep'], int(f['d'].attrs['arr'][-1]), f['d'][()].tolist())",
            ])
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            text.trim(),
            format!(
                "{last} kept {} [1.0, 2.0, 3.0, 4.0]",
                (REWRITES - 1) % 90 - 1
            )
        );
    } else {
        eprintln!("skipped: h5py check (no oracle python)");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Chunked writes and resizes repeated in one session: the chunks and
/// chunk indexes each one replaces are reused, so the file stays under a
/// bound, and the values match a model (and h5py, when it is there).
#[test]
fn chunked_rewrites_stay_under_a_bound() {
    let dir = std::env::temp_dir().join(format!("purehdf-edit-growth-c-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("c.h5");
    let mut w = FileWriter::create(&path).unwrap();
    let mut model: Vec<i64> = (0..100).collect();
    let spec = DatasetSpec::new(i64::dtype(), &[100])
        .with_maxshape(&[None])
        .chunked(&[8], vec![purehdf::Filter::deflate(4).unwrap()]);
    w.create_dataset(w.root(), "c", spec, to_bytes(&model))
        .unwrap();
    w.commit().unwrap();
    let start = std::fs::metadata(&path).unwrap().len();
    let mut ed = File::open_rw(&path).unwrap();
    ed.set_durability(purehdf::Durability::Ordered);
    for i in 0..REWRITES as u64 {
        if i % 10 == 9 {
            let n = 60 + (i * 7 % 80) as usize;
            ed.resize("/c", &[n as u64]).unwrap();
            model.resize(n, 0);
        } else {
            let s = (i * 13) % model.len() as u64;
            let n = (model.len() as u64 - s).min(1 + i % 20);
            let vals: Vec<i64> = (0..n as i64).map(|k| i as i64 * 1000 + k).collect();
            ed.write_slab("/c", &[s], &[n], &to_bytes(&vals)).unwrap();
            model[s as usize..(s + n) as usize].copy_from_slice(&vals);
        }
    }
    drop(ed);
    let end = std::fs::metadata(&path).unwrap().len();
    eprintln!("chunked growth: {start} -> {end} bytes after {REWRITES} writes and resizes");
    assert!(end - start <= BOUND, "grew by {} bytes", end - start);
    let f = File::open(&path).unwrap();
    let got: Vec<i64> = f.root().unwrap().dataset("c").unwrap().read().unwrap();
    assert_eq!(got, model);
    if let Some(py) = common::oracle_python() {
        let out = std::process::Command::new(py)
            .args([
                "-c",
                "import h5py,sys; f=h5py.File(sys.argv[1],'r'); print(f['c'][()].tolist())",
            ])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            format!("{model:?}")
        );
    } else {
        eprintln!("skipped: h5py check (no oracle python)");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Link churn in a symbol-table group of an h5py (`libver="earliest"`)
/// file: every create, rename and delete writes the group's whole table
/// anew and frees the old one, which later operations reuse, so 1,000 of
/// them stay under a bound; h5py reads the final links.
#[test]
fn symbol_table_link_churn_stays_under_a_bound() {
    let Some(py) = common::oracle_python() else {
        eprintln!("skipped: no oracle python to write a symbol-table file");
        return;
    };
    let dir = std::env::temp_dir().join(format!("purehdf-edit-growth-s-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.h5");
    let st = std::process::Command::new(&py)
        .args([
            "-c",
            "import h5py,sys,numpy as np\nwith h5py.File(sys.argv[1],'w',libver='earliest') as f:\n  g=f.create_group('g')\n  [g.create_dataset('d%02d'%i,data=np.arange(3)) for i in range(40)]",
        ])
        .arg(&path)
        .status()
        .unwrap();
    assert!(st.success());
    let start = std::fs::metadata(&path).unwrap().len();
    let mut ed = File::open_rw(&path).unwrap();
    ed.set_durability(purehdf::Durability::Ordered);
    let mut model: std::collections::BTreeMap<String, String> = (0..40)
        .map(|i| (format!("d{i:02}"), String::new()))
        .collect();
    for i in 0..REWRITES {
        match i % 4 {
            0 => {
                let t = format!("/t{}", i % 7);
                ed.soft_link(&t, &format!("/g/s{i}")).unwrap();
                model.insert(format!("s{i}"), t);
            }
            1 => {
                let (a, t) = model
                    .iter()
                    .nth(i * 31 % model.len())
                    .map(|(a, t)| (a.clone(), t.clone()))
                    .unwrap();
                let b = format!("m{i}");
                ed.rename(&format!("/g/{a}"), &format!("/g/{b}")).unwrap();
                model.remove(&a);
                model.insert(b, t);
            }
            2 => {
                let a = model.keys().find(|k| k.starts_with('s')).cloned();
                if let Some(a) = a {
                    ed.delete(&format!("/g/{a}")).unwrap();
                    model.remove(&a);
                }
            }
            _ => {
                let d = model.iter().find(|(_, t)| t.is_empty()).unwrap().0.clone();
                ed.hard_link(&format!("/g/{d}"), &format!("/g/h{i}"))
                    .unwrap();
                ed.delete(&format!("/g/h{i}")).unwrap();
            }
        }
    }
    drop(ed);
    let end = std::fs::metadata(&path).unwrap().len();
    eprintln!(
        "symbol-table growth: {start} -> {end} bytes after {REWRITES} link edits ({} links)",
        model.len()
    );
    assert!(end - start <= BOUND, "grew by {} bytes", end - start);
    let f = File::open(&path).unwrap();
    let purehdf::Object::Group(g) = f.object("/g").unwrap() else {
        panic!("/g is not a group");
    };
    let mut ours: Vec<String> = g.links().unwrap().into_iter().map(|l| l.0).collect();
    ours.sort();
    let want: Vec<String> = model.keys().cloned().collect();
    assert_eq!(ours, want);
    let out = std::process::Command::new(py)
        .args([
            "-c",
            "import h5py,sys; f=h5py.File(sys.argv[1],'r'); g=f['g']; \
             print(sorted(g.keys()) == sorted(sys.argv[2:]), \
             sum(isinstance(g.get(k, getlink=True), h5py.SoftLink) for k in g))",
        ])
        .arg(&path)
        .args(&want)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let soft = model.values().filter(|t| !t.is_empty()).count();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("True {soft}")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
