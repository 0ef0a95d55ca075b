//! `h5 copy SRC DST --filter keep` keeps what it does not re-encode exactly as
//! stored, checked through h5py: (1) every filter pipeline stage (id, flags,
//! client data and name) of datasets whose chunks move unchanged, for the
//! hdf5plugin filters (Blosc2, Blosc, bitshuffle, LZ4, Zstd) and libhdf5's own
//! (gzip, shuffle, Fletcher32, szip); (2) whether each attribute's and
//! dataset's datatype is committed or inline; (3) user-defined links of
//! libhdf5's `tudlink.h5` carried through as stored.

mod common;
use common::oracle_python;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Writes `filters.h5` and `types.h5` into `argv[1]`.
const MAKE: &str = r#"
import sys
import numpy as np, h5py, hdf5plugin
d = sys.argv[1]
x = np.arange(6000, dtype='<i4').reshape(60, 100)
rec = np.dtype([('a', '<f8'), ('b', '<i4'), ('c', '<i4')])
rec12 = np.dtype([('a', '<f4'), ('b', '<i4'), ('c', '<i4')])
with h5py.File(d + '/filters.h5', 'w') as f:
    i = 0
    for cname in ['blosclz', 'lz4', 'lz4hc', 'zlib', 'zstd']:
        for clevel, filt in [(0, hdf5plugin.Blosc2.NOFILTER), (5, hdf5plugin.Blosc2.SHUFFLE),
                             (9, hdf5plugin.Blosc2.BITSHUFFLE)]:
            f.create_dataset('blosc2_%02d' % i, data=x, chunks=(7, 33),
                             **hdf5plugin.Blosc2(cname=cname, clevel=clevel, filters=filt))
            i += 1
    f.create_dataset('blosc2_rec', data=np.zeros(279 * 4, rec), chunks=(279,),
                     **hdf5plugin.Blosc2(cname='blosclz', clevel=9, filters=0))
    f.create_dataset('blosc_rec', data=np.zeros(279 * 4, rec), chunks=(279,),
                     **hdf5plugin.Blosc(cname='blosclz', clevel=9, shuffle=0))
    f.create_dataset('blosc_lz4', data=x, chunks=(10, 10),
                     **hdf5plugin.Blosc(cname='lz4', clevel=5, shuffle=2))
    f.create_dataset('bs_lz4', data=np.zeros(1000, rec12), chunks=(100,),
                     **hdf5plugin.Bitshuffle(nelems=256, cname='lz4'))
    f.create_dataset('bs_none', data=x, chunks=(10, 50),
                     **hdf5plugin.Bitshuffle(nelems=0, cname='none'))
    f.create_dataset('bs_zstd', data=x, chunks=(10, 50),
                     **hdf5plugin.Bitshuffle(cname='zstd', clevel=7))
    f.create_dataset('lz4', data=x, chunks=(20, 20), **hdf5plugin.LZ4(nbytes=1024))
    f.create_dataset('zstd', data=x, chunks=(20, 20), **hdf5plugin.Zstd(clevel=12))
    f.create_dataset('gzip', data=x.astype('<f8'), chunks=(11, 17), compression='gzip',
                     compression_opts=6, shuffle=True, fletcher32=True)
    f.create_dataset('vlen_gzip', data=np.array(['a', 'bb'] * 50, dtype=object),
                     dtype=h5py.string_dtype(), chunks=(10,), compression='gzip', shuffle=True)
    if 'szip' in h5py.filters.encode:
        f.create_dataset('szip', data=x, chunks=(20, 20), compression='szip',
                         compression_opts=('nn', 16))
with h5py.File(d + '/types.h5', 'w') as f:
    f['vs_t'] = h5py.string_dtype()
    f['fs_t'] = np.dtype('S7')
    f['rec_t'] = rec
    f['vrec_t'] = np.dtype([('s', h5py.string_dtype()), ('n', '<i2')])
    for o in [f, f.create_group('g'), f.create_dataset('plain', data=np.arange(3))]:
        o.attrs['vs_inline'] = 'hello'
        o.attrs.create('vs_committed', 'world', dtype=f['vs_t'])
        o.attrs.create('fs_inline', np.bytes_('abc'), dtype='S7')
        o.attrs.create('fs_committed', np.bytes_('def'), dtype=f['fs_t'])
        o.attrs.create('rec_inline', np.zeros((), rec), dtype=rec)
        o.attrs.create('rec_committed', np.zeros((), rec), dtype=f['rec_t'])
        v = np.array(('x', 1), dtype=f['vrec_t'].dtype)
        o.attrs.create('vrec_committed', v, dtype=f['vrec_t'])
        o.attrs.create('vrec_inline', v, dtype=v.dtype)
    f.create_dataset('ds_vs_inline', data=['a', 'b'], dtype=h5py.string_dtype())
    f.create_dataset('ds_vs_committed', shape=(2,), dtype=f['vs_t'])
    f.create_dataset('ds_rec_inline', shape=(2,), dtype=rec)
    f.create_dataset('ds_rec_committed', shape=(2,), dtype=f['rec_t'])
    # a committed datatype no link reaches any more (anonymous)
    f['gone_t'] = np.dtype([('p', '<u2'), ('q', '<f4')])
    f.create_dataset('ds_anon', shape=(2,), dtype=f['gone_t'])
    f['plain'].attrs.create('anon', np.zeros((), f['gone_t'].dtype), dtype=f['gone_t'])
    del f['gone_t']
"#;

/// Describes `argv[1]` and `argv[2]` (source and copy) side by side.
const CHECK: &str = r#"
import sys, json
import h5py, hdf5plugin
def describe(path):
    out = {}
    with h5py.File(path) as f:
        def visit(name, obj):
            oid = obj.id
            for a in obj.attrs:
                t = h5py.h5a.open(oid, a.encode()).get_type()
                out['/%s@%s' % (name, a)] = 'committed' if t.committed() else 'inline'
            if isinstance(obj, h5py.Dataset):
                pl = oid.get_create_plist()
                out['/' + name + ' filters'] = [
                    [fi[0], fi[1], list(fi[2]), fi[3].decode('latin-1')]
                    for fi in (pl.get_filter(i) for i in range(pl.get_nfilters()))]
                out['/' + name + ' type'] = 'committed' if oid.get_type().committed() else 'inline'
        visit('', f)
        f.visititems(visit)
    return out
print(json.dumps([describe(sys.argv[1]), describe(sys.argv[2])]))
"#;

/// User-defined links of the copy of `tudlink.h5` (and the source) per h5py.
const LINKS: &str = r#"
import sys, json, subprocess
import h5py
def links(path):
    out = {}
    with h5py.File(path) as f:
        for n in f:
            info = f.id.links.get_info(n.encode())
            try:
                kind = type(f.get(n, getlink=True)).__name__
            except TypeError:  # h5py has no class for user-defined links
                kind = 'user-defined'
            if info.type == h5py.h5l.TYPE_HARD:
                v = None
            elif info.type >= 64:  # user-defined: compare the stored value's size
                v = 'size %d' % info.u
            else:
                v = f.id.links.get_val(n.encode())
            out[n] = [int(info.type), kind,
                      list(v) if isinstance(v, (bytes, bytearray)) else str(v)]
    return out
res = {'src': links(sys.argv[1]), 'copy': links(sys.argv[2])}
try:
    p = subprocess.run(['h5dump', '-H', sys.argv[2]], capture_output=True, timeout=20)
    res['h5dump'] = [p.returncode, p.stderr.decode('latin-1')[-400:]]
except FileNotFoundError:
    res['h5dump'] = [0, 'absent']
print(json.dumps(res))
"#;

fn py(py: &Path, script: &str, args: &[&Path]) -> Value {
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("run the oracle");
    assert!(
        out.status.success(),
        "oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    if out.stdout.iter().all(u8::is_ascii_whitespace) {
        return Value::Null;
    }
    serde_json::from_slice(&out.stdout).expect("oracle JSON")
}

/// `h5 copy src dst --filter keep`; returns its standard error.
fn h5_copy(src: &Path, dst: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_h5"))
        .arg("copy")
        .arg(src)
        .arg(dst)
        .args(["--filter", "keep"])
        .output()
        .expect("run h5 copy");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "h5 copy {}: {err}", src.display());
    err
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("purehdf-copyfid-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every key of the source's description equal in the copy's; returns how
/// many entries matched.
fn same(desc: &Value, what: &str) -> usize {
    let (src, copy) = (&desc[0], &desc[1]);
    let src = src.as_object().expect("source description");
    let mut diffs = Vec::new();
    for (k, v) in src {
        if copy.get(k) != Some(v) {
            diffs.push(format!("{k}: source {v}, copy {:?}", copy.get(k)));
        }
    }
    assert!(diffs.is_empty(), "{what}:\n{}", diffs.join("\n"));
    src.len()
}

#[test]
fn keep_copies_pipelines_and_type_sharing_as_stored() {
    let Some(python) = oracle_python() else {
        println!("skipped: copy fidelity (no oracle python)");
        return;
    };
    let dir = temp_dir("keep");
    py(&python, MAKE, &[&dir]);

    let (src, dst) = (dir.join("filters.h5"), dir.join("filters.c.h5"));
    let err = h5_copy(&src, &dst);
    assert!(!err.contains("skipped"), "{err}");
    let desc = py(&python, CHECK, &[&src, &dst]);
    let stages: usize = desc[0]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.ends_with(" filters"))
        .map(|(_, v)| v.as_array().map_or(0, Vec::len))
        .sum();
    assert!(stages >= 25, "{stages} filter stages in the source");
    let n = same(&desc, "filters.h5 copied with --filter keep");
    println!("copy fidelity: {n} entries of filters.h5 ({stages} filter stages) kept");

    let (src, dst) = (dir.join("types.h5"), dir.join("types.c.h5"));
    let err = h5_copy(&src, &dst);
    assert!(!err.contains("skipped"), "{err}");
    let desc = py(&python, CHECK, &[&src, &dst]);
    let committed = desc[0]
        .as_object()
        .unwrap()
        .values()
        .filter(|v| *v == "committed")
        .count();
    assert!(committed >= 10, "{committed} committed types in the source");
    let n = same(&desc, "types.h5 copied with --filter keep");
    println!("copy fidelity: {n} entries of types.h5 ({committed} committed) kept");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn user_defined_links_carried_through() {
    let Some(python) = oracle_python() else {
        println!("skipped: copy fidelity tudlink (no oracle python)");
        return;
    };
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let src = corpus.join("hdf5/tools/test/h5dump/testfiles/tudlink.h5");
    if !src.is_file() {
        println!("skipped: copy fidelity tudlink (no {})", src.display());
        return;
    }
    let dir = temp_dir("udlink");
    let dst = dir.join("tudlink.c.h5");
    let err = h5_copy(&src, &dst);
    assert!(!err.contains("skipped"), "{err}");
    let got = py(&python, LINKS, &[&src, &dst]);
    let ud: Vec<&String> = got["src"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v[0].as_i64().is_some_and(|t| t >= 64))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(ud.len(), 2, "user-defined links of the source: {got}");
    assert_eq!(got["src"], got["copy"], "links of source and copy");
    assert_eq!(
        got["h5dump"][0], 0,
        "h5dump -H of the copy: {}",
        got["h5dump"]
    );
    println!(
        "copy fidelity: {} user-defined links carried through",
        ud.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
