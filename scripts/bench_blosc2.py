"""Blosc2 decode benchmark: purehdf (Rust) vs python-blosc2 (C-Blosc2), 1 thread.

Builds the 64 MiB CT-like int16 volume of shared/spec/filters.md §9 (same
recipe as shared/vectors/filters/tools/bench_blosc2.py), cuts it into 32
pieces of 2 MiB, compresses each with python-blosc2 (lz4:1 shuffle, lz4:1
bitshuffle, zstd:3 shuffle, zstd:3 bitshuffle; filter in slot 5, automatic
block size, split mode forward-compat), plus B2ND frames of 64x128x128 int16
(hdf5plugin's layout for medh5, blocks 32x32x32, lz4:1 shuffle).

Made for a shared, loaded machine: our decoder runs as a server process
(`cargo bench --bench blosc2_serve`) and every round times one C pass and
one of ours back to back (order alternating), for every configuration; a
pass decodes the whole volume into one reused buffer, single-threaded. It
reports per side the median and the minimum pass time as GB/s (10^9 B/s),
ours/C as the ratio of the minima (least disturbed passes), of the medians,
and the median of the per-round ratios, and the load average before and
after. Results also go to WORKDIR/results.json.

Usage: .oracle-venv/bin/python scripts/bench_blosc2.py [WORKDIR]
  BENCH_ROUNDS (default 15)   rounds of paired passes
  BENCH_CONFIGS               comma-separated subset of configurations
  CARGO_TARGET_DIR            where cargo builds the server
With --callgrind CONFIG [NCHUNKS]: instead count instructions (valgrind
callgrind, decode functions only) for NCHUNKS (default 4) chunks on each side.
"""
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import blosc2
import numpy as np

CHUNK = 2 * 1024 * 1024
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
CONFIGS = [
    ("lz4_1_shuffle", blosc2.Codec.LZ4, 1, blosc2.Filter.SHUFFLE),
    ("lz4_1_bitshuffle", blosc2.Codec.LZ4, 1, blosc2.Filter.BITSHUFFLE),
    ("zstd_3_shuffle", blosc2.Codec.ZSTD, 3, blosc2.Filter.SHUFFLE),
    ("zstd_3_bitshuffle", blosc2.Codec.ZSTD, 3, blosc2.Filter.BITSHUFFLE),
]
B2ND = "b2nd_lz4_1_shuffle"
ROOT = Path(__file__).resolve().parent.parent


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


def prepare(work):
    """Write the volume and every configuration's chunks; return C-side decoders."""
    work.mkdir(parents=True, exist_ok=True)
    raw = work / "volume.raw"
    if not raw.exists():
        raw.write_bytes(ct_volume().tobytes())
    data = raw.read_bytes()
    pieces = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)]
    blosc2.set_nthreads(1)
    out = bytearray(CHUNK)
    passes, ratios = {}, {}
    for name, codec, clevel, filt in CONFIGS:
        d = work / name
        d.mkdir(exist_ok=True)
        cp = {"codec": codec, "clevel": clevel, "filters": [0, 0, 0, 0, 0, filt], "filters_meta": [0] * 6,
              "typesize": 2, "nthreads": 1, "splitmode": blosc2.SplitMode.FORWARD_COMPAT_SPLIT}
        files = [d / f"chunk_{i:03d}.bin" for i in range(len(pieces))]
        if all(f.exists() for f in files):  # deterministic: reuse an earlier run's
            chunks = [f.read_bytes() for f in files]
        else:
            chunks = [blosc2.compress2(p, **cp) for p in pieces]
            for f, c in zip(files, chunks):
                f.write_bytes(c)
        ratios[name] = len(data) / sum(map(len, chunks))

        def c_pass(chunks=chunks):
            for c in chunks:
                blosc2.decompress2(c, dst=out, nthreads=1)
        passes[name] = c_pass
    d = work / B2ND
    d.mkdir(exist_ok=True)
    frames = []
    for i, p in enumerate(pieces):
        f = d / f"chunk_{i:03d}.bin"
        if f.exists():
            frames.append(f.read_bytes())
            continue
        a = np.frombuffer(p, "<i2").reshape(64, 128, 128)
        arr = blosc2.asarray(a, chunks=a.shape, blocks=(32, 32, 32),
                             cparams={"codec": blosc2.Codec.LZ4, "clevel": 1, "nthreads": 1,
                                      "filters": [0, 0, 0, 0, 0, blosc2.Filter.SHUFFLE]},
                             dparams={"nthreads": 1})
        frames.append(arr.to_cframe())
        (d / f"chunk_{i:03d}.bin").write_bytes(frames[-1])
    ratios[B2ND] = len(data) / sum(map(len, frames))

    def b2nd_pass():
        for f in frames:
            blosc2.ndarray_from_cframe(f)[...]
    passes[B2ND] = b2nd_pass
    # Sanity: the C side decodes to the volume.
    blosc2.decompress2(blosc2.compress2(pieces[0], typesize=2), dst=out)
    assert bytes(out) == pieces[0]
    return len(data), passes, ratios


def build(bench):
    env = dict(os.environ)
    env.setdefault("CARGO_TARGET_DIR", str(ROOT / "target" / "bench-blosc2"))
    r = subprocess.run(["cargo", "bench", "--bench", bench, "--no-run"], cwd=ROOT, env=env,
                       capture_output=True, text=True, check=True)
    m = re.findall(r"Executable .*\((.*)\)", r.stderr)
    return m[-1]


def gbps(nbytes, t):
    return nbytes / t / 1e9


def measure(work, names):
    nbytes, c_passes, ratios = prepare(work)
    exe = build("blosc2_serve")
    srv = subprocess.Popen([exe, str(work)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert srv.stdout.readline().strip() == "ready"

    def ours(name):
        srv.stdin.write(f"{name} 1\n")
        srv.stdin.flush()
        return json.loads(srv.stdout.readline())[0]

    load0 = os.getloadavg()
    times = {n: ([], []) for n in names}
    for name in names:  # warm-up, untimed
        c_passes[name]()
        ours(name)
    t0 = time.time()
    for r in range(ROUNDS):
        order = names[:]
        random.Random(r).shuffle(order)
        for name in order:
            c_first = (r % 2 == 0)
            for side in ((0, 1) if c_first else (1, 0)):
                if side == 0:
                    t = time.perf_counter()
                    c_passes[name]()
                    times[name][0].append(time.perf_counter() - t)
                else:
                    times[name][1].append(ours(name))
    srv.stdin.close()
    srv.wait()
    load1 = os.getloadavg()
    res = {"rounds": ROUNDS, "seconds": round(time.time() - t0, 1), "loadavg_before": load0,
           "loadavg_after": load1, "configs": {}}
    print(f"{'config':20} {'ratio':>6} {'C min':>6} {'C med':>6} {'our min':>7} {'our med':>7} "
          f"{'min/min':>7} {'med/med':>7} {'paired':>6}   (GB/s; ours/C)")
    for name in names:
        c, o = times[name]
        paired = statistics.median(ci / oi for ci, oi in zip(c, o))
        row = {"compression_ratio": ratios[name],
               "c_min_gbps": gbps(nbytes, min(c)), "c_median_gbps": gbps(nbytes, statistics.median(c)),
               "ours_min_gbps": gbps(nbytes, min(o)), "ours_median_gbps": gbps(nbytes, statistics.median(o)),
               "ratio_of_min": min(c) / min(o), "ratio_of_median": statistics.median(c) / statistics.median(o),
               "median_paired_ratio": paired, "c_seconds": c, "ours_seconds": o}
        res["configs"][name] = row
        print(f"{name:20} {row['compression_ratio']:6.2f} {row['c_min_gbps']:6.2f} {row['c_median_gbps']:6.2f} "
              f"{row['ours_min_gbps']:7.2f} {row['ours_median_gbps']:7.2f} {row['ratio_of_min']:7.2f} "
              f"{row['ratio_of_median']:7.2f} {paired:6.2f}")
    print(f"load average before {load0}, after {load1}; {ROUNDS} rounds in {res['seconds']} s")
    (work / "results.json").write_text(json.dumps(res, indent=1))


CALLGRIND_C = """
import sys, blosc2
from pathlib import Path
d = Path(sys.argv[1]); n = int(sys.argv[2]); decode = sys.argv[3] == "1"
chunks = [f.read_bytes() for f in sorted(d.iterdir())[:n]]
out = bytearray(2 * 1024 * 1024)
for c in chunks if decode else []:
    if d.name.startswith("b2nd"):
        blosc2.ndarray_from_cframe(c)[...]
    else:
        blosc2.decompress2(c, dst=out, nthreads=1)
"""


def callgrind(work, name, n):
    """Instructions (valgrind callgrind Ir) to decode n chunks of one configuration.

    Each side runs twice, with and without the decode pass, and the difference
    is reported, so interpreter start-up and file reading cancel out (the C
    library's symbols are stripped, so no per-function toggle is used)."""
    prepare(work)
    exe = build("blosc2_serve")
    cg = work.parent / (work.name + "_callgrind")
    sub = cg / name
    (sub / name).mkdir(parents=True, exist_ok=True)
    for f in sorted((work / name).iterdir())[:n]:
        (sub / name / f.name).write_bytes(f.read_bytes())
    vol = (work / "volume.raw").read_bytes()
    (sub / "volume.raw").write_bytes(vol[:n * CHUNK])
    script = cg / "c_side.py"
    script.write_text(CALLGRIND_C)

    def run(cmd, tag, stdin=""):
        out = cg / f"{name}.{tag}.out"
        env = dict(os.environ, PYTHONHASHSEED="0")  # deterministic interpreter work
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
                       input=stdin, text=True, capture_output=True, check=True, env=env)
        r = subprocess.run(["callgrind_annotate", str(out)], capture_output=True, text=True, check=True)
        m = re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", r.stdout)
        return int(m.group(1).replace(",", "")), r.stdout
    c1, c_txt = run([sys.executable, str(script), str(sub / name), str(n), "1"], "c1")
    c0, _ = run([sys.executable, str(script), str(sub / name), str(n), "0"], "c0")
    # Our server decodes every chunk once to check it; "name 1" adds one pass.
    o1, o_txt = run([exe, str(sub)], "o1", stdin=f"{name} 1\n")
    o0, _ = run([exe, str(sub)], "o0")
    c_ir, o_ir = c1 - c0, o1 - o0
    print(f"{name}: {n} chunks ({n * CHUNK} B); instructions C {c_ir:,}, ours {o_ir:,} "
          f"(ours/C {o_ir / c_ir:.2f}; per byte C {c_ir / (n * CHUNK):.2f}, ours {o_ir / (n * CHUNK):.2f})")
    print("C top:\n" + "\n".join(c_txt.splitlines()[20:40]))
    print("ours top:\n" + "\n".join(o_txt.splitlines()[20:40]))


def main():
    args = sys.argv[1:]
    if args and args[0] == "--callgrind":
        name = args[1]
        n = int(args[2]) if len(args) > 2 else 4
        work = Path(args[3] if len(args) > 3 else "/tmp/purehdf_bench_blosc2")
        return callgrind(work, name, n)
    work = Path(args[0] if args else "/tmp/purehdf_bench_blosc2")
    names = [c[0] for c in CONFIGS] + [B2ND]
    if os.environ.get("BENCH_CONFIGS"):
        names = os.environ["BENCH_CONFIGS"].split(",")
    measure(work, names)


if __name__ == "__main__":
    main()
