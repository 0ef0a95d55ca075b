"""Write the 1 GiB file of scripts/bench_js_browser.mjs: `vol`, int16,
shape (512, 1024, 1024), chunks (8, 256, 256), no filter, with
vol[z, y, x] = (7 z + 3 y + x) % 30011 - 15000 (checked by the bench).

Usage: .oracle-venv/bin/python scripts/bench_js_browser.py DIR (writes
DIR/big.h5 unless it is there already)."""
import os
import sys

import h5py
import numpy as np

out = os.path.join(sys.argv[1], "big.h5")
os.makedirs(sys.argv[1], exist_ok=True)
if not os.path.exists(out):
    Z, Y, X = 512, 1024, 1024
    y = np.arange(Y, dtype=np.int64)[:, None]
    x = np.arange(X, dtype=np.int64)[None, :]
    with h5py.File(out + ".tmp", "w") as f:
        d = f.create_dataset("vol", shape=(Z, Y, X), dtype="<i2", chunks=(8, 256, 256))
        for z0 in range(0, Z, 8):
            z = np.arange(z0, z0 + 8, dtype=np.int64)[:, None, None]
            d[z0:z0 + 8] = ((7 * z + 3 * y + x) % 30011 - 15000).astype("<i2")
    os.replace(out + ".tmp", out)
print(out, os.path.getsize(out))
