"""Blosc2 decode benchmark: purehdf (Rust) vs python-blosc2 (C-Blosc2), 1 thread.

Builds the 64 MiB CT-like int16 volume of shared/spec/filters.md §9 (same
recipe as shared/vectors/filters/tools/bench_blosc2.py), cuts it into 32
pieces of 2 MiB, compresses each with python-blosc2 (lz4:1 shuffle, lz4:1 bitshuffle,
zstd:3 shuffle, zstd:3 bitshuffle; filter in slot 5, automatic block size, split
mode forward-compat), times blosc2.decompress2 with nthreads=1 into a
preallocated buffer (best of N), then runs `cargo bench --bench blosc2` on the
same chunks and prints both with the ratio ours / C.

Usage: /work/oracle-venv/bin/python scripts/bench_blosc2.py [WORKDIR]
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import blosc2
import numpy as np

CHUNK = 2 * 1024 * 1024
REPEAT = int(os.environ.get("BENCH_REPEAT", "7"))
CONFIGS = [
    ("lz4_1_shuffle", blosc2.Codec.LZ4, 1, blosc2.Filter.SHUFFLE),
    ("lz4_1_bitshuffle", blosc2.Codec.LZ4, 1, blosc2.Filter.BITSHUFFLE),
    ("zstd_3_shuffle", blosc2.Codec.ZSTD, 3, blosc2.Filter.SHUFFLE),
    ("zstd_3_bitshuffle", blosc2.Codec.ZSTD, 3, blosc2.Filter.BITSHUFFLE),
]


def ct_volume():
    shape = (128, 512, 512)  # 64 MiB of int16
    rng = np.random.default_rng(0)
    z, y, x = np.ogrid[:shape[0], :shape[1], :shape[2]]
    body = ((y - 256) / 200.0) ** 2 + ((x - 256) / 170.0) ** 2 < 1.0
    organ = ((y - 230) / 60.0) ** 2 + ((x - 300) / 50.0) ** 2 + ((z - 64) / 50.0) ** 2 < 1.0
    bone = ((y - 330) / 25.0) ** 2 + ((x - 256) / 25.0) ** 2 < 1.0
    vol = np.full(shape, -1000.0, np.float32)
    vol = np.where(body, 40.0, vol)
    vol = np.where(organ, 90.0, vol)
    vol = np.where(bone & body, 700.0, vol)
    low = rng.normal(0, 15, (shape[0] // 8 + 1, shape[1] // 16 + 1, shape[2] // 16 + 1)).astype(np.float32)
    tex = low.repeat(8, 0).repeat(16, 1).repeat(16, 2)[:shape[0], :shape[1], :shape[2]]
    vol += np.where(body, tex, 0)
    vol += rng.normal(0, 8, shape).astype(np.float32)
    return np.round(vol).astype("<i2")


def main():
    work = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/purehdf_bench_blosc2")
    work.mkdir(parents=True, exist_ok=True)
    raw = work / "volume.raw"
    if not raw.exists():
        raw.write_bytes(ct_volume().tobytes())
    data = raw.read_bytes()
    pieces = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)]
    blosc2.set_nthreads(1)
    c_results = {}
    for name, codec, clevel, filt in CONFIGS:
        d = work / name
        d.mkdir(exist_ok=True)
        cp = {"codec": codec, "clevel": clevel, "filters": [0, 0, 0, 0, 0, filt], "filters_meta": [0] * 6,
              "typesize": 2, "nthreads": 1, "splitmode": blosc2.SplitMode.FORWARD_COMPAT_SPLIT}
        chunks = [blosc2.compress2(p, **cp) for p in pieces]
        for i, c in enumerate(chunks):
            (d / f"chunk_{i:03d}.bin").write_bytes(c)
        out = bytearray(CHUNK)
        best = float("inf")
        for _ in range(REPEAT):
            t = time.perf_counter()
            for c in chunks:
                blosc2.decompress2(c, dst=out, nthreads=1)
            best = min(best, time.perf_counter() - t)
        c_results[name] = {"c_decode_gbps": len(data) / best / 1e9,
                           "ratio": len(data) / sum(len(c) for c in chunks)}
    # The medh5 read path: HDF5 chunks of 64x128x128 int16 as B2ND frames
    # (hdf5plugin's layout: one chunk, padded blocks of 32x32x32), timed with
    # blosc2.ndarray_from_cframe + [...] on the C side.
    name = "b2nd_lz4_1_shuffle"
    d = work / name
    d.mkdir(exist_ok=True)
    frames = []
    for i, p in enumerate(pieces):
        a = np.frombuffer(p, "<i2").reshape(64, 128, 128)
        arr = blosc2.asarray(a, chunks=a.shape, blocks=(32, 32, 32),
                             cparams={"codec": blosc2.Codec.LZ4, "clevel": 1, "nthreads": 1,
                                      "filters": [0, 0, 0, 0, 0, blosc2.Filter.SHUFFLE]},
                             dparams={"nthreads": 1})
        frames.append(arr.to_cframe())
        (d / f"chunk_{i:03d}.bin").write_bytes(frames[-1])
    best = float("inf")
    for _ in range(REPEAT):
        t = time.perf_counter()
        for f in frames:
            blosc2.ndarray_from_cframe(f)[...]
        best = min(best, time.perf_counter() - t)
    c_results[name] = {"c_decode_gbps": len(data) / best / 1e9,
                       "ratio": len(data) / sum(len(f) for f in frames)}
    env = dict(os.environ, BENCH_REPEAT=str(REPEAT))
    env.setdefault("CARGO_TARGET_DIR", "/work/targets/blosc")
    root = Path(__file__).resolve().parent.parent
    r = subprocess.run(["cargo", "bench", "--bench", "blosc2", "--", str(work)], cwd=root, env=env,
                       capture_output=True, text=True, check=True)
    ours = {}
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            j = json.loads(line)
            if "config" in j:
                ours[j["config"]] = j
            else:
                print("kernel GB/s (64 KiB, in cache):", line)
    print(f"{'config':20} {'ratio':>6} {'C GB/s':>8} {'ours GB/s':>10} {'ours/C':>7} {'our enc GB/s':>12} {'our ratio':>9}")
    for name in [c[0] for c in CONFIGS] + ["b2nd_lz4_1_shuffle"]:
        c, o = c_results[name], ours.get(name, {})
        od = o.get("decode_gbps", float("nan"))
        print(f"{name:20} {c['ratio']:6.2f} {c['c_decode_gbps']:8.2f} {od:10.2f} {od / c['c_decode_gbps']:7.2f} "
              f"{o.get('encode_gbps', float('nan')):12.3f} {o.get('ratio_ours', float('nan')):9.2f}")
    print("load average:", os.getloadavg())


if __name__ == "__main__":
    main()
