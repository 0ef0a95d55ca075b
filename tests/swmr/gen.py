"""The deterministic values of the SWMR tests' datasets, shared by the h5py
writer and reader (tests/swmr_*.rs compute the same in Rust)."""

import numpy as np

# name -> (dtype, row shape, chunk shape, maxshape tail, filters)
DATASETS = {
    # one unlimited dimension: libhdf5 indexes it with an extensible array
    "r1": ("<i4", (), (512,), (), dict(compression="gzip", compression_opts=4)),
    "r1lzf": ("<u2", (), (1000,), (), dict(compression="lzf", shuffle=True)),
    # two unlimited dimensions: a version 2 B-tree
    "r3": ("<f8", (4, 6), (3, 4, 6), (None, 6), dict(compression="gzip", shuffle=True)),
}

# most rows one append adds, per dataset
MAX_APPEND = {"r1": 700, "r1lzf": 1500, "r3": 5}


def rows(name, start, stop):
    """Rows start..stop of dataset `name` as numpy."""
    i = np.arange(start, stop, dtype=np.int64)
    if name == "r1":
        return ((i * 7919 + 13) % 2000003 - 1000000).astype("<i4")
    if name == "r1lzf":
        return ((i * 31) % 65521).astype("<u2")
    if name == "r3":
        j = np.arange(4).reshape(1, 4, 1)
        k = np.arange(6).reshape(1, 1, 6)
        return (i.reshape(-1, 1, 1) * 100 + j * 10 + k + 0.25).astype("<f8")
    raise KeyError(name)
