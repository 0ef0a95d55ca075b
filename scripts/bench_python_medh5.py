#!/usr/bin/env python3
"""purehdf.medh5 against the reference medh5 package's Python API, in one run.

usage: bench_python_medh5.py [--size N] [--patches P] [--repeat R] [--profile C] [--dir DIR]

Cells (best of R runs each, seconds, and purehdf's speed-up), on an N^3 int16
CT with an 8-class labelmap and its sampling index, written by the reference:
  open -> first patch   open the sample, draw one balanced 64^3 window, read
                        the image and the label planes under it
  patches, 2 workers    P balanced 64^3 patches (image as float32 + one-hot
                        labels) through a 2-process pool: purehdf's
                        PatchDataset; the reference's PatchSampler + reads
                        (its PatchDataset needs torch)
  verify                open and verify every digest and the content_id
Needs numpy and the reference medh5 next to an installed purehdf.
"""

import argparse
import multiprocessing
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import medh5 as ref
from medh5 import _core
from medh5.sampling import PatchSampler as RefSampler
from purehdf import medh5 as ours

PATCH = 64


def best(fn, repeat):
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def first_patch(mod, sampler_cls, path):
    def run():
        with mod.open(path) as s:
            p = sampler_cls(PATCH, strategy="balanced").draw(s, "organs", rng=(0, 0))
            s.images["CT"].read(p.slices)
            s.annotations["organs"].dense(roi=p.slices)
    return run


_REF = {}


def _ref_item(args):
    path, seed, i = args
    s = _REF.get(path)
    if s is None:
        s = _REF[path] = ref.open(path)
    p = RefSampler(PATCH, strategy="balanced").draw(s, "organs", rng=(seed, 0, i))
    img = p.apply_padding(s.images["CT"].read(p.slices, physical=True, dtype=np.float32))
    lab = p.apply_padding(s.annotations["organs"].dense(roi=p.slices).astype(np.float32))
    return img.shape, lab.shape


def _our_item(args):
    ds, i = args
    it = ds[i]
    return it["images"]["CT"].shape, it["label"]["organs"].shape


def patches(kind, path, n):
    ctx = multiprocessing.get_context("fork")

    def run():
        with ProcessPoolExecutor(2, mp_context=ctx) as pool:
            if kind == "ref":
                out = list(pool.map(_ref_item, [(path, 1, i) for i in range(n)], chunksize=8))
            else:
                ds = ours.PatchDataset([path], ours.PatchSampler(PATCH, strategy="balanced"),
                                       samples_per_volume=n, annotations={"organs": []}, seed=1)
                out = list(pool.map(_our_item, [(ds, i) for i in range(n)], chunksize=8))
        assert len(out) == n
    return run


def verify(mod, path):
    def run():
        with mod.open(path) as s:
            assert s.verify().ok
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=192)
    ap.add_argument("--patches", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", default="balanced")
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    d = a.dir or tempfile.mkdtemp(prefix="bench_medh5_")
    n = a.size
    path = _core.bench_synthetic_sample(d, shape=(n, n, n), classes=8, codec=a.profile,
                                        index=True)
    print("sample %s: %d^3, profile %s, %d bytes; load %s" % (
        path, n, a.profile, os.path.getsize(path), os.getloadavg()))
    rows = []

    def cell(name, fr, fo, unit=None):
        tr, to = best(fr, a.repeat), best(fo, a.repeat)
        rows.append((name, tr, to))
        extra = "" if unit is None else "   (%.0f vs %.0f %s/s)" % (unit / tr, unit / to, "patches")
        print("%-24s medh5 %8.4f s   purehdf %8.4f s   x%.2f%s" % (name, tr, to, tr / to, extra),
              flush=True)

    # milliseconds each: many more runs than the others, best of them
    many = max(a.repeat, 20)
    tr = best(first_patch(ref, RefSampler, path), many)
    to = best(first_patch(ours, ours.PatchSampler, path), many)
    rows.append(("open -> first patch", tr, to))
    print("%-24s medh5 %8.4f s   purehdf %8.4f s   x%.2f   (best of %d)"
          % ("open -> first patch", tr, to, tr / to, many), flush=True)
    cell("patches, 2 workers", patches("ref", path, a.patches), patches("ours", path, a.patches),
         unit=a.patches)
    cell("verify", verify(ref, path), verify(ours, path))
    print("all cells: purehdf / medh5 speed-up min x%.2f" % min(r / o for _, r, o in rows))


if __name__ == "__main__":
    main()
