"""Make stale sampling-index cases for tests/medh5_index.rs.

Usage: python medh5_index_stale.py SRC OUTDIR MEDH5_CLI
SRC is an indexed sample with voxel annotations `lay` and `bit` (vector v3).
Writes OUTDIR/edited.medh5 (annotations/lay/data edited, then restamped with
the reference's `fix --rewrite-digests`: `lay` stale), OUTDIR/prefix.medh5
(index/bit@source_digest given the unknown prefix `md5:`), OUTDIR/removed.medh5
(annotations/lay deleted, then restamped: `lay` orphaned), OUTDIR/dirty.medh5
(annotations/lay/data edited, not restamped: needs digests).
"""
import os
import shutil
import subprocess
import sys

import h5py
import hdf5plugin  # noqa: F401

src, out, cli = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)


def edit(path):
    with h5py.File(path, "a") as f:
        d = f["annotations/lay/data"]
        a = d[()]
        a[(0,) * (a.ndim - 1)] = 1
        a[(0,) * (a.ndim - 2) + (1,)] = 0
        d[...] = a


def restamp(path):
    subprocess.run([cli, "fix", "--rewrite-digests", "--reason", "test", path],
                   stdout=subprocess.DEVNULL, check=False)


p = os.path.join(out, "edited.medh5")
shutil.copy(src, p)
edit(p)
restamp(p)

p = os.path.join(out, "dirty.medh5")
shutil.copy(src, p)
edit(p)

p = os.path.join(out, "prefix.medh5")
shutil.copy(src, p)
with h5py.File(p, "a") as f:
    g = f["index/bit"]
    old = g.attrs["source_digest"]
    old = old.decode() if isinstance(old, bytes) else old
    g.attrs["source_digest"] = "md5:" + old.split(":", 1)[1]

p = os.path.join(out, "removed.medh5")
shutil.copy(src, p)
with h5py.File(p, "a") as f:
    del f["annotations/lay"]
restamp(p)
print("4 cases")
