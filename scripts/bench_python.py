#!/usr/bin/env python3
"""purehdf's Python package against h5py + hdf5plugin, in one run.

usage: bench_python.py [--size N] [--repeat R] [--dir DIR]

Cells (best of R runs each, the two libraries alternated run by run; seconds,
and purehdf's speed-up); the load average is printed at the start and end:
  full read <profile>   a whole N^3 int16 volume: contiguous, gzip-4 chunks
                        of 64^3, shuffle+gzip, Blosc2 lz4 (hdf5plugin), lzf
  200 patches           200 random 64^3 patches of the gzip volume (a fresh
                        handle per run; each library keeps its own chunk cache)
  2000-dataset walk     visititems over 2,000 small datasets in 40 groups,
                        reading each one's shape, dtype and attributes
  gzip write            the N^3 volume written chunked 64^3 with gzip-4
Needs numpy, h5py and hdf5plugin next to an installed purehdf.
"""

import argparse
import os
import random
import tempfile
import time

import h5py
import hdf5plugin
import numpy as np

import purehdf


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(fa, fb, repeat):
    """Best of ``repeat`` runs of each, the two alternated run by run so a
    change in the machine's load hits both alike."""
    ta, tb = [], []
    for _ in range(repeat):
        ta.append(timed(fa))
        tb.append(timed(fb))
    return min(ta), min(tb)


def load():
    return "load average %.2f %.2f %.2f on %d cores" % (os.getloadavg() + (os.cpu_count(),))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    n = a.size
    d = a.dir or tempfile.mkdtemp(prefix="bench_python_")
    rng = np.random.default_rng(0)
    z, y, x = np.ogrid[:n, :n, :n]
    vol = ((z * 7 + y * 3 + x) % 1000 + rng.integers(0, 50, (n, n, n))).astype("<i2")
    profiles = {
        "contiguous": {},
        "gzip": dict(chunks=(64, 64, 64), compression="gzip", compression_opts=4),
        "shuffle+gzip": dict(chunks=(64, 64, 64), compression="gzip", shuffle=True),
        "blosc2-lz4": dict(chunks=(64, 64, 64), **hdf5plugin.Blosc2(cname="lz4", clevel=5)),
        "lzf": dict(chunks=(64, 64, 64), compression="lzf"),
    }
    src = os.path.join(d, "vol.h5")
    with h5py.File(src, "w") as f:
        for name, kw in profiles.items():
            f.create_dataset(name, data=vol, **kw)
    walk = os.path.join(d, "walk.h5")
    with h5py.File(walk, "w") as f:
        for i in range(2000):
            ds = f.create_dataset("g%02d/d%04d" % (i % 40, i), data=np.arange(i % 17, dtype="f4"))
            ds.attrs["units"] = "mm"
            ds.attrs["index"] = i
    rows = []

    def cell(name, fh5, fph):
        th, tp = interleaved(fh5, fph, a.repeat)
        rows.append((name, th, tp))
        print("%-24s h5py %8.4f s   purehdf %8.4f s   x%.2f" % (name, th, tp, th / tp),
              flush=True)

    print("start:", load(), flush=True)
    hf, pf = h5py.File(src, "r"), purehdf.File(src)
    for name in profiles:
        cell("full read " + name, lambda: hf[name][()], lambda: pf[name][()])
    r = random.Random(1)
    corners = [tuple(r.randrange(n - 63) for _ in range(3)) for _ in range(200)]

    def patches(mod):
        def run():
            # a fresh handle per run: no chunk cached from an earlier run
            with mod.File(src, "r") as f:
                ds = f["gzip"]
                for c in corners:
                    ds[c[0]:c[0] + 64, c[1]:c[1] + 64, c[2]:c[2] + 64]
        return run
    cell("200 patches 64^3 gzip", patches(h5py), patches(purehdf))

    def walker(mod):
        def run():
            with mod.File(walk, "r") as f:
                def visit(name, obj):
                    if isinstance(obj, mod.Dataset):
                        obj.shape, obj.dtype, dict(obj.attrs)
                f.visititems(visit)
        return run
    cell("2000-dataset walk", walker(h5py), walker(purehdf))

    def write(mod):
        def run():
            p = os.path.join(d, "w_%s.h5" % mod.__name__)
            with mod.File(p, "w") as f:
                f.create_dataset("v", data=vol, chunks=(64, 64, 64), compression="gzip",
                                 compression_opts=4)
        return run
    cell("gzip write", write(h5py), write(purehdf))
    w = h5py.File(os.path.join(d, "w_purehdf.h5"), "r")
    assert np.array_equal(w["v"][()], vol)
    print("end:", load())
    print("all cells: purehdf / h5py speed-up min x%.2f" % min(h / p for _, h, p in rows))


if __name__ == "__main__":
    main()
