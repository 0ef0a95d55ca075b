//! Issue 44: `kill -9` during in-place edits. A child process (this test
//! binary again) applies a numbered sequence of attribute edits to a file
//! and is killed at seeded random moments; after each kill the file must
//! open in libhdf5 (h5py, when the oracle is there) and in purehdf, and hold
//! exactly the state after some edit `k` or `k + 1`, where `k` is the last
//! counter edit it shows. Then the child resumes from there. Files from our
//! writer (version 2 headers) and from h5py with `libver="earliest"`
//! (version 1 headers). Some odd edits resize or write the chunked,
//! filtered dataset `/c` instead (an extensible array index in our file, a
//! version 1 B-tree in h5py's), or edit the root group's links (soft and
//! hard links created, renamed, deleted: link messages in our file, a
//! symbol table in h5py's). `PUREHDF_EDIT_KILLS` sets the kills per file
//! (default 40).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use purehdf::low_level::attribute::Attribute;
use purehdf::low_level::write::Element;
use purehdf::{AttrValue, DatasetSpec, File, FileWriter, Filter};

mod common;
use common::Rng;

const GROUPS: u64 = 3;

/// Length `/c` is resized to by edit `j` (`j % 8 == 3`).
fn c_len(j: u64) -> u64 {
    j * 13 % 40
}

/// Elements of `/c` edit `j` (`j % 8 == 7`) sets to `j`: from `j % 5`, at
/// most 7 of them.
fn c_slab(j: u64, len: u64) -> (u64, u64) {
    let s = (j % 5).min(len);
    (s, (len - s).min(7))
}

/// Link edit `q` (edit `j = 8q + 5`): a soft link `s{q}` to `/g0`, a hard
/// link `t{q}` to `/c`, `s{q-2}` renamed `r{q-2}`, `t{q-2}` deleted; the
/// root group keeps one more link (`r…`) every four.
fn link_edit(ed: &mut purehdf::Editor, q: u64) -> purehdf::Result<()> {
    match q % 4 {
        0 => ed.soft_link("/g0", &format!("/s{q}")),
        1 => ed.hard_link("/c", &format!("/t{q}")),
        2 => ed.rename(&format!("/s{}", q - 2), &format!("/r{}", q - 2)),
        _ => ed.delete(&format!("/t{}", q - 2)),
    }
}

/// The root's links besides `g0..g2` and `c` after link edits `0..n`.
fn links_after(n: u64) -> Vec<String> {
    let mut v = std::collections::BTreeSet::new();
    for q in 0..n {
        match q % 4 {
            0 => v.insert(format!("s{q}")),
            1 => v.insert(format!("t{q}")),
            2 => v.remove(&format!("s{}", q - 2)) && v.insert(format!("r{}", q - 2)),
            _ => v.remove(&format!("t{}", q - 2)),
        };
    }
    v.into_iter().collect()
}

/// Edit `j`: even ones set the root's `counter` (an array whose length
/// varies); odd ones resize `/c` (`j % 8 == 3`), write into it
/// (`j % 8 == 7`), edit the root's links (`j % 8 == 5`, [`link_edit`]) or
/// set a string attribute `s` of group `g{j % 3}`.
fn edit(ed: &mut purehdf::Editor, j: u64) -> purehdf::Result<()> {
    if j % 8 == 5 {
        link_edit(ed, j / 8)
    } else if j.is_multiple_of(2) {
        let v: Vec<i64> = vec![j as i64; (j * 37 % 50 + 1) as usize];
        ed.set_attr("/", "counter", &AttrValue::array(&v))
    } else if j % 8 == 3 {
        ed.resize("/c", &[c_len(j)])
    } else if j % 8 == 7 {
        let len = ed.file().root()?.dataset("c")?.shape()[0];
        let (s, n) = c_slab(j, len);
        let bytes: Vec<u8> = (0..n).flat_map(|_| (j as i64).to_le_bytes()).collect();
        ed.write_slab("/c", &[s], &[n], &bytes)
    } else {
        let s = "y".repeat((j * 61 % 400) as usize);
        ed.set_attr(&format!("/g{}", j % GROUPS), "s", &AttrValue::string(&s))
    }
}

/// What the file holds: counter, each group's string length (None:
/// unset), the values of `/c`, the root's other links.
type State = (i64, Vec<Option<u64>>, Vec<i64>, Vec<String>);

/// `/c` as created: ten elements `0..10`.
fn c_start() -> Vec<i64> {
    (0..10).collect()
}

/// What the file holds after edit `j` (0: none).
fn state(j: u64) -> State {
    let counter = if j >= 2 { (j - j % 2) as i64 } else { -1 };
    let attr_edit = |i: &u64| i % 2 == 1 && i % 8 == 1;
    let groups = (0..GROUPS)
        .map(|g| {
            (1..=j)
                .rev()
                .find(|i| attr_edit(i) && i % GROUPS == g)
                .map(|i| i * 61 % 400)
        })
        .collect();
    let mut c = c_start();
    for i in 1..=j {
        if i % 8 == 3 {
            // grown elements read as the fill value, 0
            c.resize(c_len(i) as usize, 0);
        } else if i % 8 == 7 {
            let (s, n) = c_slab(i, c.len() as u64);
            c[s as usize..(s + n) as usize].fill(i as i64);
        }
    }
    let links = links_after((1..=j).filter(|i| i % 8 == 5).count() as u64);
    (counter, groups, c, links)
}

/// The root's links but the four it starts with, sorted.
fn other_links(mut names: Vec<String>) -> Vec<String> {
    names.retain(|n| !matches!(n.as_str(), "g0" | "g1" | "g2" | "c"));
    names.sort();
    names
}

fn attr<'a>(attrs: &'a [Attribute], name: &str) -> Option<&'a Attribute> {
    attrs.iter().find(|a| a.name == name)
}

/// The state as purehdf reads it.
fn ours(path: &Path) -> State {
    let f = File::open(path).unwrap();
    let root = f.object("/").unwrap().attributes().unwrap();
    let counter = attr(&root, "counter")
        .map(|a| i64::from_le_bytes(a.data[..8].try_into().unwrap()))
        .unwrap_or(-1);
    let groups = (0..GROUPS)
        .map(|g| {
            let a = f.object(&format!("/g{g}")).unwrap().attributes().unwrap();
            // a variable-length string: its bytes
            attr(&a, "s").map(|a| f.vlen_bytes(&a.data).unwrap().len() as u64)
        })
        .collect();
    let c = f
        .root()
        .unwrap()
        .dataset("c")
        .unwrap()
        .read_raw_vec(&purehdf::Selection::All)
        .unwrap()
        .chunks(8)
        .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let names = f.root().unwrap().links().unwrap();
    let links = other_links(names.into_iter().map(|l| l.0).collect());
    (counter, groups, c, links)
}

/// The state as h5py reads it.
fn theirs(py: &Path, path: &Path) -> State {
    let code = "import h5py,sys,json\n\
f=h5py.File(sys.argv[1],'r')\n\
c=int(f.attrs['counter'][0]) if 'counter' in f.attrs else -1\n\
g=[len(f['g%d'%i].attrs['s']) if 's' in f['g%d'%i].attrs else None for i in range(3)]\n\
print(json.dumps([c,g,[int(x) for x in f['c'][()]],list(f.keys())]))";
    let out = Command::new(py)
        .args(["-c", code])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "h5py cannot open the file after a kill: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v[0].as_i64().unwrap(),
        v[1].as_array()
            .unwrap()
            .iter()
            .map(serde_json::Value::as_u64)
            .collect(),
        v[2].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect(),
        other_links(
            v[3].as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect(),
        ),
    )
}

/// The edit number `k` whose state `s` is (the last one of two candidates).
fn which(s: &State) -> Option<u64> {
    let base = if s.0 < 0 { 0 } else { s.0 as u64 };
    [base, base + 1].into_iter().rev().find(|&k| state(k) == *s)
}

#[test]
fn kill_child() {
    let Ok(path) = std::env::var("PUREHDF_EDIT_KILL_FILE") else {
        return;
    };
    let from: u64 = std::env::var("PUREHDF_EDIT_KILL_FROM")
        .unwrap()
        .parse()
        .unwrap();
    let mut ed = File::open_rw(&path).unwrap();
    ed.set_durability(purehdf::Durability::Ordered);
    for j in from.. {
        edit(&mut ed, j).unwrap();
    }
}

fn run(path: &Path, kills: usize, seed: u64, py: Option<&Path>) {
    let exe = std::env::current_exe().unwrap();
    let mut r = Rng(seed);
    let mut done = 0u64;
    let mut progressed = 0usize;
    for _ in 0..kills {
        let mut child = Command::new(&exe)
            .args(["kill_child", "--exact", "--nocapture", "--test-threads=1"])
            .env("PUREHDF_EDIT_KILL_FILE", path)
            .env("PUREHDF_EDIT_KILL_FROM", (done + 1).to_string())
            .env("HDF5_USE_FILE_LOCKING", "FALSE")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(2_000 + r.below(60_000)));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "the child ended on its own");
        let s = ours(path);
        let k = which(&s).unwrap_or_else(|| panic!("state {s:?} is no edit's state"));
        if let Some(py) = py {
            assert_eq!(theirs(py, path), s, "h5py and purehdf disagree");
        }
        if k > done {
            progressed += 1;
        }
        done = k;
    }
    eprintln!(
        "{}: {kills} kills, {progressed} after progress, {done} edits committed",
        path.display()
    );
    assert!(
        progressed > kills / 4,
        "too few kills landed after progress"
    );
    if let Some(h5dump) = which_h5dump() {
        let st = Command::new(h5dump).arg("-H").arg(path).output().unwrap();
        assert!(st.status.success(), "h5dump -H refuses the file");
    }
}

fn which_h5dump() -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join("h5dump"))
        .find(|p| p.is_file())
}

#[test]
fn kill_during_edits_leaves_old_or_new() {
    let kills: usize = std::env::var("PUREHDF_EDIT_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let dir = std::env::temp_dir().join(format!("purehdf-edit-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let py = common::oracle_python();
    // ours
    let a = dir.join("ours.h5");
    let mut w = FileWriter::create(&a).unwrap();
    for g in 0..GROUPS {
        w.create_group(w.root(), &format!("g{g}")).unwrap();
    }
    let spec = DatasetSpec::new(i64::dtype(), &[10])
        .with_maxshape(&[None])
        .chunked(&[3], vec![Filter::shuffle(), Filter::deflate(4).unwrap()]);
    w.create_dataset(
        w.root(),
        "c",
        spec,
        purehdf::low_level::write::to_bytes(&c_start()),
    )
    .unwrap();
    w.commit().unwrap();
    run(&a, kills, 0x1234_5678, py.as_deref());
    // h5py's, version 1 headers
    match &py {
        Some(py) => {
            let b = dir.join("theirs.h5");
            let st = Command::new(py)
                .args([
                    "-c",
                    "import h5py,sys,numpy as np\nwith h5py.File(sys.argv[1],'w',libver='earliest') as f:\n  [f.create_group('g%d'%i) for i in range(3)]\n  f.create_dataset('c',data=np.arange(10),chunks=(3,),maxshape=(None,),shuffle=True,compression='gzip')",
                ])
                .arg(&b)
                .status()
                .unwrap();
            assert!(st.success());
            run(&b, kills, 0x9abc_def0, Some(py));
        }
        None => eprintln!("skipped: h5py-written file (no oracle python)"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
