"""Strided reads against the full read (issue 47 item 5): purehdf vs h5py.

Writes a 256^3 float32 dataset with h5py (gzip 4, shuffle off, chunks
64^3 unless BENCH_CHUNKS says otherwise) and times, in one run, the full
read and strided reads (step 2, 4, 8 on every axis and on the last axis
alone) on both sides, with one thread and with every thread. Our side is
timed inside one process (`cargo run --release --example strided_read`),
so process start and file open are not counted; h5py is timed in this
process. A WORKDIR given again reuses the file written there. Each cell is the minimum over BENCH_ROUNDS rounds (default 5;
every round reads every selection once, so load spreads over all cells);
the checksum of what both sides read is compared.

Done when (issue 47): every strided read takes no longer than the full
read. The script prints the table and exits 1 if a strided read of ours is
slower than our full read by more than the noise allowance BENCH_SLACK
(default 1.10) with either thread count.

Usage: .oracle-venv/bin/python scripts/bench_strided.py [WORKDIR]
  BENCH_ROUNDS   rounds (default 5)
  BENCH_CHUNKS   chunk edge (default 64)
  BENCH_BIN      a prebuilt strided_read example instead of cargo
  CARGO_TARGET_DIR  where cargo builds the example
"""
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

N = 256
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
CHUNK = int(os.environ.get("BENCH_CHUNKS", "64"))
SLACK = float(os.environ.get("BENCH_SLACK", "1.10"))
ROOT = Path(__file__).resolve().parent.parent

SPECS = ["all"]
for k in (2, 4, 8):
    SPECS.append(f"::{k},::{k},::{k}")
for k in (2, 4, 8):
    SPECS.append(f",,::{k}")


def np_slice(spec):
    if spec == "all":
        return ()
    out = []
    for part in spec.split(","):
        p = part.split(":") if part else ["", ""]
        vals = [int(x) if x else None for x in p] + [None] * (3 - len(p))
        out.append(slice(*vals[:3]))
    return tuple(out)


def checksum(a):
    return int(np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8).sum(dtype=np.uint64))


def write(path):
    if path.exists():
        try:
            with h5py.File(path, "r") as f:
                d = f["v"]
                if d.shape == (N,) * 3 and d.chunks == (CHUNK,) * 3:
                    return  # written by an earlier run in the same WORKDIR
        except (OSError, KeyError):
            pass
    z, y, x = np.meshgrid(*(np.arange(N, dtype=np.float32),) * 3, indexing="ij")
    data = (np.sin(z / 9) * 300 + np.cos(y / 7) * 200 + x).astype(np.float32)
    rng = np.random.default_rng(5)
    data += rng.normal(0, 2, data.shape).astype(np.float32).round(1)
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=data, chunks=(CHUNK,) * 3, compression="gzip",
                         compression_opts=4)


def ours_bin():
    if os.environ.get("BENCH_BIN"):
        return os.environ["BENCH_BIN"]
    subprocess.run(["cargo", "build", "--release", "--example", "strided_read"],
                   cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return str(target / "release" / "examples" / "strided_read")


def time_ours(binary, path, threads):
    env = dict(os.environ, MEDH5_THREADS=str(threads))
    out = subprocess.run([binary, str(path), "v", str(ROUNDS), *SPECS], env=env,
                         check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        spec, mn, _med, _n, csum = line.split()
        res[spec] = (float(mn), int(csum))
    return res


def time_h5py(path):
    res = {s: [] for s in SPECS}
    sums = {}
    with h5py.File(path, "r") as f:
        d = f["v"]
        for _ in range(ROUNDS):
            for s in SPECS:
                t = time.perf_counter()
                a = d[np_slice(s)]
                res[s].append((time.perf_counter() - t) * 1e3)
                sums[s] = checksum(a)
    return {s: (min(v), sums[s]) for s, v in res.items()}


def main():
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    work.mkdir(parents=True, exist_ok=True)
    path = work / "strided.h5"
    write(path)
    binary = ours_bin()
    load0 = os.getloadavg()
    cores = os.cpu_count() or 1
    ours = {t: time_ours(binary, path, t) for t in sorted({1, cores})}
    theirs = time_h5py(path)
    load1 = os.getloadavg()
    print(f"256^3 float32, gzip 4, chunks {CHUNK}^3, min of {ROUNDS} rounds (ms); "
          f"load {load0[0]:.2f} -> {load1[0]:.2f}")
    head = "".join(f"{'ours ' + str(t) + 't':>10}" for t in ours)
    print(f"{'selection':<16}{head}{'h5py':>10}   ours/full")
    failed = False
    for s in SPECS:
        row = "".join(f"{ours[t][s][0]:10.1f}" for t in ours)
        ratio = " ".join(f"{ours[t][s][0] / ours[t]['all'][0]:.2f}" for t in ours)
        print(f"{s:<16}{row}{theirs[s][0]:10.1f}   {ratio}")
        for t in ours:
            if ours[t][s][1] != theirs[s][1]:
                print(f"  checksum differs for {s} ({t} threads)")
                failed = True
            if s != "all" and ours[t][s][0] > ours[t]["all"][0] * SLACK:
                failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
