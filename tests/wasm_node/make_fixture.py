"""Write data/fixture.h5, the small HDF5 file the wasm32 test embeds (h5py +
hdf5plugin, libhdf5's own writer). The values follow formulas that
src/lib.rs checks: blosc2[i, j] = (i * 32 + j) * 3 - 500 (int16),
deflate[i, j] = i * 10 + j + 0.5 (big-endian float64). Run with the oracle
venv's python: python tests/wasm_node/make_fixture.py"""
import os

import h5py
import hdf5plugin
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "data", "fixture.h5")
with h5py.File(out, "w", libver="latest") as f:
    a = (np.arange(16 * 32, dtype=np.int64).reshape(16, 32) * 3 - 500).astype("<i2")
    f.create_dataset("blosc2", data=a, chunks=(8, 16),
                     **hdf5plugin.Blosc2(cname="zstd", clevel=5, filters=hdf5plugin.Blosc2.SHUFFLE))
    b = (np.arange(10)[:, None] * 10 + np.arange(10)[None, :] + 0.5).astype(">f8")
    d = f.create_dataset("deflate", data=b, chunks=(5, 5), compression="gzip",
                         compression_opts=4, shuffle=True)
    d.attrs["units"] = "mm"
    d.attrs["scale"] = np.float32(0.25)
print(out, os.path.getsize(out))
