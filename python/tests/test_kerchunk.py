"""purehdf.kerchunk: the references of random h5py files with every filter
stack, of the project's random files, of the in-scope corpus files and of
medh5 samples of the four profiles, opened through fsspec's reference file
system and zarr (and VirtualiZarr + xarray), read every value h5py reads;
a Fletcher-32 mismatch and a file changed after indexing are detected.

PUREHDF_KERCHUNK_FILES sets how many random filter-stack files (default 300),
PUREHDF_KERCHUNK_CORPUS how many corpus files (default 150, the CI size;
100000 for all in scope)."""

import glob
import os
import random
import subprocess
import sys
import warnings

import pytest

from conftest import INTEROP, ROOT, need

COUNT = int(os.environ.get("PUREHDF_KERCHUNK_FILES", "300"))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus")

warnings.filterwarnings("ignore", message=".*Numcodecs codecs are not in the Zarr.*")


def _zarr_needed():
    for m in ("zarr", "fsspec", "numcodecs", "h5py", "numpy"):
        need(m)


def equal(a, b):
    """Exact equality of two numpy arrays (NaNs equal, bytes compared for
    structured and void types)."""
    import numpy as np
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "OSU" or b.dtype.kind in "OSU":
        # a fixed-length string ends at its first NUL (HDF5's null-terminated
        # strings; libhdf5 zeroes what follows, zarr hands on the stored
        # bytes as kerchunk's own references do)
        norm = lambda v: (v.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
                          if isinstance(v, bytes) else v)
        return [norm(x) for x in a.ravel().tolist()] == [norm(x) for x in b.ravel().tolist()]
    if a.dtype.names and b.dtype.names:
        # field by field: kerchunk's dtypes name the padding between fields
        # (`_pad<offset>` void fields), whose bytes h5py does not keep
        names = [n for n in b.dtype.names if not n.startswith("_pad")]
        # (in offset order here, member order in h5py's)
        return (a.dtype.itemsize == b.dtype.itemsize and sorted(a.dtype.names) == sorted(names)
                and all(equal(a[n], b[n]) for n in names))
    if a.dtype.names or a.dtype.kind == "V" or b.dtype.kind == "V":
        return a.dtype.itemsize == b.dtype.itemsize and a.tobytes() == b.tobytes()
    if (a.dtype.kind, a.dtype.itemsize) != (b.dtype.kind, b.dtype.itemsize):
        return False
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b)) and a.dtype.kind == b.dtype.kind


BIG = 64 << 20


def _selection(ds):
    """All of a dataset, or for one over BIG bytes (the corpus has a 4 GiB
    one, mostly unwritten: whole, both sides together would need 8 GiB) a
    slab of at most BIG bytes from its end along the first axis, which
    still crosses chunk boundaries, the partial edge chunk and unwritten
    chunks."""
    nbytes = ds.size * ds.dtype.itemsize
    if ds.ndim == 0 or nbytes <= BIG:
        return ()
    rows = max(1, BIG * ds.shape[0] // max(nbytes, 1))
    return (slice(ds.shape[0] - rows, ds.shape[0]),)


def compare_file(path, codecs="standard"):
    """(datasets equal, refused {path: why}, differences [str])."""
    import h5py
    import purehdf
    refs = purehdf.kerchunk.refs(path, codecs=codecs)
    refused = refs["purehdf"]["refused"]
    root = purehdf.kerchunk.open_zarr(refs)
    same, diffs = 0, []
    names = []
    with h5py.File(path, "r") as f:
        # visititems stops at the first object libhdf5 cannot open: walk
        # by hand as it does (depth first in name order, hard links only,
        # each object once) and leave out the objects h5py cannot open
        seen, steps = {hash(f["/"].id)}, [0]

        def walk(base, g):
            try:
                keys = sorted(g.keys())
            except Exception:  # noqa: BLE001  (h5py cannot list the group)
                return
            for k in keys:
                steps[0] += 1
                if steps[0] > 100000:
                    return
                try:
                    if not isinstance(g.get(k, getlink=True), h5py.HardLink):
                        continue
                    o = g[k]
                except Exception:  # noqa: BLE001
                    continue
                if hash(o.id) in seen:
                    continue
                seen.add(hash(o.id))
                if isinstance(o, h5py.Dataset):
                    names.append(base + k)
                elif isinstance(o, h5py.Group):
                    walk(base + k + "/", o)

        walk("", f)
        for n in names:
            if n in refused:
                continue
            sel = _selection(f[n])
            try:
                want = f[n][sel]
            except Exception:  # noqa: BLE001  (h5py cannot read it either)
                continue
            try:
                got = root[n][sel]
            except Exception as e:  # noqa: BLE001
                diffs.append("%s: read failed: %r" % (n, e))
                continue
            if equal(want, got):
                same += 1
            else:
                diffs.append("%s: values differ (%s vs %s)" % (n, getattr(want, "dtype", "?"),
                                                             getattr(got, "dtype", "?")))
    return same, refused, diffs


# -- random filter stacks ---------------------------------------------------

def _stacks(h5py, hdf5plugin):
    """Every filter pipeline to try: (name, h5py kwargs or dcpl hook)."""
    s = [("none", {}), ("gzip", {"compression": "gzip", "compression_opts": 4}),
         ("shuffle+gzip", {"compression": "gzip", "shuffle": True}),
         ("fletcher32", {"fletcher32": True}),
         ("shuffle+gzip+fletcher32", {"compression": "gzip", "shuffle": True, "fletcher32": True}),
         ("lzf", {"compression": "lzf"}), ("shuffle+lzf", {"compression": "lzf", "shuffle": True}),
         ("scaleoffset", {"scaleoffset": 0}), ("nbit", "nbit")]
    if "szip" in h5py.filters.encode:
        s.append(("szip", {"compression": "szip"}))
    if hdf5plugin is not None:
        s += [("blosc-lz4", dict(hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=1))),
              ("blosc-zstd-bit", dict(hdf5plugin.Blosc(cname="zstd", clevel=3, shuffle=2))),
              ("blosc2-lz4", dict(hdf5plugin.Blosc2(cname="lz4", clevel=5, filters=1))),
              ("blosc2-zstd-bit", dict(hdf5plugin.Blosc2(cname="zstd", clevel=3, filters=2))),
              ("lz4", dict(hdf5plugin.LZ4())), ("zstd", dict(hdf5plugin.Zstd(clevel=5))),
              ("bitshuffle", dict(hdf5plugin.Bitshuffle(cname="none"))),
              ("bitshuffle-lz4", dict(hdf5plugin.Bitshuffle(cname="lz4"))),
              ("bitshuffle-zstd", dict(hdf5plugin.Bitshuffle(cname="zstd"))),
              ("bzip2", dict(hdf5plugin.BZip2(blocksize=5))),
              ("fletcher32+zstd", dict(fletcher32=True, **hdf5plugin.Zstd(clevel=3)))]
    return s


def _write(h5py, np, f, name, data, chunks, stack, r):
    if stack == "nbit":
        # n-bit through the low-level API: precision below the type's size
        dt = h5py.h5t.py_create(data.dtype).copy()
        prec = max(1, data.dtype.itemsize * 8 - r.randint(1, 5))
        dt.set_precision(prec) if data.dtype.kind in "iu" else None
        if data.dtype.kind in "iu":
            info = np.iinfo(data.dtype)
            lo, hi = (-(1 << (prec - 1)), (1 << (prec - 1)) - 1) if info.min < 0 else (0, (1 << prec) - 1)
            data = np.clip(data, lo, hi).astype(data.dtype)
        space = h5py.h5s.create_simple(data.shape)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk(chunks)
        dcpl.set_filter(5, 0, ())  # H5Z_FILTER_NBIT: libhdf5 computes its parameters
        dsid = h5py.h5d.create(f.id, name.encode(), dt, space, dcpl=dcpl)
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, data)
        return data
    kw = dict(stack)
    if kw.get("scaleoffset") is not None and data.dtype.kind == "f":
        kw["scaleoffset"] = 3
        data = np.round(data, 3)
    f.create_dataset(name, data=data, chunks=chunks, **kw)
    return data


def _random_array(np, r):
    rank = r.choice([1, 1, 2, 2, 3])
    shape = tuple(r.randint(1, 40 if rank < 3 else 12) for _ in range(rank))
    chunks = tuple(r.randint(1, s) for s in shape)
    dt = np.dtype(r.choice(["<i1", "<u1", "<i2", ">u2", "<i4", ">i4", "<u8", "<f4", ">f8", "<f8"]))
    rng = np.random.default_rng(r.randrange(1 << 30))
    if dt.kind == "f":
        data = (rng.normal(0, 50, shape)).astype(dt)
    else:
        info = np.iinfo(dt)
        data = rng.integers(max(info.min, -2000), min(info.max, 2000), shape, endpoint=True).astype(dt)
    return data, chunks


def test_random_filter_stacks_read_back_equal(tmp_path):
    _zarr_needed()
    import h5py
    import numpy as np
    try:
        import hdf5plugin
    except ImportError:
        hdf5plugin = None
    stacks = _stacks(h5py, hdf5plugin)
    files = arrays = 0
    problems, refused_all, per_stack = [], {}, {}
    for i in range(COUNT):
        r = random.Random(9001 + i)
        p = str(tmp_path / ("k%03d.h5" % i))
        used = []
        with h5py.File(p, "w") as f:
            for j in range(r.randint(1, 3)):
                name, stack = stacks[(i * 3 + j) % len(stacks)] if j == 0 else r.choice(stacks)
                data, chunks = _random_array(np, r)
                if name in ("scaleoffset", "nbit") and data.dtype.kind == "f" and name == "nbit":
                    data = data.astype("<i4")
                try:
                    _write(h5py, np, f, "d%d" % j, data, chunks, stack, r)
                except (ValueError, TypeError):
                    continue  # a filter the type cannot take
                used.append(name)
                if r.random() < 0.3:
                    f.create_dataset("c%d" % j, data=data)  # contiguous
                if j == 0 and r.random() < 0.3:
                    g = f.create_group("g")
                    g.create_dataset("u", shape=(30,), chunks=(7,), dtype="<i2", fillvalue=-7)
                    g["u"][3:9] = 5  # partially written: unwritten chunks read as fill
        for name in used:
            per_stack[name] = per_stack.get(name, 0) + 1
        same, refused, diffs = compare_file(p, codecs="purehdf" if i % 2 else "standard")
        files += 1
        arrays += same
        refused_all.update({"k%03d/%s" % (i, k): v for k, v in refused.items()})
        problems += ["k%03d %s" % (i, d) for d in diffs]
    print("kerchunk random filter stacks: %d files, %d arrays equal, %d refused, stacks %s"
          % (files, arrays, len(refused_all), sorted(per_stack.items())))
    assert problems == [], "\n".join(problems[:30])
    # an optional filter that failed on an incompressible chunk left it stored
    # unfiltered: such chunks are re-encoded with every stage applied and
    # inlined, so nothing here is refused
    assert refused_all == {}, list(refused_all.items())[:10]
    assert arrays >= COUNT


# -- the project's random files -------------------------------------------

def test_project_random_files_read_back_equal(tmp_path, gen_random):
    _zarr_needed()
    n = max(1, COUNT // 5)
    total = refused_n = 0
    problems, reasons = [], {}
    for i in range(n):
        p = str(tmp_path / ("r%03d.h5" % i))
        gen_random.gen_one(p, random.Random(777 * 1_000_003 + i))
        same, refused, diffs = compare_file(p)
        total += same
        refused_n += len(refused)
        for why in refused.values():
            key = why.split(": ", 2)[-1][:60]
            reasons[key] = reasons.get(key, 0) + 1
        problems += ["r%03d %s" % (i, d) for d in diffs]
    print("kerchunk project random files: %d files, %d arrays equal, %d refused: %s"
          % (n, total, refused_n, sorted(reasons.items(), key=lambda kv: -kv[1])[:8]))
    assert problems == [], "\n".join(problems[:30])
    assert total > n


# -- corpus ---------------------------------------------------------------

def test_corpus_files_read_back_equal():
    _zarr_needed()
    tsv = os.path.join(CORPUS, "MANIFEST.tsv")
    if not os.path.isfile(tsv):
        pytest.skip("skipped: ../shared/corpus absent")
    import h5py
    limit = int(os.environ.get("PUREHDF_KERCHUNK_CORPUS", "150"))
    rows = [l.split("\t") for l in open(tsv).read().splitlines()[1:]]
    files = total = refused_n = unopened = 0
    problems, reasons = [], {}
    for row in rows[:limit]:
        rel, size, reads_all = row[0], int(row[5]), row[19]
        p = os.path.join(CORPUS, rel)
        if reads_all != "yes" or size > 64 << 20 or not os.path.isfile(p):
            continue
        try:
            h5py.File(p, "r").close()
        except Exception:  # noqa: BLE001
            continue
        try:
            same, refused, diffs = compare_file(p)
        except Exception as e:  # noqa: BLE001
            try:
                with h5py.File(p, "r") as f:
                    list(f.keys())
            except Exception:  # noqa: BLE001  (nor can h5py list its root)
                continue
            unopened += 1
            problems.append("%s: %r" % (rel, e))
            continue
        files += 1
        total += same
        refused_n += len(refused)
        # progress, one line a file (seen with `pytest -s`: a whole-corpus
        # run takes tens of minutes)
        print("kerchunk corpus %d: %s: %d equal, %d refused, %d differ"
              % (files, rel, same, len(refused), len(diffs)), file=sys.stderr, flush=True)
        for why in refused.values():
            key = why.split(": ", 2)[-1][:50]
            reasons[key] = reasons.get(key, 0) + 1
        problems += ["%s %s" % (rel, d) for d in diffs]
    print("kerchunk corpus: %d files, %d arrays equal, %d refused, %d failed; refusals %s"
          % (files, total, refused_n, unopened, sorted(reasons.items(), key=lambda kv: -kv[1])[:12]))
    assert problems == [], "\n".join(problems[:40])
    assert files > 100


# -- medh5 ------------------------------------------------------------------

def test_medh5_profiles_through_xarray(tmp_path):
    _zarr_needed()
    need("medh5")
    xr = need("xarray")
    import h5py
    import numpy as np
    import purehdf
    out = str(tmp_path / "medh5")
    subprocess.run([sys.executable, os.path.join(INTEROP, "medh5_random_samples.py"), out, "8"],
                   check=True, capture_output=True)
    paths = sorted(glob.glob(os.path.join(out, "r[0-9][0-9].medh5")))
    assert len(paths) == 8
    checked, profiles = 0, set()
    for p in paths:
        refs = purehdf.kerchunk.refs(p)
        assert refs["purehdf"]["refused"] == {}, refs["purehdf"]["refused"]
        with h5py.File(p, "r") as f:
            groups = [""]
            f.visititems(lambda n, o: groups.append(n) if isinstance(o, h5py.Group) else None)
            codec = f.attrs.get("codec") or f.attrs.get("profile")
            profiles.add(str(codec))
            for g in groups:
                ds = xr.open_dataset("reference://", engine="zarr", group=g or None,
                                     backend_kwargs={"consolidated": False, "zarr_format": 2,
                                                     "storage_options": {"fo": refs}},
                                     mask_and_scale=False, decode_times=False)
                for name, var in ds.data_vars.items():
                    key = (g + "/" + name) if g else name
                    want = f[key][()]
                    assert equal(want, var.values), (p, key)
                    checked += 1
    print("kerchunk medh5: %d samples, %d arrays equal through xarray" % (len(paths), checked))
    assert checked >= 8


# -- detection ----------------------------------------------------------------

def test_fletcher32_mismatch_is_detected(tmp_path):
    _zarr_needed()
    import h5py
    import numpy as np
    import purehdf
    p = str(tmp_path / "f.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=np.arange(4000, dtype="<i4"), chunks=(1000,), fletcher32=True)
    for codecs in ("standard", "purehdf"):
        refs = purehdf.kerchunk.refs(p, codecs=codecs)
        assert np.array_equal(purehdf.kerchunk.open_zarr(refs)["x"][:], np.arange(4000))
        _, off, length = refs["refs"]["x/1"]
        data = bytearray(open(p, "rb").read())
        data[off + 10] ^= 0x20
        bad = str(tmp_path / ("bad-%s.h5" % codecs))
        open(bad, "wb").write(bytes(data))
        refs["templates"]["u"] = bad
        root = purehdf.kerchunk.open_zarr(refs, check=False)
        assert np.array_equal(root["x"][:1000], np.arange(1000))
        with pytest.raises(Exception) as e:
            root["x"][1000:2000]
        assert "fletcher" in repr(e.value).lower() or "checksum" in repr(e.value).lower(), e.value


def test_a_changed_file_is_detected(tmp_path):
    _zarr_needed()
    import h5py
    import numpy as np
    import purehdf
    p = str(tmp_path / "c.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=np.arange(10))
    refs = purehdf.kerchunk.refs(p)
    assert refs["purehdf"]["size"] == os.path.getsize(p)
    assert purehdf.kerchunk.check_source(refs)
    with h5py.File(p, "a") as f:
        f.create_dataset("y", data=np.arange(100000))
    with pytest.raises(purehdf.kerchunk.SourceChangedError):
        purehdf.kerchunk.check_source(refs)
    with pytest.raises(purehdf.kerchunk.SourceChangedError):
        purehdf.kerchunk.open_zarr(refs)


# -- VirtualiZarr -------------------------------------------------------------

def test_virtualizarr_parser(tmp_path):
    _zarr_needed()
    need("virtualizarr")
    need("obstore")
    xr = need("xarray")
    import h5py
    import numpy as np
    import purehdf
    from obspec_utils.registry import ObjectStoreRegistry
    from obstore.store import LocalStore
    from virtualizarr import open_virtual_dataset
    try:
        import hdf5plugin
    except ImportError:
        pytest.skip("skipped: hdf5plugin absent")
    p = str(tmp_path / "v.h5")
    rng = np.random.default_rng(5)
    want = {"a": rng.normal(size=(20, 30)).astype("<f4"),
            "b": rng.integers(0, 1000, (40,)).astype("<i2"),
            "c": rng.integers(0, 9, (9, 10)).astype("<u2")}
    with h5py.File(p, "w") as f:
        f.create_dataset("a", data=want["a"], chunks=(7, 8), **hdf5plugin.Blosc2(cname="zstd"))
        f.create_dataset("b", data=want["b"], chunks=(16,), compression="szip"
                         if "szip" in h5py.filters.encode else "lzf")
        f.create_dataset("c", data=want["c"], chunks=(4, 4), shuffle=True,
                         **hdf5plugin.Bitshuffle(cname="lz4"))
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    url = "file://" + p
    parser = purehdf.kerchunk.Parser()
    vds = open_virtual_dataset(url, registry=registry, parser=parser)
    assert set(vds.data_vars) == set(want), vds
    store = parser(url, registry)
    ds = xr.open_dataset(store, engine="zarr", consolidated=False, zarr_format=3)
    for k, v in want.items():
        assert np.array_equal(ds[k].values, v), k
    print("virtualizarr: %d arrays equal through the parser" % len(want))


def test_corpus_refusals_by_name():
    """What zarr cannot read is refused by the dataset's path, and the rest
    of the file still exports: a long double (no zarr dtype), a name with a
    backslash (a separator to zarr), datasets whose headers cannot be read
    (rank 33, above HDF5's 32; a cut fill value message)."""
    _zarr_needed()
    import purehdf
    cases = [
        ("hdf5/tools/test/h5dump/testfiles/tldouble.h5", "dset", "has no zarr data type"),
        ("hdf5/tools/test/h5dump/testfiles/xml/tref-escapes.h5", "Group1/Dataset\\slash",
         "backslash"),
        ("hdf5/c++/test/th5s.h5", "dset", "rank = 33"),
    ]
    for rel, name, why in cases:
        p = os.path.join(CORPUS, rel)
        if not os.path.isfile(p):
            pytest.skip("skipped: ../shared/corpus absent")
        refs = purehdf.kerchunk.refs(p)
        refused = refs["purehdf"]["refused"]
        assert why in refused.get(name, ""), (rel, refused)
        assert any(k.endswith(".zgroup") for k in refs["refs"]), rel
    # a damaged fill value message costs its dataset only; the other one
    # reads back as h5py reads it
    p = os.path.join(CORPUS, "hdf5/tools/test/h5dump/testfiles/tCVE_2018_11206_fill_new.h5")
    same, refused, diffs = compare_file(p)
    assert "truncated" in refused.get("dset1", "") and same == 1 and diffs == [], (refused, diffs)
