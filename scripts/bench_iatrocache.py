"""The IatroCache anchor workloads (docs/neighbours.md section 004) run on
iatro-base-iac itself, printing one JSON object per line, {"workload", "iatro"},
with the same names examples/iatro_bench.rs prints. Used by
scripts/bench_iatrocache.sh; needs iatro-base-iac 0.1.4 (scripts/oracle-venv.sh).

usage: python bench_iatrocache.py DIR [N]
"""
import json
import os
import sys
import time

import numpy as np
import pyarrow as pa
from iatro.iac import PackReader, build_pack, clear_caches
from iatro.iac.codecs import Codec
from iatro.iac.packs import FixedRecordPack, VariableRecordPack

BATCH = 256


def emit(workload, value):
    print(json.dumps({"workload": workload, "iatro": value}), flush=True)


def batches(n, count, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, n, BATCH).tolist() for _ in range(count)]


def payload(i, size):
    rng = np.random.default_rng(i)
    out = np.frombuffer(b"abcd", dtype=np.uint8)[rng.integers(0, 4, size)]
    out[3::4] = rng.integers(0, 256, len(out[3::4]), dtype=np.uint8)
    return out.tobytes()


def tables(n):
    return pa.table({"slide_id": ["s0"]}), pa.table({"row": pa.array(range(n), pa.int64())})


def rate(recs, nbytes, secs):
    return f"{recs / secs / 1e6:.2f} M rec/s, {nbytes / secs / 1e9:.2f} GB/s"


def gather(name, path, n, rounds):
    r = PackReader(path)
    bs = batches(n, rounds)
    t = time.perf_counter()
    nbytes = sum(len(p) for b in bs for p in r.read_payloads(b))
    emit(f"{name}: read_records batches", rate(rounds * BATCH, nbytes, time.perf_counter() - t))
    t = time.perf_counter()
    s = 0
    for b in bs:
        for v in r.read_payload_views(b):
            s += v[0] + v[-1]
    emit(f"{name}: views batches (2 bytes touched)", f"{rounds * BATCH / (time.perf_counter() - t) / 1e6:.2f} M rec/s")
    r.close()


def main():
    d = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    os.makedirs(d, exist_ok=True)
    p1 = os.path.join(d, "rec1k.iac")
    payloads = [payload(i, 1024) for i in range(n)]
    st, it = tables(n)
    t = time.perf_counter()
    build_pack(p1, {"payload_type": "bytes", "codec": "none"}, st, it, payloads, overwrite=True)
    secs = time.perf_counter() - t
    emit("build N x 1 KiB raw", f"{secs:.2f} s ({n / secs / 1e3:.0f} k rec/s)")
    del payloads
    clear_caches()
    t = time.perf_counter()
    r = PackReader(p1)
    r.read_payload(0)
    emit("open + load index", f"{(time.perf_counter() - t) * 1e3:.2f} ms first")
    t = time.perf_counter()
    rows = sum(batches(n, 400), [])
    nbytes = sum(len(r.read_payload(i)) for i in rows)
    emit("1 KiB: record() one call per row", rate(len(rows), nbytes, time.perf_counter() - t))
    r.close()
    gather("1 KiB", p1, n, 2000)

    n16 = max(n // 5, 1)
    p16 = os.path.join(d, "rec16k.iac")
    st, it = tables(n16)
    build_pack(p16, {"payload_type": "bytes", "codec": "none"}, st, it, (payload(i, 16384) for i in range(n16)), overwrite=True)
    gather("16 KiB", p16, n16, 400)
    os.remove(p16)

    pz = os.path.join(d, "zstd4k.iac")
    st, it = tables(n)
    VariableRecordPack.build(pz, payload_type="bytes", slide_table=st, index_table=it,
                             objects=[payload(i, 4096) for i in range(n)],
                             codec=Codec.create("zstd", level=3), overwrite=True)
    vp = VariableRecordPack(pz)
    ratio = n * 4096 / os.path.getsize(pz)
    bs = batches(n, 200)
    t1 = None
    for workers in (1, 2):
        t = time.perf_counter()
        nbytes = sum(len(vp.read_many_contiguous(b, workers=workers).buffer) for b in bs)
        secs = time.perf_counter() - t
        t1 = t1 or secs
        emit(f"zstd-3 4 KiB: decode_records, {workers} thread(s)",
             f"{rate(200 * BATCH, nbytes, secs)} decoded; {t1 / secs:.2f}x one thread; ratio {ratio:.2f}")
    vp.close()

    pf = os.path.join(d, "rows.iac")
    m = (np.arange(n * 384) % 977).astype(np.float32).reshape(n, 384)
    st, it = tables(n)
    FixedRecordPack.build(pf, payload_type="emb", slide_table=st, index_table=it, matrix=m, overwrite=True)
    del m
    fp = FixedRecordPack(pf)
    bs = batches(n, 2000)
    t = time.perf_counter()
    nbytes = sum(fp.read_matrix(b).nbytes for b in bs)
    emit("fixed N x 384 f32: read_rows batches", rate(2000 * BATCH, nbytes, time.perf_counter() - t))
    fp.close()
    for p in (p1, pz, pf):
        os.remove(p)


if __name__ == "__main__":
    main()
