"""Write benchmark: the 192x256x256 int16 CT phantom of shared/bench/workload.py
written as one chunked dataset with Blosc2 (lz4:1 shuffle, zstd:3 shuffle), chunks
as medh5 chooses them, by ours (`h5 import`) and by h5py + hdf5plugin (libhdf5 +
C-Blosc2). Not a test: prints medians of several repeats and the ratios.

    .oracle-venv/bin/python scripts/bench_write.py [--repeats 5] [--threads 1]

Ours is timed two ways: inside the process (file creation to commit, the
`write_seconds` line of `h5 import`) and as the whole process (also reading the
.npy). h5py is timed from `h5py.File(...)` to close (the array already in memory).
--threads sets our encoder threads (default 1; 0 = h5 import's own default, all
cores); h5py runs hdf5plugin's Blosc2
filter with its own default (BLOSC_NTHREADS from the environment).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import hdf5plugin
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(os.environ.get("PUREHDF_BENCH_DIR", ROOT.parent / "shared" / "bench"))
if not (BENCH / "workload.py").is_file():
    sys.exit(f"bench_write: no workload.py in {BENCH} (set PUREHDF_BENCH_DIR to shared/bench)")
sys.path.insert(0, str(BENCH))
import workload  # noqa: E402

CODECS = {
    "lz4:1:shuffle": ("blosc2:lz4:1:shuffle", dict(cname="lz4", clevel=1)),
    "zstd:3:shuffle": ("blosc2:zstd:3:shuffle", dict(cname="zstd", clevel=3)),
}


def medh5_chunks(shape, itemsize):
    """The chunk medh5 (the reference) picks for a spatial grid without hints."""
    try:
        from medh5 import _core

        return tuple(_core.optimize_chunks(list(shape), ["spatial"] * len(shape), None, itemsize=itemsize))
    except Exception as e:  # pragma: no cover - the reference is in the oracle venv
        print(f"medh5 chunk rule unavailable ({e}); using 64^3", file=sys.stderr)
        return tuple(min(64, s) for s in shape)


def h5_binary() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    exe = target / "release" / "h5"
    if not exe.is_file():
        subprocess.run(["cargo", "build", "--release", "--bin", "h5"], cwd=ROOT, check=True)
    return exe


def run_ours(exe, npy, out, chunks, filt, threads):
    t = time.perf_counter()
    r = subprocess.run(
        [str(exe), "import", str(npy), str(out), "image", "--chunks", ",".join(map(str, chunks)),
         "--filter", filt] + (["--threads", str(threads)] if threads > 0 else []),
        capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    inner = float(r.stdout.split()[-1])
    return inner, wall


def run_h5py(img, out, chunks, blosc):
    t = time.perf_counter()
    with h5py.File(out, "w") as f:
        f.create_dataset("image", data=img, chunks=chunks,
                         **hdf5plugin.Blosc2(filters=hdf5plugin.Blosc2.SHUFFLE, **blosc))
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    exe = h5_binary()
    work = Path(tempfile.mkdtemp(prefix="bench_write_"))
    paths = workload.inputs(Path(os.environ.get("PUREHDF_BENCH_WORK", "/tmp/purehdf_bench_work")))
    npy = paths["image"]
    img = np.load(npy)
    chunks = medh5_chunks(img.shape, img.dtype.itemsize)
    raw_mb = img.nbytes / 1e6
    print(f"image {img.shape} {img.dtype} ({raw_mb:.1f} MB), chunks {chunks}, "
          f"{a.repeats} repeats, {a.threads or 'default (all cores)'} thread(s)")
    print(f"{'codec':16} {'ours in-proc s':>14} {'ours process s':>14} {'h5py s':>8} "
          f"{'h5py/ours':>9} {'ours MB':>8} {'h5py MB':>8}")
    for label, (filt, blosc) in CODECS.items():
        ours_in, ours_wall, theirs = [], [], []
        for i in range(a.repeats):
            o = work / f"ours_{i}.h5"
            h = work / f"h5py_{i}.h5"
            inner, wall = run_ours(exe, npy, o, chunks, filt, a.threads)
            ours_in.append(inner)
            ours_wall.append(wall)
            theirs.append(run_h5py(img, h, chunks, blosc))
        # both files decode to the phantom
        with h5py.File(work / "ours_0.h5", "r") as f:
            assert np.array_equal(f["image"][()], img), "our file does not read back"
            assert f["image"].chunks == chunks
        so, sh = os.path.getsize(work / "ours_0.h5"), os.path.getsize(work / "h5py_0.h5")
        mi, mw, mh = (statistics.median(v) for v in (ours_in, ours_wall, theirs))
        print(f"{label:16} {mi:14.3f} {mw:14.3f} {mh:8.3f} {mh / mi:9.2f} {so / 1e6:8.2f} {sh / 1e6:8.2f}")
        for f in work.iterdir():
            f.unlink()
    work.rmdir()


if __name__ == "__main__":
    main()
