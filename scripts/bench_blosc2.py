"""Blosc2 decode and encode benchmark: purehdf (Rust) vs python-blosc2 (C-Blosc2), 1 thread.

Builds the 64 MiB CT-like int16 volume of docs/filters-format.md §9 (same
recipe as shared/vectors/filters/tools/bench_blosc2.py), cuts it into 32
pieces of 2 MiB, compresses each with python-blosc2 (lz4:1 shuffle, lz4:1
bitshuffle, zstd:3 shuffle, zstd:3 bitshuffle, zstd:9 bitshuffle; filter in
slot 5, automatic block size, split mode forward-compat), plus B2ND frames of
64x128x128 int16 (hdf5plugin's layout for medh5, blocks 32x32x32, lz4:1
shuffle). The medh5 profiles' Zstd cells (`ph_*`) use the bench phantom of
../shared/bench/workload.py (image int16 and label uint8, 192x256x256) cut
into the 64x128x128 chunks medh5 writes, each chunk's bytes laid out block by
block as B2ND stores them (blocks as the medh5 writer picks them) and
compressed as bare Blosc2 chunks of that block size: balanced = Blosc2 zstd
clevel 3 (libzstd level 5), shuffle for the image, bitshuffle for the label;
archive = clevel 9 (libzstd level 22), bitshuffle.

Encode cells (`enc:CONFIG`, every zstd configuration): C-Blosc2
`compress2` of a few of the configuration's pieces (evenly spaced,
BENCH_ENC_CHUNKS, default 4, 2 at clevel 9) against our chunk encoder on the
same pieces with the same codec, clevel, filters, typesize and block size;
the table adds our compressed size over C's.

Made for a shared, loaded machine: our side runs as a server process
(`cargo bench --bench blosc2_serve`) and every round times one C pass and
one of ours back to back (order alternating), for every configuration; a
decode pass decodes the whole volume into one reused buffer, single-threaded.
Each pass is timed in wall time and in CPU time of the working thread (C:
`time.thread_time`, ours: `CLOCK_THREAD_CPUTIME_ID`, the same clock). It reports per side
the minimum pass time as GB/s (10^9 B/s, wall), ours/C as the ratio of the
minima (wall and CPU) and the median of the per-round CPU-time ratios, and
the load average before and after. Results also go to WORKDIR/results.json.

Usage: .oracle-venv/bin/python scripts/bench_blosc2.py [WORKDIR]
  BENCH_ROUNDS (default 15)   rounds of paired passes
  BENCH_CONFIGS               comma-separated subset of configurations
                              (enc:NAME for an encode cell)
  BENCH_ENC_CHUNKS            pieces per encode pass
  CARGO_TARGET_DIR            where cargo builds the server
  BENCH_SERVER                a prebuilt blosc2_serve binary instead
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
    ("zstd_9_bitshuffle", blosc2.Codec.ZSTD, 9, blosc2.Filter.BITSHUFFLE),
]
# medh5 profile cells on the bench phantom: (name, array, clevel, filter).
PHANTOM = [
    ("ph_img_zstd_3_shuffle", "image", 3, blosc2.Filter.SHUFFLE),
    ("ph_lab_zstd_3_bitshuffle", "label", 3, blosc2.Filter.BITSHUFFLE),
    ("ph_img_zstd_9_bitshuffle", "image", 9, blosc2.Filter.BITSHUFFLE),
    ("ph_lab_zstd_9_bitshuffle", "label", 9, blosc2.Filter.BITSHUFFLE),
]
PH_CHUNK = (64, 128, 128)
CPARAMS = {}  # configuration -> cparams of its C chunks (filled by prepare)
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


def stune_blocksize(nbytes, ts, clevel):
    """C-Blosc2's automatic block size for zstd with byte shuffle (what the
    HDF5 filter and medh5 use as the B2ND block target; spec §3.8.2)."""
    bs = nbytes
    if nbytes >= 32768:
        base = 65536  # HCR codec
        bs = {0: base // 4, 1: base // 2, 2: base, 3: base * 2, 4: base * 4, 5: base * 4}.get(
            clevel, base * 8 if clevel <= 8 else base * 16)
    if 1 <= clevel <= 5 and ts <= 16 and nbytes // ts >= 32:  # split rule (zstd, shuffle)
        per = 32 << 10 if clevel <= 3 else 64 << 10
        bs = min(max(per * ts, 32 << 10), 4 << 20)
    bs = min(bs, nbytes)
    return bs - bs % ts if bs > ts else bs


def block_shape(chunk, ts, target):
    """The B2ND block shape the HDF5 filter picks (src/filters/blosc2/b2nd.rs)."""
    n = target // ts
    block = [1 if c == 1 else 2 for c in chunk]
    cur = int(np.prod(block))
    while cur < n:
        changed = False
        for i in reversed(range(len(chunk))):
            if 2 * block[i] <= chunk[i]:
                if 2 * cur <= n:
                    block[i] *= 2
                    cur *= 2
                    changed = True
            elif block[i] < chunk[i] and cur // block[i] * chunk[i] <= n:
                cur = cur // block[i] * chunk[i]
                block[i] = chunk[i]
                changed = True
        if not changed:
            break
    return block


def phantom_pieces(arr, clevel):
    """The 64x128x128 chunks of arr, each laid out block by block; block bytes."""
    ts = arr.dtype.itemsize
    cz, cy, cx = PH_CHUNK
    bz, by, bx = block_shape(PH_CHUNK, ts, stune_blocksize(cz * cy * cx * ts, ts, clevel))
    out = []
    for z in range(0, arr.shape[0], cz):
        for y in range(0, arr.shape[1], cy):
            for x in range(0, arr.shape[2], cx):
                c = arr[z:z + cz, y:y + cy, x:x + cx]
                c = c.reshape(cz // bz, bz, cy // by, by, cx // bx, bx).transpose(0, 2, 4, 1, 3, 5)
                out.append(np.ascontiguousarray(c).tobytes())
    return out, bz * by * bx * ts


def phantom_arrays(work):
    cache = work / "phantom.npz"
    if not cache.exists():
        sys.path.insert(0, str(ROOT.parent / "shared" / "bench"))
        import workload
        img, lab = workload.phantom()
        np.savez(cache, image=img, label=lab)
    z = np.load(cache)
    return {"image": z["image"], "label": z["label"]}


def prepare(work):
    """Write the volumes and every configuration's chunks; return C-side
    decode passes, encode jobs and compression ratios."""
    work.mkdir(parents=True, exist_ok=True)
    raw = work / "volume.raw"
    if not raw.exists():
        raw.write_bytes(ct_volume().tobytes())
    data = raw.read_bytes()
    pieces = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)]
    blosc2.set_nthreads(1)
    out = bytearray(CHUNK)
    passes, ratios, enc_jobs, nbytes = {}, {}, {}, {}
    jobs = [(name, pieces, codec, clevel, filt, 2, 0, None) for name, codec, clevel, filt in CONFIGS]
    ph = None
    for name, which, clevel, filt in PHANTOM:
        if ph is None:
            ph = phantom_arrays(work)
        arr = ph[which]
        ph_pieces, bs = phantom_pieces(arr, clevel)
        jobs.append((name, ph_pieces, blosc2.Codec.ZSTD, clevel, filt, arr.dtype.itemsize, bs, b"".join(ph_pieces)))
    for name, pcs, codec, clevel, filt, ts, bs, vol in jobs:
        d = work / name
        d.mkdir(exist_ok=True)
        if vol is not None and not (d / "volume.raw").exists():
            (d / "volume.raw").write_bytes(vol)
        cp = {"codec": codec, "clevel": clevel, "filters": [0, 0, 0, 0, 0, filt], "filters_meta": [0] * 6,
              "typesize": ts, "nthreads": 1, "splitmode": blosc2.SplitMode.FORWARD_COMPAT_SPLIT,
              "blocksize": bs}
        CPARAMS[name] = cp
        files = [d / f"chunk_{i:03d}.bin" for i in range(len(pcs))]
        if all(f.exists() for f in files):  # deterministic: reuse an earlier run's
            chunks = [f.read_bytes() for f in files]
        else:
            chunks = [blosc2.compress2(p, **cp) for p in pcs]
            for f, c in zip(files, chunks):
                f.write_bytes(c)
        total = sum(map(len, pcs))
        nbytes[name] = total
        ratios[name] = total / sum(map(len, chunks))

        def c_pass(chunks=chunks):
            for c in chunks:
                blosc2.decompress2(c, dst=out, nthreads=1)
        passes[name] = c_pass
        if codec == blosc2.Codec.ZSTD:
            k = int(os.environ.get("BENCH_ENC_CHUNKS", "2" if clevel == 9 else "4"))
            k = max(1, min(k, len(pcs)))
            idx = sorted({(2 * j + 1) * len(pcs) // (2 * k) for j in range(k)})
            sel = [pcs[i] for i in idx]

            def c_enc(sel=sel, cp=cp):
                return sum(len(blosc2.compress2(p, **cp)) for p in sel)
            enc = "enc:" + name
            passes[enc] = c_enc
            enc_jobs[enc] = (name, ",".join(map(str, idx)))
            nbytes[enc] = sum(map(len, sel))
            ratios[enc] = nbytes[enc] / c_enc()
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
    nbytes[B2ND] = len(data)

    def b2nd_pass():
        for f in frames:
            blosc2.ndarray_from_cframe(f)[...]
    passes[B2ND] = b2nd_pass
    # Sanity: the C side decodes to the volume.
    blosc2.decompress2(blosc2.compress2(pieces[0], typesize=2), dst=out)
    assert bytes(out) == pieces[0]
    return nbytes, passes, ratios, enc_jobs


def build(bench):
    if os.environ.get("BENCH_SERVER"):  # a prebuilt server binary
        return os.environ["BENCH_SERVER"]
    env = dict(os.environ)
    env.setdefault("CARGO_TARGET_DIR", str(ROOT / "target" / "bench-blosc2"))
    r = subprocess.run(["cargo", "bench", "--bench", bench, "--no-run"], cwd=ROOT, env=env,
                       capture_output=True, text=True, check=True)
    m = re.findall(r"Executable .*\((.*)\)", r.stderr)
    return m[-1]


def ratio(a, b):
    """a / b for CPU times, which can read 0 (see `gbps`)."""
    return a / b if b > 0 else float("inf")


def gbps(nbytes, t):
    # A CPU time can read 0 where the clock is coarse (not on Linux, where
    # both sides read CLOCK_THREAD_CPUTIME_ID).
    return nbytes / t / 1e9 if t > 0 else float("inf")


def measure(work, names):
    nbytes, c_passes, ratios, enc_jobs = prepare(work)
    exe = build("blosc2_serve")
    # One thread for our side too: without this the chunk encoder compresses
    # the blocks of a slow (level-22) chunk on pool workers, whose CPU the
    # server's per-thread clock does not see.
    senv = dict(os.environ, MEDH5_THREADS="1", RAYON_NUM_THREADS="1")
    srv = subprocess.Popen([exe, str(work)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                           env=senv)
    assert srv.stdout.readline().strip() == "ready"
    our_bytes = {}
    # Passes of at least ~64 MiB decoded / 16 MiB encoded, long against timer
    # noise; clevel 9 encode passes are long anyway.
    reps = {n: 1 if "_9_" in n and n in enc_jobs else
            max(1, -(-(16 if n in enc_jobs else 64) * 2**20 // nbytes[n])) for n in names}

    def ours(name):
        if name in enc_jobs:
            cfg, idx = enc_jobs[name]
            srv.stdin.write(f"enc {cfg} 1 {reps[name]} {idx}\n")
        else:
            srv.stdin.write(f"{name} 1 {reps[name]}\n")
        srv.stdin.flush()
        r = json.loads(srv.stdout.readline())
        our_bytes[name] = r["bytes"]
        return r["wall"][0], r["cpu"][0]

    def c_side(name):
        t, c = time.perf_counter(), time.thread_time()
        for _ in range(reps[name]):
            c_passes[name]()
        return time.perf_counter() - t, time.thread_time() - c

    load0 = os.getloadavg()
    times = {n: ([], []) for n in names}
    for name in names:  # warm-up, untimed
        c_side(name)
        ours(name)
    t0 = time.time()
    for r in range(ROUNDS):
        order = names[:]
        random.Random(r).shuffle(order)
        for name in order:
            c_first = (r % 2 == 0)
            for side in ((0, 1) if c_first else (1, 0)):
                times[name][side].append(c_side(name) if side == 0 else ours(name))
    srv.stdin.close()
    srv.wait()
    load1 = os.getloadavg()
    res = {"rounds": ROUNDS, "seconds": round(time.time() - t0, 1), "loadavg_before": load0,
           "loadavg_after": load1, "configs": {}}
    print(f"{'config':30} {'ratio':>6} {'size':>6} {'C GB/s':>7} {'our GB/s':>8} "
          f"{'wall':>6} {'cpu':>6} {'paired':>6}   (min passes; ours/C; size = our bytes / C bytes)")
    for name in names:
        c, o = times[name]
        cw, cc = [t[0] for t in c], [t[1] for t in c]
        ow, oc = [t[0] for t in o], [t[1] for t in o]
        n = nbytes[name] * reps[name]
        size = our_bytes[name] / (nbytes[name] / ratios[name]) if name in enc_jobs else None
        row = {"compression_ratio": ratios[name], "our_size_over_c": size,
               "c_min_gbps": gbps(n, min(cw)), "ours_min_gbps": gbps(n, min(ow)),
               "c_cpu_min_gbps": gbps(n, min(cc)), "ours_cpu_min_gbps": gbps(n, min(oc)),
               "ratio_of_min_wall": min(cw) / min(ow), "ratio_of_min_cpu": ratio(min(cc), min(oc)),
               "median_paired_cpu_ratio": statistics.median(ratio(a, b) for a, b in zip(cc, oc)),
               "c_wall": cw, "c_cpu": cc, "ours_wall": ow, "ours_cpu": oc, "bytes_per_pass": n}
        res["configs"][name] = row
        sz = f"{size:6.3f}" if size is not None else f"{'':6}"
        print(f"{name:30} {row['compression_ratio']:6.2f} {sz} {row['c_min_gbps']:7.3f} "
              f"{row['ours_min_gbps']:8.3f} {row['ratio_of_min_wall']:6.2f} {row['ratio_of_min_cpu']:6.2f} "
              f"{row['median_paired_cpu_ratio']:6.2f}")
    print(f"load average before {load0}, after {load1}; {ROUNDS} rounds in {res['seconds']} s")
    (work / "results.json").write_text(json.dumps(res, indent=1))


CALLGRIND_C = """
import json, sys, blosc2
from pathlib import Path
d = Path(sys.argv[1]); n = int(sys.argv[2]); run = sys.argv[3] == "1"
chunks = [f.read_bytes() for f in sorted(d.glob("chunk_*"))[:n]]
out = bytearray(2 * 1024 * 1024)
if len(sys.argv) > 4:  # encode: the pieces of volume.raw with these cparams
    cp = json.loads(sys.argv[4])
    cp["codec"] = blosc2.Codec(cp["codec"])
    cp["filters"] = [blosc2.Filter(f) for f in cp["filters"]]
    cp["splitmode"] = blosc2.SplitMode(cp["splitmode"])
    vol = (d.parent / "volume.raw").read_bytes()
    sizes = [blosc2.get_cbuffer_sizes(c)[0] for c in chunks]
    pos = 0
    for s in sizes if run else []:
        blosc2.compress2(vol[pos:pos + s], **cp)
        pos += s
else:
    for c in chunks if run else []:
        if d.name.startswith("b2nd"):
            blosc2.ndarray_from_cframe(c)[...]
        else:
            blosc2.decompress2(c, dst=out, nthreads=1)
"""


def callgrind(work, name, n):
    """Instructions (valgrind callgrind Ir) to decode (or, for enc:CONFIG,
    encode) n chunks of one configuration.

    Each side runs twice, with and without the decode pass, and the difference
    is reported, so interpreter start-up and file reading cancel out (the C
    library's symbols are stripped, so no per-function toggle is used)."""
    prepare(work)
    exe = build("blosc2_serve")
    enc = name.startswith("enc:")
    cfg = name[4:] if enc else name
    cg = work.parent / (work.name + "_callgrind")
    sub = cg / cfg
    (sub / cfg).mkdir(parents=True, exist_ok=True)
    files = sorted((work / cfg).glob("chunk_*"))[:n]
    total = 0
    for f in files:
        c = f.read_bytes()
        (sub / cfg / f.name).write_bytes(c)
        total += blosc2.get_cbuffer_sizes(c)[0] if not cfg.startswith("b2nd") else CHUNK
    own = work / cfg / "volume.raw"
    vol = (own if own.exists() else work / "volume.raw").read_bytes()
    (sub / "volume.raw").write_bytes(vol[:total])
    script = cg / "c_side.py"
    script.write_text(CALLGRIND_C)

    def run(cmd, tag, stdin=""):
        out = cg / f"{cfg}.{'enc.' if enc else ''}{tag}.out"
        # Deterministic interpreter work; our side on one thread, as in the timing mode.
        env = dict(os.environ, PYTHONHASHSEED="0", MEDH5_THREADS="1", RAYON_NUM_THREADS="1")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
                       input=stdin, text=True, capture_output=True, check=True, env=env)
        r = subprocess.run(["callgrind_annotate", str(out)], capture_output=True, text=True, check=True)
        m = re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", r.stdout)
        return int(m.group(1).replace(",", "")), r.stdout
    def plain(v):  # enums (Codec, Filter, SplitMode) and lists of them as JSON numbers
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return int(getattr(v, "value", v))
    extra = [json.dumps({k: plain(v) for k, v in CPARAMS[cfg].items()})] if enc else []
    c1, c_txt = run([sys.executable, str(script), str(sub / cfg), str(n), "1"] + extra, "c1")
    c0, _ = run([sys.executable, str(script), str(sub / cfg), str(n), "0"] + extra, "c0")
    # Our server decodes every chunk once to check it; the command adds one pass.
    cmd = f"enc {cfg} 1 1 {','.join(map(str, range(len(files))))}\n" if enc else f"{cfg} 1 1\n"
    o1, o_txt = run([exe, str(sub)], "o1", stdin=cmd)
    o0, _ = run([exe, str(sub)], "o0")
    c_ir, o_ir = c1 - c0, o1 - o0
    print(f"{name}: {n} chunks ({total} B); instructions C {c_ir:,}, ours {o_ir:,} "
          f"(ours/C {o_ir / c_ir:.2f}; per byte C {c_ir / total:.2f}, ours {o_ir / total:.2f})")
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
    names = [c[0] for c in CONFIGS] + [B2ND] + [c[0] for c in PHANTOM]
    names += ["enc:" + n for n in names if "zstd" in n]
    if os.environ.get("BENCH_CONFIGS"):
        names = os.environ["BENCH_CONFIGS"].split(",")
    measure(work, names)


if __name__ == "__main__":
    main()
