"""An h5py SWMR writer for tests/swmr_read.rs: creates FILE with
libver="latest", the chunked compressed unlimited datasets of gen.py, turns
SWMR mode on, prints "ready", then appends random numbers of rows to every
dataset and flushes after each round until SECONDS have passed; prints the
totals as JSON and closes."""

import json
import random
import sys
import time

import h5py

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import gen  # noqa: E402


def main():
    path, seconds, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    f = h5py.File(path, "w", libver="latest")
    for name, (dt, row, chunks, maxtail, filters) in gen.DATASETS.items():
        f.create_dataset(name, shape=(0,) + row, maxshape=(None,) + maxtail,
                         chunks=chunks, dtype=dt, **filters)
    f.swmr_mode = True
    f.flush()
    print("ready", flush=True)
    n = {name: 0 for name in gen.DATASETS}
    rounds = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for name in gen.DATASETS:
            k = rng.randint(1, gen.MAX_APPEND[name])
            ds = f[name]
            ds.resize(n[name] + k, axis=0)
            ds[n[name]:n[name] + k] = gen.rows(name, n[name], n[name] + k)
            n[name] += k
        f.flush()
        rounds += 1
        time.sleep(rng.random() * 0.02)
    f.close()
    print(json.dumps({"rounds": rounds, "rows": n}), flush=True)


main()
