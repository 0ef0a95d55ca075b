"""Row E9 of neighbours.md: recompress a 200 MiB detector stack to Blosc2 lz4:1 shuffle,
ours (`h5 recompress`, 1 and 2 threads) beside h5py + hdf5plugin, and read it back.

Usage (oracle venv):
  .oracle-venv/bin/python scripts/esrf_throughput.py [--h5 target/release/h5] [--frames 100]
      [--repeats 3] [--dir /tmp]

The stack is the neighbours.md anchor: 100 x 1024 x 1024 uint16 Poisson (mean 1600), stored
chunked (1, 1024, 1024) without filters. Each cell is the best of --repeats runs (MB/s of
logical bytes, 1 MB = 1e6 bytes). Checks: the 1- and 2-thread outputs are byte-identical,
and h5py reads ours equal to the source. Reading: h5py + hdf5plugin of the h5py-written file,
and `h5 cat` of ours into a .npy file (which includes writing 200 MB to disk).
"""
import argparse
import hashlib
import os
import subprocess
import time

import h5py
import hdf5plugin
import numpy as np

D = "/entry_0000/measurement/data"


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def best(fn, repeats):
    t = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--h5", default="target/release/h5")
    ap.add_argument("--frames", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", default="/tmp")
    a = ap.parse_args()
    work = os.path.join(a.dir, f"esrf-e9-{os.getpid()}")
    os.makedirs(work)
    src = os.path.join(work, "stack.h5")
    data = np.random.default_rng(0).poisson(1600, size=(a.frames, 1024, 1024)).astype("u2")
    mb = data.nbytes / 1e6
    with h5py.File(src, "w") as f:
        f.create_dataset(D, data=data, chunks=(1, 1024, 1024))
    rows = []

    ref = os.path.join(work, "h5py.h5")

    def h5py_write():
        with h5py.File(ref, "w") as f:
            f.create_dataset(D, data=data, chunks=(1, 1024, 1024),
                             **hdf5plugin.Blosc2(cname="lz4", clevel=1,
                                                 filters=hdf5plugin.Blosc2.SHUFFLE))

    t = best(h5py_write, a.repeats)
    rows.append(("h5py + hdf5plugin write (from memory)", t, os.path.getsize(ref)))

    def h5py_read():
        with h5py.File(ref, "r") as f:
            f[D][()]

    rows.append(("h5py + hdf5plugin read", best(h5py_read, a.repeats), None))
    outs = {}
    for threads in ("1", "2"):
        out = os.path.join(work, f"ours{threads}.h5")

        def ours():
            if os.path.exists(out):
                os.remove(out)
            subprocess.run([a.h5, "recompress", src, "--filter", "blosc2:lz4:1:shuffle",
                            "--threads", threads, "-o", out], check=True,
                           stdout=subprocess.DEVNULL)

        t = best(ours, a.repeats)
        outs[threads] = out
        rows.append((f"h5 recompress --threads {threads} (file to file, verified)", t,
                     os.path.getsize(out)))
    same = sha(outs["1"]) == sha(outs["2"])
    with h5py.File(outs["2"], "r") as f:
        equal = bool((f[D][()] == data).all())
    npy = os.path.join(work, "x.npy")
    for threads in ("1", "2"):
        def cat():
            subprocess.run([a.h5, "cat", outs["2"], D, "--out", npy, "--threads", threads],
                           check=True)
        rows.append((f"h5 cat --threads {threads} (to .npy on disk)", best(cat, a.repeats), None))
    print(f"stack {data.shape} uint16, {mb:.0f} MB; best of {a.repeats}")
    print("| what | s | MB/s | ratio |")
    print("| --- | --- | --- | --- |")
    for name, t, size in rows:
        ratio = f"{data.nbytes / size:.2f}x" if size else ""
        print(f"| {name} | {t:.2f} | {mb / t:.0f} | {ratio} |")
    print(f"1- and 2-thread outputs byte-identical: {same}; h5py reads ours equal: {equal}")
    for p in os.listdir(work):
        os.remove(os.path.join(work, p))
    os.rmdir(work)


if __name__ == "__main__":
    main()
