#!/usr/bin/env python3
"""Seeded random h5py files for the round-trip test (`tests/h5_roundtrip.rs`).

usage:
  gen_random_h5.py gen   --seed S --count N --out DIR [--expected MAKE_EXPECTED_PY]
  gen_random_h5.py check --seed S --count N --out DIR

`gen` writes DIR/fNNN.h5 (N files, every feature chosen from the seed: libver,
datatype class, dataspace, layout, chunk shape, fill value, filters incl.
hdf5plugin's, soft/external/hard links and cycles, committed types, creation
order, dense groups and attributes, long and Unicode names, deep trees, many
links and attributes per object — compact to dense, and back after deletes)
and, with --expected, the libhdf5 description of each (`make_expected.py`'s
`inspect_file`) as DIR/fNNN.exp.json.

`check` runs after the Rust side made DIR/fNNN.keep.h5 (`h5 copy`, stored chunks
kept) and DIR/fNNN.enc.h5 (re-encoded with deflate): it describes source and
copies through h5py (link kinds and targets, hard-link identity, reference
counts, listing order, creation-order flags, committed types, maxshape, layout,
chunk shape, filters and their parameters, fill values, attribute types and
shapes, values), compares them, lets libhdf5 edit every copy
(`libhdf5_edit.edit_check`: links deleted, groups, datasets and attributes
added, chunked datasets extended and new rows written; every untouched value
must read back unchanged; when the same edit of the source fails too, that
is a note, not a problem), and runs `h5dump -H` on the copies (one process for
all; file by file, against the source, only when that fails). It prints one
JSON object: {"files": N, "copies": C, "problems": [...], "notes": [...]}.

One python process per phase and batch (seed); the files are small.
Decisions about libhdf5/h5py behaviour are listed in tests/h5_roundtrip.rs.
"""

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys

import numpy as np
import h5py

try:
    import hdf5plugin
except Exception:  # noqa: BLE001
    hdf5plugin = None

LIBVERS = [("earliest", "latest"), ("v108", "latest"), ("v110", "latest"),
           ("v112", "latest"), ("latest", "latest")]


# --------------------------------------------------------------------------
# generation

def numeric_types(r):
    return r.choice(["<i1", "<u1", "<i2", ">u2", "<i4", ">i4", "<u8", ">i8",
                     "<f2", ">f2", "<f4", ">f4", "<f8", ">f8"])


# long and Unicode names (h5py stores them as UTF-8, flagged so in v2 links)
ODD_NAMES = ["x" * 70, "long_" + "n" * 250, "donn\u00e9es_\u00e9", "\u03b4\u03b5\u03b4\u03bf\u03bc\u03ad\u03bd\u03b1",
             "\u6570\u636e\u96c6", "emoji_\U0001F600", "with space", "dot.name",
             "\u00dcn\u00efc\u00f6d\u00e9_" + "\u00df" * 40]


def obj_name(r, base):
    """`base`, or (one time in four) a long or Unicode name that keeps `base`
    as its suffix, so names stay unique wherever `base` is."""
    if r.random() < 0.25:
        return r.choice(ODD_NAMES) + "_" + base
    return base


def make_dtype(r, f, committed, allow_obj=True):
    """(numpy dtype or committed Datatype object, kind) for one dataset/attribute."""
    k = r.choice(["num"] * 6 + ["bool", "complex", "fstr", "enum", "array", "compound",
                                "nested", "opaque"] +
                 (["vstr", "vlen", "ref", "objrec", "regref"] if allow_obj else []) +
                 (["committed"] if committed else []))
    if k == "num":
        return np.dtype(numeric_types(r)), k
    if k == "bool":
        return np.dtype(bool), k
    if k == "complex":
        return np.dtype(r.choice(["<c8", ">c8", "<c16", ">c16"])), k
    if k == "fstr":
        return np.dtype("S%d" % r.randint(1, 9)), k
    if k == "enum":
        return h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 7},
                               basetype=r.choice(["i1", "u2", ">i4"])), k
    if k == "array":
        return np.dtype((numeric_types(r), (2, 3))), k
    if k == "compound":
        return np.dtype([("a", numeric_types(r)), ("b", numeric_types(r)),
                         ("c", "S3")]), k
    if k == "nested":
        return np.dtype([("x", "<i4"), ("in", [("p", ">f8"), ("q", ("<i2", (3,)))]),
                         ("z", "<c8")]), k
    if k == "opaque":
        return np.dtype("V%d" % r.choice([1, 4, 7])), k
    if k == "vstr":
        return h5py.string_dtype(r.choice(["utf-8", "ascii"])), k
    if k == "vlen":
        # little-endian bases only: see the note on big-endian vlen sequences
        return h5py.vlen_dtype(np.dtype(r.choice(["<i4", "<f8", "<u1"]))), k
    if k == "ref":
        return h5py.ref_dtype, k
    if k == "regref":
        return h5py.regionref_dtype, k
    if k == "objrec":
        return np.dtype([("c", "<c16"), ("s", h5py.string_dtype()), ("r", h5py.ref_dtype),
                         ("v", h5py.vlen_dtype(np.dtype("<i2")))]), k
    return r.choice(committed), k


def values(r, dt, shape, f, targets):
    """Random values of numpy dtype `dt` and `shape`."""
    n = int(np.prod(shape)) if shape else 1
    if dt.names is not None:
        out = np.zeros(shape, dtype=dt)
        for name in dt.names:
            out[name] = values(r, dt.fields[name][0], shape, f, targets)
        return out
    if dt.subdtype is not None:
        base, sub = dt.subdtype
        return values(r, base, tuple(shape) + sub, f, targets)
    vl = h5py.check_vlen_dtype(dt)
    if h5py.check_string_dtype(dt) is not None and dt.kind == "O":
        enc = h5py.check_string_dtype(dt).encoding
        words = ["", "a", "héllo" if enc == "utf-8" else "hello", "x" * 40, "mm"]
        out = np.empty(n, dtype=object)
        for i in range(n):
            out[i] = r.choice(words)
        return out.reshape(shape)
    if vl is not None:
        out = np.empty(n, dtype=object)
        for i in range(n):
            out[i] = (np.arange(r.randint(0, 5)) * 3).astype(vl)
        return out.reshape(shape)
    if h5py.check_ref_dtype(dt) is h5py.Reference:
        out = np.empty(n, dtype=object)
        for i in range(n):
            out[i] = f[r.choice(targets)].ref if r.random() < 0.9 else h5py.Reference()
        return out.reshape(shape)
    if h5py.check_ref_dtype(dt) is h5py.RegionReference:
        ds = f["/regtarget"]
        out = np.empty(n, dtype=object)
        for i in range(n):
            a = r.randint(0, 4)
            out[i] = ds.regionref[a:a + 3]
        return out.reshape(shape)
    if dt.kind == "b":
        return np.array([r.random() < 0.5 for _ in range(n)], dtype=dt).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        return np.array([r.randint(lo, hi) for _ in range(n)], dtype=dt).reshape(shape)
    if dt.kind == "f":
        return np.array([r.uniform(-100, 100) for _ in range(n)], dtype=dt).reshape(shape)
    if dt.kind == "c":
        return np.array([complex(r.uniform(-9, 9), r.uniform(-9, 9)) for _ in range(n)],
                        dtype=dt).reshape(shape)
    if dt.kind == "S":
        return np.array([bytes(r.choice(b"abcxyz") for _ in range(r.randint(0, dt.itemsize)))
                         for _ in range(n)], dtype=dt).reshape(shape)
    if dt.kind == "V":
        return np.frombuffer(bytes(r.randrange(256) for _ in range(n * dt.itemsize)),
                             dtype=dt).reshape(shape).copy()
    raise ValueError("no values for %r" % (dt,))


def numpy_of(dt):
    return dt.dtype if isinstance(dt, h5py.Datatype) else dt


def plain(dt):
    dt = numpy_of(dt)
    return not dt.hasobject


def filter_kwargs(r, dt, shape):
    """h5py keyword arguments for a random filter pipeline (numeric data only)."""
    d = numpy_of(dt)
    numeric = d.kind in "iuf" and d.names is None and d.subdtype is None
    opts = ["none", "gzip", "shuffle-gzip", "fletcher", "lzf"]
    if numeric and d.kind in "iu":
        opts.append("scaleoffset")
    if hdf5plugin is not None and plain(dt):
        opts += ["blosc", "blosc2", "lz4", "zstd", "bitshuffle", "bitshuffle-lz4"]
    c = r.choice(opts)
    if c == "none":
        return {}
    if c == "gzip":
        return {"compression": "gzip", "compression_opts": r.randint(0, 9)}
    if c == "shuffle-gzip":
        return {"compression": "gzip", "shuffle": True}
    if c == "fletcher":
        return {"fletcher32": True, "compression": r.choice([None, "gzip"])}
    if c == "lzf":
        return {"compression": "lzf"}
    if c == "scaleoffset":
        return {"scaleoffset": 0}
    if c == "blosc":
        return dict(hdf5plugin.Blosc(cname=r.choice(["lz4", "zstd", "blosclz"]),
                                     clevel=r.randint(1, 9), shuffle=r.choice([0, 1, 2])))
    if c == "blosc2":
        return dict(hdf5plugin.Blosc2(cname=r.choice(["lz4", "zstd", "blosclz"]),
                                      clevel=r.randint(1, 9),
                                      filters=r.choice([0, 1, 2])))
    if c == "lz4":
        return dict(hdf5plugin.LZ4())
    if c == "zstd":
        return dict(hdf5plugin.Zstd(clevel=r.randint(1, 9)))
    if c == "bitshuffle":
        return dict(hdf5plugin.Bitshuffle(cname="none"))
    return dict(hdf5plugin.Bitshuffle(cname="lz4"))


def random_shape(r):
    k = r.choice(["scalar", "null", "zero", "1d", "1d", "2d", "2d", "3d"])
    if k == "scalar":
        return ()
    if k == "null":
        return None
    if k == "zero":
        return r.choice([(0,), (3, 0)])
    if k == "1d":
        return (r.randint(1, 40),)
    if k == "2d":
        return (r.randint(1, 9), r.randint(1, 9))
    return (r.randint(1, 4), r.randint(1, 5), r.randint(1, 4))


def write(ds, data, sel):
    """ds[sel] = data. Sequences of a variable-length (non-string) type go
    through write_direct: h5py 3.16's __setitem__ turns an array of sequences
    that all have one length into a 2-D array and then refuses to broadcast
    it ("Can't broadcast (1, 3) -> (1,)", seeds 75 and 77)."""
    if h5py.check_vlen_dtype(ds.dtype) is not None and h5py.check_string_dtype(ds.dtype) is None:
        arr = np.empty(data.shape, dtype=ds.dtype)
        arr[...] = data
        ds.write_direct(arr, dest_sel=None if sel is Ellipsis else sel)
    else:
        ds[sel] = data


def make_dataset(r, f, g, name, committed, targets, big_ok):
    dt, kind = make_dtype(r, f, committed)
    npdt = numpy_of(dt)
    shape = random_shape(r)
    kw = {}
    if shape is None:
        return g.create_dataset(name, data=h5py.Empty(npdt) if not isinstance(dt, h5py.Datatype)
                                else h5py.Empty(npdt))
    lay = r.choice(["contig", "chunked", "chunked", "compact"]) if shape else "contig"
    resize = None
    if lay == "chunked" and len(shape) > 0:
        chunks = tuple(r.randint(1, max(1, s)) if s else r.randint(1, 4) for s in shape)
        kw["chunks"] = chunks
        if r.random() < 0.5:
            ax = r.randrange(len(shape))
            kw["maxshape"] = tuple(None if i == ax or r.random() < 0.2 else s
                                   for i, s in enumerate(shape))
            if r.random() < 0.7:
                grow = tuple(s + r.randint(0, 6) if kw["maxshape"][i] is None else s
                             for i, s in enumerate(shape))
                shrink = tuple(max(0, s - r.randint(0, 3)) if kw["maxshape"][i] is None else s
                               for i, s in enumerate(grow))
                resize = (grow, r.choice([grow, shrink, shrink]))
        kw.update(filter_kwargs(r, dt, shape))
    elif lay == "compact":
        n = int(np.prod(shape))
        if n * max(npdt.itemsize, 1) < 4000:
            kw["compact"] = True
    if plain(dt) and npdt.kind in "iuf" and npdt.names is None and r.random() < 0.4:
        kw["fillvalue"] = np.array(values(r, npdt, (), f, targets), dtype=npdt)[()]
    layout_compact = kw.pop("compact", False)
    dcpl = None
    if layout_compact:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
    track = r.random() < 0.3
    try:
        ds = g.create_dataset(name, shape=shape, dtype=dt, track_order=track,
                              **({"dcpl": dcpl} if dcpl is not None else {}), **kw)
    except (ValueError, TypeError, OSError):
        # a filter the type cannot take (scaleoffset on some types...): no filters
        keep = {k: v for k, v in kw.items() if k in ("chunks", "maxshape", "fillvalue")}
        try:
            ds = g.create_dataset(name, shape=shape, dtype=dt, **keep)
        except (ValueError, TypeError, OSError):
            ds = g.create_dataset(name, shape=shape, dtype=dt)
    data = values(r, npdt, shape, f, targets)
    how = r.choice(["all", "all", "part", "none"]) if ds.chunks else "all"
    if how == "all" and ds.size:
        write(ds, data, ...)
    elif how == "part" and ds.size:
        sl = tuple(slice(0, max(1, s // 2)) for s in shape)
        # h5py refuses a non-contiguous view for some types (seed 102)
        write(ds, np.ascontiguousarray(data[sl]), sl)
    if resize is not None and ds.chunks and ds.maxshape != ds.shape:
        ds.resize(resize[0])
        if r.random() < 0.6 and ds.size:
            sub = values(r, npdt, resize[0], f, targets)
            try:
                # through write(): h5py's own conversion of such sequences
                # failed with AttributeError in ndarray2vlen (seed 61)
                write(ds, sub, ...)
            except TypeError:
                # h5py cannot broadcast some array-typed values into a
                # one-element extent (seed 113: (1, 4) -> (1,)); left unwritten
                pass
        ds.resize(resize[1])
    return ds


def add_attrs(r, f, obj, committed, targets, big_ok, many_ok):
    n = r.choice([0, 0, 1, 2, 3, 5, 9] + ([9, 12, 20, 40] if many_ok else []))
    made = []
    for i in range(n):
        dt, kind = make_dtype(r, f, committed)
        npdt = numpy_of(dt)
        shape = r.choice([(), (), (3,), (2, 2)])
        name = obj_name(r, r.choice(["units", "scale", "a", "Zeta", "b%d" % i, "name"]) + str(i))
        data = values(r, npdt, shape, f, targets)
        try:
            obj.attrs.create(name, data, shape=shape, dtype=dt)
            made.append(name)
        except (TypeError, ValueError, OSError):
            continue
    if len(made) > 8 and r.random() < 0.3:
        # back below the dense threshold: libhdf5 may move them to the header
        for name in r.sample(made, len(made) - r.randint(2, 6)):
            del obj.attrs[name]
    if big_ok and r.random() < 0.15:
        obj.attrs["big"] = np.arange(r.choice([9000, 20000]), dtype="<f8")
        if r.random() < 0.7:
            obj.attrs["ref"] = f[r.choice(targets)].ref


def gen_one(path, r):
    libver = r.choice(LIBVERS)
    latest = libver[0] not in ("earliest",)
    track = r.random() < 0.3
    with h5py.File(path, "w", libver=libver, track_order=track) as f:
        f.create_dataset("regtarget", data=np.arange(12, dtype="<i4").reshape(3, 4))
        targets = ["/", "/regtarget"]
        committed = []
        if r.random() < 0.5:
            tg = f.create_group("types")
            targets.append("/types")
            for i in range(r.randint(1, 3)):
                t = r.choice([np.dtype(">f8"), np.dtype([("a", "<i4"), ("b", ">f4")]),
                              h5py.string_dtype(), np.dtype("S4"),
                              h5py.enum_dtype({"A": 1, "B": 2}, basetype="u1")])
                tg["t%d" % i] = t
                committed.append(tg["t%d" % i])
        groups = [f]
        ngroups = r.randint(0, 4)
        for i in range(ngroups):
            parent = r.choice(groups)
            g = parent.create_group(obj_name(r, "g%d" % i), track_order=r.random() < 0.4)
            groups.append(g)
            targets.append(g.name)
        if r.random() < 0.2:
            # a deep tree: a chain of 8 to 24 groups
            g = r.choice(groups)
            for i in range(r.randint(8, 24)):
                g = g.create_group(obj_name(r, "d%d" % i), track_order=r.random() < 0.3)
            groups.append(g)
            targets.append(g.name)
        if r.random() < 0.25:
            # a dense (or, with libver earliest, large symbol-table) group
            g = r.choice(groups).create_group("many", track_order=r.random() < 0.5)
            groups.append(g)
            for i in range(r.randint(9, 30)):
                g.create_dataset("m%02d" % r.randrange(100) + "_%d" % i, data=np.int16(i))
        datasets = []
        for i in range(r.randint(1, 6)):
            g = r.choice(groups)
            name = obj_name(r, r.choice(["data", "x", "Image", "z", "values", "t"]) + str(i))
            ds = make_dataset(r, f, g, name, committed, targets, latest)
            datasets.append(ds.name)
        targets += datasets
        for obj in [f] + groups[1:] + [f[d] for d in datasets]:
            add_attrs(r, f, obj, committed, targets, latest, latest)
        # links; sometimes many into one group (compact to dense storage)
        nlinks = r.choice([r.randint(0, 4)] * 3 + [r.randint(9, 40)])
        crowd = r.choice(groups)
        for i in range(nlinks):
            g = r.choice(groups) if nlinks < 9 or r.random() < 0.2 else crowd
            k = r.choice(["soft", "dangling", "external", "hard", "cycle"])
            name = obj_name(r, "link%d" % i)
            if name in g:
                continue
            if k == "soft":
                g[name] = h5py.SoftLink(r.choice(targets))
            elif k == "dangling":
                g[name] = h5py.SoftLink("/nowhere/%d" % i)
            elif k == "external":
                g[name] = h5py.ExternalLink("other_%d.h5" % i, "/some/path")
            elif k == "hard":
                g[name] = f[r.choice(targets)]
            else:
                # a hard link back to an ancestor (or the group itself)
                anc = g
                while anc.name != "/" and r.random() < 0.5:
                    anc = anc.parent
                g[name] = anc
    return libver


def cmd_gen(a):
    os.makedirs(a.out, exist_ok=True)
    inspect = None
    if a.expected:
        sys.path.insert(0, os.path.dirname(os.path.abspath(a.expected)))
        import make_expected  # noqa: E402
        inspect = make_expected.inspect_file
    here = os.getcwd()
    for i in range(a.count):
        r = random.Random(a.seed * 1_000_003 + i)
        p = os.path.join(a.out, "f%03d.h5" % i)
        gen_one(p, r)
        if inspect is not None:
            d = inspect(os.path.abspath(p))
            os.chdir(here)
            with open(os.path.join(a.out, "f%03d.exp.json" % i), "w") as fh:
                json.dump(d, fh)
    print(json.dumps({"files": a.count}))


# --------------------------------------------------------------------------
# description and comparison

class Desc:
    def __init__(self, f):
        self.f = f
        self.first = {}   # object address -> first path (walk order)
        self.out = {}     # path -> description

    def ident(self, obj):
        return self.first.get(h5py.h5o.get_info(obj.id).addr, "?unvisited")

    def canon(self, v):
        """A hashable, comparable rendering of a value read by h5py."""
        if isinstance(v, np.ndarray):
            if v.dtype.hasobject or v.dtype.names is not None and any(
                    v.dtype.fields[n][0].hasobject for n in v.dtype.names):
                return [self.canon(x) for x in v.reshape(-1)]
            return [str(v.dtype), list(v.shape),
                    hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()]
        if isinstance(v, np.void) and v.dtype.names is not None:
            return [self.canon(v[n]) for n in v.dtype.names]
        if isinstance(v, h5py.RegionReference):
            if not v:
                return "nullregref"
            obj = self.f[v]
            sel = h5py.h5r.get_region(v, self.f.id)
            return ["regref", self.ident(obj), sel.get_select_type(),
                    sel.get_select_npoints(),
                    list(map(list, sel.get_select_bounds())) if sel.get_select_npoints() else []]
        if isinstance(v, h5py.Reference):
            if not v:
                return "nullref"
            try:
                return ["ref", self.ident(self.f[v])]
            except Exception as e:  # noqa: BLE001
                return ["badref", str(e)[:60]]
        if isinstance(v, bytes):
            return ["b", v.hex()]
        if isinstance(v, str):
            return ["s", v]
        a = np.asarray(v)
        return [str(a.dtype), hashlib.sha256(a.tobytes()).hexdigest()]

    def dtype_desc(self, tid, npdt):
        d = {"np": str(npdt), "descr": str(getattr(npdt, "descr", "")),
             "class": tid.get_class(), "size": tid.get_size()}
        if tid.committed():
            d["committed"] = self.first.get(h5py.h5o.get_info(tid).addr, "?anonymous")
        return d

    def attrs(self, obj):
        out = []
        for name in obj.attrs:
            aid = h5py.h5a.open(obj.id, name.encode("utf-8"))
            d = {"name": name, "shape": list(aid.shape) if aid.shape is not None else None,
                 "dtype": self.dtype_desc(aid.get_type(), aid.dtype)}
            try:
                d["value"] = self.canon(obj.attrs[name])
            except Exception as e:  # noqa: BLE001
                d["value"] = ["error", type(e).__name__]
            out.append(d)
        return out

    def crt(self, plist, what):
        try:
            return getattr(plist, what)()
        except Exception:  # noqa: BLE001
            return None

    def walk(self):
        root = self.f["/"]
        self.first[h5py.h5o.get_info(root.id).addr] = "/"
        # first pass: identities of every object reached by hard links (BFS order)
        queue = [root]
        while queue:
            g = queue.pop(0)
            for name in g:
                lk = g.get(name, getlink=True)
                if not isinstance(lk, h5py.HardLink):
                    continue
                obj = g[name]
                addr = h5py.h5o.get_info(obj.id).addr
                if addr in self.first:
                    continue
                self.first[addr] = obj.name if obj.name else g.name + "/" + name
                self.first[addr] = (g.name.rstrip("/") + "/" + name)
                if isinstance(obj, h5py.Group):
                    queue.append(obj)
        for addr, path in sorted(self.first.items(), key=lambda kv: kv[1]):
            self.describe(path)
        return self.out

    def describe(self, path):
        obj = self.f[path]
        info = h5py.h5o.get_info(obj.id)
        d = {"rc": info.rc, "attrs": self.attrs(obj)}
        try:
            cpl = obj.id.get_create_plist()
            d["attr_order"] = self.crt(cpl, "get_attr_creation_order")
        except Exception:  # noqa: BLE001
            cpl = None
        if isinstance(obj, h5py.Group):
            d["kind"] = "group"
            d["link_order"] = self.crt(cpl, "get_link_creation_order")
            links = []
            for name in obj:
                lk = obj.get(name, getlink=True)
                if isinstance(lk, h5py.SoftLink):
                    links.append([name, "soft", lk.path])
                elif isinstance(lk, h5py.ExternalLink):
                    links.append([name, "external", lk.filename, lk.path])
                else:
                    links.append([name, "hard", self.ident(obj[name])])
            d["links"] = links
        elif isinstance(obj, h5py.Dataset):
            d["kind"] = "dataset"
            d["shape"] = list(obj.shape) if obj.shape is not None else None
            d["maxshape"] = list(obj.maxshape) if obj.maxshape is not None else None
            d["dtype"] = self.dtype_desc(obj.id.get_type(), obj.dtype)
            d["layout"] = cpl.get_layout()
            d["chunks"] = list(obj.chunks) if obj.chunks else None
            d["filters"] = [list(cpl.get_filter(i)[:3]) for i in range(cpl.get_nfilters())]
            try:
                fv = obj.fillvalue
                d["fill"] = self.canon(np.asarray(fv)) if not obj.dtype.hasobject else None
            except Exception as e:  # noqa: BLE001
                d["fill"] = ["error", type(e).__name__]
            try:
                d["value"] = self.canon(obj[()]) if obj.shape is not None else "empty"
            except Exception as e:  # noqa: BLE001
                d["value"] = ["error", type(e).__name__, str(e)[:80]]
        else:
            d["kind"] = "datatype"
            d["dtype"] = self.dtype_desc(obj.id, obj.dtype)
        self.out[path] = d


def describe(path):
    with h5py.File(path, "r") as f:
        return Desc(f).walk()


REENCODE_FREE = ("layout", "chunks", "filters")


def diff(src, dst, mode):
    probs = []
    for path in sorted(set(src) | set(dst)):
        a, b = src.get(path), dst.get(path)
        if a is None or b is None:
            probs.append("%s: %s" % (path, "missing in copy" if b is None else "extra in copy"))
            continue
        for k in sorted(set(a) | set(b)):
            if mode == "enc" and k in REENCODE_FREE:
                continue
            if a.get(k) != b.get(k):
                probs.append("%s: %s differs: %s vs %s" % (path, k, json.dumps(a.get(k))[:300],
                                                         json.dumps(b.get(k))[:300]))
    return probs


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libhdf5_edit  # noqa: E402  (the libhdf5 edit and its check, shared)


def in_child(fn, *args):
    """`fn(*args)` (a list of problems) in a forked child, so that libhdf5
    crashing on a bad file is a reported problem, not the end of the check."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        try:
            out = fn(*args)
        except Exception as e:  # noqa: BLE001
            out = ["libhdf5 edit failed: %s" % e]
        os.write(wfd, json.dumps(out).encode("utf-8")[:20000])
        os.close(wfd)
        os._exit(0)
    os.close(wfd)
    chunks = []
    while True:
        b = os.read(rfd, 4096)
        if not b:
            break
        chunks.append(b)
    os.close(rfd)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return ["libhdf5 crashed (signal %d)" % os.WTERMSIG(status)]
    try:
        return json.loads(b"".join(chunks).decode("utf-8", "replace"))
    except ValueError:
        return ["libhdf5 edit: truncated report"]


def edit_problems(path, seed):
    """libhdf5 edits a scratch copy of `path` (more groups, datasets and
    attributes, deleted links, extended datasets with new rows written) and
    checks the result: the problems."""
    ed = path + ".edit.h5"
    shutil.copyfile(path, ed)
    try:
        return in_child(lambda: libhdf5_edit.edit_check(ed, seed, max_objects=4, attrs=12)[0])
    finally:
        os.remove(ed)


def h5dump_ok(paths):
    """Does `h5dump -H` accept every one of `paths`? One process for the lot
    (start-up is most of its cost); None when h5dump is not installed."""
    if not paths:
        return True
    try:
        p = subprocess.run(["h5dump", "-H"] + list(paths), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=20 + 2 * len(paths))
        return p.returncode == 0
    except subprocess.TimeoutExpired:
        return False
    except FileNotFoundError:
        return None


def cmd_check(a):
    problems = []
    notes = []
    checked = 0
    copies = []
    for i in range(a.count):
        src = os.path.join(a.out, "f%03d.h5" % i)
        try:
            ds = describe(src)
        except Exception as e:  # noqa: BLE001
            problems.append("%s: h5py cannot describe the source: %s" % (src, e))
            continue
        for mode in ("keep", "enc"):
            cp = os.path.join(a.out, "f%03d.%s.h5" % (i, mode))
            if not os.path.exists(cp):
                continue
            checked += 1
            tag = "f%03d.%s" % (i, mode)
            copies.append((tag, src, cp))
            try:
                dd = describe(cp)
            except Exception as e:  # noqa: BLE001
                problems.append("%s: h5py cannot describe the copy: %s" % (tag, e))
                continue
            problems += ["%s: %s" % (tag, p) for p in diff(ds, dd, mode)]
            edit_seed = a.seed * 1_000_003 + i
            es = edit_problems(cp, edit_seed)
            if es:
                # the control: the same edit of the h5py-written source
                ctl = edit_problems(src, edit_seed)
                if ctl:
                    notes.append("%s: libhdf5 edits the source with problems too: %s"
                                 % (tag, ctl[:3]))
                else:
                    problems += ["%s: after a libhdf5 edit: %s" % (tag, e) for e in es[:10]]
    # h5dump -H: the copies in one run; file by file only when that fails
    if h5dump_ok([cp for _, _, cp in copies]) is False:
        for tag, src, cp in copies:
            if not h5dump_ok([cp]) and h5dump_ok([src]):
                problems.append("%s: h5dump -H refuses the copy (accepts the source)" % tag)
    print(json.dumps({"files": a.count, "copies": checked, "problems": problems,
                      "notes": notes}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["gen", "check"])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--expected")
    a = ap.parse_args()
    (cmd_gen if a.cmd == "gen" else cmd_check)(a)


if __name__ == "__main__":
    main()
