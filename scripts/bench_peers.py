#!/usr/bin/env python3
"""Side-by-side bench of purehdf against hdf5-pure, rust-hdf5, hdf5-reader and
h5py (issue 19).

    .oracle-venv/bin/python scripts/bench_peers.py [--dir DIR] [--reps N] [--threads 1,2]

Writes the inputs with h5py (+ hdf5plugin for LZ4/Zstd): a 256^3 int16
volume, contiguous and in 64^3 chunks (shuffle+deflate 4, gzip 4 only, LZ4,
Zstd), 200 random 64^3 patch origins, and 2,000 small datasets in nested
groups; records h5py's checksums of each; times h5py on the same cells; builds
and runs `benches/peers` with 1 and with 2 threads (RAYON_NUM_THREADS and
MEDH5_THREADS); prints every JSON line and a markdown table of median CPU
seconds with the ratio peer/purehdf (> 1: we are faster).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SHAPE = (256, 256, 256)
CHUNK = (64, 64, 64)
PATCH = 64
NPATCH = 200
LEVEL = 4


def checksum(v) -> int:
    v = np.ascontiguousarray(v).reshape(-1).astype(np.int64)
    w = (np.arange(v.size, dtype=np.int64) % 1021) + 1
    return int(np.sum(v * w))


def phantom(seed=20261202):
    """A CT-like int16 volume: air, an ellipsoidal body with smooth texture and noise, a bone shell."""
    rng = np.random.default_rng(seed)
    z, y, x = np.meshgrid(*[np.linspace(-1, 1, n, dtype=np.float32) for n in SHAPE], indexing="ij")
    r2 = (x / 0.85) ** 2 + (y / 0.7) ** 2 + (z / 0.95) ** 2
    img = np.full(SHAPE, -1000.0, dtype=np.float32)
    body = r2 < 1.0
    tex = 40.0 + 25.0 * np.sin(6 * x) * np.cos(5 * y) + 15.0 * np.sin(4 * z)
    img[body] = tex[body]
    img[(r2 < 0.3) & (r2 > 0.25)] = 900.0
    img += np.where(body, 12.0, 4.0).astype(np.float32) * rng.standard_normal(SHAPE, dtype=np.float32)
    return np.rint(np.clip(img, -1024, 3071)).astype(np.int16)


def generate(d: Path):
    import h5py
    import hdf5plugin

    d.mkdir(parents=True, exist_ok=True)
    man = d / "manifest.json"
    if man.exists():
        return json.loads(man.read_text())
    vol = phantom()
    with h5py.File(d / "contiguous.h5", "w") as f:
        f.create_dataset("data", data=vol)
    kinds = {
        "shuffle_deflate.h5": dict(compression="gzip", compression_opts=LEVEL, shuffle=True),
        "gzip.h5": dict(compression="gzip", compression_opts=LEVEL),
        "lz4.h5": dict(**hdf5plugin.LZ4()),
        "zstd.h5": dict(**hdf5plugin.Zstd(clevel=3)),
    }
    for name, kw in kinds.items():
        with h5py.File(d / name, "w") as f:
            f.create_dataset("data", data=vol, chunks=CHUNK, **kw)
    rng = np.random.default_rng(7)
    patches = [[int(rng.integers(0, s - PATCH + 1)) for s in SHAPE] for _ in range(NPATCH)]
    pcs = sum(checksum(vol[z:z + PATCH, y:y + PATCH, x:x + PATCH]) for z, y, x in patches)
    count, elems = 0, 0
    with h5py.File(d / "walk.h5", "w") as f:
        for a in range(20):
            ga = f.create_group(f"g{a:02d}")
            for b in range(10):
                gb = ga.create_group(f"s{b}")
                for c in range(10):
                    n = 1 + (a + b + c) % 16
                    gb.create_dataset(f"d{c}", data=np.arange(n, dtype=np.float32))
                    count, elems = count + 1, elems + n
    m = {
        "shape": SHAPE, "chunk": CHUNK, "patch": PATCH, "level": LEVEL, "patches": patches,
        "expect": {"full": checksum(vol), "patches": pcs, "walk": count * 1_000_000 + elems},
    }
    man.write_text(json.dumps(m))
    return m


def timed(reps, f):
    walls, cpus, v = [], [], None
    for _ in range(reps):
        w0, c0 = time.perf_counter(), time.process_time()
        v = f()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return walls, cpus, v


def h5py_cells(d: Path, m, reps):
    import h5py
    import hdf5plugin  # noqa: F401  (registers the LZ4/Zstd filters)

    out = []

    def emit(cell, reps_, f, expect):
        walls, cpus, v = timed(reps_, f)
        line = {"lib": "h5py", "cell": cell, "threads": 1, "best_wall": min(walls),
                "median_wall": float(np.median(walls)), "best_cpu": min(cpus),
                "median_cpu": float(np.median(cpus)), "reps": reps_, "checksum": v,
                "expected": expect, "ok": v == expect}
        print(json.dumps(line), flush=True)
        out.append(line)

    full = m["expect"]["full"]
    for cell in ["contiguous", "shuffle_deflate", "gzip", "lz4", "zstd"]:
        def rd(cell=cell):
            with h5py.File(d / f"{cell}.h5", "r") as f:
                return checksum(f["data"][()])
        emit(f"read_{cell}", reps, rd, full)
    pr = max(2, (reps + 1) // 2)
    for cache in [True, False]:
        def pt(cache=cache):
            kw = dict(rdcc_nbytes=64 << 20, rdcc_nslots=10007) if cache else dict(rdcc_nbytes=0)
            s = 0
            with h5py.File(d / "shuffle_deflate.h5", "r", **kw) as f:
                ds = f["data"]
                for z, y, x in m["patches"]:
                    s += checksum(ds[z:z + PATCH, y:y + PATCH, x:x + PATCH])
            return s
        emit("patches_cache_on" if cache else "patches_cache_off", pr, pt, m["expect"]["patches"])

    def walk():
        acc = [0, 0]

        def visit(_name, obj):
            if isinstance(obj, h5py.Dataset):
                acc[0] += 1
                acc[1] += int(np.prod(obj.shape))
        with h5py.File(d / "walk.h5", "r") as f:
            f.visititems(visit)
        return acc[0] * 1_000_000 + acc[1]
    emit("walk", reps, walk, m["expect"]["walk"])
    with h5py.File(d / "contiguous.h5", "r") as f:
        vol = f["data"][()]
    for shuffle in [True, False]:
        p = d / "out_h5py.h5"

        def wr(shuffle=shuffle):
            with h5py.File(p, "w") as f:
                f.create_dataset("data", data=vol, chunks=CHUNK, compression="gzip",
                                 compression_opts=LEVEL, shuffle=shuffle)
            return 0
        walls, cpus, _ = timed(pr, wr)
        with h5py.File(p, "r") as f:
            v = checksum(f["data"][()])
        line = {"lib": "h5py", "cell": "write_shuffle_deflate" if shuffle else "write_gzip",
                "threads": 1, "best_wall": min(walls), "median_wall": float(np.median(walls)),
                "best_cpu": min(cpus), "median_cpu": float(np.median(cpus)), "reps": pr,
                "checksum": v, "expected": full, "ok": v == full}
        print(json.dumps(line), flush=True)
        out.append(line)
    return out


def table(lines, metric="median_cpu"):
    libs = ["purehdf", "rust-hdf5", "hdf5-reader", "hdf5-pure", "h5py"]
    cells = []
    for ln in lines:
        if ln["cell"] not in cells:
            cells.append(ln["cell"])
    threads = sorted({ln["threads"] for ln in lines if ln["lib"] != "h5py"})
    by = {(ln["lib"], ln["cell"], ln["threads"]): ln for ln in lines}
    rows = [f"| cell | thr | {' | '.join(libs)} |", "|" + "---|" * (len(libs) + 2)]
    for c in cells:
        for t in threads:
            ours = by.get(("purehdf", c, t), {}).get(metric)
            row = [c, str(t)]
            for lib in libs:
                ln = by.get((lib, c, 1 if lib == "h5py" else t))
                if ln is None:
                    row.append("–")
                elif "na" in ln:
                    row.append(f"n/a ({ln['na']})")
                elif "error" in ln:
                    row.append("error: " + ln["error"][:60])
                else:
                    v = ln[metric]
                    bad = "" if ln.get("ok") else " **WRONG**"
                    if lib == "purehdf" or not ours:
                        row.append(f"{v:.3f}{bad}")
                    else:
                        row.append(f"{v:.3f} ({v / ours:.2f}×){bad}")
            rows.append("| " + " | ".join(row) + " |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=str(ROOT / "target" / "bench-peers"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--libs", default="purehdf,rust-hdf5,hdf5-reader,hdf5-pure")
    ap.add_argument("--cells", default=None)
    ap.add_argument("--no-h5py", action="store_true")
    ap.add_argument("--table", help="only print the table of a saved JSON-lines file")
    a = ap.parse_args()
    if a.table:
        lines = [json.loads(s) for s in Path(a.table).read_text().splitlines() if s.startswith("{")]
        print(table(lines, "median_cpu"))
        print()
        print(table(lines, "median_wall"))
        return
    d = Path(a.dir)
    m = generate(d)
    proj = ROOT / "benches" / "peers"
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=proj, check=True)
    exe = proj / "target" / "release" / "purehdf-peers-bench"
    lines = []
    for t in a.threads.split(","):
        env = dict(os.environ, RAYON_NUM_THREADS=t, MEDH5_THREADS=t)
        cmd = [str(exe), str(d), t, str(a.reps), a.libs] + ([a.cells] if a.cells else [])
        r = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True)
        for s in r.stdout.splitlines():
            print(s, flush=True)
            if s.startswith("{"):
                lines.append(json.loads(s))
    if not a.no_h5py:
        lines += h5py_cells(d, m, a.reps)
    (d / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    print("\nmedian process CPU seconds (ratio peer/purehdf, > 1 = purehdf faster):\n")
    print(table(lines, "median_cpu"))
    print("\nmedian wall seconds:\n")
    print(table(lines, "median_wall"))


if __name__ == "__main__":
    sys.exit(main())
