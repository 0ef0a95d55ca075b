"""Random HDF5 files written by h5py for the package's Node tests, and the
values h5py reads back from them (`expected.json`).

Usage: make_files.py OUT_DIR COUNT SEED

Each file holds a few datasets of random type (integers of every size and
both byte orders, half/single/double floats, booleans, fixed and
variable-length strings, a compound), random shape (rank 0 to 3) and
random storage: contiguous, or chunked through one of the filter
pipelines below (every filter of h5py and hdf5plugin the library reads,
szip aside), plus attributes. Values are dumped as JSON: 64-bit integers
as decimal strings, non-finite floats as "nan"/"inf"/"-inf".
"""
import json
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
    "fletcher32": dict(fletcher32=True),
    "zstd": dict(**hdf5plugin.Zstd(clevel=3)),
    "lz4": dict(**hdf5plugin.LZ4()),
    "bitshuffle-lz4": dict(**hdf5plugin.Bitshuffle(cname="lz4")),
    "bitshuffle-zstd": dict(**hdf5plugin.Bitshuffle(cname="zstd")),
    "bzip2": dict(**hdf5plugin.BZip2()),
    "blosc-lz4": dict(**hdf5plugin.Blosc(cname="lz4", shuffle=hdf5plugin.Blosc.SHUFFLE)),
    "blosc-zstd-bit": dict(**hdf5plugin.Blosc(cname="zstd", shuffle=hdf5plugin.Blosc.BITSHUFFLE)),
    "blosc2-lz4": dict(**hdf5plugin.Blosc2(cname="lz4", filters=hdf5plugin.Blosc2.SHUFFLE)),
    "blosc2-zstd": dict(**hdf5plugin.Blosc2(cname="zstd", filters=hdf5plugin.Blosc2.BITSHUFFLE)),
    "blosc2-blosclz": dict(**hdf5plugin.Blosc2(cname="blosclz", filters=hdf5plugin.Blosc2.NOFILTER)),
    "scaleoffset": dict(scaleoffset=0),
}
NUMERIC = ["<i1", "<u1", "<i2", ">i2", "<u2", "<i4", ">i4", "<u4", "<i8", ">i8", "<u8",
           "<f2", "<f4", ">f4", "<f8", ">f8"]


def jsonable(v):
    """A numpy value (scalar or array) as JSON-ready Python."""
    if isinstance(v, np.ndarray):
        if v.dtype.names:
            return [{n: jsonable(e[n]) for n in v.dtype.names} for e in v.reshape(-1)]
        return [jsonable(x) for x in v.reshape(-1)]
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, str):
        return v
    if isinstance(v, (np.bool_, bool)):
        return int(bool(v))
    if isinstance(v, np.void) and v.dtype.names:
        return {n: jsonable(v[n]) for n in v.dtype.names}
    if isinstance(v, (np.integer, int)):
        return str(int(v)) if isinstance(v, (np.int64, np.uint64)) else int(v)
    f = float(v)
    if f != f:
        return "nan"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    return f


def random_values(rng, kind, shape):
    n = int(np.prod(shape)) if shape else 1
    if kind == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if kind == "S":
        words = [bytes(rng.choice(list(b"abcdefghij"), size=rng.integers(0, 9))) for _ in range(n)]
        return np.array(words, dtype="S8").reshape(shape)
    if kind == "str":
        words = ["".join(rng.choice(list("xyzé€"), size=rng.integers(0, 6))) for _ in range(n)]
        return np.array(words, dtype=object).reshape(shape)
    if kind == "compound":
        dt = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "<u2")])
        a = np.zeros(shape, dtype=dt)
        a["a"] = rng.integers(-1000, 1000, size=shape)
        a["b"] = rng.normal(size=shape)
        a["c"] = rng.integers(0, 60000, size=shape)
        return a
    dt = np.dtype(kind)
    if dt.kind == "f":
        v = rng.normal(scale=100, size=shape).astype(dt)
        if n > 3 and rng.random() < 0.3:
            v.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
        return v
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt.newbyteorder("="), endpoint=True).astype(dt)


def make_file(path, rng):
    expected = {"datasets": {}, "attrs": {}}
    with h5py.File(path, "w") as f:
        for i in range(rng.integers(2, 6)):
            kind = str(rng.choice(NUMERIC + ["bool", "S", "str", "compound"]))
            rank = int(rng.integers(0, 4))
            shape = tuple(int(x) for x in rng.integers(1, [60, 20, 12][:rank] if rank else 2)) if rank else ()
            data = random_values(rng, kind, shape)
            kw = {}
            pipe = "contiguous"
            if rank and kind not in ("str",):
                names = list(PIPELINES)
                if kind in ("S", "compound", "bool") or "f2" in kind:
                    names = [p for p in names if p != "scaleoffset"]
                if np.dtype(data.dtype).kind == "f" and "scaleoffset" in names:
                    names.remove("scaleoffset")
                pipe = str(rng.choice(names))
                chunks = tuple(int(rng.integers(1, s + 1)) for s in shape)
                kw = dict(chunks=chunks, **PIPELINES[pipe])
            name = f"g{i % 2}/d{i}_{kind.replace('<', 'le').replace('>', 'be')}"
            if kind == "str":
                ds = f.create_dataset(name, data=data, dtype=h5py.string_dtype())
            else:
                ds = f.create_dataset(name, data=data, **kw)
            ds.attrs["pipeline"] = pipe
            back = ds[()]
            if kind == "str":
                back = np.array([x.decode() if isinstance(x, bytes) else x for x in np.asarray(back, dtype=object).reshape(-1)], dtype=object)
            expected["datasets"]["/" + name] = {
                "shape": list(ds.shape),
                "kind": kind,
                "pipeline": pipe,
                "values": jsonable(np.asarray(back)),
            }
        f.attrs["title"] = "random file"
        f.attrs["scale"] = np.float64(rng.normal())
        f.attrs["counts"] = rng.integers(0, 100, size=3).astype("<i4")
        for k in ("title", "scale", "counts"):
            expected["attrs"][k] = jsonable(f.attrs[k])
    return expected


def main():
    out, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(seed)
    allexp = {}
    for k in range(count):
        name = f"r{k:04d}.h5"
        allexp[name] = make_file(os.path.join(out, name), rng)
    # one larger chunked file: a single chunk read must fetch a small part of it
    big = rng.integers(0, 65535, size=(64, 256, 256), dtype=np.uint16)
    with h5py.File(os.path.join(out, "big.h5"), "w") as f:
        f.create_dataset("vol", data=big, chunks=(8, 64, 64), **hdf5plugin.Zstd(clevel=1))
    allexp["big.h5"] = {"probe": {"path": "/vol", "index": [10, 100, 200], "value": int(big[10, 100, 200])}}
    with open(os.path.join(out, "expected.json"), "w") as fh:
        json.dump(allexp, fh)


if __name__ == "__main__":
    main()
