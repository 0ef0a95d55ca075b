"""Compare what purehdf reads with what h5py reads: structure, links,
dtypes, shapes, properties, attributes and values (random selections too)."""

import math
import random

import h5py
import numpy as np

import purehdf


class Diff:
    """The differences found, with how many things were compared."""

    def __init__(self):
        self.problems = []
        self.checked = 0

    def check(self, ok, where, what):
        self.checked += 1
        if not ok:
            self.problems.append("%s: %s" % (where, what))


def same(a, b, hf, pf):
    """Whether an h5py value ``a`` equals a purehdf value ``b``."""
    if isinstance(a, h5py.RegionReference):
        return isinstance(b, purehdf.RegionReference) and bool(a) == bool(b)
    if isinstance(a, h5py.Reference):
        if not isinstance(b, purehdf.Reference) or bool(a) != bool(b):
            return False
        if not a:
            return True
        # the same object: h5py's target header address is the purehdf
        # reference's, and purehdf opens it as the same kind of object
        return (h5py.h5o.get_info(hf[a].id).addr == b.address
                and type(hf[a]).__name__ == type(pf[b]).__name__)
    if isinstance(a, h5py.Empty):
        return isinstance(b, purehdf.Empty) and a.dtype == b.dtype
    if isinstance(a, np.ndarray):
        if not isinstance(b, np.ndarray) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.names is not None:
            return all(same(a[n], b[n], hf, pf) for n in a.dtype.names)
        if a.dtype.hasobject or a.dtype.subdtype is not None:
            return all(same(x, y, hf, pf) for x, y in zip(a.reshape(-1), b.reshape(-1)))
        if a.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return a.tobytes() == b.tobytes()
    if isinstance(a, np.void) and a.dtype.names is not None:
        return (isinstance(b, np.void) and a.dtype == b.dtype
                and all(same(a[n], b[n], hf, pf) for n in a.dtype.names))
    if isinstance(a, np.generic):
        if type(a) is not type(b) or a.dtype != b.dtype:
            return False
        if a.dtype.kind in "fc":
            return a == b or (np.isnan(a) and np.isnan(b))
        return a.tobytes() == b.tobytes() if a.dtype.kind == "V" else bool(a == b)
    if isinstance(a, float):
        return isinstance(b, float) and (a == b or (math.isnan(a) and math.isnan(b)))
    return type(a) is type(b) and a == b


def read(obj, key):
    try:
        return ("ok", obj[key])
    except Exception as e:  # noqa: BLE001
        return ("err", type(e).__name__)


def random_key(r, shape):
    """A random h5py key for a dataset of ``shape``."""
    if not shape:
        return r.choice([(), Ellipsis])
    key = []
    for n in shape:
        k = r.choice(["all", "int", "slice", "step", "neg"])
        if n == 0 or k == "all":
            key.append(slice(None))
        elif k == "int":
            key.append(r.randrange(n))
        elif k == "neg":
            key.append(-1 - r.randrange(n))
        else:
            a = r.randrange(n)
            b = r.randint(a, n)
            key.append(slice(a, b, r.randint(1, 3) if k == "step" else None))
    if r.random() < 0.2:
        key = [Ellipsis] + key[1:]
    return tuple(key)


def compare_attrs(d, where, h, p, hf, pf):
    hk, pk = list(h.attrs.keys()), list(p.attrs.keys())
    d.check(hk == pk, where, "attribute names %r != %r" % (hk, pk))
    for k in hk:
        if k not in pk:
            continue
        try:
            av = h.attrs[k]
        except Exception:  # noqa: BLE001
            continue  # h5py cannot read it: nothing to compare
        try:
            bv = p.attrs[k]
        except Exception as e:  # noqa: BLE001
            d.check(False, where, "attribute %s: %s: %s" % (k, type(e).__name__, e))
            continue
        d.check(same(av, bv, hf, pf), where, "attribute %s: %r != %r" % (k, av, bv))


def compare_dataset(d, where, h, p, hf, pf, r, draws):
    for prop in ("dtype", "shape", "ndim", "size", "chunks", "maxshape", "compression",
                 "compression_opts", "shuffle", "fletcher32"):
        try:
            av = getattr(h, prop)
        except Exception:  # noqa: BLE001
            continue
        bv = getattr(p, prop)
        d.check(av == bv, where, "%s %r != %r" % (prop, av, bv))
    try:
        hfv = h.fillvalue
        d.check(same(hfv, p.fillvalue, hf, pf) or h.dtype.hasobject, where,
                "fillvalue %r != %r" % (hfv, p.fillvalue))
    except Exception:  # noqa: BLE001
        pass
    keys = [()] + ([Ellipsis] if h.shape is not None else [])
    if h.shape:
        keys += [random_key(r, h.shape) for _ in range(draws)]
    for key in keys:
        a, b = read(h, key), read(p, key)
        if a[0] == "err":
            continue  # h5py refuses the read: not compared
        if b[0] == "err":
            d.check(False, where, "read %r: purehdf raised %s" % (key, b[1]))
            continue
        d.check(same(a[1], b[1], hf, pf), where, "read %r: %r != %r" % (key, a[1], b[1]))
    if h.dtype.names and h.shape:
        n = h.dtype.names[0]
        a, b = read(h, n), read(p, n)
        if a[0] == "ok":
            d.check(b[0] == "ok" and same(a[1], b[1], hf, pf), where, "field %s" % n)


def compare_files(h5path, pf, seed=0, draws=4):
    """Compare the file at ``h5path`` as h5py and purehdf read it."""
    d = Diff()
    r = random.Random(seed)
    with h5py.File(h5path, "r") as hf:
        seen = set()
        stack = ["/"]
        while stack:
            path = stack.pop()
            hg, pg = hf[path], pf[path]
            addr = h5py.h5o.get_info(hg.id).addr
            if addr in seen:
                continue
            seen.add(addr)
            compare_attrs(d, path, hg, pg, hf, pf)
            hk, pk = list(hg.keys()), list(pg.keys())
            d.check(hk == pk, path, "keys %r != %r" % (hk, pk))
            d.check(len(hg) == len(pg), path, "len")
            for k in hk:
                sub = path.rstrip("/") + "/" + k
                hl = hg.get(k, getlink=True)
                pl = pg.get(k, getlink=True)
                d.check(type(hl).__name__ == type(pl).__name__, sub, "link %r vs %r" % (hl, pl))
                if isinstance(hl, h5py.SoftLink):
                    d.check(hl.path == pl.path, sub, "soft link target")
                if isinstance(hl, h5py.ExternalLink):
                    d.check((hl.filename, hl.path) == (pl.filename, pl.path), sub, "external")
                hin = k in hg
                d.check(hin == (k in pg), sub, "'in' differs")
                if not hin:
                    continue
                try:
                    ho = hg[k]
                except Exception as e:  # noqa: BLE001
                    b = read(pg, k)
                    d.check(b == ("err", type(e).__name__), sub,
                            "h5py raised %s, purehdf %r" % (type(e).__name__, b))
                    continue
                po = pg[k]
                d.check(type(ho).__name__ == type(po).__name__, sub,
                        "kind %s vs %s" % (type(ho).__name__, type(po).__name__))
                if isinstance(ho, h5py.Group):
                    stack.append(sub)
                elif isinstance(ho, h5py.Dataset):
                    oaddr = h5py.h5o.get_info(ho.id).addr
                    if oaddr in seen:
                        continue
                    seen.add(oaddr)
                    compare_attrs(d, sub, ho, po, hf, pf)
                    compare_dataset(d, sub, ho, po, hf, pf, r, draws)
                elif isinstance(ho, h5py.Datatype):
                    d.check(ho.dtype == po.dtype, sub, "named type %r != %r"
                            % (ho.dtype, po.dtype))
                    compare_attrs(d, sub, ho, po, hf, pf)
        # h5py's visit lists the same names
        hv, pv = [], []
        hf.visit(hv.append)
        pf.visit(pv.append)
        d.check(hv == pv, "/", "visit order %s != %s" % (hv[:5], pv[:5]))
    return d
