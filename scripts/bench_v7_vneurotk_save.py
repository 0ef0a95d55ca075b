#!/usr/bin/env python3
"""V7 (docs/neighbours.md): save and lazy-read a VneuroTK-sized `neuro` array,
h5py (what VneuroTK calls) side by side with purehdf's `h5` command.

The workload is the row's anchor: 200000 x 128 float32 (100 MB, standard
normal), chunks (1563, 128) -- the "halve the largest axis to 1 MiB" policy --
with gzip 4 + shuffle, and again without compression (still chunked).

  h5py save   = create_dataset + close + reopen and read the header (VneuroTK's
                save validates by reopening)
  ours save   = `h5 import X.npy OUT neuro --chunks 1563,128 --filter shuffle+deflate:4`
                (its time includes reading the .npy from the page cache)
  lazy read   = h5py `f["neuro"][()]`  vs  `h5 cat OUT neuro --out X.npy`

Every output of ours is checked equal in h5py before its time is reported.
Usage: bench_v7_vneurotk_save.py [--h5 target/release/h5] [--rows 200000] [--repeat 3]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np


def best(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--h5", default="target/release/h5")
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    data = rng.standard_normal((a.rows, 128)).astype(np.float32)
    mb = data.nbytes / 1e6
    chunks = (1563, 128)
    with tempfile.TemporaryDirectory() as d:
        npy = os.path.join(d, "neuro.npy")
        np.save(npy, data)
        rows = []
        for label, comp in [("gzip4+shuffle", True), ("none", False)]:
            hp = os.path.join(d, f"h5py_{label}.h5")
            op = os.path.join(d, f"ours_{label}.h5")

            def h5py_save():
                kw = dict(compression="gzip", compression_opts=4, shuffle=True) if comp else {}
                with h5py.File(hp, "w") as f:
                    f.create_dataset("neuro", data=data, chunks=chunks, **kw)
                with h5py.File(hp, "r") as f:
                    f["neuro"].shape

            def ours_save():
                cmd = [a.h5, "import", npy, op, "neuro", "--chunks", "1563,128"]
                cmd += ["--filter", "shuffle+deflate:4" if comp else "none"]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)

            th = best(h5py_save, a.repeat)
            to = best(ours_save, a.repeat)
            with h5py.File(op, "r") as f:
                assert f["neuro"].chunks == (1563, 128), f["neuro"].chunks
                assert np.array_equal(f["neuro"][()], data), "h5py reads different values"
                size_o = os.path.getsize(op)
            size_h = os.path.getsize(hp)

            def h5py_read():
                with h5py.File(hp, "r") as f:
                    f["neuro"][()]

            out = os.path.join(d, "back.npy")

            def ours_read():
                subprocess.run([a.h5, "cat", op, "neuro", "--out", out], check=True,
                               stdout=subprocess.DEVNULL)

            rh = best(h5py_read, a.repeat)
            ro = best(ours_read, a.repeat)
            assert np.array_equal(np.load(out), data)
            rows.append((label, mb / th, mb / to, size_h / 1e6, size_o / 1e6, mb / rh, mb / ro))
    print(f"V7 save/read of {a.rows}x128 float32 ({mb:.1f} MB), chunks (1563,128), best of {a.repeat}")
    print("| pipeline | h5py save MB/s | ours save MB/s | h5py file MB | ours file MB | h5py read MB/s | ours read MB/s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print("| %s | %.0f | %.0f | %.1f | %.1f | %.0f | %.0f |" % r)


if __name__ == "__main__":
    sys.exit(main())
