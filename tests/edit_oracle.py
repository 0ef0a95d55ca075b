"""Oracle for tests/edit_random.rs and tests/edit_kill.rs: random edit
programs drawn from a seed and applied with h5py, full dumps compared, and
h5py editing a file afterwards.

    gen DIR SEED [OURS]   base_SEED.h5 (h5py-written unless OURS=1 and it
                          exists), prog_SEED.json and py_SEED.h5 (the program
                          applied by h5py)
    check DIR SEED...     dump(py_SEED.h5) == dump(us_SEED.h5); h5dump -H
                          accepts us_SEED.h5; h5py edits a copy of it
    dump FILE             the dump, as JSON
"""
import json
import os
import random
import shutil
import subprocess
import sys

import h5py
import hdf5plugin  # noqa: F401  (registers Blosc2 for reading and writing)
import numpy as np


def attr_value(a):
    if isinstance(a, (bytes, str)):
        return ["str", a.decode() if isinstance(a, bytes) else a]
    a = np.asarray(a)
    if a.dtype.kind == "O":
        return ["obj", [x.decode() if isinstance(x, bytes) else str(x) for x in a.ravel()]]
    return [a.dtype.str, list(a.shape), a.tolist()]


def storage(o, n, attrs):
    """"dense" when the object keeps its links (attributes) in dense
    storage: a link (attribute) info message and no link (attribute)
    message for its n links (attributes); else "compact"."""
    present = h5py.h5o.get_info(o.id).hdr.mesg.present
    info, msg = (0x15, 0x0C) if attrs else (0x02, 0x06)
    if not (present >> info) & 1:
        # symbol-table groups count as not dense: groups the editor creates
        # in libver=earliest files have link messages where h5py makes
        # symbol tables (a known difference, not compared here)
        return "compact"
    return "dense" if n > 0 and not (present >> msg) & 1 else "compact"


def dump(path):
    out = {}
    with h5py.File(path, "r") as f:
        seen = []

        def obj(o, p):
            attrs = {k: attr_value(o.attrs[k]) for k in sorted(o.attrs.keys())}
            for q, other in seen:
                if other == o:
                    return {"alias": q}
            seen.append((p, o))
            # listing order (creation order when tracked) and storage kind
            aorder = list(o.attrs.keys())
            astore = storage(o, len(aorder), True)
            if isinstance(o, h5py.Dataset):
                return {"dataset": [o.dtype.str, list(o.shape), o[()].tolist()], "attrs": attrs,
                        "attr_order": aorder, "attr_storage": astore}
            links = {}
            for name in sorted(o.keys()):
                l = o.get(name, getlink=True)
                q = (p.rstrip("/") + "/" + name)
                if isinstance(l, h5py.SoftLink):
                    links[name] = {"soft": l.path}
                elif isinstance(l, h5py.ExternalLink):
                    links[name] = {"external": [l.filename, l.path]}
                else:
                    links[name] = obj(o[name], q)
            order = list(o.keys())
            return {"group": links, "attrs": attrs, "attr_order": aorder, "attr_storage": astore,
                    "order": order, "storage": storage(o, len(order), False)}

        out = obj(f, "/")
    return out


def scan(f):
    """Every hard-linked object: (path, is_group), groups first seen only."""
    objs = []

    def walk(g, p):
        for name in sorted(g.keys()):
            l = g.get(name, getlink=True)
            if not isinstance(l, h5py.HardLink):
                continue
            q = p.rstrip("/") + "/" + name
            o = g[name]
            objs.append((q, isinstance(o, h5py.Group)))
            if isinstance(o, h5py.Group):
                walk(o, q)

    objs.append(("/", True))
    walk(f, "/")
    return objs


def rand_value(r):
    k = r.choice(["int", "float", "str", "ints", "floats"])
    if k == "int":
        v = r.randint(-10**12, 10**12)
    elif k == "float":
        v = r.uniform(-1e6, 1e6)
    elif k == "str":
        v = "".join(r.choice("abcdefghij ") for _ in range(r.choice([0, 3, 10, 50, 300])))
    elif k == "ints":
        v = [r.randint(-1000, 1000) for _ in range(r.randint(1, 40))]
    else:
        v = [r.uniform(-1, 1) for _ in range(r.randint(1, 40))]
    return k, v


def py_value(k, v):
    if k == "int":
        return np.int64(v)
    if k == "float":
        return np.float64(v)
    if k == "str":
        return v
    if k == "ints":
        return np.array(v, dtype=np.int64)
    return np.array(v, dtype=np.float64)


def make_base(path, r):
    libver = r.choice(["earliest", "latest", "latest"])
    latest = libver == "latest"
    track = latest and r.random() < 0.5
    with h5py.File(path, "w", libver=libver, track_order=track) as f:
        groups = [f]
        for i in range(r.randint(1, 5)):
            kw = {"track_order": True} if latest and r.random() < 0.3 else {}
            g = r.choice(groups).create_group("g%d" % i, **kw)
            groups.append(g)
        if latest and r.random() < 0.6:
            # a group near or past the compact/dense thresholds (8 and 6)
            kw = {"track_order": True} if r.random() < 0.5 else {}
            many = f.create_group("many", **kw)
            for i in range(r.choice([5, 6, 7, 8, 9, 12, 30])):
                if i % 4 == 0:
                    many.create_dataset("m%02d" % i, data=np.arange(i % 5 + 1))
                elif i % 4 == 1:
                    many.create_group("m%02d" % i)
                else:
                    many["m%02d" % i] = h5py.SoftLink("/g%d" % (i % 2))
            groups.append(many)
        for i in range(r.randint(1, 5)):
            g = r.choice(groups)
            kw = {}
            if r.random() < 0.5:
                kw = {"chunks": True, "compression": r.choice(["gzip", None])}
            g.create_dataset("d%d" % i, data=np.arange(r.randint(1, 50), dtype=r.choice(["<i4", "<f8"])), **kw)
        for i in range(r.choice([0, 1, 1, 2, 3])):
            chunked_dataset(r.choice(groups), "c%d" % i, r)
        if libver == "earliest" and r.random() < 0.4:
            # a big symbol-table group: several symbol table nodes, up to a
            # two-level B-tree at the default K (leaf 4, internal 16)
            big = f.create_group("big")
            for i in range(r.choice([9, 30, 100, 300])):
                if i % 5 == 0:
                    big.create_dataset("x%03d" % i, data=np.arange(i % 7 + 1))
                else:
                    big["x%03d" % i] = h5py.SoftLink("/g%d" % (i % 3))
        for o in groups + [f[p] for p, _ in scan(f) if p != "/"]:
            many = latest and r.random() < 0.25
            for j in range(r.choice([5, 6, 7, 8, 9, 12, 20]) if many else r.randint(0, 4)):
                k, v = rand_value(r)
                o.attrs["a%d" % j] = py_value(k, v)
    return libver


FILTERS = ["none", "gzip", "shuffle_gzip", "lzf", "fletcher32", "gzip_fletcher32", "blosc2"]


def chunked_dataset(g, name, r):
    """A chunked dataset with a random rank, chunk shape, maximum shape
    (hence chunk index: fixed dims give a single chunk or a fixed array,
    one unlimited dimension an extensible array, more a v2 B-tree; all are a
    v1 B-tree in libver=earliest files) and filter stack."""
    rank = r.choice([1, 1, 2, 3])
    shape = tuple(r.randint(1, 12 if rank < 3 else 5) for _ in range(rank))
    chunks = tuple(r.randint(1, 6) for _ in range(rank))
    kind = r.choice(["fixed", "single", "max", "unlim1", "unlimall"])
    if kind == "fixed":
        maxshape = shape
    elif kind == "single":
        chunks = shape
        maxshape = shape
    elif kind == "max":
        maxshape = tuple(s + r.randint(0, 8) for s in shape)
    elif kind == "unlim1":
        u = r.randrange(rank)
        maxshape = tuple(None if i == u else s + r.randint(0, 4) for i, s in enumerate(shape))
    else:
        maxshape = (None,) * rank
    chunks = tuple(c if m is None else min(c, m) for c, m in zip(chunks, maxshape))
    dtype = r.choice(["<i4", "<i8", "<f8"])
    kw = {}
    filt = r.choice(FILTERS)
    if filt in ("gzip", "shuffle_gzip", "gzip_fletcher32"):
        kw["compression"] = "gzip"
        kw["compression_opts"] = r.randint(1, 9)
    if filt == "shuffle_gzip":
        kw["shuffle"] = True
    if filt in ("fletcher32", "gzip_fletcher32"):
        kw["fletcher32"] = True
    if filt == "lzf":
        kw["compression"] = "lzf"
    if filt == "blosc2":
        kw.update(hdf5plugin.Blosc2(cname=r.choice(["lz4", "zstd", "blosclz"]), clevel=5,
                                    filters=r.choice([hdf5plugin.Blosc2.NOFILTER, hdf5plugin.Blosc2.SHUFFLE])))
    if r.random() < 0.3:
        kw["fillvalue"] = r.randint(-50, 50)
    data = (np.arange(int(np.prod(shape))).reshape(shape) * 3 - 7).astype(dtype)
    d = g.create_dataset(name, shape=shape, dtype=dtype, chunks=chunks, maxshape=maxshape, **kw)
    if r.random() < 0.8:
        # leave some chunks unwritten (they read as the fill value)
        part = tuple(slice(0, r.randint(1, s)) for s in shape) if r.random() < 0.5 else ()
        d[part] = data[part]


def slab(op):
    return tuple(slice(s, s + c) for s, c in zip(op["start"], op["count"]))


def apply(f, op):
    t = op["op"]
    if t == "set_attr":
        f[op["path"]].attrs[op["name"]] = py_value(op["kind"], op["value"])
    elif t == "del_attr":
        del f[op["path"]].attrs[op["name"]]
    elif t == "create_group":
        f.create_group(op["path"])
    elif t == "create_dataset":
        f.create_dataset(op["path"], data=np.arange(op["n"], dtype=np.int64) * op["mul"])
    elif t == "delete":
        del f[op["path"]]
    elif t == "rename":
        f.move(op["from"], op["to"])
    elif t == "soft":
        f[op["path"]] = h5py.SoftLink(op["target"])
    elif t == "hard":
        f[op["path"]] = f[op["target"]]
    elif t == "write":
        d = f[op["path"]]
        c = op["count"]
        d[slab(op)] = (np.arange(int(np.prod(c))).reshape(c) * op["mul"] + 1).astype(d.dtype)
    elif t == "resize":
        f[op["path"]].resize(tuple(op["shape"]))
    else:
        raise ValueError(t)


def links_of(f, g):
    return list(f[g].keys())


def draw(f, r, earliest, serial):
    objs = scan(f)
    groups = [p for p, isg in objs if isg]
    t = r.choice(["set_attr"] * 4 + ["del_attr"] * 2 + ["write"] * 4 + ["resize"] * 2 + ["create_group", "create_dataset", "delete", "rename", "rename", "soft", "hard"])
    name = "n%d" % serial
    if t == "set_attr":
        near = [q for q, _ in objs if 5 <= len(f[q].attrs) <= 9]
        p = r.choice(near if near and r.random() < 0.5 else objs)[0]
        names = list(f[p].attrs.keys())
        if names and r.random() < 0.5:
            name = r.choice(names)
        k, v = rand_value(r)
        return {"op": t, "path": p, "name": name, "kind": k, "value": v}
    if t == "write":
        cands = [p for p, isg in objs if not isg and f[p].ndim >= 1
                 and f[p].dtype.str in ("<i4", "<i8", "<f8") and 0 not in f[p].shape]
        if not cands:
            return None
        p = r.choice(cands)
        start, count = [], []
        for n in f[p].shape:
            s = r.randrange(n)
            start.append(s)
            count.append(r.randint(1, n - s))
        return {"op": t, "path": p, "start": start, "count": count,
                "mul": r.randint(-9, 9), "dtype": f[p].dtype.str}
    if t == "resize":
        cands = [p for p, isg in objs if not isg and f[p].chunks is not None
                 and f[p].maxshape != f[p].shape]
        if not cands:
            return None
        p = r.choice(cands)
        shape = []
        for n, m in zip(f[p].shape, f[p].maxshape):
            top = n + 10 if m is None else m
            shape.append(r.choice([n, r.randint(0, top), r.randint(n, top), max(n - r.randint(1, 4), 0)]))
        return {"op": t, "path": p, "shape": shape}
    if t == "del_attr":
        cands = [(p, n) for p, _ in objs for n in f[p].attrs.keys()]
        near = [(p, n) for p, n in cands if 6 <= len(f[p].attrs) <= 9]
        if near and r.random() < 0.5:
            cands = near
        if not cands:
            return None
        p, n = r.choice(cands)
        return {"op": t, "path": p, "name": n}
    # half the time, a group near the compact/dense thresholds
    near = [g for g in groups if 5 <= len(links_of(f, g)) <= 9]
    small = near if near and r.random() < 0.5 else groups
    parent = r.choice(small)
    path = parent.rstrip("/") + "/" + name
    if t == "create_group":
        return {"op": t, "path": path}
    if t == "create_dataset":
        return {"op": t, "path": path, "n": r.randint(1, 30), "mul": r.randint(-5, 5)}
    if t == "soft":
        return {"op": t, "path": path, "target": r.choice(objs)[0] if r.random() < 0.8 else "/nowhere"}
    if t == "hard":
        ds = [p for p, isg in objs if not isg]
        if not ds:
            return None
        return {"op": t, "path": path, "target": r.choice(ds)}
    # delete or rename: any link but the root's
    all_links = [(g.rstrip("/") + "/" + n) for g in groups for n in links_of(f, g)]
    near_links = [(g.rstrip("/") + "/" + n) for g in groups if 6 <= len(links_of(f, g)) <= 9
                  for n in links_of(f, g)]
    if near_links and r.random() < 0.5:
        all_links = near_links
    if not all_links:
        return None
    a = r.choice(all_links)
    if t == "delete":
        return {"op": t, "path": a}
    dest = [g for g in small if not (g + "/").startswith(a + "/")]
    if not dest:
        return None
    return {"op": t, "from": a, "to": r.choice(dest).rstrip("/") + "/" + name}


def gen(d, seed, ours):
    r = random.Random(seed)
    base = os.path.join(d, "base_%d.h5" % seed)
    if not (ours and os.path.exists(base)):
        libver = make_base(base, r)
    else:
        libver = "ours"
    py = os.path.join(d, "py_%d.h5" % seed)
    shutil.copy(base, py)
    prog = []
    with h5py.File(py, "r+") as f:
        for i in range(r.randint(5, 25)):
            op = draw(f, r, libver == "earliest", i)
            if op is None:
                continue
            apply(f, op)
            prog.append(op)
    with open(os.path.join(d, "prog_%d.json" % seed), "w") as fh:
        json.dump({"libver": libver, "ops": prog}, fh)


def strip(o):
    """The dump without listing order and storage kinds (the post-edit
    check compares content only)."""
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items()
                if k not in ("order", "attr_order", "storage", "attr_storage")}
    return o


def first_differences(a, b, at="", out=None):
    """Where two dumps differ (up to 5 places), with both sides' values."""
    out = [] if out is None else out
    if len(out) >= 5:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append("%s/%s only in %s" % (at, k, "py" if k in a else "us"))
            else:
                first_differences(a[k], b[k], "%s/%s" % (at, k), out)
    elif a != b:
        out.append("%s: py=%s us=%s" % (at or "/", json.dumps(a)[:300], json.dumps(b)[:300]))
    return out


def check(d, seed):
    py = os.path.join(d, "py_%d.h5" % seed)
    us = os.path.join(d, "us_%d.h5" % seed)
    res = {"seed": seed, "ok": True, "why": []}
    try:
        a, b = dump(py), dump(us)
        if a != b:
            res["ok"] = False
            res["why"].append("dumps differ: " + "; ".join(first_differences(a, b)))
    except Exception as e:  # noqa: BLE001
        res["ok"] = False
        res["why"].append("dump failed: %r" % e)
    if shutil.which("h5dump"):
        # h5dump itself fails on some files h5py writes (hard links to
        # datasets moved around): ours must pass whenever h5py's passes
        theirs = subprocess.run(["h5dump", "-H", py], capture_output=True, text=True)
        p = subprocess.run(["h5dump", "-H", us], capture_output=True, text=True)
        res["h5dump"] = [theirs.returncode, p.returncode]
        if p.returncode != 0 and theirs.returncode == 0:
            res["ok"] = False
            res["why"].append("h5dump -H: %s" % p.stderr[:300])
    post = os.path.join(d, "post_%d.h5" % seed)
    shutil.copy(us, post)
    try:
        with h5py.File(post, "r+") as f:
            before = strip(dump(post))
            f.attrs["after_edit"] = "yes"
            f.create_group("after_group").attrs["x"] = np.arange(3)
        after = strip(dump(post))
        before["attrs"]["after_edit"] = ["str", "yes"]
        before["group"]["after_group"] = {"group": {}, "attrs": {"x": attr_value(np.arange(3))}}
        if after != before:
            res["ok"] = False
            res["why"].append("h5py edit of our file lost content")
    except Exception as e:  # noqa: BLE001
        res["ok"] = False
        res["why"].append("h5py edit failed: %r" % e)
    return res


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(sys.argv[2], int(sys.argv[3]), len(sys.argv) > 4 and sys.argv[4] == "1")
    elif cmd == "gen-many":
        ours = sys.argv[3] == "1"
        for s in sys.argv[4:]:
            gen(sys.argv[2], int(s), ours)
    elif cmd == "check":
        for s in sys.argv[3:]:
            print(json.dumps(check(sys.argv[2], int(s))))
    elif cmd == "dump":
        print(json.dumps(dump(sys.argv[2]), sort_keys=True))
