"""Files for scripts/bench_js.mjs: one HDF5 file per filter pipeline
(h5py + hdf5plugin), each a 128×128×128 int16 volume (smooth values plus
noise, 4 MiB) chunked 64×64×64, and a metadata file of 200 small groups
and datasets with attributes.

Usage: bench_js_files.py OUT_DIR
"""
import os
import sys

import h5py
import hdf5plugin
import numpy as np

PIPELINES = {
    "none": {},
    "gzip": dict(compression="gzip", compression_opts=4),
    "shuffle-gzip": dict(compression="gzip", shuffle=True),
    "lzf": dict(compression="lzf"),
    "zstd": dict(**hdf5plugin.Zstd(clevel=3)),
    "lz4": dict(**hdf5plugin.LZ4()),
    "bitshuffle-lz4": dict(**hdf5plugin.Bitshuffle(cname="lz4")),
    "bzip2": dict(**hdf5plugin.BZip2()),
    "blosc-lz4": dict(**hdf5plugin.Blosc(cname="lz4", shuffle=hdf5plugin.Blosc.SHUFFLE)),
    "blosc2-lz4": dict(**hdf5plugin.Blosc2(cname="lz4", filters=hdf5plugin.Blosc2.SHUFFLE)),
    "blosc2-zstd": dict(**hdf5plugin.Blosc2(cname="zstd", filters=hdf5plugin.Blosc2.SHUFFLE)),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)
    z, y, x = np.indices((128, 128, 128))
    vol = (400 * np.sin(z / 9.0) * np.cos(y / 13.0) + 3 * x + rng.normal(0, 20, z.shape)).astype("<i2")
    for name, kw in PIPELINES.items():
        with h5py.File(os.path.join(out, f"{name}.h5"), "w") as f:
            f.create_dataset("vol", data=vol, chunks=(64, 64, 64), **kw)
    with h5py.File(os.path.join(out, "meta.h5"), "w") as f:
        for i in range(40):
            g = f.create_group(f"g{i}")
            g.attrs["index"] = i
            g.attrs["name"] = f"group {i}"
            for j in range(4):
                d = g.create_dataset(f"d{j}", data=np.arange(10, dtype="<f4") * j)
                d.attrs["units"] = "mm"
                d.attrs["scale"] = np.float64(0.5 * j)


if __name__ == "__main__":
    main()
