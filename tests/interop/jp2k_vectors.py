"""JPEG 2000 (Blosc2 codec 37, Grok) vectors for E3/E8 of tests/neighbours_esrf.rs.

Usage (with a python that has esrf-data-compressor 0.2.1, python-blosc2 <= 4.1.2,
blosc2_grok and hdf5plugin; its bin folder must be first on PATH, because C-Blosc2
finds the grok plugin by launching `python`):
  jp2k_vectors.py make OUT_DIR

Writes OUT_DIR/raw.h5 with two detector-like stacks, /entry_0000/u16 (uint16,
Poisson counts around a mean level of 1600 modulated by +-1200 sin(y/40)
cos(x/50): at cratio 10 grok gives SSIM 0.967, max abs error 97 and RMSE 20,
close to the spec's 1024x1024 anchor of 0.965 / 94 / 16) and /entry_0000/u8
(uint8, the same pattern around 100), then runs the
esrf compressor (JP2KCompressor, JP2 format, "rates" quality mode) at cratio 4,
10 and 20 into OUT_DIR/c{4,10,20}.h5, and reads every compressed dataset back
with h5py + hdf5plugin + blosc2_grok into OUT_DIR/c{cr}_{u16,u8}.bin (C-order
native bytes). Prints one JSON line per compressed dataset: cratio, name, shape,
dtype, the first chunk's Blosc2 codec byte, stored bytes, and the max abs error
and SSIM (esrf checker parameters) of the grok decode against the raw frames.
"""
import contextlib
import io
import json
import os
import sys

import h5py
import hdf5plugin  # noqa: F401  (registers filter 32026)
import numpy as np

Z, Y, X = 3, 512, 512


def frames():
    rng = np.random.default_rng(52)
    yy, xx = np.mgrid[0:Y, 0:X]
    wave = np.sin(yy / 40.0) * np.cos(xx / 50.0)
    u16 = np.clip(rng.poisson(1600 + 1200 * wave, size=(Z, Y, X)), 0, 65535).astype(np.uint16)
    u8 = np.clip(rng.poisson(100 + 75 * wave, size=(Z, Y, X)), 0, 255).astype(np.uint8)
    return {"u16": u16, "u8": u8}


def ssim(a, b):
    from skimage.metrics import structural_similarity

    a = a.astype("f8")
    b = b.astype("f8")
    return float(structural_similarity(a, b, win_size=7, data_range=float(a.max() - a.min()),
                                       gaussian_weights=False, use_sample_covariance=True,
                                       K1=0.01, K2=0.03))


def make(out):
    from esrf_data_compressor.compressors.jp2k import JP2KCompressor

    os.makedirs(out, exist_ok=True)
    raw = os.path.join(out, "raw.h5")
    data = frames()
    with h5py.File(raw, "w") as f:
        for k, v in data.items():
            f.create_dataset(f"entry_0000/{k}", data=v)
    for cr in (4, 10, 20):
        path = os.path.join(out, f"c{cr}.h5")
        with contextlib.redirect_stdout(io.StringIO()):
            JP2KCompressor().compress_file(raw, path, cratio=cr, nthreads=1)
        with h5py.File(path, "r") as f:
            for k, want in data.items():
                d = f[f"entry_0000/{k}"]
                got = np.ascontiguousarray(d[()])
                assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype)
                with open(os.path.join(out, f"c{cr}_{k}.bin"), "wb") as b:
                    b.write(got.tobytes())
                chunk = d.id.read_direct_chunk((0, 0, 0))[1]
                start = int.from_bytes(chunk[11:15], "big") if chunk[2:10] == b"b2frame\x00" else 0
                stored = sum(d.id.get_chunk_info(i).size for i in range(d.id.get_num_chunks()))
                err = int(np.abs(got.astype(np.int64) - want.astype(np.int64)).max())
                print(json.dumps({"cratio": cr, "name": f"/entry_0000/{k}", "shape": list(got.shape),
                                  "dtype": got.dtype.str, "codec": chunk[start + 22],
                                  "stored": stored, "max_abs_err": err,
                                  "ssim_first": ssim(want[0], got[0]),
                                  "ssim_last": ssim(want[-1], got[-1])}))


if __name__ == "__main__":
    cmd, rest = sys.argv[1], sys.argv[2:]
    {"make": lambda: make(rest[0])}[cmd]()
