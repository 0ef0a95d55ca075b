#!/usr/bin/env python3
"""Files that name files beside them, written by h5py (libhdf5), for the
remote-read tests of virtual datasets and external raw storage.

    make_siblings.py OUTDIR

writes
    OUTDIR/src/a.h5      /d = 0..9 (int32)
    OUTDIR/vds/b.h5      /d = 10..19
    OUTDIR/vds/v.h5      /v (20 int32, virtual): [0:10] from "../src/a.h5" /d,
                         [10:20] from "/nowhere/at/all/b.h5" /d (absolute:
                         found as b.h5 beside v.h5, as libhdf5 finds it);
                         /e (10 int32, external raw storage in "raw.bin")
    OUTDIR/vds/raw.bin   100..109 (int32 little-endian)
"""
import os
import sys

import h5py
import numpy as np


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "src"), exist_ok=True)
    os.makedirs(os.path.join(out, "vds"), exist_ok=True)
    with h5py.File(os.path.join(out, "src", "a.h5"), "w") as f:
        f["d"] = np.arange(0, 10, dtype="<i4")
    with h5py.File(os.path.join(out, "vds", "b.h5"), "w") as f:
        f["d"] = np.arange(10, 20, dtype="<i4")
    np.arange(100, 110, dtype="<i4").tofile(os.path.join(out, "vds", "raw.bin"))
    layout = h5py.VirtualLayout(shape=(20,), dtype="<i4")
    layout[0:10] = h5py.VirtualSource("../src/a.h5", "d", shape=(10,))
    layout[10:20] = h5py.VirtualSource("/nowhere/at/all/b.h5", "d", shape=(10,))
    with h5py.File(os.path.join(out, "vds", "v.h5"), "w", libver="latest") as f:
        f.create_virtual_dataset("v", layout, fillvalue=-1)
        f.create_dataset("e", shape=(10,), dtype="<i4", external=[("raw.bin", 0, 40)])


if __name__ == "__main__":
    sys.exit(main())
