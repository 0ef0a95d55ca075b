"""libhdf5 must be able to edit every file we write (tests/libhdf5_edit.rs).

  gen --seed N --out F      write a random small tree with h5py (seed 0: the
                            regression case, a compact scalar object reference)
  edit --seed N --file F    edit F with libhdf5 (h5py r+): add groups, datasets
                            and 32 attributes to every object (interleaved, so
                            no header can grow in place at the end of the file
                            and libhdf5 must add continuation chunks), delete
                            links, extend chunked datasets with maxshape; then
                            reopen and check that everything reads and that the
                            untouched data equals what was there before, and
                            whether h5dump accepts the file. Prints JSON
                            {"problems": [...], "h5dump": true|false|null}.

The edits are chosen from the seed and the sorted object paths, so the same
edits apply to the h5py-written source (the control) and to our copy.
"""

import argparse
import json
import random
import subprocess
import sys

import h5py
import numpy as np

try:
    import hdf5plugin  # noqa: F401  (blosc2 copies)
except ImportError:  # pragma: no cover
    pass

NAMES = [
    "a", "data", "x" * 70, "long_" + "n" * 250, "données_é", "δεδομένα", "数据集",
    "emoji_\U0001F600", "with space", "dot.name", "Ünïcödé_" + "ß" * 40,
]


def name(rng, used):
    while True:
        n = rng.choice(NAMES) + ("" if rng.random() < 0.5 else "_%d" % rng.randrange(1000))
        if n not in used:
            used.add(n)
            return n


def rand_data(rng, nrng, kind, shape):
    if kind == "i1":
        return nrng.integers(-100, 100, size=shape).astype("i1")
    if kind == "<i4":
        return nrng.integers(-(2 ** 30), 2 ** 30, size=shape).astype("<i4")
    if kind == ">i2":
        return nrng.integers(-3000, 3000, size=shape).astype(">i2")
    if kind == "<f8":
        return nrng.standard_normal(size=shape).astype("<f8")
    if kind == "<f4":
        return nrng.standard_normal(size=shape).astype("<f4")
    if kind == "S8":
        return np.array([b"s%d" % rng.randrange(10 ** 6) for _ in range(int(np.prod(shape)))],
                        dtype="S8").reshape(shape)
    if kind == "cmp":
        dt = np.dtype([("a", "<i4"), ("b", "<f8")])
        a = np.zeros(shape, dtype=dt)
        a["a"] = nrng.integers(0, 100, size=shape)
        a["b"] = nrng.standard_normal(size=shape)
        return a
    raise ValueError(kind)


def make_dataset(rng, nrng, parent, nm, targets):
    kind = rng.choice(["i1", "<i4", ">i2", "<f8", "<f4", "S8", "cmp", "vstr", "ref", "ref"])
    layout = rng.choice(["compact", "contiguous", "chunked", "chunked"])
    scalar = layout != "chunked" and rng.random() < 0.3
    shape = () if scalar else tuple(rng.randint(1, 12) for _ in range(rng.randint(1, 2)))
    if kind == "ref":
        tgts = [targets[rng.randrange(len(targets))] for _ in range(int(np.prod(shape)) or 1)]
        data = np.array([t.ref for t in tgts], dtype=h5py.ref_dtype)
        data = data[0] if shape == () else data.reshape(shape)
        dt = h5py.ref_dtype
    elif kind == "vstr":
        dt = h5py.string_dtype()
        vals = ["v%d_%s" % (i, "é" * rng.randrange(5)) for i in range(int(np.prod(shape)) or 1)]
        data = np.array(vals, dtype=object)
        data = data[0] if shape == () else data.reshape(shape)
    else:
        data = rand_data(rng, nrng, kind, shape if shape else (1,))
        data = data[0] if shape == () else data
        dt = data.dtype
    if layout == "compact":
        tid = h5py.h5t.py_create(np.dtype(dt), logical=True)
        sid = h5py.h5s.create(h5py.h5s.SCALAR) if shape == () else h5py.h5s.create_simple(shape)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        if rng.random() < 0.3:
            dcpl.set_attr_creation_order(h5py.h5p.CRT_ORDER_TRACKED | h5py.h5p.CRT_ORDER_INDEXED)
        h5py.h5d.create(parent.id, nm.encode("utf-8"), tid, sid, dcpl=dcpl)
        ds = parent[nm]
        ds[()] = data
    elif layout == "contiguous":
        ds = parent.create_dataset(nm, data=data, dtype=dt)
    else:
        kw = {}
        if kind not in ("vstr", "ref"):
            f = rng.choice(["gzip", "shuffle+gzip", "fletcher32", "none"])
            if "gzip" in f:
                kw["compression"] = "gzip"
            if "shuffle" in f:
                kw["shuffle"] = True
            if f == "fletcher32":
                kw["fletcher32"] = True
        if rng.random() < 0.6:
            kw["maxshape"] = (None,) + shape[1:]
        chunks = tuple(max(1, s // rng.randint(1, 3)) for s in shape)
        ds = parent.create_dataset(nm, data=data, dtype=dt, chunks=chunks, **kw)
    return ds


def make_attrs(rng, nrng, obj, targets):
    n = rng.choice([0, 0, 1, 3, 9, 12, 40])
    used = set()
    for _ in range(n):
        k = rng.random()
        nm = name(rng, used)
        if k < 0.1 and targets:
            obj.attrs[nm] = targets[rng.randrange(len(targets))].ref
        elif k < 0.3:
            obj.attrs[nm] = "text %s" % ("ü" * rng.randrange(20))
        elif k < 0.6:
            obj.attrs[nm] = rand_data(rng, nrng, rng.choice(["<i4", "<f8", ">i2"]), (rng.randint(1, 9),))
        else:
            obj.attrs[nm] = rng.randrange(10 ** 6)


def cmd_gen(a):
    rng = random.Random(a.seed)
    nrng = np.random.default_rng(a.seed)
    if a.seed == 0:
        # the regression case of the issue
        with h5py.File(a.out, "w", libver="latest") as f:
            g = f.create_group("somegroup")
            sid = h5py.h5s.create(h5py.h5s.SCALAR)
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_layout(h5py.h5d.COMPACT)
            h5py.h5d.create(f.id, b"r", h5py.h5t.STD_REF_OBJ, sid, dcpl=dcpl)
            f["r"][()] = g.ref
            f["t"] = np.dtype("<i4")
        return
    libver = rng.choice(["latest", "latest", ("earliest", "latest")])
    track = rng.random() < 0.3
    with h5py.File(a.out, "w", libver=libver, track_order=track) as f:
        targets = [f]
        groups = [f]
        if rng.random() < 0.5:
            f["committed_type"] = np.dtype(rng.choice(["<i4", "<f8"]))
            targets.append(f["committed_type"])
        for depth in range(rng.randint(1, 3)):
            new = []
            for g in groups:
                used = set(g.keys())
                for _ in range(rng.randint(1, 4)):
                    nm = name(rng, used)
                    if rng.random() < 0.35:
                        sub = g.create_group(nm, track_order=rng.random() < 0.3)
                        new.append(sub)
                        targets.append(sub)
                    else:
                        targets.append(make_dataset(rng, nrng, g, nm, targets))
            groups = new or groups
        for t in list(targets):
            make_attrs(rng, nrng, t, targets)
        if rng.random() < 0.3 and len(targets) > 2:
            # a hard-link alias
            t = targets[rng.randrange(1, len(targets))]
            f["alias_%d" % rng.randrange(100)] = t


# ---------------------------------------------------------------- editing

def canon(v):
    if isinstance(v, h5py.Reference):
        return ["ref", bool(v)]
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "O" or v.dtype.names:
            return canon(v.tolist())
        return ["arr", str(v.dtype), list(v.shape), v.tobytes().hex()]
    if isinstance(v, (list, tuple)):
        return [canon(x) for x in v]
    if isinstance(v, np.generic):
        return canon(np.asarray(v))
    if isinstance(v, bytes):
        return ["bytes", v.hex()]
    return v


def ref_targets(f, v):
    """Addresses of the objects an array of references points to."""
    out = []
    for r in np.asarray(v, dtype=object).ravel():
        if isinstance(r, h5py.Reference) and r:
            try:
                out.append(h5py.h5o.get_info(f[r].id).addr)
            except Exception:  # noqa: BLE001
                # the edit deleted the target's last link: libhdf5 freed it
                out.append(None)
    return out


def snapshot(path):
    """path -> (kind, value, attrs) of every object reachable by name."""
    snap = {}
    with h5py.File(path, "r") as f:
        def visit(nm, obj):
            rec = {"attrs": {}}
            if isinstance(obj, h5py.Dataset):
                v = obj[()]
                rec["value"] = canon(v)
                if obj.dtype == h5py.ref_dtype:
                    rec["refs"] = ref_targets(f, v)
                rec["maxshape"] = list(obj.maxshape) if obj.maxshape else None
                rec["chunks"] = obj.chunks is not None
            rec["kind"] = type(obj).__name__
            rec["addr"] = h5py.h5o.get_info(obj.id).addr
            rec["attr_refs"] = []
            for k in obj.attrs:
                v = obj.attrs[k]
                rec["attrs"][k] = canon(v)
                if isinstance(v, (h5py.Reference, np.ndarray)) and (
                        isinstance(v, h5py.Reference) or v.dtype == h5py.ref_dtype):
                    rec["attr_refs"] += ref_targets(f, v)
            snap[nm] = rec
        f.visititems(visit)
        visit("/", f)
    return snap


def h5dump(path, header_only):
    try:
        p = subprocess.run(["h5dump", "-H", path] if header_only else ["h5dump", path],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
        return p.returncode == 0, p.stderr.decode("utf-8", "replace")[-300:]
    except FileNotFoundError:
        return None, ""
    except subprocess.TimeoutExpired:
        return False, "timeout"


def edit_check(path, seed, max_objects=None, attrs=32):
    """Edit `path` with libhdf5 (the edits chosen from `seed`), reopen it and
    check it: (problems, facts). `attrs` attributes go on every object, or
    with `max_objects` on at most that many (a sample) besides the root."""
    problems = []
    before = snapshot(path)
    rng = random.Random(seed * 7919 + 1)
    paths = sorted(p for p in before if p != "/")
    deleted = []
    added_attrs = {}
    extended = {}
    written = {}
    with h5py.File(path, "r+") as f:
        # 1. delete up to two links; never one to an object a reference points
        # to (libhdf5 frees an object with its last link, references dangle)
        held = set()
        for rec in before.values():
            held.update(rec.get("refs") or [])
            held.update(rec["attr_refs"])
        cands = [p for p in paths if before[p]["addr"] not in held]
        for p in rng.sample(cands, min(len(cands), rng.choice([0, 1, 2]))):
            if any(p.startswith(d + "/") or p == d for d in deleted):
                continue
            try:
                del f[p]
                deleted.append(p)
            except Exception as e:  # noqa: BLE001
                problems.append("delete %s: %s" % (p, e))
        alive = [p for p in paths if not any(p == d or p.startswith(d + "/") for d in deleted)]
        alive = [p for p in alive if p in f]
        # 2. new groups and datasets
        groups = ["/"] + [p for p in alive if before[p]["kind"] == "Group"]
        for i, g in enumerate(rng.sample(groups, min(len(groups), 3))):
            grp = f[g]
            ng = grp.create_group("libhdf5_group_%d" % i)
            ng.create_dataset("inner", data=np.arange(5 + i))
            grp.create_dataset("libhdf5_data_%d" % i, data=np.arange(20, dtype="<f8") * i)
            grp.create_dataset("libhdf5_chunked_%d" % i, data=np.arange(8), chunks=(4,),
                               maxshape=(None,), compression="gzip")
        # 3. 32 attributes on every object, interleaved with the root's so
        # that no header is last in the file when it grows
        objs = alive + ["/"]
        if max_objects is not None and len(objs) > max_objects:
            objs = rng.sample(alive, max_objects) + ["/"]
        for j in range(attrs):
            f.attrs["libhdf5_root_%02d" % j] = np.arange(j + 1)
            for p in objs:
                nm = "libhdf5_%02d_%s" % (j, "ü" * (j % 3))
                f[p].attrs[nm] = j * 3 + len(p)
                added_attrs.setdefault(p, {})[nm] = j * 3 + len(p)
        # 4. extend chunked datasets with maxshape
        for p in alive:
            rec = before[p]
            if rec["kind"] == "Dataset" and rec.get("maxshape") and rec["maxshape"][0] is None:
                ds = f[p]
                n = ds.shape[0]
                try:
                    ds.resize(n + 3, axis=0)
                    extended[p] = n
                except Exception as e:  # noqa: BLE001
                    problems.append("resize %s: %s" % (p, e))
                    continue
                d = ds.dtype
                if d.names is None and d.subdtype is None and d.kind in "iuf":
                    # and write the new rows (new chunks in the chunk index)
                    rows = (np.arange(3 * int(np.prod(ds.shape[1:], dtype=np.int64)))
                            % 100 + 7).astype(d).reshape((3,) + ds.shape[1:])
                    try:
                        ds[n:n + 3] = rows
                        written[p] = canon(rows)
                    except Exception as e:  # noqa: BLE001
                        problems.append("write new rows of %s: %s" % (p, e))
    # reopen and check
    try:
        after = snapshot(path)
    except Exception as e:  # noqa: BLE001
        problems.append("reopen after edit: %s" % e)
        return problems, {}
    with h5py.File(path, "r") as f:
        for p in alive:
            if p not in after:
                problems.append("%s: lost after the edit" % p)
                continue
            b, c = before[p], after[p]
            if b["kind"] == "Dataset":
                if p in extended:
                    ds = f[p]
                    v = ds[: extended[p]]
                    if canon(v) != b["value"]:
                        problems.append("%s: extended dataset's old rows changed" % p)
                    if ds.shape[0] != extended[p] + 3:
                        problems.append("%s: not extended" % p)
                    elif p in written and canon(ds[extended[p]:]) != written[p]:
                        problems.append("%s: the rows written by libhdf5 read back wrong" % p)
                elif c["value"] != b["value"]:
                    problems.append("%s: value changed" % p)
                if not deleted and b.get("refs") is not None and c.get("refs") != b["refs"]:
                    problems.append("%s: references point elsewhere" % p)
            for k, v in b["attrs"].items():
                if c["attrs"].get(k) != v:
                    problems.append("%s: attribute %r changed or lost" % (p, k))
            for k, v in added_attrs.get(p, {}).items():
                if c["attrs"].get(k) != canon(np.asarray(v)) and c["attrs"].get(k) != v:
                    problems.append("%s: added attribute %r reads %r" % (p, k, c["attrs"].get(k)))
    return problems, {"objects": len(before), "deleted": deleted, "extended": len(extended),
                      "written": len(written), "attributes": sum(map(len, added_attrs.values()))}


def cmd_edit(a):
    problems, facts = edit_check(a.file, a.seed)
    ok, err = h5dump(a.file, a.header_only)
    print(json.dumps(dict(facts, problems=problems, h5dump=ok,
                          h5dump_err=err.strip().replace("\n", " | "))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["gen", "edit"])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out")
    ap.add_argument("--file")
    ap.add_argument("--header-only", action="store_true")
    a = ap.parse_args()
    (cmd_gen if a.cmd == "gen" else cmd_edit)(a)


if __name__ == "__main__":
    sys.exit(main())
