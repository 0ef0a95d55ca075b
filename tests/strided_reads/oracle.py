"""Oracle side of tests/strided_reads.rs (h5py + hdf5plugin: libhdf5's own code).

make OUT.h5 OUT.json OUT.bin SEED CASES: write chunked datasets over every
chunk index (B-tree v1, single chunk, implicit, fixed array, extensible
array, B-tree v2), with edge chunks, unwritten chunks (fill value),
deflate, shuffle, Blosc2 and no filter, in 1- to 12-byte element types;
then for CASES random stepped selections (random starts, stops and steps,
steps often above the chunk edge) read each with h5py and append the bytes
numpy gives to OUT.bin. OUT.json lists the cases: dataset, per dimension
[start, stop, step], and the byte range of the expected values in OUT.bin.
"""
import json
import sys

import h5py
import hdf5plugin
import numpy as np


def values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype.names:
        a = np.zeros(n, dtype)
        a["id"] = np.arange(n, dtype="<i4")
        a["x"] = rng.normal(0, 100, n)
        return a.reshape(shape)
    if dtype.kind == "f":
        return rng.normal(0, 1000, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def implicit(f, name, data, chunks):
    """Early allocation, no filter, fixed dims: the implicit index."""
    space = h5py.h5s.create_simple(data.shape)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(chunks)
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    tid = h5py.h5t.py_create(data.dtype, logical=True)
    dsid = h5py.h5d.create(f.id, name.encode(), tid, space, dcpl=dcpl)
    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(data))


def make(out, expect, blob, seed, ncases):
    rng = np.random.default_rng(seed)
    comp = np.dtype([("id", "<i4"), ("x", "<f8")])
    gz = dict(compression="gzip", compression_opts=3)
    sh = dict(compression="gzip", compression_opts=1, shuffle=True)
    b2 = dict(hdf5plugin.Blosc2(cname="lz4", clevel=5, filters=hdf5plugin.Blosc2.SHUFFLE))
    # name: (libver, shape, chunks, dtype, filters, maxshape, partial)
    specs = {
        "v1_f4": ("earliest", (37, 29, 23), (8, 7, 5), "<f4", gz, None, False),
        "v1_u1_2d": ("earliest", (101, 77), (16, 9), "<u1", {}, None, True),
        "single_i2": ("latest", (19, 23, 11), (19, 23, 11), "<i2", sh, None, False),
        "fixed_f8": ("latest", (33, 41), (6, 10), "<f8", gz, None, True),
        "fixed_b2_i2": ("latest", (24, 30, 28), (8, 16, 10), "<i2", b2, None, False),
        "earray_u4": ("latest", (45, 26), (7, 8), "<u4", sh, (None, 26), True),
        "btree2_comp": ("latest", (21, 18, 9), (4, 5, 3), comp, gz, (None, None, 9), False),
        "btree2_f4_4d": ("latest", (9, 11, 7, 13), (2, 4, 3, 5), "<f4", {}, (None, None, 7, 13), True),
        "v1_f4_1d": ("earliest", (1000,), (17,), "<f4", gz, None, True),
    }
    datasets = {}
    # one file per libver (the index kinds follow from it); the test opens both
    files = {"earliest": out + ".v1.h5", "latest": out}
    handles = {k: h5py.File(p, "w", libver=k) for k, p in files.items()}
    for i, (name, (libver, shape, chunks, dt, filt, maxshape, partial)) in enumerate(specs.items()):
        f = handles[libver]
        dt = np.dtype(dt)
        data = values(shape, dt, seed * 100 + i)
        fill = None if dt.names else np.array(7, dt)
        ds = f.create_dataset(name, shape=shape, dtype=dt, chunks=chunks, maxshape=maxshape,
                              fillvalue=fill, **filt)
        if partial:
            # leave some chunks unwritten: write every other chunk row of dim 0
            c0 = chunks[0]
            for r in range(0, shape[0], 2 * c0):
                ds[r:r + c0] = data[r:r + c0]
            full = np.full(shape, fill if fill is not None else 0, dt)
            for r in range(0, shape[0], 2 * c0):
                full[r:r + c0] = data[r:r + c0]
            data = full
        else:
            ds[...] = data
        datasets[name] = (files[libver], data, chunks)
    imp = values((30, 22), np.dtype("<u2"), seed)
    implicit(handles["latest"], "implicit_u2", imp, (7, 6))
    datasets["implicit_u2"] = (files["latest"], imp, (7, 6))
    for h in handles.values():
        h.close()
    # read back through h5py, the oracle, for every case
    cases = []
    readers = {p: h5py.File(p, "r") for p in files.values()}
    with open(blob, "wb") as b:
        offset = 0
        names = sorted(datasets)
        for k in range(ncases):
            name = names[k % len(names)]
            path, data, chunks = datasets[name]
            sl = []
            wide = k % 3 == 0  # a third of the cases span the whole extent
            for n, c in zip(data.shape, chunks):
                start = int(rng.integers(0, min(c, n) if wide else n))
                stop = n if wide else int(rng.integers(start + 1, n + 1))
                # steps below, at and above the chunk edge
                step = int(rng.choice([1, 2, 3, c, c + 1, 2 * c + 1, int(rng.integers(1, n + 1))]))
                sl.append([start, stop, max(step, 1)])
            if all(s[2] == 1 for s in sl):
                sl[-1][2] = 2
            got = readers[path][name][tuple(slice(*s) for s in sl)]
            assert np.array_equal(got, data[tuple(slice(*s) for s in sl)]), (name, sl)
            raw = np.ascontiguousarray(got).tobytes()
            b.write(raw)
            cases.append({"file": path, "dataset": name, "slice": sl,
                          "offset": offset, "len": len(raw)})
            offset += len(raw)
    with open(expect, "w") as e:
        json.dump(cases, e)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
