"""An h5py SWMR reader for tests/swmr_write.rs.

`reader.py create FILE`: make FILE with libver="latest" and gen.py's empty
datasets (then our SWMR writer appends to them).
`reader.py follow FILE`: open FILE with swmr=True, print "ready", then
refresh every dataset in a loop and check each new row against gen.py the
moment the shape shows it (a wrong value exits 1 at once). A line on stdin
(JSON: rows per dataset) says the writer closed: one last refresh, the
shapes must equal those rows, and the totals are printed as JSON."""

import json
import select
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import gen  # noqa: E402


def create(path):
    with h5py.File(path, "w", libver="latest") as f:
        for name, (dt, row, chunks, maxtail, filters) in gen.DATASETS.items():
            f.create_dataset(name, shape=(0,) + row, maxshape=(None,) + maxtail,
                             chunks=chunks, dtype=dt, **filters)


def follow(path):
    f = h5py.File(path, "r", libver="latest", swmr=True)
    print("ready", flush=True)
    seen = {name: 0 for name in gen.DATASETS}
    values = {name: 0 for name in gen.DATASETS}
    reads = {name: 0 for name in gen.DATASETS}
    refreshes = 0
    final = None
    while True:
        if final is None and select.select([sys.stdin], [], [], 0)[0]:
            final = json.loads(sys.stdin.readline())
        for name in gen.DATASETS:
            ds = f[name]
            ds.refresh()
            refreshes += 1
            n = ds.shape[0]
            if n > seen[name]:
                got = ds[seen[name]:n]
                want = gen.rows(name, seen[name], n)
                if not np.array_equal(got, want):
                    bad = np.argwhere(got != want)[0]
                    print(f"{name}: rows {seen[name]}..{n}: first difference at {bad.tolist()}: "
                          f"read {got[tuple(bad)]}, wrote {want[tuple(bad)]}", file=sys.stderr)
                    sys.exit(1)
                values[name] += got.size
                reads[name] += 1
                seen[name] = n
        if final is not None:
            break
        time.sleep(0.003)
    for name, n in final.items():
        if seen[name] != n:
            print(f"{name}: saw {seen[name]} rows, the writer wrote {n}", file=sys.stderr)
            sys.exit(1)
    f.close()
    print(json.dumps({"rows": seen, "values": values, "reads": reads,
                      "refreshes": refreshes}), flush=True)


if sys.argv[1] == "create":
    create(sys.argv[2])
else:
    follow(sys.argv[2])
