#!/usr/bin/env python3
"""`h5 recompress --filter portable` against `h5repack -f SHUF -f GZIP=4` on
issue 47's volume, in one run.

    scripts/bench_portable.py [--rounds N] [--workdir DIR]

The volume: int16, 96 x 256 x 256 (12.6 MB) in 96 chunks of 1 x 256 x 256,
uncompressed, each row a random walk along x (steps -3..3 from a random
start). Each round runs, interleaved, `h5 recompress big.h5 --filter portable
--all -o ours.h5` and `h5repack -f SHUF -f GZIP=4 big.h5 theirs.h5`; the best
wall time of each over the rounds is reported with user+sys CPU, the output
sizes (the issue asks within 0.5 %) and the speed-up (the issue asks >= 2x on
two cores). Both outputs are checked to decode to the volume (h5py).

With --baseline H5B a second binary runs in the same interleaved rounds (A/B
of two builds), its best wall/CPU printed beside ours.

Environment: H5 (default target/release/h5), PY for h5py (default
.oracle-venv/bin/python; this script may itself run under any python3).
Exit status 1 when a check fails (sizes, values); the speed-up is reported,
not enforced (it depends on the machine's load).
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MAKE = r"""
import sys, numpy as np, h5py
rng = np.random.default_rng(47)
steps = rng.integers(-3, 4, size=(96, 256, 256), dtype=np.int16)
start = rng.integers(-2000, 2000, size=(96, 256, 1), dtype=np.int16)
vol = (start + np.cumsum(steps, axis=2, dtype=np.int16)).astype("<i2")
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("volume", data=vol, chunks=(1, 256, 256))
np.save(sys.argv[2], vol)
"""

CHECK = r"""
import sys, numpy as np, h5py
vol = np.load(sys.argv[1])
for p in sys.argv[2:]:
    with h5py.File(p, "r") as f:
        d = f["volume"]
        assert np.array_equal(d[()], vol), p
        print(p, d.chunks, d.compression, d.compression_opts, d.shuffle)
"""


def timed(cmd):
    """(wall seconds, user+sys CPU seconds of the child) of `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(cmd), p.stderr.decode()[-500:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workdir")
    ap.add_argument("--baseline", help="a second h5 binary run in the same rounds (A/B)")
    a = ap.parse_args()
    h5 = os.environ.get("H5", os.path.join(ROOT, "target/release/h5"))
    py = os.environ.get("PY", os.path.join(ROOT, ".oracle-venv/bin/python"))
    w = a.workdir or tempfile.mkdtemp(prefix="bench_portable.")
    os.makedirs(w, exist_ok=True)
    big, npy = os.path.join(w, "big.h5"), os.path.join(w, "vol.npy")
    if not os.path.exists(big):
        subprocess.run([py, "-c", MAKE, big, npy], check=True)
    ours, theirs = os.path.join(w, "ours.h5"), os.path.join(w, "theirs.h5")
    with open("/proc/loadavg") as fh:
        load = " ".join(fh.read().split()[:3])
    print("workdir %s; %d cores; load average %s; input %d bytes"
          % (w, os.cpu_count(), load, os.path.getsize(big)))
    runs = {"h5 recompress": [], "h5repack": []}
    if a.baseline:
        runs["baseline"] = []
    for _ in range(a.rounds):
        for name in runs:
            out = theirs if name == "h5repack" else ours
            if os.path.exists(out):
                os.remove(out)
            if name != "h5repack":
                exe = a.baseline if name == "baseline" else h5
                cmd = [exe, "recompress", big, "--filter", "portable", "--all", "-o", out]
            else:
                cmd = ["h5repack", "-f", "SHUF", "-f", "GZIP=4", big, out]
            runs[name].append(timed(cmd))
    best = {n: min(r) for n, r in runs.items()}
    if a.baseline:
        os.remove(ours)
        timed([h5, "recompress", big, "--filter", "portable", "--all", "-o", ours])
    so, st = os.path.getsize(ours), os.path.getsize(theirs)
    for n, (wall, cpu) in best.items():
        print("%-14s best wall %.3f s (CPU %.3f s) of %d; all walls %s"
              % (n, wall, cpu, a.rounds, " ".join("%.3f" % x for x, _ in runs[n])))
    diff = (so - st) / st * 100
    speed = best["h5repack"][0] / best["h5 recompress"][0]
    print("sizes: ours %d, h5repack %d (%+.3f %%); speed-up %.2fx (wall), %.2fx (CPU)"
          % (so, st, diff, speed, best["h5repack"][1] / max(best["h5 recompress"][1], 1e-9)))
    chk = subprocess.run([py, "-c", CHECK, npy, ours, theirs], capture_output=True, text=True)
    print(chk.stdout.strip())
    ok = chk.returncode == 0 and abs(diff) <= 0.5
    if chk.returncode != 0:
        print("values differ: %s" % chk.stderr[-400:])
    if abs(diff) > 0.5:
        print("sizes differ by more than 0.5 %")
    if a.baseline:
        print("baseline/ours: %.2fx wall, %.2fx CPU"
              % (best["baseline"][0] / best["h5 recompress"][0],
                 best["baseline"][1] / max(best["h5 recompress"][1], 1e-9)))
    print("speed-up >= 2x: %s" % ("yes" if speed >= 2 else "no"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
